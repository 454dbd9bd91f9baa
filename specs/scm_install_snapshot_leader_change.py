"""HDDS-16932: an SCM follower rejects every append of a new leader when leadership
moves while it downloads a checkpoint that then succeeds.

Mechanism (Ratis 3.3.x + Ozone SCM).  Leader L1 has purged its log past follower F's
next index, so it sends F an install-snapshot notification carrying its first index.
Ratis' ``SnapshotInstallationHandler`` sets ``installInProgressIndex`` and calls
``SCMStateMachine.notifyInstallSnapshotFromLeader``, which downloads L1's checkpoint
asynchronously and completes a future with the checkpoint TermIndex.  Completing the
future applies nothing: the result is stored, and only the *next* notification
reloads the state machine and clears the index.  While the index is set,
``RaftServerImpl.checkInconsistentAppendEntries`` answers every append INCONSISTENCY.
If leadership moves during the download to L2, whose log still covers F's next index,
L2 never sends a notification (``LogAppender.shouldInstallSnapshot``), and once the
download succeeds F rejects L2's appends forever.

Model (the brief ``scm_install_snapshot_leader_change``): three SCMs with fixed roles,
Ratis indices (0-based, -1 = none); committed entries ``0..N-1`` identical on L1 and
L2; the checkpoint is one number ``CK``; one outstanding request per leader.  Every
message and reply is a separate action, so a send and its delivery are two steps.

Variants: ``bug`` (the code as filed); ``fix_scm`` (the report's SCM patch: fail the
future when F's leader is no longer the one it downloads from, and on every null
result of ``verifyCheckpointFromLeader``), and its two halves alone,
``scm_leader_check_only`` (the check where the supplier has a TermIndex to return;
its ``return null`` paths are untouched) and ``scm_null_results_only``; ``fix`` (the
Ratis change the report calls for: when F's leader changes (``ServerState.setLeader``,
reached from a vote request as well as from a new leader's first request) with an
install pending, apply the stored snapshot now, drop a null result, abandon a running
download, clear the index); and ``fix_and_scm_guard``, that fix with SCM told of the
abandon (its download supplier sets ``installingDBCheckpoint`` only for a download Ratis
still wants).  Three wrong Ratis patches are kept as variants so the
checks show they are caught: ``mutant_new_term_hook`` (the hook runs when a higher
term arrives in a notification or an append: F usually hears the new term first
from the candidate's RequestVote, so it never fires), ``mutant_notify_path_hook``
(the hook on the notification path only: a new leader whose log covers F never
notifies), ``mutant_keep_download`` (the hook clears the index but lets the download
run on) and ``mutant_clear_index_only`` (the hook only clears the index: a stored
result stays behind).

The late result (``MAX_WRITES``: the leader commits new entries, and its checkpoint
and purge point grow with them).  Ratis' handler, after starting a download for a
notification that finds no install in progress, goes on in the same call to the
checks for a null result and a stored checkpoint (``SnapshotInstallationHandler``
lines 272-385 at Ratis 37932bf60), so a result an orphaned download left behind is
reloaded by the next notification, whichever leader sends it.  With
``MAX_WRITES=3 MAX_ELECTIONS=1 MAX_DL_FAILURES=0`` both patches above move F's applied
index backwards in 20 actions (AppliedIndexNeverMovesBackwards, an action property):
L1's checkpoint at 3 lands after the leader change, F catches up from L2 and applies
entry 4, L2 writes on and purges past F, and its notification reloads L1's checkpoint
over entry 4.  ``fix_and_scm_guard`` abandons the download and holds there.

SCM's own checkpoint field (issue 48; ``SCMStateMachine`` at Ozone 78d5650c313, lines
251-279, 522-529, 578-582): the download supplier calls ``setInstallingSnapshotData``,
which asserts ``installingDBCheckpoint == null`` and sets it; only ``reinitialize``
(the reload of a stored result) clears it.  Abandoning a download in Ratis does not stop
the supplier (``CompletableFuture.supplyAsync`` runs on whatever the future's holder
does), so under ``fix`` an orphaned download still sets the field with no result in
Ratis to clear it (InstallingCheckpointHasItsInstall, 5 actions under either timing),
every later download's supplier then fails its precondition, and F never catches up
once a leader purges past it (FollowerEventuallyCatchesUp, a 16-action lasso).  The
shipped ``fix`` is caught; ``fix_and_scm_guard`` holds everything the old model said
``fix`` holds, with the same counts.  The two hook-placement mutants are built on
``fix_and_scm_guard``, so their counterexamples show their own flaw.

Timing (constant ``TIMING``): ``any`` lets the download end at any moment;
``report`` is the reproduction's timing: leadership moves while the download is
held, and the download ends only after F has heard of the new term (no election
between the end of a download and F applying or dropping its result).

Abstractions, and why they are sound for this bug: no divergent log tails (the bug
needs none; all entries involved are committed); an election is one atomic step
between L1 and L2 (F's log is too short to win; a transfer needs only L1's vote),
but the candidate's RequestVote to F is a message of its own, because it is how F
usually learns the new term, and Ratis then sets F's leader to null
(``ServerState.updateCurrentTerm``) before any append arrives (F's vote reply is not
modelled: the candidate has won without it); SCM's DB, secret keys and transaction
buffer become the outcomes of verification (ahead / not ahead / error) that decide
how the future completes; pipelined appends collapse to one outstanding request
(more copies of the same rejected append).

Results (checked by the engine; ``tests/test_seed_scm.py`` pins them): ``bug`` and
``fix_scm`` violate NoStuckInstallInProgress in 6 actions under any timing; the
``fix_scm`` counterexample is the race the patch cannot see: the download completes
while F still names L1 as its leader (before it hears from L2), as the brief
predicts.  Under the report's timing the bug's counterexample is the report's story
(leadership moves during the download), ``fix_scm`` holds and
``scm_leader_check_only`` does not (a null result).  ``fix_and_scm_guard`` holds under
every timing, FollowerEventuallyCatchesUp included (``fix`` as shipped is caught,
above); each mutant is violated.  With writes (above) ``fix_and_scm_guard`` holds every
safety property, AppliedIndexNeverMovesBackwards included
(133,792 states), and each mutant that orphans a download violates it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from immutables import Map

from checker import (
    ConfigError,
    Spec,
    Story,
    action,
    action_property,
    eventually,
    in_order,
    invariant,
    named_values,
)
from checker.values import ModelValue, put
from mcheck_shipped.invariants.ratis import (
    next_index_for_inconsistency,
    no_stuck_install_in_progress,
)

SCMS = named_values(["L1", "L2", "F"], "SCM")
L1, L2, F = SCMS

IDLE, RUNNING = "Idle", "Running"

# Install-snapshot replies (InstallSnapshotResult) and append replies.
IN_PROGRESS = "IN_PROGRESS"
SNAPSHOT_INSTALLED = "SNAPSHOT_INSTALLED"
ALREADY_INSTALLED = "ALREADY_INSTALLED"
SNAPSHOT_UNAVAILABLE = "SNAPSHOT_UNAVAILABLE"
NOT_LEADER = "NOT_LEADER"
ERROR = "ERROR"
SUCCESS = "SUCCESS"
INCONSISTENCY = "INCONSISTENCY"

# How F's download future completes.
OK, NOT_AHEAD, DL_ERROR, EXC = "OK", "NOT_AHEAD", "ERROR", "EXC"


class Notify(NamedTuple):
    """InstallSnapshot notification: ``first`` is the first index in the leader's log."""

    term: int
    src: ModelValue
    dst: ModelValue
    first: int


