"""HDDS-16932 and HDDS-16454: the engine's real outcomes, pinned."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker import CompiledSpec
from checker.authoring.loader import load_spec_class
from checker.explore.result import Verdict
from tests.seed_helpers import replay_on, run

SNAP = "scm_install_snapshot_leader_change"
DN = "scm_new_leader_dn_server_start"
#: s1 leads, s2 follows, and one new entry is committed on the two of them: the start
#: of both HDDS-16454 traces below (the bug's, then the residual's).
FIRST_ENTRY_COMMITTED = [
    "BecomeLeader(s1)",
    "LearnLeader(s2)",
    "ClientAllocate(s1)",
    "Replicate(s1, s2)",
    "AdvanceCommit(s1)",
]
#: HDDS-16932 as the report tells it: leadership moves to L2 while F downloads L1's
#: checkpoint, F follows L2, then the download succeeds.
REPORT_STORY = [
    "SendNotify(L1)",
    "HandleNotify(Notify L1->F t1)",
    "ElectLeader(L2)",
    "SendAppend(L2)",
    "HandleAppend(Append L2->F t2)",
    'DownloadFinish("OK")',
]
DN_SAFETY = [
    "NoLeaderBranchStartBeforeApplied",
    "NoLeaderStartBeforeAccessionApplied",
    "StartHadRealTarget",
]
LARGER = {"MAX_ELECTIONS": 3, "MAX_PURGES": 2, "MAX_DL_FAILURES": 2}


@pytest.mark.parametrize(("consts", "bug_n", "fix_scm_n"), [({}, 258, 242), (LARGER, 361, 343)])
def test_hdds_16932_bug_and_scm_patch_get_stuck_in_6_actions(
    consts: dict[str, int], bug_n: int, fix_scm_n: int
) -> None:
    for variant, distinct in (("bug", bug_n), ("fix_scm", fix_scm_n)):
        r, _ = run(SNAP, variant, **consts)
        assert r.verdict is Verdict.VIOLATION
        assert r.violated == "NoStuckInstallInProgress"
        assert r.trace is not None and r.trace.length == 6
        assert r.stats.distinct == distinct
        last = r.trace.steps[-1].state
        assert last.installInProgressIndex == 3 and last.installedPending == 3
        assert last.fLeader == last.leader  # F follows L2 and rejects its appends


@pytest.mark.parametrize(("timing", "distinct"), [("any", 23636), ("report", 21628)])
def test_hdds_16932_ratis_fix_with_scm_guard_holds_exhaustively(timing: str, distinct: int) -> None:
    r, _ = run(SNAP, "fix_and_scm_guard", TIMING=timing)
    assert r.verdict is Verdict.OK
    assert r.stats.distinct == distinct
    live, _ = run(
        SNAP, "fix_and_scm_guard", invariants=["FollowerEventuallyCatchesUp"], TIMING=timing
    )
    assert live.verdict is Verdict.OK


@pytest.mark.parametrize(("timing", "distinct"), [("any", 165), ("report", 149)])
def test_hdds_16932_shipped_ratis_fix_leaves_scm_s_checkpoint_field_set(
    timing: str, distinct: int
) -> None:
    """Issue 48: the Ratis fix abandons a running download, but SCM's supplier runs on
    and sets installingDBCheckpoint, which only reinitialize() clears; every later
    install then fails setInstallingSnapshotData's precondition and F never catches
    up once a leader purges past it."""
    r, _ = run(SNAP, "fix", TIMING=timing)
    assert (r.violated, r.stats.distinct) == ("InstallingCheckpointHasItsInstall", distinct)
    assert r.trace is not None and r.trace.labels()[-1] == "OrphanFinish"
    last = r.trace.steps[-1].state
    assert last.installingDBCheckpoint == 3 and last.installedPending == -1
    live, _ = run(SNAP, "fix", invariants=["FollowerEventuallyCatchesUp"])
    assert live.violated == "FollowerEventuallyCatchesUp"
    assert live.trace is not None and live.trace.length == 16


def test_hdds_16932_report_timing_separates_the_scm_patch_halves() -> None:
    """Under the reproduction's timing (leadership moves while the download is held,
    which ends after F hears the new term) the whole SCM patch holds, the leader
    check alone is caught by a null result, the null-result half alone by a success."""
    r, _ = run(SNAP, "fix_scm", TIMING="report")
    assert (r.verdict, r.stats.distinct) == (Verdict.OK, 33494)
    r, _ = run(SNAP, "scm_leader_check_only", TIMING="report")
    assert r.violated == "NoStuckInstallInProgress" and r.trace is not None
    assert r.trace.labels()[-1] == 'DownloadFinish("ERROR")'
    assert r.trace.steps[-1].state.snapshotNull
    r, _ = run(SNAP, "scm_null_results_only", TIMING="report")
    assert r.violated == "NoStuckInstallInProgress" and r.trace is not None
    assert r.trace.labels()[-1] == 'DownloadFinish("OK")'


def test_hdds_16932_report_story_leadership_moves_during_the_download() -> None:
    r, _ = run(SNAP, "bug", TIMING="report")
    assert r.violated == "NoStuckInstallInProgress" and r.trace is not None
    assert r.trace.labels() == REPORT_STORY
    # The download was running when leadership moved, and F already followed L2.
    assert r.trace.steps[3].state.download == "Running"
    assert r.trace.steps[5].state.fLeader == r.trace.steps[5].state.leader


@pytest.mark.parametrize(
    ("mutant", "violated", "labels_tail"),
    [
        # F hears term 2 from L2's RequestVote first, so no append brings a higher term.
        (
            "mutant_new_term_hook",
            "NoStuckInstallInProgress",
            ["HandleRequestVote(RequestVote L2->F t2)", "HandleAppend(Append L2->F t2)"],
        ),
        # L2's log covers F, so L2 never notifies: the hook is dead code.
        ("mutant_notify_path_hook", "NoStuckInstallInProgress", ["HandleAppend(Append L2->F t2)"]),
        # The index is cleared on the vote while L1's download runs on.
        (
            "mutant_keep_download",
            "InstallStateConsistent",
            ["HandleRequestVote(RequestVote L2->F t2)"],
        ),
    ],
)
def test_hdds_16932_wrong_ratis_patches_are_caught(
    mutant: str, violated: str, labels_tail: list[str]
) -> None:
    r, _ = run(SNAP, mutant)
    assert r.violated == violated and r.trace is not None
    assert r.trace.labels()[-len(labels_tail) :] == labels_tail


#: The shortest behaviour of mutant_keep_download that moves F's applied index back
#: (found by BFS with MAX_WRITES=3 MAX_ELECTIONS=1 MAX_DL_FAILURES=0, the gate's row):
#: it starts as the report's story (L1's download, orphaned by the hook, lands); F
#: catches up from L2 and applies entry 4; L2 writes on and purges past F; its
#: notification starts a new download and, in the same call, reloads L1's
#: checkpoint at 3.
LATE_RESULT = [
    *REPORT_STORY,
    "HandleAppendReply(AppendReply F->L2 t2)",
    "Write(L2)",
    "SendAppend(L2)",
    "HandleAppend(Append L2->F t2)",
    *["Apply"] * 4,
    "HandleAppendReply(AppendReply F->L2 t2)",
    "Write(L2)",
    "Write(L2)",
    "Purge(L2, 6)",
    "SendNotify(L2)",
    "HandleNotify(Notify L2->F t2)",
]


def _walk(variant: str, labels: list[str]) -> tuple[int, list[str | None]]:
    """Follow ``labels`` through the spec's successors (cheap, no search): how many
    steps were enabled, and each step's violated action property (None: none)."""
    cls = load_spec_class(SNAP)
    inst = cls(variant=variant, MAX_WRITES=3, MAX_ELECTIONS=1, MAX_DL_FAILURES=0)
    model = CompiledSpec(inst, properties=["AppliedIndexNeverMovesBackwards"])
    state = model.initial_states()[0]
    verdicts: list[str | None] = []
    for label in labels:
        nxt = [t for ai, ps, t in model.successors(state) if model.label(ai, ps) == label]
        if not nxt:
            break
        verdicts.append(model.violated_action_property(state, nxt[0]))
        state = nxt[0]
    return len(verdicts), verdicts


