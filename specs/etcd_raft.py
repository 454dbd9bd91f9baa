"""etcd/raft as Specula's case study models it (etcd-raft/scenarios/snapshot).

Ported from ``etcdraft.tla`` and ``MCetcdraft.tla`` (Specula case studies), written
for mcheck: elections, log replication with the progress states and inflights,
commit, the Ready step (persist, then send what is pending), step-downs and
heartbeats, restarts from durableState, message drops and duplicates, log compaction
(MCCompactLog), snapshots (SendSnapshot, SendSnapshotWithCompaction,
ManualSendSnapshot, HandleSnapshotRequest's stale / fast-forward / restore cases),
ReportUnreachable, and configuration changes with joint consensus (ChangeConf,
ApplySimpleConfChange, ProposeLeaveJoint, auto-leave) and network partitions
(MCNextPartition: CreatePartition into two groups, HealPartition; ReceiveDirect only
between servers that can communicate), with the MC model's counters.

The MC model's own Next has actions with no counter (ReplicateImplicitEntry,
AppendEntriesToSelf), so its state space is unbounded and Specula runs it in
simulation; ``MaxLogLength`` (ours) bounds every log, as the CONSTRAINT of our
wrapper ``bench/etcd/MCetcdraftBounded.tla`` does for TLC.  MCetcdraft's Next also
leaves out etcdraft.tla's ApplyEntries, so ``applied`` never passes the bootstrap
entries there; ``ApplyCommitted`` (ours, off by default) puts it back, which the
known bugs need.  ReconfigurationLimit only bounds AddNewServer/DeleteServer/
AddLearner, which MCetcdraft's Next does not contain: it has no effect, as in TLC.
Distinct states and depth equal TLC's on every configuration tried
(docs/specs/etcd-raft.md).

Properties: every INVARIANT of MCetcdraft.cfg but SnapshotResponseTermValidInv
(etcdraft.tla declares SnapshotResponse and never sends one; the port has no such
message), and its six PROPERTIES, action properties ``[][A]_mc_vars`` whose
``~\\E i: Restart(i)`` (or BecomeLeader) asks whether the step is etcdraft.tla's
action, its MC counter aside.  The definitions are etcdraft.tla's, in its names,
including those it states twice (InflightsAboveMatchInv is InflightsMatchIndexInv).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any, ClassVar, NamedTuple

from immutables import Map

from checker import (
    ConfigError,
    Spec,
    Story,
    action,
    action_property,
    in_order,
    invariant,
    model_values,
)
from checker.values import ModelValue, put
from checker.values.strict import strict_equal

FOLLOWER, CANDIDATE, LEADER = "Follower", "Candidate", "Leader"
PROBE, REPLICATE, SNAPSHOT = "StateProbe", "StateReplicate", "StateSnapshot"
VALUE_ENTRY, CONFIG_ENTRY = "ValueEntry", "ConfigEntry"

ServerId = ModelValue


class ValueVal(NamedTuple):
    """``[val |-> v]``: a client value (0 for an implicit entry)."""

    val: Any


class ConfVal(NamedTuple):
    """``[newconf |-> ..., learners |-> ...]``: a simple configuration entry."""

    newconf: frozenset[ServerId]
    learners: frozenset[ServerId]


class ChangeVal(NamedTuple):
    """ChangeConf's entry (a ConfChangeV2): the new voters and learners, whether it
    enters a joint configuration, and the voters it leaves (``oldconf``)."""

    newconf: frozenset[ServerId]
    learners: frozenset[ServerId]
    enterJoint: bool
    oldconf: frozenset[ServerId]


class LeaveVal(NamedTuple):
    """``[leaveJoint |-> TRUE, newconf, learners]``: the entry that leaves a joint
    configuration (auto-leave or ProposeLeaveJoint)."""

    leaveJoint: bool
    newconf: frozenset[ServerId]
    learners: frozenset[ServerId]


class Entry(NamedTuple):
    """A log entry."""

    term: int
    type: str
    value: Any


class Log(NamedTuple):
    """``[offset, entries, snapshotIndex, snapshotTerm]``: the offset-based log."""

    offset: int
    entries: tuple[Entry, ...]
    snapshotIndex: int
    snapshotTerm: int


class Config(NamedTuple):
    """``[jointConfig |-> <<voters, outgoing>>, learners, autoLeave]``."""

    jointConfig: tuple[frozenset[ServerId], frozenset[ServerId]]
    learners: frozenset[ServerId]
    autoLeave: bool


class Durable(NamedTuple):
    """What a server has persisted (``durableState``)."""

    currentTerm: int
    votedFor: ServerId | None
    log: int
    entries: tuple[Entry, ...]
    snapshotIndex: int
    snapshotTerm: int
    snapshotHistory: tuple[Entry, ...]
    commitIndex: int
    config: Config


class RVReq(NamedTuple):
    """RequestVoteRequest."""

    mterm: int
    mlastLogTerm: int
    mlastLogIndex: int
    msource: ServerId
    mdest: ServerId


class RVResp(NamedTuple):
    """RequestVoteResponse."""

    mterm: int
    mvoteGranted: bool
    msource: ServerId
    mdest: ServerId


class AEReq(NamedTuple):
    """AppendEntriesRequest (``msubtype`` "app" or "heartbeat")."""

    msubtype: str
    mterm: int
    mprevLogIndex: int
    mprevLogTerm: int
    mentries: tuple[Entry, ...]
    mcommitIndex: int
    msource: ServerId
    mdest: ServerId


class AEResp(NamedTuple):
    """AppendEntriesResponse."""

    msubtype: str
    mterm: int
    msuccess: bool
    mmatchIndex: int
    mrejectHint: int
    mlogTerm: int
    msource: ServerId
    mdest: ServerId


class ConfState(NamedTuple):
    """``ComputeConfStateFromHistory``'s record: raftpb.ConfState in a snapshot."""

    voters: frozenset[ServerId]
    learners: frozenset[ServerId]
    outgoing: frozenset[ServerId]
    autoLeave: bool


class SnapReq(NamedTuple):
    """SnapshotRequest (MsgSnap): the history it covers and its ConfState."""

    mterm: int
    msnapshotIndex: int
    msnapshotTerm: int
    mhistory: tuple[Entry, ...]
    mconfState: ConfState
    msource: ServerId
    mdest: ServerId


Message = RVReq | RVResp | AEReq | AEResp | SnapReq
Bag = Map[Message, int]


class Counters(NamedTuple):
    """MCetcdraft's ``constraintCounters``."""

    restart: int = 0
    drop: int = 0
    duplicate: int = 0
    stepDown: int = 0
    heartbeat: int = 0
    snapshot: int = 0
    compact: int = 0
    confChange: int = 0
    reportUnreachable: int = 0
    timeout: int = 0
    request: int = 0
    partition: int = 0


class EtcdState(NamedTuple):
    """etcdraft.tla's variables (msgSeqCounter stays 0 here: MsgNoReorder is FALSE)
    and the MC model's counters."""

    messages: Bag
    pendingMessages: Bag
    currentTerm: Map[ServerId, int]
    state: Map[ServerId, str]
    votedFor: Map[ServerId, ServerId | None]
    log: Map[ServerId, Log]
    historyLog: Map[ServerId, tuple[Entry, ...]]
    commitIndex: Map[ServerId, int]
    applied: Map[ServerId, int]
    votesResponded: Map[ServerId, frozenset[ServerId]]
    votesGranted: Map[ServerId, frozenset[ServerId]]
    matchIndex: Map[ServerId, Map[ServerId, int]]
    pendingConfChangeIndex: Map[ServerId, int]
    config: Map[ServerId, Config]
    reconfigCount: int
    appliedConfigIndex: Map[ServerId, int]
    durableState: Map[ServerId, Durable]
    progressState: Map[ServerId, Map[ServerId, str]]
    pendingSnapshot: Map[ServerId, Map[ServerId, int]]
    nextIndex: Map[ServerId, Map[ServerId, int]]
    msgAppFlowPaused: Map[ServerId, Map[ServerId, bool]]
    inflights: Map[ServerId, Map[ServerId, frozenset[int]]]
    #: The partition each server is in (1..MaxPartitions), 0 for none.
    partitions: Map[ServerId, int]
    constraintCounters: Counters


def add(bag: Bag, m: Message) -> Bag:
    """``WithMessage``."""
    return bag.set(m, bag.get(m, 0) + 1)


def remove(bag: Bag, m: Message) -> Bag:
    """``WithoutMessage`` (a bag minus one copy; gone at 0)."""
    n = bag.get(m, 0)
    return bag.delete(m) if n <= 1 else bag.set(m, n - 1)


def last_index(lg: Log) -> int:
    """``LastIndex``."""
    return lg.offset + len(lg.entries) - 1


def last_term(lg: Log) -> int:
    """``LastTerm``."""
    return lg.entries[-1].term if lg.entries else lg.snapshotTerm


def log_term(lg: Log, index: int) -> int:
    """``LogTerm``: 0 at 0, the snapshot term at its index, else the entry's or 0."""
    if index == 0:
        return 0
    if index == lg.snapshotIndex:
        return lg.snapshotTerm
    if lg.offset <= index <= last_index(lg):
        return lg.entries[index - lg.offset].term
    return 0


def find_conflict_by_term(lg: Log, index: int, target: int) -> int:
    """``FindConflictByTerm``."""
    matching = [k for k in range(lg.offset - 1, index + 1) if log_term(lg, k) <= target]
    return 0 if index == 0 or not matching else max(matching)


def conf_state_of(history: tuple[Entry, ...]) -> ConfState:
    """``ComputeConfStateFromHistory``: the configuration of the history's last
    configuration entry (nothing when it has none)."""
    k = last_config_index(history)
    if k == 0:
        return ConfState(frozenset(), frozenset(), frozenset(), False)
    v = history[k - 1].value
    if isinstance(v, ChangeVal) and v.enterJoint:
        return ConfState(v.newconf, v.learners, v.oldconf, bool(v.oldconf))
    return ConfState(v.newconf, v.learners, frozenset(), False)


def last_config_index(history: tuple[Entry, ...]) -> int:
    """The index of the history's last configuration entry, 0 when it has none."""
    for k in range(len(history), 0, -1):
        if history[k - 1].type == CONFIG_ENTRY:
            return k
    return 0


def quorum(votes: frozenset[ServerId], conf: frozenset[ServerId]) -> bool:
    """``votes \\cap conf \\in Quorum(conf)`` (an empty conf has no quorum)."""
    return len(votes & conf) * 2 > len(conf)


#: The bounds where 76f1249 and 124 show (docs/specs/etcd-raft.md): 3 servers
#: bootstrapped, entries applied, one compaction, logs of 5, and one message at a time
#: in each buffer and in flight per follower.  The limits are MCetcdraft's own
#: constants; the stories' messages travel one at a time, so they leave the mechanism
#: alone and make the fixed spec's whole space a session's search.
_COMPACTION_STORY: dict[str, Any] = {
    "Server": model_values("s", 3, group="Server"),
    "InitServer": 3,
    "ApplyCommitted": True,
    "CompactLimit": 1,
    "MaxLogLength": 5,
    "MaxPendingMsgLimit": 1,
    "MaxInflightMsgs": 1,
    "MaxMsgBufferLimit": 1,
}


