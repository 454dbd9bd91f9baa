"""How often Python's cyclic garbage collector runs while a model is checked.

Exploring allocates tuples and handles by the million, and nearly all of them die by
reference counting the moment their state is done: they never form cycles.  With
CPython's default thresholds (700, 10, 10) the collector still runs every 700 net
allocations and re-scans whatever the current batch holds alive, and every so often
the whole heap (the caches' trees, the interned values): measured with ``gc.callbacks``
on mini-Raft (one process, 1.5M states), 4,468 young and 37 full collections took
7.6 s of a 79 s run; on raft (MaxLogLen 0) 4.3 s of 59 s.

A young collection is triggered by the *net* count of container objects allocated
since the last one, and cyclic garbage is never freed by reference counting, so it
counts towards that number: with a threshold of 100,000 the collector still runs, and
uncollected cycles stay bounded by about that many objects (a few megabytes), while
the acyclic churn of exploration almost never triggers it (one collection in the same
mini-Raft run).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Young-generation threshold while checking (net container allocations).
YOUNG = 100_000
#: Young collections per middle one, middle per full one (CPython's are 10 and 10).
MIDDLE = 50
OLD = 100


@contextmanager
def paced_collector() -> Iterator[None]:
    """Run the cyclic collector rarely for the duration, then restore the caller's
    thresholds (a library caller's settings are its own)."""
    saved = gc.get_threshold()
    gc.set_threshold(YOUNG, MIDDLE, OLD)
    try:
        yield
    finally:
        gc.set_threshold(*saved)
