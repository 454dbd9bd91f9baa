"""The Coffee Can problem (Gries, after Scholten and Dijkstra): a port of the TLA+
Examples' CoffeeCan.tla (tlaplus/Examples, specifications/CoffeeCan), written for
mcheck from the TLA+ source.

A can holds black and white beans.  Repeatedly take two beans out: two of the same
colour go and one black bean goes in; one of each, the white one goes back.  Each step
removes one bean, so the process ends with one bean left; which colour it is depends
only on whether the number of white beans was even at the start.

The port keeps the original's properties, each in mcheck's form:
- ``TypeInvariant`` (an invariant);
- ``MonotonicDecrease == [][BeanCount' < BeanCount]_can`` and ``LoopInvariant ==
  [][can.white % 2 = 0 <=> can'.white % 2 = 0]_can``: action properties, checked on
  every step (the stuttering ``Termination`` step satisfies both, as ``[A]_can`` does);
- ``EventuallyTerminates == <>(ENABLED Termination)``: ``self.enabled``;
- ``TerminationHypothesis == IF can.white % 2 = 0 THEN <>(black = 1 /\\ white = 0)
  ELSE <>(black = 0 /\\ white = 1)`` reads the initial state (the IF is evaluated on
  the first state only): two properties, ``<>(one black bean)`` on the behaviours that
  start with an even number of white beans (``start=``) and ``<>(one white bean)`` on
  the others, whose conjunction is exactly the formula.

TLC's figures (the Examples' manifest, CoffeeCan100Beans.cfg with MaxBeanCount = 100):
5,150 distinct states, 20,002 generated, depth 1 (every state is an initial state).
"""

from __future__ import annotations

from typing import NamedTuple

from checker import Spec, action, action_property, eventually, invariant


class Can(NamedTuple):
    """The beans in the can (TLA+: ``[black: 0..MaxBeanCount, white: 0..MaxBeanCount]``)."""

    black: int
    white: int


class CoffeeCanState(NamedTuple):
    """``VARIABLES can``."""

    can: Can


def _count(s: CoffeeCanState) -> int:
    """BeanCount == can.black + can.white."""
    return s.can.black + s.can.white


def _starts_even(self: CoffeeCan, s0: CoffeeCanState) -> bool:
    """The IF of TerminationHypothesis, on the initial state: can.white % 2 = 0."""
    return s0.can.white % 2 == 0


def _starts_odd(self: CoffeeCan, s0: CoffeeCanState) -> bool:
    """Its ELSE."""
    return not _starts_even(self, s0)


class CoffeeCan(Spec):
    """CoffeeCan.tla: Spec == Init /\\ [][Next]_can /\\ WF_can(Next)."""

    name = "coffee_can"
    constants = {"MaxBeanCount": 100}
    MaxBeanCount: int
    # WF_can(Next): Next as one action, the disjunction of the four.
    fairness = {
        ("PickSameColorWhite", "PickSameColorBlack", "PickDifferentColor", "Termination"): "weak"
    }

    def init(self) -> list[CoffeeCanState]:
        """Init == can \\in {c \\in Can : c.black + c.white \\in 1..MaxBeanCount}."""
        m = self.MaxBeanCount
        return [
            CoffeeCanState(Can(b, w)) for b in range(m + 1) for w in range(m + 1) if 1 <= b + w <= m
        ]

    @action
    def PickSameColorWhite(self, s: CoffeeCanState) -> CoffeeCanState | None:
        """Two white beans out, one black bean in."""
        if _count(s) <= 1 or s.can.white < 2:
            return None
        return CoffeeCanState(Can(s.can.black + 1, s.can.white - 2))

    @action
    def PickSameColorBlack(self, s: CoffeeCanState) -> CoffeeCanState | None:
        """Two black beans out, one black bean in."""
        if _count(s) <= 1 or s.can.black < 2:
            return None
        return CoffeeCanState(Can(s.can.black - 1, s.can.white))

    @action
    def PickDifferentColor(self, s: CoffeeCanState) -> CoffeeCanState | None:
        """One of each: the white one goes back, the black one is thrown away."""
        if _count(s) <= 1 or s.can.black < 1 or s.can.white < 1:
            return None
        return CoffeeCanState(Can(s.can.black - 1, s.can.white))

    @action
    def Termination(self, s: CoffeeCanState) -> CoffeeCanState | None:
        """One bean left: UNCHANGED can (so the end is no deadlock)."""
        if _count(s) != 1:
            return None
        return s

    @invariant
    def TypeInvariant(self, s: CoffeeCanState) -> bool:
        """can \\in Can."""
        m = self.MaxBeanCount
        return 0 <= s.can.black <= m and 0 <= s.can.white <= m

    @action_property
    def MonotonicDecrease(self, before: CoffeeCanState, after: CoffeeCanState) -> bool:
        """[][BeanCount' < BeanCount]_can: every step takes a bean out."""
        return _count(after) < _count(before)

    @action_property
    def LoopInvariant(self, before: CoffeeCanState, after: CoffeeCanState) -> bool:
        """[][can.white % 2 = 0 <=> can'.white % 2 = 0]_can: the parity of white stays."""
        return (before.can.white % 2 == 0) == (after.can.white % 2 == 0)

    @eventually
    def EventuallyTerminates(self, s: CoffeeCanState) -> bool:
        """<>(ENABLED Termination)."""
        return self.enabled(s, "Termination")

    @eventually(start=_starts_even)
    def TerminationHypothesisEven(self, s: CoffeeCanState) -> bool:
        """THEN <>(can.black = 1 /\\ can.white = 0), from an even number of white beans."""
        return s.can.black == 1 and s.can.white == 0

    @eventually(start=_starts_odd)
    def TerminationHypothesisOdd(self, s: CoffeeCanState) -> bool:
        """ELSE <>(can.black = 0 /\\ can.white = 1), from an odd number."""
        return s.can.black == 0 and s.can.white == 1
