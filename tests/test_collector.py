"""The cyclic collector runs rarely while checking, still frees cycles, and the
caller's thresholds come back afterwards."""

from __future__ import annotations

import gc
from typing import Any, NamedTuple

import pytest

from checker import Options, Spec, action, check_spec, invariant
from checker.explore import collector
from checker.explore.result import Verdict
from checker.values.native import NATIVE


class Counter(NamedTuple):
    """Two counters."""

    x: int
    y: int


class Littering(Spec):
    """A grid of states whose invariant leaves a reference cycle behind at every call
    (as careless spec code might): only the cyclic collector can free them."""

    constants = {"N": 150}
    check_deadlock = False
    N: int
    seen_thresholds: set[tuple[int, ...]] = set()

    def init(self) -> list[Counter]:
        return [Counter(0, 0)]

    @action
    def IncX(self, s: Counter) -> Counter | None:
        return s._replace(x=s.x + 1) if s.x < self.N else None

    @action
    def IncY(self, s: Counter) -> Counter | None:
        return s._replace(y=s.y + 1) if s.y < self.N else None

    @invariant
    def Fine(self, s: Counter) -> bool:
        junk: list[Any] = [s]
        junk.append(junk)  # a cycle: reference counting never frees it
        Littering.seen_thresholds.add(gc.get_threshold())
        return True


def test_cycles_are_still_collected_and_thresholds_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    young = 5000  # the real threshold, scaled down with the state space
    monkeypatch.setattr(collector, "YOUNG", young)
    before = gc.get_threshold()
    freed: list[int] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            freed.append(info["collected"])

    gc.callbacks.append(on_gc)
    try:
        # cache=False: the invariant runs on every one of the 22,801 states.
        r = check_spec(Littering(), Options(cache=False))
    finally:
        gc.callbacks.remove(on_gc)
    assert r.verdict is Verdict.OK and r.stats.distinct == 151 * 151
    assert Littering.seen_thresholds == {(young, collector.MIDDLE, collector.OLD)}
    assert gc.get_threshold() == before
    # The cycles were freed during the run, not left for later: a collection about
    # every `young` of them.
    assert sum(freed) >= r.stats.distinct - 2 * young


class Watched(Spec):
    """A grid whose actions note whether the collector tracks the state they are
    given (one the run queued, then took to expand)."""

    constants = {"N": 30}
    check_deadlock = False
    N: int
    tracked: list[bool] = []

    def init(self) -> list[Counter]:
        return [Counter(0, 0)]

    @action
    def IncX(self, s: Counter) -> Counter | None:
        Watched.tracked.append(gc.is_tracked(s))
        return s._replace(x=s.x + 1) if s.x < self.N else None

    @action
    def IncY(self, s: Counter) -> Counter | None:
        return Counter(s.x, s.y + 1) if s.y < self.N else None


@pytest.mark.skipif(NATIVE is None, reason="the C core is not built")
@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_queued_states_are_not_rescanned_by_the_collector(strategy: str) -> None:
    Watched.tracked = []
    r = check_spec(Watched(), Options(cache=False, strategy=strategy))
    assert r.verdict is Verdict.OK and r.stats.distinct == 31 * 31
    # Every state expanded had been queued: the queue took it off the collector's
    # lists (no collection can free a cycle through an immutable value).
    assert len(Watched.tracked) == 31 * 31 and not any(Watched.tracked)
