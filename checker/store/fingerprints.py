"""What the explorer keeps per distinct state: its fingerprint, parent and choice.

TLC's design: the visited set holds only 64-bit fingerprints; per stored state the
trace table records the parent's ordinal and which successor of the parent the state
was.  A counterexample is rebuilt by replaying those choices through the model, and
each rebuilt state is checked against the fingerprint stored at its ordinal, so a
model whose successor order changes between calls is caught instead of printing a
wrong trace.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from checker.values.native import NATIVE


class TraceTable:
    """Per stored state, in ordinal order: fingerprint, parent ordinal, choice index."""

    __slots__ = ("choice", "fps", "parent")

    def __init__(self) -> None:
        self.fps = array("Q")  # the state's fingerprint
        self.parent = array("q")  # ordinal of the parent state, -1 for an initial state
        self.choice = array("I")  # index among the parent's successors (or the inits)

    def __len__(self) -> int:
        return len(self.parent)

    def record(self, fp: int, parent: int, choice: int) -> int:
        """Record a new state; return its ordinal."""
        self.fps.append(fp)
        self.parent.append(parent)
        self.choice.append(choice)
        return len(self.parent) - 1

    def extend(self, fps: np.ndarray, parents: np.ndarray, choices: np.ndarray) -> None:
        """Record many new states at once, in ordinal order (the arrays' raw bytes are
        appended: no Python object per state)."""
        self.fps.frombytes(np.ascontiguousarray(fps, dtype=_dtype(self.fps)).tobytes())
        self.parent.frombytes(np.ascontiguousarray(parents, dtype=_dtype(self.parent)).tobytes())
        self.choice.frombytes(np.ascontiguousarray(choices, dtype=_dtype(self.choice)).tobytes())

    def path(self, ordinal: int) -> list[int]:
        """Ordinals from an initial state down to ``ordinal``."""
        out: list[int] = []
        while ordinal >= 0:
            out.append(ordinal)
            ordinal = self.parent[ordinal]
        out.reverse()
        return out

    def choices(self, ordinal: int) -> list[int]:
        """Successor choices from an initial state down to ``ordinal``."""
        return [self.choice[o] for o in self.path(ordinal)]


def _dtype(a: array[int]) -> np.dtype[Any]:
    """The numpy dtype laid out as the array's items (its typecode and item size)."""
    kind = "u" if a.typecode.isupper() else "i"
    return np.dtype(f"{kind}{a.itemsize}")


#: Recent fingerprints a FingerprintSet keeps in its table (or Python set) before
#: merging them into its sorted array: at least this many, and at most an eighth of
#: those merged, so their 16-32 bytes per entry (a Python set's ~85) stay a small
#: share and each merge copies the array rarely.
RECENT_MIN = 1 << 16


#: Fingerprints per block of the sorted array (see FingerprintSet._lookup).
BLOCK = 64

#: States expanded per search (FingerprintStore.batch) of a store whose cost is per
#: candidate (the C search, a dict), and of one searched by numpy (MCHECK_PURE=1),
#: whose cost per call wants larger batches.
BATCH = 16
NUMPY_BATCH = 128


def _select_new(
    add_batch: Callable[[list[int]], list[bool]], groups: list[list[Any]], pos: int
) -> list[list[Any]]:
    """add_groups by add_batch: one call for every group's fingerprints, then each
    group's new items picked out (the reference the C selection is tested against)."""
    fps = [item[pos] for group in groups for item in group if item[pos] is not None]
    flags = iter(add_batch(fps))
    return [[item for item in group if item[pos] is not None and next(flags)] for group in groups]


