"""Counterexamples as files and as timelines: save a run's trace as ITF, load it back.

Bridges :class:`~checker.trace.Trace` (what the explorer rebuilt), the ITF document
(:mod:`checker.itf`) and :class:`~checker.timeline.TimelineData` (what is drawn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checker import __version__
from checker.itf import ItfTrace, trace_to_itf, write_itf
from checker.model import CompiledSpec
from checker.result import Result, Verdict
from checker.timeline import TimelineData
from checker.trace import Trace
from checker.values import ModelValue


def _name(v: Any) -> str | None:
    if v is None:
        return None
    return v.name if isinstance(v, ModelValue) else str(v)


def default_trace_path(result: Result) -> Path:
    """``traces/<spec>-<variant>-<property>.itf.json``."""
    prop = result.violated or ("Deadlock" if result.verdict is Verdict.DEADLOCK else "trace")
    return Path("traces") / f"{result.spec}-{result.variant}-{prop}.itf.json"


def result_property(result: Result) -> str | None:
    """The property a trace demonstrates: the invariant, or ``Deadlock``."""
    if result.verdict is Verdict.DEADLOCK:
        return "Deadlock"
    return result.violated


def itf_document(
    result: Result, trace: Trace, model: CompiledSpec, source: str | None = None
) -> dict[str, Any]:
    """The ITF document of a run's counterexample."""
    steps_meta: list[dict[str, Any]] = []
    for i, step in enumerate(trace.steps):
        if i == 0:
            steps_meta.append({"action": "init"})
            continue
        steps_meta.append(
            {
                "action": step.action,
                "action_name": step.action_name,
                "params": list(step.params),
                "actor": _name(step.actor),
            }
        )
    reads: list[str] = []
    if result.violated and not result.liveness:
        reads = model.reads_of(result.violated, trace.steps[-1].state)
    meta = {
        "source": source or model.name,
        "spec": model.name,
        "variant": result.variant,
        "constants": {k: _constant_json(v) for k, v in result.constants.items()},
        "property": result_property(result),
        "verdict": result.verdict.value,
        "trace_length": trace.length,
        "lanes": [v.name for v in model.spec.lane_values()],
        "property_reads": reads,
        "owners": dict(type(model.spec).owners),
        "tool": f"mcheck {__version__}",
        "mcheck_version": __version__,
    }
    return trace_to_itf(
        [s.state for s in trace.steps],
        trace.var_names,
        model.variables,
        steps_meta,
        meta,
        loop=trace.loop,
    )


def _constant_json(v: Any) -> Any:
    if isinstance(v, tuple) and all(isinstance(x, ModelValue) for x in v):
        return [x.name for x in v]
    if isinstance(v, bool | int | str) or v is None:
        return v
    return repr(v)


def save_trace(
    result: Result, model: CompiledSpec, path: Path | None = None, source: str | None = None
) -> Path:
    """Write the result's trace as ITF; return where."""
    assert result.trace is not None
    target = path or default_trace_path(result)
    write_itf(target, itf_document(result, result.trace, model, source))
    return target


def timeline_of_run(result: Result, model: CompiledSpec) -> TimelineData:
    """The timeline of a counterexample just found by a run."""
    trace = result.trace
    assert trace is not None
    names = trace.var_names
    states = [dict(zip(names, model.variables(s.state), strict=True)) for s in trace.steps]
    reads = (
        model.reads_of(result.violated, trace.steps[-1].state)
        if result.violated and not result.liveness
        else []
    )
    return TimelineData(
        spec=result.spec,
        variant=result.variant,
        var_names=trace.var_names,
        states=states,
        actions=[s.action for s in trace.steps],
        actors=[_name(s.actor) for s in trace.steps],
        lanes=[v.name for v in model.spec.lane_values()],
        property=result_property(result),
        kind="deadlock" if result.verdict is Verdict.DEADLOCK else "violation",
        reads=reads,
        loop=trace.loop,
        owners=dict(type(model.spec).owners),
    )


def timeline_of_itf(trace: ItfTrace) -> TimelineData:
    """The timeline of a trace read from an ITF file."""
    meta = trace.meta
    return TimelineData(
        spec=str(meta.get("spec", "?")),
        variant=str(meta.get("variant", "?")),
        var_names=trace.var_names,
        states=trace.states,
        actions=[None, *(_opt_str(s.get("action")) for s in trace.steps[1:])],
        actors=[None, *(_opt_str(s.get("actor")) for s in trace.steps[1:])],
        lanes=[str(x) for x in meta.get("lanes") or []],
        property=meta.get("property"),
        kind="deadlock" if meta.get("property") == "Deadlock" else "violation",
        reads=[str(x) for x in meta.get("property_reads") or []],
        loop=trace.loop,
        owners={str(k): str(v) for k, v in (meta.get("owners") or {}).items()},
    )


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)