def test_hdds_16932_late_result_of_an_orphaned_download_moves_applied_back() -> None:
    """Issue 29: the two Ratis patches that leave the download (or its stored result)
    behind are caught by a symptom, F's applied index moving backwards, not only by
    the bookkeeping invariant; the fix abandons the download, so the walk stops."""
    clear_first = [*LATE_RESULT[:2], 'DownloadFinish("OK")', *LATE_RESULT[2:5], *LATE_RESULT[6:]]
    for mutant, labels in (
        ("mutant_keep_download", LATE_RESULT),
        ("mutant_clear_index_only", clear_first),
    ):
        steps, verdicts = _walk(mutant, labels)
        assert steps == 20, mutant
        assert verdicts == [None] * 19 + ["AppliedIndexNeverMovesBackwards"], mutant
    steps, verdicts = _walk("fix", LATE_RESULT)
    assert steps == 5 and not any(verdicts)  # no download left to finish
    steps, verdicts = _walk("fix", clear_first)
    assert not any(verdicts)


def test_hdds_16932_story_and_replays(tmp_path: Path) -> None:
    r, model = run(SNAP, "bug")
    assert r.trace is not None
    assert r.trace.labels() == [
        "SendNotify(L1)",
        "HandleNotify(Notify L1->F t1)",
        'DownloadFinish("OK")',
        "ElectLeader(L2)",
        "SendAppend(L2)",
        "HandleAppend(Append L2->F t2)",
    ]
    assert replay_on(r, model, tmp_path, "bug").ok
    # The report's own patch does not block this trace: the download finished while
    # F still named L1 as its leader.
    assert replay_on(r, model, tmp_path, "fix_scm").ok
    # The Ratis fix applies the stored install when F moves to L2's term.
    blocked = replay_on(r, model, tmp_path, "fix")
    assert not blocked.ok
    assert blocked.step == 6
    assert "HandleAppend(Append L2->F t2) produces a different state" in blocked.message
    assert any("installInProgressIndex" in d for d in blocked.details)
    assert blocked.by_actions == (
        "taking the same 6 actions in variant fix, NoStuckInstallInProgress holds at the end"
    )


