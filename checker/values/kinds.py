"""The value model: the closed list of kinds a state may hold.

Every engine (plain, fast, workers, cluster, simulation, validation) and every helper
that decides whether two values are the same (:func:`checker.values.strict.strict_equal`,
:func:`checker.values.put`, the fingerprint's encoding) sees values through this one
list.  A value's kind is decided by its exact type, never by ``isinstance`` against a
base class: a subclass of ``frozenset``, of ``int`` or of pyrsistent's ``PMap`` (a
``PRecord``) is not the kind of its base, since Python's ``==`` would pair it with
values of the base (``True == 1``) and an action may tell the two apart.  A type that
is not on the list is refused by name (:class:`StateValueError`), at the first state
that holds it, with the kind to use instead.

Two values are the same value exactly when they are of the same kind (for records and
enums: the same class) and their parts are the same values, pairwise, with sets and
maps paired by element and key.  The encoding (:func:`checker.values.fingerprint.encode`)
spells each kind with a tag no user value can spell, so equal encodings mean the same
value and the fingerprint separates what strict equality separates.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import immutables
import pyrsistent

from checker.values.modelvalue import ModelValue


class StateValueError(TypeError):
    """A state holds a value mcheck refuses: mutable, or of a kind states cannot hold."""


class Kind(enum.IntEnum):
    """The kinds of state values (see the module docstring and docs/engine.md)."""

    INT = 0
    BOOL = 1
    STR = 2
    NONE = 3
    MODEL_VALUE = 4
    ENUM = 5
    TUPLE = 6
    PVECTOR = 7
    NAMEDTUPLE = 8
    DATACLASS = 9
    FROZENSET = 10
    PSET = 11
    MAP = 12
    PMAP = 13
    PBAG = 14


#: The atoms: equal when Python says so once their kinds agree.
ATOM_KINDS = frozenset({Kind.INT, Kind.BOOL, Kind.STR, Kind.NONE})
#: Ordered containers compared item by item.
SEQUENCE_KINDS = frozenset({Kind.TUPLE, Kind.PVECTOR, Kind.NAMEDTUPLE})
SET_KINDS = frozenset({Kind.FROZENSET, Kind.PSET})
MAP_KINDS = frozenset({Kind.MAP, Kind.PMAP})

PVECTOR_TYPE: type = type(pyrsistent.pvector())
PSET_TYPE: type = type(pyrsistent.pset())
PMAP_TYPE: type = type(pyrsistent.pmap())
PBAG_TYPE: type = type(pyrsistent.pbag([]))

_EXACT: dict[type, Kind] = {
    int: Kind.INT,
    bool: Kind.BOOL,
    str: Kind.STR,
    type(None): Kind.NONE,
    ModelValue: Kind.MODEL_VALUE,
    tuple: Kind.TUPLE,
    PVECTOR_TYPE: Kind.PVECTOR,
    frozenset: Kind.FROZENSET,
    PSET_TYPE: Kind.PSET,
    immutables.Map: Kind.MAP,
    PMAP_TYPE: Kind.PMAP,
    PBAG_TYPE: Kind.PBAG,
}

#: Per type met, its kind (types are immutable facts: this is a cache of a pure
#: function, not state of a run).
_KIND_OF: dict[type, Kind] = dict(_EXACT)

#: Mutable kinds a state must not hold, with the immutable kind to use instead.
_MUTABLE = {
    list: "a tuple or pyrsistent pvector",
    dict: "immutables.Map or pyrsistent pmap",
    set: "a frozenset or pyrsistent pset",
    bytearray: "a str",
}

#: (docs/engine.md's table, tested against kind_of and pretty.show) kind, example, how
#: two values of it are the same value, how the encoding spells it, how it is shown.
KIND_TABLE: tuple[tuple[str, str, str, str, str], ...] = (
    ("int", "`3`", "same type, `==`", "the int", "`3`"),
    ("bool", "`True`", "same type, `==` (never equal to 1)", "the bool", "`TRUE`"),
    ("str", '`"a"`', "same type, `==`", "the str", '`"a"`'),
    ("None", "`None`", "identity", "None", "`Nil`"),
    ("model value", "`s1`", "identity (interned)", "`(b'@', group, name)`", "`s1`"),
    ("enum member", "`Role.LEADER`", "identity", "`(b'#e', class, member)`", "`LEADER`"),
    ("tuple", "`(1, 2)`", "same length, items pairwise", "a tuple of the items", "`<<1, 2>>`"),
    ("pvector", "`pvector([1])`", "as tuple", "`(b'#v', items...)`", "`<<1>>`"),
    (
        "NamedTuple record",
        "`Entry(1, v1)`",
        "same class, fields pairwise",
        "`(b'#r', module.Class, fields...)`",
        "`[term |-> 1, ...]`",
    ),
    (
        "frozen dataclass record",
        "`Point(0, 0)`",
        "same class, fields pairwise",
        "`(b'#d', module.Class, fields...)`",
        "`[src |-> 0, ...]`",
    ),
    ("frozenset", "`frozenset({1})`", "same size, members paired", "`(b'#s', sorted...)`", "`{1}`"),
    ("pset", "`pset([1])`", "as frozenset", "`(b'#S', sorted...)`", "`{1}`"),
    (
        "immutables.Map",
        "`Map({s1: 0})`",
        "same keys (strictly), values pairwise",
        "`(b'#m', sorted pairs...)`",
        "`(s1 :> 0)`",
    ),
    ("pmap", "`pmap({1: 0})`", "as Map", "`(b'#M', sorted pairs...)`", "`<<0>>`"),
    (
        "pbag",
        "`pbag([1, 1])`",
        "same members, same counts",
        "`(b'#b', sorted counts...)`",
        "`<<2>>`",
    ),
)


def kind_of(t: type) -> Kind:
    """The kind of values of exact type ``t``; raises :class:`StateValueError` naming
    the type (and what to use instead) when states cannot hold it."""
    k = _KIND_OF.get(t)
    if k is not None:
        return k
    k = _classify(t)
    _KIND_OF[t] = k
    return k


def _classify(t: type) -> Kind:
    for base, instead in _MUTABLE.items():
        if issubclass(t, base):
            raise StateValueError(
                f"a {t.__name__}, which is mutable (an action could change it in place): "
                f"use {instead}"
            )
    if issubclass(t, enum.Enum):
        return Kind.ENUM
    if issubclass(t, tuple) and hasattr(t, "_fields") and t.__new__ is not tuple.__new__:
        # A NamedTuple (collections.namedtuple makes its own __new__).
        return Kind.NAMEDTUPLE
    if dataclasses.is_dataclass(t):
        params = getattr(t, "__dataclass_params__", None)
        if params is not None and not params.frozen:
            raise StateValueError(
                f"a {t.__name__}, a dataclass that is not frozen (mutable): "
                "declare it @dataclass(frozen=True)"
            )
        return Kind.DATACLASS
    if issubclass(t, float | complex):
        raise StateValueError(
            f"a {t.__name__}: states hold ints, strings, bools, None, model values and "
            "immutable containers of them (TLA+ has no reals; traces could not be saved)"
        )
    if issubclass(t, bytes):
        raise StateValueError(f"a {t.__name__}: bytes are not state values: use a str")
    raise StateValueError(
        f"a value of type {t.__module__}.{t.__qualname__}, which is not one of the kinds "
        f"states hold{_instead(t)}: ints, strings, bools, None, model values, enum "
        "members, tuples, NamedTuples, frozen dataclasses, frozensets, immutables.Map, "
        "and pyrsistent's pvector, pset, pmap and pbag (not their subclasses)"
    )


def _instead(t: type) -> str:
    """A hint for a subclass of a kind: which kind to use instead."""
    if issubclass(t, pyrsistent.PRecord | pyrsistent.PClass):
        return " (for a record use a NamedTuple or a frozen dataclass)"
    for base in (int, str, frozenset, tuple, immutables.Map, PMAP_TYPE, PSET_TYPE, PVECTOR_TYPE):
        if issubclass(t, base):
            return f" (it is a subclass of {base.__name__}: use {base.__name__} itself)"
    return ""


def qualified_name(t: type) -> str:
    """A record or enum class's name as the encoding spells it: module and qualname."""
    return f"{t.__module__}.{t.__qualname__}"


def record_fields(t: type) -> tuple[str, ...]:
    """The field names of a record class (NamedTuple or frozen dataclass), in order;
    every field of a dataclass counts, compared or not."""
    if kind_of(t) is Kind.NAMEDTUPLE:
        return tuple(t._fields)  # type: ignore[attr-defined]
    return tuple(f.name for f in dataclasses.fields(t))


def check_value(v: Any) -> None:
    """Raise :class:`StateValueError` unless ``v`` and every part of it is of a kind
    states hold (the encoding does this on the way; this is for callers that do not
    encode)."""
    k = kind_of(type(v))
    if k in ATOM_KINDS or k is Kind.MODEL_VALUE or k is Kind.ENUM:
        return
    if k in SEQUENCE_KINDS or k in SET_KINDS or k is Kind.PBAG:
        for x in v:
            check_value(x)
    elif k in MAP_KINDS:
        for key, x in v.items():
            check_value(key)
            check_value(x)
    else:  # a dataclass record
        for name in record_fields(type(v)):
            check_value(getattr(v, name))
