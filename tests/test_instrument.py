"""The fast engine's instrumented copies: the same behaviour as the spec's own code, and
every read of the state recorded (checker/fastpath/instrument.py, reads.py).

A copy must compute exactly what the original computes (the spec sees what the plain
engine shows it), and the read log must hold every slot the code can depend on: more
is allowed (fewer cache hits), fewer never.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NamedTuple

import immutables
import pytest
from pyrsistent import pmap

from checker.fastpath.reads import EVERY, Layout, ReadLog
from checker.values import put


class S(NamedTuple):
    """A state: a whole variable, a fixed-key map, another whole variable."""

    a: int
    m: Any
    b: Any


M_SLOTS = {0: 1, 1: 2}  # m's keys -> slots (a is slot 0, b slot 3)


def _log() -> ReadLog:
    return ReadLog(
        Layout(
            fields={"a": 0, "m": 1, "b": 2},
            whole_slot=[0, -1, 3],
            wide=frozenset(),
            keyslot={1: dict(M_SLOTS)},
            slotkey={1: 0, 2: 1},
            slots_of={1: (1, 2)},
            state_type=S,
        )
    )


STATE = S(5, immutables.Map({0: 10, 1: 20}), (1, 2))


def _reads(fn: Any, state: S = STATE) -> tuple[Any, set[int]]:
    log = _log()
    copy = log.entry(fn)
    log.begin(state)
    result = copy(state)
    assert result == fn(state) or (result is None and fn(state) is None)
    return result, set(log.reads)


def entry_zero(s: S) -> Any:
    return s.m[0]


def entry_by_get(s: S) -> Any:
    return s.m.get(1)


def alias_then_entry(s: S) -> Any:
    mm = s.m
    return mm[1]


def helper_entry(s: S) -> Any:
    return _entry(s.m, 0)


def _entry(m: Any, k: Any) -> Any:
    return m[k]


def keys_only(s: S) -> Any:
    return (len(s.m), 0 in s.m, sorted(s.m.keys()), type(s.m), isinstance(s.m, immutables.Map))


def values_read(s: S) -> Any:
    return sorted(s.m.values())


def around_fields(s: S) -> Any:
    return tuple.__getitem__(s, 0)


def into_json(s: S) -> Any:
    return json.dumps(s.b)  # a whole variable: its own slot


def state_into_json(s: S) -> Any:
    return json.dumps(list(s.m.keys())) + json.dumps(s[0])


def through_locals(s: S) -> Any:
    return len(locals())


def through_a_frame(s: S) -> Any:
    frame = sys._getframe()
    return frame.f_locals["s"].b


def dict_of_changes(s: S) -> Any:
    changes = {}
    changes["m"] = put(s.m, 0, 11)
    return s._replace(**changes)


def splat_a_map(s: S) -> Any:
    return dict(**{str(k): v for k, v in s.m.items()})


def unpack_state(s: S) -> Any:
    a, _m, _b = s
    return a


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (entry_zero, {1}),
        (entry_by_get, {2}),
        (alias_then_entry, {2}),
        (helper_entry, {1}),
        (keys_only, set()),
        (values_read, {1, 2}),
        (around_fields, {EVERY}),
        (into_json, {3}),
        (state_into_json, {EVERY}),
        (dict_of_changes, {1}),
        (splat_a_map, {1, 2}),
        (unpack_state, {EVERY}),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_each_way_of_reading_is_recorded(fn: Any, expected: set[int]) -> None:
    _, reads = _reads(fn)
    assert reads == expected


def test_replace_keeps_the_fields_it_does_not_name() -> None:
    log = _log()

    def step(s: S) -> S:
        return s._replace(a=s.a + 1, m=s.m.set(1, 7))

    copy = log.entry(step)
    log.begin(STATE)
    t = copy(STATE)
    assert log.provenance(t) == (False, False, True)
    assert log.written_entries(1, t.m) == frozenset({2})
    assert set(log.reads) == {0}  # a was read; m's entry 1 only written


def test_a_map_rebuilt_by_hand_has_no_provenance() -> None:
    """A map built from the input's entries by code the log does not follow (dict())
    counts them all as read, and the successor's map is a plain written value."""
    log = _log()

    def step(s: S) -> S:
        return s._replace(m=immutables.Map(dict(s.m)))

    copy = log.entry(step)
    log.begin(STATE)
    t = copy(STATE)
    assert log.written_entries(1, t.m) is None
    assert set(log.reads) == {1, 2}


class Base:
    """For super() and private names in copies."""

    def twice(self, x: int) -> int:
        return 2 * x


class Derived(Base):
    __secret = 3

    def twice(self, x: int) -> int:
        return super().twice(x) + self.__secret


def _outer(k: int) -> Any:
    captured = k * 10

    def inner(s: S, extra: int = 1, *rest: Any, flag: bool = True, **kw: Any) -> Any:
        total = captured + extra + len(rest) + len(kw)
        total += 1 if flag else 0
        gen = (x for x in range(s.a) if x % 2)
        squares = {x: x * x for x in gen}
        try:
            raise KeyError(s.b[0])
        except KeyError as exc:
            total += exc.args[0]
        if (n := len(squares)) > 1:
            total += n
        text = f"{total:>5}|{s.b[1:]!r}"
        return total, text, s.b[::-1], [y + 1 for y in s.b]

    return inner


@pytest.mark.parametrize("args", [((), {}), ((3, 4, 5), {"z": 1}), ((), {"flag": False})])
def test_a_copy_behaves_as_the_original(args: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
    """Closures, defaults, *args and **kwargs, generators, comprehensions, exceptions,
    the walrus, f-strings and slices: the copy gives what the original gives."""
    fn = _outer(2)
    log = _log()
    copy = log.entry(fn)
    log.begin(STATE)
    pos, kw = args
    assert copy(STATE, *pos, **kw) == fn(STATE, *pos, **kw)


def test_super_and_private_names_work_in_a_copy() -> None:
    log = _log()
    obj = Derived()
    copy = log.entry(obj.twice)
    log.begin(STATE)
    assert copy(4) == obj.twice(4) == 11


@pytest.mark.parametrize("fn", [through_locals, through_a_frame], ids=lambda f: f.__name__)
def test_code_that_looks_at_frames_is_not_instrumented(fn: Any) -> None:
    """In a copy locals() would list the runtime's cells and sys._getframe() give the
    runtime's frame: such code runs on the plain path (never cached)."""
    from checker.fastpath.reads import Untracked

    with pytest.raises(Untracked):
        _log().entry(fn)


def test_code_without_source_is_not_instrumented() -> None:
    from checker.fastpath.reads import Untracked

    namespace: dict[str, Any] = {}
    exec("def f(s):\n    return s.a\n", namespace)  # no file: no source to copy
    log = _log()
    with pytest.raises(Untracked):
        log.entry(namespace["f"])


def test_pmap_methods_are_followed_too() -> None:
    state = S(1, pmap({0: 1, 1: 2}), ())
    log = _log()

    def step(s: S) -> Any:
        return s._replace(m=s.m.set(0, s.m.get(1) + 1))

    copy = log.entry(step)
    log.begin(state)
    t = copy(state)
    assert t == step(state)
    assert set(log.reads) == {2}
    assert log.written_entries(1, t.m) == frozenset({1})
