"""RATIS-2605: a heartbeat SUCCESS advances the leader's matchIndex from the follower's
reply nextIndex, past what the follower shares with the leader.

Mechanism (Ratis ``LogAppenderDefault.handleReply`` before commit 6aafce539).  A
follower answers a heartbeat whose previous entry matches with SUCCESS and
``nextIndex = its own log end``.  The leader took that value as the new nextIndex and
set ``matchIndex = nextIndex - 1``.  After an election, a follower with an uncommitted
tail of an older term (longer than the new leader's log) answers the first heartbeat
with its log end: the leader believes it matches up to there, commits on that belief
(CommitImpliesQuorumReplication fails), never sends the entries that would truncate
the tail (nextIndex is past its own log, so only heartbeats go out, or it oscillates
between two values above the divergence), and in the worst case a committed entry is
lost (StateMachineSafety).  The fix: for a heartbeat, ``new = max(old, previousIndex +
1)``; replies to appends with entries are unchanged.

Model (the brief ``ratis_heartbeat_match_index``): raft.tla's variables and actions
with Ratis index conventions (0-based, -1 = none) and Ratis reply handling; a startup
entry appended by each new leader; messages a set with at most ``MaxMsgs`` in flight
and one outstanding AppendEntries per leader-follower pair (``LogAppenderDefault`` is
synchronous).  The heartbeat/entries choice (``hb``) stands for the heartbeat timer:
``hb=True`` sends a heartbeat, ``hb=False`` the entries from nextIndex and is not
enabled when there are none.

Initial states: ``Init=seeded`` (default, reachable from ``empty``): s1 leads term 1
with ``log[s1] = <<1, 1, 1>>`` (startup entry committed, two client entries unsent),
``log[s2] = log[s3] = <<1>>``; ``empty``: raft.tla's Init with Ratis conventions.
Configuration ``deep`` (MaxTerm=3, MaxMsgs=1) reaches the lost committed entry.

Abstractions and soundness: no snapshots, purges, configuration changes, pre-vote or
leases (the bug lives in heartbeat reply handling and needs none); the startup entry
is kept because it creates the divergence at the new leader's first index; the
message bound loses no counterexample (each needs one message at a time); the commit
rule is the majority value of the leader's own last index and its followers'
matchIndex (the 3-server median).

Variants: ``bug``; ``fix`` (the patch of commit 6aafce539); ``fix_and_commit_guard``
(the fix plus an ``effectiveCommitIndex`` that counts from -1 for a request with no
previous entry: see the finding below); ``mutant_fix_with_previous_only`` (the fix
applied only to heartbeats that carry a previous entry, which is all the report's
unit test 2 exercises: kept so the gate shows it is caught); ``mutant_max_on_every_success``
(see Progress below).

Results (engine, pinned in ``tests/test_seed_ratis.py``): ``bug`` violates
MatchIndexSound in 8 actions and CommitImpliesQuorumReplication in 9 at the defaults,
and StateMachineSafety in 21 in ``deep``; ``fix`` holds all three exhaustively from
the ``seeded`` initial state (defaults, ``MaxMsgs=1``, ``deep``), and MatchIndexSound
and CommitImpliesQuorumReplication from ``empty`` (MaxTerm=3, MaxMsgs=1), where the
mutant fails MatchIndexSound in 13.  StateMachineSafety also requires every commit
index to lie within its server's log (raft.tla's form would not see a commit past
the log).

Liveness, as the report tells it (its steps 7-9; ``MaxMsgs=1 MaxClientRequests=1``):
``bug`` violates RejectedFollowerEventuallyRepaired with a 22-action lasso: s2 wins
term 2, its first heartbeat to the old leader s1 (tail ``<<1, 1, 1>>``) returns
SUCCESS with s1's log end, so matchIndex[s1] becomes 2 and s2 commits on that belief;
from then on each heartbeat with previous entry 2 is answered INCONSISTENCY(2), and
the back-off, floored at matchIndex + 1 = 3, leaves nextIndex at 3 forever.  ``fix``
holds it and FollowersEventuallyMatchLeader.  (The shortest lasso of
FollowersEventuallyMatchLeader is the other branch: the leader's nextIndex lies past
its own log, so only heartbeats go out and each one succeeds.)

Progress (issue 48): both properties above ask only that the logs agree, so a patch
that applies the fix's ``max(old, previous + 1)`` to every SUCCESS, replies to entries
included (``mutant_max_on_every_success``), passed everything while freezing the
leader's matchIndex and commit for good.  LeaderLearnsWhatFollowerHolds (once a
follower holds the leader's whole log, eventually the leader's matchIndex says so) and
LeaderCommitsWhatQuorumHolds (once a quorum holds it, the leader commits it) ask for
what Raft promises and Ratis needs, under the fairness above; the mutant violates the
first with a 17-action lasso (``MaxMsgs=1 MaxClientRequests=1``) and holds every safety
invariant; ``fix`` holds both at the defaults, there and in ``deep``.  Both are asked of
a leader whose log ends with an entry of its term, as a Ratis leader's does once its
startup entry is appended: a model leader elected with a full log (``MaxLogLen``)
appends none and sends only heartbeats, from which the fix rightly learns nothing.
Pipelined appends (issue 48 asked for them) are not the code under test:
the fix is in ``LogAppenderDefault.handleReply`` (lines 197-211 at Ratis 37932bf60),
and that appender sends one request at a time (``sendAppendEntriesWithRetries`` waits
for ``getServerRpc().appendEntries``); the pipelined ``GrpcLogAppender`` has its own
handler, which takes ``reply.getMatchIndex()`` (-1 for a heartbeat, so a heartbeat
never moves it) and has no RATIS-2605 bug.  With one request outstanding,
``max(old, previous + 1)`` is ``old`` for every heartbeat reply, in Ratis as in the
model, so a patch that ignores heartbeat replies has the fix's exact counts because it
is, on this appender, the same code.

Finding, separate from RATIS-2605 (``Init=empty``, MaxTerm=3, MaxMsgs=1): ``bug`` and
``fix`` both violate StateMachineSafety in 16 actions.  s1 wins term 2 and appends
its startup entry at index 0, unreplicated; s2 wins term 3 with s3, commits its own
startup entry at index 0, and its heartbeat to s1 (nextIndex 0, so
``LogAppender.getPrevious`` gives none) carries leaderCommit 0.  s1 computes
``ServerImplUtils.effectiveCommitIndex(0, null, 0) = min(0, LEAST_VALID_LOG_INDEX +
0) = 0``, and ``RaftLog.updateCommitIndex`` on a follower takes it (its flush index
is 0): s1 counts its own term-2 entry at index 0 as committed, which s2's log does
not hold.  Read against Ratis master (``ServerImplUtils.effectiveCommitIndex`` still
uses ``LEAST_VALID_LOG_INDEX`` when the previous entry is null); argued from the code,
not run against Ratis.  ``fix_and_commit_guard`` holds every safety invariant there.
The harm is a follower stuck for good: afterwards it answers INCONSISTENCY with
nextIndex 1 (its commit index refuses entries from 0) and 0 (it lacks the new leader's
entry at 0) alternately, forever (FollowersEventuallyMatchLeader fails with ``fix`` in
a 28-action lasso; ``fix_and_commit_guard`` holds it).  No client data diverges: index
0 of a fresh group is always a startup configuration entry.
Written up, step by step against the Ratis source, with the trace's picture and a
MiniRaftCluster test sketch:
[docs/findings/ratis-empty-log-commit.md](../findings/ratis-empty-log-commit.md).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from immutables import Map

from checker import ConfigError, Spec, action, in_order, invariant, leads_to, model_values
from checker.values import ModelValue, put
from mcheck_shipped.invariants.raft import committed_logs_agree
from mcheck_shipped.invariants.ratis import match_index_sound, next_index_for_inconsistency

FOLLOWER, CANDIDATE, LEADER = "Follower", "Candidate", "Leader"
SUCCESS, INCONSISTENCY, NOT_LEADER = "SUCCESS", "INCONSISTENCY", "NOT_LEADER"
SMap = Map[ModelValue, Any]


class RVReq(NamedTuple):
    """RequestVote request."""

    mterm: int
    msource: ModelValue
    mdest: ModelValue
    mlastLogTerm: int
    mlastLogIndex: int


class RVResp(NamedTuple):
    """RequestVote response."""

    mterm: int
    msource: ModelValue
    mdest: ModelValue
    mvoteGranted: bool


class AEReq(NamedTuple):
    """AppendEntries request (``mprevLogIndex = -1``: no previous entry)."""

    mterm: int
    msource: ModelValue
    mdest: ModelValue
    mprevLogIndex: int
    mprevLogTerm: int
    mentries: tuple[int, ...]
    mcommitIndex: int
    mheartbeat: bool


class AEResp(NamedTuple):
    """AppendEntries reply plus the request metadata the appender keeps."""

    mterm: int
    msource: ModelValue
    mdest: ModelValue
    mresult: str
    mnextIndex: int
    mmatchIndex: int
    mreqHeartbeat: bool
    mreqPrevIndex: int
    mreqFirstIndex: int


Message = RVReq | RVResp | AEReq | AEResp


class HbState(NamedTuple):
    """raft.tla's variables (logs hold entry terms), Ratis indices, and counters."""

    currentTerm: SMap
    state: SMap
    votedFor: SMap
    votesGranted: SMap
    log: SMap
    commitIndex: SMap
    nextIndex: SMap
    matchIndex: SMap
    messages: frozenset[Message]
    clientRequests: int
    drops: int
    restarts: int


