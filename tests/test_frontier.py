"""The breadth-first queue stores handles only: it must behave as a deque of tuples."""

from __future__ import annotations

from collections import deque
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checker.store.frontier import BreadthFirstQueue, DepthFirstStack


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 50),
    st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(1, 4)), max_size=200),
)
def test_breadth_first_queue_is_a_deque_of_tuples(start: int, ops: list[Any]) -> None:
    # ops: (push or pop, whether a push starts the next level, how many it pushes:
    # one by append, several by extend, as a parent's children are)
    q, ref = BreadthFirstQueue(), deque[tuple[int, Any, int]]()
    ordinal, depth = start, 1
    for push, deeper, many in ops:
        if push or not ref:
            if deeper:
                depth += 1
            handles = [f"h{ordinal + i}" for i in range(many)]
            if many == 1:
                q.append(ordinal, handles[0], depth)
            else:
                q.extend(ordinal, handles, depth)
            ref.extend((ordinal + i, h, depth) for i, h in enumerate(handles))
            ordinal += many
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
    s.append(0, 0, 1)
    s.extend(1, [1, 2], 2)  # as two appends: (1, 1, 2) then (2, 2, 2)
    s.append(3, 3, 4)
    copy = DepthFirstStack()
    for entry in s:
        copy.append(*entry)
    assert [copy.take() for _ in range(4)] == [(3, 3, 4), (2, 2, 2), (1, 1, 2), (0, 0, 1)]
