"""TokenRing: Dijkstra's self-stabilising K-state token ring (EWD 426), ported from the
TLA+ Examples.

Source: github.com/tlaplus/Examples, ``specifications/ewd426/TokenRing.tla`` (commit
32a32c7), model ``TokenRing.cfg``: ``N = 6``, ``M = 6``, invariant TypeOK, property
Stab (``<>[]UniqueToken``) under ``WF_vars(Next)``, no deadlock check.  TLC (the
Examples' manifest): 46,656 distinct states (every state is initial: 6^6), 248,832
generated, depth 1.

``WF_vars(Next)`` is weak fairness of the whole next-state relation as one action:
``fairness = {("CreateToken", "PassToken"): "weak"}``.  ``c`` (a function over
``Node = 0 .. N-1``) is a tuple indexed by node.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from checker import Spec, action, eventually_always, invariant


class TokenRingState(NamedTuple):
    """c[i]: node i's counter; a node holds the token when its counter differs from
    its predecessor's (node 0: when it equals node N-1's)."""

    c: tuple[int, ...]


class TokenRing(Spec):
    """N nodes with counters modulo M stabilise to exactly one token."""

    constants = {"N": 6, "M": 6}
    check_deadlock = False
    lanes = "N"
    fairness = {("CreateToken", "PassToken"): "weak"}

    N: int
    M: int

    def validate(self) -> None:
        """ASSUME N >= 1, M >= 1 and N <= M + 1."""
        from checker import ConfigError

        if self.N < 1 or self.M < 1 or self.N > self.M + 1:
            raise ConfigError("TokenRing needs N >= 1, M >= 1 and N <= M + 1")

    def init(self) -> list[TokenRingState]:
        """Init: any counters (a self-stabilising algorithm starts anywhere)."""
        return [TokenRingState(c) for c in itertools.product(range(self.M), repeat=self.N)]

    @action
    def CreateToken(self, s: TokenRingState) -> TokenRingState | None:
        """Node 0 holds the token: it increments its counter past node N-1's."""
        c = s.c
        if c[0] != c[self.N - 1]:
            return None
        return TokenRingState(((c[self.N - 1] + 1) % self.M, *c[1:]))

    @action(over=lambda self: range(1, self.N))
    def PassToken(self, s: TokenRingState, i: int) -> TokenRingState | None:
        """Node i holds the token: it copies its predecessor's counter."""
        c = s.c
        if c[i] == c[i - 1]:
            return None
        return TokenRingState((*c[:i], c[i - 1], *c[i + 1 :]))

    @invariant
    def TypeOK(self, s: TokenRingState) -> bool:
        """c is a function from Node to 0 .. M-1."""
        return len(s.c) == self.N and all(0 <= x < self.M for x in s.c)

    def unique_token(self, s: TokenRingState) -> bool:
        """UniqueToken: for some i in 0..N, nodes before i equal c[0] and the others
        equal c[0] - 1 (mod M): a single token."""
        c = s.c
        return any(
            all(c[j] == c[0] for j in range(i))
            and all(c[j] == (c[0] - 1) % self.M for j in range(i, self.N))
            for i in range(self.N + 1)
        )

    @eventually_always
    def Stab(self, s: TokenRingState) -> bool:
        """<>[]UniqueToken: the ring stabilises to one token for good."""
        return self.unique_token(s)
