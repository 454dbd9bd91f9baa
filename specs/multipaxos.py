"""MultiPaxos in state-machine-replication style, ported from the TLA+ Examples.

Source: github.com/tlaplus/Examples, ``specifications/MultiPaxos-SMR/MultiPaxos.tla``
and ``MultiPaxos_MC.tla`` (commit 32a32c7), model ``MultiPaxos_MC_small.cfg``:
``Replicas = {s1, s2, s3}``, ``Writes = {w1}``, ``Reads = {r1}``, ``MaxBallot = 2``,
symmetry over the replicas, invariants TypeOK and Linearizability, deadlock
checking on.  TLC (the Examples' manifest): 343,796 distinct states (orbits), 736,012
generated, depth 28.

The PlusCal process ``Replica`` has one label, ``rloop``, whose ``either`` branches are
the actions here (BecomeLeader, HandlePrepare, ..., HandleCommitNotice), each
guarded by ``pc[self] = "rloop" /\\ ~terminated``; ``Finish`` is the loop's exit
(``pc' = "Done"``) and ``Terminating`` the translation's final stutter.  Each ``\\E`` of
an action is a parameter (a successor per witness, as TLC enumerates them),
including TakeNewRequest's ``\\E s \\in Slots : insts[s].status = "Empty"``.  Records
are NamedTuples with the TLA+ field names, ``type`` included.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from immutables import Map

from checker import Spec, action, in_order, invariant, model_values, named_values
from checker.values import ModelValue

NIL, NONE = "nil", "none"
EMPTY, PREPARING, ACCEPTING, COMMITTED = "Empty", "Preparing", "Accepting", "Committed"
RLOOP, DONE = "rloop", "Done"


class Vote(NamedTuple):
    """[bal, cmd]: an instance's vote."""

    bal: int
    cmd: Any


class Inst(NamedTuple):
    """InstStates: one slot's status, command and vote."""

    status: str
    cmd: Any
    voted: Vote


class Node(NamedTuple):
    """NodeStates: a replica's view."""

    leader: Any
    kvalue: Any
    commitUpTo: int
    balPrepared: int
    balMaxKnown: int
    insts: tuple[Inst, ...]  #: indexed by slot - 1


class Prepare(NamedTuple):
    """PrepareMsg(r, b)."""

    type: str
    src: ModelValue
    bal: int


class PrepareReply(NamedTuple):
    """PrepareReplyMsg(r, b, iv): iv is the replier's vote per slot."""

    type: str
    src: ModelValue
    bal: int
    votes: tuple[Vote, ...]


class Accept(NamedTuple):
    """AcceptMsg(r, b, s, c)."""

    type: str
    src: ModelValue
    bal: int
    slot: int
    cmd: Any


class AcceptReply(NamedTuple):
    """AcceptReplyMsg(r, b, s)."""

    type: str
    src: ModelValue
    bal: int
    slot: int


class CommitNotice(NamedTuple):
    """CommitNoticeMsg(u)."""

    type: str
    upto: int


class Req(NamedTuple):
    """ReqEvent(c): a client request observed."""

    type: str
    cmd: Any


class Ack(NamedTuple):
    """AckEvent(c, v): a client acknowledgement (v: the value before a write)."""

    type: str
    cmd: Any
    val: Any


Message = Prepare | PrepareReply | Accept | AcceptReply | CommitNotice


class MultiPaxosState(NamedTuple):
    """msgs, node, pending, observed and pc, as in the translation."""

    msgs: frozenset[Message]
    node: Map[ModelValue, Node]
    pending: tuple[Any, ...]
    observed: tuple[Req | Ack, ...]
    pc: Map[ModelValue, str]


NULL_INST = Inst(EMPTY, NIL, Vote(0, NIL))


def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return (*t[:i], v, *t[i + 1 :])


def _reprepare(insts: tuple[Inst, ...]) -> tuple[Inst, ...]:
    """Accepting instances go back to Preparing (a new ballot starts)."""
    return tuple(i._replace(status=PREPARING) if i.status == ACCEPTING else i for i in insts)


def _messages(kind: type) -> Any:
    """(self, m) for every replica and every message of one kind: an action's
    ``\\E m \\in msgs``."""

    def domain(spec: Any, s: MultiPaxosState) -> list[tuple[ModelValue, Any]]:
        found = in_order(s.msgs, kind)
        return [(r, m) for r in spec.Replicas for m in found]

    return domain


