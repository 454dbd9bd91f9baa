"""Die Hard: measure exactly 4 gallons with a 3-gallon and a 5-gallon jug.

The classic TLA+ example (Lamport, *Specifying Systems* and the TLA+ video course).
The invariant ``BigJugNotFour`` is violated on purpose: its shortest counterexample is
the puzzle's solution, 6 actions long.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from checker import Spec, action, invariant


@dataclass(frozen=True, slots=True)
class Jugs:
    """Gallons in each jug."""

    big: int
    small: int


class DieHard(Spec):
    """Fill, empty and pour between two jugs until the big one holds ``Target``."""

    constants = {"Big": 5, "Small": 3, "Target": 4}
    Big: int
    Small: int
    Target: int

    def init(self) -> list[Jugs]:
        """Both jugs empty."""
        return [Jugs(big=0, small=0)]

    @action
    def FillSmall(self, s: Jugs) -> Jugs | None:
        """Fill the small jug from the tap."""
        return replace(s, small=self.Small) if s.small < self.Small else None

    @action
    def FillBig(self, s: Jugs) -> Jugs | None:
        """Fill the big jug from the tap."""
        return replace(s, big=self.Big) if s.big < self.Big else None

    @action
    def EmptySmall(self, s: Jugs) -> Jugs | None:
        """Pour the small jug away."""
        return replace(s, small=0) if s.small > 0 else None

    @action
    def EmptyBig(self, s: Jugs) -> Jugs | None:
        """Pour the big jug away."""
        return replace(s, big=0) if s.big > 0 else None

    @action
    def SmallToBig(self, s: Jugs) -> Jugs | None:
        """Pour the small jug into the big one until one is empty or the other full."""
        if s.small == 0 or s.big == self.Big:
            return None
        poured = min(s.small, self.Big - s.big)
        return Jugs(big=s.big + poured, small=s.small - poured)

    @action
    def BigToSmall(self, s: Jugs) -> Jugs | None:
        """Pour the big jug into the small one until one is empty or the other full."""
        if s.big == 0 or s.small == self.Small:
            return None
        poured = min(s.big, self.Small - s.small)
        return Jugs(big=s.big - poured, small=s.small + poured)

    @invariant
    def BigJugNotFour(self, s: Jugs) -> bool:
        """The puzzle is unsolved: the big jug does not hold ``Target`` gallons."""
        return s.big != self.Target