class Append(NamedTuple):
    """AppendEntries of entries ``first..last`` after ``prev`` (heartbeat: first = -1)."""

    term: int
    src: ModelValue
    dst: ModelValue
    prev: int
    first: int
    last: int


class RequestVote(NamedTuple):
    """A candidate's vote request to F (its reply is not modelled: see above)."""

    term: int
    src: ModelValue
    dst: ModelValue


class InstallReply(NamedTuple):
    """F's reply to a notification (carries the term of the request it answers)."""

    term: int
    src: ModelValue
    dst: ModelValue
    result: str
    snapshotIndex: int


class AppendReply(NamedTuple):
    """F's reply to an append: ``next`` is F's state.getNextIndex()."""

    term: int
    src: ModelValue
    dst: ModelValue
    result: str
    next: int
    match: int
    reqFirst: int


Message = Notify | Append | RequestVote | InstallReply | AppendReply


class SnapshotState(NamedTuple):
    """The leaders' view of F, F's Ratis and SCM state, the network, the counters."""

    term: int
    leader: ModelValue
    logStart: Map[ModelValue, int]
    nextIndex: Map[ModelValue, int]
    matchIndex: Map[ModelValue, int]
    fTerm: int
    fLeader: ModelValue | None
    fNext: int
    fApplied: int
    fSnapshotIndex: int
    installInProgressIndex: int
    installedPending: int
    snapshotNull: bool
    download: str
    downloadLeader: ModelValue | None
    downloadIndex: int
    installingDBCheckpoint: int
    orphan: int
    net: frozenset[Message]
    elections: int
    purges: int
    dlFailures: int
    restarts: int
    drops: int
    writes: int


