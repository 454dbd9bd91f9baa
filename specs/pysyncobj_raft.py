"""Raft as pysyncobj 0.3 implements it, at the level its state shows: terms, votes,
roles and commit indexes of each node (for ``mcheck validate`` of real runs).

Mechanism (pysyncobj/syncobj.py, ``SyncObj``): a follower or candidate whose election
deadline passes becomes a candidate of the next term and votes for itself
(``__setCurrentTerm(term + 1, self)``); a request or append of a higher term makes a
node adopt it with no vote (``__setCurrentTerm(term, None)``) and follow; a node votes
for the first candidate of its current term that asks (``if votedForNodeId is not
None: return``); a candidate with more than half of the votes becomes leader; a
candidate that hears a leader of its term follows it; a leader that has not heard from
a majority within ``leaderFallbackTimeout`` steps down (pysyncobj's own rule, not
Raft's); a follower's commit index takes the leader's (``min(leaderCommit, last
index)``).  A new journal starts with one entry that counts as committed (commit
index 1, before any election); with the default in-memory journal a restarted node
starts over from term 0, no vote, commit index 1.

Model: nodes ``Node`` (a, b, c), per node ``term``, ``role``, ``votedFor`` and
``commitIndex``; the history of votes and leaders (for the invariants); the highest
term and the highest leader commit index so far (what messages can carry).
Abstractions: no logs, so the vote's up-to-date check and the leader's commit rule
are not modelled (the spec allows more than pysyncobj does: validation asks whether a
run is one of its behaviours, and a run that is not is a discrepancy); messages are
not modelled, a term or commit index comes from a node that has (had) it.

Invariant ElectionSafety (one leader per term) holds only without restarts: a node
restarted with the in-memory journal forgets its vote (``Restart``) and may vote
again in the same term, which exhaustive checking of ``MaxRestarts=1`` shows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from immutables import Map

from checker import Spec, action, invariant, named_values
from checker.check.validate import LogMapping, On
from checker.values import ModelValue

NODES = named_values(["a", "b", "c"], "Node")
FOLLOWER, CANDIDATE, LEADER = "Follower", "Candidate", "Leader"


class PsoState(NamedTuple):
    """Each node's term, role, vote and commit index; the vote and leader history."""

    term: Map[ModelValue, int]
    role: Map[ModelValue, str]
    votedFor: Map[ModelValue, ModelValue | None]
    commitIndex: Map[ModelValue, int]
    votes: frozenset[tuple[int, ModelValue, ModelValue]]  #: (term, voter, candidate)
    leaders: frozenset[tuple[int, ModelValue]]  #: (term, leader)
    highestTerm: int
    leaderCommit: int
    restarts: int


def _node(spec: Any, ev: dict[str, Any], key: str = "node") -> ModelValue:
    """The node an event names (by its name), as the spec's own model value."""
    node: ModelValue = next(n for n in spec.Node if n.name == ev[key])
    return node


def _of_node(spec: Any, ev: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(_node(spec, ev),)]