class FingerprintStore(Protocol):
    """The visited set as the exploration core uses it (TLC's ``FPSet``): membership
    of 64-bit fingerprints, added a batch at a time on the hot path.  The core holds a
    store through this interface only: :class:`FingerprintSet` for a run that keeps
    fingerprints alone, :class:`OrdinalStore` for one that records the state graph
    (liveness, ``mcheck graph``), which needs the ordinal of a state seen before."""

    #: States the explorer expands before it asks the store about all their
    #: successors at once (:meth:`add_groups`): as few as the store's cost per call
    #: allows, since every successor of a batch stays alive until it is asked about.
    batch: int

    def __len__(self) -> int: ...

    def __contains__(self, fp: int) -> bool: ...

    def add(self, fp: int) -> None:
        """Mark a fingerprint not yet in the store visited (the next ordinal)."""
        ...

    def add_batch(self, fps: list[int]) -> list[bool]:
        """Mark a batch of candidate fingerprints visited, in order: per candidate,
        whether it was new (not held before, nor earlier in the batch).  The caller
        stores the new ones, in order (they take the next ordinals)."""
        ...

    def add_groups(self, groups: list[list[Any]], pos: int) -> list[list[Any]]:
        """:meth:`add_batch` over the fingerprints at index ``pos`` of the items
        (tuples) of each group, in order, items whose fingerprint is None passed
        over; per group, the items whose fingerprint was new (in order)."""
        ...

    def load(self, fps: np.ndarray) -> None:
        """Hold exactly these fingerprints (a checkpoint's stored states, in ordinal
        order)."""
        ...

    def view(self) -> Any:
        """An image of the visited set that the C expansion reads to leave out
        successors already held (see ``Expansion.screen``), valid until the next
        add; None where the store has none."""
        ...

    def contains(self, batch: np.ndarray) -> np.ndarray:
        """For a uint64 array of fingerprints, a bool array: which are in the store."""
        ...

    def merge(self, batch: np.ndarray) -> None:
        """Add a sorted uint64 array of fingerprints none of which is in the store."""
        ...


