"""Run a generated spec through every engine and a reference search; report disagreements.

The reference is written here, apart from the engine: a breadth-first search whose
visited set holds each state's full reference form (tests/soundness/values.py, which
shares no code with mcheck's fingerprint or equality), with TLC's semantics
(invariants on every generated state, a constraint only stops exploration, generated
states counted per action family up to an event).  It uses the model only to run the
spec's own code (its successors, constraint and invariants).

Each spec is checked by the reference, the default engine (its engine switch made to
hold trials early and the plain expansion's C loop to start early, so small specs meet
them too), the fast engine alone, ``--no-cache``,
and two workers with the fast and plain expansions taking turns every few states; a
symmetric spec by each of those reduced and by the reference and the fast engine
unreduced.  All must agree on verdict, violated property, distinct and generated
states, depth and counterexample length.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.base.errors import MCheckError
from checker.explore.result import Result, Verdict
from tests.soundness.generator import Generated
from tests.soundness.values import ref_form

Figures = tuple[Any, ...]


def reference_bfs(model: Any, symmetric: bool) -> Figures:
    """(verdict, property, distinct, generated, depth, trace length) by plain BFS."""
    rens = model.renamings if symmetric else [{}]

    def key(s: Any) -> str:
        vals = tuple(model.variables(s))
        return min(repr(tuple(ref_form(v, r) for v in vals)) for r in rens)

    depth_of: dict[str, int] = {}
    queue: deque[tuple[Any, int]] = deque()
    inits = model.initial_states()
    generated = len(inits)

    def end(verdict: Verdict, prop: Any, depth: int) -> Figures:
        deepest = max(depth_of.values(), default=0)
        return (verdict, prop, len(depth_of), generated, deepest, depth - 1)

    for s in inits:
        if model.within(s):
            if key(s) in depth_of:
                continue
            depth_of[key(s)] = 1
            queue.append((s, 1))
        bad = model.violated_invariant(s)
        if bad:
            return end(Verdict.VIOLATION, bad, 1)
    while queue:
        s, d = queue.popleft()
        succ = model.successors(s)
        if not succ and model.check_deadlock:
            return end(Verdict.DEADLOCK, None, d)
        for ai, _, t in succ:
            inside = model.within(t)
            k = key(t) if inside else None
            if inside and k in depth_of:
                continue
            if inside:
                depth_of[k] = d + 1  # type: ignore[index]
                queue.append((t, d + 1))
            bad = model.violated_invariant(t)
            if bad:
                last = max(j for j, (aj, _, _) in enumerate(succ) if aj == ai)
                generated += last + 1
                return end(Verdict.VIOLATION, bad, d + 1)
        generated += len(succ)
    if not depth_of:
        return end(Verdict.INCOMPLETE, None, 1)
    return end(Verdict.OK, None, 1)


def figures(r: Result) -> Figures:
    """What every engine must agree on (for a spec's error: that it is one, and its
    message)."""
    if r.verdict is Verdict.ERROR:
        return ("error", (r.reason or "").split("\n")[0])
    length = r.trace.length if r.trace is not None else 0
    return (r.verdict, r.violated, r.stats.distinct, r.stats.generated, r.stats.depth, length)


@contextlib.contextmanager
def _knobs(pilot_states: int, switch: str) -> Iterator[None]:
    """A short pilot (maps taken for fixed that later change), early engine-switch
    trials, the plain expansion's C loop from the fourth expansion on (it leaves the
    first ones, which check for mutated inputs, to the Python loop), and the switch
    policy, for one run."""
    import checker.explore.expansion as expansion
    import checker.fastpath.adaptive as adaptive
    import checker.fastpath.pilot as pilot

    saved = (
        pilot.PILOT_STATES,
        adaptive.FIRST_TRIAL,
        expansion.MUTATION_CHECKS,
        os.environ.get("MCHECK_ENGINE_SWITCH"),
    )
    pilot.PILOT_STATES = pilot_states
    adaptive.FIRST_TRIAL = 60
    expansion.MUTATION_CHECKS = 3
    os.environ["MCHECK_ENGINE_SWITCH"] = switch
    try:
        yield
    finally:
        pilot.PILOT_STATES, adaptive.FIRST_TRIAL, expansion.MUTATION_CHECKS = saved[:3]
        if saved[3] is None:
            os.environ.pop("MCHECK_ENGINE_SWITCH", None)
        else:
            os.environ["MCHECK_ENGINE_SWITCH"] = saved[3]


#: (name, symmetry, workers, cache, switch policy) of each engine run.
RUNS = (
    ("default", True, 1, True, "measured"),
    ("fast", True, 1, True, "fast"),
    ("no-cache", True, 1, False, "fast"),
    ("workers 2", True, 2, True, "alternate"),
)


def _outcome(thunk: Any) -> Figures:
    """Figures, or the spec error every engine must give alike (a refused value)."""
    try:
        return thunk()  # type: ignore[no-any-return]
    except MCheckError as exc:
        return ("error", str(exc).split("\n")[0])


def check_generated(gen: Generated, folder: Path, name: str, pilot_states: int) -> list[str]:
    """Every engine against the reference on one generated spec: the disagreements."""
    path = folder / f"{name}.py"
    path.write_text(gen.source)
    module = f"mcheck_user_{name}"
    try:
        cls = load_spec_class(str(path))
        syms = (True, False) if gen.symmetric else (False,)
        problems: list[str] = []
        for sym in syms:
            expected = _outcome(
                lambda sym=sym: reference_bfs(CompiledSpec(cls(), symmetry=sym), sym)
            )
            for label, _, workers, cache, switch in RUNS:
                if not sym and gen.symmetric and label not in ("fast", "default"):
                    continue  # unreduced: the fast engine and the default suffice

                def one(sym: bool = sym, workers: int = workers, cache: bool = cache) -> Figures:
                    model = CompiledSpec(cls(), symmetry=sym)
                    return figures(
                        check(model, Options(symmetry=sym, workers=workers, cache=cache))
                    )

                with _knobs(pilot_states, switch):
                    got = _outcome(one)
                if got != expected:
                    where = f"{label}{' (symmetry)' if sym else ''}"
                    problems.append(f"{where}: {got} != reference {expected}")
        return problems
    finally:
        sys.modules.pop(module, None)
