"""The prisoners and the two switches (Lamport): a port of the TLA+ Examples'
Prisoners.tla (tlaplus/Examples, specifications/Prisoners), written for mcheck from the
TLA+ source, with the constants of its Prisoners.cfg (Prisoner = {p1, p2, p3, p4},
Counter = p1).

The warden takes one prisoner at a time to a room with switches A and B.  The
counter turns switch A down whenever it is up and counts; every other prisoner turns
it up the first two times they find it down; anyone else flips B.  When the count
reaches 2 * (N - 1), every other prisoner has been in the room: ``Safety``.  Under
weak fairness of each prisoner's step, the count gets there: ``Liveness``.

``CountInvariant`` sums ``timesSwitched`` over the other prisoners by TLA+'s
recursion ``sum[S] == timesSwitched[p] + sum[S \\ {p}]`` with ``p == CHOOSE pr \\in S :
TRUE``: written here with :func:`checker.authoring.choose`, in TLC's order.

TLC's figures (the Examples' manifest, Prisoners.cfg): 214 distinct states, 860
generated, depth 14; Safety and Liveness hold.
"""

from __future__ import annotations

from typing import NamedTuple

from immutables import Map

from checker import Spec, action, choose, eventually, invariant, model_values
from checker.values import ModelValue


class PrisonersState(NamedTuple):
    """``vars == <<switchAUp, switchBUp, timesSwitched, count>>``."""

    switchAUp: bool
    switchBUp: bool
    timesSwitched: Map[ModelValue, int]
    count: int  # type: ignore[assignment]  # the TLA+ name (shadows tuple.count)


class Prisoners(Spec):
    """Prisoners.tla: Spec == Init /\\ [][Next]_vars /\\ Fairness."""

    name = "prisoners"
    constants = {"Prisoner": model_values("p", 4, group="Prisoner")}
    Prisoner: tuple[ModelValue, ...]
    # Fairness == WF_vars(CounterStep) /\\ \\A i \\in OtherPrisoner : WF_vars(NonCounterStep(i))
    fairness = {"CounterStep": "weak", "NonCounterStep": "weak"}

    @property
    def Counter(self) -> ModelValue:
        """Counter = p1 (the cfg's choice)."""
        return self.Prisoner[0]

    @property
    def OtherPrisoner(self) -> tuple[ModelValue, ...]:
        """Prisoner \\ {Counter}."""
        return self.Prisoner[1:]

    def validate(self) -> None:
        """ASSUME Cardinality(Prisoner) > 1."""
        if len(self.Prisoner) < 2:
            from checker.base.errors import ConfigError

            raise ConfigError("Prisoner needs at least two prisoners")

    def init(self) -> list[PrisonersState]:
        """Both switches either way (BOOLEAN: FALSE, TRUE), nobody switched, count 0."""
        none = Map(dict.fromkeys(self.OtherPrisoner, 0))
        return [PrisonersState(a, b, none, 0) for a in (False, True) for b in (False, True)]

    def _done(self, s: PrisonersState) -> bool:
        return s.count == 2 * (len(self.Prisoner) - 1)

    @action(over=(lambda self: self.OtherPrisoner,))
    def NonCounterStep(self, s: PrisonersState, i: ModelValue) -> PrisonersState:
        """A prisoner other than the counter: A up the first two times it is down,
        else flip B."""
        if not s.switchAUp and s.timesSwitched[i] < 2:
            return s._replace(
                switchAUp=True, timesSwitched=s.timesSwitched.set(i, s.timesSwitched[i] + 1)
            )
        return s._replace(switchBUp=not s.switchBUp)

    @action
    def CounterStep(self, s: PrisonersState) -> PrisonersState:
        """The counter: A down and count when it is up, else flip B."""
        if s.switchAUp:
            return s._replace(switchAUp=False, count=s.count + 1)
        return s._replace(switchBUp=not s.switchBUp)

    @invariant
    def TypeOK(self, s: PrisonersState) -> bool:
        """The variables' types."""
        return (
            all(0 <= s.timesSwitched[i] <= 2 for i in self.OtherPrisoner)
            and 0 <= s.count <= 2 * len(self.Prisoner) - 1
        )

    @invariant
    def CountInvariant(self, s: PrisonersState) -> bool:
        """count is the times switched, less one if A is up, or one more."""

        def total(group: frozenset[ModelValue]) -> int:
            if not group:
                return 0
            p = choose(group)  # CHOOSE pr \\in S : TRUE
            return s.timesSwitched[p] + total(group - {p})

        up = 1 if s.switchAUp else 0
        switched = total(frozenset(self.OtherPrisoner))
        return s.count in (switched - up, switched - up + 1)

    @invariant
    def Safety(self, s: PrisonersState) -> bool:
        """[](Done => every other prisoner has switched A at least once)."""
        return not self._done(s) or all(s.timesSwitched[i] > 0 for i in self.OtherPrisoner)

    @eventually
    def Liveness(self, s: PrisonersState) -> bool:
        """<>Done."""
        return self._done(s)
