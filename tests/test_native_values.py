"""The C value core against its Python reference (issue 47).

:mod:`checker.values._native` must compute the fingerprint of
:mod:`checker.values.hash64` and the strict equality of :mod:`checker.values.strict`
bit for bit as the Python code does, on every kind of the value model, under
renamings, and refuse what the value model refuses with the same message.
Hypothesis draws values of every kind, nested, and pairs that Python's ``==``
conflates (``True`` and ``1``, a tuple and two record classes, a frozenset and a pset,
a Map and a pmap, a tuple and a pvector); the fingerprints must then separate exactly
what strict equality separates.  Whole specs run with ``MCHECK_PURE=1`` (the Python
core) must give the figures the C core gives, and generated specs under the Python
core must agree with the reference search, as ``make soundness`` checks at length.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import immutables
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pbag, pmap, pset, pvector

from checker.values import model_values
from checker.values.fingerprint import (
    element_term_pure,
    encode,
    entry_term_pure,
    fingerprint_pure,
    mix_pure,
    native_sort_key,
    sort_key_pure,
)
from checker.values.kinds import StateValueError
from checker.values.native import load
from checker.values.strict import strict_equal_pure
from tests.soundness.values import Level, Ping, Point, Pong, Role

ROOT = Path(__file__).resolve().parent.parent

#: The extension, set up even under MCHECK_PURE=1; never skipped: CI builds it, and
#: what is shipped is what is tested.
NATIVE: Any = load(force=True)
#: Its sort key, set up as checker.values.fingerprint sets it up.
SORT_KEY = native_sort_key(NATIVE)

S = model_values("s", 3, group="Server")
T = model_values("t", 2, group="Other")
SWAP = {S[0]: S[1], S[1]: S[0], S[2]: S[2]}
ROTATE = {S[0]: S[1], S[1]: S[2], S[2]: S[0]}


ATOMS = st.one_of(
    st.sampled_from([0, 1, 2, -1, True, False, None, "", "a", "s1", "é", "\ud800"]),
    st.sampled_from([*S, *T, Role.LEADER, Role.FOLLOWER, Level.LOW, Level.HIGH]),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.text(max_size=20),
)
HASHABLE_KEYS = st.sampled_from([0, 1, True, "k", S[0], S[1], Level.LOW, (1,), Ping(1, 1)])


def values(depth: int = 3) -> Any:
    """State values of every kind, nested ``depth`` deep."""
    if depth == 0:
        return ATOMS
    inner = values(depth - 1)
    small = st.lists(inner, max_size=4)
    return st.one_of(
        ATOMS,
        small.map(tuple),
        small.map(pvector),
        st.builds(Ping, inner, inner),
        st.builds(Pong, inner, inner),
        st.builds(Point, inner, inner),
        st.frozensets(ATOMS, max_size=4),
        st.frozensets(st.builds(Ping, ATOMS, ATOMS), max_size=3),
        st.lists(ATOMS, max_size=4).map(pset),
        st.lists(ATOMS, max_size=5).map(pbag),
        st.dictionaries(HASHABLE_KEYS, inner, max_size=4).map(immutables.Map),
        st.dictionaries(HASHABLE_KEYS, inner, max_size=4).map(pmap),
    )


def twin(v: Any) -> Any:
    """A value Python's == may take for ``v`` but that is another value: the same parts
    in another kind (or True for 1), applied at the top."""
    if type(v) is bool:
        return int(v)
    if type(v) is int and v in (0, 1):
        return bool(v)
    if type(v) is tuple:
        return pvector(v)
    if type(v) is Ping:
        return Pong(*v)
    if type(v) is Pong:
        return tuple(v)
    if type(v) is frozenset:
        return pset(v)
    if type(v) is immutables.Map:
        return pmap(dict(v.items()))
    if type(v) is type(pmap()):
        return immutables.Map(dict(v.items()))
    if type(v) is Level:
        return int(v)
    return v


@given(values())
def test_the_c_fingerprint_is_the_reference(v: Any) -> None:
    for ren in (None, {}, SWAP, ROTATE):
        assert NATIVE.fingerprint(v, ren) == fingerprint_pure(v, ren), ren
    assert NATIVE.fingerprints(v, [None, SWAP, ROTATE]) == tuple(
        fingerprint_pure(v, r) for r in (None, SWAP, ROTATE)
    )


@given(values(), values())
def test_the_c_sort_key_is_the_reference_text(a: Any, b: Any) -> None:
    # The same text, so in_order puts any values (and the twins Python's == takes
    # for them) in the reference's order.
    for v in (a, b, twin(a), (a, b), _set_of(a, b)):
        assert SORT_KEY(v) == sort_key_pure(v)


def _set_of(a: Any, b: Any) -> frozenset[Any]:
    """{a, b}, or {a} where Python cannot compare the two (a pbag raises on == with
    anything but a pbag)."""
    try:
        return frozenset({a, b})
    except TypeError:
        return frozenset({a})


@given(values(), values())
def test_the_c_equality_is_the_reference_and_fingerprints_follow_it(a: Any, b: Any) -> None:
    for x, y in ((a, b), (a, twin(a)), (twin(b), b), (a, a)):
        same = strict_equal_pure(x, y)
        assert NATIVE.strict_equal(x, y) is same
        assert NATIVE.strict_equal(y, x) is same
        assert (NATIVE.fingerprint(x) == NATIVE.fingerprint(y)) is same


@given(st.integers(0, 2**64 - 1), st.integers(0, 20000), st.integers(0, 2**66))
def test_the_c_terms_are_the_reference(f: int, position: int, g: int) -> None:
    assert NATIVE.mix(f, position) == mix_pure(f, position)
    assert NATIVE.entry_term(position, f, g) == entry_term_pure(position, f, g)
    assert NATIVE.element_term(position, g) == element_term_pure(position, g)


def battery() -> list[Any]:
    """Every container kind at sizes 0 to 20, over mixed members and nested."""
    out: list[Any] = []
    for n in range(21):
        members = [i if i % 3 else (str(i), S[i % 3]) for i in range(n)]
        out += [tuple(members), pvector(members), frozenset(members), pset(members)]
        out += [pbag(members + members[: n // 2]), Ping(tuple(members), n)]
        out += [Point(n, tuple(members))]
        pairs = {i: members[i] for i in range(n)}
        out += [immutables.Map(pairs), pmap(pairs), immutables.Map({S[0]: pmap(pairs)})]
        out += ["x" * n, "é" * n, 7**n, -(7**n) * 5**n]
    return out


def test_every_kind_at_every_size_is_the_reference() -> None:
    vals = battery()
    for v in vals:
        for ren in (None, SWAP):
            assert NATIVE.fingerprint(v, ren) == fingerprint_pure(v, ren), v
    # (the canonical encoding is injective: as many fingerprints as distinct values)
    assert len({NATIVE.fingerprint(v) for v in vals}) == len({repr(encode(v)) for v in vals})
    for a in vals[:60]:
        for b in vals[:60]:
            assert NATIVE.strict_equal(a, b) is strict_equal_pure(a, b), (a, b)
    for v in vals:
        assert SORT_KEY(v) == sort_key_pure(v), v


def small_universe() -> list[Any]:
    """Every value of a few small shapes, each once: maps from 3 keys to 3 versions and
    maps of those (gossip's views), sets and bags of small ints, tuples and records of
    small ints, swapped keys and values: what a structural hash that is symmetric
    where it must not be (key against value, item against item) conflates."""
    import itertools

    r3 = range(3)
    inner = [immutables.Map({0: a, 1: b, 2: c}) for a, b, c in itertools.product(r3, r3, r3)]
    out: list[Any] = list(inner)
    out += [immutables.Map({0: x, 1: y}) for x, y in itertools.product(inner, inner)]
    out += [pmap({a: b}) for a, b in itertools.product(range(6), range(6))]
    out += [pmap({a: b, b: a}) for a, b in itertools.product(range(6), range(6)) if a < b]
    subsets = [frozenset(c) for n in range(6) for c in itertools.combinations(range(6), n)]
    out += subsets + [pset(x) for x in subsets]
    out += [frozenset(x) for x in itertools.combinations(subsets[:20], 2)]
    out += [pbag(c) for n in range(5) for c in itertools.combinations_with_replacement(r3, n)]
    out += [t for n in range(4) for t in itertools.product(range(4), repeat=n)]
    out += [Ping(a, b) for a, b in itertools.product(range(4), range(4))]
    out += [Point(a, (b,)) for a, b in itertools.product(range(4), range(4))]
    out += [(a, (b, c)) for a, b, c in itertools.product(r3, r3, r3)]
    out += [((a, b), c) for a, b, c in itertools.product(r3, r3, r3)]
    return out


@pytest.mark.parametrize("core", ["C", "Python"])
def test_no_two_values_of_a_small_universe_share_a_fingerprint(core: str) -> None:
    vals = small_universe()
    distinct = {repr(encode(v)) for v in vals}
    assert len(distinct) == len(vals) > 1000
    fp = NATIVE.fingerprint if core == "C" else fingerprint_pure
    assert len({fp(v) for v in vals}) == len(vals)


def test_equal_values_built_apart_share_a_fingerprint() -> None:
    """Insertion order and construction history do not matter; sameness does."""
    a = pmap({S[0]: 1, S[1]: (2, S[2])})
    b = pmap({S[1]: (2, S[2])}).set(S[0], 1)
    assert NATIVE.fingerprint(a) == NATIVE.fingerprint(b)
    assert NATIVE.strict_equal(a, b)
    m = immutables.Map({i: str(i) for i in range(50)})
    n = immutables.Map({i: str(i) for i in reversed(range(50))})
    assert NATIVE.fingerprint(m) == NATIVE.fingerprint(n)
    assert NATIVE.fingerprint(frozenset(range(100))) == NATIVE.fingerprint(
        frozenset(reversed(range(100)))
    )


def test_python_equal_values_are_told_apart() -> None:
    pairs = [
        (True, 1),
        ((1, 2), Ping(1, 2)),
        (Ping(1, 2), Pong(1, 2)),
        ((1, 2), pvector([1, 2])),
        (frozenset({1}), pset([1])),
        (immutables.Map({1: 2}), pmap({1: 2})),
        (frozenset({1}), frozenset({True})),
        (immutables.Map({1: 0}), immutables.Map({True: 0})),
        (Level.LOW, 1),
        ("s1", S[0]),
        (S[0], T[0]),
        (pbag([1, 1]), pbag([1])),
        ((), frozenset()),
    ]
    for a, b in pairs:
        assert not NATIVE.strict_equal(a, b), (a, b)
        assert NATIVE.fingerprint(a) != NATIVE.fingerprint(b), (a, b)


@pytest.mark.parametrize(
    "bad", [[1], {1: 2}, {1}, 1.5, b"x", (1, [2]), frozenset({(1.0,)}), pmap({1: [2]})]
)
def test_refusals_are_the_value_models(bad: Any) -> None:
    with pytest.raises(StateValueError) as pure:
        fingerprint_pure(bad)
    with pytest.raises(StateValueError) as native:
        NATIVE.fingerprint(bad)
    assert str(native.value) == str(pure.value)
    with pytest.raises(StateValueError) as keyed:
        SORT_KEY(bad)
    assert str(keyed.value) == str(pure.value)


def test_deep_nesting_is_refused_not_crashed() -> None:
    v: Any = 0
    for _ in range(100_000):
        v = (v,)
    with pytest.raises(RecursionError):
        NATIVE.fingerprint(v)
    with pytest.raises(RecursionError):
        SORT_KEY(v)


#: Fingerprints pinned at version 3: a change here changes every checkpoint's meaning
#: and must come with a new checker.values.fingerprint.FINGERPRINT_VERSION.
PINNED = {
    "0": 12083248496977038801,
    "True": 16035396955492719091,
    "'raft'": 71249529949856855,
    "(1, (2, 3))": 5026535050963361776,
    "frozenset({1, 2})": 2302223494028201478,
    "immutables.Map({1: 'a'})": 12785699159045969930,
    "pmap({S[0]: None})": 4760827362136053499,
    "2 ** 100": 9517933216293364981,
}


@pytest.mark.parametrize("text", sorted(PINNED))
def test_fingerprints_are_pinned_and_the_same_in_every_process(text: str) -> None:
    value = eval(text)
    script = (
        "import immutables, sys\n"
        "from pyrsistent import pmap\n"
        "from checker.values import model_values\n"
        "from checker.values.fingerprint import fingerprint\n"
        "S = model_values('s', 3, group='Server')\n"
        f"print(fingerprint({text}))\n"
    )
    for pure in ("0", "1"):
        env = {**os.environ, "MCHECK_PURE": pure, "PYTHONHASHSEED": "12345"}
        out = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        assert int(out.stdout) == NATIVE.fingerprint(value) == PINNED[text], pure


def _run_json(spec: str, args: list[str], pure: bool) -> dict[str, Any]:
    env = {**os.environ, "MCHECK_PURE": "1" if pure else "0"}
    out = subprocess.run(
        [sys.executable, "-m", "checker", "run", spec, *args, "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode in (0, 12), out.stderr
    got: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return got


@pytest.mark.parametrize(
    ("spec", "args"),
    [
        ("raft", ["--const", "Server=2", "--const", "MaxTerm=2", "--const", "MaxLogLen=1"]),
        ("two_phase", ["--const", "RM=4"]),
        ("scm_install_snapshot_leader_change", ["--variant", "bug"]),
    ],
)
def test_whole_runs_agree_between_the_cores(spec: str, args: list[str]) -> None:
    native, pure = _run_json(spec, args, False), _run_json(spec, args, True)
    for key in ("result", "distinct_states", "states_generated", "depth"):
        assert native[key] == pure[key], key
    assert native.get("trace") == pure.get("trace")


def test_generated_specs_agree_with_the_reference_under_the_python_core() -> None:
    """A few of make soundness's seeds, every engine, with the Python value core."""
    env = {**os.environ, "MCHECK_PURE": "1"}
    seeds = ["--start", "7000", "--count", "8", "--jobs", "1"]
    out = subprocess.run(
        [sys.executable, "-m", "tests.soundness", *seeds],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "soundness: 8 generated specs" in out.stdout, out.stdout


def test_without_the_extension_the_python_core_runs_after_one_warning() -> None:
    """A machine where the extension did not build (import blocked here) checks all
    the same, with the same figures, saying so once."""
    script = (
        "import sys\n"
        "sys.modules['checker.values._native'] = None  # (as if it was never built)\n"
        "from checker.cli import main\n"
        "main(['run', 'two_phase', '--const', 'RM=3', '--json'])\n"
    )
    env = {**os.environ, "MCHECK_PURE": "0"}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("the C value core is not built") == 1, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert (
        got["distinct_states"]
        == _run_json("two_phase", ["--const", "RM=3"], False)["distinct_states"]
    )


#: Maps as the values of a map (a per-server map of per-peer values, as in
#: LamportMutex's network and req).
INNER_MAPS = st.dictionaries(HASHABLE_KEYS, values(1), min_size=1, max_size=4).map(immutables.Map)


@given(
    st.dictionaries(HASHABLE_KEYS, values(2), min_size=1, max_size=5),
    st.data(),
    st.sampled_from([immutables.Map, pmap]),
    st.integers(0, 40),
)
def test_the_c_map_update_is_the_term_afresh(
    d: dict[Any, Any], data: st.DataObject, kind: Any, position: int
) -> None:
    """A map variable's term updated in C from its parent's (values changed, some to
    a Python-equal twin, some to the very same value rebuilt) is the term computed
    afresh; where the keys are not the parent's very objects, C declines."""
    from checker.values.fingerprint import variable_term

    old = kind(d)
    new = old
    for k in data.draw(st.lists(st.sampled_from(sorted(d, key=repr)), max_size=3)):
        how = data.draw(st.sampled_from(["twin", "other", "rebuilt"]))
        x = old[k]
        new = new.set(k, twin(x) if how == "twin" else _copy(x) if how == "rebuilt" else (x,))
    got = NATIVE.map_update(position, new, old, variable_term(position, old))
    if got is not None:
        assert got == variable_term(position, new)
    moved = kind({**dict(new.items()), "new key": 1})
    assert NATIVE.map_update(position, moved, old, 0) is None


@given(
    st.dictionaries(HASHABLE_KEYS, INNER_MAPS, min_size=1, max_size=4),
    st.data(),
    st.sampled_from([immutables.Map, pmap]),
    st.integers(0, 40),
)
def test_the_c_map_update_of_a_map_of_maps_is_the_term_afresh(
    d: dict[Any, Any], data: st.DataObject, kind: Any, position: int
) -> None:
    """A map of maps with inner entries changed (to a Python-equal twin, to another
    value, to an equal copy, under a new key or moved to one) has, updated in C, the term computed
    afresh: the two inner maps are walked side by side, each shared entry hashed
    once, and a walk that meets other keys falls back to both fingerprints whole."""
    from checker.values.fingerprint import variable_term

    old = kind(d)
    new = old
    for k in data.draw(st.lists(st.sampled_from(sorted(d, key=repr)), min_size=1, max_size=3)):
        x = new[k]
        j = data.draw(st.sampled_from(sorted(x, key=repr)))
        how = data.draw(st.sampled_from(["twin", "other", "rebuilt", "new key", "moved", "nested"]))
        if how == "new key":
            x = x.set("new", 1)
        elif how == "moved":  # as many keys, one of them another
            x = x.delete(j).set("moved", x[j])
        elif how == "nested" and type(x[j]) is immutables.Map and len(x[j]):
            i = sorted(x[j], key=repr)[0]
            x = x.set(j, x[j].set(i, twin(x[j][i])))
        else:
            x = x.set(
                j, twin(x[j]) if how == "twin" else _copy(x[j]) if how == "rebuilt" else (x[j],)
            )
        new = new.set(k, x)
    got = NATIVE.map_update(position, new, old, variable_term(position, old))
    assert got == variable_term(position, new)


class _Drifting:
    """A key whose hash changes after it went into a map (outside the value model)."""

    def __init__(self) -> None:
        self.h = 1

    def __hash__(self) -> int:
        return self.h


def test_the_c_map_update_declines_a_key_it_cannot_look_up() -> None:
    """The side-by-side walk looks each value up by its key object; a key whose hash
    changed is not found, and the update declines (the general path then refuses the
    key by name) instead of raising a KeyError."""
    k = _Drifting()
    old = immutables.Map({k: 1, "a": 2})
    new = old.set("a", 3)
    k.h = 2
    assert NATIVE.map_update(0, new, old, 0) is None
    outer_old = immutables.Map({"m": old})
    outer_new = immutables.Map({"m": new})
    with pytest.raises(StateValueError):
        NATIVE.map_update(0, outer_new, outer_old, 0)


#: Members a frozenset can hold beside others (a pbag refuses == with other kinds).
MEMBERS = values(1).filter(lambda v: type(v) is not type(pbag([])))


@given(
    st.frozensets(MEMBERS, max_size=6),
    st.lists(MEMBERS, max_size=3),
    st.data(),
    st.integers(0, 40),
)
def test_the_c_set_update_is_the_term_afresh(
    members: frozenset[Any], extra: list[Any], data: st.DataObject, position: int
) -> None:
    """A set variable's term updated in C from its parent's (members added, members
    dropped, a member swapped for a Python-equal twin or for an equal copy) is the term
    computed afresh, and so is the calculator's; C declines only what is not two
    frozensets."""
    from checker.values.fingerprint import TermCalculator, variable_term

    old = members
    ordered = sorted(old, key=repr)
    dropped = data.draw(st.lists(st.sampled_from(ordered), max_size=3)) if ordered else []
    kept = [x for x in ordered if all(x is not d for d in dropped)]
    new = frozenset(kept + extra)
    if kept and data.draw(st.booleans()):
        k = data.draw(st.sampled_from(kept))
        swap = data.draw(st.sampled_from([twin, _copy]))(k)
        new = frozenset([x for x in kept if x is not k] + [swap] + extra)
    old_term = variable_term(position, old)
    assert NATIVE.set_update(position, new, old, old_term) == variable_term(position, new)
    # The calculator (the fast engine's wide sets, the C child loop's fallback).
    assert TermCalculator([]).update(position, new, old, old_term) == variable_term(position, new)
    assert NATIVE.set_update(position, pset(old), old, old_term) is None  # not two frozensets


def _copy(x: Any) -> Any:
    """An equal value that is another object, where Python lets one build it."""
    if type(x) is tuple:
        return tuple(list(x))  # noqa: C414
    if type(x) in (Ping, Pong):
        return type(x)(*x)
    return x


@given(st.lists(values(2), min_size=1, max_size=6), st.data())
def test_the_c_child_loop_is_the_python_one(parent: list[Any], data: st.DataObject) -> None:
    """A successor's terms computed by the C loop (``child_terms``) equal the Python
    calculator's, variable by variable, whatever changed: a value kept as the very
    object, replaced by a twin, by an equal copy or by another value of another kind,
    a map with a value or a key changed, a set gaining, losing or swapping a member."""
    from checker.values.fingerprint import StateFingerprinter, variable_term

    pvals = tuple(parent)
    fpr = StateFingerprinter(len(pvals), [])
    _, pterms = fpr.initial(pvals)
    vals = []
    for x in pvals:
        how = data.draw(st.sampled_from(["same", "twin", "rebuilt", "other", "grow"]))
        if how == "twin":
            x = twin(x)
        elif how == "rebuilt":
            x = _copy(x)
        elif how == "other":
            x = data.draw(values(1))
        elif how == "grow" and type(x) in (immutables.Map, type(pmap())) and len(x):
            k = sorted(x, key=repr)[0]
            x = x.set(k, (x[k],)) if data.draw(st.booleans()) else x.set("grown", 1)
        elif how == "grow" and type(x) is frozenset:
            # A member gained, a member lost, or a member swapped for its twin.
            x = data.draw(
                st.sampled_from(
                    [x | {"grown"}, x - set(sorted(x, key=repr)[:1]), frozenset(map(twin, x))]
                )
            )
        vals.append(x)
    got = NATIVE.child_terms(tuple(vals), pvals, pterms, fpr.calc.update)
    want = [variable_term(i, v) for i, v in enumerate(vals)]
    assert list(got[1]) == want
    assert got[0] == sum(want) & (2**64 - 1)


def _edit(m: Any, data: st.DataObject) -> Any:
    """m with one entry changed somewhere down its maps: to a twin, another value, an
    equal copy, a nested change, or (once in a while) a key added or moved."""
    if type(m) is not immutables.Map or not len(m):
        return data.draw(st.sampled_from([twin(m), _copy(m), (m,)]))
    k = data.draw(st.sampled_from(sorted(m, key=repr)))
    how = data.draw(st.sampled_from(["down", "down", "down", "new key", "moved"]))
    if how == "new key":
        return m.set("new", 1)
    if how == "moved":
        return m.delete(k).set("moved", m[k])
    return m.set(k, _edit(m[k], data))


NESTED = st.recursive(
    values(1),
    lambda inner: st.dictionaries(HASHABLE_KEYS, inner, min_size=1, max_size=4).map(immutables.Map),
    max_leaves=12,
)


@given(st.lists(NESTED, min_size=1, max_size=4), st.data())
def test_the_c_candidate_loop_fingerprints_the_parent_once_for_all_its_successors(
    parent: list[Any], data: st.DataObject
) -> None:
    """``child_candidates`` keeps the parent's side of every comparison (its maps'
    entries and fingerprints) for all of the parent's successors: several successors
    of one parent, each changing its maps at any depth (to a twin, another value, an
    equal copy, a key added or moved), each get the terms and fingerprint computed
    afresh, whichever successor walked a shared map first."""
    from checker.values.fingerprint import StateFingerprinter, variable_term

    pvals = tuple(parent)
    fpr = StateFingerprinter(len(pvals), [])
    _, pterms = fpr.initial(pvals)
    succ = []
    for a in range(data.draw(st.integers(1, 6))):
        vals = list(pvals)
        for i in data.draw(st.lists(st.integers(0, len(pvals) - 1), max_size=3)):
            vals[i] = _edit(vals[i], data)
        succ.append((a, (), tuple(vals)))
    actions, cands, outside = NATIVE.child_candidates(succ, pvals, pterms, fpr.calc.update)
    assert actions == [a for a, _, _ in succ] and outside == []
    for (_, _, vals), (k, _, _, handle, fp) in zip(succ, cands, strict=True):
        want = [variable_term(i, v) for i, v in enumerate(vals)]
        assert list(handle[2]) == want, k
        assert fp == sum(want) & (2**64 - 1)


def test_the_c_candidate_loop_past_its_memo_s_capacity() -> None:
    """A parent with more maps and tuples than the per-call memo holds (256): what
    does not fit is walked each time, and the terms are still the terms afresh."""
    from checker.values.fingerprint import StateFingerprinter, variable_term

    wide = immutables.Map({i: immutables.Map({0: (i,), 1: (i, i)}) for i in range(400)})
    other = immutables.Map({i: (i, "x") for i in range(300)})
    pvals = (wide, other)
    fpr = StateFingerprinter(2, [])
    _, pterms = fpr.initial(pvals)
    succ = []
    for j in range(0, 400, 7):
        # Every inner map of the first variable changed (fills the memo), then the
        # second variable's map, met with the memo full.
        changed = immutables.Map({i: wide[i].set(0, (i, j)) for i in wide})
        succ.append((j, (), (changed, other.set(j % 300, ("y",)))))
    _, cands, _ = NATIVE.child_candidates(succ, pvals, pterms, fpr.calc.update)
    for (_, _, vals), cand in zip(succ, cands, strict=True):
        want = [variable_term(i, v) for i, v in enumerate(vals)]
        assert list(cand[3][2]) == want
        assert cand[4] == sum(want) & (2**64 - 1)


class _Pair(NamedTuple):
    """A two-variable state."""

    a: Any
    b: Any


class _Indexed(NamedTuple):
    """A state whose indexing is its own, not the tuple's."""

    a: Any
    b: Any

    def __getitem__(self, i: Any) -> Any:
        return "indexed"


def test_the_c_child_loop_takes_a_namedtuple_state_as_its_values() -> None:
    """The expansion hands a NamedTuple state to the C loop as its own tuple of
    variables (not copied per successor): the terms are those of its values; a state
    class that indexes otherwise than a tuple is read by iterating it, as before."""
    from checker.values.fingerprint import StateFingerprinter, variable_term

    fpr = StateFingerprinter(2, [])
    parent = _Pair(1, ("x",))
    _, pterms = fpr.initial(tuple(parent))
    for child in (_Pair(1, ("y",)), _Pair(2, parent.b), _Indexed(1, ("y",))):
        got = NATIVE.child_terms(child, parent, pterms, fpr.calc.update)
        want = [variable_term(i, v) for i, v in enumerate(tuple(child))]
        assert list(got[1]) == want
        assert got == NATIVE.child_terms(tuple(child), tuple(parent), pterms, fpr.calc.update)
    # Read in place: a class statement gives every tuple subclass a generic sq_item
    # (tuple's __getitem__ wraps mp_subscript), so the test is by what its MRO finds.
    assert NATIVE.tuple_view(parent) is parent
    indexed = _Indexed(1, ("y",))
    assert NATIVE.tuple_view(indexed) is not indexed
    assert type(NATIVE.tuple_view(indexed)) is tuple
    assert NATIVE.tuple_view(indexed) == (1, ("y",))


class _Odd(Exception):
    """An action's own error."""


def _loops_agree(model: Any, state: Any) -> Any:
    """The C successor loop and the Python one on one state: the same successors (the
    very objects' values, in order), or the same error, cause and message."""
    from checker.base.errors import EvaluationError

    def outcome(fn: Any) -> Any:
        try:
            return ("ok", fn(model._plans, state))
        except EvaluationError as exc:
            return ("error", str(exc), type(exc.__cause__), str(exc.__cause__))

    in_c = outcome(lambda plans, s: model._successors_of(plans, s))
    in_py = outcome(model._successors_in_python)
    assert in_c[0] == in_py[0]
    if in_c[0] == "ok":
        assert [(a, p) for a, p, _ in in_c[1]] == [(a, p) for a, p, _ in in_py[1]]
        assert all(
            strict_equal_pure(x, y) for (*_, x), (*_, y) in zip(in_c[1], in_py[1], strict=True)
        )
    else:
        assert in_c == in_py
    return in_c


@pytest.mark.parametrize(
    ("spec", "consts"),
    [("two_phase", {}), ("lamport_mutex", {"N": 2}), ("raft", {}), ("etcd_raft", {})],
)
def test_the_c_successor_loop_is_the_python_one(spec: str, consts: dict[str, Any]) -> None:
    """On the first reachable states of specs of several styles (static families,
    state-drawn ``over_state`` domains, guards and effects), the C loop calls the same
    actions with the same parameters and returns the same successors in order."""
    from checker.authoring.loader import load_spec_class
    from checker.model.compiled import _SUCCESSORS, CompiledSpec

    assert _SUCCESSORS is not None
    model = CompiledSpec(load_spec_class(spec)(**consts))
    frontier, seen = list(model.initial_states()), 0
    while frontier and seen < 300:
        state = frontier.pop(0)
        seen += 1
        frontier.extend(t for _, _, t in _loops_agree(model, state)[1])


def test_the_c_successor_loop_reports_what_the_python_one_does() -> None:
    """An action that raises, one that returns another type, one whose guard's truth
    raises: the same error, with the same cause; KeyboardInterrupt and MemoryError pass
    through unwrapped, as the Python loop lets them."""
    from typing import NamedTuple

    from checker import Spec, action
    from checker.model.compiled import CompiledSpec

    class S(NamedTuple):
        n: int

    class Bad:
        def __bool__(self) -> bool:
            raise _Odd("no truth")

    class Toy(Spec):
        constants = {"How": "raise"}
        How: str

        def init(self) -> list[S]:
            return [S(0)]

        @action(over=lambda self: [1, 2, 3])
        def Step(self, s: S, k: int) -> Any:
            if k < 2:
                return S(s.n + k)
            if self.How == "raise":
                raise _Odd(f"k={k}")
            if self.How == "wrong":
                return (s.n,)
            if self.How == "truth":
                return S(s.n) if Bad() else None
            raise {"interrupt": KeyboardInterrupt, "memory": MemoryError}[self.How]()

    for how in ("raise", "wrong", "truth"):
        model = CompiledSpec(Toy(How=how))
        model.initial_states()  # (which fixes the state type)
        got = _loops_agree(model, S(0))
        assert got[0] == "error" and "Step(2)" in got[1], got
    for how, exc in (("interrupt", KeyboardInterrupt), ("memory", MemoryError)):
        model = CompiledSpec(Toy(How=how))
        model.initial_states()
        with pytest.raises(exc):
            model._successors_of(model._plans, S(0))


@given(
    st.one_of(
        st.dictionaries(HASHABLE_KEYS, values(1), max_size=5).map(immutables.Map),
        st.dictionaries(HASHABLE_KEYS, values(1), max_size=5).map(pmap),
        st.frozensets(st.one_of(ATOMS, st.builds(Ping, ATOMS, ATOMS)), max_size=5),
        st.lists(ATOMS, max_size=5).map(pset),
        values(1),
    ),
    st.data(),
    st.integers(0, 40),
)
def test_the_c_lanes_are_the_python_ones(old: Any, data: st.DataObject, position: int) -> None:
    """Under symmetry a variable's term is a packed vector, a lane per renaming: the C
    core's (afresh, and updated from the parent's by what changed) has in every lane
    the term of the value renamed, as the Python calculator's lanes do."""
    import checker.values.fingerprint as fpm
    from checker.values.fingerprint import TermCalculator, variable_term

    if type(old) in (immutables.Map, type(pmap())) and len(old):
        k = data.draw(st.sampled_from(sorted(old, key=repr)))
        new = old.set(k, data.draw(values(1))).set(S[1], 0)
    elif type(old) in (frozenset, type(pset())):
        new = (old | {S[0], ("new",)}) - set(list(old)[:1])
    else:
        new = data.draw(values(1))
    rens = [{}, SWAP, ROTATE]
    calc = TermCalculator(rens)
    assert calc.lanes is not None
    in_c = calc.term(position, old), calc.update(position, new, old, calc.term(position, old))
    native, fpm._NATIVE = fpm._NATIVE, None
    try:
        in_py = calc.term(position, old), calc.update(position, new, old, calc.term(position, old))
    finally:
        fpm._NATIVE = native
    assert in_c == in_py
    want = [variable_term(position, new, r or None) for r in rens]
    assert list(calc.lanes.split(in_c[1])) == want
