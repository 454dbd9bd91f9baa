"""Values for generated specs, and a reference form of them written apart from mcheck.

``UNIVERSES`` are small sets of values that Python's ``==`` (or a careless encoding)
conflates: ``True`` beside ``1``, records of two classes with the same fields beside a
plain tuple, a tuple spelling a tag (``("#bag", (1, 2))``) beside a bag, strings
spelling an enum member or a model value beside the real ones, a pvector beside a
tuple, a pset beside a frozenset, a pmap beside a Map, maps keyed ``1`` and ``True``,
nested as well.

:func:`ref_form` turns a value into nested tuples naming each level's exact class
(module and qualified name) and ordering set members and map entries by their text.
It is the reference search's notion of "the same value" (tests/soundness/check.py)
and shares no code with :mod:`checker.values.fingerprint` or :mod:`checker.values.strict`.
:func:`digest` hashes it (the same in every process), so a generated action is a
type-strict, deterministic function of what it reads.
"""

from __future__ import annotations

import dataclasses
import enum
import zlib
from typing import Any, NamedTuple

import immutables
from pyrsistent import PBag, PMap, PSet, PVector, pbag, pmap, pset, pvector

from checker.values import ModelValue, model_values


class Ping(NamedTuple):
    """A message."""

    src: Any
    dst: Any


class Pong(NamedTuple):
    """Another message with the same fields (equal to a Ping in Python)."""

    src: Any
    dst: Any


@dataclasses.dataclass(frozen=True)
class Point:
    """A frozen dataclass with the same fields again."""

    src: Any
    dst: Any


class Role(enum.Enum):
    """An enum."""

    LEADER = "L"
    FOLLOWER = "F"


class Level(enum.IntEnum):
    """An IntEnum: its members are equal to ints in Python."""

    LOW = 1
    HIGH = 2


SERVERS = model_values("gs", 3)

#: Universes of values a variable may take; neighbours are often equal in Python.
UNIVERSES: tuple[tuple[Any, ...], ...] = (
    (0, 1, 2, 3),
    (True, 1, False, 0, Level.LOW),
    (Ping(0, 0), Pong(0, 0), (0, 0), Point(0, 0), Ping(1, 0)),
    (pvector([1]), (1,), (True,), pset([1]), frozenset([1])),
    (frozenset([True]), frozenset([1]), pmap({1: 0}), immutables.Map({1: 0})),
    (immutables.Map({True: 0}), immutables.Map({1: 0}), pbag([1, 1]), ("#bag", (1, 2))),
    ((Ping(1, True),), (Ping(1, 1),), frozenset([Ping(0, 0)]), frozenset([Pong(0, 0)])),
    (immutables.Map({"k": (True,)}), immutables.Map({"k": (1,)}), None, "a"),
    (Role.LEADER, Role.FOLLOWER, "L", "Role.LEADER", SERVERS[0], "@gs:gs1", None),
    (pmap({0: pmap({1: 2})}), pmap({0: ("#map", (1, 2))}), immutables.Map({0: pmap({1: 2})})),
    (Level.HIGH, 2, (2,), frozenset({2}), pbag([2])),
)

#: Universes with no model value in them (symmetric specs: a renaming of the servers
#: must map every value to itself).
SYMMETRIC_UNIVERSES = tuple(
    i for i, u in enumerate(UNIVERSES) if not any(type(v) is ModelValue for v in u)
)


def _name(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


def ref_form(v: Any, ren: Any = None) -> Any:
    """``v`` as nested tuples naming each level's exact class, model values renamed
    by ``ren`` (a dict), sets and maps in the order of their members' text."""
    t = type(v)
    if t in (int, bool, str, type(None)):
        return (t.__name__, v)
    if t is ModelValue:
        w = ren.get(v, v) if ren else v
        return ("mv", w.group, w.name)
    if isinstance(v, enum.Enum):
        return (_name(t), v.name)
    if isinstance(v, frozenset | PSet):
        return (_name(t), tuple(sorted((ref_form(x, ren) for x in v), key=repr)))
    if isinstance(v, PBag):
        counts: dict[Any, int] = {}
        for x in v:
            key = repr(ref_form(x, ren))
            counts[key] = counts.get(key, 0) + 1
        return (_name(t), tuple(sorted(counts.items())))
    if isinstance(v, immutables.Map | PMap):
        items = ((ref_form(k, ren), ref_form(x, ren)) for k, x in v.items())
        return (_name(t), tuple(sorted(items, key=repr)))
    if dataclasses.is_dataclass(v):
        return (_name(t), tuple(ref_form(getattr(v, f.name), ren) for f in dataclasses.fields(v)))
    if isinstance(v, tuple | PVector):
        return (_name(t), tuple(ref_form(x, ren) for x in v))
    raise TypeError(f"no reference form for {t!r}")


def digest(salt: int, *values: Any) -> int:
    """A deterministic, type-strict hash of ``values`` (the same in every process)."""
    return zlib.crc32(repr((salt, tuple(ref_form(v) for v in values))).encode())


def multiset_digest(salt: int, m: Any) -> int:
    """A hash of a map's values as a multiset: what a symmetric spec may look at
    without telling its keys (the servers) apart."""
    return zlib.crc32(repr((salt, sorted(repr(ref_form(x)) for x in m.values()))).encode())
