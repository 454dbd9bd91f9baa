"""The queue of states waiting to be expanded in one process.

Breadth-first, the queue holds every stored state not yet expanded, in ordinal order:
the ordinal of an entry is implied by its place (the head's ordinal plus its index),
and depths only step up at level boundaries.  So :class:`BreadthFirstQueue` keeps one
packed handle per queued state, not an ``(ordinal, handle, depth)`` tuple: about 90
bytes less per queued state (the tuple and the ordinal's int object), which on raft is
a third of the peak memory per stored state.  Depth-first, a plain stack of tuples.

Both take what they queue off the cyclic collector's lists (where the C core is
built): a queued state lives until it is expanded, and every young collection
re-scanned all the states stored since the one before (PaxosCommit's whole space:
6.4 s of a 295 s run in 33 collections, 0.3 s untracked; LamportMutex 1.6 s of 45 s,
0.04 s), only to find what an immutable value built from older values cannot hold,
a reference cycle.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from checker.values.native import NATIVE


def _untracker() -> Any:
    """The C core's ``untrack`` (see :func:`checker.values._native.untrack`), or None
    where the Python core runs (the collector then scans the queue as before)."""
    return NATIVE.untrack if NATIVE is not None else None


class BreadthFirstQueue:
    """FIFO of (ordinal, handle, depth) with consecutive ordinals, stored as handles."""

    __slots__ = ("handles", "head", "levels", "untrack")

    def __init__(self) -> None:
        self.handles: deque[Any] = deque()
        self.untrack = _untracker()
        self.head = 0  # the ordinal of handles[0] (of the next one appended when empty)
        # (first ordinal, depth) of each level present, oldest first.
        self.levels: deque[tuple[int, int]] = deque()

    def __len__(self) -> int:
        return len(self.handles)

    def __bool__(self) -> bool:
        return bool(self.handles)

    def append(self, ordinal: int, handle: Any, depth: int) -> None:
        """Queue a newly stored state (ordinals arrive in order, depths never drop)."""
        self._queue(ordinal, handle, depth)
        if self.untrack is not None:
            self.untrack([handle])

    def _queue(self, ordinal: int, handle: Any, depth: int) -> None:
        """append without the untracking (extend untracks all its handles at once)."""
        handles = self.handles
        if not handles:
            self.head = ordinal
            self.levels.clear()
        elif ordinal != self.head + len(handles):
            raise AssertionError(f"ordinal {ordinal} queued after {self.head + len(handles) - 1}")
        levels = self.levels
        if not levels or levels[-1][1] != depth:
            if levels and depth < levels[-1][1]:
                raise AssertionError("breadth-first depths never decrease")
            levels.append((ordinal, depth))
        handles.append(handle)

    def extend(self, ordinal: int, handles: list[Any], depth: int) -> None:
        """Queue states numbered ``ordinal``, ``ordinal + 1``, ... at one depth (a
        parent's new children): as many appends, in one call."""
        self._queue(ordinal, handles[0], depth)
        self.handles.extend(handles[1:])
        if self.untrack is not None:  # (all of them in one walk)
            self.untrack(handles)

    def take(self) -> tuple[int, Any, int]:
        """The oldest entry, as (ordinal, handle, depth)."""
        handle = self.handles.popleft()
        ordinal = self.head
        self.head = ordinal + 1
        levels = self.levels
        while len(levels) > 1 and levels[1][0] <= ordinal:
            levels.popleft()
        return ordinal, handle, levels[0][1]

    def take_many(self, n: int) -> list[tuple[int, Any, int]]:
        """The ``n`` oldest entries (fewer if the queue holds fewer), oldest first, as
        :meth:`take` gives them one by one: one call per batch, not per state."""
        handles = self.handles
        n = min(n, len(handles))
        if n <= 0:
            return []
        first = self.head
        self.head = first + n
        levels = self.levels
        popleft = handles.popleft
        out = []
        for ordinal in range(first, first + n):
            while len(levels) > 1 and levels[1][0] <= ordinal:
                levels.popleft()
            out.append((ordinal, popleft(), levels[0][1]))
        return out

    def __iter__(self) -> Iterator[tuple[int, Any, int]]:
        """The entries in the order they will be taken (and appending them in this
        order rebuilds the queue)."""
        levels = list(self.levels)
        li = 0
        for i, handle in enumerate(self.handles):
            ordinal = self.head + i
            while li + 1 < len(levels) and levels[li + 1][0] <= ordinal:
                li += 1
            yield ordinal, handle, levels[li][1]

    def clear(self) -> None:
        """Drop every entry."""
        self.handles.clear()
        self.levels.clear()


class DepthFirstStack:
    """LIFO of (ordinal, handle, depth) tuples (ordinals are not consecutive here)."""

    __slots__ = ("items", "untrack")

    def __init__(self) -> None:
        self.items: list[tuple[int, Any, int]] = []
        self.untrack = _untracker()

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def append(self, ordinal: int, handle: Any, depth: int) -> None:
        """Push a state."""
        self.items.append((ordinal, handle, depth))
        if self.untrack is not None:
            self.untrack([handle])

    def extend(self, ordinal: int, handles: list[Any], depth: int) -> None:
        """Push states numbered ``ordinal``, ``ordinal + 1``, ... at one depth, in
        that order (the last is taken first)."""
        self.items.extend((ordinal + i, h, depth) for i, h in enumerate(handles))
        if self.untrack is not None:
            self.untrack(handles)

    def take(self) -> tuple[int, Any, int]:
        """The newest entry: the next state to expand."""
        return self.items.pop()

    def take_many(self, n: int) -> list[tuple[int, Any, int]]:
        """The next ``n`` entries in the order :meth:`take` gives them (fewer if the
        stack holds fewer)."""
        items = self.items
        n = min(n, len(items))
        if n <= 0:
            return []
        out = items[-n:]
        del items[-n:]
        out.reverse()
        return out

    def __iter__(self) -> Iterator[tuple[int, Any, int]]:
        """The entries from the bottom: appending them in this order rebuilds it."""
        return iter(self.items)

    def clear(self) -> None:
        """Drop every entry."""
        self.items.clear()
