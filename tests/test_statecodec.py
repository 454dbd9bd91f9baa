"""The checkpoint's value encoding gives back exactly the values written: the same
types at every level (a pvector stays a pvector, True stays True and not 1, a record
of one type never reads back as another with the same fields)."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, NamedTuple

import immutables
import pyrsistent
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker.values import model_values
from checker.values.codec import CodecError, Reader, Writer, type_name, value_types
from checker.values.fingerprint import fingerprint


class Ping(NamedTuple):
    """A message."""

    src: Any
    dst: Any


class Pong(NamedTuple):
    """Another message with the same fields."""

    src: Any
    dst: Any


@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    """A frozen dataclass with slots."""

    term: Any
    value: Any


@dataclasses.dataclass(frozen=True)
class Plain:
    """A frozen dataclass without slots."""

    x: Any


class Role(enum.Enum):
    """An enum."""

    LEADER = "L"
    FOLLOWER = "F"


TYPES = value_types([__name__])
SERVERS = model_values("cs", 3)


def strict_equal(a: Any, b: Any) -> bool:
    """Equal, and of the same type at every level."""
    if type(a) is not type(b):
        return False
    if isinstance(a, immutables.Map | pyrsistent.PMap):
        return len(a) == len(b) and all(k in b and strict_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, frozenset | pyrsistent.PSet):
        return a == b and all(any(strict_equal(x, y) for y in b) for x in a)
    if isinstance(a, pyrsistent.PBag):
        return a == b
    if dataclasses.is_dataclass(a):
        names = [f.name for f in dataclasses.fields(a)]
        return all(strict_equal(getattr(a, n), getattr(b, n)) for n in names)
    if isinstance(a, tuple | pyrsistent.PVector):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.sampled_from(SERVERS),
    st.sampled_from(list(Role)),
)


def _extend(inner: Any) -> Any:
    keys = st.one_of(st.booleans(), st.integers(-3, 3), st.text(max_size=2))
    return st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.frozensets(atoms, max_size=3),
        st.lists(inner, max_size=3).map(pyrsistent.pvector),
        st.frozensets(atoms, max_size=3).map(pyrsistent.pset),
        st.lists(atoms, max_size=3).map(pyrsistent.pbag),
        st.dictionaries(keys, inner, max_size=3).map(immutables.Map),
        st.dictionaries(keys, inner, max_size=3).map(pyrsistent.pmap),
        st.builds(Ping, inner, inner),
        st.builds(Pong, inner, inner),
        st.builds(Entry, inner, inner),
        st.builds(Plain, inner),
    )


values = st.recursive(atoms, _extend, max_leaves=12)


def _round_trip(items: list[Any]) -> list[Any]:
    w = Writer(TYPES)
    roots = [w.add(v) for v in items]
    doc = json.loads(json.dumps(w.document()))
    reader = Reader(doc, TYPES)
    return [reader.value(r) for r in roots]


@given(st.lists(values, max_size=6))
def test_values_read_back_exactly(items: list[Any]) -> None:
    back = _round_trip(items)
    for a, b in zip(items, back, strict=True):
        assert strict_equal(a, b), (a, b)
        assert fingerprint(a) == fingerprint(b)


def test_equal_in_python_is_not_shared() -> None:
    """Values Python calls equal but TLA+ does not keep their own nodes."""
    items = [True, 1, Ping(0, 0), Pong(0, 0), (0, 0), (True,), (1,), frozenset({1}),
             frozenset({True}), immutables.Map({1: 0}), pyrsistent.pmap({1: 0})]  # fmt: skip
    back = _round_trip(items)
    for a, b in zip(items, back, strict=True):
        assert strict_equal(a, b), (a, b)


def test_a_type_not_given_to_the_writer_is_refused_when_written() -> None:
    class Local(NamedTuple):
        x: int

    with pytest.raises(CodecError, match="not a type the spec's modules define"):
        Writer(TYPES).add(Local(1))
    with pytest.raises(CodecError, match="cannot store"):
        Writer(TYPES).add(1.5)
    assert type_name(Ping) in TYPES and type_name(Role) in TYPES