class PysyncobjRaft(Spec):
    """pysyncobj's elections and commit indexes, node by node."""

    # Small bounds for exhaustive checking; validation of a real run raises them
    # (tests/test_pysyncobj.py): it only visits the states consistent with the log.
    constants = {"Node": NODES, "MaxTerm": 2, "MaxIndex": 2, "MaxRestarts": 0}
    symmetry = ("Node",)
    lanes = "Node"
    Node: tuple[ModelValue, ...]
    MaxTerm: int
    MaxIndex: int
    MaxRestarts: int
    check_deadlock = False

    # The harness (tests/pysyncobj_harness.py) logs one event per change it sees in a
    # node after each of its ticks; a tick may adopt a higher term before what it logs.
    log_mapping = LogMapping(
        # Each event names its instance (node, term, candidate, index): bound from the
        # log, as a TLA+ trace spec binds them, rather than sifted from every instance.
        events={
            "Timeout": On(actions=("Timeout",), instances=_of_node),
            # An unlogged term adoption right before a logged one (or a restart) is
            # overwritten by it: no silent step needs trying there.
            "UpdateTerm": On(
                actions=("UpdateTerm",),
                instances=lambda sp, ev: [(_node(sp, ev), ev["term"])],
                after_silent=False,
            ),
            "Vote": On(
                actions=("Vote",),
                instances=lambda sp, ev: [(_node(sp, ev), _node(sp, ev, "candidate"))],
            ),
            "BecomeLeader": On(actions=("BecomeLeader",), instances=_of_node),
            "BecomeFollower": On(actions=("BecomeFollower",), instances=_of_node),
            "StepDown": On(actions=("StepDown",), instances=_of_node),
            "AdvanceCommit": On(
                actions=("AdvanceCommit",),
                instances=lambda sp, ev: [(_node(sp, ev), ev["index"])],
            ),
            "Restart": On(actions=("Restart",), instances=_of_node, after_silent=False),
        },
        silent=("UpdateTerm",),
        max_silent=1,
        # The unlogged adoption happens in the tick of the node that logs next: the
        # harness logs every node's changes after that node's own tick.
        silent_where=lambda ev, p: bool(p[0].name == ev.get("node")),
    )

    def init(self) -> list[PsoState]:
        """Every node a follower of term 0, no vote, the journal's first entry."""
        return [
            PsoState(
                term=Map(dict.fromkeys(self.Node, 0)),
                role=Map(dict.fromkeys(self.Node, FOLLOWER)),
                votedFor=Map(dict.fromkeys(self.Node)),
                commitIndex=Map(dict.fromkeys(self.Node, 1)),
                votes=frozenset(),
                leaders=frozenset(),
                highestTerm=0,
                leaderCommit=1,
                restarts=0,
            )
        ]

    @action(over="Node")
    def Timeout(self, s: PsoState, n: ModelValue) -> PsoState | None:
        """The election deadline passes: candidate of the next term, own vote."""
        if s.role[n] == LEADER or s.term[n] >= self.MaxTerm:
            return None
        t = s.term[n] + 1
        return s._replace(
            term=s.term.set(n, t),
            role=s.role.set(n, CANDIDATE),
            votedFor=s.votedFor.set(n, n),
            votes=s.votes | {(t, n, n)},
            highestTerm=max(s.highestTerm, t),
        )

    @action(
        # The terms above the node's own that some node has reached.
        over_state=lambda self, s: [
            (n, t) for n in self.Node for t in range(s.term[n] + 1, s.highestTerm + 1)
        ]
    )
    def UpdateTerm(self, s: PsoState, n: ModelValue, t: int) -> PsoState | None:
        """A request or append of a higher term: adopt it, no vote, follow."""
        return s._replace(
            term=s.term.set(n, t), role=s.role.set(n, FOLLOWER), votedFor=s.votedFor.set(n, None)
        )

    @action(over=("Node", "Node"))
    def Vote(self, s: PsoState, n: ModelValue, c: ModelValue) -> PsoState | None:
        """Grant the first vote of the current term to a candidate of that term."""
        t = s.term[n]
        if n == c or s.role[n] == LEADER or s.votedFor[n] is not None or (t, c, c) not in s.votes:
            return None
        return s._replace(votedFor=s.votedFor.set(n, c), votes=s.votes | {(t, n, c)})

    @action(over="Node")
    def BecomeLeader(self, s: PsoState, n: ModelValue) -> PsoState | None:
        """A candidate with more than half of its term's votes leads."""
        t = s.term[n]
        if s.role[n] != CANDIDATE:
            return None
        granted = sum(1 for (vt, _v, c) in s.votes if vt == t and c == n)
        if 2 * granted <= len(self.Node):
            return None
        return s._replace(role=s.role.set(n, LEADER), leaders=s.leaders | {(t, n)})

    @action(over="Node")
    def BecomeFollower(self, s: PsoState, n: ModelValue) -> PsoState | None:
        """A candidate hears the leader of its own term."""
        if s.role[n] != CANDIDATE or not any(t == s.term[n] for t, _ in s.leaders):
            return None
        return s._replace(role=s.role.set(n, FOLLOWER))

    @action(over="Node")
    def StepDown(self, s: PsoState, n: ModelValue) -> PsoState | None:
        """leaderFallbackTimeout: a leader not hearing from a majority follows."""
        if s.role[n] != LEADER:
            return None
        return s._replace(role=s.role.set(n, FOLLOWER))

    @action(over=("Node", lambda self: range(1, self.MaxIndex + 1)))
    def AdvanceCommit(self, s: PsoState, n: ModelValue, i: int) -> PsoState | None:
        """A leader commits further; a follower takes a leader's commit index."""
        if i <= s.commitIndex[n]:
            return None
        if s.role[n] != LEADER and i > s.leaderCommit:
            return None
        lc = max(s.leaderCommit, i) if s.role[n] == LEADER else s.leaderCommit
        return s._replace(commitIndex=s.commitIndex.set(n, i), leaderCommit=lc)

    @action(over="Node")
    def Restart(self, s: PsoState, n: ModelValue) -> PsoState | None:
        """Stopped and started again with the in-memory journal: all forgotten."""
        if s.restarts >= self.MaxRestarts:
            return None
        return s._replace(
            term=s.term.set(n, 0),
            role=s.role.set(n, FOLLOWER),
            votedFor=s.votedFor.set(n, None),
            commitIndex=s.commitIndex.set(n, 1),
            restarts=s.restarts + 1,
        )

    @invariant
    def ElectionSafety(self, s: PsoState) -> bool:
        """At most one leader per term."""
        terms = [t for t, _ in s.leaders]
        return len(terms) == len(set(terms))
