"""Small random specs for differential testing (tests/test_differential.py).

A spec here is data (:class:`SpecDesc`, drawn by Hypothesis) turned into a real
:class:`checker.Spec` class by :func:`build`: a transition system whose variables take
values from small universes chosen to break a checker that trusts Python's ``==``
(``True`` beside ``1``, ``Ping(0, 0)`` beside ``Pong(0, 0)`` and ``(0, 0)``, a pvector
beside a tuple, ``frozenset({True})`` beside ``frozenset({1})``, maps keyed ``1`` and
``True``), maps with fixed keys read entry by entry, a map that gains keys, a state
constraint and invariants that read them.  Actions are pure functions of the fields
they read: each hashes what it read (type-strictly, with the fingerprint) to decide
whether it is enabled and what it writes.  A symmetric variant keeps per-server maps
whose actions never look at a server's name, so a symmetry declaration is sound.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import immutables
import pyrsistent
from hypothesis import strategies as st

from checker import Spec, action, invariant
from checker.fingerprint import fingerprint
from checker.values import model_values


class Ping(NamedTuple):
    """A message."""

    src: Any
    dst: Any


class Pong(NamedTuple):
    """Another message with the same fields (equal to a Ping in Python)."""

    src: Any
    dst: Any


@dataclass(frozen=True)
class Point:
    """A frozen dataclass with the same fields again."""

    src: Any
    dst: Any


class Role(enum.Enum):
    """An enum."""

    LEADER = "L"
    FOLLOWER = "F"


SERVERS = model_values("gs", 3)

#: Universes of values a variable may take; neighbours are equal in Python.
UNIVERSES: tuple[tuple[Any, ...], ...] = (
    (0, 1, 2, 3),
    (True, 1, False, 0),
    (Ping(0, 0), Pong(0, 0), (0, 0), Point(0, 0), Ping(1, 0)),
    (pyrsistent.pvector([1]), (1,), (True,), pyrsistent.pset([1]), frozenset([1])),
    (frozenset([True]), frozenset([1]), pyrsistent.pmap({1: 0}), immutables.Map({1: 0})),
    (immutables.Map({True: 0}), immutables.Map({1: 0}), pyrsistent.pbag([1, 1])),
    ((Ping(1, True),), (Ping(1, 1),), frozenset([Ping(0, 0)]), frozenset([Pong(0, 0)])),
    (immutables.Map({"k": (True,)}), immutables.Map({"k": (1,)}), None, "a"),
    (Role.LEADER, Role.FOLLOWER, "L", SERVERS[0], SERVERS[1], None),
)

#: Universes with no model value in them (for the symmetric specs: a renaming of the
#: servers must map every value to itself).
SYMMETRIC_UNIVERSES = tuple(
    u for u in UNIVERSES if not any(type(v).__name__ == "ModelValue" for v in u)
)


@dataclass(frozen=True)
class VarDesc:
    """A variable: plain (a value of a universe), a map with fixed keys, or a map
    that gains keys."""

    kind: str  #: "plain", "map" or "growing"
    universe: tuple[Any, ...]
    init: int


@dataclass(frozen=True)
class ActDesc:
    """An action: the variables it reads and writes, how often it is enabled, its
    salt (what makes its table its own), and whether it takes a key of the map."""

    reads: tuple[int, ...]
    writes: tuple[int, ...]
    guard: int
    salt: int
    keyed: bool = False
    #: Instances per key: each writes other values (the spec's nondeterminism).
    choices: int = 1


@dataclass(frozen=True)
class SpecDesc:
    """A whole spec."""

    variables: tuple[VarDesc, ...]
    actions: tuple[ActDesc, ...]
    invariant: tuple[int, int, int]  #: (variable, modulus, salt)
    constraint: tuple[int, int, int] | None
    dataclass_state: bool = False
    deadlock: bool = False
    symmetric: bool = False
    keys: tuple[Any, ...] = (0, 1)
    notes: list[str] = field(default_factory=list, compare=False)


def _hash(salt: int, values: tuple[Any, ...]) -> int:
    # Type-strict (True is not 1, Ping is not Pong) and the same in every process.
    return fingerprint((salt, tuple(_digest(v) for v in values)))


def _digest(value: Any) -> Any:
    """A map keyed by servers as the multiset of its values' fingerprints: what a
    predicate may look at without telling servers apart (renaming them changes
    nothing)."""
    if isinstance(value, Mapping) and value and all(k in SERVERS for k in value):
        return tuple(sorted(fingerprint(x) for x in value.values()))
    return value


@st.composite
def spec_descs(draw: Any, symmetric: bool = False) -> SpecDesc:
    """A random spec description (kept small: a few thousand states at most)."""
    universes = SYMMETRIC_UNIVERSES if symmetric else UNIVERSES
    nplain = draw(st.integers(2, 4))
    kinds = ["plain"] * nplain
    if symmetric:
        kinds.append("map")
    else:
        kinds += draw(st.sampled_from([[], ["map"], ["growing"], ["map", "growing"]]))
    variables = []
    for kind in kinds:
        u = draw(st.sampled_from(universes))
        size = draw(st.integers(min(3, len(u)), len(u)))
        start = draw(st.integers(0, len(u) - size))
        chosen = u[start : start + size]
        variables.append(VarDesc(kind, chosen, draw(st.integers(0, size - 1))))
    n = len(variables)
    maps = [i for i, v in enumerate(variables) if v.kind != "plain"]
    actions = []
    for _ in range(draw(st.integers(2, 6))):
        writes = tuple(sorted(set(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2)))))
        # An update reads what it writes (x := f(x, ...)), and maybe more.
        more = draw(st.lists(st.integers(0, n - 1), max_size=2))
        reads = tuple(sorted({writes[0], *more}))
        keyed = bool(maps) and draw(st.booleans())
        if symmetric:
            keyed = True
        actions.append(
            ActDesc(
                reads,
                writes,
                draw(st.sampled_from([4, 3, 6, 2])),
                draw(st.integers(0, 99)),
                keyed,
                draw(st.sampled_from([2, 3, 1])),
            )
        )
    # Mostly rare violations: most specs are explored far, some break at once.
    inv = (
        draw(st.integers(0, n - 1)),
        draw(st.sampled_from([300, 50, 7])),
        draw(st.integers(0, 99)),
    )
    con = None
    if draw(st.booleans()):
        con = (
            draw(st.integers(0, n - 1)),
            draw(st.sampled_from([9, 4, 20])),
            draw(st.integers(0, 99)),
        )
    return SpecDesc(
        tuple(variables),
        tuple(actions),
        inv,
        con,
        dataclass_state=not symmetric and draw(st.integers(0, 4)) == 0,
        deadlock=draw(st.booleans()),
        symmetric=symmetric,
        keys=SERVERS[:2] if symmetric else (0, 1),
    )


_built = [0]


def build(desc: SpecDesc) -> type[Spec]:
    """The Spec class a description stands for."""
    names = tuple(f"v{i}" for i in range(len(desc.variables)))
    _built[0] += 1
    tag = f"GenState{_built[0]}"
    if desc.dataclass_state:
        state_cls: Any = dataclasses.make_dataclass(tag, [(n, Any) for n in names], frozen=True)
    else:
        state_cls = NamedTuple(tag, [(n, Any) for n in names])  # type: ignore[misc]
    # Importable by name, as pickle needs (the workers exchange states).
    state_cls.__module__ = __name__
    state_cls.__qualname__ = tag
    globals()[tag] = state_cls

    def with_changes(s: Any, changes: dict[str, Any]) -> Any:
        if desc.dataclass_state:
            return dataclasses.replace(s, **changes)
        return s._replace(**changes)

    def initial_value(v: VarDesc) -> Any:
        if v.kind == "map":
            return immutables.Map(dict.fromkeys(desc.keys, v.universe[v.init]))
        if v.kind == "growing":
            return immutables.Map({0: v.universe[v.init]})
        return v.universe[v.init]

    def value_read(s: Any, i: int, key: Any) -> Any:
        v = getattr(s, names[i])
        kind = desc.variables[i].kind
        if kind == "map" and key is not None:
            return v[key]  # one entry: read alone
        if kind == "growing":
            return (len(v), v.get(0))
        return v

    def make_action(a: ActDesc) -> Any:
        def keyed(self: Any, s: Any, key: Any, choice: int) -> Any:
            return step(s, key, choice)

        def unkeyed(self: Any, s: Any, choice: int) -> Any:
            return step(s, None, choice)

        def step(s: Any, key: Any, choice: int) -> Any:
            seen = tuple(value_read(s, i, key) for i in a.reads)
            h = _hash(a.salt, seen)
            if (h + choice) % a.guard == 0:
                return None
            changes: dict[str, Any] = {}
            for j, w in enumerate(a.writes):
                var = desc.variables[w]
                new = var.universe[((h >> (7 * j + 3)) + choice * (j + 1)) % len(var.universe)]
                old = getattr(s, names[w])
                if var.kind == "map":
                    target = key if key is not None else desc.keys[(h >> 5) % len(desc.keys)]
                    changes[names[w]] = old.set(target, new)
                elif var.kind == "growing":
                    grow = len(old) < 3 and (h >> 11) % 3 == 0
                    changes[names[w]] = old.set(len(old) if grow else 0, new)
                else:
                    changes[names[w]] = new
            return with_changes(s, changes)

        return keyed if a.keyed else unkeyed

    ns: dict[str, Any] = {
        "constants": {"Keys": desc.keys},
        "check_deadlock": desc.deadlock,
        "symmetry": ("Keys",) if desc.symmetric else (),
        "init": lambda self: [state_cls(*[initial_value(v) for v in desc.variables])],
    }
    for k, a in enumerate(desc.actions):
        fn = make_action(a)
        fn.__name__ = f"A{k}"
        choices = lambda self, n=a.choices: range(n)  # noqa: E731
        ns[f"A{k}"] = action(over=("Keys", choices) if a.keyed else (choices,))(fn)

    var, mod, salt = desc.invariant

    def inv(self: Any, s: Any) -> bool:
        value = getattr(s, names[var])
        if type(value) is Pong:
            return False
        return _hash(salt, (value,)) % mod != 0

    ns["Inv"] = invariant(inv)
    if desc.constraint is not None:
        cvar, cmod, csalt = desc.constraint

        def constraint(self: Any, s: Any) -> bool:
            return _hash(csalt, (getattr(s, names[cvar]),)) % cmod != 0

        ns["constraint"] = constraint
    return type("Generated", (Spec,), ns)
