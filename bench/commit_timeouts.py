"""Two-phase commit with timeouts and a termination query: a bench model whose
state is a set of records.

Written for issue 27 before any tuning, in a style the engine had not met: messages
are NamedTuple records (``Prepared``, ``Aborted``, ``Query``, decisions) kept in a
``pyrsistent.pset``, beside per-resource-manager tuples.
:mod:`bench.commit_timeouts_plain` is the same model over plain tuples and frozensets.

A resource manager prepares or aborts on its own; the transaction manager commits
once every RM is prepared, or aborts on a timeout while it is still collecting; a
prepared RM that hears nothing asks the TM (``Query``), which answers with its
decision once it has one.  Messages are never lost here, so the set only grows.
Invariant: no RM committed while another aborted.
"""

from __future__ import annotations

from typing import NamedTuple

from pyrsistent import PSet, pset

from checker import Spec, action, invariant


class Msg(NamedTuple):
    """A message, as TLA+ writes one: ``[type |-> "Prepared", rm |-> r]``.  (Not one
    NamedTuple class per type: Python's ``==``, and so a pset, takes ``Prepared(0)``
    and ``Aborted(0)`` for the same element, whatever the class.)"""

    type: str
    rm: int


def Prepared(rm: int) -> Msg:
    """RM ``rm`` voted yes."""
    return Msg("Prepared", rm)


def Aborted(rm: int) -> Msg:
    """RM ``rm`` aborted on its own."""
    return Msg("Aborted", rm)


def Query(rm: int) -> Msg:
    """Prepared RM ``rm`` asks for the decision."""
    return Msg("Query", rm)


def Decision(outcome: str) -> Msg:
    """The TM's decision, ``"commit"`` or ``"abort"``."""
    return Msg(outcome, -1)


class CommitState(NamedTuple):
    """Per RM its state; the TM's state and the RMs it knows prepared; the messages."""

    rmState: tuple[str, ...]
    tmState: str
    tmPrepared: frozenset[int]
    msgs: PSet[Msg]


class CommitTimeouts(Spec):
    """Two-phase commit with timeouts (see the module docstring)."""

    name = "commit_timeouts"
    constants = {"RMs": 4}
    check_deadlock = False
    RMs: int

    def init(self) -> list[CommitState]:
        """Every RM working, the TM collecting, no messages."""
        return [CommitState(("working",) * self.RMs, "init", frozenset(), pset())]

    def _rm(self, s: CommitState, rm: int, st: str) -> tuple[str, ...]:
        return (*s.rmState[:rm], st, *s.rmState[rm + 1 :])

    @action(over=lambda self: range(self.RMs))
    def RMPrepare(self, s: CommitState, rm: int) -> CommitState | None:
        """RM rm prepares and votes yes."""
        if s.rmState[rm] != "working":
            return None
        return s._replace(rmState=self._rm(s, rm, "prepared"), msgs=s.msgs.add(Prepared(rm)))

    @action(over=lambda self: range(self.RMs))
    def RMChooseToAbort(self, s: CommitState, rm: int) -> CommitState | None:
        """RM rm aborts on its own and says so."""
        if s.rmState[rm] != "working":
            return None
        return s._replace(rmState=self._rm(s, rm, "aborted"), msgs=s.msgs.add(Aborted(rm)))

    @action(over=lambda self: range(self.RMs))
    def RMTimeout(self, s: CommitState, rm: int) -> CommitState | None:
        """Prepared RM rm heard nothing in time: it asks the TM."""
        if s.rmState[rm] != "prepared" or Query(rm) in s.msgs:
            return None
        return s._replace(msgs=s.msgs.add(Query(rm)))

    @action(over=lambda self: range(self.RMs))
    def RMRcvDecision(self, s: CommitState, rm: int) -> CommitState | None:
        """RM rm learns the decision."""
        if s.rmState[rm] not in ("working", "prepared"):
            return None
        if Decision("commit") in s.msgs:
            return s._replace(rmState=self._rm(s, rm, "committed"))
        if Decision("abort") in s.msgs:
            return s._replace(rmState=self._rm(s, rm, "aborted"))
        return None

    @action(over=lambda self: range(self.RMs))
    def TMRcvPrepared(self, s: CommitState, rm: int) -> CommitState | None:
        """The TM records RM rm's yes vote."""
        if s.tmState != "init" or rm in s.tmPrepared or Prepared(rm) not in s.msgs:
            return None
        return s._replace(tmPrepared=s.tmPrepared | {rm})

    @action
    def TMCommit(self, s: CommitState) -> CommitState | None:
        """Every RM voted yes: the TM commits."""
        if s.tmState != "init" or len(s.tmPrepared) != self.RMs:
            return None
        return s._replace(tmState="committed", msgs=s.msgs.add(Decision("commit")))

    @action
    def TMAbort(self, s: CommitState) -> CommitState | None:
        """The TM timed out (or heard an abort) while collecting: it aborts."""
        if s.tmState != "init":
            return None
        return s._replace(tmState="aborted", msgs=s.msgs.add(Decision("abort")))

    @invariant
    def Consistent(self, s: CommitState) -> bool:
        """No RM committed while another aborted."""
        return not ("committed" in s.rmState and "aborted" in s.rmState)

    @invariant
    def AbortedRMsSaidSo(self, s: CommitState) -> bool:
        """An RM that aborted on its own sent Aborted, never Prepared."""
        return all(not (Aborted(r) in s.msgs and Prepared(r) in s.msgs) for r in range(self.RMs))