class FingerprintSet:
    """Membership of 64-bit fingerprints in about 8-18 bytes each instead of a Python
    set's ~85: the newest in a small ``set``, the rest in one sorted ``uint64`` numpy
    array searched in C, a batch of candidates at a time (:meth:`known`).

    TLC keeps its fingerprints in a compact table of longs for the same reason; a
    sorted array merged in doubling-ish batches is the simplest exact equivalent.
    The batch test of the hot path (:meth:`add_batch`) runs in the C value core
    where it is built (the same search, candidate by candidate, without numpy arrays
    made per batch or a Python loop over the candidates); the numpy code is its
    reference and serves the other operations.

    A lookup does not binary-search the whole array: its cost there is a cache miss
    at each of the last dozen steps.  The first fingerprint of every block of
    :data:`BLOCK` (a summary of 1/64 of the array, which mostly stays in cache) is
    searched instead, and the one block that can hold the candidate, 512 contiguous
    bytes, is compared whole.  On mini-Raft (5.6M lookups into up to 1.5M
    fingerprints) the lookups took 8.1 s by binary search, 4.8 s so.
    """

    __slots__ = (
        "_blocks",
        "_frozen",
        "_native",
        "_summary",
        "_tail",
        "_view",
        "batch",
        "recent",
    )

    def __init__(self) -> None:
        # The same search and set test, per candidate in C (issue 47): no numpy arrays
        # built per batch and no Python loop over the candidates.  None: the Python
        # reference (MCHECK_PURE=1, or the extension not built).
        self._native: Any = NATIVE
        self.recent: Any = self._fresh_recent()
        self.frozen = np.empty(0, dtype=np.uint64)
        # In C a search costs per candidate, not per call, so small batches: their
        # successors are freed while still in the processor's caches (gossip 1.50 ->
        # 1.12 s from 128 to 16, 2PC with timeouts 10.6 -> 8.8 s, etcd/raft 85.5 ->
        # 80.1 s, medians).  numpy's searchsorted costs per call, so larger ones.
        self.batch = BATCH if NATIVE is not None else NUMPY_BATCH

    @property
    def frozen(self) -> np.ndarray:
        """The sorted array of the fingerprints merged so far."""
        return self._frozen

    @frozen.setter
    def frozen(self, value: np.ndarray) -> None:
        self._frozen = value
        full = len(value) - len(value) % BLOCK
        self._blocks = value[:full].reshape(-1, BLOCK)  # a view: no copy
        self._summary = np.ascontiguousarray(self._blocks[:, 0])
        self._tail = value[full:]
        self._view: Any = None  # (see view: it reads these arrays)

    def __len__(self) -> int:
        return len(self.recent) + len(self._frozen)

    def __contains__(self, fp: int) -> bool:
        if fp in self.recent:
            return True
        return bool(self._lookup(np.array([fp], dtype=np.uint64))[0])

    def add(self, fp: int) -> None:
        """Mark ``fp`` visited (one not visited yet: the array is not searched)."""
        self.recent.add(fp)

    def _fresh_recent(self) -> Any:
        """An empty set of recent fingerprints: the C extension's table of words
        (``FpSet``) where it is built, a Python set of ints otherwise.  Both take
        ``add``, ``in`` and ``len``; the C searches read only the table.

        Why the table: the known successors of a breadth-first run are mostly recent
        ones (Go-Back-N: 783,000 of 1,080,000 lookups found their state there, the
        rest in the sorted array), and a Python set made each lookup an int object
        and a second wait for memory, at about 85 bytes an entry against 16-32."""
        return self._native.FpSet() if self._native is not None else set()

    def _recent_array(self) -> np.ndarray:
        """The recent fingerprints as a uint64 array, in no order."""
        recent = self.recent
        if isinstance(recent, set):
            return np.fromiter(recent, np.uint64, len(recent))
        return np.frombuffer(recent.members(), dtype=np.uint64)

    def settle(self) -> None:
        """Merge the recent fingerprints into the array once there are enough of them.
        Called between batches only: a batch's :meth:`known` answers must stay true
        for the batch (a merge moves fingerprints out of :attr:`recent`)."""
        n = len(self.recent)
        if n >= RECENT_MIN and n * 8 >= len(self._frozen):
            self._merge()

    def _lookup(self, batch: np.ndarray) -> np.ndarray:
        """Which fingerprints of a uint64 array the sorted array holds."""
        found = np.zeros(len(batch), dtype=bool)
        if not len(self._frozen) or not len(batch):
            return found
        summary = self._summary
        if len(summary):
            # The last block whose first fingerprint is not above the candidate.
            b = np.searchsorted(summary, batch, side="right") - 1
            inside = b >= 0  # below the first fingerprint: in no block
            np.maximum(b, 0, out=b)
            found = (self._blocks[b] == batch[:, None]).any(axis=1) & inside
        tail = self._tail
        if len(tail):
            above = batch >= tail[0]  # only those can be in the partial last block
            found[above] |= (tail == batch[above][:, None]).any(axis=1)
        return found

    def add_batch(self, fps: list[int]) -> list[bool]:
        """See :meth:`FingerprintStore.add_batch`: merge the recent fingerprints if it
        is time (between batches only), one C search for the whole batch, then the
        rest against the recent ones."""
        if self._native is not None:
            got: list[bool] = self._native.visited_add_batch(fps, self._opened())
            return got
        self.settle()
        old = self.known(fps)
        recent = self.recent
        add = recent.add
        new = []
        for fp, held in zip(fps, old, strict=True):
            if held or fp in recent:
                new.append(False)
            else:
                add(fp)
                new.append(True)
        return new

    def add_groups(self, groups: list[list[Any]], pos: int) -> list[list[Any]]:
        """See :meth:`FingerprintStore.add_groups` (the explorer's candidates, per
        parent: the known ones, most of them, cost no Python step where C runs it)."""
        if self._native is not None:  # (_opened merges first if it is time)
            got: list[list[Any]] = self._native.visited_add_groups(groups, pos, self._opened())
            return got
        self.settle()
        return _select_new(self.add_batch, groups, pos)

    def load(self, fps: np.ndarray) -> None:
        """Hold exactly these fingerprints."""
        self.frozen = np.unique(np.asarray(fps, dtype=np.uint64))
        self.recent = self._fresh_recent()

    def view(self) -> Any:
        """See :meth:`FingerprintStore.view`: the C extension's ``VisitedView`` of the
        sorted array, its block summary, the block size and the recent table, merged
        first if it is time; None on the numpy path.
        Only ever a subset of the set later on: a merge moves fingerprints from a
        table that is then dropped into a new array, and nothing is ever removed."""
        if self._native is None:
            return None
        return self._opened()

    def _opened(self) -> Any:
        """The C view (see :meth:`view`), merged first if it is time; the C batch
        tests read it too."""
        self.settle()
        # Made again only when the arrays or the recent set are replaced (a merge, a
        # load): the C view takes the arrays' buffers once, where taking them at every
        # expanded state was a tenth of the C successor loop's time on Go-Back-N.
        view = self._view
        if view is None or view.recent is not self.recent:
            view = self._view = self._native.visited_view(
                self._frozen, self._summary, BLOCK, self.recent
            )
        return view

    def known(self, fps: list[int]) -> list[bool]:
        """For each fingerprint, whether the sorted array holds it (one C search for
        the whole batch); the caller tests the others against :attr:`recent`."""
        if not len(self._frozen) or not fps:
            return [False] * len(fps)
        out: list[bool] = self._lookup(np.array(fps, dtype=np.uint64)).tolist()
        return out

    def contains(self, batch: np.ndarray) -> np.ndarray:
        """For a uint64 array of fingerprints, a bool array: which are in the set."""
        hits = self._lookup(batch)
        if len(self.recent):
            hits |= np.isin(batch, self._recent_array())
        return hits

    def merge(self, batch: np.ndarray) -> None:
        """Add a sorted uint64 array of fingerprints none of which is in the set yet
        (one copy of the array: the distributed partitions add a level at a time)."""
        if len(batch):
            f = self._frozen
            self.frozen = np.insert(f, np.searchsorted(f, batch), batch)

    def _merge(self) -> None:
        self.merge(np.sort(self._recent_array()))
        self.recent = self._fresh_recent()


