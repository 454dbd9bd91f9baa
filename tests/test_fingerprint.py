"""Fingerprints: canonical, salt-independent, incremental-equals-full."""

from __future__ import annotations

import itertools
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap, pset, pvector

from checker.model import CompiledSpec, permute, renamings
from checker.values import ModelValue, model_values
from checker.values.fingerprint import (
    StateFingerprinter,
    TermCalculator,
    encode,
    fingerprint,
    in_order,
)
from mcheck_shipped.specs.raft import Raft

S = model_values("s", 3, group="Server")


class Ping(NamedTuple):
    """A record Python takes for a Pong (or a plain pair) with the same fields."""

    a: int
    b: int


class Pong(NamedTuple):
    """See Ping."""

    a: int
    b: int


def _copy(x: Any) -> Any:
    """An equal value that is another object (an action rebuilt it)."""
    if hasattr(x, "_fields"):
        return type(x)(*x)
    # (tuple(x) of a tuple is x itself: through a list it is another object)
    return tuple(list(x)) if isinstance(x, tuple) else x  # noqa: C414


# Set members Python's == confuses: 1 and True, Ping(0, 0) and Pong(0, 0) and (0, 0).
_MEMBERS = st.one_of(
    st.integers(0, 40),
    st.booleans(),
    st.builds(Ping, st.integers(0, 3), st.integers(0, 3)),
    st.builds(Pong, st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.integers(0, 3), st.integers(0, 3)),
)
ROOT = Path(__file__).resolve().parent.parent


def test_equal_values_built_differently_have_equal_fingerprints() -> None:
    a = pmap({S[0]: 1, S[1]: 2, S[2]: 3})
    b = pmap({S[2]: 3}).set(S[0], 1).set(S[1], 2)
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(pset(["x", "y", "z"])) == fingerprint(pset(["z", "y", "x"]))
    assert fingerprint(pvector([1, 2])) != fingerprint(pvector([2, 1]))


def test_different_kinds_do_not_collide() -> None:
    assert fingerprint(pset([1, 2])) != fingerprint((1, 2))
    assert fingerprint(pmap({1: 2})) != fingerprint(pset([(1, 2)]))
    assert fingerprint(True) != fingerprint(1)
    assert fingerprint(None) != fingerprint(0)
    assert fingerprint(-1) != fingerprint(-2)  # hash(-1) == hash(-2) in CPython


def test_fingerprints_do_not_depend_on_the_hash_salt() -> None:
    code = (
        "from checker.values.fingerprint import fingerprint\n"
        "from checker.model import CompiledSpec\n"
        "from mcheck_shipped.specs.raft import Raft\n"
        "m = CompiledSpec(Raft())\n"
        "s = m.initial_states()[0]\n"
        "t = m.successors(s)[3][2]\n"
        "print(fingerprint(s), fingerprint(t), fingerprint(frozenset({'a', 'b', 'c'})))\n"
    )
    assert len(_outputs_by_hash_seed(code)) == 1


def _outputs_by_hash_seed(code: str) -> set[str]:
    """What ``code`` prints in fresh interpreters under three hash seeds."""
    return {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONHASHSEED=seed),
            cwd=ROOT,
            check=True,
        ).stdout
        for seed in ("1", "2", "12345")
    }


def test_model_values_survive_pickling_as_the_same_object() -> None:
    assert pickle.loads(pickle.dumps(S[1])) is S[1]
    assert ModelValue("s2", "Server", 1) is S[1]


@given(st.lists(st.integers(0, 2), min_size=3, max_size=3), st.integers(0, 5))
def test_incremental_fingerprint_equals_full_and_is_orbit_invariant(
    vals: list[int], seed: int
) -> None:
    rens = renamings([S])
    fpr = StateFingerprinter(2, rens)
    a = pmap(dict(zip(S, vals, strict=True)))
    b = pset(S[: seed % 3])
    parent = (a, b)
    _, fps_parent = fpr.initial(parent)
    child = (a.set(S[0], 9), b)  # only the first variable changes
    fp_child, _ = fpr.child(child, parent, fps_parent)
    assert fp_child == fpr.initial(child)[0]
    for ren in rens:
        image = (permute(child[0], ren), permute(child[1], ren))
        assert fpr.initial(image)[0] == fp_child


def test_raft_successor_fingerprints_are_orbit_invariant() -> None:
    model = CompiledSpec(Raft())
    rens = model.renamings
    fpr = StateFingerprinter(len(model.var_names) or 13, rens)
    s = model.initial_states()[0]
    frontier = [s]
    for _ in range(3):
        frontier = [t for x in frontier for _, _, t in model.successors(x)][:40]
    for t in frontier:
        fp = fpr.initial(tuple(t))[0]
        for ren in rens:
            assert fpr.initial(tuple(permute(t, ren)))[0] == fp


