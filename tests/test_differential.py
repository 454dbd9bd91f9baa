"""The fast engine, the plain engine and a reference BFS agree on generated specs.

The reference is written here, independently of the engine: a breadth-first search
whose visited set holds each state's full canonical encoding (no hashing, no caches,
no packing), with TLC's semantics (invariants on every generated state, a constraint
only stops exploration, generated states counted per action family up to an event).
For each spec drawn by Hypothesis (tests/generated_specs.py: values that are equal in
Python but not in TLA+, maps read entry by entry, a map that gains keys, constraints),
the default engine, ``--no-cache`` and the reference must give the same verdict,
violated property, distinct and generated states, depth and trace length; with
symmetry (orbits: the reference keeps the smallest encoding over the renamings), and
with ``--workers 2``; the fast engine alone and taking turns with the plain expansion
every few states (checker.adaptive).  The fast engine's pilot is made short, so that
maps it takes for fixed do gain keys later and the run starts again.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import checker.fastpath.pilot as pilot
from checker import CompiledSpec, Options
from checker import run as check
from checker.fingerprint import encode
from checker.result import Result, Verdict
from tests.generated_specs import SpecDesc, build, spec_descs


def reference_bfs(model: Any, symmetric: bool) -> tuple[Any, ...]:
    """(verdict, property, distinct, generated, depth, trace length) by plain BFS."""
    rens = model.renamings if symmetric else [{}]

    def key(s: Any) -> str:
        return min(repr(encode(tuple(model.variables(s)), r or None)) for r in rens)

    depth_of: dict[str, int] = {}
    queue: deque[tuple[Any, int]] = deque()
    inits = model.initial_states()
    generated = len(inits)

    def end(verdict: Verdict, prop: Any, depth: int) -> tuple[Any, ...]:
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
            if inside and key(t) in depth_of:
                continue
            if inside:
                depth_of[key(t)] = d + 1
                queue.append((t, d + 1))
            bad = model.violated_invariant(t)
            if bad:
                # Generated counts whole action families, up to this one (as TLC).
                last = max(j for j, (aj, _, _) in enumerate(succ) if aj == ai)
                generated += last + 1
                return end(Verdict.VIOLATION, bad, d + 1)
        generated += len(succ)
    if not depth_of:
        # (mcheck's rule: a run that explored nothing proves nothing)
        return end(Verdict.INCOMPLETE, None, 1)
    return end(Verdict.OK, None, 1)


def _figures(r: Result) -> tuple[Any, ...]:
    length = r.trace.length if r.trace is not None else 0
    return (r.verdict, r.violated, r.stats.distinct, r.stats.generated, r.stats.depth, length)


def _agree(desc: SpecDesc, monkeypatch: pytest.MonkeyPatch, pilot_states: int) -> None:
    monkeypatch.setattr(pilot, "PILOT_STATES", pilot_states)
    cls = build(desc)
    # The fast engine alone, the plain expansion alone, and (with two workers) the two
    # taking turns every few states (checker.adaptive: each handoff through the state).
    # A symmetric spec takes its unreduced turns in one process: two workers on it
    # reduced, and on the unreduced generic specs, cover the workers, and a second
    # pair of worker processes per example was a third of the suite's slowest test.
    spread = 1 if desc.symmetric else 2
    runs = [(False, 1, True, "fast"), (False, 1, False, "fast"), (False, spread, True, "alternate")]
    if desc.symmetric:
        runs += [(True, 1, True, "fast"), (True, 1, False, "fast"), (True, 2, True, "alternate")]
    expected = {
        sym: reference_bfs(CompiledSpec(cls(), symmetry=sym), sym) for sym in {r[0] for r in runs}
    }
    for sym, workers, cache, switching in runs:
        monkeypatch.setenv("MCHECK_ENGINE_SWITCH", switching)
        result = check(
            CompiledSpec(cls(), symmetry=sym),
            Options(symmetry=sym, workers=workers, cache=cache),
        )
        assert _figures(result) == expected[sym], (desc, sym, workers, cache, switching)


#: The pilot's length: 2 and 40 make maps look fixed that later gain keys.
PILOTS = st.sampled_from([2, 40, 3000])
FUSSY = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(suppress_health_check=FUSSY)
@given(desc=spec_descs(), pilot_states=PILOTS)
def test_generated_specs_agree(
    desc: SpecDesc, pilot_states: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _agree(desc, monkeypatch, pilot_states)


# 100 examples, not the CI profile's 150: each runs two worker processes and five
# other checks (0.6 s an example on the 2-core CI machine), and the suite must stay
# under ten minutes there.
@settings(suppress_health_check=FUSSY, max_examples=100)
@given(desc=spec_descs(symmetric=True), pilot_states=PILOTS)
def test_generated_symmetric_specs_agree(
    desc: SpecDesc, pilot_states: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _agree(desc, monkeypatch, pilot_states)