def test_hdds_16454_bug_leader_branch_starts_before_applied() -> None:
    r, _ = run(DN, "bug")
    assert (r.verdict, r.violated) == (Verdict.VIOLATION, "NoLeaderBranchStartBeforeApplied")
    assert r.trace is not None and r.trace.labels() == ["BecomeLeader(s1)"]
    r, _ = run(DN, "bug", INIT="fresh")
    assert r.violated == "NoLeaderBranchStartBeforeApplied"
    assert r.trace is not None and r.trace.labels() == [
        *FIRST_ENTRY_COMMITTED,
        "Restart(s1)",
        "BecomeLeader(s1)",
    ]


@pytest.mark.parametrize(("consts", "distinct"), [({}, 2354), ({"MAX_TERM": 4}, 7965)])
def test_hdds_16454_fix_and_recapture_hold(consts: dict[str, int], distinct: int) -> None:
    # Every safety invariant here; liveness at the defaults in its own test.
    for variant in ("fix", "fix_recapture"):
        r, _ = run(DN, variant, invariants=DN_SAFETY, **consts)
        assert r.verdict is Verdict.OK, variant
        assert r.stats.distinct == distinct


def test_hdds_16454_liveness_catches_a_fix_that_never_starts_a_leader() -> None:
    r, _ = run(DN, "fix", invariants=["DNServerEventuallyStarts"])
    assert r.verdict is Verdict.OK
    r, _ = run(DN, "mutant_never_start_leader")
    assert r.violated == "DNServerEventuallyStarts"
    assert r.trace is not None and r.trace.loop is not None
    last = r.trace.steps[-1].state
    leader = last.leader
    assert not last.dnServerStarted[leader] and last.applied[leader] == last.commit[leader]


def test_hdds_16454_every_invariant_catches_the_leader_branch_only_patch() -> None:
    # NoLeaderBranchStartBeforeApplied alone is blind to it: the start goes through
    # applyTransaction's call while leader.
    r, _ = run(DN, "mutant_leader_branch_only", invariants=["NoLeaderBranchStartBeforeApplied"])
    assert r.verdict is Verdict.OK
    r, _ = run(DN, "mutant_leader_branch_only")
    assert r.violated == "NoLeaderStartBeforeAccessionApplied"
    assert r.trace is not None and r.trace.labels() == ["BecomeLeader(s1)", "Apply(s1)"]


