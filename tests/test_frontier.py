"""The breadth-first queue stores handles only: it must behave as a deque of tuples."""

from __future__ import annotations

from collections import deque
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checker.frontier import BreadthFirstQueue, DepthFirstStack


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 50), st.lists(st.tuples(st.booleans(), st.booleans()), max_size=200))
def test_breadth_first_queue_is_a_deque_of_tuples(start: int, ops: list[Any]) -> None:
    # ops: (push or pop, whether a pushed state starts the next level)
    q, ref = BreadthFirstQueue(), deque[tuple[int, Any, int]]()
    ordinal, depth = start, 1
    for push, deeper in ops:
        if push or not ref:
            if deeper:
                depth += 1
            q.append(ordinal, f"h{ordinal}", depth)
            ref.append((ordinal, f"h{ordinal}", depth))
            ordinal += 1
        else:
            assert q.take() == ref.popleft()
        assert len(q) == len(ref) and bool(q) == bool(ref)
        assert list(q) == list(ref)
    rebuilt = BreadthFirstQueue()
    for entry in q:
        rebuilt.append(*entry)
    assert list(rebuilt) == list(ref)


def test_breadth_first_queue_refuses_a_gap() -> None:
    q = BreadthFirstQueue()
    q.append(0, "a", 1)
    try:
        q.append(2, "c", 1)
    except AssertionError:
        return
    raise AssertionError("a gap in the ordinals was accepted")


def test_depth_first_stack_rebuilds_in_iteration_order() -> None:
    s = DepthFirstStack()
    for o in range(4):
        s.append(o, o, o + 1)
    copy = DepthFirstStack()
    for entry in s:
        copy.append(*entry)
    assert [copy.take() for _ in range(4)] == [(3, 3, 4), (2, 2, 3), (1, 1, 2), (0, 0, 1)]
