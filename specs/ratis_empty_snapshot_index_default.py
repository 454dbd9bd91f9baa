"""RATIS-1369: with no snapshot, Ratis reported snapshot index 0 instead of -1; an
empty new follower answers ALREADY_INSTALLED and is then stranded forever.

Mechanism (Ratis before apache/ratis commit 00f0c8586, PR #473).  Ratis indices start
at 0, so "no snapshot" must be -1.  ``ServerState.getSnapshotIndex()`` returned 0.  A
leader whose log was purged past index 0 (first available index 1) notifies a new,
empty follower (a bootstrapping SCM) to install a snapshot.  The follower checks
``snapshotIndex + 1 >= firstAvailable``: ``0 + 1 >= 1``, so it skips the download and
answers ALREADY_INSTALLED(0).  ``FollowerInfo.setSnapshotIndex(0)`` makes the leader's
matchIndex 0 and nextIndex 1; it never notifies again, cannot send entry 0 (purged),
and never goes below matchIndex + 1.  The follower, whose log is empty, rejects every
append from index 1 (``validateEntries``), and the leader retries forever.

Model (the brief ``ratis_empty_snapshot_index_default``): leader L (alone until the
new peer joins) and follower F, one term, Ratis indices (0-based, -1 = none); one
request in flight at a time; the checkpoint download is one atomic step yielding the
leader's snapshot index ``SNAP_L``.  Variants: ``bug`` (the default snapshot index of
"no snapshot" is 0) and ``fix`` (-1).

The default has three readers in Ratis: the notification handler, ``getNextIndex()``
(every INCONSISTENCY reply's nextIndex) and the append path's checks.  A patch to the
first alone passes every check where F is new (``ELECTED=FALSE``, the report's setting:
the leader starts F's nextIndex at 0 and notifies first).  ``ELECTED=TRUE`` is the other
way an empty F meets a leader: F was a member when L won its election, so L starts F's
nextIndex at its own log end (``LeaderStateImpl``: every follower at ``nextIndex =
leader's next index``) and F's first answer is an INCONSISTENCY reply computed by
``getNextIndex()``.  Two such wrong patches are kept as variants:
``mutant_notify_only`` (the handler treats "no snapshot" as -1, ServerState still
answers 0) and ``mutant_notify_compare`` (the handler's check becomes ``snapshotIndex >=
firstAvailable``, the default stays 0).  Both pass at the defaults; with ``ELECTED=TRUE``
F tells the leader to send from index 1 while it lacks entry 0 (NextIndexReportSound).

Abstractions and soundness: no terms, elections or configuration entries (the
bootstrapping peer's configuration change does not influence the install decision in
this version); F's log is a prefix of L's (containment by index); the leader-side
matchIndex starts at -1 as in Ratis since RATIS-1767 (the 2021 value 0 would break
MatchIndexSound in the initial state of both variants for a reason unrelated to this
bug); pipelining and the heartbeat after each notification only add retries.

Results (engine, pinned in ``tests/test_seed_ratis.py``): ``bug`` violates
NoFalseAlreadyInstalled in 2 actions and MatchIndexSound and FollowerNotStranded in 3,
as the brief says; ``fix`` holds.  ``ELECTED=TRUE``: ``bug`` and both mutants violate
NextIndexReportSound in 2 actions; ``fix`` holds.
"""

from __future__ import annotations

from typing import NamedTuple

from checker import Spec, Story, action, eventually, in_order, invariant, named_values
from checker.check.validate import LogMapping, On
from checker.values import ModelValue
from mcheck_shipped.invariants.ratis import match_index_sound

SERVERS = named_values(["L", "F"], "Server")
L, F = SERVERS
IDLE, RUNNING = "Idle", "Running"
ALREADY_INSTALLED, IN_PROGRESS = "ALREADY_INSTALLED", "IN_PROGRESS"
SUCCESS, INCONSISTENCY, ERROR = "SUCCESS", "INCONSISTENCY", "ERROR"


class Notify(NamedTuple):
    """Install-snapshot notification with the leader's first available index."""

    src: ModelValue
    dst: ModelValue
    first: int


class AppendReq(NamedTuple):
    """AppendEntries: entries ``first..last`` (heartbeat: first = -1) after ``prev``
    (None: the request carries no previous entry)."""

    src: ModelValue
    dst: ModelValue
    prev: int | None
    first: int
    last: int


class InstallReply(NamedTuple):
    """F's answer to a notification."""

    src: ModelValue
    dst: ModelValue
    result: str
    snapshotIndex: int


