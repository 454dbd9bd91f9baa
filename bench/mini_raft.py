"""mini-Raft, the benchmark model: elections, one-entry replication, commit.

Written the way the README teaches a spec: a NamedTuple state of per-server
``pmap``\\ s, one guarded action per step of the protocol, model-value servers declared
symmetric.  RPCs are atomic (a request and its reply are one step), which keeps the
model small enough to time and still exercises what costs a checker: many per-server
variables, pairwise actions, symmetry over servers whose ids appear in values
(``votedFor``, ``votesGranted``).

:mod:`bench.mini_raft_plain` is the same model over plain tuples (the baseline and
the peers' version); the two must agree on every count.  The bench bounds are 3
servers, ``MaxTerm = 4``, ``MaxLog = 2``: 1,535,147 states, 257,265 orbits.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pyrsistent import PMap, pmap

from checker import Spec, action, invariant, model_values
from checker.values import ModelValue

FOLLOWER, CANDIDATE, LEADER = "Follower", "Candidate", "Leader"


class MiniRaftState(NamedTuple):
    """Per server: term, role, vote, votes received, log (entry terms), commit index."""

    currentTerm: PMap[ModelValue, int]
    role: PMap[ModelValue, str]
    votedFor: PMap[ModelValue, ModelValue | None]
    votesGranted: PMap[ModelValue, frozenset[ModelValue]]
    log: PMap[ModelValue, tuple[int, ...]]
    commitIndex: PMap[ModelValue, int]


def last_term(log: tuple[int, ...]) -> int:
    """The term of the last entry (0 for an empty log)."""
    return log[-1] if log else 0


class MiniRaft(Spec):
    """Raft's elections and replication with atomic RPCs (see the module docstring)."""

    name = "mini_raft"
    constants = {"Server": model_values("s", 3), "MaxTerm": 4, "MaxLog": 2}
    symmetry = ("Server",)
    check_deadlock = False
    Server: tuple[ModelValue, ...]
    MaxTerm: int
    MaxLog: int

    def _quorum(self) -> int:
        return len(self.Server) // 2 + 1

    def init(self) -> list[MiniRaftState]:
        """Every server a follower in term 0 with an empty log."""

        def each(v: Any) -> PMap[ModelValue, Any]:
            return pmap(dict.fromkeys(self.Server, v))

        return [
            MiniRaftState(
                currentTerm=each(0),
                role=each(FOLLOWER),
                votedFor=each(None),
                votesGranted=each(frozenset()),
                log=each(()),
                commitIndex=each(0),
            )
        ]

    def _step_down(self, s: MiniRaftState, i: ModelValue, term: int) -> MiniRaftState:
        """Server i learns of a newer term: it follows, with no vote cast yet."""
        return s._replace(
            currentTerm=s.currentTerm.set(i, term),
            role=s.role.set(i, FOLLOWER),
            votedFor=s.votedFor.set(i, None),
        )

    @action(over="Server")
    def Timeout(self, s: MiniRaftState, i: ModelValue) -> MiniRaftState | None:
        """Server i starts an election in the next term and votes for itself."""
        if s.role[i] == LEADER or s.currentTerm[i] >= self.MaxTerm:
            return None
        return s._replace(
            currentTerm=s.currentTerm.set(i, s.currentTerm[i] + 1),
            role=s.role.set(i, CANDIDATE),
            votedFor=s.votedFor.set(i, i),
            votesGranted=s.votesGranted.set(i, frozenset({i})),
        )

    @action(over=("Server", "Server"), guard=lambda self, s, i, j: i != j)
    def RequestVote(self, s: MiniRaftState, i: ModelValue, j: ModelValue) -> MiniRaftState | None:
        """Candidate i asks j for its vote; j first catches up with i's term."""
        if s.role[i] != CANDIDATE or j in s.votesGranted[i]:
            return None
        if s.currentTerm[j] > s.currentTerm[i]:
            return self._step_down(s, i, s.currentTerm[j])
        changed = s.currentTerm[j] < s.currentTerm[i]
        if changed:
            s = self._step_down(s, j, s.currentTerm[i])
        li, lj = s.log[i], s.log[j]
        up_to_date = last_term(li) > last_term(lj) or (
            last_term(li) == last_term(lj) and len(li) >= len(lj)
        )
        if s.votedFor[j] in (None, i) and up_to_date:
            return s._replace(
                votedFor=s.votedFor.set(j, i),
                votesGranted=s.votesGranted.set(i, s.votesGranted[i] | {j}),
            )
        return s if changed else None

    @action(over="Server")
    def BecomeLeader(self, s: MiniRaftState, i: ModelValue) -> MiniRaftState | None:
        """A candidate with a quorum of votes leads its term."""
        if s.role[i] != CANDIDATE or len(s.votesGranted[i]) < self._quorum():
            return None
        return s._replace(role=s.role.set(i, LEADER))

    @action(over="Server")
    def ClientRequest(self, s: MiniRaftState, i: ModelValue) -> MiniRaftState | None:
        """The leader appends an entry of its term."""
        if s.role[i] != LEADER or len(s.log[i]) >= self.MaxLog:
            return None
        return s._replace(log=s.log.set(i, (*s.log[i], s.currentTerm[i])))

    @action(over=("Server", "Server"), guard=lambda self, s, i, j: i != j)
    def AppendEntry(self, s: MiniRaftState, i: ModelValue, j: ModelValue) -> MiniRaftState | None:
        """Leader i sends j one entry, or on a mismatch makes j drop its last one; j
        learns the leader's commit index as far as its log matches."""
        if s.role[i] != LEADER:
            return None
        if s.currentTerm[j] > s.currentTerm[i]:
            return self._step_down(s, i, s.currentTerm[j])
        li, lj = s.log[i], s.log[j]
        n = len(lj)
        if n > 0 and (n > len(li) or lj[n - 1] != li[n - 1]):
            new = lj[:-1]
        elif n < len(li):
            new = (*lj, li[n])
        else:
            new = lj
        commit = s.commitIndex[j]
        if len(new) <= len(li) and (not new or new[-1] == li[len(new) - 1]):
            commit = max(commit, min(s.commitIndex[i], len(new)))
        same_term = s.currentTerm[j] == s.currentTerm[i]
        if same_term and s.role[j] == FOLLOWER and new == lj and commit == s.commitIndex[j]:
            return None
        return s._replace(
            currentTerm=s.currentTerm.set(j, s.currentTerm[i]),
            role=s.role.set(j, FOLLOWER),
            votedFor=s.votedFor if same_term else s.votedFor.set(j, None),
            log=s.log.set(j, new),
            commitIndex=s.commitIndex.set(j, commit),
        )

    @action(over="Server")
    def AdvanceCommit(self, s: MiniRaftState, i: ModelValue) -> MiniRaftState | None:
        """The leader commits the longest prefix ending in its term that a quorum holds."""
        if s.role[i] != LEADER:
            return None
        li = s.log[i]
        for k in range(len(li), s.commitIndex[i], -1):
            if li[k - 1] != s.currentTerm[i]:
                break
            holders = sum(s.log[j][:k] == li[:k] for j in self.Server)
            if holders >= self._quorum():
                return s._replace(commitIndex=s.commitIndex.set(i, k))
        return None

    @invariant
    def ElectionSafety(self, s: MiniRaftState) -> bool:
        """At most one leader per term."""
        terms = [s.currentTerm[i] for i in self.Server if s.role[i] == LEADER]
        return len(terms) == len(set(terms))

    @invariant
    def CommittedAgree(self, s: MiniRaftState) -> bool:
        """Committed prefixes never disagree."""
        done = [s.log[i][: s.commitIndex[i]] for i in self.Server]
        return all(a[: len(b)] == b[: len(a)] for a in done for b in done)
