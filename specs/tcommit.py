"""TCommit: the transaction-commit specification of Gray and Lamport's *Consensus on
Transaction Commit*, ported from the TLA+ Examples.

Source: github.com/tlaplus/Examples, ``specifications/transaction_commit/TCommit.tla``
(commit 32a32c7), model ``TCommit.cfg``: ``RM = {r1, r2, r3}``, invariants TCTypeOK and
TCConsistent, no deadlock check, no symmetry.  TLC (the Examples' manifest): 34
distinct states, 94 generated, depth 7.

``Decide(rm)`` is a disjunction in the TLA+ (commit, or abort); it is written here as
two actions, DecideCommit and DecideAbort, with the same guards.
"""

from __future__ import annotations

from typing import NamedTuple

from immutables import Map

from checker import Spec, action, invariant, model_values
from checker.check.validate import LogMapping, On
from checker.values import ModelValue, put

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"


class TCState(NamedTuple):
    """``rmState[rm]``: the state of resource manager rm."""

    rmState: Map[ModelValue, str]


class TCommit(Spec):
    """All resource managers agree to commit or abort a transaction."""

    constants = {"RM": model_values("r", 3, group="RM")}
    check_deadlock = False
    lanes = "RM"

    RM: tuple[ModelValue, ...]

    #: TLC's counterexamples of TCommit.tla (``mcheck replay tcommit --from-tlc
    #: FILE``): TLC's step ``Decide(rm)`` is one of the two actions here.
    tla_mapping = LogMapping(events={"Decide": On(actions=("DecideCommit", "DecideAbort"))})

    def init(self) -> list[TCState]:
        """TCInit: every resource manager is working."""
        return [TCState(rmState=Map(dict.fromkeys(self.RM, WORKING)))]

    def can_commit(self, s: TCState) -> bool:
        """canCommit: every RM is prepared or committed."""
        return all(s.rmState[rm] in (PREPARED, COMMITTED) for rm in self.RM)

    def not_committed(self, s: TCState) -> bool:
        """notCommitted: no RM has committed."""
        return all(s.rmState[rm] != COMMITTED for rm in self.RM)

    @action(over="RM")
    def Prepare(self, s: TCState, rm: ModelValue) -> TCState | None:
        """A working RM prepares."""
        if s.rmState[rm] != WORKING:
            return None
        return TCState(put(s.rmState, rm, PREPARED))

    @action(over="RM")
    def DecideCommit(self, s: TCState, rm: ModelValue) -> TCState | None:
        """Decide(rm), first disjunct: a prepared RM commits once all can commit."""
        if s.rmState[rm] != PREPARED or not self.can_commit(s):
            return None
        return TCState(put(s.rmState, rm, COMMITTED))

    @action(over="RM")
    def DecideAbort(self, s: TCState, rm: ModelValue) -> TCState | None:
        """Decide(rm), second disjunct: a working or prepared RM aborts while none
        has committed."""
        if s.rmState[rm] not in (WORKING, PREPARED) or not self.not_committed(s):
            return None
        return TCState(put(s.rmState, rm, ABORTED))

    @invariant
    def TCTypeOK(self, s: TCState) -> bool:
        """rmState is a function from RM to the four states."""
        states = (WORKING, PREPARED, COMMITTED, ABORTED)
        return set(s.rmState) == set(self.RM) and all(v in states for v in s.rmState.values())

    @invariant
    def TCConsistent(self, s: TCState) -> bool:
        """No RM has aborted while another has committed."""
        values = set(s.rmState.values())
        return not (ABORTED in values and COMMITTED in values)