class AppendReply(NamedTuple):
    """F's answer to an append; ``reqPrev`` is the request's previous index."""

    src: ModelValue
    dst: ModelValue
    result: str
    next: int
    match: int
    reqPrev: int | None


Message = Notify | AppendReq | InstallReply | AppendReply


class EmptySnapshotState(NamedTuple):
    """The leader's FollowerInfo for F, F's log and snapshot state, the network."""

    nextIndex: int
    matchIndex: int
    fiSnapshotIndex: int
    fLogStart: int
    fLogNext: int
    fInstalled: int
    fRaftLogSnapshot: int
    installInProgress: int | None
    download: str
    net: frozenset[Message]
    alreadyInstalledSent: frozenset[int]


class RatisEmptySnapshotIndexDefault(Spec):
    """RATIS-1369: the snapshot index of "no snapshot" (0 in the bug, -1 fixed)."""

    constants = {"Server": SERVERS, "LAST": 2, "START": 1, "SNAP_L": 2, "ELECTED": False}
    variants = ("bug", "fix", "mutant_notify_only", "mutant_notify_compare")
    # Over every property the shortest violation is the false ALREADY_INSTALLED alone
    # (2 actions); the report goes on to the appends F rejects forever.
    stories = {
        "bug": Story(
            check=("FollowerEventuallyCatchesUp",),
            about="an empty new follower answers ALREADY_INSTALLED, then rejects every "
            "append for ever",
        )
    }
    lanes = "Server"
    # Weak fairness of every action (there are no environment actions).
    fairness = dict.fromkeys(
        (
            "SendNotify",
            "SendAppend",
            "HandleInstallReply",
            "HandleAppendReply",
            "HandleNotify",
            "DownloadDone",
            "HandleAppend",
        ),
        "weak",
    )
    owners = {
        **dict.fromkeys(("nextIndex", "matchIndex", "fiSnapshotIndex"), "L"),
        **dict.fromkeys(
            (
                "fLogStart",
                "fLogNext",
                "fInstalled",
                "fRaftLogSnapshot",
                "installInProgress",
                "download",
                "alreadyInstalledSent",
            ),
            "F",
        ),
    }

    Server: tuple[ModelValue, ...]
    LAST: int
    START: int
    SNAP_L: int
    ELECTED: bool

    # How F's and L's Ratis log lines (mcheck validate --format ratis-log) map to the
    # model: receiving the notification is HandleNotify for L's first available index;
    # "snapshotIndex is" and the reply are what F computed and answered in that step;
    # setSnapshotIndex is HandleInstallReply.  The leader's sends and the append
    # exchange are not logged at INFO: up to two of them happen silently.
    log_mapping = LogMapping(
        events={
            "receiveInstallSnapshotNotification": On(
                actions=("HandleNotify",), where=lambda ev, params: params[0].first == ev["first"]
            ),
            "snapshotIndex": On(
                state={"snapshotIndex": lambda spec, s: spec.reported_snapshot_index(s)}
            ),
            "replyInstallSnapshot": On(state={"result": lambda spec, s: spec.install_reply(s)}),
            "matchIndexSet": On(actions=("HandleInstallReply",), state={"new": "matchIndex"}),
            "nextIndexSet": On(state={"new": "nextIndex"}),
        },
        silent=("SendNotify", "SendAppend", "HandleAppend", "HandleAppendReply"),
        max_silent=2,
    )

    def init(self) -> list[EmptySnapshotState]:
        """L has entries START..LAST; follower F is empty (no snapshot).  F is a new peer
        (nextIndex 0), or with ELECTED a member when L was elected (nextIndex LAST + 1)."""
        return [
            EmptySnapshotState(
                nextIndex=self.LAST + 1 if self.ELECTED else 0,
                matchIndex=-1,
                fiSnapshotIndex=0,
                fLogStart=0,
                fLogNext=0,
                fInstalled=-1,
                fRaftLogSnapshot=-1,
                installInProgress=None,
                download=IDLE,
                net=frozenset(),
                alreadyInstalledSent=frozenset(),
            )
        ]

    # -- ServerState on F ---------------------------------------------------------
    def snap_idx(self, s: EmptySnapshotState) -> int:
        """ServerState.getSnapshotIndex(): the default for "none" is the bug (the
        mutants leave it too)."""
        none = -1 if self.variant == "fix" else 0
        return max(none, s.fInstalled)

    def notify_index(self, s: EmptySnapshotState) -> int:
        """The snapshot index the notification handler reads: getSnapshotIndex(), or
        in ``mutant_notify_only`` its own "none is -1"."""
        if self.variant == "mutant_notify_only":
            return max(-1, s.fInstalled)
        return self.snap_idx(s)

    def already_installed(self, s: EmptySnapshotState, first: int) -> bool:
        """The handler's test that F's snapshot covers the leader's first available
        index (``mutant_notify_compare`` drops the + 1 instead of fixing the default)."""
        idx = self.notify_index(s)
        if self.variant == "mutant_notify_compare":
            return idx >= first
        return idx + 1 >= first

    def reported_snapshot_index(self, s: EmptySnapshotState) -> int:
        """What F logs as "StateMachine snapshotIndex is": its snapshot index."""
        return self.notify_index(s)

    @staticmethod
    def install_reply(s: EmptySnapshotState) -> str | None:
        """The result of F's answer in flight to a notification (None: none)."""
        got = [m.result for m in s.net if isinstance(m, InstallReply)]
        return got[0] if len(got) == 1 else None

    def next_idx(self, s: EmptySnapshotState) -> int:
        """ServerState.getNextIndex() = max(log next index, snapshot index + 1)."""
        return max(s.fLogNext, self.snap_idx(s) + 1)

    @staticmethod
    def covered(s: EmptySnapshotState) -> int:
        """The highest index whose state F really holds."""
        return max(s.fInstalled, s.fLogNext - 1)

    def _previous(self, nxt: int) -> int | None:
        """LogAppenderBase.getPrevious: the entry before ``nxt`` if L has it (log or
        snapshot), else none."""
        if nxt == 0:
            return None
        if self.START <= nxt - 1 <= self.LAST or nxt - 1 == self.SNAP_L:
            return nxt - 1
        return None

    # -- leader L -------------------------------------------------------------------
    @action(actor=lambda self, s: L)
    def SendNotify(self, s: EmptySnapshotState) -> EmptySnapshotState | None:
        """shouldNotifyToInstallSnapshot: F's nextIndex is below L's log start."""
        if s.net or not (s.nextIndex < self.START and s.nextIndex <= self.LAST):
            return None
        return s._replace(net=s.net | {Notify(L, F, self.START)})

    @action(actor=lambda self, s: L)
    def SendAppend(self, s: EmptySnapshotState) -> EmptySnapshotState | None:
        """Entries from nextIndex (without a previous entry only when nextIndex is
        fiSnapshotIndex + 1, as assertProtos allows), or a heartbeat."""
        if s.net or s.nextIndex < self.START:
            return None
        prev = self._previous(s.nextIndex)
        if s.nextIndex <= self.LAST and (prev is not None or s.nextIndex == s.fiSnapshotIndex + 1):
            req = AppendReq(L, F, prev, s.nextIndex, self.LAST)
            return s._replace(net=s.net | {req}, nextIndex=self.LAST + 1)
        if s.nextIndex > self.LAST:
            return s._replace(net=s.net | {AppendReq(L, F, prev, -1, -1)})
        raise AssertionError("assertProtos: entries without a previous entry")

    @action(
        over_state=lambda self, s: in_order(s.net, InstallReply),
        actor=lambda self, s, r: L,
    )
    def HandleInstallReply(self, s: EmptySnapshotState, r: InstallReply) -> EmptySnapshotState:
        """InstallSnapshotResponseHandler: ALREADY_INSTALLED(i) ->
        FollowerInfo.setSnapshotIndex(i), unconditionally."""
        s = s._replace(net=s.net - {r})
        if r.result == ALREADY_INSTALLED:
            i = r.snapshotIndex
            return s._replace(fiSnapshotIndex=i, matchIndex=i, nextIndex=i + 1)
        return s

    @action(
        over_state=lambda self, s: in_order(s.net, AppendReply),
        actor=lambda self, s, r: L,
    )
    def HandleAppendReply(self, s: EmptySnapshotState, r: AppendReply) -> EmptySnapshotState:
        """AppendLogResponseHandler: SUCCESS raises matchIndex; INCONSISTENCY takes the
        follower's nextIndex; an RPC error resets the client (resetClient)."""
        s = s._replace(net=s.net - {r})
        if r.result == SUCCESS:
            return s._replace(matchIndex=max(s.matchIndex, r.match))
        if r.result == INCONSISTENCY:
            return s._replace(nextIndex=r.next) if r.next >= 0 else s
        if s.nextIndex > 0:
            base = r.reqPrev if r.reqPrev is not None else s.matchIndex
            return s._replace(nextIndex=min(s.nextIndex - 1, 1 + base))
        return s

    # -- follower F -----------------------------------------------------------------
    @action(
        over_state=lambda self, s: in_order(s.net, Notify),
        actor=lambda self, s, m: F,
    )
    def HandleNotify(self, s: EmptySnapshotState, m: Notify) -> EmptySnapshotState:
        """RaftServerImpl.notifyStateMachineToInstallSnapshot: skip the download when
        the snapshot index already reaches the leader's first available index."""
        net = s.net - {m}
        if s.installInProgress is None:
            idx = self.notify_index(s)
            if self.already_installed(s, m.first):
                reply = InstallReply(F, L, ALREADY_INSTALLED, idx)
                return s._replace(
                    net=net | {reply}, alreadyInstalledSent=s.alreadyInstalledSent | {idx}
                )
            return s._replace(
                installInProgress=m.first,
                download=RUNNING,
                net=net | {InstallReply(F, L, IN_PROGRESS, -1)},
            )
        return s._replace(net=net | {InstallReply(F, L, IN_PROGRESS, -1)})

    @action(actor=lambda self, s: F)
    def DownloadDone(self, s: EmptySnapshotState) -> EmptySnapshotState | None:
        """F's state machine installs L's checkpoint: snapshot SNAP_L, log after it."""
        if s.download != RUNNING:
            return None
        return s._replace(
            fInstalled=self.SNAP_L,
            fRaftLogSnapshot=self.SNAP_L,
            fLogStart=self.SNAP_L + 1,
            fLogNext=self.SNAP_L + 1,
            installInProgress=None,
            download=IDLE,
        )

    @action(
        over_state=lambda self, s: in_order(s.net, AppendReq),
        actor=lambda self, s, m: F,
    )
    def HandleAppend(self, s: EmptySnapshotState, m: AppendReq) -> EmptySnapshotState:
        """validateEntries, checkInconsistentAppendEntries, then the log append."""
        net = s.net - {m}

        def reply(result: str, nxt: int = -1, match: int = -1) -> EmptySnapshotState:
            return s._replace(net=net | {AppendReply(F, L, result, nxt, match, m.prev)})

        entries = m.first != -1
        if entries and (
            (m.prev is None and m.first != 0) or (m.prev is not None and m.prev != m.first - 1)
        ):
            return reply(ERROR)  # validateEntries throws
        if s.installInProgress is not None:
            return reply(INCONSISTENCY, self.next_idx(s))
        snap = self.snap_idx(s)
        if entries and snap > 0 and snap >= m.first:
            return reply(INCONSISTENCY, snap + 1)
        if m.prev is not None and not (
            m.prev == s.fInstalled or s.fLogStart <= m.prev < s.fLogNext
        ):
            return reply(INCONSISTENCY, min(self.next_idx(s), m.prev))
        if not entries:
            return reply(SUCCESS, s.fLogNext, -1)
        empty = s.fLogNext == s.fLogStart
        if (empty and m.first != s.fRaftLogSnapshot + 1) or (not empty and m.first > s.fLogNext):
            return reply(ERROR)  # RaftLogBase.validateLogEntry throws
        s = s._replace(fLogNext=max(s.fLogNext, self.LAST + 1))
        return s._replace(net=net | {AppendReply(F, L, SUCCESS, -1, self.LAST, m.prev)})

    # -- properties -----------------------------------------------------------------
    @eventually
    def FollowerEventuallyCatchesUp(self, s: EmptySnapshotState) -> bool:
        """<>(Covered(F) >= LAST): F eventually holds the leader's whole log."""
        return self.covered(s) >= self.LAST

    @invariant
    def NoFalseAlreadyInstalled(self, s: EmptySnapshotState) -> bool:
        """F never answers ALREADY_INSTALLED with a snapshot it does not hold."""
        return all(i <= self.covered(s) for i in s.alreadyInstalledSent)

    @invariant
    def NextIndexReportSound(self, s: EmptySnapshotState) -> bool:
        """An INCONSISTENCY reply never asks the leader to send from beyond what F
        holds: its nextIndex is at most Covered(F) + 1."""
        return all(
            m.next <= self.covered(s) + 1
            for m in s.net
            if isinstance(m, AppendReply) and m.result == INCONSISTENCY
        )

    @invariant
    def MatchIndexSound(self, s: EmptySnapshotState) -> bool:
        """The leader's matchIndex for F never exceeds what F really holds."""
        return match_index_sound(s.matchIndex, self.covered(s))

    @invariant
    def FollowerNotStranded(self, s: EmptySnapshotState) -> bool:
        """Not: the leader will not notify, F cannot accept anything from nextIndex,
        and the back-off floor matchIndex + 1 keeps the leader from going lower."""
        return not (
            s.nextIndex >= self.START
            and self.covered(s) < s.nextIndex - 1
            and s.matchIndex >= s.nextIndex - 1
        )
