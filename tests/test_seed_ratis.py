"""RATIS-1369, HDDS-17579 and RATIS-2605: the engine's real outcomes, pinned."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.explore.result import Verdict
from tests.seed_helpers import replay_on, run

EMPTY = "ratis_empty_snapshot_index_default"
OM = "om_leader_ready_before_apply"
HB = "ratis_heartbeat_match_index"
HB_SAFETY = ["MatchIndexSound", "CommitImpliesQuorumReplication", "StateMachineSafety"]
OM_SAFETY = [
    "NewLeaderReadyOnlyAfterPreviousTermApplied",
    "NewLeaderReadyOnlyAfterPreviousTermFlushed",
    "ReadyLeaderServesAckedWrites",
    "NoStaleRead",
    "NoStaleWriteRejection",
]


@pytest.mark.parametrize(
    ("invariant", "length"),
    [("NoFalseAlreadyInstalled", 2), ("MatchIndexSound", 3), ("FollowerNotStranded", 3)],
)
def test_ratis_1369_bug_answers_already_installed(invariant: str, length: int) -> None:
    r, _ = run(EMPTY, "bug", invariants=[invariant])
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, invariant)
    assert r.trace is not None and r.trace.length == length
    assert r.trace.labels()[:2] == ["SendNotify", "HandleNotify(Notify L->F)"]


@pytest.mark.parametrize(("consts", "distinct"), [({}, 12), ({"LAST": 4, "SNAP_L": 3}, 15)])
def test_ratis_1369_fix_holds(consts: dict[str, int], distinct: int) -> None:
    r, _ = run(EMPTY, "fix", **consts)
    assert r.verdict is Verdict.OK
    assert r.stats.distinct == distinct
    r, _ = run(EMPTY, "bug", **consts)
    assert r.violated == "NoFalseAlreadyInstalled"


@pytest.mark.parametrize("variant", ["bug", "mutant_notify_only", "mutant_notify_compare"])
def test_ratis_1369_next_index_reader_catches_handler_only_patches(variant: str) -> None:
    """Issue 29: a patch of the notification handler alone passes where F is new and is
    caught where F meets a newly elected leader (getNextIndex() reads the default)."""
    if variant != "bug":
        r, _ = run(EMPTY, variant)
        assert r.verdict is Verdict.OK and r.stats.distinct == 12
    r, _ = run(EMPTY, variant, ELECTED=True)
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, "NextIndexReportSound")
    assert r.trace is not None and r.trace.length == 2
    assert r.trace.labels()[0] == "SendAppend"
    r, _ = run(EMPTY, "fix", ELECTED=True)
    assert r.verdict is Verdict.OK and r.stats.distinct == 15


def test_ratis_1369_fix_blocks_the_false_answer(tmp_path: Path) -> None:
    r, model = run(EMPTY, "bug", invariants=["FollowerNotStranded"])
    assert replay_on(r, model, tmp_path, "bug").ok
    blocked = replay_on(r, model, tmp_path, "fix")
    assert not blocked.ok and blocked.step == 2
    assert "HandleNotify(Notify L->F) produces a different state" in blocked.message


@pytest.mark.parametrize(
    ("invariant", "length"),
    [
        ("NewLeaderReadyOnlyAfterPreviousTermApplied", 7),
        ("ReadyLeaderServesAckedWrites", 10),
        ("NoStaleRead", 11),
        ("NoStaleWriteRejection", 11),
    ],
)
def test_hdds_17579_bug_ready_before_apply(invariant: str, length: int) -> None:
    r, _ = run(OM, "bug", invariants=[invariant])
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, invariant)
    assert r.trace is not None and r.trace.length == length
    assert "TransferLeadership(o2)" in r.trace.labels()
    assert r.trace.labels()[-2:] in (
        ["RatisApply(o2)", "RatisApply(o2)"],
        ["RatisApply(o2)", "Read(o2, b1)"],
        ["RatisApply(o2)", "ClientWrite(k1)"],
    )


def test_hdds_17579_fix_holds() -> None:
    # Every invariant; the gate's rows add LeaderEventuallyReady, and the spec's page
    # the restart setting (323,432 states).
    r, _ = run(OM, "fix", invariants=OM_SAFETY)
    assert r.verdict is Verdict.OK
    assert r.stats.distinct == 64575


@pytest.mark.parametrize(
    ("mutant", "violated", "length"),
    [
        # Reads wait for the backlog, writes do not: a key create on the new leader is
        # refused BUCKET_NOT_FOUND for a bucket acknowledged in the previous term.
        ("mutant_reads_only", "NoStaleWriteRejection", 11),
        # Ready once the backlog is executed, before the double buffer has flushed it.
        ("mutant_executed_index", "NewLeaderReadyOnlyAfterPreviousTermFlushed", 8),
    ],
)
def test_hdds_17579_wrong_patches_are_caught(mutant: str, violated: str, length: int) -> None:
    r, _ = run(OM, mutant)
    assert r.violated == violated
    assert r.trace is not None and r.trace.length == length
    assert "TransferLeadership(o2)" in r.trace.labels()


def test_hdds_17579_fix_keeps_the_new_leader_not_ready(tmp_path: Path) -> None:
    r, model = run(OM, "bug", invariants=["ReadyLeaderServesAckedWrites"])
    assert replay_on(r, model, tmp_path, "bug").ok
    # Every step is still possible (readiness is derived, not stored), but under the
    # fix o2 is LEADER_AND_NOT_READY at the end, so nothing stale is served.
    blocked = replay_on(r, model, tmp_path, "fix")
    assert not blocked.ok and blocked.step == 10
    assert blocked.message == (
        "the trace replays, but ReadyLeaderServesAckedWrites holds in its last state in variant fix"
    )


@pytest.mark.parametrize(
    ("invariant", "length"), [("MatchIndexSound", 8), ("CommitImpliesQuorumReplication", 9)]
)
def test_ratis_2605_bug_heartbeat_advances_match_index(invariant: str, length: int) -> None:
    r, _ = run(HB, "bug", invariants=[invariant])
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, invariant)
    assert r.trace is not None and r.trace.length == length
    assert r.trace.labels()[5] == "SendAppendEntries(s2, s1, TRUE)"  # the heartbeat


FROM_EMPTY = {"Init": "empty", "MaxTerm": 3, "MaxMsgs": 1}


def test_ratis_2605_finding_empty_log_heartbeat_commits_a_divergent_index() -> None:
    for variant in ("bug", "fix"):
        r, _ = run(HB, variant, invariants=["StateMachineSafety"], **FROM_EMPTY)
        assert r.violated == "StateMachineSafety" and r.trace is not None
        assert r.trace.length == 16
        # The last step: s1 takes s2's heartbeat, which has no previous entry.
        assert r.trace.labels()[-2:] == [
            "SendAppendEntries(s2, s1, TRUE)",
            "HandleAppendEntriesRequest(AEReq s2->s1 t3)",
        ]
        last = r.trace.steps[-1].state
        s1, s2 = sorted(last.log, key=str)[:2]
        assert last.commitIndex[s1] == 0 and last.log[s1][0] != last.log[s2][0]
    r, _ = run(
        HB, "fix", invariants=["MatchIndexSound", "CommitImpliesQuorumReplication"], **FROM_EMPTY
    )
    assert (r.verdict, r.stats.distinct) == (Verdict.OK, 17066)
    r, _ = run(HB, "fix_and_commit_guard", invariants=["StateMachineSafety"], **FROM_EMPTY)
    assert r.verdict is Verdict.OK


def test_ratis_2605_fix_only_with_a_previous_entry_is_caught() -> None:
    r, _ = run(HB, "mutant_fix_with_previous_only", invariants=["MatchIndexSound"], **FROM_EMPTY)
    assert r.violated == "MatchIndexSound" and r.trace is not None and r.trace.length == 13
    # ...while it passes the seeded configuration the report's own test resembles.
    r, _ = run(HB, "mutant_fix_with_previous_only", MaxMsgs=1)
    assert r.verdict is Verdict.OK


# The fix at the defaults (80,227 states, every property) is the gate's "RATIS-2605
# fix" row: CI runs it after the tests, so the suite does not run it twice.


def test_ratis_2605_fix_holds_with_one_message_in_flight() -> None:
    r, _ = run(HB, "fix", MaxMsgs=1)
    assert r.verdict is Verdict.OK
    r, _ = run(HB, "bug", MaxMsgs=1)
    assert r.violated == "MatchIndexSound" and r.trace is not None and r.trace.length == 8


def test_ratis_2605_fix_ignores_the_heartbeat_next_index(tmp_path: Path) -> None:
    r, model = run(HB, "bug", invariants=["MatchIndexSound"])
    assert replay_on(r, model, tmp_path, "bug").ok
    blocked = replay_on(r, model, tmp_path, "fix")
    assert not blocked.ok and blocked.step == 8
    assert "HandleAppendEntriesResponse(AEResp s1->s2 t2) produces a different state" in (
        blocked.message
    )


def test_ratis_2605_deep_bug_loses_a_committed_entry() -> None:
    r, _ = run(HB, "bug", invariants=["StateMachineSafety"], MaxTerm=3, MaxMsgs=1)
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, "StateMachineSafety")
    assert r.trace is not None and r.trace.length == 21
    last = r.trace.steps[-1].state
    s1, s2 = sorted(last.log.keys())[:2]
    assert last.log[s1][1] != last.log[s2][1]  # index 1 committed with two terms


@pytest.mark.slow
def test_ratis_2605_deep_fix_holds() -> None:
    r, _ = run(HB, "fix", invariants=["StateMachineSafety"], MaxTerm=3, MaxMsgs=1)
    assert r.verdict is Verdict.OK
    assert r.stats.distinct == 95483


def test_ratis_2605_liveness_is_the_reports_inconsistency_loop() -> None:
    """Issue 29: the lasso of RejectedFollowerEventuallyRepaired is the report's story:
    in the loop the follower answers INCONSISTENCY and the leader's nextIndex for it
    never moves (the back-off is floored at the polluted matchIndex + 1); the fix
    closes it; a step labelled as entries never sends a heartbeat."""
    consts = {"MaxMsgs": 1, "MaxClientRequests": 1}
    props = ["RejectedFollowerEventuallyRepaired"]
    r, _ = run(HB, "bug", invariants=props, **consts)
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, props[0])
    trace = r.trace
    assert trace is not None and trace.loop is not None and trace.length == 22
    cycle = trace.steps[trace.loop + 1 :]
    replies = [
        m
        for step in cycle
        for m in step.state.messages
        if type(m).__name__ == "AEResp" and m.mresult == "INCONSISTENCY"
    ]
    assert replies
    j, i = replies[0].msource, replies[0].mdest
    assert len({step.state.nextIndex[i][j] for step in trace.steps[trace.loop :]}) == 1
    for step in trace.steps[1:]:
        if step.action is not None and step.action.startswith("SendAppendEntries"):
            sent = step.params[-1]
            heartbeats = [m.mheartbeat for m in step.state.messages if type(m).__name__ == "AEReq"]
            assert heartbeats == [sent]
    fixed, _ = run(HB, "fix", invariants=props, **consts)
    assert fixed.verdict is Verdict.OK and fixed.graph is not None and fixed.graph[0] == 21973


PROGRESS = ["LeaderLearnsWhatFollowerHolds", "LeaderCommitsWhatQuorumHolds"]


def test_ratis_2605_a_max_on_every_success_freezes_progress_and_is_caught() -> None:
    """Issue 48: a patch applying the fix's max(old, previous + 1) to every SUCCESS,
    not only heartbeats, passes every safety invariant and both log-agreement
    properties, but the leader never learns what the follower holds: matchIndex and
    commit freeze.  The progress properties catch it; the fix holds them."""
    consts = {"MaxMsgs": 1, "MaxClientRequests": 1}
    r, _ = run(HB, "mutant_max_on_every_success", invariants=HB_SAFETY, **consts)
    assert r.verdict is Verdict.OK
    r, _ = run(HB, "mutant_max_on_every_success", invariants=PROGRESS, **consts)
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, "LeaderLearnsWhatFollowerHolds")
    trace = r.trace
    assert trace is not None and trace.loop is not None and trace.length == 17
    # In the loop the follower holds the leader's whole log; matchIndex never says so.
    last = trace.steps[-1].state
    leaders = [i for i in last.state if last.state[i] == "Leader"]
    assert len(leaders) == 1
    i = leaders[0]
    behind = [j for j in last.log if j != i and last.matchIndex[i][j] < len(last.log[i]) - 1]
    assert behind
    fixed, _ = run(HB, "fix", invariants=PROGRESS, **consts)
    assert fixed.verdict is Verdict.OK and fixed.stats.distinct == 11006
