"""Two-phase commit: Lamport's ``TwoPhase.tla``, the classic symmetric example.

A transaction manager (TM) and resource managers (RMs).  RMs prepare or choose to
abort; the TM commits once every RM has prepared, or aborts at any time before that.
The RMs are interchangeable, so the spec declares them symmetric: with 3 RMs TLC finds
288 distinct states, and with 5 RMs 8,832 without symmetry (stateright's 2PC example
reports the same, and 665 under symmetry).
"""

from __future__ import annotations

from typing import NamedTuple

from pyrsistent import PMap, PSet, pmap, pset

from checker import Spec, action, invariant, model_values
from checker.values import ModelValue


class Msg(NamedTuple):
    """A message: ``[type |-> "Prepared", rm |-> r]``, or Commit / Abort (rm is Nil)."""

    type: str
    rm: ModelValue | None


COMMIT = Msg("Commit", None)
ABORT = Msg("Abort", None)


class TwoPhaseState(NamedTuple):
    """TwoPhase.tla's variables."""

    rmState: PMap[ModelValue, str]
    tmState: str
    tmPrepared: PSet[ModelValue]
    msgs: PSet[Msg]


class TwoPhase(Spec):
    """The two-phase commit protocol with a TM and symmetric RMs."""

    constants = {"RM": model_values("r", 3, group="RM")}
    symmetry = ("RM",)
    RM: tuple[ModelValue, ...]

    def init(self) -> list[TwoPhaseState]:
        """Every RM working, TM in its initial state, no messages."""
        return [TwoPhaseState(pmap(dict.fromkeys(self.RM, "working")), "init", pset(), pset())]

    @action(over="RM")
    def TMRcvPrepared(self, s: TwoPhaseState, r: ModelValue) -> TwoPhaseState | None:
        """The TM receives a Prepared message from RM r."""
        if s.tmState != "init" or Msg("Prepared", r) not in s.msgs:
            return None
        return s._replace(tmPrepared=s.tmPrepared.add(r))

    @action
    def TMCommit(self, s: TwoPhaseState) -> TwoPhaseState | None:
        """The TM commits once every RM has prepared."""
        if s.tmState != "init" or len(s.tmPrepared) != len(self.RM):
            return None
        return s._replace(tmState="committed", msgs=s.msgs.add(COMMIT))

    @action
    def TMAbort(self, s: TwoPhaseState) -> TwoPhaseState | None:
        """The TM spontaneously aborts."""
        if s.tmState != "init":
            return None
        return s._replace(tmState="aborted", msgs=s.msgs.add(ABORT))

    @action(over="RM")
    def RMPrepare(self, s: TwoPhaseState, r: ModelValue) -> TwoPhaseState | None:
        """RM r prepares and tells the TM."""
        if s.rmState[r] != "working":
            return None
        return s._replace(rmState=s.rmState.set(r, "prepared"), msgs=s.msgs.add(Msg("Prepared", r)))

    @action(over="RM")
    def RMChooseToAbort(self, s: TwoPhaseState, r: ModelValue) -> TwoPhaseState | None:
        """RM r spontaneously aborts."""
        if s.rmState[r] != "working":
            return None
        return s._replace(rmState=s.rmState.set(r, "aborted"))

    @action(over="RM")
    def RMRcvCommitMsg(self, s: TwoPhaseState, r: ModelValue) -> TwoPhaseState | None:
        """RM r is told to commit."""
        if COMMIT not in s.msgs:
            return None
        return s._replace(rmState=s.rmState.set(r, "committed"))

    @action(over="RM")
    def RMRcvAbortMsg(self, s: TwoPhaseState, r: ModelValue) -> TwoPhaseState | None:
        """RM r is told to abort."""
        if ABORT not in s.msgs:
            return None
        return s._replace(rmState=s.rmState.set(r, "aborted"))

    @invariant
    def TCConsistent(self, s: TwoPhaseState) -> bool:
        """No RM has committed while another has aborted."""
        states = set(s.rmState.values())
        return not ("committed" in states and "aborted" in states)