class EtcdRaft(Spec):
    """etcd/raft (Specula's etcdraft.tla, snapshot scenario), the core."""

    constants = {
        "Server": model_values("s", 2, group="Server"),
        "InitServer": 2,
        "Value": model_values("v", 1, group="Value"),
        "MaxTermLimit": 2,
        "MaxTimeoutLimit": 1,
        "RequestLimit": 0,
        "HeartbeatLimit": 0,
        "StepDownLimit": 0,
        "MaxInflightMsgs": 2,
        "MaxMsgBufferLimit": 2,
        "MaxPendingMsgLimit": 2,
        "MaxLogLength": 3,
        "RestartLimit": 0,
        "DropLimit": 0,
        "DuplicateLimit": 0,
        "SnapshotLimit": 0,
        "CompactLimit": 0,
        "ConfChangeLimit": 0,
        "ReportUnreachableLimit": 0,
        "ReconfigurationLimit": 0,
        "PartitionLimit": 0,
        "MaxPartitions": 2,
        "ApplyCommitted": False,
        "Trace": False,
        "DisableConfChangeValidation": False,
    }
    #: ``default`` is Specula's etcdraft.tla as it stands; each ``revert_*`` takes
    #: back one etcd/raft fix, as Specula's bugs/reproduce folder does.
    #: Specula's spec lacks etcd's own fix of etcd#7280 (raft.go hup refuses to
    #: campaign with configuration changes committed but not applied): ``fix_7280``
    #: adds it.  ``revert_bd3c759`` lets the leader propose leaving a joint
    #: configuration while a change is pending, without marking the proposal pending.
    variants = ("default", "revert_76f1249", "revert_124", "fix_7280", "revert_bd3c759")
    #: ``mcheck run etcd_raft --variant revert_124`` (or ``revert_76f1249``,
    #: ``revert_bd3c759``) tells that bug's story at the bounds where it shows and
    #: where the fixed spec's whole space is a session's search.  At MCetcdraft's
    #: message limits (2 and 2) 124 has no counterexample of up to 23 actions and the
    #: search needs a cluster (docs/specs/etcd-raft.md).
    stories = {
        # etcd/raft 76f1249: 25 actions, and the fixed spec holds over every state at
        # these bounds (docs/specs/etcd-raft.md).
        "revert_76f1249": Story(
            constants=_COMPACTION_STORY,
            check=("AppendEntriesPrevLogTermValidInv",),
            about="the leader compacts past what s3 holds and sends it a MsgApp whose"
            " previous entry's term is gone (prevLogTerm 0)",
        ),
        "revert_124": Story(
            constants={**_COMPACTION_STORY, "SnapshotLimit": 1},
            check=("SnapshotTransitionCorrectInv",),
            about="a stale snapshot reply moves s3 past the pending snapshot; the leader"
            " keeps it in StateSnapshot",
        ),
        # etcd/raft bd3c759: 21 actions, and the fixed spec holds over every state at
        # these bounds (docs/specs/etcd-raft.md).
        "revert_bd3c759": Story(
            constants={"ConfChangeLimit": 1, "MaxLogLength": 5},
            check=("SinglePendingLeaveJointInv",),
            about="the leader auto-leaves its joint configuration and proposes leaving"
            " it again: two leave-joint entries uncommitted",
        ),
    }
    #: Specula's traces (specs/_etcd_raft_specula.py), set below the class.
    log_mapping: ClassVar[Any]
    symmetry = ("Server",)
    check_deadlock = False

    Server: tuple[ServerId, ...]
    InitServer: int
    Value: tuple[ModelValue, ...]
    MaxTermLimit: int
    MaxTimeoutLimit: int
    RequestLimit: int
    HeartbeatLimit: int
    StepDownLimit: int
    MaxInflightMsgs: int
    MaxMsgBufferLimit: int
    MaxPendingMsgLimit: int
    MaxLogLength: int
    RestartLimit: int
    DropLimit: int
    DuplicateLimit: int
    SnapshotLimit: int
    CompactLimit: int
    ConfChangeLimit: int
    ReportUnreachableLimit: int
    ReconfigurationLimit: int
    PartitionLimit: int
    #: CreatePartition's groups are numbered 1..MaxPartitions (MCetcdraft.cfg: 2).
    MaxPartitions: int
    ApplyCommitted: bool
    #: etcdraft.tla's actions as Traceetcdraft.tla takes them, for validating
    #: Specula's traces (specs/_etcd_raft_specula.py sets it): no MC counter or
    #: limit, no MCSend rule, no log bound, the actions bound by the log's own
    #: values (an append's range, the index applied or compacted), and the
    #: application's reports (ReportSnapshotStatus, ApplySnapshotConfChange).
    Trace: bool
    #: raft.Config.DisableConfChangeValidation: a leader may propose leaving a joint
    #: configuration it has proposed but not yet applied (a trace's config line
    #: sets it; MCetcdraft.cfg leaves it FALSE).
    DisableConfChangeValidation: bool

    def validate(self) -> None:
        """The constants must describe a cluster the model can bootstrap."""
        if self.MaxPartitions < 1:
            raise ConfigError("MaxPartitions must be at least 1 (etcdraft.tla's ASSUME)")
        if not 1 <= self.InitServer <= len(self.Server):
            raise ConfigError(
                f"InitServer must be between 1 and the number of servers ({len(self.Server)}):"
                " it counts the first servers, which bootstrap"
            )

    # -- helpers ------------------------------------------------------------------
    def _within(self, used: int, limit: int) -> bool:
        """An MC counter allows one more (always, when validating a trace)."""
        return self.Trace or used < limit

    def _map(self, f: Any) -> Map[ServerId, Any]:
        return Map({i: f(i) for i in self.Server})

    def _init_servers(self) -> frozenset[ServerId]:
        return frozenset(self.Server[: self.InitServer])

    @staticmethod
    def _members(s: EtcdState, i: ServerId) -> frozenset[ServerId]:
        c = s.config[i]
        return c.jointConfig[0] | c.jointConfig[1] | c.learners

    @staticmethod
    def _voters(s: EtcdState, i: ServerId) -> frozenset[ServerId]:
        c = s.config[i]
        return c.jointConfig[0] | c.jointConfig[1]

    def _send(self, s: EtcdState, m: Message) -> EtcdState | None:
        """MCSend: at most one AppendEntries request per pair and term in flight (nor
        its response), then SendDirect into pendingMessages (Send alone for a trace)."""
        if isinstance(m, AEReq) and not self.Trace:
            for n in (*s.messages.keys(), *s.pendingMessages.keys()):
                if n.mterm != m.mterm:
                    continue
                if isinstance(n, AEReq) and (n.msource, n.mdest) == (m.msource, m.mdest):
                    return None
                if isinstance(n, AEResp) and (n.msource, n.mdest) == (m.mdest, m.msource):
                    return None
        return s._replace(pendingMessages=add(s.pendingMessages, m))

    @staticmethod
    def _reply(s: EtcdState, response: Message, request: Message) -> EtcdState:
        """ReplyDirect (the request is always in ``messages`` here)."""
        return s._replace(
            messages=remove(s.messages, request), pendingMessages=add(s.pendingMessages, response)
        )

    @staticmethod
    def _discard(s: EtcdState, m: Message) -> EtcdState:
        return s._replace(messages=remove(s.messages, m))

    @staticmethod
    def _set2(outer: Map[ServerId, Map[ServerId, Any]], i: ServerId, j: ServerId, v: Any) -> Any:
        return put(outer, i, put(outer[i], j, v))

    @staticmethod
    def _commit_to(s: EtcdState, i: ServerId, c: int) -> EtcdState:
        return s._replace(commitIndex=put(s.commitIndex, i, max(s.commitIndex[i], c)))

    def _replicate(self, s: EtcdState, i: ServerId, value: Any, kind: str) -> EtcdState:
        """Replicate: the leader appends an entry of its term."""
        entry = Entry(s.currentTerm[i], kind, value)
        lg = s.log[i]
        return s._replace(
            log=put(s.log, i, lg._replace(entries=(*lg.entries, entry))),
            historyLog=put(s.historyLog, i, (*s.historyLog[i], entry)),
        )

    # -- init ---------------------------------------------------------------------
    def init(self) -> list[EtcdState]:
        """MCInit: the first InitServer servers bootstrapped (a configuration entry per
        server, term 1, committed and applied), the others empty."""
        boot: list[Entry] = []
        conf: frozenset[ServerId] = frozenset()
        for x in self.Server[: self.InitServer]:
            conf = conf | {x}
            boot.append(Entry(1, CONFIG_ENTRY, ConfVal(conf, frozenset())))
        bootstrap = tuple(boot)
        init = self._init_servers()
        n = len(init)

        def inside(i: ServerId, a: Any, b: Any) -> Any:
            return a if i in init else b

        config = self._map(
            lambda i: Config(
                inside(i, (init, frozenset()), (frozenset(), frozenset())), frozenset(), False
            )
        )
        zeros = self._map(lambda i: self._map(lambda j: 0))
        return [
            EtcdState(
                messages=Map(),
                pendingMessages=Map(),
                currentTerm=self._map(lambda i: inside(i, 1, 0)),
                state=self._map(lambda i: FOLLOWER),
                votedFor=self._map(lambda i: None),
                log=self._map(lambda i: Log(1, inside(i, bootstrap, ()), 0, 0)),
                historyLog=self._map(lambda i: inside(i, bootstrap, ())),
                commitIndex=self._map(lambda i: inside(i, n, 0)),
                applied=self._map(lambda i: inside(i, n, 0)),
                votesResponded=self._map(lambda i: frozenset()),
                votesGranted=self._map(lambda i: frozenset()),
                matchIndex=zeros,
                pendingConfChangeIndex=self._map(lambda i: 0),
                config=config,
                reconfigCount=0,
                appliedConfigIndex=self._map(lambda i: inside(i, n, 0)),
                durableState=self._map(
                    lambda i: Durable(
                        inside(i, 1, 0),
                        None,
                        inside(i, n, 0),
                        inside(i, bootstrap, ()),
                        0,
                        0,
                        (),
                        inside(i, n, 0),
                        config[i],
                    )
                ),
                progressState=self._map(lambda i: self._map(lambda j: PROBE)),
                pendingSnapshot=zeros,
                nextIndex=self._map(lambda i: self._map(lambda j: 1)),
                msgAppFlowPaused=self._map(lambda i: self._map(lambda j: False)),
                inflights=self._map(lambda i: self._map(lambda j: frozenset())),
                partitions=self._map(lambda i: 0),
                constraintCounters=Counters(),
            )
        ]

    def constraint(self, s: EtcdState) -> bool:
        """MsgBufferConstraint, PendingMsgBufferConstraint and our log bound."""
        if self.Trace:
            return True
        if self.MaxMsgBufferLimit and sum(s.messages.values()) > self.MaxMsgBufferLimit:
            return False
        if self.MaxPendingMsgLimit and sum(s.pendingMessages.values()) > self.MaxPendingMsgLimit:
            return False
        return all(last_index(s.log[i]) <= self.MaxLogLength for i in self.Server)

    # -- elections ----------------------------------------------------------------
    @action(over="Server")
    def Timeout(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """MCTimeout: a follower or candidate of the configuration campaigns."""
        c = s.constraintCounters
        if not self.Trace and (
            s.currentTerm[i] >= self.MaxTermLimit or c.timeout >= self.MaxTimeoutLimit
        ):
            return None
        if s.state[i] not in (FOLLOWER, CANDIDATE) or i not in self._voters(s, i):
            return None
        if self.variant == "fix_7280" and self._unapplied_config(s, i):
            return None
        return s._replace(
            state=put(s.state, i, CANDIDATE),
            currentTerm=put(s.currentTerm, i, s.currentTerm[i] + 1),
            votedFor=put(s.votedFor, i, i),
            votesResponded=put(s.votesResponded, i, frozenset()),
            votesGranted=put(s.votesGranted, i, frozenset()),
            constraintCounters=c._replace(timeout=c.timeout + 1),
        )

    @staticmethod
    def _unapplied_config(s: EtcdState, i: ServerId) -> bool:
        """A configuration entry of i's log is committed and not yet applied."""
        lg = s.log[i]
        hist = s.historyLog[i]
        first = max(s.appliedConfigIndex[i] + 1, lg.offset)
        return any(
            hist[k - 1].type == CONFIG_ENTRY
            for k in range(first, min(s.commitIndex[i], len(hist)) + 1)
        )

    @action(over=("Server", "Server"))
    def RequestVote(self, s: EtcdState, i: ServerId, j: ServerId) -> EtcdState | None:
        """Candidate i asks j (itself: a granted response to itself)."""
        if s.state[i] != CANDIDATE or j not in self._members(s, i) - s.votesResponded[i]:
            return None
        lg = s.log[i]
        if i != j:
            m: Message = RVReq(s.currentTerm[i], last_term(lg), last_index(lg), i, j)
        else:
            m = RVResp(s.currentTerm[i], True, i, i)
        return self._send(s, m)

    @action(over="Server")
    def BecomeLeader(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """A candidate with a quorum (both quorums in a joint configuration) leads."""
        if s.state[i] != CANDIDATE:
            return None
        voters, outgoing = s.config[i].jointConfig
        granted = s.votesGranted[i]
        if outgoing:
            if not (quorum(granted, voters) and quorum(granted, outgoing)):
                return None
        elif not quorum(granted, voters):
            return None
        last = last_index(s.log[i])
        return s._replace(
            state=put(s.state, i, LEADER),
            matchIndex=put(s.matchIndex, i, self._map(lambda j: last if j == i else 0)),
            progressState=put(
                s.progressState, i, self._map(lambda j: REPLICATE if j == i else PROBE)
            ),
            msgAppFlowPaused=put(s.msgAppFlowPaused, i, self._map(lambda j: False)),
            pendingSnapshot=put(s.pendingSnapshot, i, self._map(lambda j: 0)),
            nextIndex=put(s.nextIndex, i, self._map(lambda j: last + 1)),
            inflights=put(s.inflights, i, self._map(lambda j: frozenset())),
            pendingConfChangeIndex=put(s.pendingConfChangeIndex, i, last),
        )

    @action(over=("Server", "Value"))
    def ClientRequest(self, s: EtcdState, i: ServerId, v: Any) -> EtcdState | None:
        """MCClientRequest: the leader appends [val |-> v]."""
        c = s.constraintCounters
        if s.state[i] != LEADER or not self._within(c.request, self.RequestLimit):
            return None
        s = self._replicate(s, i, ValueVal(v), VALUE_ENTRY)
        return s._replace(constraintCounters=c._replace(request=c.request + 1))

    @action(over="Server")
    def AdvanceCommitIndex(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """The leader commits the largest index its configuration's quorum agrees on,
        if that entry is of its term (a step that changes nothing included)."""
        if s.state[i] != LEADER:
            return None
        voters, outgoing = s.config[i].jointConfig
        match = s.matchIndex[i]

        def committed(index: int) -> bool:
            agree = frozenset(k for k in voters | outgoing if match[k] >= index)
            if outgoing:
                return quorum(agree, voters) and quorum(agree, outgoing)
            return quorum(agree, voters)

        lg = s.log[i]
        agree_indexes = [x for x in range(s.commitIndex[i] + 1, last_index(lg) + 1) if committed(x)]
        new = s.commitIndex[i]
        if agree_indexes and log_term(lg, max(agree_indexes)) == s.currentTerm[i]:
            new = max(agree_indexes)
        return self._commit_to(s, i, new)

    # -- replication --------------------------------------------------------------
    def _append_entries(
        self, s: EtcdState, subtype: str, i: ServerId, j: ServerId, b: int, e: int
    ) -> EtcdState | None:
        """AppendEntriesInRangeToPeer(subtype, i, j, <<b, e>>)."""
        if i == j or b > e or s.state[i] != LEADER or j not in self._members(s, i):
            return None
        lg = s.log[i]
        # The fix of etcd/raft 76f1249: send no entries that are compacted, and no
        # previous entry whose term is gone (raft.go maybeSendAppend sends a snapshot).
        if self.variant != "revert_76f1249":
            if not (b == e or b >= lg.offset):
                return None
            if not (b == 1 or b - 1 == lg.snapshotIndex or b - 1 >= lg.offset):
                return None
        pstate = s.progressState[i][j]
        paused = s.msgAppFlowPaused[i][j]
        if subtype != "heartbeat":
            is_paused = paused if pstate in (PROBE, REPLICATE) else pstate == SNAPSHOT
            if is_paused:
                return None
        prev = b - 1
        last = last_index(lg)
        prev_term = log_term(lg, prev) if 0 < prev <= last else 0
        last_entry = min(last, e - 1)
        lo, hi = b - lg.offset + 1, last_entry - lg.offset + 1  # SubSeq(entries, lo, hi)
        # A compacted range (b < offset; only 76f1249's revert sends one with entries)
        # has no entries, as Specula's reproduction of the bug says: as SubSeq it is
        # TLC's evaluation error, and a slice from lo - 1 < 0 takes the log's end.
        entries = lg.entries[lo - 1 : hi] if lo >= 1 and hi >= lo else ()
        if subtype == "heartbeat":
            commit = min(s.commitIndex[i], s.matchIndex[i][j])
        elif last_entry < b:
            commit = s.commitIndex[i]
        else:
            commit = min(s.commitIndex[i], last_entry)
        inflights = s.inflights[i][j]
        new_inflights = inflights | {last_entry} if last_entry >= b else inflights
        if subtype == "heartbeat":
            new_paused = paused
        elif pstate == REPLICATE:
            new_paused = len(new_inflights) >= self.MaxInflightMsgs
        elif pstate == PROBE and entries:
            new_paused = True
        else:
            new_paused = paused
        m = AEReq(subtype, s.currentTerm[i], prev, prev_term, entries, commit, i, j)
        sent = self._send(s, m)
        if sent is None:
            return None
        s = sent
        if last_entry >= b and subtype != "heartbeat" and pstate == REPLICATE:
            s = s._replace(inflights=self._set2(s.inflights, i, j, inflights | {last_entry}))
        s = s._replace(msgAppFlowPaused=self._set2(s.msgAppFlowPaused, i, j, new_paused))
        if entries and pstate == REPLICATE and subtype != "heartbeat":
            nxt = s.nextIndex[i][j] + len(entries)
            s = s._replace(nextIndex=self._set2(s.nextIndex, i, j, nxt))
        return s

    def _append_ranges(self, s: EtcdState) -> list[tuple[ServerId, ServerId, int, int]]:
        """AppendEntries' ranges [b, e): MCNextAsync's from nextIndex; a trace's from
        anywhere past matchIndex, as Traceetcdraft lets the log say."""
        out: list[tuple[ServerId, ServerId, int, int]] = []
        for i in self.Server:
            if s.state[i] != LEADER:
                continue
            end = last_index(s.log[i]) + 2
            for j in self.Server:
                if self.Trace:
                    starts = range(s.matchIndex[i][j] + 1, end)
                else:
                    starts = range(s.nextIndex[i][j], s.nextIndex[i][j] + 1)
                out.extend((i, j, b, e) for b in starts for e in range(b, end))
        return out

    @action(over_state=lambda self, s: self._append_ranges(s))
    def AppendEntries(
        self, s: EtcdState, i: ServerId, j: ServerId, b: int, e: int
    ) -> EtcdState | None:
        """Leader i sends j the entries [b, e)."""
        return self._append_entries(s, "app", i, j, b, e)

    @action(over="Server")
    def AppendEntriesToSelf(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """The leader's own MsgAppResp for its last index."""
        if s.state[i] != LEADER:
            return None
        m = AEResp("app", s.currentTerm[i], True, last_index(s.log[i]), 0, 0, i, i)
        return self._send(s, m)

    @action(over=("Server", "Server"))
    def Heartbeat(self, s: EtcdState, i: ServerId, j: ServerId) -> EtcdState | None:
        """MCHeartbeat: an empty append with range <<1, 1>>."""
        c = s.constraintCounters
        if not self._within(c.heartbeat, self.HeartbeatLimit):
            return None
        t = self._append_entries(s, "heartbeat", i, j, 1, 1)
        if t is None:
            return None
        return t._replace(constraintCounters=c._replace(heartbeat=c.heartbeat + 1))

    @action(over="Server")
    def ReplicateImplicitEntry(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """The leader appends an implicit entry (a leave-joint entry when auto-leave is
        due; [val |-> 0] otherwise) and sends itself its MsgAppResp."""
        if s.state[i] != LEADER:
            return None
        conf = s.config[i]
        joint = bool(conf.jointConfig[1])
        auto = joint and conf.autoLeave and s.applied[i] >= s.pendingConfChangeIndex[i]
        if joint and not auto:
            return None
        learners = conf.learners
        if not joint and self.DisableConfChangeValidation:
            # raft.go lets the leader leave a joint configuration it has entered in
            # its log but not applied: the learners are the entering entry's.
            lg, k = s.log[i], s.pendingConfChangeIndex[i]
            if k > 0 and lg.offset < k <= last_index(lg):
                entry = lg.entries[k - lg.offset]
                if isinstance(entry.value, ChangeVal) and entry.value.enterJoint:
                    auto, learners = True, entry.value.learners
        if auto:
            t = self._leave_joint(s, i, learners)
        else:
            t = self._replicate(s, i, ValueVal(0), VALUE_ENTRY)
        m = AEResp("app", t.currentTerm[i], True, last_index(t.log[i]), 0, 0, i, i)
        return self._send(t, m)

    @action(over="Server")
    def StepDownToFollower(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """MCStepDown: a leader or candidate becomes a follower of its term."""
        c = s.constraintCounters
        if not self._within(c.stepDown, self.StepDownLimit) or s.state[i] not in (
            LEADER,
            CANDIDATE,
        ):
            return None
        return s._replace(
            state=put(s.state, i, FOLLOWER), constraintCounters=c._replace(stepDown=c.stepDown + 1)
        )

    @action(over="Server")
    def Ready(self, s: EtcdState, i: ServerId) -> EtcdState:
        """Persist i's state, then move its pending messages to the network."""
        lg = s.log[i]
        d = s.durableState[i]
        durable = Durable(
            s.currentTerm[i],
            s.votedFor[i],
            last_index(lg),
            lg.entries,
            lg.snapshotIndex,
            lg.snapshotTerm,
            d.snapshotHistory,
            s.commitIndex[i],
            s.config[i],
        )
        messages, pending = s.messages, s.pendingMessages
        for m, n in s.pendingMessages.items():
            if m.msource == i:
                messages = messages.set(m, messages.get(m, 0) + n)
                pending = pending.delete(m)
        return s._replace(
            durableState=put(s.durableState, i, durable), messages=messages, pendingMessages=pending
        )

    def _apply_choices(self, s: EtcdState) -> list[tuple[ServerId, int]]:
        """ApplyEntries' (server, new applied index): up to the commit index when
        ``ApplyCommitted``; any index past applied, up to commit, for a trace."""
        out: list[tuple[ServerId, int]] = []
        for i in self.Server:
            applied, commit = s.applied[i], s.commitIndex[i]
            if self.Trace:
                out.extend((i, n) for n in range(applied + 1, commit + 1))
            elif self.ApplyCommitted and applied < commit:
                out.append((i, commit))
        return out

    @action(over_state=lambda self, s: self._apply_choices(s))
    def ApplyEntries(self, s: EtcdState, i: ServerId, new_applied: int) -> EtcdState | None:
        """ApplyEntries(i, newApplied), as etcdraft.tla's own NextAsync has it with
        the commit index: the application applies what is committed.  MCetcdraft's
        Next leaves it out, so there ``applied`` keeps its initial value and only
        entries up to the bootstrap can be compacted or sent as a snapshot;
        ``ApplyCommitted`` (ours, off by default) adds it."""
        if not s.applied[i] < new_applied <= s.commitIndex[i]:
            return None
        return s._replace(applied=put(s.applied, i, new_applied))

    def _compact_choices(self, s: EtcdState) -> list[tuple[ServerId, int]]:
        """CompactLog's (server, new start): MCNextAsync's commit index, or any start
        the log may say for a trace."""
        if self.Trace:
            return [
                (i, n) for i in self.Server for n in range(s.log[i].offset + 1, s.applied[i] + 2)
            ]
        return [(i, s.commitIndex[i]) for i in self.Server]

    @action(over_state=lambda self, s: self._compact_choices(s))
    def CompactLog(self, s: EtcdState, i: ServerId, new_start: int) -> EtcdState | None:
        """MCCompactLog(i, commitIndex[i]) (a trace: CompactLog(i, newStart)): compact
        the log before ``new_start`` (at most one past the applied index);
        durableState keeps the compacted entries as its snapshot history."""
        c = s.constraintCounters
        lg = s.log[i]
        if not lg.offset < new_start or not self._within(c.compact, self.CompactLimit):
            return None
        if new_start > s.applied[i] + 1:
            return None
        cut = new_start - lg.offset
        term = log_term(lg, new_start - 1)
        d = s.durableState[i]
        return s._replace(
            log=put(s.log, i, Log(new_start, lg.entries[cut:], new_start - 1, term)),
            durableState=put(
                s.durableState,
                i,
                d._replace(
                    snapshotHistory=d.snapshotHistory + lg.entries[:cut],
                    snapshotIndex=new_start - 1,
                    snapshotTerm=term,
                    entries=lg.entries[cut:],
                ),
            ),
            constraintCounters=c._replace(compact=c.compact + 1),
        )

    # -- snapshots ------------------------------------------------------------------
    def _snapshot_of(self, s: EtcdState, i: ServerId, index: int) -> tuple[Entry, ...]:
        """The history up to ``index`` from what i has: its persisted snapshot history,
        then its log's entries."""
        d = s.durableState[i]
        if index <= d.snapshotIndex:
            return d.snapshotHistory[:index]
        lg = s.log[i]
        return d.snapshotHistory + lg.entries[: index - lg.offset + 1]

    def _snapshot_message(
        self, s: EtcdState, i: ServerId, j: ServerId, index: int, term: int, history: Any
    ) -> SnapReq:
        return SnapReq(s.currentTerm[i], index, term, history, conf_state_of(history), i, j)

    def _may_snapshot(self, s: EtcdState, i: ServerId, j: ServerId) -> bool:
        """The MC counter allows it and leader i may send j a snapshot (j a voter of the
        incoming configuration or a learner)."""
        if not self._within(s.constraintCounters.snapshot, self.SnapshotLimit):
            return False
        if i == j or s.state[i] != LEADER:
            return False
        c = s.config[i]
        return j in c.jointConfig[0] or j in c.learners

    def _become_snapshot(self, s: EtcdState, i: ServerId, j: ServerId, index: int) -> EtcdState:
        """progress.BecomeSnapshot(index), and the MC model's snapshot counter."""
        c = s.constraintCounters
        return s._replace(
            progressState=self._set2(s.progressState, i, j, SNAPSHOT),
            msgAppFlowPaused=self._set2(s.msgAppFlowPaused, i, j, False),
            pendingSnapshot=self._set2(s.pendingSnapshot, i, j, index),
            nextIndex=self._set2(s.nextIndex, i, j, index + 1),
            inflights=self._set2(s.inflights, i, j, frozenset()),
            constraintCounters=c._replace(snapshot=c.snapshot + 1),
        )

    @action(over=("Server", "Server"))
    def SendSnapshot(self, s: EtcdState, i: ServerId, j: ServerId) -> EtcdState | None:
        """MCSendSnapshot: j's previous entry is compacted, so the leader sends its
        snapshot (raft.go maybeSendSnapshot) and j's progress becomes StateSnapshot."""
        if not self._may_snapshot(s, i, j):
            return None
        lg = s.log[i]
        prev = s.nextIndex[i][j] - 1
        if lg.offset <= prev <= last_index(lg) or lg.snapshotIndex == 0:
            return None
        history = s.durableState[i].snapshotHistory
        m = self._snapshot_message(s, i, j, lg.snapshotIndex, lg.snapshotTerm, history)
        t = s._replace(pendingMessages=add(s.pendingMessages, m))
        return self._become_snapshot(t, i, j, lg.snapshotIndex)

    @action(
        over_state=lambda self, s: [
            (i, j, idx)
            for i in self.Server
            for j in self.Server
            for idx in range(1, s.commitIndex[i] + 1)
        ],
        actor=lambda self, s, p: p[0],
    )
    def SendSnapshotWithCompaction(
        self, s: EtcdState, p: tuple[ServerId, ServerId, int]
    ) -> EtcdState | None:
        """MCSendSnapshotWithCompaction: a snapshot at an applied index of the leader's
        choice, at or past its own snapshot and j's match."""
        i, j, idx = p
        if not self._may_snapshot(s, i, j):
            return None
        if not (s.log[i].snapshotIndex <= idx <= s.applied[i] and idx >= s.matchIndex[i][j]):
            return None
        history = self._snapshot_of(s, i, idx)
        m = self._snapshot_message(s, i, j, idx, log_term(s.log[i], idx), history)
        t = s._replace(pendingMessages=add(s.pendingMessages, m))
        return self._become_snapshot(t, i, j, idx)

    @action(over=("Server", "Server"))
    def ManualSendSnapshot(self, s: EtcdState, i: ServerId, j: ServerId) -> EtcdState | None:
        """MCManualSendSnapshot: the test harness sends a snapshot of the applied state
        and leaves j's progress alone."""
        if not self._may_snapshot(s, i, j) or s.applied[i] <= 0:
            return None
        idx = s.applied[i]
        history = self._snapshot_of(s, i, idx)
        m = self._snapshot_message(s, i, j, idx, log_term(s.log[i], idx), history)
        c = s.constraintCounters
        return s._replace(
            pendingMessages=add(s.pendingMessages, m),
            constraintCounters=c._replace(snapshot=c.snapshot + 1),
        )

    @action(over=("Server", "Server"))
    def ReportUnreachable(self, s: EtcdState, i: ServerId, j: ServerId) -> EtcdState | None:
        """MCReportUnreachable: the application tells leader i that j is unreachable;
        a replicating j goes back to probing (other states unchanged, the report still
        counted)."""
        c = s.constraintCounters
        if not self._within(c.reportUnreachable, self.ReportUnreachableLimit):
            return None
        if s.state[i] != LEADER or i == j:
            return None
        s = s._replace(constraintCounters=c._replace(reportUnreachable=c.reportUnreachable + 1))
        if s.progressState[i][j] != REPLICATE:
            return s
        return s._replace(
            progressState=self._set2(s.progressState, i, j, PROBE),
            inflights=self._set2(s.inflights, i, j, frozenset()),
        )

    @action(over=("Server", "Server", lambda self: (True, False)))
    def ReportSnapshotStatus(
        self, s: EtcdState, i: ServerId, j: ServerId, success: bool
    ) -> EtcdState | None:
        """The application reports how sending j a snapshot went (raft.go
        ReportSnapshot): j's progress goes back to probing, paused, past the pending
        snapshot if it succeeded.  Only a trace has it (MCetcdraft's Next does not)."""
        if not self.Trace or s.state[i] != LEADER or s.progressState[i][j] != SNAPSHOT:
            return None
        pending = s.pendingSnapshot[i][j] if success else 0
        return s._replace(
            progressState=self._set2(s.progressState, i, j, PROBE),
            nextIndex=self._set2(s.nextIndex, i, j, max(s.matchIndex[i][j] + 1, pending + 1)),
            pendingSnapshot=self._set2(s.pendingSnapshot, i, j, 0),
            msgAppFlowPaused=self._set2(s.msgAppFlowPaused, i, j, True),
            inflights=self._set2(s.inflights, i, j, frozenset()),
        )

    @action(
        over_state=lambda self, s: (
            [(i, v) for i in self.Server for v in self._server_subsets()] if self.Trace else []
        )
    )
    def ApplySnapshotConfChange(
        self, s: EtcdState, i: ServerId, voters: frozenset[ServerId]
    ) -> EtcdState | None:
        """The application applies the configuration of a restored snapshot with the
        voters it names; the rest (outgoing voters, learners, auto-leave) from the
        last configuration entry of i's persisted snapshot history.  Only a trace
        has it, as Traceetcdraft takes it: once a snapshot is restored past the
        commit index."""
        if not s.log[i].offset > s.commitIndex[i]:
            return None
        history = s.durableState[i].snapshotHistory
        k = last_config_index(history)
        v: Any = history[k - 1].value if k else ConfVal(frozenset(), frozenset())
        leave = isinstance(v, LeaveVal)
        enter = isinstance(v, ChangeVal) and v.enterJoint
        outgoing = v.oldconf if enter else frozenset()
        auto = not leave and enter and bool(outgoing)
        return s._replace(
            config=put(s.config, i, Config((voters, outgoing), v.learners, auto)),
            appliedConfigIndex=put(s.appliedConfigIndex, i, k),
        )

    def _handle_snapshot_request(
        self, s: EtcdState, i: ServerId, j: ServerId, m: SnapReq
    ) -> EtcdState:
        """HandleSnapshotRequest (raft.restore): stale, fast-forward, or restore."""
        term = s.currentTerm[i]
        if m.mterm < term:
            return self._discard(s, m)
        commit = s.commitIndex[i]
        if m.msnapshotIndex <= commit:
            return self._reply(s, AEResp("app", term, True, commit, 0, 0, i, j), m)
        index = m.msnapshotIndex
        if log_term(s.log[i], index) == m.msnapshotTerm:
            t = s._replace(commitIndex=put(s.commitIndex, i, index))
            return self._reply(t, AEResp("app", term, True, index, 0, 0, i, j), m)
        cs = m.mconfState
        config = Config((cs.voters, cs.outgoing), cs.learners, cs.autoLeave)
        d = s.durableState[i]
        t = s._replace(
            log=put(s.log, i, Log(index + 1, (), index, m.msnapshotTerm)),
            historyLog=put(s.historyLog, i, m.mhistory),
            commitIndex=put(s.commitIndex, i, index),
            config=put(s.config, i, config),
            appliedConfigIndex=put(s.appliedConfigIndex, i, last_config_index(m.mhistory)),
            durableState=put(
                s.durableState,
                i,
                d._replace(
                    log=index,
                    entries=(),
                    snapshotIndex=index,
                    snapshotTerm=m.msnapshotTerm,
                    snapshotHistory=m.mhistory,
                    commitIndex=index,
                    config=config,
                ),
            ),
        )
        return self._reply(t, AEResp("snapshot", term, True, index, 0, 0, i, j), m)

    # -- configuration changes (MCDynamicConfigActions) -----------------------------
    def _conf_changes(self, s: EtcdState) -> list[tuple[ServerId, ChangeVal | None]]:
        """ChangeConf's choices: per leader, every valid ConfChangeV2 when none is
        pending past the applied index, else ``None`` (the proposal becomes an empty
        entry, as raft.go does with a refused one)."""
        if not self._within(s.constraintCounters.confChange, self.ConfChangeLimit):
            return []
        subsets = self._server_subsets()
        out: list[tuple[ServerId, ChangeVal | None]] = []
        for i in self.Server:
            if s.state[i] != LEADER:
                continue
            if self.Trace:
                # Traceetcdraft's ChangeConfIfLogged: whatever change the log says
                # (DisableConfChangeValidation lets etcd propose any), out of a
                # simple configuration, pending or not.
                voters, outgoing = s.config[i].jointConfig
                if not outgoing:
                    out.extend(
                        (i, ChangeVal(new, learners, enter, voters))
                        for enter in (False, True)
                        for new in subsets
                        for learners in subsets
                    )
                continue
            if s.pendingConfChangeIndex[i] > s.applied[i]:
                out.append((i, None))
                continue
            voters, outgoing = s.config[i].jointConfig
            if outgoing:  # already joint: confchange.go refuses every change
                continue
            for enter in (False, True):
                for new in subsets:
                    if not new or (not enter and len(voters ^ new) > 1):
                        continue
                    for learners in subsets:
                        if new & learners or (enter and voters & learners):
                            continue
                        out.append((i, ChangeVal(new, learners, enter, voters)))
        return out

    def _server_subsets(self) -> list[frozenset[ServerId]]:
        """SUBSET Server, in a fixed order, worked out once per spec instance (asked
        for at every state where a leader may propose a change)."""
        subsets: list[frozenset[ServerId]] | None = self.__dict__.get("_subsets")
        if subsets is None:
            subsets = [
                frozenset(x for k, x in enumerate(self.Server) if bits >> k & 1)
                for bits in range(1 << len(self.Server))
            ]
            self.__dict__["_subsets"] = subsets
        return subsets

    @action(over_state=lambda self, s: self._conf_changes(s))
    def ChangeConf(self, s: EtcdState, p: tuple[ServerId, ChangeVal | None]) -> EtcdState:
        """MCChangeConf: the leader proposes a configuration change (simple: one voter
        at most; or entering a joint configuration)."""
        i, change = p
        c = s.constraintCounters
        s = s._replace(constraintCounters=c._replace(confChange=c.confChange + 1))
        if change is None:
            return self._replicate(s, i, (), VALUE_ENTRY)
        return self._pending_at_last(self._replicate(s, i, change, CONFIG_ENTRY), i)

    @action(over="Server")
    def ApplySimpleConfChange(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """Apply the next committed configuration entry, in log order; a leader starts
        tracking the servers it adds (probing from its last index)."""
        lg = s.log[i]
        k = next(
            (
                x
                for x in range(max(lg.offset, s.appliedConfigIndex[i] + 1), s.commitIndex[i] + 1)
                if lg.entries[x - lg.offset].type == CONFIG_ENTRY
            ),
            0,
        )
        if k == 0:
            return None
        v = lg.entries[k - lg.offset].value
        old = s.config[i]
        leave = isinstance(v, LeaveVal)
        enter = isinstance(v, ChangeVal) and v.enterJoint
        voters = old.jointConfig[0] if leave else v.newconf
        outgoing = v.oldconf if enter else frozenset()
        new = Config((voters, outgoing), v.learners, False if leave else enter)
        t = s._replace(
            config=put(s.config, i, new),
            appliedConfigIndex=put(s.appliedConfigIndex, i, k),
        )
        leader = s.state[i] == LEADER
        if leader and s.pendingConfChangeIndex[i] == k:
            t = t._replace(
                reconfigCount=t.reconfigCount + 1,
                pendingConfChangeIndex=put(t.pendingConfChangeIndex, i, 0),
            )
        added = (voters | outgoing | v.learners) - (
            old.jointConfig[0] | old.jointConfig[1] | old.learners
        )
        if not (leader and added):
            return t
        start = max(last_index(lg), 1)

        def per_peer(outer: Map[ServerId, Map[ServerId, Any]], value: Any, me: bool) -> Any:
            row = outer[i]
            for j in in_order(added):
                if me or j != i:
                    row = put(row, j, value)
            return put(outer, i, row)

        return t._replace(
            nextIndex=per_peer(t.nextIndex, start, True),
            matchIndex=per_peer(t.matchIndex, 0, False),
            progressState=per_peer(t.progressState, PROBE, False),
            msgAppFlowPaused=per_peer(t.msgAppFlowPaused, False, True),
            inflights=per_peer(t.inflights, frozenset(), True),
            pendingSnapshot=per_peer(t.pendingSnapshot, 0, True),
        )

    @action(over="Server")
    def ProposeLeaveJoint(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """The leader of a joint auto-leave configuration proposes leaving it once its
        entering entry is applied (pendingConfChangeIndex back at 0)."""
        conf = s.config[i]
        if s.state[i] != LEADER or not conf.jointConfig[1] or not conf.autoLeave:
            return None
        # Before etcd/raft bd3c759 the auto-leave proposal neither waited for the
        # pending change nor marked itself pending, so it could be proposed again.
        bug = self.variant == "revert_bd3c759"
        if not bug and s.pendingConfChangeIndex[i] != 0:
            return None
        t = self._leave_joint(s, i, conf.learners)
        return t._replace(pendingConfChangeIndex=s.pendingConfChangeIndex) if bug else t

    def _leave_joint(self, s: EtcdState, i: ServerId, learners: frozenset[ServerId]) -> EtcdState:
        """The leader appends the entry that leaves its joint configuration (keeping
        its incoming voters, with ``learners``) and marks it pending."""
        conf = s.config[i]
        t = self._replicate(s, i, LeaveVal(True, conf.jointConfig[0], learners), CONFIG_ENTRY)
        return self._pending_at_last(t, i)

    @staticmethod
    def _pending_at_last(s: EtcdState, i: ServerId) -> EtcdState:
        """pendingConfChangeIndex[i] := LastIndex(log[i])."""
        return s._replace(
            pendingConfChangeIndex=put(s.pendingConfChangeIndex, i, last_index(s.log[i]))
        )

    # -- faults (MCNextCrash, MCNextUnreliable) ------------------------------------
    @action(over="Server")
    def Restart(self, s: EtcdState, i: ServerId) -> EtcdState | None:
        """MCRestart: i restarts from durableState; its pending messages are lost, the
        network keeps its messages (RestartDropsMessages = FALSE)."""
        c = s.constraintCounters
        if not self._within(c.restart, self.RestartLimit):
            return None
        return self._restarted(s, i)._replace(constraintCounters=c._replace(restart=c.restart + 1))

    def _restarted(self, s: EtcdState, i: ServerId) -> EtcdState:
        """etcdraft.tla's Restart(i), the MC counter aside (the action properties ask
        whether a step is one)."""
        d = s.durableState[i]
        return s._replace(
            state=put(s.state, i, FOLLOWER),
            votesResponded=put(s.votesResponded, i, frozenset()),
            votesGranted=put(s.votesGranted, i, frozenset()),
            matchIndex=put(s.matchIndex, i, self._map(lambda j: 0)),
            pendingConfChangeIndex=put(s.pendingConfChangeIndex, i, 0),
            pendingMessages=Map({m: n for m, n in s.pendingMessages.items() if m.msource != i}),
            currentTerm=put(s.currentTerm, i, d.currentTerm),
            commitIndex=put(s.commitIndex, i, d.commitIndex),
            votedFor=put(s.votedFor, i, d.votedFor),
            log=put(s.log, i, Log(d.snapshotIndex + 1, d.entries, d.snapshotIndex, d.snapshotTerm)),
            applied=put(s.applied, i, d.snapshotIndex),
            config=put(s.config, i, d.config),
            appliedConfigIndex=put(s.appliedConfigIndex, i, d.commitIndex),
            progressState=put(s.progressState, i, self._map(lambda j: PROBE)),
            msgAppFlowPaused=put(s.msgAppFlowPaused, i, self._map(lambda j: False)),
            pendingSnapshot=put(s.pendingSnapshot, i, self._map(lambda j: 0)),
            nextIndex=put(s.nextIndex, i, self._map(lambda j: 1)),
            inflights=put(s.inflights, i, self._map(lambda j: frozenset())),
            historyLog=put(s.historyLog, i, d.snapshotHistory + d.entries),
        )

    def _network_fault(
        self, s: EtcdState, counter: str, limit: int, messages: Bag
    ) -> EtcdState | None:
        """A fault of MCNextUnreliable: ``messages`` after it, if its counter allows."""
        c = s.constraintCounters
        used = getattr(c, counter)
        if not self._within(used, limit):
            return None
        return s._replace(messages=messages, constraintCounters=c._replace(**{counter: used + 1}))

    @action(over_state=lambda self, s: in_order(m for m, n in s.messages.items() if n == 1))
    def DuplicateMessage(self, s: EtcdState, m: Message) -> EtcdState | None:
        """MCDuplicateMessage: a message with one copy gets a second."""
        return self._network_fault(s, "duplicate", self.DuplicateLimit, add(s.messages, m))

    @action(over_state=lambda self, s: in_order(m for m, n in s.messages.items() if n == 1))
    def DropMessage(self, s: EtcdState, m: Message) -> EtcdState | None:
        """MCDropMessage: the network loses a message with one copy."""
        return self._network_fault(s, "drop", self.DropLimit, remove(s.messages, m))

    # -- partitions (MCNextPartition) ----------------------------------------------
    def _deliverable(self, s: EtcdState) -> Any:
        """The messages ReceiveDirect may take: CanCommunicate(source, dest)."""
        if self.PartitionLimit == 0:
            return s.messages  # no partition is ever created (MCetcdraft.cfg's setting)
        p = s.partitions
        return [
            m
            for m in s.messages
            if p[m.msource] == 0 or p[m.mdest] == 0 or p[m.msource] == p[m.mdest]
        ]

    @action(
        over_state=lambda self, s: [
            g for g in self._server_subsets() if g and len(g) < len(self.Server)
        ]
    )
    def CreatePartition(self, s: EtcdState, group1: frozenset[ServerId]) -> EtcdState | None:
        """MCCreatePartition(group1): group1 in partition 1, the others in 2.
        etcdraft.tla drops ``CrossPartitionMessages``, computed from the partitions
        before the step, which are all 0 (none may be active): it drops nothing, and
        the messages between the groups wait, undeliverable, for HealPartition."""
        c = s.constraintCounters
        # The limit itself, not _within: a trace records no partitions.
        if c.partition >= self.PartitionLimit or any(s.partitions.values()):
            return None
        if self.MaxPartitions < 2:
            return None  # the assignment must lie in 1..MaxPartitions
        return s._replace(
            partitions=self._map(lambda i: 1 if i in group1 else 2),
            constraintCounters=c._replace(partition=c.partition + 1),
        )

    @action
    def HealPartition(self, s: EtcdState) -> EtcdState | None:
        """MCHealPartition: every server can reach every other again."""
        if not any(s.partitions.values()):
            return None
        return s._replace(partitions=self._map(lambda i: 0))

    # -- receiving ----------------------------------------------------------------
    @action(
        over_state=lambda self, s: in_order(self._deliverable(s)),
        actor=lambda self, s, m: m.mdest,
    )
    def Receive(self, s: EtcdState, m: Message) -> EtcdState | None:
        """ReceiveDirect(m) at m.mdest (the branches that are disjoint here)."""
        i, j = m.mdest, m.msource
        term = s.currentTerm[i]
        if isinstance(m, RVReq):
            if m.mterm > term:
                return self._update_term_and_vote(s, i, j, m)
            return self._handle_rv_request(s, i, j, m)
        if m.mterm > term:
            return None  # UpdateTerm first
        if isinstance(m, AEReq):
            return self._handle_ae_request(s, i, j, m)
        if isinstance(m, SnapReq):
            return self._handle_snapshot_request(s, i, j, m)
        if m.mterm < term:
            return self._discard(s, m)  # DropStaleResponse
        if isinstance(m, RVResp):
            # HandleRequestVoteResponse counts members' votes only; a non-member's
            # response is dropped by DropResponseFromNonMember.
            if j != i and j not in self._members(s, i):
                return None
            return self._handle_rv_response(s, i, j, m)
        # The append handlers do not ask whether j is a member: a non-member's response
        # of this term is handled here or dropped by DropResponseFromNonMember.
        if m.msubtype == "heartbeat":
            t = self._discard(s, m)
            return t._replace(msgAppFlowPaused=self._set2(t.msgAppFlowPaused, i, j, False))
        return self._handle_ae_response(s, i, j, m)

    @action(
        over_state=lambda self, s: in_order(
            m
            for m in self._deliverable(s)
            if not isinstance(m, RVReq) and m.mterm > s.currentTerm[m.mdest]
        ),
        actor=lambda self, s, m: m.mdest,
    )
    def UpdateTerm(self, s: EtcdState, m: Message) -> EtcdState:
        """A message of a newer term (not a vote request, which is handled in the same
        step) makes its receiver a follower of that term; the message stays, to be
        received next."""
        return self._become_follower_of_term(s, m.mdest, m.mterm)

    @action(
        over_state=lambda self, s: in_order(
            m
            for m in self._deliverable(s)
            if isinstance(m, AEReq)
            and m.mterm == s.currentTerm[m.mdest]
            and s.state[m.mdest] == CANDIDATE
        ),
        actor=lambda self, s, m: m.mdest,
    )
    def ReturnToFollowerState(self, s: EtcdState, m: Message) -> EtcdState:
        """A candidate that hears an append of its own term becomes a follower; the
        message stays, to be received next."""
        i = m.mdest
        return s._replace(state=put(s.state, i, FOLLOWER))

    @action(
        over_state=lambda self, s: in_order(
            m
            for m in self._deliverable(s)
            if isinstance(m, (RVResp, AEResp))
            and m.msource != m.mdest
            and m.msource not in self._members(s, m.mdest)
        ),
        actor=lambda self, s, m: m.mdest,
    )
    def DropResponseFromNonMember(self, s: EtcdState, m: Message) -> EtcdState:
        """A response from a server outside the receiver's configuration is dropped
        (rawnode.go: no Progress for it), whatever its term: the alternative to
        Receive's branches for it."""
        return self._discard(s, m)

    @staticmethod
    def _become_follower_of_term(s: EtcdState, i: ServerId, t: int) -> EtcdState:
        voted = s.votedFor if s.currentTerm[i] == t else put(s.votedFor, i, None)
        return s._replace(
            currentTerm=put(s.currentTerm, i, t), state=put(s.state, i, FOLLOWER), votedFor=voted
        )

    @staticmethod
    def _log_ok_for_vote(lg: Log, m: RVReq) -> bool:
        return m.mlastLogTerm > last_term(lg) or (
            m.mlastLogTerm == last_term(lg) and m.mlastLogIndex >= last_index(lg)
        )

    def _update_term_and_vote(self, s: EtcdState, i: ServerId, j: ServerId, m: RVReq) -> EtcdState:
        grant = self._log_ok_for_vote(s.log[i], m)
        t = self._reply(s, RVResp(m.mterm, grant, i, j), m)
        return t._replace(
            currentTerm=put(t.currentTerm, i, m.mterm),
            state=put(t.state, i, FOLLOWER),
            votedFor=put(t.votedFor, i, j if grant else None),
        )

    def _handle_rv_request(self, s: EtcdState, i: ServerId, j: ServerId, m: RVReq) -> EtcdState:
        term = s.currentTerm[i]
        grant = (
            m.mterm == term and self._log_ok_for_vote(s.log[i], m) and s.votedFor[i] in (None, j)
        )
        t = self._reply(s, RVResp(term, grant, i, j), m)
        if grant:
            t = t._replace(votedFor=put(t.votedFor, i, j))
        return t

    def _handle_rv_response(self, s: EtcdState, i: ServerId, j: ServerId, m: RVResp) -> EtcdState:
        t = self._discard(s, m)
        t = t._replace(votesResponded=put(t.votesResponded, i, t.votesResponded[i] | {j}))
        if m.mvoteGranted:
            t = t._replace(votesGranted=put(t.votesGranted, i, t.votesGranted[i] | {j}))
        return t

    def _handle_ae_request(
        self, s: EtcdState, i: ServerId, j: ServerId, m: AEReq
    ) -> EtcdState | None:
        """HandleAppendEntriesRequest: reject, return to follower, or accept."""
        lg = s.log[i]
        term = s.currentTerm[i]
        last = last_index(lg)
        log_ok = m.mprevLogIndex == 0 or (
            0 < m.mprevLogIndex <= last and m.mprevLogTerm == log_term(lg, m.mprevLogIndex)
        )
        if m.mterm < term or (m.mterm == term and s.state[i] == FOLLOWER and not log_ok):
            hint_index = min(m.mprevLogIndex, last)
            hint = find_conflict_by_term(lg, hint_index, m.mprevLogTerm)
            r = AEResp("app", term, False, m.mprevLogIndex, hint, log_term(lg, hint), i, j)
            return self._reply(s, r, m)
        if m.mterm == term and s.state[i] == CANDIDATE:
            return None  # ReturnToFollowerState first
        if not (m.mterm == term and s.state[i] == FOLLOWER and log_ok):
            return None
        index = m.mprevLogIndex + 1
        ents = m.mentries
        commit = s.commitIndex[i]

        # The positions (1-based) of the entries whose term differs from the log's.
        conflicting = [
            k
            for k in range(1, len(ents) + 1)
            if index + k - 1 <= last and log_term(lg, index + k - 1) != ents[k - 1].term
        ]
        no_conflict = index <= last + 1 and not conflicting
        done = index <= commit or (
            index > commit and (not ents or (m.mprevLogIndex + len(ents) <= last and no_conflict))
        )
        if done:
            t = s
            if index <= commit:
                if m.msubtype == "heartbeat":
                    t = self._commit_to(t, i, m.mcommitIndex)
            else:
                t = self._commit_to(t, i, min(m.mcommitIndex, m.mprevLogIndex + len(ents)))
            match = (
                m.mprevLogIndex + len(ents)
                if m.msubtype == "heartbeat" or index > commit
                else commit
            )
            r = AEResp(m.msubtype, term, True, match, 0, 0, i, j)
            return self._reply(t, r, m)
        if not ents or index <= commit:
            return None
        if not no_conflict:
            # FindFirstConflict: 0 when nothing conflicts, and then no step.
            ci = index + conflicting[0] - 1 if conflicting else 0
            if not ci > commit:
                return None
            new_entries = ents[ci - index :]
            keep = ci - lg.offset
            t = s._replace(
                log=put(s.log, i, lg._replace(entries=lg.entries[:keep] + new_entries)),
                historyLog=put(s.historyLog, i, s.historyLog[i][: ci - 1] + new_entries),
            )
        else:
            if not m.mprevLogIndex + len(ents) > last:
                return None
            new_entries = ents[last - index + 1 :]
            t = s._replace(
                log=put(s.log, i, lg._replace(entries=lg.entries + new_entries)),
                historyLog=put(s.historyLog, i, s.historyLog[i] + new_entries),
            )
        t = self._commit_to(t, i, min(m.mcommitIndex, m.mprevLogIndex + len(ents)))
        r = AEResp(m.msubtype, term, True, m.mprevLogIndex + len(ents), 0, 0, i, j)
        return self._reply(t, r, m)

    def _handle_ae_response(self, s: EtcdState, i: ServerId, j: ServerId, m: AEResp) -> EtcdState:
        """HandleAppendEntriesResponse (not a heartbeat's): progress and inflights."""
        t = self._discard(s, m)
        match = s.matchIndex[i][j]
        pstate = s.progressState[i][j]
        nxt = s.nextIndex[i][j]
        if m.msuccess:
            new_match = max(match, m.mmatchIndex)
            t = t._replace(
                matchIndex=self._set2(t.matchIndex, i, j, new_match),
                inflights=self._set2(
                    t.inflights, i, j, frozenset(x for x in s.inflights[i][j] if x > m.mmatchIndex)
                ),
            )
            updated = m.mmatchIndex > match
            already = m.mmatchIndex == match
            # etcd/raft#124's fix: resume once the follower is at or past the pending
            # snapshot (the bug asked for exactly the snapshot's index).
            pending = s.pendingSnapshot[i][j]
            if self.variant == "revert_124":
                past_snapshot = new_match == pending
            else:
                past_snapshot = new_match + 1 >= pending
            resume = new_match + 1 >= s.log[i].offset or past_snapshot
            if pstate == PROBE and (updated or already):
                return t._replace(
                    progressState=self._set2(t.progressState, i, j, REPLICATE),
                    nextIndex=self._set2(t.nextIndex, i, j, max(nxt, m.mmatchIndex + 1)),
                    msgAppFlowPaused=self._set2(t.msgAppFlowPaused, i, j, False),
                )
            if pstate == SNAPSHOT and updated and resume:
                return t._replace(
                    progressState=self._set2(t.progressState, i, j, REPLICATE),
                    nextIndex=self._set2(t.nextIndex, i, j, m.mmatchIndex + 1),
                    msgAppFlowPaused=self._set2(t.msgAppFlowPaused, i, j, False),
                    pendingSnapshot=self._set2(t.pendingSnapshot, i, j, 0),
                )
            t = t._replace(nextIndex=self._set2(t.nextIndex, i, j, max(nxt, m.mmatchIndex + 1)))
            if updated:
                t = t._replace(msgAppFlowPaused=self._set2(t.msgAppFlowPaused, i, j, False))
            return t
        rejected, hint = m.mmatchIndex, m.mrejectHint
        if pstate == REPLICATE:
            if rejected <= match:
                return t
            return t._replace(
                progressState=self._set2(t.progressState, i, j, PROBE),
                nextIndex=self._set2(t.nextIndex, i, j, match + 1),
                msgAppFlowPaused=self._set2(t.msgAppFlowPaused, i, j, False),
                pendingSnapshot=self._set2(t.pendingSnapshot, i, j, 0),
                inflights=self._set2(t.inflights, i, j, frozenset()),
            )
        if nxt - 1 != rejected:
            return t._replace(msgAppFlowPaused=self._set2(t.msgAppFlowPaused, i, j, False))
        leader_match = find_conflict_by_term(s.log[i], hint, m.mlogTerm)
        if leader_match > match:
            new_next = leader_match + 1
        else:
            new_next = max(min(rejected, hint + 1), match + 1)
        return t._replace(
            nextIndex=self._set2(t.nextIndex, i, j, new_next),
            msgAppFlowPaused=self._set2(t.msgAppFlowPaused, i, j, False),
        )

    # -- invariants: the MC model's first four, TLA+ names kept --------------------
    @staticmethod
    def _committed(s: EtcdState, i: ServerId) -> tuple[Entry, ...]:
        """Committed(i) == SubSeq(historyLog[i], 1, commitIndex[i])."""
        return s.historyLog[i][: s.commitIndex[i]]

    def _pairs(self) -> list[tuple[ServerId, ServerId]]:
        """Every ordered pair of distinct servers."""
        return [(i, j) for i in self.Server for j in self.Server if i != j]

    @invariant
    def LogInv(self, s: EtcdState) -> bool:
        """Committed log entries never conflict between servers."""
        for a, b in self._pairs():
            x, y = self._committed(s, a), self._committed(s, b)
            if x[: len(y)] != y and y[: len(x)] != x:
                return False
        return True

    @invariant
    def MoreThanOneLeaderInv(self, s: EtcdState) -> bool:
        """At most one leader per term at the same time."""
        leaders = [s.currentTerm[i] for i in self.Server if s.state[i] == LEADER]
        return len(set(leaders)) == len(leaders)

    @invariant
    def LogMatchingInv(self, s: EtcdState) -> bool:
        """Every (index, term) pair determines a log prefix (of the history logs)."""
        for a, b in self._pairs():
            x, y = s.historyLog[a], s.historyLog[b]
            same = [n for n in range(min(len(x), len(y))) if x[n].term == y[n].term]
            if same and x[: same[-1] + 1] != y[: same[-1] + 1]:
                return False
        return True

    @invariant
    def QuorumLogInv(self, s: EtcdState) -> bool:
        """Every quorum of a server's effective configuration holds its committed
        entries (checked where the server's configuration is up to date)."""
        for i in self.Server:
            hist = s.historyLog[i]
            conf_idx = [
                k
                for k in range(1, s.commitIndex[i] + 1)
                if k <= len(hist) and hist[k - 1].type == CONFIG_ENTRY
            ]
            if conf_idx and s.appliedConfigIndex[i] < max(conf_idx):
                continue
            voters, outgoing = s.config[i].jointConfig
            effective = outgoing if outgoing else voters
            committed = self._committed(s, i)
            holders = {j for j in self.Server if s.historyLog[j][: len(committed)] == committed}
            # A quorum with no holder exists iff the non-holders are a majority.
            if len(effective - holders) * 2 > len(effective):
                return False
        return True

    @invariant
    def MoreUpToDateCorrectInv(self, s: EtcdState) -> bool:
        """A log at least as up to date as j's holds j's committed entries."""
        for i, j in self._pairs():
            a, b = s.log[i], s.log[j]
            newer = last_term(a) > last_term(b) or (
                last_term(a) == last_term(b) and last_index(a) >= last_index(b)
            )
            committed = self._committed(s, j)
            if newer and s.historyLog[i][: len(committed)] != committed:
                return False
        return True

    @invariant
    def LeaderCompletenessInv(self, s: EtcdState) -> bool:
        """A leader holds every entry any server committed in terms up to its own."""
        for i in self.Server:
            if s.state[i] != LEADER:
                continue
            for j in self.Server:
                if i == j:
                    continue
                committed = self._committed(s, j)
                upto = [k for k in range(len(committed)) if committed[k].term <= s.currentTerm[i]]
                prefix = committed[: upto[-1] + 1] if upto else ()
                if s.historyLog[i][: len(prefix)] != prefix:
                    return False
        return True

    @invariant
    def CommittedIsDurableInv(self, s: EtcdState) -> bool:
        """What a leader has committed is persisted."""
        return all(
            s.state[i] != LEADER or s.commitIndex[i] <= s.durableState[i].log for i in self.Server
        )

    def _leader_pairs(self, s: EtcdState) -> list[tuple[ServerId, ServerId]]:
        return [(i, j) for i in self.Server if s.state[i] == LEADER for j in self.Server]

    @invariant
    def ProbeLimitInv(self, s: EtcdState) -> bool:
        """In StateProbe at most one inflight."""
        return all(
            s.progressState[i][j] != PROBE or len(s.inflights[i][j]) <= 1
            for i, j in self._leader_pairs(s)
        )

    def _replicating(self, s: EtcdState) -> list[tuple[bool, bool]]:
        """Per leader and peer in StateReplicate: (paused, inflights full)."""
        return [
            (s.msgAppFlowPaused[i][j], len(s.inflights[i][j]) >= self.MaxInflightMsgs)
            for i, j in self._leader_pairs(s)
            if s.progressState[i][j] == REPLICATE
        ]

    @invariant
    def ReplicatePauseInv(self, s: EtcdState) -> bool:
        """In StateReplicate, paused only when the inflights are full."""
        return all(full for paused, full in self._replicating(s) if paused)

    @invariant
    def SnapshotInflightsInv(self, s: EtcdState) -> bool:
        """In StateSnapshot no inflights."""
        return all(
            s.progressState[i][j] != SNAPSHOT or not s.inflights[i][j]
            for i, j in self._leader_pairs(s)
        )

    @invariant
    def InflightsLogIndexInv(self, s: EtcdState) -> bool:
        """Inflight indices lie within the leader's log."""
        return all(
            all(x <= last_index(s.log[i]) for x in s.inflights[i][j])
            for i, j in self._leader_pairs(s)
        )

    @invariant
    def InflightsMatchIndexInv(self, s: EtcdState) -> bool:
        """Inflight indices lie above matchIndex."""
        return all(
            all(x > s.matchIndex[i][j] for x in s.inflights[i][j]) for i, j in self._leader_pairs(s)
        )

    @invariant
    def InflightsInv(self, s: EtcdState) -> bool:
        """Never more inflights than MaxInflightMsgs."""
        return all(
            len(s.inflights[i][j]) <= self.MaxInflightMsgs for i in self.Server for j in self.Server
        )

    @invariant
    def NoPendingSnapshotInv(self, s: EtcdState) -> bool:
        """Outside StateSnapshot no pending snapshot."""
        return all(
            s.progressState[i][j] == SNAPSHOT or s.pendingSnapshot[i][j] == 0
            for i, j in self._leader_pairs(s)
        )

    @invariant
    def LeaderSelfReplicateInv(self, s: EtcdState) -> bool:
        """A leader's progress for itself is StateReplicate."""
        return all(s.state[i] != LEADER or s.progressState[i][i] == REPLICATE for i in self.Server)

    @invariant
    def MatchIndexLessThanLogInv(self, s: EtcdState) -> bool:
        """A leader's matchIndex for a peer lies within its log."""
        return all(
            i == j or s.matchIndex[i][j] <= last_index(s.log[i]) for i, j in self._leader_pairs(s)
        )

    @invariant
    def MatchIndexNonNegativeInv(self, s: EtcdState) -> bool:
        """0 <= Match."""
        return all(s.matchIndex[i][j] >= 0 for i in self.Server for j in self.Server)

    @invariant
    def MatchIndexLessThanNextInv(self, s: EtcdState) -> bool:
        """Match < Next (progress.go's invariant)."""
        return all(
            i == j or s.matchIndex[i][j] < s.nextIndex[i][j] for i, j in self._leader_pairs(s)
        )

    @invariant
    def MsgAppFlowPausedConsistencyInv(self, s: EtcdState) -> bool:
        """In StateReplicate, not paused means the inflights are not full."""
        return all(not full for paused, full in self._replicating(s) if not paused)

    @invariant
    def AppendEntriesPrevLogTermValidInv(self, s: EtcdState) -> bool:
        """No AppendEntries request names a previous entry with term 0 (what etcd/raft
        76f1249 fixed: after compaction the leader sent prevLogTerm = 0 and the
        follower panicked)."""
        for bag in (s.messages, s.pendingMessages):
            for m in bag:
                if isinstance(m, AEReq) and m.mprevLogIndex > 0 and m.mprevLogTerm <= 0:
                    return False
        return True

    @invariant
    def SnapshotTransitionCorrectInv(self, s: EtcdState) -> bool:
        """A follower the leader tracks in StateSnapshot has matched no further than
        the pending snapshot (Specula's invariant for etcd/raft#124: with the bug the
        leader stays in StateSnapshot after the follower has moved past it)."""
        return all(
            s.progressState[i][j] != SNAPSHOT or s.matchIndex[i][j] <= s.pendingSnapshot[i][j]
            for i, j in self._leader_pairs(s)
        )

    @invariant
    def NoConfigGapDuringElectionInv(self, s: EtcdState) -> bool:
        """A candidate has applied every configuration entry it has committed (Specula's
        invariant for etcd#7280: a candidate counting votes with a configuration it
        has already replaced)."""
        return all(s.state[i] != CANDIDATE or not self._unapplied_config(s, i) for i in self.Server)

    # -- the rest of MCetcdraft.cfg's INVARIANTS (etcdraft.tla's definitions) ------
    def _sent(self, s: EtcdState) -> list[Message]:
        """``DOMAIN messages \\union DOMAIN pendingMessages``."""
        return [*s.messages, *s.pendingMessages]

    @invariant
    def ProbeNetworkMessageLimitInv(self, s: EtcdState) -> bool:
        """In StateProbe at most one AppendEntries request (heartbeats included) from
        the leader to the peer in the network (the copies counted)."""
        for i, j in self._leader_pairs(s):
            if i == j or s.progressState[i][j] != PROBE:
                continue
            sent = sum(
                n
                for m, n in s.messages.items()
                if isinstance(m, AEReq) and m.msource == i and m.mdest == j
            )
            if sent > 1:
                return False
        return True

    @invariant
    def InflightsMonotonicInv(self, s: EtcdState) -> bool:
        """A leader's non-empty inflights have max >= min (etcdraft.tla's sanity check:
        the real constraint, monotonic Add() calls, is not a state invariant)."""
        return all(
            max(s.inflights[i][j]) >= min(s.inflights[i][j])
            for i, j in self._leader_pairs(s)
            if s.inflights[i][j]
        )

    @invariant
    def ProgressStateTypeInv(self, s: EtcdState) -> bool:
        """Every progress state is StateProbe, StateReplicate or StateSnapshot."""
        return all(
            s.progressState[i][j] in (PROBE, REPLICATE, SNAPSHOT)
            for i in self.Server
            for j in self.Server
        )

    @invariant
    def SnapshotPendingInv(self, s: EtcdState) -> bool:
        """In StateSnapshot a snapshot is pending."""
        return all(
            s.progressState[i][j] != SNAPSHOT or s.pendingSnapshot[i][j] > 0
            for i, j in self._leader_pairs(s)
        )

    @invariant
    def SnapshotStateInv(self, s: EtcdState) -> bool:
        """In StateSnapshot: no inflights, and a pending snapshot within the log."""
        return all(
            s.progressState[i][j] != SNAPSHOT
            or (not s.inflights[i][j] and 0 < s.pendingSnapshot[i][j] <= last_index(s.log[i]))
            for i, j in self._leader_pairs(s)
        )

    @invariant
    def InflightsAboveMatchInv(self, s: EtcdState) -> bool:
        """Inflight indices lie in (Match, Next): above matchIndex (etcdraft.tla states
        it twice; the same predicate as InflightsMatchIndexInv)."""
        return self.InflightsMatchIndexInv(s)

    @invariant
    def ProbeOneInflightMaxInv(self, s: EtcdState) -> bool:
        """In StateProbe at most one inflight (the same predicate as ProbeLimitInv)."""
        return self.ProbeLimitInv(s)

    @invariant
    def SnapshotNoInflightsStrictInv(self, s: EtcdState) -> bool:
        """In StateSnapshot exactly no inflights (as SnapshotInflightsInv)."""
        return self.SnapshotInflightsInv(s)

    @invariant
    def AllMessageTermsValid(self, s: EtcdState) -> bool:
        """No message carries a term above its sender's current term
        (MessageTermsLtCurrentTerm of every message)."""
        return all(m.mterm <= s.currentTerm[m.msource] for m in self._sent(s))

    @invariant
    def MessageIndexValidInv(self, s: EtcdState) -> bool:
        """AppendEntries requests carry non-negative previous and commit indices."""
        return all(
            m.mprevLogIndex >= 0 and m.mcommitIndex >= 0
            for m in self._sent(s)
            if isinstance(m, AEReq)
        )

    @invariant
    def StateMachineConsistency(self, s: EtcdState) -> bool:
        """Any two servers agree on the entries both have committed."""
        for a, b in self._pairs():
            n = min(s.commitIndex[a], s.commitIndex[b])
            if s.historyLog[a][:n] != s.historyLog[b][:n]:
                return False
        return True

    @invariant
    def CommitIndexBoundInv(self, s: EtcdState) -> bool:
        """The commit index lies within the log."""
        return all(s.commitIndex[i] <= last_index(s.log[i]) for i in self.Server)

    @invariant
    def LogTermMonotonic(self, s: EtcdState) -> bool:
        """Terms never decrease along a log (LogTerm: 0 below the snapshot)."""
        for i in self.Server:
            lg = s.log[i]
            terms = [log_term(lg, k) for k in range(1, last_index(lg) + 1)]
            if any(x > y for x, y in pairwise(terms)):
                return False
        return True

    @invariant
    def CommittedEntriesTermInv(self, s: EtcdState) -> bool:
        """Committed entries have positive terms."""
        return all(
            s.historyLog[i][k - 1].term > 0
            for i in self.Server
            for k in range(1, s.commitIndex[i] + 1)
        )

    @invariant
    def PendingConfigBoundInv(self, s: EtcdState) -> bool:
        """A leader's pending configuration index lies within its log."""
        return all(
            s.state[i] != LEADER or s.pendingConfChangeIndex[i] <= last_index(s.log[i])
            for i in self.Server
        )

    @invariant
    def LeaderLogLengthInv(self, s: EtcdState) -> bool:
        """A leader's commit index lies within its log."""
        return all(
            s.state[i] != LEADER or s.commitIndex[i] <= last_index(s.log[i]) for i in self.Server
        )

    @invariant
    def CurrentTermAtLeastLogTerm(self, s: EtcdState) -> bool:
        """No snapshot or last entry has a term above the server's current term."""
        return all(
            s.log[i].snapshotTerm <= s.currentTerm[i]
            and (not s.log[i].entries or s.log[i].entries[-1].term <= s.currentTerm[i])
            for i in self.Server
        )

    @invariant
    def CandidateVotedForSelfInv(self, s: EtcdState) -> bool:
        """A candidate has voted for itself."""
        return all(s.state[i] != CANDIDATE or s.votedFor[i] == i for i in self.Server)

    @invariant
    def DurableStateConsistency(self, s: EtcdState) -> bool:
        """What is persisted is never ahead of the term and commit index in memory."""
        return all(
            s.durableState[i].currentTerm <= s.currentTerm[i]
            and s.durableState[i].commitIndex <= s.commitIndex[i]
            for i in self.Server
        )

    @invariant
    def MessageEndpointsValidInv(self, s: EtcdState) -> bool:
        """Every message goes between servers."""
        servers = set(self.Server)
        return all(m.msource in servers and m.mdest in servers for m in self._sent(s))

    @invariant
    def LeaderDurableTermInv(self, s: EtcdState) -> bool:
        """A leader's term is persisted."""
        return all(
            s.state[i] != LEADER or s.durableState[i].currentTerm == s.currentTerm[i]
            for i in self.Server
        )

    @invariant
    def LogOffsetMinInv(self, s: EtcdState) -> bool:
        """Log offsets start at 1."""
        return all(s.log[i].offset >= 1 for i in self.Server)

    @invariant
    def SnapshotOffsetConsistencyInv(self, s: EtcdState) -> bool:
        """The snapshot ends where the entries begin: snapshotIndex = offset - 1."""
        return all(s.log[i].snapshotIndex == s.log[i].offset - 1 for i in self.Server)

    @invariant
    def SnapshotTermValidInv(self, s: EtcdState) -> bool:
        """A snapshot has a positive term."""
        return all(s.log[i].snapshotIndex <= 0 or s.log[i].snapshotTerm > 0 for i in self.Server)

    @invariant
    def SnapshotTermBoundInv(self, s: EtcdState) -> bool:
        """A snapshot's term is not above the current term."""
        return all(s.log[i].snapshotTerm <= s.currentTerm[i] for i in self.Server)

    @invariant
    def HistoryLogLengthInv(self, s: EtcdState) -> bool:
        """The history log is as long as the log."""
        return all(len(s.historyLog[i]) == last_index(s.log[i]) for i in self.Server)

    @invariant
    def SnapshotCommitConsistencyInv(self, s: EtcdState) -> bool:
        """A snapshot covers committed entries only."""
        return all(s.log[i].snapshotIndex <= s.commitIndex[i] for i in self.Server)

    @invariant
    def JointConfigNonEmptyInv(self, s: EtcdState) -> bool:
        """A joint configuration has voters on both sides."""
        return all(
            not s.config[i].jointConfig[1] or bool(s.config[i].jointConfig[0]) for i in self.Server
        )

    @invariant
    def SingleConfigOutgoingEmptyInv(self, s: EtcdState) -> bool:
        """Outside a joint configuration the outgoing voters are empty (true by
        IsJointConfig's definition, as in etcdraft.tla)."""
        return all(
            bool(s.config[i].jointConfig[1]) or not s.config[i].jointConfig[1] for i in self.Server
        )

    @invariant
    def LearnersVotersDisjointInv(self, s: EtcdState) -> bool:
        """No learner is a voter, incoming or outgoing (tracker.go's invariant)."""
        return all(
            not (s.config[i].learners & (s.config[i].jointConfig[0] | s.config[i].jointConfig[1]))
            for i in self.Server
        )

    @invariant
    def ConfigNonEmptyInv(self, s: EtcdState) -> bool:
        """A server with a log whose last configuration entry is applied has voters."""
        for i in self.Server:
            k = last_config_index(s.historyLog[i])
            applied = k == 0 or s.appliedConfigIndex[i] >= k
            if last_index(s.log[i]) > 0 and applied and not s.config[i].jointConfig[0]:
                return False
        return True

    @invariant
    def PendingConfIndexValidInv(self, s: EtcdState) -> bool:
        """A leader's pending (unapplied) configuration index is in its memory log."""
        return all(
            s.state[i] != LEADER
            or s.pendingConfChangeIndex[i] <= s.applied[i]
            or s.log[i].offset <= s.pendingConfChangeIndex[i] <= last_index(s.log[i])
            for i in self.Server
        )

    @invariant
    def NextIndexPositiveInv(self, s: EtcdState) -> bool:
        """A leader's nextIndex is at least 1."""
        return all(s.nextIndex[i][j] >= 1 for i, j in self._leader_pairs(s))

    @invariant
    def NextIndexBoundInv(self, s: EtcdState) -> bool:
        """A leader's nextIndex is at most its last index + 1."""
        return all(s.nextIndex[i][j] <= last_index(s.log[i]) + 1 for i, j in self._leader_pairs(s))

    @invariant
    def MatchIndexBoundInv(self, s: EtcdState) -> bool:
        """A leader's matchIndex (itself included) is within its log."""
        return all(s.matchIndex[i][j] <= last_index(s.log[i]) for i, j in self._leader_pairs(s))

    @invariant
    def PendingSnapshotBoundInv(self, s: EtcdState) -> bool:
        """A pending snapshot lies within the leader's log."""
        return all(
            s.pendingSnapshot[i][j] <= last_index(s.log[i]) for i, j in self._leader_pairs(s)
        )

    @invariant
    def SnapshotMsgIndexValidInv(self, s: EtcdState) -> bool:
        """A snapshot message's index is at most its sender's applied index."""
        return all(
            m.msnapshotIndex <= s.applied[m.msource]
            for m in self._sent(s)
            if isinstance(m, SnapReq)
        )

    @invariant
    def SnapshotMsgTermValidInv(self, s: EtcdState) -> bool:
        """A snapshot message's term is positive and at most the message's term."""
        return all(0 < m.msnapshotTerm <= m.mterm for m in self._sent(s) if isinstance(m, SnapReq))

    @invariant
    def AppendEntriesPrevIndexNonNegInv(self, s: EtcdState) -> bool:
        """AppendEntries requests carry a non-negative previous index."""
        return all(m.mprevLogIndex >= 0 for m in self._sent(s) if isinstance(m, AEReq))

    @invariant
    def AppendEntriesCommitBoundInv(self, s: EtcdState) -> bool:
        """AppendEntries requests carry a non-negative commit index."""
        return all(m.mcommitIndex >= 0 for m in self._sent(s) if isinstance(m, AEReq))

    @invariant
    def VoteRequestLogIndexNonNegInv(self, s: EtcdState) -> bool:
        """Vote requests carry a non-negative last log index."""
        return all(m.mlastLogIndex >= 0 for m in self._sent(s) if isinstance(m, RVReq))

    @invariant
    def VoteRequestLogTermNonNegInv(self, s: EtcdState) -> bool:
        """Vote requests carry a non-negative last log term."""
        return all(m.mlastLogTerm >= 0 for m in self._sent(s) if isinstance(m, RVReq))

    @invariant
    def AppendEntriesTermConsistentInv(self, s: EtcdState) -> bool:
        """No entry an AppendEntries request carries has a term above the request's."""
        return all(
            e.term <= m.mterm for m in self._sent(s) if isinstance(m, AEReq) for e in m.mentries
        )

    @invariant
    def SnapshotMsgIndexPositiveInv(self, s: EtcdState) -> bool:
        """A snapshot message's index is positive."""
        return all(m.msnapshotIndex > 0 for m in self._sent(s) if isinstance(m, SnapReq))

    @invariant
    def ResponseTermPositiveInv(self, s: EtcdState) -> bool:
        """Vote and AppendEntries responses carry a positive term."""
        return all(m.mterm > 0 for m in self._sent(s) if isinstance(m, RVResp | AEResp))

    @invariant
    def InflightsOnlyInReplicateInv(self, s: EtcdState) -> bool:
        """Only StateReplicate has inflights."""
        return all(
            s.progressState[i][j] == REPLICATE or not s.inflights[i][j]
            for i, j in self._leader_pairs(s)
        )

    @invariant
    def InflightsBelowNextInv(self, s: EtcdState) -> bool:
        """Inflight indices lie below nextIndex."""
        return all(
            all(x < s.nextIndex[i][j] for x in s.inflights[i][j]) for i, j in self._leader_pairs(s)
        )

    @invariant
    def TermPositiveInv(self, s: EtcdState) -> bool:
        """Terms are non-negative (as etcdraft.tla states it)."""
        return all(s.currentTerm[i] >= 0 for i in self.Server)

    @invariant
    def LeaderTermPositiveInv(self, s: EtcdState) -> bool:
        """A leader's term is positive."""
        return all(s.state[i] != LEADER or s.currentTerm[i] > 0 for i in self.Server)

    @invariant
    def CandidateTermPositiveInv(self, s: EtcdState) -> bool:
        """A candidate's term is positive."""
        return all(s.state[i] != CANDIDATE or s.currentTerm[i] > 0 for i in self.Server)

    @invariant
    def VotesGrantedSubsetInv(self, s: EtcdState) -> bool:
        """A candidate's granted votes are among its responses."""
        return all(
            s.state[i] != CANDIDATE or s.votesGranted[i] <= s.votesResponded[i] for i in self.Server
        )

    def _uncommitted_leave_joints(self, s: EtcdState, i: ServerId) -> list[int]:
        """The indices of i's uncommitted, available entries that leave a joint
        configuration."""
        lg = s.log[i]
        return [
            k
            for k in range(max(s.commitIndex[i] + 1, lg.offset), last_index(lg) + 1)
            if lg.entries[k - lg.offset].type == CONFIG_ENTRY
            and isinstance(lg.entries[k - lg.offset].value, LeaveVal)
            and lg.entries[k - lg.offset].value.leaveJoint
        ]

    def _joint_leaders(self, s: EtcdState) -> list[ServerId]:
        return [i for i in self.Server if s.state[i] == LEADER and s.config[i].jointConfig[1]]

    @invariant
    def SinglePendingLeaveJointInv(self, s: EtcdState) -> bool:
        """A leader in an auto-leaving joint configuration has at most one
        uncommitted leave-joint entry (etcd/raft bd3c759)."""
        return all(
            not s.config[i].autoLeave or len(self._uncommitted_leave_joints(s, i)) <= 1
            for i in self._joint_leaders(s)
        )

    @invariant
    def PendingConfIndexAutoLeaveInv(self, s: EtcdState) -> bool:
        """A joint leader's pending configuration index covers its first uncommitted
        leave-joint entry (etcd/raft bd3c759)."""
        for i in self._joint_leaders(s):
            leaves = self._uncommitted_leave_joints(s, i)
            if leaves and s.pendingConfChangeIndex[i] < min(leaves):
                return False
        return True

    @invariant
    def AppliedBoundInv(self, s: EtcdState) -> bool:
        """Nothing is applied beyond the commit index."""
        return all(s.applied[i] <= s.commitIndex[i] for i in self.Server)

    @invariant
    def MessageDestinationValidInv(self, s: EtcdState) -> bool:
        """Every message goes between servers (as MessageEndpointsValidInv)."""
        return self.MessageEndpointsValidInv(s)

    @invariant
    def AppliedConfigBoundInv(self, s: EtcdState) -> bool:
        """No configuration is applied beyond the commit index."""
        return all(s.appliedConfigIndex[i] <= s.commitIndex[i] for i in self.Server)

    @invariant
    def VotedForConsistencyInv(self, s: EtcdState) -> bool:
        """A vote goes to a server."""
        servers = set(self.Server)
        return all(s.votedFor[i] is None or s.votedFor[i] in servers for i in self.Server)

    @invariant
    def LeaderCurrentTermEntriesInv(self, s: EtcdState) -> bool:
        """Every available entry of the leader's term, on any server, is in the
        leader's memory log with that term."""
        for leader in self.Server:
            if s.state[leader] != LEADER:
                continue
            term, own = s.currentTerm[leader], s.log[leader]
            for other in self.Server:
                lg = s.log[other]
                for k, e in enumerate(lg.entries, start=lg.offset):
                    if e.term != term:
                        continue
                    if not own.offset <= k <= last_index(own):
                        return False
                    if own.entries[k - own.offset].term != term:
                        return False
        return True

    @invariant
    def RequestVoteTermBoundInv(self, s: EtcdState) -> bool:
        """A vote request has a positive term, and its last log term is not above it."""
        return all(
            m.mterm > 0 and m.mlastLogTerm <= m.mterm for m in self._sent(s) if isinstance(m, RVReq)
        )

    @invariant
    def AppendEntriesResponseTermInv(self, s: EtcdState) -> bool:
        """AppendEntries responses carry a positive term."""
        return all(m.mterm > 0 for m in self._sent(s) if isinstance(m, AEResp))

    @invariant
    def TermNeverZeroInLogInv(self, s: EtcdState) -> bool:
        """No entry in a memory log has term 0."""
        return all(e.term > 0 for i in self.Server for e in s.log[i].entries)

    # -- MCetcdraft.cfg's PROPERTIES: action properties ([][A]_mc_vars) -------------
    def _is_restart(self, s: EtcdState, t: EtcdState) -> bool:
        """``\\E i \\in Server: Restart(i)`` of the step s -> t: etcdraft.tla's Restart,
        so the MC counter is not compared."""
        for i in self.Server:
            d = s.durableState[i]
            if t.state[i] != FOLLOWER or t.currentTerm[i] != d.currentTerm:
                continue  # cheap necessary conditions first: most steps are not restarts
            after = self._restarted(s, i)._replace(constraintCounters=t.constraintCounters)
            if strict_equal(after, t):
                return True
        return False

    def _is_become_leader(self, s: EtcdState, t: EtcdState) -> bool:
        """``\\E i \\in Server: BecomeLeader(i)`` of the step s -> t."""
        for i in self.Server:
            if s.state[i] != CANDIDATE or t.state[i] != LEADER:
                continue
            after = self.BecomeLeader(s, i)
            if after is not None and strict_equal(after, t):
                return True
        return False

    @action_property
    def MonotonicCommitIndexProp(self, s: EtcdState, t: EtcdState) -> bool:
        """No commit index decreases, but in a restart."""
        if all(t.commitIndex[i] >= s.commitIndex[i] for i in self.Server):
            return True
        return self._is_restart(s, t)

    @action_property
    def MonotonicTermProp(self, s: EtcdState, t: EtcdState) -> bool:
        """No term decreases, but in a restart."""
        if all(t.currentTerm[i] >= s.currentTerm[i] for i in self.Server):
            return True
        return self._is_restart(s, t)

    @action_property
    def MonotonicMatchIndexProp(self, s: EtcdState, t: EtcdState) -> bool:
        """No matchIndex of a server tracked before and after decreases, but when a
        server becomes leader or restarts."""
        for i in self.Server:
            before, after = s.config[i], t.config[i]
            tracked = (
                (before.jointConfig[0] | before.jointConfig[1] | before.learners)
                & (after.jointConfig[0] | after.jointConfig[1] | after.learners)
            )  # fmt: skip
            if any(t.matchIndex[i][j] < s.matchIndex[i][j] for j in tracked):
                return self._is_become_leader(s, t) or self._is_restart(s, t)
        return True

    @action_property
    def LeaderCommitCurrentTermLogsProp(self, s: EtcdState, t: EtcdState) -> bool:
        """A leader moves its commit index only to an entry of its current term."""
        return all(
            t.state[i] != LEADER
            or s.commitIndex[i] == t.commitIndex[i]
            or t.historyLog[i][t.commitIndex[i] - 1].term == t.currentTerm[i]
            for i in self.Server
        )

    @action_property
    def LeaderAppendOnlyProp(self, s: EtcdState, t: EtcdState) -> bool:
        """A server leading before and after the step only appends to its log."""
        for i in self.Server:
            if s.state[i] != LEADER or t.state[i] != LEADER:
                continue
            n = last_index(s.log[i])
            if last_index(t.log[i]) < n or t.historyLog[i][:n] != s.historyLog[i][:n]:
                return False
        return True

    @action_property
    def CommittedEntriesPersistProp(self, s: EtcdState, t: EtcdState) -> bool:
        """Committed entries stay in every history log, but in a restart."""
        if all(
            t.historyLog[i][: s.commitIndex[i]] == s.historyLog[i][: s.commitIndex[i]]
            for i in self.Server
        ):
            return True
        return self._is_restart(s, t)


# Specula's traces of etcd/raft (Traceetcdraft.tla's reading of them), for
# ``mcheck validate etcd_raft TRACE.ndjson``.
from ._etcd_raft_specula import SPECULA_MAPPING  # noqa: E402

EtcdRaft.log_mapping = SPECULA_MAPPING