class OrdinalStore:
    """The visited set of a run that records its state graph: each fingerprint with its
    ordinal (the order states were stored in), since an edge to a state seen before
    needs that state's number.  A dict: a graph run keeps a node per state anyway."""

    __slots__ = ("batch", "ordinals")

    def __init__(self) -> None:
        self.ordinals: dict[int, int] = {}
        self.batch = BATCH  # (a dict costs per candidate)

    def __len__(self) -> int:
        return len(self.ordinals)

    def __contains__(self, fp: int) -> bool:
        return fp in self.ordinals

    def ordinal(self, fp: int) -> int:
        """The ordinal of a stored fingerprint."""
        return self.ordinals[fp]

    def add(self, fp: int) -> None:
        """Store ``fp`` (not stored yet) with the next ordinal."""
        self.ordinals[fp] = len(self.ordinals)

    def add_batch(self, fps: list[int]) -> list[bool]:
        """See :meth:`FingerprintStore.add_batch`; the new ones take the next ordinals."""
        ordinals = self.ordinals
        new = []
        for fp in fps:
            if fp in ordinals:
                new.append(False)
            else:
                ordinals[fp] = len(ordinals)
                new.append(True)
        return new

    def add_groups(self, groups: list[list[Any]], pos: int) -> list[list[Any]]:
        """See :meth:`FingerprintStore.add_groups`; the new ones take the next
        ordinals, in order."""
        return _select_new(self.add_batch, groups, pos)

    def view(self) -> Any:
        """None: a graph run needs every edge, known successors too."""
        return None

    def load(self, fps: np.ndarray) -> None:
        """Hold exactly these fingerprints, numbered in their order."""
        self.ordinals = dict(zip(np.asarray(fps).tolist(), range(len(fps)), strict=True))

    def contains(self, batch: np.ndarray) -> np.ndarray:
        """Which fingerprints of a uint64 array are stored."""
        ordinals = self.ordinals
        return np.fromiter((fp in ordinals for fp in batch.tolist()), bool, len(batch))

    def merge(self, batch: np.ndarray) -> None:
        """Store a batch of fingerprints none of which is stored (next ordinals, in
        the batch's order)."""
        for fp in batch.tolist():
            self.add(fp)


class FingerprintIndex:
    """Stored states' fingerprints -> ordinals, grown a level at a time (a sorted
    array and the ordinals in that order: a merge per level, no sort of the whole):
    how the distributed backends number a recorded graph's states."""

    def __init__(self) -> None:
        self.fps = np.empty(0, dtype=np.uint64)
        self.ordinals = np.empty(0, dtype=np.int64)
        self.count = 0

    def add(self, fps: np.ndarray) -> None:
        """The next ``len(fps)`` ordinals' fingerprints, in ordinal order."""
        order = np.argsort(fps, kind="stable")
        new = fps[order]
        at = np.searchsorted(self.fps, new)
        self.fps = np.insert(self.fps, at, new)
        self.ordinals = np.insert(self.ordinals, at, order.astype(np.int64) + self.count)
        self.count += len(fps)

    def find(self, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ordinal, found) per fingerprint (ordinal meaningless where not found)."""
        if not self.count:
            return np.zeros(len(fps), dtype=np.int64), np.zeros(len(fps), dtype=bool)
        pos = np.minimum(np.searchsorted(self.fps, fps), self.count - 1)
        return self.ordinals[pos], self.fps[pos] == fps
