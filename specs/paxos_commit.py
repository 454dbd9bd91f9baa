"""PaxosCommit: Gray and Lamport's Paxos Commit, ported from the TLA+ Examples.

Source: github.com/tlaplus/Examples,
``specifications/transaction_commit/PaxosCommit.tla`` (commit 32a32c7), model
``PaxosCommit.cfg``: ``RM = {r1, r2}``, ``Acceptor = {a1, a2, a3}``, the three
two-acceptor majorities, ``Ballot = {0, 1}``, invariant PCTypeOK, deadlock checking
on.  TLC (the Examples' manifest): 1,321,761 distinct states, 16,959,159 generated,
depth 28.

Every ``\\E`` of an action is an action parameter, so each witness is a successor of
its own, as TLC enumerates them: ``Phase2a(bal, rm)``'s majority ``MS``, ``Decide``'s
``\\E rm \\in RM : Decided(rm, "aborted")`` (with Decided's own ``\\E b, MS``), and
``Phase1b``/``Phase2b``'s message ``m``.  ``Decide``'s two disjuncts are DecideCommit
and DecideAbort.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from immutables import Map

from checker import Spec, action, in_order, invariant, named_values
from checker.values import ModelValue

WORKING, PREPARED, COMMITTED, ABORTED, NONE = (
    "working",
    "prepared",
    "committed",
    "aborted",
    "none",
)


class Msg1a(NamedTuple):
    """[type |-> "phase1a", ins, bal]."""

    type: str
    ins: ModelValue
    bal: int


class Msg1b(NamedTuple):
    """[type |-> "phase1b", ins, mbal, bal, val, acc]."""

    type: str
    ins: ModelValue
    mbal: int
    bal: int
    val: str
    acc: ModelValue


class Msg2a(NamedTuple):
    """[type |-> "phase2a", ins, bal, val]."""

    type: str
    ins: ModelValue
    bal: int
    val: str


class Msg2b(NamedTuple):
    """[type |-> "phase2b", acc, ins, bal, val]."""

    type: str
    acc: ModelValue
    ins: ModelValue
    bal: int
    val: str


class Decision(NamedTuple):
    """[type |-> "Commit"] or [type |-> "Abort"]."""

    type: str


COMMIT, ABORT = Decision("Commit"), Decision("Abort")
Message = Msg1a | Msg1b | Msg2a | Msg2b | Decision


class AcceptorState(NamedTuple):
    """aState[ins][ac]: [mbal, bal, val]."""

    mbal: int
    bal: int
    val: str


class PaxosCommitState(NamedTuple):
    """The variables of PaxosCommit."""

    rmState: Map[ModelValue, str]
    aState: Map[ModelValue, Map[ModelValue, AcceptorState]]
    msgs: frozenset[Message]


def _msgs_of(kind: type, spec: Any, s: PaxosCommitState) -> list[tuple[ModelValue, Any]]:
    """(acc, m) for every acceptor and every message of one kind (Phase1b/2b's \\E m)."""
    found = in_order(s.msgs, kind)
    return [(acc, m) for acc in spec.Acceptor for m in found]


class PaxosCommit(Spec):
    """Transaction commit where each RM's vote is chosen by a Paxos instance."""

    constants = {
        "RM": named_values(["r1", "r2"], "RM"),
        "Acceptor": named_values(["a1", "a2", "a3"], "Acceptor"),
        "Ballot": (0, 1),
    }
    lanes = "RM"

    RM: tuple[ModelValue, ...]
    Acceptor: tuple[ModelValue, ...]
    Ballot: tuple[int, ...]

    def majorities(self) -> list[frozenset[ModelValue]]:
        """Majority: the sets of acceptors of more than half their number (the cfg's
        {{a1, a2}, {a1, a3}, {a2, a3}} for three acceptors)."""
        from itertools import combinations

        k = len(self.Acceptor) // 2 + 1
        return [frozenset(c) for c in combinations(self.Acceptor, k)]

    def init(self) -> list[PaxosCommitState]:
        """Every RM working, every acceptor [mbal 0, bal -1, val none], no messages."""
        fresh = Map(dict.fromkeys(self.Acceptor, AcceptorState(0, -1, NONE)))
        return [
            PaxosCommitState(
                rmState=Map(dict.fromkeys(self.RM, WORKING)),
                aState=Map(dict.fromkeys(self.RM, fresh)),
                msgs=frozenset(),
            )
        ]

    def _send(self, s: PaxosCommitState, m: Message, **changes: Any) -> PaxosCommitState:
        return s._replace(msgs=s.msgs | {m}, **changes)

    # -- the resource managers -------------------------------------------------------
    @action(over="RM")
    def RMPrepare(self, s: PaxosCommitState, rm: ModelValue) -> PaxosCommitState | None:
        """A working RM prepares and votes prepared in ballot 0 of its instance."""
        if s.rmState[rm] != WORKING:
            return None
        return self._send(s, Msg2a("phase2a", rm, 0, PREPARED), rmState=s.rmState.set(rm, PREPARED))

    @action(over="RM")
    def RMChooseToAbort(self, s: PaxosCommitState, rm: ModelValue) -> PaxosCommitState | None:
        """A working RM aborts and votes aborted in ballot 0 of its instance."""
        if s.rmState[rm] != WORKING:
            return None
        return self._send(s, Msg2a("phase2a", rm, 0, ABORTED), rmState=s.rmState.set(rm, ABORTED))

    @action(over="RM")
    def RMRcvCommitMsg(self, s: PaxosCommitState, rm: ModelValue) -> PaxosCommitState | None:
        """An RM learns the transaction committed."""
        if COMMIT not in s.msgs:
            return None
        return s._replace(rmState=s.rmState.set(rm, COMMITTED))

    @action(over="RM")
    def RMRcvAbortMsg(self, s: PaxosCommitState, rm: ModelValue) -> PaxosCommitState | None:
        """An RM learns the transaction aborted."""
        if ABORT not in s.msgs:
            return None
        return s._replace(rmState=s.rmState.set(rm, ABORTED))

    # -- the leaders ------------------------------------------------------------------
    @action(over=(lambda self: [b for b in self.Ballot if b != 0], "RM"))
    def Phase1a(self, s: PaxosCommitState, bal: int, rm: ModelValue) -> PaxosCommitState:
        """A leader starts ballot bal of rm's instance."""
        return self._send(s, Msg1a("phase1a", rm, bal))

    @action(
        over=(lambda self: [b for b in self.Ballot if b != 0], "RM", lambda self: self.majorities())
    )
    def Phase2a(
        self, s: PaxosCommitState, bal: int, rm: ModelValue, ms: frozenset[ModelValue]
    ) -> PaxosCommitState | None:
        """With phase-1b messages from majority MS, the leader proposes in ballot bal
        the value of the highest ballot they report (aborted if none)."""
        if any(isinstance(m, Msg2a) and m.bal == bal and m.ins == rm for m in s.msgs):
            return None
        mset = [
            m
            for m in s.msgs
            if isinstance(m, Msg1b) and m.ins == rm and m.mbal == bal and m.acc in ms
        ]
        if not all(any(m.acc == ac for m in mset) for ac in ms):
            return None
        maxbal = max((m.bal for m in mset), default=-1)
        val = ABORTED if maxbal == -1 else in_order(m for m in mset if m.bal == maxbal)[0].val
        return self._send(s, Msg2a("phase2a", rm, bal, val))

    def decided(self, s: PaxosCommitState, rm: ModelValue, v: str, b: int, ms: Any) -> bool:
        """Decided(rm, v)'s body for one witness (b, MS): all of MS voted v in b."""
        return all(Msg2b("phase2b", ac, rm, b, v) in s.msgs for ac in ms)

    def _commit_witnesses(self) -> list[tuple[tuple[int, frozenset[ModelValue]], ...]]:
        r"""One (b, MS) per RM: TLC expands ``\A rm \in RM : Decided(rm, "prepared")``
        into a conjunction and enumerates each Decided's ``\E b, MS``."""
        from itertools import product

        per_rm = [(b, ms) for b in self.Ballot for ms in self.majorities()]
        return [tuple(w) for w in product(per_rm, repeat=len(self.RM))]

    @action(over=lambda self: self._commit_witnesses())
    def DecideCommit(self, s: PaxosCommitState, witness: Any) -> PaxosCommitState | None:
        """Every instance chose prepared (witness: a ballot and majority per RM): the
        leader sends Commit."""
        if not all(
            self.decided(s, rm, PREPARED, b, ms)
            for rm, (b, ms) in zip(self.RM, witness, strict=True)
        ):
            return None
        return self._send(s, COMMIT)

    @action(over=("RM", "Ballot", lambda self: self.majorities()))
    def DecideAbort(
        self, s: PaxosCommitState, rm: ModelValue, b: int, ms: frozenset[ModelValue]
    ) -> PaxosCommitState | None:
        """Some instance chose aborted (witness rm, b, MS): the leader sends Abort."""
        if not self.decided(s, rm, ABORTED, b, ms):
            return None
        return self._send(s, ABORT)

    # -- the acceptors ------------------------------------------------------------------
    @action(over_state=lambda self, s: _msgs_of(Msg1a, self, s))
    def Phase1b(self, s: PaxosCommitState, acc: ModelValue, m: Msg1a) -> PaxosCommitState | None:
        """Acceptor acc joins ballot m.bal and reports its vote."""
        mine = s.aState[m.ins][acc]
        if not mine.mbal < m.bal:
            return None
        reply = Msg1b("phase1b", m.ins, m.bal, mine.bal, mine.val, acc)
        row = s.aState[m.ins].set(acc, mine._replace(mbal=m.bal))
        return self._send(s, reply, aState=s.aState.set(m.ins, row))

    @action(over_state=lambda self, s: _msgs_of(Msg2a, self, s))
    def Phase2b(self, s: PaxosCommitState, acc: ModelValue, m: Msg2a) -> PaxosCommitState | None:
        """Acceptor acc votes for m.val in ballot m.bal."""
        mine = s.aState[m.ins][acc]
        if not mine.mbal <= m.bal:
            return None
        row = s.aState[m.ins].set(acc, AcceptorState(m.bal, m.bal, m.val))
        reply = Msg2b("phase2b", acc, m.ins, m.bal, m.val)
        return self._send(s, reply, aState=s.aState.set(m.ins, row))

    @invariant
    def PCTypeOK(self, s: PaxosCommitState) -> bool:
        """rmState, aState and msgs are of the right types."""
        rm_states = (WORKING, PREPARED, COMMITTED, ABORTED)
        ok = set(s.rmState) == set(self.RM) and all(v in rm_states for v in s.rmState.values())
        for row in s.aState.values():
            for a in row.values():
                ok = ok and a.mbal in self.Ballot and (a.bal in self.Ballot or a.bal == -1)
                ok = ok and a.val in (PREPARED, ABORTED, NONE)
        return ok and all(self._message_ok(m) for m in s.msgs)

    def _message_ok(self, m: Message) -> bool:
        if isinstance(m, Msg1a):
            return m.ins in self.RM and m.bal in self.Ballot and m.bal != 0
        if isinstance(m, Msg1b):
            return (
                m.ins in self.RM
                and m.mbal in self.Ballot
                and (m.bal in self.Ballot or m.bal == -1)
                and m.val in (PREPARED, ABORTED, NONE)
                and m.acc in self.Acceptor
            )
        if isinstance(m, Msg2a):
            return m.ins in self.RM and m.bal in self.Ballot and m.val in (PREPARED, ABORTED)
        if isinstance(m, Msg2b):
            return (
                m.acc in self.Acceptor
                and m.ins in self.RM
                and m.bal in self.Ballot
                and m.val in (PREPARED, ABORTED)
            )
        return m in (COMMIT, ABORT)
