"""SimpleRegular: Lamport's "Teaching Concurrency" algorithm over regular registers,
ported from the TLA+ Examples.

Source: github.com/tlaplus/Examples,
``specifications/TeachingConcurrency/SimpleRegular.tla`` (commit 32a32c7), model
``SimpleRegular.cfg``: ``N = 8``, invariants PCorrect, TypeOK and Inv, deadlock
checking on.  TLC (the Examples' manifest): 277,726 distinct states, 1,454,776
generated, depth 25.

The PlusCal translation's variables ``x``, ``y`` and ``pc`` are tuples indexed by
process ``0 .. N-1``; a regular register ``x[i]`` is the set of values a read may
return.  ``Terminating`` is the translation's stuttering step once every process is
Done (it keeps a finished system from being a deadlock, as in TLC).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from checker import Spec, action, in_order, invariant

A1, A2, B, DONE = "a1", "a2", "b", "Done"


class SimpleRegularState(NamedTuple):
    """x[i]: the regular register of process i; y[i]: its local value; pc[i]."""

    x: tuple[frozenset[int], ...]
    y: tuple[int, ...]
    pc: tuple[str, ...]


def _except(f: tuple[Any, ...], i: int, v: object) -> tuple[Any, ...]:
    """``[f EXCEPT ![i] = v]`` for a function over 0 .. N-1."""
    return (*f[:i], v, *f[i + 1 :])


def _reads(spec: SimpleRegular, s: SimpleRegularState) -> list[tuple[int, int]]:
    """(self, v) for every process at b and every value v its read may return."""
    n = spec.N
    return [(i, v) for i in range(n) if s.pc[i] == B for v in in_order(s.x[(i - 1) % n])]


class SimpleRegular(Spec):
    """Each process writes 1 to its register, then reads its left neighbour's."""

    constants = {"N": 8}
    lanes = "N"

    N: int

    def init(self) -> list[SimpleRegularState]:
        """x[i] = {0}, y[i] = 0, every process at a1."""
        n = self.N
        return [SimpleRegularState((frozenset({0}),) * n, (0,) * n, (A1,) * n)]

    @action(over=lambda self: range(self.N))
    def a1(self, s: SimpleRegularState, i: int) -> SimpleRegularState | None:
        """a1: the write of 1 begins: a read may see 0 or 1."""
        if s.pc[i] != A1:
            return None
        return s._replace(x=_except(s.x, i, frozenset({0, 1})), pc=_except(s.pc, i, A2))

    @action(over=lambda self: range(self.N))
    def a2(self, s: SimpleRegularState, i: int) -> SimpleRegularState | None:
        """a2: the write of 1 ends."""
        if s.pc[i] != A2:
            return None
        return s._replace(x=_except(s.x, i, frozenset({1})), pc=_except(s.pc, i, B))

    @action(over_state=_reads)
    def b(self, s: SimpleRegularState, i: int, v: int) -> SimpleRegularState:
        """b: read any value v of x[(self-1) % N] into y[self]."""
        return s._replace(y=_except(s.y, i, v), pc=_except(s.pc, i, DONE))

    @action
    def Terminating(self, s: SimpleRegularState) -> SimpleRegularState | None:
        """Every process Done: stutter (UNCHANGED vars)."""
        return s if all(p == DONE for p in s.pc) else None

    @invariant
    def PCorrect(self, s: SimpleRegularState) -> bool:
        """When every process is Done, some process read 1."""
        return not all(p == DONE for p in s.pc) or any(v == 1 for v in s.y)

    @invariant
    def TypeOK(self, s: SimpleRegularState) -> bool:
        """x[i] a non-empty subset of {0, 1}, y[i] in {0, 1}, pc[i] a label."""
        return (
            all(x and x <= {0, 1} for x in s.x)
            and all(v in (0, 1) for v in s.y)
            and all(p in (A1, A2, B, DONE) for p in s.pc)
        )

    @invariant
    def Inv(self, s: SimpleRegularState) -> bool:
        """The inductive invariant of Simple: TypeOK, finished writes, and PCorrect's
        disjunction."""
        return (
            self.TypeOK(s)
            and all(s.x[i] == {1} for i in range(self.N) if s.pc[i] in (B, DONE))
            and (any(p != DONE for p in s.pc) or any(v == 1 for v in s.y))
        )
