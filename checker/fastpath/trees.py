"""Cached outcomes: decision trees over slot numbers.

An outcome (an action instance's successor or its being disabled, a state-drawn
family's successors, a predicate's verdict) was computed on a state and read some of
its slots; it holds for every state with the same numbers in those slots.  A tree
stores it under those numbers, in the order the evaluation read them, so a lookup is
one or two dictionary probes on the packed state masked to the slots tested.  Slot
numbers are type-strict (:mod:`checker.fastpath.slots`): so is every key here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checker.fastpath.slots import NUM as _NUM
from checker.fastpath.slots import WIDTH


class Branch:
    """A decision-tree node: the child for each combination of the numbers of the
    slots it tests, keyed by the packed state masked to those slots."""

    __slots__ = ("kids", "mask", "pos")

    def __init__(self, pos: tuple[int, ...]) -> None:
        self.pos = pos
        self.mask = sum(_NUM << (WIDTH * p) for p in pos)
        self.kids: dict[int, Any] = {}


class Leaf:
    """A cached outcome."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Tree:
    """A decision tree from slot numbers to cached outcomes.

    A path tests the slots an evaluation read, in the order it read them: the first
    one on its own (usually a guard's: a disabled action is known from it alone), the
    rest together, so a lookup is one or two dictionary probes on ``packed & mask``.
    """

    __slots__ = ("epoch", "leaves", "root")

    def __init__(self) -> None:
        self.root: Any = None
        self.leaves = 0
        self.epoch = 0  # bumped whenever the root is made afresh

    def lookup(self, h: int) -> Any:
        """The cached leaf for a packed state, or None."""
        node = self.root
        while node.__class__ is Branch:
            node = node.kids.get(h & node.mask)
        return node

    def insert(self, h: int, order: list[int], value: Any) -> None:
        """Store ``value``, valid for every state agreeing with ``h`` on ``order``."""
        leaf = Leaf(value)
        self.leaves += 1
        if self.leaves > MAX_LEAVES:  # bound memory: start afresh
            self.root = None
            self.leaves = 1
        if self.root is None:
            self.epoch += 1
            if order:
                self.root = Branch((order[0],))
                self.root.kids[h & self.root.mask] = self._chain(h, order[1:], leaf)
            else:
                self.root = leaf
            return
        node = self.root
        tested: set[int] = set()
        while node.__class__ is Branch:
            tested.update(node.pos)
            key = h & node.mask
            nxt = node.kids.get(key)
            if nxt is None:
                node.kids[key] = self._chain(h, [p for p in order if p not in tested], leaf)
                return
            node = nxt

    @staticmethod
    def _chain(h: int, positions: list[int], leaf: Leaf) -> Any:
        if not positions:
            return leaf
        b = Branch(tuple(positions))
        b.kids[h & b.mask] = leaf
        return b


#: Cached outcomes kept per tree before it is cleared (bounds the caches' memory).
MAX_LEAVES = 200_000
#: Root index entries kept before starting afresh; expansions over which it counts
#: the entries it had to build (more than one per two states: given up).
MAX_ROOT_ENTRIES = 4096
ROOT_INDEX_WINDOW = 1 << 16


class Cached:
    """One cache over the slots: of an action instance (leaf value: None when
    disabled, else its outcome), of a state-drawn family (a list of outcomes), or of a
    predicate (a bool)."""

    __slots__ = ("cached", "fn", "index", "name", "params", "tree")

    def __init__(
        self,
        name: str,
        index: int = -1,
        params: tuple[Any, ...] | None = None,
        fn: Callable[[Any], bool] | None = None,
        cached: bool = True,
    ) -> None:
        self.name = name
        self.index = index
        self.params = params
        self.fn = fn
        self.cached = cached
        self.tree = Tree()
