"""Type-strict equality of state values: never Python's ``==`` alone.

Python says ``True == 1``, ``Ping(0, 0) == Pong(0, 0)`` (NamedTuples compare as
tuples), ``(1, 2) == Pair(1, 2)`` and ``IntEnum`` members equal to ints; TLA+ does not
(TRUE is not 1, a record of one type is not a record of another).  A cache keyed by
values (the fast engine's slot numbers, the fingerprint calculator's memo) finds a
candidate by hash and ``==``, in C, and accepts it only when :func:`strict_equal` says
the two are the same value: the same type at every level, equal atoms, and containers
whose elements pair up strictly.  It is stricter than the fingerprint (a tuple and a
pvector are one TLA+ sequence, but an action may treat them differently): a cache that
keeps two entries for one TLA+ value costs a little memory; one that keeps one entry
for two values gives wrong answers.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import immutables
import pyrsistent

from checker.values import ModelValue

_MISSING: Any = object()
_ATOMS = frozenset({int, str, bool, type(None), ModelValue, bytes})
_SEQUENCES = frozenset({tuple, type(pyrsistent.pvector())})
_SETS = frozenset({frozenset, type(pyrsistent.pset())})
_MAPS = frozenset({immutables.Map, type(pyrsistent.pmap())})
_BAG: type = type(pyrsistent.pbag([]))


def strict_equal(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same value: of the same type at every level,
    equal atoms, the same fields, the same elements and entries (paired by ``==``,
    then compared strictly)."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t in _ATOMS:
        return bool(a == b)
    try:
        return _strict_container(a, b, t)
    except TypeError:
        return False  # a comparison inside refused: pbag beside another kind of value


def _strict_container(a: Any, b: Any, t: type) -> bool:
    if t in _SEQUENCES or (issubclass(t, tuple) and hasattr(t, "_fields")):
        return len(a) == len(b) and all(map(strict_equal, a, b))
    if t in _SETS:
        return len(a) == len(b) and _pairs_up(a, b)
    if t in _MAPS:
        if len(a) != len(b):
            return False
        partner = _partners(list(b))
        for k, v in a.items():
            kb = partner(k)
            if kb is _MISSING or not strict_equal(v, b[kb]):
                return False
        return True
    if issubclass(t, enum.Enum):
        return False  # members are singletons: another object is another member
    if dataclasses.is_dataclass(t):
        return all(
            strict_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(t)
        )
    if t is _BAG:
        return bool(a == b) and _pairs_up(frozenset(a), frozenset(b))
    if issubclass(t, tuple):  # another tuple subclass: its items, strictly
        return len(a) == len(b) and all(map(strict_equal, a, b))
    # A kind no state should hold (the fingerprint refuses it): Python's equality.
    return bool(a == b)


def _pairs_up(a: Any, b: Any) -> bool:
    """Every element of ``a`` has a strictly equal element in ``b`` (the sets are of
    the same size; within one set no two elements are ``==``)."""
    partner = _partners(list(b))
    return all(partner(x) is not _MISSING for x in a)


def _partners(members: list[Any]) -> Any:
    """A function giving, for a value, the member strictly equal to it (or _MISSING):
    by a dictionary keyed by (type, value), so no two types are compared; where
    comparing raises (pyrsistent's pbag refuses ``==`` with anything else, also inside
    a map's values), by a scan."""

    def scan(x: Any) -> Any:
        return next((m for m in members if strict_equal(x, m)), _MISSING)

    try:
        index = {(type(m), m): m for m in members}
    except TypeError:
        return scan

    def find(x: Any) -> Any:
        try:
            y = index.get((type(x), x), _MISSING)
        except TypeError:
            return scan(x)
        return y if y is not _MISSING and strict_equal(x, y) else _MISSING

    return find
