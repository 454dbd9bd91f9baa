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
from typing import Any

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
)
from checker.values.kinds import StateValueError
from checker.values.native import load
from checker.values.strict import strict_equal_pure
from tests.soundness.values import Level, Ping, Point, Pong, Role

ROOT = Path(__file__).resolve().parent.parent

#: The extension, set up even under MCHECK_PURE=1; never skipped: CI builds it, and
#: what is shipped is what is tested.
NATIVE: Any = load(force=True)

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


def test_deep_nesting_is_refused_not_crashed() -> None:
    v: Any = 0
    for _ in range(100_000):
        v = (v,)
    with pytest.raises(RecursionError):
        NATIVE.fingerprint(v)


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


@given(
    st.dictionaries(HASHABLE_KEYS, values(1), min_size=1, max_size=5),
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


def _copy(x: Any) -> Any:
    """An equal value that is another object, where Python lets one build it."""
    if type(x) is tuple:
        return tuple(list(x))  # noqa: C414
    if type(x) in (Ping, Pong):
        return type(x)(*x)
    return x
