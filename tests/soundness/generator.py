"""Random specs, written as source a user could have written, to tell engines apart.

:func:`generate` draws a spec (from Hypothesis or from a seeded ``random.Random``, through
:class:`Draw`) and returns its module source.  The specs are small transition systems
over values Python conflates (tests/soundness/values.py), written in the many ways spec
code reads and writes a state, each of which an engine that does not see the spec as
the plain engine does could get wrong:

* reads: a field, ``getattr``, indexing the state, ``tuple.__getitem__`` around the
  fields, a helper method, a module function, a local alias of the state or of a map,
  a map's entry by ``[]``, ``get``, a helper or an alias, the map handed to a builtin,
  its keys, its size, membership, its type;
* tests of kind: ``type(x) is ...``, ``isinstance`` against the value kinds, ``==``
  (which says ``True == 1``), on values and on the state itself;
* writes: ``_replace`` (or ``dataclasses.replace``), a dict of changes splatted into
  it, a helper that does it, the constructor; a map entry by ``put`` or ``set``, a
  key that is ``True`` where the map has ``1``, a key the map did not have, the map
  rebuilt as another kind;
* values that appear late: a counter runs first (the caches warm on its states and
  every other action is evaluated, mostly disabled), then a value no state held
  before is written and the rest of the spec comes to life;
* state constraints, invariants that test kinds, deadlock on or off, NamedTuple or
  frozen dataclass states, and symmetric specs (servers as keys of a map, read only
  through their own entry).

Every action is a deterministic, type-strict function of what it reads (it hashes
what it read with :func:`tests.soundness.values.digest`), so every engine must find
the same states.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from tests.soundness.values import SYMMETRIC_UNIVERSES, UNIVERSES

T = TypeVar("T")


class Draw(Protocol):
    """Where the generator's choices come from."""

    def integer(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        ...


class RandomDraw:
    """Choices from a seeded ``random.Random`` (``make soundness``)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        return options[self.rng.randrange(len(options))]


class HypothesisDraw:
    """Choices drawn by Hypothesis (``st.data()``), so failures shrink."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data = data
        self.st = st

    def integer(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""
        return int(self.data.draw(self.st.integers(lo, hi)))

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        return options[self.data.draw(self.st.integers(0, len(options) - 1))]


@dataclass
class Generated:
    """A generated spec: its source, and what the checks need to know."""

    source: str
    symmetric: bool
    notes: list[str] = field(default_factory=list)


#: Tests of a value's kind (``{}`` is the value's expression), each true for some
#: values of the universes and false for others.
KIND_TESTS = (
    "type({}) is tuple",
    "isinstance({}, frozenset)",
    "isinstance({}, PSet)",
    "type({}) is Pong",
    "isinstance({}, Ping)",
    "{} is True",
    "loose_eq({}, 1)",
    "type({}) is int",
    "isinstance({}, int)",
    "isinstance({}, PMap)",
    "type({}) is immutables.Map",
    "isinstance({}, enum.Enum)",
    "{} is None",
    "isinstance({}, str)",
    "type({}) is PVector",
    "isinstance({}, PBag)",
    "dataclasses.is_dataclass({})",
)


class _Spec:
    """The spec being written."""

    def __init__(self, d: Draw) -> None:
        self.d = d
        self.symmetric = d.integer(0, 4) == 0
        self.dataclass_state = not self.symmetric and d.integer(0, 4) == 0
        self.late = d.choice([0, 0, 0, 25, 120, 400]) if d.integer(0, 2) else 0
        nplain = d.integer(2, 3)
        pool = SYMMETRIC_UNIVERSES if self.symmetric else tuple(range(len(UNIVERSES)))
        self.plain: list[tuple[int, list[int], int]] = []  # (universe, indices, init)
        for _ in range(nplain):
            u = d.choice(pool)
            size = len(UNIVERSES[u])
            k = d.integer(min(3, size), size)
            start = d.integer(0, size - k)
            idx = list(range(start, start + k))
            self.plain.append((u, idx, d.integer(0, k - 1)))
        self.has_map = self.symmetric or d.integer(0, 2) > 0
        self.map_kind = d.choice(["immutables.Map", "pmap"])
        self.map_universe = d.choice(pool)
        mu = len(UNIVERSES[self.map_universe])
        self.map_values = list(range(min(4, mu)))
        self.keys = "SERVERS[:2]" if self.symmetric else d.choice(["(0, 1)", "(1, 2)", '("a", 1)'])
        self.key_values: list[Any] = (
            []
            if self.symmetric
            else {"(0, 1)": [0, 1], "(1, 2)": [1, 2], '("a", 1)': ["a", 1]}[self.keys]
        )
        self.fields = [f"v{i}" for i in range(nplain)] + (["m"] if self.has_map else [])
        if self.late:
            self.fields = ["n", *self.fields]
        self.helpers_used: set[str] = set()

    def index_of(self, name: str) -> int:
        return self.fields.index(name)


def _value(spec: _Spec, var: int, h: str, shift: int) -> str:
    """An expression choosing one of plain variable ``var``'s values by ``h``."""
    u, idx, _ = spec.plain[var]
    return f"U[{u}][{idx[0]} + ({h} >> {shift}) % {len(idx)}]"


def _map_value(spec: _Spec, h: str, shift: int) -> str:
    return f"U[{spec.map_universe}][({h} >> {shift}) % {len(spec.map_values)}]"


def _read_plain(spec: _Spec, var: int, state: str = "s") -> str:
    """An expression reading plain variable ``var`` in one of the ways code does."""
    d = spec.d
    name = f"v{var}"
    pos = spec.index_of(name)
    styles = ["field", "field", "getattr", "helper", "module"]
    if not spec.dataclass_state:
        styles += ["index", "around"]
    style = d.choice(styles)
    if style == "field":
        return f"{state}.{name}"
    if style == "getattr":
        return f'getattr({state}, "{name}")'
    if style == "helper":
        spec.helpers_used.add(name)
        return f"self._get_{name}({state})"
    if style == "module":
        return f'field_of({state}, "{name}")'
    if style == "index":
        return f"{state}[{pos}]"
    return f"tuple.__getitem__({state}, {pos})"


def _read_entry(spec: _Spec, key: str) -> str:
    """An expression reading the map's entry for ``key``."""
    styles = ["index", "index", "get", "module", "helper", "alias"]
    style = spec.d.choice(styles)
    if style == "index":
        return f"s.m[{key}]"
    if style == "get":
        return f"s.m.get({key})"
    if style == "module":
        return f"entry_of(s.m, {key})"
    if style == "helper":
        return f"self._look(s, {key})"
    return f"(lambda mm: mm[{key}])(s.m)"


def _read_map_whole(spec: _Spec) -> str:
    """An expression reading the map as a whole (order-free), or its keys, size or kind."""
    return spec.d.choice(
        [
            "len(s.m)",
            "frozenset(map(repr, s.m.keys()))",
            "sorted(map(repr, s.m.values()))",
            "type(s.m).__name__",
            "isinstance(s.m, PMap)",
            "sorted(repr(kv) for kv in s.m.items())",
            "dict(s.m) == {}",
        ]
    )


def _action(spec: _Spec, k: int) -> tuple[str, str]:
    """(decorator, function) of one random action."""
    d = spec.d
    keyed = spec.has_map and (spec.symmetric or d.integer(0, 1) == 1)
    choices = d.choice([1, 1, 2])
    salt = d.integer(0, 10**6)
    lines: list[str] = []
    reads: list[str] = []
    nplain = len(spec.plain)
    for j in range(d.integer(1, 3)):
        what = d.integer(0, 5)
        if spec.has_map and what >= 4:
            if keyed:
                expr = _read_entry(spec, "k")
            elif spec.symmetric:
                continue
            else:
                key = repr(d.choice(spec.key_values))
                expr = _read_entry(spec, key) if d.integer(0, 2) else _read_map_whole(spec)
        elif what == 3 and not spec.symmetric and d.integer(0, 3) == 0:
            expr = d.choice(["type(s) is S", "isinstance(s, S)", "len(s)"])
        else:
            expr = _read_plain(spec, d.integer(0, nplain - 1))
        lines.append(f"r{j} = {expr}")
        reads.append(f"r{j}")
    if not reads:
        lines.append(f"r0 = {_read_plain(spec, 0)}")
        reads.append("r0")
    # A gate on the kind of something: of a value read, or of the state's own fields,
    # its map or the state itself, tested directly and short-circuited with another
    # condition (a guard false in both engines' first evaluation, for different
    # reasons, is the case that once cached "disabled" for ever).
    if d.integer(0, 2):
        subjects = [reads[0], reads[0], f"s.v{d.integer(0, nplain - 1)}"]
        if spec.has_map and not spec.symmetric:
            subjects.append("s.m")
        if spec.has_map and keyed:
            subjects.append("s.m[k]")
        subject = d.choice(subjects)
        tests = [t.format(subject) for t in KIND_TESTS]
        if not spec.symmetric:
            tests += ["type(s) is S", "isinstance(s, S)", "type(s).__name__ == 'S'"]
        test = d.choice(tests)
        more = d.choice(["", f" and {reads[-1]} is not None", f" and digest({salt}, r0) % 3 != 1"])
        negate = "not " if d.integer(0, 1) else ""
        lines.append(f"if {negate}({test}{more}):")
        lines.append("    return None")
    if spec.late:
        # Disabled while the counter runs: an action whose gate is already false then
        # never reads n, and its cached "disabled" must not outlive the late value.
        lines.append(f"if s.n < {spec.late}:")
        lines.append("    return None")
    args = ", ".join(reads)
    lines.append(f"h = digest({salt}, {args}, choice)")
    lines.append(f"if h % {d.choice([2, 3, 4, 6])} == 0:")
    lines.append("    return None")
    # The writes.
    writes: dict[str, str] = {}
    for j in range(d.integer(1, 2)):
        if spec.has_map and d.integer(0, 2) == 0:
            if keyed:
                key = "k"
            elif spec.symmetric:
                continue
            else:
                key = repr(d.choice(spec.key_values))
            value = _map_value(spec, "h", 3 + 5 * j)
            style = d.choice(["put", "put", "set", "true_key", "new_key", "kind", "copy"])
            if spec.symmetric and style in ("true_key", "new_key", "kind"):
                style = "put"
            if style == "put":
                writes["m"] = f"put(s.m, {key}, {value})"
            elif style == "set":
                writes["m"] = f"s.m.set({key}, {value})"
            elif style == "true_key" and 1 in spec.key_values:
                writes["m"] = (
                    f"(s.m.set(True, {value}) if h % 5 == 1 else put(s.m, {key}, {value}))"
                )
            elif style == "new_key":
                writes["m"] = f"(s.m.set(7, {value}) if h % 11 == 1 else s.m.set({key}, {value}))"
            elif style == "kind":
                other = "immutables.Map" if spec.map_kind == "pmap" else "pmap"
                writes["m"] = f"({other}(dict(s.m.items())) if h % 7 == 1 else s.m)"
            else:
                writes["m"] = "s.m"
        else:
            var = d.integer(0, nplain - 1)
            if d.integer(0, 4) == 0:
                writes[f"v{var}"] = reads[d.integer(0, len(reads) - 1)]  # a value read, written
            else:
                writes[f"v{var}"] = _value(spec, var, "h", 3 + 5 * j)
    if not writes:
        writes["v0"] = _value(spec, 0, "h", 3)
    lines += _return(spec, writes)
    params = "self, s, k, choice" if keyed else "self, s, choice"
    over = f'("Keys", CHOICES{choices})' if keyed else f"(CHOICES{choices},)"
    body = "\n".join("        " + ln for ln in lines)
    func = f"    def A{k}({params}):\n{body}\n"
    return f"    @action(over={over})\n", func


def _return(spec: _Spec, writes: dict[str, str]) -> list[str]:
    """Statements returning the state with ``writes``, in one of the ways code does."""
    d = spec.d
    kw = ", ".join(f"{n}={e}" for n, e in writes.items())
    styles = ["replace", "replace", "changes", "helper", "construct"]
    style = d.choice(styles)
    replace = "dataclasses.replace(s, " if spec.dataclass_state else "s._replace("
    if style == "replace":
        return [f"return {replace}{kw})"]
    if style == "changes":
        out = ["changes = {}"]
        out += [f'changes["{n}"] = {e}' for n, e in writes.items()]
        return [*out, f"return {replace}**changes)"]
    if style == "helper":
        spec.helpers_used.add("_next")
        return [f"return self._next(s, {kw})"]
    parts = ", ".join(f"{n}={writes.get(n, 's.' + n)}" for n in spec.fields)
    return [f"return S({parts})"]


def generate(d: Draw) -> Generated:
    """A random spec's source (see the module docstring)."""
    spec = _Spec(d)
    nplain = len(spec.plain)
    out: list[str] = [
        '"""A generated spec (tests/soundness/generator.py)."""',
        "",
        "import dataclasses",
        "import enum",
        "from typing import Any, NamedTuple",
        "",
        "import immutables",
        "from pyrsistent import PBag, PMap, PSet, PVector, pmap",
        "",
        "from checker import Spec, action, invariant",
        "from checker.values import put",
        "from tests.soundness.values import (",
        "    SERVERS, UNIVERSES as U, Ping, Pong, digest, multiset_digest,",
        ")",
        "",
        "CHOICES1 = lambda self: range(1)  # noqa: E731",
        "CHOICES2 = lambda self: range(2)  # noqa: E731",
        "",
    ]
    if spec.dataclass_state:
        out += ["@dataclasses.dataclass(frozen=True)", "class S:"]
    else:
        out += ["class S(NamedTuple):"]
    out += [f"    {f}: Any" for f in spec.fields]
    out += [
        "",
        "",
        "def field_of(s, name):",
        "    return getattr(s, name)",
        "",
        "",
        "def entry_of(m, k):",
        "    return m[k]",
        "",
        "",
        "def loose_eq(a, b):",
        "    try:",
        "        return a == b  # Python's ==, which says True == 1",
        "    except TypeError:  # (a pbag refuses == with anything else)",
        "        return False",
        "",
        "",
        "class Generated(Spec):",
        f"    constants = {{'Keys': {spec.keys}}}",
        f"    check_deadlock = {bool(d.integer(0, 1))}",
    ]
    if spec.symmetric:
        out.append("    symmetry = ('Keys',)")
    init_parts = []
    for f in spec.fields:
        if f == "n":
            init_parts.append("n=0")
        elif f == "m":
            init_parts.append(
                f"m={spec.map_kind}(dict.fromkeys(self.Keys, U[{spec.map_universe}][0]))"
            )
        else:
            u, idx, init = spec.plain[int(f[1:])]
            init_parts.append(f"{f}=U[{u}][{idx[init]}]")
    out += ["", "    def init(self):", f"        return [S({', '.join(init_parts)})]", ""]
    out += ["    def _look(self, s, k):", "        alias = s.m", "        return alias[k]", ""]
    out += ["    def _next(self, s, **kw):"]
    out += (
        ["        return dataclasses.replace(s, **kw)", ""]
        if spec.dataclass_state
        else ["        return s._replace(**kw)", ""]
    )
    for i in range(nplain):
        out += [
            f"    def _get_v{i}(self, s):",
            "        alias = s",
            f"        return alias.v{i}",
            "",
        ]
    if spec.late:
        # The counter, then one value no state held before, written into one variable.
        var = d.integer(0, nplain - 1)
        u, idx, init = spec.plain[var]
        fresh = [i for i in range(len(UNIVERSES[u])) if i != idx[init]]
        late_value = f"U[{u}][{d.choice(fresh)}]"
        out += [
            "    @action",
            "    def Tick(self, s):",
            f"        if s.n >= {spec.late}:",
            "            return None",
            f"        if s.n == {spec.late - 1}:",
            f"            return self._next(s, n=s.n + 1, v{var}={late_value})",
            "        return self._next(s, n=s.n + 1)",
            "",
        ]
    for k in range(d.integer(2, 5)):
        deco, func = _action(spec, k)
        out += [deco.rstrip("\n"), func]
    out += _predicates(spec)
    return Generated("\n".join(out) + "\n", spec.symmetric)


def _predicates(spec: _Spec) -> list[str]:
    """The invariant (and maybe a constraint): type-sensitive, rarely violated."""
    d = spec.d
    nplain = len(spec.plain)
    var = d.integer(0, nplain - 1)
    read = _read_plain(spec, var)
    test = d.choice(KIND_TESTS).format("x")
    salt = d.integer(0, 10**6)
    mod = d.choice([500, 60, 9])
    lines = [
        "    @invariant",
        "    def Inv(self, s):",
        f"        x = {read}",
        f"        if ({test}) and digest({salt}, x) % {d.choice([2, 3, 5])} == 0:",
        "            return False",
    ]
    if spec.has_map:
        if spec.symmetric:
            lines.append(f"        return multiset_digest({salt}, s.m) % {mod} != 0")
        else:
            lines.append(f"        return digest({salt}, x, s.m) % {mod} != 0")
    else:
        lines.append(f"        return digest({salt}, x) % {mod} != 0")
    out = [*lines, ""]
    if d.integer(0, 2) == 0:
        cvar = d.integer(0, nplain - 1)
        csalt, cmod = d.integer(0, 10**6), d.choice([9, 4, 20])
        out += [
            "    def constraint(self, s):",
            f"        return digest({csalt}, s.v{cvar}) % {cmod} != 0",
            "",
        ]
    return out
