"""The breadth-first queue stores handles only: it must behave as a deque of tuples."""

from __future__ import annotations

import gc
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map

from checker.store.frontier import BreadthFirstQueue, DepthFirstStack
from checker.values.native import NATIVE


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 50),
    st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(1, 4)), max_size=200),
)
def test_breadth_first_queue_is_a_deque_of_tuples(start: int, ops: list[Any]) -> None:
    # ops: (push or pop, whether a push starts the next level, how many it pushes:
    # one by append, several by extend, as a parent's children are; how many a pop
    # takes: one by take, several by take_many, as the explorer's batches do)
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
        elif many == 1:
            assert q.take() == ref.popleft()
        else:  # (a batch: as many takes, or all that is left)
            assert q.take_many(many) == [ref.popleft() for _ in range(min(many, len(ref)))]
        assert len(q) == len(ref) and bool(q) == bool(ref)
        assert list(q) == list(ref)
    rebuilt = BreadthFirstQueue()
    for entry in q:
        rebuilt.append(*entry)
    assert list(rebuilt) == list(ref)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 5)), max_size=100))
def test_depth_first_stack_takes_a_batch_as_so_many_takes(ops: list[Any]) -> None:
    """take_many(n) gives what n takes would (newest first), or all that is left."""
    s, ref, ordinal = DepthFirstStack(), DepthFirstStack(), 0
    for push, many in ops:
        if push:
            handles = [f"h{ordinal + i}" for i in range(many)]
            s.extend(ordinal, handles, 3)
            ref.extend(ordinal, handles, 3)
            ordinal += many
        else:
            assert s.take_many(many) == [ref.take() for _ in range(min(many, len(ref)))]
        assert list(s) == list(ref)


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


class _Acceptor(NamedTuple):
    mbal: int
    val: str


@dataclass(frozen=True)
class _Box:
    """A frozen dataclass value (weak-referenceable: its freeing can be watched)."""

    items: frozenset[Any]


class _Pair(NamedTuple):
    aState: Map[str, _Acceptor]
    box: _Box


def _state(n: int) -> tuple[_Pair, tuple[int, ...]]:
    """A handle as the plain expansion queues one: (state, state, terms)."""
    s = _Pair(Map({"a1": _Acceptor(n, "none")}), _Box(frozenset({(n, "m"), (n, ("x",))})))
    return (s, s, (n, n + 1))  # type: ignore[return-value]


def _tracked_parts(handle: Any) -> list[Any]:
    """The handle and the containers it holds that the collector would track."""
    s = handle[0]
    return [handle, s, s.aState, s.aState["a1"], s.box, s.box.items]


@pytest.mark.skipif(NATIVE is None, reason="the C core is not built")
@pytest.mark.parametrize("make", [BreadthFirstQueue, DepthFirstStack])
def test_queued_states_are_off_the_collectors_lists(make: Any) -> None:
    one, many = _state(1), [_state(2), _state(3)]
    assert all(gc.is_tracked(p) for h in (one, *many) for p in _tracked_parts(h))
    q = make()
    q.append(0, one, 1)
    q.extend(1, many, 2)
    assert not any(gc.is_tracked(p) for h in (one, *many) for p in _tracked_parts(h))
    # Types stay with the collector: a class is part of cycles of its own.
    assert gc.is_tracked(_Pair) and gc.is_tracked(_Box)


@pytest.mark.skipif(NATIVE is None, reason="the C core is not built")
def test_an_untracked_state_is_freed_when_it_is_dropped() -> None:
    q = BreadthFirstQueue()
    handle = _state(7)
    box = weakref.ref(handle[0].box)
    q.append(0, handle, 1)
    del handle
    assert box() is not None
    q.take()  # reference counting alone frees it: no collection runs here
    assert box() is None


@pytest.mark.skipif(NATIVE is None, reason="the C core is not built")
def test_untrack_leaves_what_holds_a_value_and_refuses_a_non_list() -> None:
    holder: list[Any] = [_state(4)]
    NATIVE.untrack(holder)
    assert gc.is_tracked(holder)  # the list given is not a value: only its items
    assert not gc.is_tracked(holder[0])
    with pytest.raises(TypeError):
        NATIVE.untrack(_state(5))