def test_encoding_sorts_sets_and_maps() -> None:
    assert encode(pset([3, 1, 2])) == (b"#S", 1, 2, 3)
    assert encode(frozenset([3, 1, 2])) == (b"#s", 1, 2, 3)
    s1, s2 = (b"@", "Server", "s1"), (b"@", "Server", "s2")
    assert encode(pmap({S[1]: 0, S[0]: 1})) == (b"#M", (s1, 1), (s2, 0))


def test_a_set_of_mixed_encodings_has_one_order_whatever_the_order_it_came_in() -> None:
    """Encodings A < B and B < C, but A and C not comparable: a sort by value succeeds
    or fails by the order the members came in, and so did the encoding's order."""
    a, b, c = (0, "x"), (1, 5), (0, 3)
    forms = {repr(encode(frozenset(p))) for p in itertools.permutations([a, b, c])}
    assert len(forms) == 1


class _Msg(NamedTuple):
    kind: str
    src: ModelValue
    bal: int


_MSGS = [_Msg(k, S[i], b) for k in ("1a", "1b") for i in range(3) for b in (0, 1, 10)]


def test_in_order_is_one_order_whatever_the_input_order_or_the_hash_seed() -> None:
    """Every permutation of the input and every hash seed give in_order one list (the
    over_state domains of specs depend on it)."""
    want = in_order(_MSGS)
    rnd = random.Random(7)
    for _ in range(20):
        shuffled = list(_MSGS)
        rnd.shuffle(shuffled)
        assert in_order(frozenset(shuffled)) == want
        assert in_order([*shuffled, 1, "x"], kind=_Msg) == want
    code = (
        "from tests.test_fingerprint import _MSGS\n"
        "from checker.values.fingerprint import in_order\n"
        "print(in_order(frozenset(_MSGS)))\n"
    )
    assert len(_outputs_by_hash_seed(code)) == 1


def _exact_reachable(model: CompiledSpec) -> set[object]:
    """Every reachable state, stored whole (no fingerprints): the oracle."""
    seen = set(model.initial_states())
    frontier = list(seen)
    while frontier:
        nxt = []
        for s in frontier:
            for _, _, t in model.successors(s):
                if t not in seen and model.spec.constraint(t):
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return seen


def test_no_fingerprint_collision_over_the_benchmark_corpus() -> None:
    """Distinct fingerprints equal distinct states (exact sets, no hashing of ours), and
    under symmetry distinct canonical fingerprints equal exact orbits, on Raft (2
    servers: 1,760 states) and the bench's mini-Raft (6,723).  make bench's runs
    check the same at scale: their counts equal TLC's and the plain baseline's."""
    from bench.mini_raft import MiniRaft

    for spec in (Raft(Server="2"), MiniRaft(MaxTerm=2, MaxLog=1)):
        model = CompiledSpec(spec)
        states = _exact_reachable(model)
        plain = StateFingerprinter(len(model.var_names), [{}])
        assert len({plain.initial(model.variables(s))[0] for s in states}) == len(states)
        rens = model.renamings
        canon = StateFingerprinter(len(model.var_names), rens)
        orbits = {frozenset(permute(s, r) for r in rens) for s in states}
        fps = {canon.initial(model.variables(s))[0] for s in states}
        assert len(fps) == len(orbits)
    assert len(states) == 6723


@given(
    st.lists(_MEMBERS, max_size=30),
    st.lists(st.tuples(st.sampled_from(["add", "remove", "rebuild"]), _MEMBERS), max_size=8),
    st.booleans(),
)
def test_a_set_term_updated_from_its_parent_equals_the_term_computed_afresh(
    members: list[Any], changes: list[tuple[str, Any]], as_pset: bool
) -> None:
    """The incremental term of a set (frozenset, or a pset with its shared buckets and
    its resizes) is the one computed from scratch, also where an update swaps a member
    for one Python takes as equal (True for 1, Pong(0, 0) for Ping(0, 0)) or rebuilds a
    kept member as another object."""
    build = pset if as_pset else frozenset
    old = build(members)
    new = old
    for op, x in changes:
        if op == "add":
            new = new.add(x) if as_pset else new | {x}
        elif op == "remove":
            new = new.discard(x) if as_pset else new - {x}
        else:  # the member equal to x, if any, replaced by x itself (maybe another type)
            kept = [y for y in new if y != x]
            new = build([*kept, _copy(x)])
    calc = TermCalculator([{}])
    fresh = TermCalculator([{}])
    assert calc.update(3, new, old, calc.term(3, old)) == fresh.term(3, new)
    # Twice from the same parent: the parent's members are remembered between calls.
    assert calc.update(3, new, old, calc.term(3, old)) == fresh.term(3, new)
