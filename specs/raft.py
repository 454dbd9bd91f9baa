"""The Raft consensus algorithm: a faithful translation of Diego Ongaro's ``raft.tla``.

Source: github.com/ongardie/raft.tla, commit 6ecbdbc (February 2025).  Same variables
(history variables ``elections``, ``allLogs`` and ``voterLog`` included), same actions
and the same message-bag semantics: ``messages`` maps each message to its count; a send
adds a copy, a delivery or a drop removes one, and a message whose last copy goes
leaves the bag's domain.  ``allLogs`` is extended with the *current* logs on every step,
exactly as ``Next`` does.

Indices are TLA+'s, 1-based: ``log[i]`` is a tuple whose entry ``k`` is ``log[i][k-1]``.
TLA+ functions are ``immutables.Map`` (a C hash-array-mapped trie: lookups and updates
are 10x faster than pyrsistent's pure-Python ``pmap``, which halves the run time of
this spec); TLA+ sets are ``frozenset`` and sequences are tuples.

The state constraint is the usual bounded model: every ``currentTerm <= MaxTerm``,
every log no longer than ``MaxLogLen``, at most ``MaxMsgs`` distinct messages in the
bag's domain and no message with more than one copy.  With 3 servers, ``Value = {v1}``,
``MaxTerm = 2``, ``MaxMsgs = 1`` and no symmetry, TLC reports 705,532 distinct states
(depth 39) for ``MaxLogLen = 0`` and 2,379,781 (depth 53) for ``MaxLogLen = 1``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from immutables import Map

from checker import Spec, action, in_order, invariant, model_values, named_values
from checker.check.validate import LogMapping
from checker.values import ModelValue, put
from mcheck_shipped.invariants.raft import committed_logs_agree, election_safety

ServerId = ModelValue

FOLLOWER, CANDIDATE, LEADER = "Follower", "Candidate", "Leader"
NIL = None

RequestVoteRequest = "RequestVoteRequest"
RequestVoteResponse = "RequestVoteResponse"
AppendEntriesRequest = "AppendEntriesRequest"
AppendEntriesResponse = "AppendEntriesResponse"


class Entry(NamedTuple):
    """A log entry ``[term |-> t, value |-> v]``."""

    term: int
    value: Any


Log = tuple[Entry, ...]


class RVRequest(NamedTuple):
    """A RequestVoteRequest message."""

    mtype: str
    mterm: int
    mlastLogTerm: int
    mlastLogIndex: int
    msource: ServerId
    mdest: ServerId


class RVResponse(NamedTuple):
    """A RequestVoteResponse message (``mlog`` is a history field for the proof)."""

    mtype: str
    mterm: int
    mvoteGranted: bool
    mlog: Log
    msource: ServerId
    mdest: ServerId


class AERequest(NamedTuple):
    """An AppendEntriesRequest message (``mlog`` is a history field for the proof)."""

    mtype: str
    mterm: int
    mprevLogIndex: int
    mprevLogTerm: int
    mentries: Log
    mlog: Log
    mcommitIndex: int
    msource: ServerId
    mdest: ServerId


class AEResponse(NamedTuple):
    """An AppendEntriesResponse message."""

    mtype: str
    mterm: int
    msuccess: bool
    mmatchIndex: int
    msource: ServerId
    mdest: ServerId


Message = RVRequest | RVResponse | AERequest | AEResponse


class Election(NamedTuple):
    """One record of the ``elections`` history variable."""

    eterm: int
    eleader: ServerId
    elog: Log
    evotes: frozenset[ServerId]
    evoterLog: Map[ServerId, Log]


class RaftState(NamedTuple):
    """The variables of raft.tla, in its declaration order."""

    messages: Map[Message, int]
    elections: frozenset[Election]
    allLogs: frozenset[Log]
    currentTerm: Map[ServerId, int]
    state: Map[ServerId, str]
    votedFor: Map[ServerId, ServerId | None]
    log: Map[ServerId, Log]
    commitIndex: Map[ServerId, int]
    votesResponded: Map[ServerId, frozenset[ServerId]]
    votesGranted: Map[ServerId, frozenset[ServerId]]
    voterLog: Map[ServerId, Map[ServerId, Log]]
    nextIndex: Map[ServerId, Map[ServerId, int]]
    matchIndex: Map[ServerId, Map[ServerId, int]]


EMPTY_SET: frozenset[Any] = frozenset()
EMPTY_MAP: Map[Any, Any] = Map()


def with_message(m: Message, msgs: Map[Message, int]) -> Map[Message, int]:
    """WithMessage: one more copy of ``m`` in the bag."""
    return msgs.set(m, msgs.get(m, 0) + 1)


def without_message(m: Message, msgs: Map[Message, int]) -> Map[Message, int]:
    """WithoutMessage: one copy fewer; the last copy leaves the bag's domain."""
    n = msgs.get(m, 0)
    if n == 0:
        return msgs
    if n <= 1:
        return msgs.delete(m)
    return msgs.set(m, n - 1)


