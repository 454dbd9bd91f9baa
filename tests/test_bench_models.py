"""The bench's mini-Raft: the idiomatic spec and its plain twin explore the same space.

``make bench`` times mcheck on :mod:`bench.mini_raft` against the plain BFS and the
Python peers on :mod:`bench.mini_raft_plain`; the ratios mean something only if the two
are the same model.  Small bounds here, the bench's bounds in ``make bench``.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.mini_raft import MiniRaft
from bench.mini_raft_plain import MiniRaftPlain, plain_bfs
from checker import CompiledSpec, Options, run
from checker.explore.result import Verdict


@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize(("max_term", "max_log"), [(2, 1), (2, 2)])
def test_mini_raft_twins_agree(max_term: int, max_log: int, symmetry: bool) -> None:
    spec = MiniRaft(MaxTerm=max_term, MaxLog=max_log)
    result = run(CompiledSpec(spec), Options(symmetry=symmetry))
    distinct, generated, depth = plain_bfs(MiniRaftPlain(3, max_term, max_log), symmetry)
    assert result.verdict is Verdict.OK
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (
        distinct,
        generated,
        depth,
    )


def test_mini_raft_published_small_figures() -> None:
    """Pinned once from both twins; a change to either model shows up here."""
    result = run(CompiledSpec(MiniRaft(MaxTerm=2, MaxLog=1)), Options(symmetry=False))
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (6723, 15829, 14)


#: Issue 27's models, each at small bounds beside its plain twin (bench.one's TWINS).
TWIN_CASES = [
    ("bench.go_back_n", {"Messages": "3", "Window": "2", "Capacity": "2"}),
    ("bench.go_back_n", {"Messages": "4", "Window": "2", "Capacity": "3"}),
    ("bench.lease", {"MaxTime": "6"}),
    ("bench.gossip", {"Nodes": "3", "Keys": "3"}),
    ("bench.commit_timeouts", {"RMs": "3"}),
    ("bench.commit_timeouts", {"RMs": "4"}),
]


@pytest.mark.parametrize(("spec", "consts"), TWIN_CASES)
def test_corpus_twins_agree(spec: str, consts: dict[str, str]) -> None:
    import importlib

    from bench.one import TWINS
    from checker.authoring.loader import load_spec_class

    cls = load_spec_class(spec)
    result = run(CompiledSpec(cls(**consts)), Options(deadlock=False))
    twin = importlib.import_module(TWINS[spec])
    assert result.verdict is Verdict.OK
    assert (result.stats.distinct, result.stats.generated) == twin.explore(consts)
    assert result.stats.distinct > 1000  # a real space, not a model stuck at its start


def test_the_spec_alone_runs_the_constraint_on_every_generated_state() -> None:
    """``make bench``'s "spec code alone" (the yardstick of issue 47) charges the spec
    with every piece of its own code a run executes: the constraint included, once per
    generated state.  Its collecting pass calls it as often again, before the clock."""
    from bench.one import _spec_alone
    from checker.authoring.loader import load_spec_class

    cls = load_spec_class("lamport_mutex")
    calls: list[int] = []

    class Counted(cls):  # type: ignore[misc,valid-type]
        def constraint(self, s: object) -> bool:
            calls.append(1)
            return bool(super().constraint(s))

    assert _spec_alone(Counted(N=2, maxClock=3)) > 0
    result = run(CompiledSpec(cls(N=2, maxClock=3)), Options(deadlock=False))
    initial = len(CompiledSpec(cls(N=2, maxClock=3)).initial_states())
    # (the initial states are asked once, before the clock, for those outside)
    assert len(calls) == 2 * (result.stats.generated - initial) + initial


def test_the_spec_alone_checks_each_distinct_state_outside_the_constraint_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The invariants of a state outside the constraint are the spec's code a run
    must execute too (TLC checks them): the yardstick counts each distinct such
    state once, as an engine that remembered the ones that passed would.  Held to a
    breadth-first search that tells states apart by the injective encoding."""
    from bench.one import _spec_alone
    from checker.authoring.loader import load_spec_class
    from checker.values.fingerprint import encode

    spec = load_spec_class("lamport_mutex")(N=2, maxClock=3)
    model = CompiledSpec(spec)
    inside: set[Any] = set()
    outside: set[Any] = set()
    frontier = list(model.initial_states())
    inside.update(encode(s) for s in frontier)
    while frontier:
        nxt = []
        for s in frontier:
            for _, _, t in model.successors(s):
                key = encode(t)
                if not model.within(t):
                    outside.add(key)
                elif key not in inside:
                    inside.add(key)
                    nxt.append(t)
        frontier = nxt
    assert outside, "no state outside the constraint: the test is idle"
    checked: list[Any] = []
    original = CompiledSpec.violated_invariant

    def counted(self: CompiledSpec, state: Any) -> str | None:
        checked.append(encode(state))
        return original(self, state)

    monkeypatch.setattr(CompiledSpec, "violated_invariant", counted)
    _spec_alone(spec)
    # The timed loop comes last: each distinct state, inside or outside, once.
    timed = checked[-(len(inside) + len(outside)) :]
    assert set(timed) == inside | outside and len(set(timed)) == len(timed)
