"""Helpers for the seed-spec tests: run a spec, save its trace, replay it elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.explore.result import Result
from checker.traces.itf import read_itf, record_types
from checker.traces.replay import ReplayOutcome, replay
from checker.traces.tracefile import save_trace


def run(
    spec: str, variant: str, invariants: list[str] | None = None, **consts: Any
) -> tuple[Result, CompiledSpec]:
    """Check one variant (deadlock per the spec, symmetry on) and return the result."""
    cls = load_spec_class(spec)
    instance = cls(variant=variant, **consts)
    model = CompiledSpec(instance, properties=invariants)
    result = check(model, Options())
    return result, model


def replay_on(
    result: Result, model: CompiledSpec, tmp: Path, variant: str, **consts: Any
) -> ReplayOutcome:
    """Save ``result``'s trace and replay it against another variant of the spec."""
    path = save_trace(result, model, tmp / f"{result.spec}-{result.variant}.itf.json")
    trace = read_itf(path, types=record_types(type(model.spec)))
    cls = type(model.spec)
    target = cls(variant=variant, **{**_recorded(model), **consts})
    return replay(CompiledSpec(target, symmetry=False), trace)


def _recorded(model: CompiledSpec) -> dict[str, Any]:
    return dict(model.spec.constant_values)


def figures(r: Result, per_action: bool = False) -> tuple[Any, ...]:
    """What two runs of one check must agree on: verdict, counts, depth and trace."""
    base: tuple[Any, ...] = (
        r.verdict,
        r.violated,
        r.stats.distinct,
        r.stats.generated,
        r.stats.depth,
        tuple(r.trace.labels()) if r.trace is not None else None,
    )
    if per_action:
        base += (tuple(r.stats.action_generated), tuple(r.stats.action_distinct))
    return base
