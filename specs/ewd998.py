"""EWD998: Shmuel Safra's termination detection on a ring (EWD 998), ported from the
TLA+ Examples.

Source: github.com/tlaplus/Examples, ``specifications/ewd998/EWD998.tla`` (commit
32a32c7), model ``EWD998Small.cfg``: ``N = 3``, state constraint StateConstraint,
invariants TerminationDetection, Inv and TypeOK, no deadlock check, no temporal
property (the cfg comments Liveness and TDSpec out).  The module's own table gives
TLC 1.3 million distinct states, 10.1 million generated and diameter 60 (TLC of
01/2021); TLC built from tlaplus/tlaplus today reports 1,520,618 distinct states,
11,238,019 generated and depth 59, as this port does.

``Spec`` has ``WF_vars(System)``: weak fairness of the token's actions as one action,
declared here; ``Liveness`` (``Termination ~> terminationDetected``) is declared too,
for the cfg's bigger model (``EWD998.cfg`` checks it), and is checked only when named
(``--property Liveness``): the default properties are the small cfg's invariants.
``TDSpec`` (refinement of AsyncTerminationDetection) is not checked: mcheck checks
state-predicate temporal properties, not refinement.

Written the way a Python engineer would write it, not the way the engine likes best: a
frozen dataclass per state and another for the token record, the functions over
``Node = 0 .. N-1`` as tuples indexed by node.

Variant ``no_rule3`` drops Safra's rule 3 (a node that receives a message turns
black), the rule that stops a probe from counting a message twice; TLC finds Inv
violated in that module too.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

from checker import Spec, Story, action, invariant, leads_to

WHITE, BLACK = "white", "black"
COLORS = (WHITE, BLACK)


@dataclass(frozen=True, slots=True)
class Token:
    """The token record ``[pos |-> Node, q |-> Int, color |-> Color]``."""

    pos: int
    q: int
    color: str


@dataclass(frozen=True, slots=True)
class EWD998State:
    """The variables of EWD998, in its declaration order."""

    active: tuple[bool, ...]  # activation status of nodes
    color: tuple[str, ...]  # color of nodes
    counter: tuple[int, ...]  # messages sent minus messages received, per node
    pending: tuple[int, ...]  # messages in transit to each node
    token: Token


def _except(f: tuple[Any, ...], i: int, v: object) -> tuple[Any, ...]:
    """``[f EXCEPT ![i] = v]`` for a function over 0 .. N-1."""
    return (*f[:i], v, *f[i + 1 :])


class EWD998(Spec):
    """Termination detection by a token carrying a message count around the ring."""

    constants = {"N": 3}
    variants = ("default", "no_rule3")
    # EWD998Small.cfg's properties: its invariants (Liveness is for EWD998.cfg).
    stories = {
        v: Story(check=("TerminationDetection", "Inv", "TypeOK"), about=about)
        for v, about in (
            ("default", "EWD998Small.cfg: the invariants, not Liveness"),
            ("no_rule3", "a receiver stays white: Inv fails"),
        )
    }
    check_deadlock = False
    lanes = "N"
    fairness = {("InitiateProbe", "PassToken"): "weak"}

    N: int

    def nodes(self) -> range:
        """Node == 0 .. N-1."""
        return range(self.N)

    def rng(self, a: int, b: int) -> range:
        """Rng(a, b): the nodes from a to b (empty when a > b)."""
        return range(max(a, 0), min(b, self.N - 1) + 1)

    def init(self) -> list[EWD998State]:
        """Any activity and colours, counters and pending at 0, a black token anywhere."""
        zeros = (0,) * self.N
        return [
            EWD998State(active, color, zeros, zeros, Token(pos, 0, BLACK))
            for active in itertools.product((False, True), repeat=self.N)
            for color in itertools.product(COLORS, repeat=self.N)
            for pos in self.nodes()
        ]

    # -- System: the token ----------------------------------------------------------
    @action
    def InitiateProbe(self, s: EWD998State) -> EWD998State | None:
        """Rules 1, 5 and 6: node 0 starts a new round unless the last was conclusive."""
        t = s.token
        if t.pos != 0:
            return None
        if not (t.color == BLACK or s.color[0] == BLACK or s.counter[0] + t.q > 0):
            return None
        return replace(s, token=Token(self.N - 1, 0, WHITE), color=_except(s.color, 0, WHITE))

    @action(over=lambda self: range(1, self.N))
    def PassToken(self, s: EWD998State, i: int) -> EWD998State | None:
        """Rules 2, 4 and 7: a passive node i adds its counter and passes the token on."""
        t = s.token
        if s.active[i] or t.pos != i:
            return None
        color = BLACK if s.color[i] == BLACK else t.color
        return replace(
            s, token=Token(t.pos - 1, t.q + s.counter[i], color), color=_except(s.color, i, WHITE)
        )

    # -- Environment: the nodes -----------------------------------------------------
    @action(over=(lambda self: range(self.N), lambda self: range(self.N)))
    def SendMsg(self, s: EWD998State, i: int, j: int) -> EWD998State | None:
        """Rule 0: an active node i sends a message to some other node j."""
        if not s.active[i] or j == i:
            return None
        return replace(
            s,
            counter=_except(s.counter, i, s.counter[i] + 1),
            pending=_except(s.pending, j, s.pending[j] + 1),
        )

    @action(over=lambda self: range(self.N))
    def RecvMsg(self, s: EWD998State, i: int) -> EWD998State | None:
        """Rules 0 and 3: node i receives a message, is activated and turns black."""
        if s.pending[i] <= 0:
            return None
        return replace(
            s,
            pending=_except(s.pending, i, s.pending[i] - 1),
            counter=_except(s.counter, i, s.counter[i] - 1),
            color=s.color if self.variant == "no_rule3" else _except(s.color, i, BLACK),
            active=_except(s.active, i, True),
        )

    @action(over=lambda self: range(self.N))
    def Deactivate(self, s: EWD998State, i: int) -> EWD998State | None:
        """An active node becomes passive."""
        if not s.active[i]:
            return None
        return replace(s, active=_except(s.active, i, False))

    def constraint(self, s: EWD998State) -> bool:
        """StateConstraint: counters and pending messages up to 3, the token's q up to 9."""
        return all(c <= 3 for c in s.counter) and all(p <= 3 for p in s.pending) and s.token.q <= 9

    # -- properties -----------------------------------------------------------------
    def termination_detected(self, s: EWD998State) -> bool:
        """terminationDetected: a white token at node 0 that is white and passive,
        with the counts summing to zero."""
        t = s.token
        return (
            t.pos == 0
            and t.color == WHITE
            and t.q + s.counter[0] == 0
            and s.color[0] == WHITE
            and not s.active[0]
        )

    def terminated(self, s: EWD998State) -> bool:
        """Termination: every node passive and no message in flight (B = 0)."""
        return not any(s.active) and sum(s.pending) == 0

    @invariant
    def TypeOK(self, s: EWD998State) -> bool:
        """The variables range over their types."""
        t = s.token
        n = self.N
        return (
            len(s.active) == n
            and all(type(a) is bool for a in s.active)
            and len(s.color) == n
            and all(c in COLORS for c in s.color)
            and len(s.counter) == n
            and all(type(c) is int for c in s.counter)
            and len(s.pending) == n
            and all(type(p) is int and p >= 0 for p in s.pending)
            and t.pos in self.nodes()
            and type(t.q) is int
            and t.color in COLORS
        )

    @invariant
    def TerminationDetection(self, s: EWD998State) -> bool:
        """terminationDetected => Termination."""
        return not self.termination_detected(s) or self.terminated(s)

    @invariant
    def Inv(self, s: EWD998State) -> bool:
        """Safra's inductive invariant: P0 /\\ (P1 \\/ P2 \\/ P3 \\/ P4)."""
        t, n = s.token, self.N
        if sum(s.pending) != sum(s.counter):  # P0: B = Sum(counter, Node)
            return False
        passive_after = all(not s.active[i] for i in self.rng(t.pos + 1, n - 1))
        counted = 0 if t.pos == n - 1 else sum(s.counter[i] for i in self.rng(t.pos + 1, n - 1))
        if passive_after and t.q == counted:  # P1
            return True
        if sum(s.counter[i] for i in self.rng(0, t.pos)) + t.q > 0:  # P2
            return True
        if any(s.color[i] == BLACK for i in self.rng(0, t.pos)):  # P3
            return True
        return t.color == BLACK  # P4

    @leads_to(terminated)
    def Liveness(self, s: EWD998State) -> bool:
        """Termination ~> terminationDetected."""
        return self.termination_detected(s)
