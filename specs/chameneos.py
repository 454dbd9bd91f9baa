"""Chameneos: the concurrency game of Kaiser and Pradat-Peyre, ported from the TLA+
Examples.

Source: github.com/tlaplus/Examples, ``specifications/Chameneos/Chameneos.tla``
(commit 32a32c7), model ``Chameneos.cfg``: ``N = 4`` meetings, ``M = 4`` creatures,
``Faded`` and ``MeetingPlaceEmpty`` model values, invariants TypeOK and SumMet, no
deadlock check.  TLC (the Examples' manifest): 34,534 distinct states, 104,697
generated, depth 13.

``chameneoses`` (a function over ``ChameneosID = 1 .. M``) is a map from creature to
its ``<<colour, meetings>>`` pair; ``Complement``'s CHOOSE has exactly one candidate.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from immutables import Map

from checker import Spec, action, invariant, named_values
from checker.values import ModelValue

BLUE, RED, YELLOW = "blue", "red", "yellow"
COLOR = (BLUE, RED, YELLOW)
FADED, MEETING_PLACE_EMPTY = named_values(["Faded", "MeetingPlaceEmpty"], "Chameneos")


class ChameneosState(NamedTuple):
    """Each creature's (colour, meetings), who waits at the meeting place, meetings."""

    chameneoses: Map[int, tuple[str | ModelValue, int]]
    meetingPlace: int | ModelValue
    numMeetings: int


def complement(c1: str | ModelValue, c2: str | ModelValue) -> str | ModelValue:
    """Complement(c1, c2): the same colour, or the third one."""
    if c1 == c2:
        return c1
    return next(c for c in COLOR if c not in (c1, c2))


class Chameneos(Spec):
    """Creatures meet pairwise and change colour until N meetings have happened."""

    constants = {"N": 4, "M": 4}
    check_deadlock = False
    lanes = lambda self: range(1, self.M + 1)  # noqa: E731 - the creatures' lanes

    N: int
    M: int

    def ids(self) -> range:
        """ChameneosID == 1 .. M."""
        return range(1, self.M + 1)

    def init(self) -> list[ChameneosState]:
        """Any colours, no meetings, an empty meeting place."""
        return [
            ChameneosState(
                Map(zip(self.ids(), ((c, 0) for c in colours), strict=True)), MEETING_PLACE_EMPTY, 0
            )
            for colours in itertools.product(COLOR, repeat=self.M)
        ]

    @action(over=lambda self: self.ids())
    def Meet(self, s: ChameneosState, cid: int) -> ChameneosState | None:
        """Next's \\E c \\in {x : chameneoses[x][1] /= Faded}: Meet(c)."""
        cham = s.chameneoses
        colour, met = cham[cid]
        if colour == FADED:
            return None
        if s.meetingPlace == MEETING_PLACE_EMPTY:
            if s.numMeetings < self.N:
                return s._replace(meetingPlace=cid)  # enters the empty meeting place
            return s._replace(chameneoses=cham.set(cid, (FADED, met)))  # fades
        if s.meetingPlace == cid:
            return None
        other = s.meetingPlace
        assert isinstance(other, int)
        new_colour = complement(colour, cham[other][0])
        return ChameneosState(
            chameneoses=cham.set(cid, (new_colour, met + 1)).set(
                other, (new_colour, cham[other][1] + 1)
            ),
            meetingPlace=MEETING_PLACE_EMPTY,
            numMeetings=s.numMeetings + 1,
        )

    @invariant
    def TypeOK(self, s: ChameneosState) -> bool:
        """Colours (or Faded) and meeting counts 0..N; the place holds a creature or
        is empty."""
        return (
            set(s.chameneoses) == set(self.ids())
            and all(
                (c in COLOR or c == FADED) and 0 <= n <= self.N for c, n in s.chameneoses.values()
            )
            and (s.meetingPlace == MEETING_PLACE_EMPTY or s.meetingPlace in self.ids())
        )

    @invariant
    def SumMet(self, s: ChameneosState) -> bool:
        """Once N meetings happened, the creatures' meeting counts sum to 2 * N."""
        if s.numMeetings != self.N:
            return True
        return sum(n for _, n in s.chameneoses.values()) == 2 * self.N