class MultiPaxos(Spec):
    """A replicated log of write and read commands on one key, chosen by Paxos."""

    constants = {
        "Replicas": model_values("s", 3, group="Replicas"),
        "Writes": named_values(["w1"], "Writes"),
        "Reads": named_values(["r1"], "Reads"),
        "MaxBallot": 2,
    }
    symmetry = ("Replicas",)

    Replicas: tuple[ModelValue, ...]
    Writes: tuple[ModelValue, ...]
    Reads: tuple[ModelValue, ...]
    MaxBallot: int

    def validate(self) -> None:
        """Derived constants: Commands, Ballots, Slots, the majority size."""
        self.commands = (*self.Writes, *self.Reads)
        self.num_commands = len(self.commands)
        self.majority = len(self.Replicas) // 2 + 1
        self.ballots = range(1, self.MaxBallot + 1)
        self.slots = range(1, self.num_commands + 1)
        # InitPending: the writes, then the reads (W.L.O.G., as the spec says).
        self.init_pending = self.commands
        self.null_node = Node(NONE, NIL, 0, 0, 0, (NULL_INST,) * self.num_commands)

    def init(self) -> list[MultiPaxosState]:
        """No messages, every node null, every command pending, nothing observed."""
        return [
            MultiPaxosState(
                msgs=frozenset(),
                node=Map(dict.fromkeys(self.Replicas, self.null_node)),
                pending=self.init_pending,
                observed=(),
                pc=Map(dict.fromkeys(self.Replicas, RLOOP)),
            )
        ]

    # -- the define block ------------------------------------------------------------
    def unseen_pending(self, s: MultiPaxosState, insts: tuple[Inst, ...]) -> tuple[Any, ...]:
        """UnseenPending(insts): pending commands in no slot yet."""
        seen = {i.cmd for i in insts}
        return tuple(c for c in s.pending if c not in seen)

    def terminated(self, s: MultiPaxosState) -> bool:
        """Nothing pending and every command requested and acknowledged."""
        reqs = {e.cmd for e in s.observed if e.type == "Req"}
        acks = {e.cmd for e in s.observed if e.type == "Ack"}
        n = self.num_commands
        return not s.pending and len(reqs) == n and len(acks) == n

    def _looping(self, s: MultiPaxosState, r: ModelValue) -> bool:
        """pc[self] = "rloop" /\\ ~terminated: an either branch may run."""
        return s.pc[r] == RLOOP and not self.terminated(s)

    def _observe(self, s: MultiPaxosState, e: Req | Ack) -> tuple[Req | Ack, ...]:
        return s.observed if e in s.observed else (*s.observed, e)

    def _peak_voted_cmd(self, prs: list[PrepareReply], slot: int) -> Any:
        """The command voted in the highest ballot among the replies, or nil."""
        votes = [pr.votes[slot - 1] for pr in prs]
        if all(v.bal == 0 for v in votes):
            return NIL
        top = max(v.bal for v in votes)
        return in_order(v.cmd for v in votes if v.bal == top)[0]

    # -- rloop's branches ------------------------------------------------------------
    @action(over=("Replicas", lambda self: self.ballots))
    def BecomeLeader(self, s: MultiPaxosState, r: ModelValue, b: int) -> MultiPaxosState | None:
        """r steps up with a fresh ballot b and broadcasts Prepare (replying to itself)."""
        if not self._looping(s, r):
            return None
        n = s.node[r]
        if n.leader == r or b <= n.balMaxKnown:
            return None
        if any(isinstance(m, Prepare) and m.bal == b for m in s.msgs):
            return None
        n2 = n._replace(leader=r, balPrepared=0, balMaxKnown=b, insts=_reprepare(n.insts))
        votes = tuple(i.voted for i in n2.insts)
        sent: set[Message] = {Prepare("Prepare", r, b), PrepareReply("PrepareReply", r, b, votes)}
        return s._replace(node=s.node.set(r, n2), msgs=s.msgs | sent)

    @action(over_state=_messages(Prepare))
    def HandlePrepare(
        self, s: MultiPaxosState, r: ModelValue, m: Prepare
    ) -> MultiPaxosState | None:
        """r follows a Prepare of a higher ballot and replies with its votes."""
        if not self._looping(s, r):
            return None
        n = s.node[r]
        if m.bal <= n.balMaxKnown:
            return None
        n2 = n._replace(leader=m.src, balMaxKnown=m.bal, insts=_reprepare(n.insts))
        votes = tuple(i.voted for i in n2.insts)
        reply = PrepareReply("PrepareReply", r, m.bal, votes)
        return s._replace(node=s.node.set(r, n2), msgs=s.msgs | {reply})

    @action(over="Replicas")
    def HandlePrepareReplies(self, s: MultiPaxosState, r: ModelValue) -> MultiPaxosState | None:
        """With a majority of PrepareReplies, the leader's ballot is prepared: it
        re-proposes the highest voted commands."""
        if not self._looping(s, r):
            return None
        n = s.node[r]
        if n.leader != r or n.balPrepared != 0:
            return None
        prs = [m for m in s.msgs if isinstance(m, PrepareReply) and m.bal == n.balMaxKnown]
        if len(prs) < self.majority:
            return None
        insts = []
        for slot in self.slots:
            inst = n.insts[slot - 1]
            peak = self._peak_voted_cmd(prs, slot)
            accepting = inst.status == PREPARING or (inst.status == EMPTY and peak != NIL)
            insts.append(inst._replace(status=ACCEPTING if accepting else inst.status, cmd=peak))
        n2 = n._replace(balPrepared=n.balMaxKnown, insts=tuple(insts))
        sent = {
            Accept("Accept", r, n2.balPrepared, slot, n2.insts[slot - 1].cmd)
            for slot in self.slots
            if n2.insts[slot - 1].status == ACCEPTING
        }
        return s._replace(node=s.node.set(r, n2), msgs=s.msgs | sent)

    @action(over=("Replicas", lambda self: self.slots))
    def TakeNewRequest(
        self, s: MultiPaxosState, r: ModelValue, empty: int
    ) -> MultiPaxosState | None:
        """A prepared leader puts the next unseen pending command in its first empty
        slot (``empty`` is the witness of the spec's ``\\E s \\in Slots : Empty``)."""
        if not self._looping(s, r):
            return None
        n = s.node[r]
        if n.leader != r or n.balPrepared != n.balMaxKnown:
            return None
        if n.insts[empty - 1].status != EMPTY:
            return None
        unseen = self.unseen_pending(s, n.insts)
        if not unseen:
            return None
        slot = next(t for t in self.slots if n.insts[t - 1].status == EMPTY)  # FirstEmptySlot
        c = unseen[0]
        inst = Inst(ACCEPTING, c, Vote(n.balPrepared, c))
        n2 = n._replace(insts=_set(n.insts, slot - 1, inst))
        sent: set[Message] = {
            Accept("Accept", r, n2.balPrepared, slot, c),
            AcceptReply("AcceptReply", r, n2.balPrepared, slot),
        }
        return s._replace(
            node=s.node.set(r, n2),
            msgs=s.msgs | sent,
            observed=self._observe(s, Req("Req", c)),
        )

    @action(over_state=_messages(Accept))
    def HandleAccept(self, s: MultiPaxosState, r: ModelValue, m: Accept) -> MultiPaxosState | None:
        """r accepts a proposal of a ballot at least as high as it knows."""
        if not self._looping(s, r):
            return None
        n = s.node[r]
        if not (m.bal >= n.balMaxKnown and m.bal > n.insts[m.slot - 1].voted.bal):
            return None
        inst = Inst(ACCEPTING, m.cmd, Vote(m.bal, m.cmd))
        n2 = n._replace(leader=m.src, balMaxKnown=m.bal, insts=_set(n.insts, m.slot - 1, inst))
        reply = AcceptReply("AcceptReply", r, m.bal, m.slot)
        return s._replace(node=s.node.set(r, n2), msgs=s.msgs | {reply})

    @action(over="Replicas")
    def HandleAcceptReplies(self, s: MultiPaxosState, r: ModelValue) -> MultiPaxosState | None:
        """With a majority of AcceptReplies for its next slot, the leader commits it,
        applies it, acknowledges the client and notifies the followers."""
        if not self._looping(s, r):
            return None
        n = s.node[r]
        if n.leader != r or n.balPrepared != n.balMaxKnown:
            return None
        if n.commitUpTo >= self.num_commands or n.insts[n.commitUpTo].status != ACCEPTING:
            return None
        slot = n.commitUpTo + 1
        c = n.insts[slot - 1].cmd
        v = n.kvalue
        ars = [
            m
            for m in s.msgs
            if isinstance(m, AcceptReply) and m.slot == slot and m.bal == n.balPrepared
        ]
        if len(ars) < self.majority:
            return None
        n2 = n._replace(
            insts=_set(n.insts, slot - 1, n.insts[slot - 1]._replace(status=COMMITTED)),
            commitUpTo=slot,
            kvalue=c if c in self.Writes else n.kvalue,
        )
        return s._replace(
            node=s.node.set(r, n2),
            observed=self._observe(s, Ack("Ack", c, v)),
            pending=tuple(x for x in s.pending if x != c),
            msgs=s.msgs | {CommitNotice("CommitNotice", slot)},
        )

    @action(over_state=_messages(CommitNotice))
    def HandleCommitNotice(
        self, s: MultiPaxosState, r: ModelValue, m: CommitNotice
    ) -> MultiPaxosState | None:
        """A follower commits its next slot on the leader's notice."""
        if not self._looping(s, r):
            return None
        n = s.node[r]
        if n.leader == r:
            return None
        if n.commitUpTo >= self.num_commands or n.insts[n.commitUpTo].status != ACCEPTING:
            return None
        slot = n.commitUpTo + 1
        if m.upto != slot:
            return None
        c = n.insts[slot - 1].cmd
        n2 = n._replace(
            insts=_set(n.insts, slot - 1, n.insts[slot - 1]._replace(status=COMMITTED)),
            commitUpTo=slot,
            kvalue=c if c in self.Writes else n.kvalue,
        )
        return s._replace(node=s.node.set(r, n2))

    @action(over="Replicas")
    def Finish(self, s: MultiPaxosState, r: ModelValue) -> MultiPaxosState | None:
        """rloop's exit once terminated: pc[self] := "Done"."""
        if s.pc[r] != RLOOP or not self.terminated(s):
            return None
        return s._replace(pc=s.pc.set(r, DONE))

    @action
    def Terminating(self, s: MultiPaxosState) -> MultiPaxosState | None:
        """Every replica Done: stutter (UNCHANGED vars)."""
        return s if all(p == DONE for p in s.pc.values()) else None

    # -- MultiPaxos_MC's invariants ------------------------------------------------
    @invariant
    def TypeOK(self, s: MultiPaxosState) -> bool:
        """Messages, nodes, pending and observed are of their types."""
        commands = set(self.commands)
        reqs = {e.cmd for e in s.observed if e.type == "Req"}
        acks = {e.cmd for e in s.observed if e.type == "Ack"}
        return (
            all(self._message_ok(m) for m in s.msgs)
            and all(self._node_ok(s.node[r]) for r in self.Replicas)
            and len(s.pending) <= self.num_commands
            and len(set(s.pending)) == len(s.pending)
            and set(s.pending) <= commands
            and len(s.observed) <= 2 * self.num_commands
            and len(set(s.observed)) == len(s.observed)
            and len(reqs) >= len(acks)
            and all(self._event_ok(e) for e in s.observed)
        )

    def _vote_ok(self, v: Vote) -> bool:
        return (v.bal == 0 or v.bal in self.ballots) and (v.cmd == NIL or v.cmd in self.commands)

    def _node_ok(self, n: Node) -> bool:
        return (
            (n.leader == NONE or n.leader in self.Replicas)
            and (n.kvalue == NIL or n.kvalue in self.Writes)
            and (n.commitUpTo == 0 or n.commitUpTo in self.slots)
            and (n.balPrepared == 0 or n.balPrepared in self.ballots)
            and (n.balMaxKnown == 0 or n.balMaxKnown in self.ballots)
            and len(n.insts) == self.num_commands
            and all(
                i.status in (EMPTY, PREPARING, ACCEPTING, COMMITTED)
                and (i.cmd == NIL or i.cmd in self.commands)
                and self._vote_ok(i.voted)
                for i in n.insts
            )
        )

    def _message_ok(self, m: Message) -> bool:
        if isinstance(m, Prepare):
            return m.src in self.Replicas and m.bal in self.ballots
        if isinstance(m, PrepareReply):
            return (
                m.src in self.Replicas
                and m.bal in self.ballots
                and len(m.votes) == self.num_commands
                and all(self._vote_ok(v) for v in m.votes)
            )
        if isinstance(m, Accept):
            return (
                m.src in self.Replicas
                and m.bal in self.ballots
                and m.slot in self.slots
                and m.cmd in self.commands
            )
        if isinstance(m, AcceptReply):
            return m.src in self.Replicas and m.bal in self.ballots and m.slot in self.slots
        return isinstance(m, CommitNotice) and m.upto in self.slots

    def _event_ok(self, e: Req | Ack) -> bool:
        if isinstance(e, Req):
            return e.cmd in self.commands
        return e.cmd in self.commands and (e.val == NIL or e.val in self.Writes)

    @invariant
    def Linearizability(self, s: MultiPaxosState) -> bool:
        """Once terminated, some order of the commands explains every acknowledged
        result and respects real time (an ack before a request orders them)."""
        if not self.terminated(s):
            return True
        obs = s.observed

        def pos(kind: str, c: Any) -> int:
            return next(i for i, e in enumerate(obs, start=1) if e.type == kind and e.cmd == c)

        def result(c: Any) -> Any:
            return obs[pos("Ack", c) - 1].val  # type: ignore[union-attr]

        for order in itertools.permutations(self.commands):
            last: Any = NIL
            linear = True
            for c in order:
                if result(c) != last:
                    linear = False
                    break
                if c in self.Writes:
                    last = c
            if not linear:
                continue
            index = {c: j for j, c in enumerate(order)}
            if all(
                not pos("Ack", c1) < pos("Req", c2) or index[c1] < index[c2]
                for c1 in self.commands
                for c2 in self.commands
            ):
                return True
        return False