def test_hdds_16454_residual_with_a_leader_recovered_short() -> None:
    r, _ = run(DN, "fix", INIT_LOG=1)
    assert r.violated == "NoLeaderStartBeforeAccessionApplied"
    assert r.trace is not None and r.trace.labels() == [
        *FIRST_ENTRY_COMMITTED,
        "LearnCommit(s2)",
        "BecomeLeader(s2)",
        "Apply(s2)",
    ]
    r, _ = run(DN, "fix_recapture", invariants=DN_SAFETY, INIT_LOG=1)
    assert (r.verdict, r.stats.distinct) == (Verdict.OK, 84095)


@pytest.mark.parametrize(
    ("variant", "labels"),
    [
        ("mutant_unknown_commit_as_zero", ["Apply(s1)"]),
        ("mutant_own_commit_target", ["Apply(s1)", "Apply(s1)"]),
    ],
)
def test_hdds_16454_follower_path_wrong_targets_are_caught_at_the_start(
    variant: str, labels: list[str]
) -> None:
    """Issue 29: a follower-side patch with a wrong catch-up target (nothing known read
    as 0; the node's own commit index) passed the start-while-leader invariants; the
    ghost of what the node knew at the capture catches both at the start."""
    r, _ = run(DN, variant, invariants=DN_SAFETY[:2])
    assert r.verdict is Verdict.OK
    r, _ = run(DN, variant)
    assert r.violated == "StartHadRealTarget"
    assert r.trace is not None and r.trace.labels() == labels
    started = [x for x, on in r.trace.steps[-1].state.dnServerStarted.items() if on]
    assert started


def test_hdds_16454_residual_of_the_reports_patch() -> None:
    r, _ = run(DN, "fix", MAX_INDEX=3, INIT_LOG=2)
    assert r.violated == "NoLeaderStartBeforeAccessionApplied"
    assert r.trace is not None and r.trace.length == 9
    assert r.trace.labels()[-3:] == ["BecomeLeader(s2)", "Apply(s2)", "Apply(s2)"]


def test_hdds_16454_fix_blocks_the_bug_trace(tmp_path: Path) -> None:
    r, model = run(DN, "bug", INIT="fresh")
    assert replay_on(r, model, tmp_path, "bug").ok
    blocked = replay_on(r, model, tmp_path, "fix")
    # The patched isFollowerCaughtUp() captures a target at once: the first state
    # already differs; taking the same 7 actions, the datanode server is not started.
    assert not blocked.ok and blocked.step == 1
    assert "BecomeLeader(s1) produces a different state" in blocked.message
    assert blocked.by_actions == (
        "taking the same 7 actions in variant fix, NoLeaderBranchStartBeforeApplied "
        "holds at the end"
    )
    # Step 1 only captures a target (bookkeeping); the step the fix changes is the
    # restarted s1's election, where its datanode server no longer starts.
    assert blocked.decisive_step == 7
    assert blocked.decisive is not None
    assert "step 7: BecomeLeader(s1) (startPath, startApplied, startCommit differ)" in (
        blocked.decisive
    )


def test_cli_replay_names_the_decisive_step(tmp_path: Path) -> None:
    """A trace saved by ``mcheck run`` records what its property reads, so ``mcheck
    replay`` can name the step the fix changes."""
    from click.testing import CliRunner

    from checker.cli.commands import main

    out = tmp_path / "dn.itf.json"
    runner = CliRunner()
    # The mechanism's trace, not the bug variant's story (the dropped report).
    args = ["--const", "INIT=fresh", "--const", "DN_REPORTS=false", "--invariant", "all"]
    r = runner.invoke(main, ["run", DN, *args, "--trace-out", str(out)])
    assert r.exit_code == 12, r.output
    r = runner.invoke(main, ["replay", DN, str(out), "--variant", "fix"])
    assert "the first step whose outcome the property reads is step 7" in r.stdout
