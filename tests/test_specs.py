"""Pinned outcomes of the shipped specs, as computed by the engine."""

from __future__ import annotations

import itertools

import pytest

from checker import CompiledSpec, Options, check_spec
from checker.explore.result import Verdict
from mcheck_shipped.specs.die_hard import DieHard
from mcheck_shipped.specs.raft import Raft
from mcheck_shipped.specs.two_phase import TwoPhase


def test_die_hard_shortest_counterexample_is_the_puzzle_solution() -> None:
    r = check_spec(DieHard())
    assert r.verdict is Verdict.VIOLATION
    assert r.violated == "BigJugNotFour"
    assert r.trace is not None
    assert r.trace.labels() == [
        "FillBig",
        "BigToSmall",
        "EmptySmall",
        "BigToSmall",
        "FillBig",
        "BigToSmall",
    ]
    assert r.trace.states()[-1].big == 4
    assert (r.stats.distinct, r.stats.generated) == (14, 43)


def test_die_hard_dfs_also_finds_a_violation() -> None:
    r = check_spec(DieHard(), Options(strategy="dfs"))
    assert r.verdict is Verdict.VIOLATION
    assert r.trace is not None and r.trace.states()[-1].big == 4


@pytest.mark.parametrize(
    ("rms", "plain", "reduced"),
    [(3, 288, 80), (4, 1568, 166), (5, 8832, 314)],
)
def test_two_phase_counts_with_and_without_symmetry(rms: int, plain: int, reduced: int) -> None:
    # 288 (3 RMs) and 8,832 (5 RMs) are TLC's and stateright's counts for TwoPhase.tla;
    # the reduced counts are the exact numbers of orbits (see test_symmetry.py).
    for strategy in ("bfs", "dfs"):
        r = check_spec(TwoPhase(RM=str(rms)), Options(strategy=strategy, symmetry=False))
        assert (r.verdict, r.stats.distinct) == (Verdict.OK, plain)
        r = check_spec(TwoPhase(RM=str(rms)), Options(strategy=strategy))
        assert (r.verdict, r.stats.distinct) == (Verdict.OK, reduced)
        assert r.symmetry is True


def test_raft_two_servers_matches_tlc_exactly() -> None:
    # TLC: servers {s1, s2}, values {v1}, MaxTerm=2, MaxLogLen=1, MaxMsgs=1, no symmetry.
    r = check_spec(Raft(Server="2", MaxTerm=2, MaxLogLen=1), Options(symmetry=False))
    assert r.verdict is Verdict.OK
    assert (r.stats.distinct, r.stats.generated, r.stats.depth) == (1760, 13797, 28)


@pytest.mark.slow
def test_raft_two_servers_max_term_3_matches_tlc() -> None:
    # TLC: 25,164 distinct, 198,851 generated.  TLC printed depth 42 in the run the
    # issue quotes; the BFS depth of this graph is 41, which the independent
    # hand-written checker in bench/raft_baseline.py confirms below.  TLC's depth is
    # the level of the last trace record, which several workers can over-report
    # (TLCTrace.getLevel says so in its comment).
    r = check_spec(Raft(Server="2", MaxTerm=3, MaxLogLen=1), Options(symmetry=False))
    assert r.verdict is Verdict.OK
    assert (r.stats.distinct, r.stats.generated, r.stats.depth) == (25164, 198851, 41)
    from bench.raft_baseline import explore_with_depth

    assert explore_with_depth(2, 3, 1, 1) == (25164, 198851, 41)


def test_raft_symmetry_reduces_and_keeps_the_verdict() -> None:
    r = check_spec(Raft(Server="2", MaxTerm=2, MaxLogLen=1))
    assert r.verdict is Verdict.OK
    assert r.symmetry is True
    assert r.stats.distinct == 889
    assert r.stats.depth == 28


def test_counterexample_under_symmetry_is_a_real_behaviour() -> None:
    # Break Raft on purpose (MaxLogLen=1 with a 2-server quorum of 1 is safe, so use
    # an invariant that fails: no server ever becomes leader) and check the trace
    # replays step by step through the unreduced model.
    class NoLeader(Raft):
        name = "raft_no_leader"

        from checker import invariant as _inv

        @_inv
        def NeverLeader(self, s):  # type: ignore[no-untyped-def]
            return "Leader" not in s.state.values()

    spec = NoLeader(Server="3", MaxTerm=2, MaxLogLen=0)
    r = check_spec(spec, properties=["NeverLeader"])
    assert r.verdict is Verdict.VIOLATION
    assert r.trace is not None
    # Timeout; a self-vote (send, deliver, reply); a vote from a peer, which first
    # adopts the term (send, UpdateTerm, deliver, reply); BecomeLeader.
    assert r.trace.length == 9
    plain = check_spec(spec, Options(symmetry=False), properties=["NeverLeader"])
    assert plain.trace is not None and plain.trace.length == 9
    model = CompiledSpec(spec, symmetry=False)
    states = r.trace.states()
    assert states[0] in model.initial_states()
    for a, b in itertools.pairwise(states):
        assert b in [t for _, _, t in model.successors(a)]