def last_term(xlog: Log) -> int:
    """LastTerm: the term of the last entry, or 0 for an empty log."""
    return xlog[-1].term if xlog else 0


class Raft(Spec):
    """raft.tla: leader election, log replication and commitment, with a lossy,
    duplicating network."""

    constants = {
        "Server": model_values("s", 3, group="Server"),
        "Value": named_values(["v1"], "Value"),
        "MaxTerm": 2,
        "MaxLogLen": 1,
        "MaxMsgs": 1,
    }
    variants = ("default",)
    symmetry = ("Server",)
    #: TLC's counterexamples of raft.tla (``mcheck replay raft --from-tlc FILE``):
    #: the model value ``Nil`` is None here; every other name is raft.tla's own.
    tla_mapping = LogMapping(events={}, values={"Nil": NIL})

    Server: tuple[ModelValue, ...]
    Value: tuple[ModelValue, ...]
    MaxTerm: int
    MaxLogLen: int
    MaxMsgs: int

    def validate(self) -> None:
        """Keep the quorum arithmetic meaningful."""
        if len(self.Server) < 1:
            from checker import ConfigError

            raise ConfigError("Server must hold at least one server")
        # [j \in Server |-> 1] and [j \in Server |-> 0], built once and shared.
        self._all_ones = Map(dict.fromkeys(self.Server, 1))
        self._all_zeros = Map(dict.fromkeys(self.Server, 0))

    # -- helpers ------------------------------------------------------------------
    def _quorum(self, voters: frozenset[ServerId]) -> bool:
        return len(voters) * 2 > len(self.Server)

    def _next(self, s: RaftState, **changes: Any) -> RaftState:
        """Apply ``changes`` and the allLogs history update that every step makes."""
        all_logs = s.allLogs
        if not all_logs.issuperset(s.log.values()):
            all_logs = all_logs.union(s.log.values())
        return s._replace(allLogs=all_logs, **changes)

    # -- Init ---------------------------------------------------------------------
    def init(self) -> list[RaftState]:
        """Init: term 1, every server a follower with an empty log, no messages."""
        servers = self.Server
        return [
            RaftState(
                messages=Map(),
                elections=EMPTY_SET,
                allLogs=EMPTY_SET,
                currentTerm=Map(dict.fromkeys(servers, 1)),
                state=Map(dict.fromkeys(servers, FOLLOWER)),
                votedFor=Map(dict.fromkeys(servers, NIL)),
                log=Map(dict.fromkeys(servers, ())),
                commitIndex=Map(dict.fromkeys(servers, 0)),
                votesResponded=Map(dict.fromkeys(servers, EMPTY_SET)),
                votesGranted=Map(dict.fromkeys(servers, EMPTY_SET)),
                voterLog=Map(dict.fromkeys(servers, EMPTY_MAP)),
                nextIndex=Map(dict.fromkeys(servers, self._all_ones)),
                matchIndex=Map(dict.fromkeys(servers, self._all_zeros)),
            )
        ]

    def constraint(self, s: RaftState) -> bool:
        """Bounded model: terms, log lengths, distinct messages and copies."""
        msgs = s.messages
        if len(msgs) > self.MaxMsgs or max(msgs.values(), default=0) > 1:
            return False
        if max(s.currentTerm.values()) > self.MaxTerm:
            return False
        return max(map(len, s.log.values())) <= self.MaxLogLen

    # -- Next ---------------------------------------------------------------------
    @action(over="Server")
    def Restart(self, s: RaftState, i: ServerId) -> RaftState:
        """Server i restarts from stable storage: it keeps currentTerm, votedFor, log."""
        return self._next(
            s,
            state=put(s.state, i, FOLLOWER),
            votesResponded=put(s.votesResponded, i, EMPTY_SET),
            votesGranted=put(s.votesGranted, i, EMPTY_SET),
            voterLog=put(s.voterLog, i, EMPTY_MAP),
            nextIndex=put(s.nextIndex, i, self._all_ones),
            matchIndex=put(s.matchIndex, i, self._all_zeros),
            commitIndex=put(s.commitIndex, i, 0),
        )

    @action(over="Server")
    def Timeout(self, s: RaftState, i: ServerId) -> RaftState | None:
        """Server i times out and starts a new election."""
        if s.state[i] not in (FOLLOWER, CANDIDATE):
            return None
        return self._next(
            s,
            state=put(s.state, i, CANDIDATE),
            currentTerm=put(s.currentTerm, i, s.currentTerm[i] + 1),
            votedFor=put(s.votedFor, i, NIL),
            votesResponded=put(s.votesResponded, i, EMPTY_SET),
            votesGranted=put(s.votesGranted, i, EMPTY_SET),
            voterLog=put(s.voterLog, i, EMPTY_MAP),
        )

    @action(over=("Server", "Server"))
    def RequestVote(self, s: RaftState, i: ServerId, j: ServerId) -> RaftState | None:
        """Candidate i sends j a RequestVote request."""
        if s.state[i] != CANDIDATE or j in s.votesResponded[i]:
            return None
        li = s.log[i]
        m = RVRequest(RequestVoteRequest, s.currentTerm[i], last_term(li), len(li), i, j)
        return self._next(s, messages=with_message(m, s.messages))

    @action(over="Server")
    def BecomeLeader(self, s: RaftState, i: ServerId) -> RaftState | None:
        """Candidate i transitions to leader."""
        if s.state[i] != CANDIDATE or not self._quorum(s.votesGranted[i]):
            return None
        li = s.log[i]
        election = Election(s.currentTerm[i], i, li, s.votesGranted[i], s.voterLog[i])
        return self._next(
            s,
            state=put(s.state, i, LEADER),
            nextIndex=put(s.nextIndex, i, Map({j: len(li) + 1 for j in self.Server})),
            matchIndex=put(s.matchIndex, i, self._all_zeros),
            elections=s.elections | {election},
        )

    @action(over=("Server", "Value"))
    def ClientRequest(self, s: RaftState, i: ServerId, v: Any) -> RaftState | None:
        """Leader i receives a client request to add v to the log."""
        if s.state[i] != LEADER:
            return None
        entry = Entry(s.currentTerm[i], v)
        return self._next(s, log=put(s.log, i, (*s.log[i], entry)))

    @action(over="Server")
    def AdvanceCommitIndex(self, s: RaftState, i: ServerId) -> RaftState | None:
        """Leader i advances its commitIndex to the highest index a quorum agrees on,
        if that entry is from its current term."""
        if s.state[i] != LEADER:
            return None
        li = s.log[i]
        match = s.matchIndex[i]
        agree = [
            index
            for index in range(1, len(li) + 1)
            if self._quorum(frozenset({i} | {k for k in self.Server if match[k] >= index}))
        ]
        new_commit = s.commitIndex[i]
        if agree and li[max(agree) - 1].term == s.currentTerm[i]:
            new_commit = max(agree)
        return self._next(s, commitIndex=put(s.commitIndex, i, new_commit))

    @action(over=("Server", "Server"))
    def AppendEntries(self, s: RaftState, i: ServerId, j: ServerId) -> RaftState | None:
        """Leader i sends j an AppendEntries request containing up to 1 entry."""
        if i == j or s.state[i] != LEADER:
            return None
        li = s.log[i]
        nxt = s.nextIndex[i][j]
        prev_index = nxt - 1
        prev_term = li[prev_index - 1].term if prev_index > 0 else 0
        last_entry = min(len(li), nxt)
        entries = li[nxt - 1 : last_entry]
        m = AERequest(
            AppendEntriesRequest,
            s.currentTerm[i],
            prev_index,
            prev_term,
            entries,
            li,
            min(s.commitIndex[i], last_entry),
            i,
            j,
        )
        return self._next(s, messages=with_message(m, s.messages))

    @action(
        over_state=lambda self, s: in_order(s.messages.keys()),
        actor=lambda self, s, m: m.mdest,
    )
    def Receive(self, s: RaftState, m: Message) -> RaftState | None:
        """Receive a message: update the term first, drop stale responses, or handle it."""
        i, j = m.mdest, m.msource
        if m.mterm > s.currentTerm[i]:
            return self._update_term(s, i, m)
        if m.mtype == RequestVoteRequest:
            assert isinstance(m, RVRequest)
            return self._handle_request_vote_request(s, i, j, m)
        if m.mtype == RequestVoteResponse:
            assert isinstance(m, RVResponse)
            if m.mterm < s.currentTerm[i]:
                return self._next(s, messages=without_message(m, s.messages))
            return self._handle_request_vote_response(s, i, j, m)
        if m.mtype == AppendEntriesRequest:
            assert isinstance(m, AERequest)
            return self._handle_append_entries_request(s, i, j, m)
        assert isinstance(m, AEResponse)
        if m.mterm < s.currentTerm[i]:
            return self._next(s, messages=without_message(m, s.messages))
        return self._handle_append_entries_response(s, i, j, m)

    @action(over_state=lambda self, s: in_order(s.messages.keys()))
    def DuplicateMessage(self, s: RaftState, m: Message) -> RaftState:
        """The network duplicates a message."""
        return self._next(s, messages=with_message(m, s.messages))

    @action(over_state=lambda self, s: in_order(s.messages.keys()))
    def DropMessage(self, s: RaftState, m: Message) -> RaftState:
        """The network drops a message."""
        return self._next(s, messages=without_message(m, s.messages))

    # -- message handlers (i = recipient, j = sender) -------------------------------
    def _update_term(self, s: RaftState, i: ServerId, m: Message) -> RaftState:
        """UpdateTerm: adopt the newer term as a follower; m stays to be processed."""
        return self._next(
            s,
            currentTerm=put(s.currentTerm, i, m.mterm),
            state=put(s.state, i, FOLLOWER),
            votedFor=put(s.votedFor, i, NIL),
        )

    def _handle_request_vote_request(
        self, s: RaftState, i: ServerId, j: ServerId, m: RVRequest
    ) -> RaftState:
        li = s.log[i]
        my_last = last_term(li)
        log_ok = m.mlastLogTerm > my_last or (
            m.mlastLogTerm == my_last and m.mlastLogIndex >= len(li)
        )
        ct = s.currentTerm[i]
        grant = m.mterm == ct and log_ok and s.votedFor[i] in (NIL, j)
        reply = RVResponse(RequestVoteResponse, ct, grant, li, i, j)
        messages = without_message(m, with_message(reply, s.messages))
        if grant:
            return self._next(s, votedFor=put(s.votedFor, i, j), messages=messages)
        return self._next(s, messages=messages)

    def _handle_request_vote_response(
        self, s: RaftState, i: ServerId, j: ServerId, m: RVResponse
    ) -> RaftState:
        changes: dict[str, Any] = {
            "votesResponded": put(s.votesResponded, i, s.votesResponded[i] | {j}),
            "messages": without_message(m, s.messages),
        }
        if m.mvoteGranted:
            changes["votesGranted"] = put(s.votesGranted, i, s.votesGranted[i] | {j})
            voters = s.voterLog[i]
            # voterLog[i] @@ (j :> m.mlog): @@ keeps the left value for a known j.
            if j not in voters:
                changes["voterLog"] = put(s.voterLog, i, voters.set(j, m.mlog))
        return self._next(s, **changes)

    def _handle_append_entries_request(
        self, s: RaftState, i: ServerId, j: ServerId, m: AERequest
    ) -> RaftState | None:
        li = s.log[i]
        ct = s.currentTerm[i]
        role = s.state[i]
        prev = m.mprevLogIndex
        log_ok = prev == 0 or (0 < prev <= len(li) and m.mprevLogTerm == li[prev - 1].term)
        if m.mterm < ct or (m.mterm == ct and role == FOLLOWER and not log_ok):
            # Reject the request.
            reply = AEResponse(AppendEntriesResponse, ct, False, 0, i, j)
            return self._next(s, messages=without_message(m, with_message(reply, s.messages)))
        if m.mterm == ct and role == CANDIDATE:
            # Return to follower state; the message stays to be processed again.
            return self._next(s, state=put(s.state, i, FOLLOWER))
        if not (m.mterm == ct and role == FOLLOWER and log_ok):
            return None
        index = prev + 1
        entries = m.mentries
        if not entries or (len(li) >= index and li[index - 1].term == entries[0].term):
            # Already done with the request.
            reply = AEResponse(AppendEntriesResponse, ct, True, prev + len(entries), i, j)
            return self._next(
                s,
                commitIndex=put(s.commitIndex, i, m.mcommitIndex),
                messages=without_message(m, with_message(reply, s.messages)),
            )
        if len(li) >= index:
            # Conflict: remove 1 entry (the last one).
            return self._next(s, log=put(s.log, i, li[:-1]))
        if len(li) == prev:
            # No conflict: append the entry.
            return self._next(s, log=put(s.log, i, (*li, entries[0])))
        return None

    def _handle_append_entries_response(
        self, s: RaftState, i: ServerId, j: ServerId, m: AEResponse
    ) -> RaftState:
        messages = without_message(m, s.messages)
        if m.msuccess:
            return self._next(
                s,
                nextIndex=put(s.nextIndex, i, put(s.nextIndex[i], j, m.mmatchIndex + 1)),
                matchIndex=put(s.matchIndex, i, put(s.matchIndex[i], j, m.mmatchIndex)),
                messages=messages,
            )
        back = max(s.nextIndex[i][j] - 1, 1)
        return self._next(
            s, nextIndex=put(s.nextIndex, i, put(s.nextIndex[i], j, back)), messages=messages
        )

    # -- invariants ---------------------------------------------------------------
    @invariant
    def ElectionSafety(self, s: RaftState) -> bool:
        """Two leaders never share a term."""
        return election_safety(s.state, s.currentTerm)

    @invariant
    def CommittedLogsAgree(self, s: RaftState) -> bool:
        """Entries up to both commit indexes (and both log lengths) agree."""
        return committed_logs_agree(s.log, s.commitIndex)
