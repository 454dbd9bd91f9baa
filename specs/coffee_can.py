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
  ELSE <>(black = 0 /\\ white = 1)`` reads the initial state, which mcheck's temporal
  properties cannot: it is checked as two leads-to properties (``white even ~> one
  black bean``, ``white odd ~> one white bean``), which say more in general and the
  same here, since LoopInvariant (checked) keeps the parity of white along every step.

TLC's figures (the Examples' manifest, CoffeeCan100Beans.cfg with MaxBeanCount = 100):
5,150 distinct states, 20,002 generated, depth 1 (every state is an initial state).
"""

from __future__ import annotations

from typing import NamedTuple

from checker import Spec, action, action_property, eventually, invariant, leads_to


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


def _even_white(self: CoffeeCan, s: CoffeeCanState) -> bool:
    return s.can.white % 2 == 0


def _odd_white(self: CoffeeCan, s: CoffeeCanState) -> bool:
    return s.can.white % 2 == 1


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

    @leads_to(_even_white)
    def EvenWhiteEndsBlack(self, s: CoffeeCanState) -> bool:
        """TerminationHypothesis, even case: ~> one black bean, no white."""
        return s.can.black == 1 and s.can.white == 0

    @leads_to(_odd_white)
    def OddWhiteEndsWhite(self, s: CoffeeCanState) -> bool:
        """TerminationHypothesis, odd case: ~> one white bean, no black."""
        return s.can.black == 0 and s.can.white == 1
