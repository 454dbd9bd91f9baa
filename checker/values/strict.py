"""Type-strict equality of state values: never Python's ``==`` alone.

Python says ``True == 1``, ``Ping(0, 0) == Pong(0, 0)`` (NamedTuples compare as
tuples), ``(1, 2) == Pair(1, 2)`` and ``IntEnum`` members equal to ints; TLA+ does not
(TRUE is not 1, a record of one type is not a record of another).  A cache keyed by
values (the fast engine's slot numbers, the fingerprint calculator's memo) finds a
candidate by hash and ``==``, in C, and accepts it only when :func:`strict_equal` says
the two are the same value: of the same kind at every level (the closed list of
:mod:`checker.values.kinds`), equal atoms, and containers whose elements pair up
strictly.  It separates exactly what the fingerprint's encoding separates: a tuple
and a pvector are two values, as are a frozenset and a pset, an ``immutables.Map``
and a pmap (an action may tell them apart, so an engine must too).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import is_
from typing import Any

from checker.values.kinds import (
    _KIND_OF,
    ATOM_KINDS,
    MAP_KINDS,
    SEQUENCE_KINDS,
    SET_KINDS,
    Kind,
    StateValueError,
    kind_of,
    record_fields,
)
from checker.values.modelvalue import ModelValue
from checker.values.native import NATIVE

_MISSING: Any = object()
#: Exact types whose values are equal once their types are and Python says so.
_ATOMS: frozenset[type] = frozenset({int, str, bool, type(None), ModelValue})


def strict_equal_pure(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same value (:mod:`checker.values.kinds`): of the
    same kind at every level (records and enums: of the same class), equal atoms, the
    same fields, the same elements and entries (paired by type and value, then
    compared strictly).  A value of a type states cannot hold raises
    :class:`~checker.values.kinds.StateValueError`; two such values are never compared
    by Python's ``==`` alone."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    kind = _KIND_OF.get(t)
    if kind is None:
        kind = kind_of(t)
    if kind in ATOM_KINDS:
        return bool(a == b)
    if kind in SEQUENCE_KINDS:
        return len(a) == len(b) and _items_equal(a, b)
    if kind is Kind.MODEL_VALUE or kind is Kind.ENUM:
        return False  # interned atoms and enum members: another object is another value
    if kind in MAP_KINDS and len(a) == len(b) and all(map(is_, a.keys(), b.keys())):
        # The very same keys in the same order (maps of one key set iterate alike):
        # only the values are left to compare.
        return _items_equal(list(a.values()), list(b.values()))
    try:
        return _same(a, b, kind)
    except StateValueError:
        raise
    except TypeError:
        return False  # a comparison inside refused: pbag beside another kind of value


def _items_equal(xs: Any, ys: Any) -> bool:
    """Two sequences of the same length (tuples, records, pvectors, lists), item by
    item: their items' types compared in C first, and when every item is an atom (the
    usual leaf) their values too; otherwise one by one, where a nested value shared
    by both sides (values built from one another share most parts) passes at once."""
    types = list(map(type, xs))
    if types != list(map(type, ys)):
        return False
    if _ATOMS.issuperset(types):
        return bool(xs == ys)
    for x, y, tx in zip(xs, ys, types, strict=True):
        if x is y:
            continue
        if tx in _ATOMS:
            if x != y:
                return False
        elif not strict_equal_pure(x, y):
            return False
    return True


def _same(a: Any, b: Any, kind: Kind) -> bool:
    """Two values of one type (``kind`` is its kind): not atoms, not sequences, not
    maps whose keys are the very same objects (:func:`strict_equal` compares those)."""
    if kind in MAP_KINDS:
        if len(a) != len(b):
            return False
        partner = _partners(list(b.keys()))
        for k, v in a.items():
            key = partner(k)
            if key is _MISSING or not strict_equal_pure(v, b[key]):
                return False
        return True
    if kind in SET_KINDS:
        if len(a) != len(b):
            return False
        xs, ys = list(a), list(b)
        if all(map(is_, xs, ys)):
            return True
        partner = _partners(ys)
        return all(partner(x) is not _MISSING for x in xs)
    if kind is Kind.DATACLASS:
        names = record_fields(type(a))
        return _items_equal([getattr(a, n) for n in names], [getattr(b, n) for n in names])
    assert kind is Kind.PBAG
    return bool(a == b) and _pairs_up(frozenset(a), frozenset(b))


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
        return next((m for m in members if strict_equal_pure(x, m)), _MISSING)

    try:
        index = {(type(m), m): m for m in members}
    except TypeError:
        return scan

    def find(x: Any) -> Any:
        try:
            y = index.get((type(x), x), _MISSING)
        except TypeError:
            return scan(x)
        return y if y is not _MISSING and strict_equal_pure(x, y) else _MISSING

    return find


#: Whether two values are the same value: :func:`strict_equal_pure` (the reference),
#: in C where the value core is built (:mod:`checker.values.native`).
strict_equal: Callable[[Any, Any], bool] = (
    NATIVE.strict_equal if NATIVE is not None else strict_equal_pure
)