def agree(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """The largest k with a[0..k] = b[0..k] (-1 if none)."""
    k = -1
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        k += 1
    return k


def last_term(lg: tuple[int, ...]) -> int:
    """Term of the last entry, 0 for an empty log."""
    return lg[-1] if lg else 0


class RatisHeartbeatMatchIndex(Spec):
    """RATIS-2605: heartbeat SUCCESS and the leader's matchIndex."""

    constants = {
        "Server": model_values("s", 3, group="Server"),
        "MaxTerm": 2,
        "MaxLogLen": 4,
        "MaxMsgs": 2,
        "MaxClientRequests": 0,
        "MaxDrops": 0,
        "MaxRestarts": 0,
        "Init": "seeded",
    }
    variants = (
        "bug",
        "fix",
        "fix_and_commit_guard",
        "mutant_fix_with_previous_only",
        "mutant_max_on_every_success",
    )
    symmetry = ("Server",)
    # Strong fairness of the appender (the MaxMsgs guard can disable it now and then):
    # it sends entries when it has some, and its heartbeat timer fires, which is the
    # only thing that sends when it has none; weak fairness of the handlers and of
    # commit; timeouts, client requests, drops and restarts get none and are bounded.
    fairness = {
        "SendAppendEntries": "strong",
        **dict.fromkeys(
            (
                "HandleAppendEntriesRequest",
                "HandleAppendEntriesResponse",
                "HandleRequestVoteRequest",
                "HandleRequestVoteResponse",
                "AdvanceCommitIndex",
            ),
            "weak",
        ),
    }
    # Terms, client requests, drops and restarts are bounded: quiet end states are fine.
    check_deadlock = False

    Server: tuple[ModelValue, ...]
    MaxTerm: int
    MaxLogLen: int
    MaxMsgs: int
    MaxClientRequests: int
    MaxDrops: int
    MaxRestarts: int
    Init: str

    def validate(self) -> None:
        """Init names one of the two initial states."""
        if self.Init not in ("seeded", "empty"):
            raise ConfigError("Init must be seeded or empty")
        if self.Init == "seeded" and len(self.Server) < 2:
            raise ConfigError("Init=seeded needs at least two servers")

    def _map(self, value: Any) -> SMap:
        return Map(dict.fromkeys(self.Server, value))

    def init(self) -> list[HbState]:
        """seeded: s1 leads term 1 with two unsent entries; empty: raft.tla's Init."""
        servers = self.Server
        none = self._map(-1)
        if self.Init == "empty":
            return [
                HbState(
                    currentTerm=self._map(1),
                    state=self._map(FOLLOWER),
                    votedFor=self._map(None),
                    votesGranted=self._map(frozenset()),
                    log=self._map(()),
                    commitIndex=self._map(-1),
                    nextIndex=self._map(self._map(0)),
                    matchIndex=self._map(none),
                    messages=frozenset(),
                    clientRequests=0,
                    drops=0,
                    restarts=0,
                )
            ]
        s1 = servers[0]
        return [
            HbState(
                currentTerm=self._map(1),
                state=put(self._map(FOLLOWER), s1, LEADER),
                votedFor=self._map(s1),
                votesGranted=self._map(frozenset()),
                log=put(self._map((1,)), s1, (1, 1, 1)),
                commitIndex=self._map(0),
                nextIndex=put(self._map(self._map(0)), s1, self._map(1)),
                matchIndex=put(self._map(none), s1, self._map(0)),
                messages=frozenset(),
                clientRequests=0,
                drops=0,
                restarts=0,
            )
        ]

    # -- helpers ------------------------------------------------------------------
    def _quorum(self, n: int) -> bool:
        return n * 2 > len(self.Server)

    @staticmethod
    def _update_term(s: HbState, i: ModelValue, term: int) -> HbState:
        """raft.tla's UpdateTerm, done first when a message carries a higher term."""
        if term <= s.currentTerm[i]:
            return s
        return s._replace(
            currentTerm=put(s.currentTerm, i, term),
            state=put(s.state, i, FOLLOWER),
            votedFor=put(s.votedFor, i, None),
        )

    def _room(self, s: HbState) -> bool:
        return len(s.messages) < self.MaxMsgs

    # -- elections ------------------------------------------------------------------
    @action(over="Server")
    def Timeout(self, s: HbState, i: ModelValue) -> HbState | None:
        """i times out: a candidate of the next term, voting for itself."""
        if s.state[i] == LEADER or s.currentTerm[i] >= self.MaxTerm:
            return None
        return s._replace(
            state=put(s.state, i, CANDIDATE),
            currentTerm=put(s.currentTerm, i, s.currentTerm[i] + 1),
            votedFor=put(s.votedFor, i, i),
            votesGranted=put(s.votesGranted, i, frozenset({i})),
        )

    @action(over=("Server", "Server"))
    def RequestVote(self, s: HbState, i: ModelValue, j: ModelValue) -> HbState | None:
        """Candidate i asks j for its vote."""
        if s.state[i] != CANDIDATE or i == j or j in s.votesGranted[i] or not self._room(s):
            return None
        lg = s.log[i]
        m = RVReq(s.currentTerm[i], i, j, last_term(lg), len(lg) - 1)
        if m in s.messages:
            return None
        return s._replace(messages=s.messages | {m})

    @action(
        over_state=lambda self, s: in_order(s.messages, RVReq), actor=lambda self, s, m: m.mdest
    )
    def HandleRequestVoteRequest(self, s: HbState, m: RVReq) -> HbState:
        """j grants iff same term, i's log at least as up to date, no other vote."""
        j, i = m.mdest, m.msource
        s = self._update_term(s, j, m.mterm)
        lg = s.log[j]
        log_ok = m.mlastLogTerm > last_term(lg) or (
            m.mlastLogTerm == last_term(lg) and m.mlastLogIndex >= len(lg) - 1
        )
        grant = m.mterm == s.currentTerm[j] and log_ok and s.votedFor[j] in (None, i)
        if grant:
            s = s._replace(votedFor=put(s.votedFor, j, i))
        reply = RVResp(s.currentTerm[j], j, i, grant)
        return s._replace(messages=(s.messages - {m}) | {reply})

    @action(
        over_state=lambda self, s: in_order(s.messages, RVResp), actor=lambda self, s, m: m.mdest
    )
    def HandleRequestVoteResponse(self, s: HbState, m: RVResp) -> HbState:
        """Candidate i tallies a vote of its term."""
        i, j = m.mdest, m.msource
        s = self._update_term(s, i, m.mterm)
        if m.mterm == s.currentTerm[i] and m.mvoteGranted:
            s = s._replace(votesGranted=put(s.votesGranted, i, s.votesGranted[i] | {j}))
        return s._replace(messages=s.messages - {m})

    @action(over="Server")
    def BecomeLeader(self, s: HbState, i: ModelValue) -> HbState | None:
        """A candidate with a quorum leads: nextIndex = its log's next index, matchIndex
        = -1, then it appends its startup entry."""
        if s.state[i] != CANDIDATE or not self._quorum(len(s.votesGranted[i])):
            return None
        lg = s.log[i]
        if len(lg) < self.MaxLogLen:
            lg = (*lg, s.currentTerm[i])
        return s._replace(
            state=put(s.state, i, LEADER),
            nextIndex=put(s.nextIndex, i, self._map(len(s.log[i]))),
            matchIndex=put(s.matchIndex, i, self._map(-1)),
            log=put(s.log, i, lg),
        )

    # -- replication ----------------------------------------------------------------
    @action(over="Server")
    def ClientRequest(self, s: HbState, i: ModelValue) -> HbState | None:
        """The leader appends a client entry (bounded)."""
        if s.state[i] != LEADER or s.clientRequests >= self.MaxClientRequests:
            return None
        if len(s.log[i]) >= self.MaxLogLen:
            return None
        return s._replace(
            log=put(s.log, i, (*s.log[i], s.currentTerm[i])),
            clientRequests=s.clientRequests + 1,
        )

    @action(over=("Server", "Server", lambda self: (False, True)))
    def SendAppendEntries(
        self, s: HbState, i: ModelValue, j: ModelValue, hb: bool
    ) -> HbState | None:
        """Leader i's appender for j: a heartbeat (the timer fired, or nothing to send)
        or the entries from nextIndex, each with getPrevious(nextIndex)."""
        if s.state[i] != LEADER or i == j or not self._room(s):
            return None
        term = s.currentTerm[i]
        for m in s.messages:
            if isinstance(m, AEReq) and m.msource == i and m.mdest == j and m.mterm == term:
                return None
            if isinstance(m, AEResp) and m.msource == j and m.mdest == i and m.mterm >= term:
                return None
        lg = s.log[i]
        nxt = s.nextIndex[i][j]
        if nxt == 0 or nxt - 1 >= len(lg):
            prev, prev_term = -1, 0  # LogAppender.getPrevious: none
        else:
            prev, prev_term = nxt - 1, lg[nxt - 1]
        if not hb and nxt >= len(lg):
            return None  # nothing to send: only the heartbeat timer sends (hb=True)
        if hb:
            m = AEReq(term, i, j, prev, prev_term, (), s.commitIndex[i], True)
        else:
            m = AEReq(term, i, j, prev, prev_term, lg[nxt:], s.commitIndex[i], False)
        return s._replace(messages=s.messages | {m})

    @action(
        over_state=lambda self, s: in_order(s.messages, AEReq), actor=lambda self, s, m: m.mdest
    )
    def HandleAppendEntriesRequest(self, s: HbState, m: AEReq) -> HbState:
        """RaftServerImpl.appendEntriesAsync / checkInconsistentAppendEntries on j."""
        j, i = m.mdest, m.msource
        msgs = s.messages - {m}
        first = m.mprevLogIndex + 1
        entries = m.mentries

        def reply(st: HbState, result: str, nxt: int, match: int) -> HbState:
            r = AEResp(
                st.currentTerm[j],
                j,
                i,
                result,
                nxt,
                match,
                m.mheartbeat,
                m.mprevLogIndex,
                first if entries else -1,
            )
            return st._replace(messages=msgs | {r})

        if m.mterm < s.currentTerm[j]:
            return reply(s, NOT_LEADER, -1, -1)
        s = self._update_term(s, j, m.mterm)
        if s.state[j] != FOLLOWER:  # a leader or candidate of that term steps down
            s = s._replace(state=put(s.state, j, FOLLOWER))
        lg = s.log[j]
        commit = s.commitIndex[j]
        if entries and commit >= 0 and commit >= first:
            return reply(s, INCONSISTENCY, commit + 1, -1)
        prev = m.mprevLogIndex
        if prev >= 0 and (prev >= len(lg) or lg[prev] != m.mprevLogTerm):
            return reply(s, INCONSISTENCY, min(len(lg), prev), -1)
        if entries:
            new = list(lg)
            for k, t in enumerate(entries):
                idx = first + k
                if idx < len(new) and new[idx] == t:
                    continue
                del new[idx:]
                new.extend(entries[k:])
                break
            lg = tuple(new)
        # ServerImplUtils.effectiveCommitIndex: min(leaderCommit, previous + #entries),
        # with previous = LEAST_VALID_LOG_INDEX (0) when the request has none; the
        # guard variant counts from -1 there instead.
        # RaftLog.updateCommitIndex on a follower then clamps at its flush index.
        no_prev = -1 if self.variant == "fix_and_commit_guard" else 0
        base = prev if prev >= 0 else no_prev
        commit = max(commit, min(m.mcommitIndex, base + len(entries), len(lg) - 1))
        s = s._replace(log=put(s.log, j, lg), commitIndex=put(s.commitIndex, j, commit))
        if entries:
            last = first + len(entries) - 1
            return reply(s, SUCCESS, last + 1, last)
        return reply(s, SUCCESS, len(lg), -1)

    @action(
        over_state=lambda self, s: in_order(s.messages, AEResp), actor=lambda self, s, m: m.mdest
    )
    def HandleAppendEntriesResponse(self, s: HbState, m: AEResp) -> HbState:
        """LogAppenderDefault.handleReply on leader i (the variant switch)."""
        i, j = m.mdest, m.msource
        s = s._replace(messages=s.messages - {m})
        if m.mterm > s.currentTerm[i]:
            return self._update_term(s, i, m.mterm)
        if m.mterm < s.currentTerm[i] or s.state[i] != LEADER:
            return s
        old = s.nextIndex[i][j]
        match = s.matchIndex[i][j]
        if m.mresult == SUCCESS:
            patched = self.variant in ("fix", "fix_and_commit_guard") or (
                self.variant == "mutant_fix_with_previous_only" and m.mreqPrevIndex >= 0
            )
            if (patched and m.mreqHeartbeat) or self.variant == "mutant_max_on_every_success":
                # The fix's rule; the mutant applies it to replies to entries too.
                new = max(old, m.mreqPrevIndex + 1)
            else:
                new = m.mnextIndex
            if new <= old:
                return s
            return s._replace(
                matchIndex=put(s.matchIndex, i, put(s.matchIndex[i], j, max(match, new - 1))),
                nextIndex=put(s.nextIndex, i, put(s.nextIndex[i], j, new)),
            )
        if m.mresult == INCONSISTENCY:
            nxt = next_index_for_inconsistency(m.mreqFirstIndex, m.mnextIndex, match)
            return s._replace(nextIndex=put(s.nextIndex, i, put(s.nextIndex[i], j, nxt)))
        return s

    @action(over="Server")
    def AdvanceCommitIndex(self, s: HbState, i: ModelValue) -> HbState | None:
        """LeaderStateImpl.updateCommit: the majority value of the leader's last index
        and its followers' matchIndex, if that entry is of the current term."""
        if s.state[i] != LEADER:
            return None
        lg = s.log[i]
        values = sorted(
            [len(lg) - 1] + [s.matchIndex[i][j] for j in self.Server if j != i], reverse=True
        )
        m = min(values[len(values) // 2], len(lg) - 1)
        if m <= s.commitIndex[i] or m < 0 or lg[m] != s.currentTerm[i]:
            return None
        return s._replace(commitIndex=put(s.commitIndex, i, m))

    # -- environment ----------------------------------------------------------------
    @action(over_state=lambda self, s: in_order(s.messages))
    def DropMessage(self, s: HbState, m: Message) -> HbState | None:
        """The network loses a message (bounded)."""
        if s.drops >= self.MaxDrops:
            return None
        return s._replace(messages=s.messages - {m}, drops=s.drops + 1)

    @action(over="Server")
    def Restart(self, s: HbState, i: ModelValue) -> HbState | None:
        """i restarts (bounded): keeps term, vote and log."""
        if s.restarts >= self.MaxRestarts:
            return None
        return s._replace(
            state=put(s.state, i, FOLLOWER),
            votesGranted=put(s.votesGranted, i, frozenset()),
            nextIndex=put(s.nextIndex, i, self._map(0)),
            matchIndex=put(s.matchIndex, i, self._map(-1)),
            commitIndex=put(s.commitIndex, i, -1),
            restarts=s.restarts + 1,
        )

    # -- properties -----------------------------------------------------------------
    @staticmethod
    def follower_matches(s: HbState, i: ModelValue, j: ModelValue) -> bool:
        """i is no longer leader, or j's log agrees with i's whole log: the end both
        liveness properties wait for."""
        return s.state[i] != LEADER or agree(s.log[i], s.log[j]) == len(s.log[i]) - 1

    @leads_to(lambda self, s, i, j: s.state[i] == LEADER, over=("Server", "Server"))
    def FollowersEventuallyMatchLeader(self, s: HbState, i: ModelValue, j: ModelValue) -> bool:
        """\\A i, j: [](state[i] = Leader => <>(state[i] /= Leader \\/ j's log agrees with
        i's whole log))."""
        return self.follower_matches(s, i, j)

    @leads_to(
        lambda self, s, i, j: (
            s.state[i] == LEADER
            and any(
                isinstance(m, AEResp)
                and m.mresult == INCONSISTENCY
                and (m.msource, m.mdest, m.mterm) == (j, i, s.currentTerm[i])
                for m in s.messages
            )
        ),
        over=("Server", "Server"),
    )
    def RejectedFollowerEventuallyRepaired(self, s: HbState, i: ModelValue, j: ModelValue) -> bool:
        """The report's symptom (its steps 7-9): once follower j answers its leader i
        INCONSISTENCY, eventually i is no longer leader or j holds i's whole log; the
        back-off reaches the common prefix and the conflicting tail is truncated."""
        return self.follower_matches(s, i, j)

    @leads_to(
        lambda self, s, i, j: (
            s.state[i] == LEADER
            and i != j
            and s.log[i][-1:] == (s.currentTerm[i],)
            and RatisHeartbeatMatchIndex.follower_holds(s, i, j)
        ),
        over=("Server", "Server"),
    )
    def LeaderLearnsWhatFollowerHolds(self, s: HbState, i: ModelValue, j: ModelValue) -> bool:
        """Progress, as Raft promises it: once follower j holds leader i's whole log,
        eventually i is no longer leader or its matchIndex for j says so.  (A patch
        that applies the fix's max to every SUCCESS froze matchIndex and passed both
        properties above, which only ask that the logs agree.)  Asked of a leader whose
        log ends with an entry of its term, as a Ratis leader's always does (its
        startup entry): in the model a leader elected with a full log (MaxLogLen)
        appends none, and then only heartbeats go out, which learn nothing under the
        fix; that is the bound's doing, not Ratis'."""
        return bool(s.state[i] != LEADER or s.matchIndex[i][j] >= len(s.log[i]) - 1)

    @leads_to(
        lambda self, s, i: (
            s.state[i] == LEADER
            and s.log[i][-1:] == (s.currentTerm[i],)
            and self._quorum(
                sum(1 for j in self.Server if RatisHeartbeatMatchIndex.follower_holds(s, i, j))
            )
        ),
        over="Server",
    )
    def LeaderCommitsWhatQuorumHolds(self, s: HbState, i: ModelValue) -> bool:
        """Once a quorum holds leader i's whole log, whose last entry is of i's term,
        eventually i is no longer leader or has committed all of it."""
        return bool(s.state[i] != LEADER or s.commitIndex[i] >= len(s.log[i]) - 1)

    @staticmethod
    def follower_holds(s: HbState, i: ModelValue, j: ModelValue) -> bool:
        """j's log agrees with leader i's whole log (i itself included)."""
        return agree(s.log[i], s.log[j]) == len(s.log[i]) - 1

    @invariant
    def MatchIndexSound(self, s: HbState) -> bool:
        """A leader's matchIndex for a follower of its term never exceeds the prefix
        their logs share."""
        for i in self.Server:
            if s.state[i] != LEADER:
                continue
            for j in self.Server:
                same_term = j != i and s.currentTerm[j] == s.currentTerm[i]
                if same_term and not match_index_sound(
                    s.matchIndex[i][j], agree(s.log[i], s.log[j])
                ):
                    return False
        return True

    @invariant
    def CommitImpliesQuorumReplication(self, s: HbState) -> bool:
        """Everything a leader has committed is shared by a quorum (itself included)."""
        for i in self.Server:
            if s.state[i] != LEADER or s.commitIndex[i] < 0:
                continue
            k = s.commitIndex[i]
            holders = sum(1 for j in self.Server if agree(s.log[i], s.log[j]) >= k)
            if not self._quorum(holders):
                return False
        return True

    @invariant
    def StateMachineSafety(self, s: HbState) -> bool:
        """raft.tla's classic, committed entries agree on every pair of servers, and
        no commit index lies past its server's log (raft.tla's form compares only
        up to the log's end and would miss that)."""
        if any(s.commitIndex[i] >= len(s.log[i]) for i in self.Server):
            return False
        counts = {i: s.commitIndex[i] + 1 for i in self.Server}
        return committed_logs_agree(s.log, counts)
