"""EWD840: Dijkstra, Feijen and van Gasteren's termination detection on a ring,
ported from the TLA+ Examples.

Source: github.com/tlaplus/Examples, ``specifications/ewd840/EWD840.tla`` (commit
32a32c7), model ``EWD840.cfg``: ``N = 3``, invariants TypeOK, TerminationDetection and
Inv, property Liveness, no deadlock check.  TLC (the Examples' manifest): 302 distinct
states, 2,001 generated, depth 10.

``Spec`` has ``WF_vars(System)``: weak fairness of the token-passing actions as one
action, declared here as ``fairness = {("InitiateProbe", "PassToken"): "weak"}``.  The
cfg's other property, ``TDSpec`` (refinement of SyncTerminationDetection), is not
checked: mcheck checks state-predicate temporal properties, not refinement.
Functions over ``Node = 0 .. N-1`` are tuples indexed by node.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from checker import Spec, action, invariant, leads_to

WHITE, BLACK = "white", "black"


class EWD840State(NamedTuple):
    """active[i], color[i], the token's position and colour."""

    active: tuple[bool, ...]
    color: tuple[str, ...]
    tpos: int
    tcolor: str


def _except(f: tuple[Any, ...], i: int, v: object) -> tuple[Any, ...]:
    """``[f EXCEPT ![i] = v]`` for a function over 0 .. N-1."""
    return (*f[:i], v, *f[i + 1 :])


class EWD840(Spec):
    """Termination detection by a token passed from node N-1 down to node 0."""

    constants = {"N": 3}
    check_deadlock = False
    lanes = "N"
    fairness = {("InitiateProbe", "PassToken"): "weak"}

    N: int

    def nodes(self) -> range:
        """Node == 0 .. N-1."""
        return range(self.N)

    def init(self) -> list[EWD840State]:
        """Any activity and colours, the token anywhere, and black."""
        return [
            EWD840State(active, color, tpos, BLACK)
            for active in itertools.product((False, True), repeat=self.N)
            for color in itertools.product((WHITE, BLACK), repeat=self.N)
            for tpos in self.nodes()
        ]

    @action
    def InitiateProbe(self, s: EWD840State) -> EWD840State | None:
        """Node 0 with the token starts a probe when it or the token is black."""
        if s.tpos != 0 or not (s.tcolor == BLACK or s.color[0] == BLACK):
            return None
        return s._replace(tpos=self.N - 1, tcolor=WHITE, color=_except(s.color, 0, WHITE))

    @action(over=lambda self: range(1, self.N))
    def PassToken(self, s: EWD840State, i: int) -> EWD840State | None:
        """Node i passes the token to i-1 when passive, black, or the token is black."""
        if s.tpos != i or not (not s.active[i] or s.color[i] == BLACK or s.tcolor == BLACK):
            return None
        return s._replace(
            tpos=i - 1,
            tcolor=BLACK if s.color[i] == BLACK else s.tcolor,
            color=_except(s.color, i, WHITE),
        )

    @action(over=(lambda self: range(self.N), lambda self: range(self.N)))
    def SendMsg(self, s: EWD840State, i: int, j: int) -> EWD840State | None:
        """An active node i activates j (\\E j \\in Node \\ {i}); it turns black if j > i."""
        if not s.active[i] or j == i:
            return None
        return s._replace(
            active=_except(s.active, j, True),
            color=_except(s.color, i, BLACK if j > i else s.color[i]),
        )

    @action(over=lambda self: range(self.N))
    def Deactivate(self, s: EWD840State, i: int) -> EWD840State | None:
        """An active node becomes passive."""
        if not s.active[i]:
            return None
        return s._replace(active=_except(s.active, i, False))

    # -- properties ---------------------------------------------------------------
    def terminated(self, s: EWD840State) -> bool:
        """Every node is passive."""
        return not any(s.active)

    def termination_detected(self, s: EWD840State) -> bool:
        """A white token at a white, passive node 0."""
        return s.tpos == 0 and s.tcolor == WHITE and s.color[0] == WHITE and not s.active[0]

    @invariant
    def TypeOK(self, s: EWD840State) -> bool:
        """The variables range over their types."""
        return (
            len(s.active) == self.N
            and all(isinstance(a, bool) for a in s.active)
            and len(s.color) == self.N
            and all(c in (WHITE, BLACK) for c in s.color)
            and s.tpos in self.nodes()
            and s.tcolor in (WHITE, BLACK)
        )

    @invariant
    def TerminationDetection(self, s: EWD840State) -> bool:
        """Termination is detected only when it has happened."""
        return not self.termination_detected(s) or self.terminated(s)

    @invariant
    def Inv(self, s: EWD840State) -> bool:
        """Dijkstra's inductive invariant: P0 \\/ P1 \\/ P2."""
        p0 = all(not s.active[i] for i in self.nodes() if s.tpos < i)
        p1 = any(s.color[j] == BLACK for j in range(s.tpos + 1))
        p2 = s.tcolor == BLACK
        return p0 or p1 or p2

    @leads_to(terminated)
    def Liveness(self, s: EWD840State) -> bool:
        """terminated ~> terminationDetected."""
        return self.termination_detected(s)
