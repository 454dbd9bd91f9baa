"""Counterexamples as files and as timelines: save a run's trace as ITF, load it back.

Bridges :class:`~checker.explore.trace.Trace` (what the explorer rebuilt), the ITF document
(:mod:`checker.traces.itf`) and :class:`~checker.traces.timeline.TimelineData` (what is drawn).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from checker.base.version import __version__
from checker.explore.result import Result, Verdict
from checker.explore.trace import Trace
from checker.model import Model
from checker.traces.itf import ItfTrace, meta_field, trace_to_itf, write_itf
from checker.traces.presentation import Presentation, member_name, presentation_of
from checker.traces.timeline import TimelineData
from checker.values import ModelValue


def _name(v: Any) -> str | None:
    return None if v is None else member_name(v)


def presentation_for(model: Model) -> Presentation:
    """The presentation of a model compiled from a spec (empty for other models)."""
    spec = getattr(model, "spec", None)
    if spec is None:
        return Presentation(var_names=model.var_names)
    return presentation_of(spec, model.var_names)


def actors_of(trace: Trace, p: Presentation) -> list[Any]:
    """Per state of the trace: the lane member that took the step into it."""
    out: list[Any] = [None]
    for before, step in zip(trace.steps, trace.steps[1:], strict=False):
        if step.action_index is None:
            out.append(None)
        else:
            out.append(p.actor(step.action_index, step.params, before.state))
    return out


def safe_name(part: str, fill: str = "_", limit: int = 80) -> str:
    """A file-name part that cannot leave its folder: each run of characters other
    than letters, digits and ``_.=+-`` becomes ``fill``, and no leading dot."""
    cleaned = re.sub(r"[^A-Za-z0-9_.=+-]+", fill, part).lstrip(".")
    return cleaned[:limit] or "_"


def default_trace_path(result: Result) -> Path:
    """``traces/<spec>-<variant>-<property>.itf.json``, each part sanitised: names come
    from the spec and the command line, and must never write outside ``traces/``."""
    prop = result.violated or ("Deadlock" if result.verdict is Verdict.DEADLOCK else "trace")
    name = "-".join(safe_name(p) for p in (result.spec, result.variant, prop))
    return Path("traces") / f"{name}.itf.json"


def result_property(result: Result) -> str | None:
    """The property a trace demonstrates: the invariant, or ``Deadlock``."""
    if result.verdict is Verdict.DEADLOCK:
        return "Deadlock"
    return result.violated


def itf_document(
    result: Result,
    trace: Trace,
    model: Model,
    presentation: Presentation | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    """The ITF document of a run's counterexample."""
    p = presentation or presentation_for(model)
    actors = actors_of(trace, p)
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
                "actor": _name(actors[i]),
            }
        )
    reads: list[str] = []
    if result.violated and not result.liveness:
        reads = p.reads_of(result.violated, trace.steps[-1].state)
    meta = {
        "source": source or model.name,
        "spec": model.name,
        "variant": result.variant,
        "constants": {k: _constant_json(v) for k, v in result.constants.items()},
        "property": result_property(result),
        "property_kind": _property_kind(result, model),
        "verdict": result.verdict.value,
        "trace_length": trace.length,
        "lanes": p.lanes,
        "property_reads": reads,
        "owners": dict(p.owners),
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
    result: Result,
    model: Model,
    path: Path | None = None,
    source: str | None = None,
    presentation: Presentation | None = None,
) -> Path:
    """Write the result's trace as ITF; return where."""
    assert result.trace is not None
    target = path or default_trace_path(result)
    write_itf(target, itf_document(result, result.trace, model, presentation, source))
    return target


def _property_kind(result: Result, model: Model) -> str:
    """How the trace ends: "deadlock", "step" (its last step breaks an action
    property) or "violation" (its last state, or its lasso, breaks a property)."""
    if result.verdict is Verdict.DEADLOCK:
        return "deadlock"
    if result.violated and result.violated in getattr(model, "action_property_names", ()):
        return "step"
    return "violation"


def timeline_of_run(
    result: Result, model: Model, presentation: Presentation | None = None
) -> TimelineData:
    """The timeline of a counterexample just found by a run."""
    trace = result.trace
    assert trace is not None
    p = presentation or presentation_for(model)
    names = trace.var_names
    states = [dict(zip(names, model.variables(s.state), strict=True)) for s in trace.steps]
    reads = (
        p.reads_of(result.violated, trace.steps[-1].state)
        if result.violated and not result.liveness
        else []
    )
    return TimelineData(
        spec=result.spec,
        variant=result.variant,
        var_names=trace.var_names,
        states=states,
        actions=[s.action for s in trace.steps],
        actors=[_name(a) for a in actors_of(trace, p)],
        lanes=p.lanes,
        property=result_property(result),
        kind=_property_kind(result, model),
        reads=reads,
        loop=trace.loop,
        owners=dict(p.owners),
    )


def timeline_of_itf(trace: ItfTrace) -> TimelineData:
    """The timeline of a trace read from an ITF file."""
    meta = trace.meta
    lanes = meta_field(meta, "lanes", list)
    reads = meta_field(meta, "property_reads", list)
    owners = meta_field(meta, "owners", dict)
    return TimelineData(
        spec=str(meta.get("spec", "?")),
        variant=str(meta.get("variant", "?")),
        var_names=trace.var_names,
        states=trace.states,
        actions=[None, *(_opt_str(s.get("action")) for s in trace.steps[1:])],
        actors=[None, *(_opt_str(s.get("actor")) for s in trace.steps[1:])],
        lanes=[str(x) for x in lanes],
        property=meta.get("property"),
        kind="deadlock"
        if meta.get("property") == "Deadlock"
        else "step"
        if meta.get("property_kind") == "step"
        else "violation",
        reads=[str(x) for x in reads],
        loop=trace.loop,
        owners={str(k): str(v) for k, v in owners.items()},
    )


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)