class ScmInstallSnapshotLeaderChange(Spec):
    """HDDS-16932: SCM follower stuck with installInProgressIndex set after a leader
    change during a successful checkpoint download."""

    constants = {
        "SCM": SCMS,
        "N": 4,
        "F_NEXT0": 1,
        "START_L1": 3,
        "START_L2": 0,
        "CK": 3,
        "MAX_ELECTIONS": 2,
        "MAX_PURGES": 1,
        "MAX_DL_FAILURES": 1,
        "MAX_RESTARTS": 0,
        "MAX_DROPS": 0,
        "MAX_WRITES": 0,
        "TIMING": "any",
    }
    # Elections, restarts (and purges, failures) are bounded by counters: when they
    # run out the model may come to rest, which is not a protocol deadlock.
    check_deadlock = False
    variants = (
        "bug",
        "fix_scm",
        "scm_leader_check_only",
        "scm_null_results_only",
        "fix",
        "fix_and_scm_guard",
        "mutant_new_term_hook",
        "mutant_notify_path_hook",
        "mutant_keep_download",
        "mutant_clear_index_only",
    )
    # `mcheck run ... --variant bug` tells the report's order; TIMING=any (a download
    # ending before the leader change, 6 actions too) is a gate row.
    stories = {
        "bug": Story(
            constants={"TIMING": "report"},
            about="leadership moves while F downloads L1's checkpoint, which then succeeds",
        )
    }
    lanes = "SCM"
    # Weak fairness of the protocol; elections, purges, restarts, drops and the
    # failure outcomes of the download are environment steps bounded by counters.
    fairness = {
        **dict.fromkeys(
            (
                "SendNotify",
                "SendAppend",
                "HandleNotify",
                "HandleAppend",
                "HandleRequestVote",
                "Apply",
                "HandleInstallReply",
                "HandleAppendReply",
                "DiscardStaleReply",
            ),
            "weak",
        ),
        "DownloadFinish": ("weak", lambda outcome: outcome in (OK, NOT_AHEAD)),
        "OrphanFinish": "weak",
    }
    owners = dict.fromkeys(
        (
            "fTerm",
            "fLeader",
            "fNext",
            "fApplied",
            "fSnapshotIndex",
            "installInProgressIndex",
            "installedPending",
            "snapshotNull",
            "download",
            "downloadLeader",
            "downloadIndex",
            "installingDBCheckpoint",
            "orphan",
        ),
        "F",
    )

    SCM: tuple[ModelValue, ...]
    N: int
    F_NEXT0: int
    START_L1: int
    START_L2: int
    CK: int
    MAX_ELECTIONS: int
    MAX_PURGES: int
    MAX_DL_FAILURES: int
    MAX_RESTARTS: int
    MAX_DROPS: int
    MAX_WRITES: int
    TIMING: str

    def init(self) -> list[SnapshotState]:
        """L1 leads at term 1 and already knows F's next index; F holds entry 0 only."""
        return [
            SnapshotState(
                term=1,
                leader=L1,
                logStart=Map({L1: self.START_L1, L2: self.START_L2}),
                nextIndex=Map({L1: self.F_NEXT0, L2: self.N}),
                matchIndex=Map({L1: self.F_NEXT0 - 1, L2: -1}),
                fTerm=1,
                fLeader=L1,
                fNext=self.F_NEXT0,
                fApplied=self.F_NEXT0 - 1,
                fSnapshotIndex=-1,
                installInProgressIndex=-1,
                installedPending=-1,
                snapshotNull=False,
                download=IDLE,
                downloadLeader=None,
                downloadIndex=-1,
                installingDBCheckpoint=-1,
                orphan=-1,
                net=frozenset(),
                elections=0,
                purges=0,
                dlFailures=0,
                restarts=0,
                drops=0,
                writes=0,
            )
        ]

    # -- helpers ------------------------------------------------------------------
    def validate(self) -> None:
        """TIMING names one of the two timings."""
        if self.TIMING not in ("any", "report"):
            raise ConfigError("TIMING must be any or report")

    def _log_end(self, s: SnapshotState) -> int:
        """The leaders' next index: N, plus the entries written since (MAX_WRITES)."""
        return self.N + s.writes

    def _checkpoint(self, s: SnapshotState) -> int:
        """The index of the checkpoint a leader serves now: CK, one more for each entry
        written since (a leader applies every write, and SCM's checkpoint is taken of
        its applied state when F asks for it)."""
        return self.CK + s.writes

    @staticmethod
    def _idle(s: SnapshotState, leader: ModelValue) -> bool:
        """No request of ``leader``'s appender is outstanding (it waits for replies);
        a vote request belongs to the election, not to the appender."""
        return not any(
            (m.src == leader or m.dst == leader) and not isinstance(m, RequestVote) for m in s.net
        )

    def _send(self, s: SnapshotState, m: Message, consumed: Message | None = None) -> Any:
        net = s.net - {consumed} if consumed is not None else s.net
        return net | {m}

    def _adopt(self, s: SnapshotState, m: Notify | Append) -> SnapshotState:
        """F recognises the sender as leader (ServerState.recognizeLeader)."""
        path = "notify" if isinstance(m, Notify) else "append"
        return self._set_leader(s, m.term, m.src, path)

    def _set_leader(
        self, s: SnapshotState, term: int, leader: ModelValue | None, path: str
    ) -> SnapshotState:
        """F moves to ``term`` and ``leader`` (ServerState.updateCurrentTerm and
        setLeader); the Ratis-side variants run their hook here."""
        if s.installInProgressIndex != -1:
            changed = leader != s.fLeader
            # Which Ratis-side variant runs its hook on this move (none in the others).
            v = self.variant
            if v in ("fix", "fix_and_scm_guard", "mutant_keep_download", "mutant_clear_index_only"):
                hook = changed
            elif v == "mutant_notify_path_hook":
                hook = changed and path == "notify"
            elif v == "mutant_new_term_hook":
                hook = term > s.fTerm and path != "vote"
            else:
                hook = False
            if hook and v == "mutant_clear_index_only":
                s = s._replace(installInProgressIndex=-1)  # and nothing else
            elif hook:
                keep = v == "mutant_keep_download"
                s = self._leader_change_hook(s, abandon_download=not keep)
        return s._replace(fTerm=term, fLeader=leader)

    @staticmethod
    def _reload(s: SnapshotState) -> SnapshotState:
        """Reload the state machine from the stored checkpoint (SCM reinitialize;
        ServerState.reloadStateMachine): the applied index becomes the checkpoint's,
        whatever F had applied; the log keeps the entries after it."""
        idx = s.installedPending
        return s._replace(
            fApplied=idx,
            fNext=max(s.fNext, idx + 1),
            fSnapshotIndex=idx,
            installedPending=-1,
            installInProgressIndex=-1,
            installingDBCheckpoint=-1,  # reinitialize() takes it and sets it to null
        )

    def _leader_change_hook(self, s: SnapshotState, abandon_download: bool) -> SnapshotState:
        """The ``fix`` variant: apply a stored install, drop a null result, abandon a
        running download, clear installInProgressIndex."""
        if s.installedPending >= 0:
            s = self._reload(s)
        s = s._replace(snapshotNull=False, installInProgressIndex=-1)
        if abandon_download:
            # Ratis drops the download, but SCM's supplier (supplyAsync) runs on and
            # still sets installingDBCheckpoint, unless SCM is told (fix_and_scm_guard;
            # the two hook-placement mutants are that fix with the hook moved, so the
            # checks show their own flaw).
            told = self.variant in (
                "fix_and_scm_guard",
                "mutant_new_term_hook",
                "mutant_notify_path_hook",
            )
            running = s.download == RUNNING and not told
            s = s._replace(
                download=IDLE,
                downloadLeader=None,
                downloadIndex=-1,
                orphan=s.downloadIndex if running else s.orphan,
            )
        return s

    # -- leader appender ------------------------------------------------------------
    @action(over=(lambda self: (L1, L2),))
    def SendNotify(self, s: SnapshotState, ldr: ModelValue) -> SnapshotState | None:
        """Leader l's appender: F's nextIndex is below l's log start, so notify F to
        install a snapshot (LogAppender.shouldInstallSnapshot)."""
        if ldr != s.leader or not self._idle(s, ldr) or s.nextIndex[ldr] >= s.logStart[ldr]:
            return None
        return s._replace(net=self._send(s, Notify(s.term, ldr, F, s.logStart[ldr])))

    @action(over=(lambda self: (L1, L2),))
    def SendAppend(self, s: SnapshotState, ldr: ModelValue) -> SnapshotState | None:
        """Leader l's appender sends entries from F's nextIndex, or a heartbeat."""
        if ldr != s.leader or not self._idle(s, ldr) or s.nextIndex[ldr] < s.logStart[ldr]:
            return None
        nxt = s.nextIndex[ldr]
        end = self._log_end(s)
        if nxt < end:
            m = Append(s.term, ldr, F, nxt - 1, nxt, end - 1)
        else:
            m = Append(s.term, ldr, F, nxt - 1, -1, -1)
        return s._replace(net=self._send(s, m))

    # -- follower F -----------------------------------------------------------------
    @action(
        over_state=lambda self, s: in_order(s.net, Notify),
        actor=lambda self, s, m: F,
    )
    def HandleNotify(self, s: SnapshotState, m: Notify) -> SnapshotState:
        """SnapshotInstallationHandler.notifyStateMachineToInstallSnapshot on F."""
        if m.term < s.fTerm:
            reply = InstallReply(m.term, F, m.src, NOT_LEADER, -1)
            return s._replace(net=self._send(s, reply, m))
        s = self._adopt(s, m)
        if s.installInProgressIndex == -1:
            if s.fSnapshotIndex >= 0 and s.fSnapshotIndex + 1 >= m.first:
                reply = InstallReply(m.term, F, m.src, ALREADY_INSTALLED, s.fSnapshotIndex)
                return s._replace(net=self._send(s, reply, m))
            # SCMStateMachine.notifyInstallSnapshotFromLeader: download from m.src
            # (one download at a time in the model: a new one replaces a running one).
            # Ratis then goes on in the same call to the checks below, as for a
            # notification that finds an install in progress: a null result or a
            # stored checkpoint left by an earlier download is acted on now.
            s = s._replace(
                installInProgressIndex=m.first,
                download=RUNNING,
                downloadLeader=m.src,
                downloadIndex=self._checkpoint(s),
            )
        elif s.installInProgressIndex > m.first:
            # Precondition inProgressIndex <= first fails: an exception, no change.
            reply = InstallReply(m.term, F, m.src, ERROR, -1)
            return s._replace(net=self._send(s, reply, m))
        if s.snapshotNull:
            reply = InstallReply(m.term, F, m.src, SNAPSHOT_UNAVAILABLE, -1)
            return s._replace(
                snapshotNull=False, installInProgressIndex=-1, net=self._send(s, reply, m)
            )
        if s.installedPending >= 0:
            reply = InstallReply(m.term, F, m.src, SNAPSHOT_INSTALLED, s.installedPending)
            return self._reload(s)._replace(net=self._send(s, reply, m))
        reply = InstallReply(m.term, F, m.src, IN_PROGRESS, -1)
        return s._replace(net=self._send(s, reply, m))

    @action(
        over_state=lambda self, s: in_order(s.net, Append),
        actor=lambda self, s, m: F,
    )
    def HandleAppend(self, s: SnapshotState, m: Append) -> SnapshotState:
        """RaftServerImpl.appendEntriesAsync on F: checkInconsistentAppendEntries first
        rejects everything while an install is in progress."""
        if m.term < s.fTerm:
            reply = AppendReply(m.term, F, m.src, NOT_LEADER, -1, -1, m.first)
            return s._replace(net=self._send(s, reply, m))
        s = self._adopt(s, m)
        if s.installInProgressIndex != -1:
            reply = AppendReply(m.term, F, m.src, INCONSISTENCY, s.fNext, -1, m.first)
            return s._replace(net=self._send(s, reply, m))
        if m.prev < s.fNext:
            heartbeat = m.first == -1
            f_next = s.fNext if heartbeat else max(s.fNext, m.last + 1)
            match = -1 if heartbeat else m.last
            reply = AppendReply(m.term, F, m.src, SUCCESS, f_next, match, m.first)
            return s._replace(fNext=f_next, net=self._send(s, reply, m))
        reply = AppendReply(m.term, F, m.src, INCONSISTENCY, min(s.fNext, m.prev), -1, m.first)
        return s._replace(net=self._send(s, reply, m))

    @action(
        over_state=lambda self, s: in_order(s.net, RequestVote),
        actor=lambda self, s, m: F,
    )
    def HandleRequestVote(self, s: SnapshotState, m: RequestVote) -> SnapshotState:
        """RaftServerImpl.requestVote on F: a higher term moves F to it with no leader
        (ServerState.updateCurrentTerm sets the leader to null)."""
        s = s._replace(net=s.net - {m})
        if m.term <= s.fTerm:
            return s
        return self._set_leader(s, m.term, None, "vote")

    @action(over=(lambda self: (OK, NOT_AHEAD, DL_ERROR, EXC),), actor=lambda self, s, o: F)
    def DownloadFinish(self, s: SnapshotState, outcome: str) -> SnapshotState | None:
        """F's download task completes the future: OK (the checkpoint TermIndex),
        NOT_AHEAD or ERROR (null results of verifyCheckpointFromLeader), or EXC (the
        future fails, as HDDS-16899's patch does for a failed download)."""
        if s.download != RUNNING:
            return None
        if self.TIMING == "report" and s.fTerm < s.term:
            return None  # the held download ends only after F hears of the new term
        failures = s.dlFailures
        ck = s.downloadIndex
        if outcome == OK and not s.fApplied < ck:
            return None
        if outcome == NOT_AHEAD and s.fApplied < ck:
            return None
        if outcome in (DL_ERROR, EXC):
            if failures >= self.MAX_DL_FAILURES:
                return None
            failures += 1
        s = s._replace(download=IDLE, dlFailures=failures, downloadIndex=-1)
        leader_moved = s.fLeader != s.downloadLeader
        if self.variant in ("fix_scm", "scm_leader_check_only") and outcome == OK and leader_moved:
            # The patch, first half: the download's supplier checks the leader where
            # it has a checkpoint TermIndex to return, and fails the future instead.
            outcome = EXC
        if self.variant in ("fix_scm", "scm_null_results_only") and outcome != OK:
            outcome = EXC  # second half: the null returns fail the future too
        if outcome == OK and s.installingDBCheckpoint != -1:
            # SCMStateMachine.setInstallingSnapshotData: Preconditions.checkArgument(
            # installingDBCheckpoint == null) throws inside the supplier, so the
            # future completes exceptionally; the field stays as it was.
            outcome = EXC
        if outcome == OK:
            return s._replace(installedPending=ck, installingDBCheckpoint=ck)
        if outcome == EXC:
            return s._replace(installInProgressIndex=-1)
        return s._replace(snapshotNull=True)

    @action(actor=lambda self, s: F)
    def OrphanFinish(self, s: SnapshotState) -> SnapshotState | None:
        """A download Ratis abandoned ends in SCM: its supplier verifies the checkpoint
        and, if it is ahead of F and the field is free, sets installingDBCheckpoint,
        which only reinitialize() clears; Ratis holds no result to install it."""
        if s.orphan < 0:
            return None
        if s.fApplied < s.orphan and s.installingDBCheckpoint == -1:
            return s._replace(orphan=-1, installingDBCheckpoint=s.orphan)
        return s._replace(orphan=-1)

    @action(actor=lambda self, s: F)
    def Apply(self, s: SnapshotState) -> SnapshotState | None:
        """F's StateMachineUpdater applies the next entry it holds."""
        if s.fApplied >= s.fNext - 1:
            return None
        return s._replace(fApplied=s.fApplied + 1)

    # -- leader reply handlers ------------------------------------------------------
    @action(
        over_state=lambda self, s: in_order(s.net, InstallReply),
        actor=lambda self, s, r: r.dst,
    )
    def HandleInstallReply(self, s: SnapshotState, r: InstallReply) -> SnapshotState | None:
        """GrpcLogAppender.InstallSnapshotResponseHandler on the current leader."""
        if r.dst != s.leader or r.term != s.term:
            return None
        net = s.net - {r}
        if r.result in (SNAPSHOT_INSTALLED, ALREADY_INSTALLED):
            # FollowerInfo.setSnapshotIndex: matchIndex = i, nextIndex = i + 1.
            return s._replace(
                matchIndex=put(s.matchIndex, r.dst, r.snapshotIndex),
                nextIndex=put(s.nextIndex, r.dst, r.snapshotIndex + 1),
                net=net,
            )
        return s._replace(net=net)

    @action(
        over_state=lambda self, s: in_order(s.net, AppendReply),
        actor=lambda self, s, r: r.dst,
    )
    def HandleAppendReply(self, s: SnapshotState, r: AppendReply) -> SnapshotState | None:
        """GrpcLogAppender.AppendLogResponseHandler on the current leader."""
        if r.dst != s.leader or r.term != s.term:
            return None
        ldr = r.dst
        net = s.net - {r}
        if r.result == SUCCESS:
            return s._replace(
                matchIndex=put(s.matchIndex, ldr, max(s.matchIndex[ldr], r.match)),
                nextIndex=put(s.nextIndex, ldr, max(s.nextIndex[ldr], r.match + 1)),
                net=net,
            )
        if r.result == INCONSISTENCY:
            nxt = next_index_for_inconsistency(r.reqFirst, r.next, s.matchIndex[ldr])
            return s._replace(nextIndex=put(s.nextIndex, ldr, nxt), net=net)
        return s._replace(net=net)

    @action(
        over_state=lambda self, s: in_order(s.net, InstallReply | AppendReply),
    )
    def DiscardStaleReply(self, s: SnapshotState, r: Message) -> SnapshotState | None:
        """A reply to a former leader, or of an older term, is ignored."""
        if r.dst == s.leader and r.term == s.term:
            return None
        return s._replace(net=s.net - {r})

    # -- environment ----------------------------------------------------------------
    @action(over=(lambda self: (L1, L2),))
    def ElectLeader(self, s: SnapshotState, ldr: ModelValue) -> SnapshotState | None:
        """Leadership moves to ldr (admin transfer, or an election after a GC pause or a
        partition); ldr starts with nextIndex = its log's next index, matchIndex = -1."""
        if ldr == s.leader or s.elections >= self.MAX_ELECTIONS:
            return None
        if self.TIMING == "report" and (s.installedPending >= 0 or s.snapshotNull):
            return None  # the report's timing: leadership moves during the download
        return s._replace(
            term=s.term + 1,
            leader=ldr,
            nextIndex=put(s.nextIndex, ldr, self._log_end(s)),
            matchIndex=put(s.matchIndex, ldr, -1),
            elections=s.elections + 1,
            net=s.net | {RequestVote(s.term + 1, ldr, F)},
        )

    @action(over=(lambda self: (L1, L2), lambda self: range(1, self.CK + self.MAX_WRITES + 1)))
    def Purge(self, s: SnapshotState, ldr: ModelValue, k: int) -> SnapshotState | None:
        """ldr purges its log up to (not including) index k, at most up to its
        checkpoint (CK, plus the entries written since)."""
        if s.purges >= self.MAX_PURGES or not s.logStart[ldr] < k <= self._checkpoint(s):
            return None
        return s._replace(logStart=put(s.logStart, ldr, k), purges=s.purges + 1)

    @action(over=(lambda self: (L1, L2),))
    def Write(self, s: SnapshotState, ldr: ModelValue) -> SnapshotState | None:
        """The leader commits a new entry (a client write; L1 and L2 are a quorum, so
        both hold it; bounded by MAX_WRITES)."""
        if ldr != s.leader or s.writes >= self.MAX_WRITES:
            return None
        return s._replace(writes=s.writes + 1)

    @action(actor=lambda self, s: F)
    def RestartF(self, s: SnapshotState) -> SnapshotState | None:
        """F restarts: the in-memory install state is gone; log and applied index stay."""
        if s.restarts >= self.MAX_RESTARTS:
            return None
        return s._replace(
            installInProgressIndex=-1,
            installedPending=-1,
            snapshotNull=False,
            download=IDLE,
            downloadLeader=None,
            downloadIndex=-1,
            installingDBCheckpoint=-1,
            orphan=-1,
            restarts=s.restarts + 1,
        )

    @action(over_state=lambda self, s: in_order(s.net))
    def DropMessage(self, s: SnapshotState, m: Message) -> SnapshotState | None:
        """The network loses a message."""
        if s.drops >= self.MAX_DROPS:
            return None
        return s._replace(net=s.net - {m}, drops=s.drops + 1)

    # -- properties -----------------------------------------------------------------
    @eventually
    def FollowerEventuallyCatchesUp(self, s: SnapshotState) -> bool:
        """<>(installInProgressIndex = -1 /\\ fNext >= N): F ends up with no install in
        progress and every committed entry."""
        return s.installInProgressIndex == -1 and s.fNext >= self._log_end(s)

    @invariant
    def NoStuckInstallInProgress(self, s: SnapshotState) -> bool:
        """F's install is finished on its side, it follows the real leader, and that
        leader can never send a notification that clears installInProgressIndex."""
        return no_stuck_install_in_progress(
            s.installInProgressIndex,
            s.installedPending,
            s.snapshotNull,
            s.fLeader,
            s.fTerm,
            s.leader,
            s.term,
            s.nextIndex,
            s.logStart,
            s.fNext,
        )

    @action_property
    def AppliedIndexNeverMovesBackwards(self, before: SnapshotState, after: SnapshotState) -> bool:
        """[][fApplied' >= fApplied]_vars: F's state machine never goes back to an
        older state (what a stale checkpoint reloaded over newer applied entries does:
        SCM's DB and its applied index move backwards and entries are applied again)."""
        return after.fApplied >= before.fApplied

    @invariant
    def InstallingCheckpointHasItsInstall(self, s: SnapshotState) -> bool:
        """SCM's installingDBCheckpoint is set only for the result Ratis holds and will
        install (which calls reinitialize and clears it): one set with no such result
        makes every later install's setInstallingSnapshotData fail its precondition."""
        return s.installingDBCheckpoint == -1 or s.installingDBCheckpoint == s.installedPending

    @invariant
    def InstallStateConsistent(self, s: SnapshotState) -> bool:
        """A running download, a stored checkpoint or a null result belongs to an
        install in progress: none outlives installInProgressIndex being cleared."""
        busy = s.download == RUNNING or s.installedPending >= 0 or s.snapshotNull
        return not busy or s.installInProgressIndex != -1
