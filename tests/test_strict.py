"""checker.values.strict.strict_equal against a reference: the same type at every level.

The reference turns a value into a nested tuple that names each level's type and
orders set members and map entries by their own reference form, so two values get
the same form exactly when TLA+ says they are the same value (and their Python
classes agree).  Hypothesis draws pairs that are often equal in Python but not
strictly (True and 1, a tuple and a record, maps whose values differ in type only),
including the shapes the fast paths inside strict_equal take (records of atoms, maps
whose keys are the very same objects)."""

from __future__ import annotations

from typing import Any, NamedTuple

import immutables
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap, pvector

from checker.values.strict import strict_equal


class P(NamedTuple):
    a: Any
    b: Any


class Q(NamedTuple):
    a: Any
    b: Any


def form(v: Any) -> Any:
    """The reference form: type name and, below it, the parts' forms."""
    t = type(v)
    if isinstance(v, (immutables.Map, type(pmap()))):
        return (t.__name__, tuple(sorted(((form(k), form(x)) for k, x in v.items()), key=repr)))
    if isinstance(v, frozenset):
        return (t.__name__, tuple(sorted((form(x) for x in v), key=repr)))
    if isinstance(v, tuple | type(pvector())):
        return (t.__name__, tuple(form(x) for x in v))
    return (t.__name__, v)


ATOMS = st.sampled_from([0, 1, 2, True, False, "a", None])
KEYS = [0, 1, True, "k"]


def values(depth: int = 2) -> Any:
    if depth == 0:
        return ATOMS
    inner = values(depth - 1)
    return st.one_of(
        ATOMS,
        st.tuples(inner, inner),
        st.builds(P, inner, inner),
        st.builds(Q, inner, inner),
        st.lists(inner, max_size=3).map(tuple),
        st.lists(inner, max_size=3).map(pvector),
        st.frozensets(ATOMS, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=3).map(immutables.Map),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=3).map(pmap),
    )


@given(values(), values())
def test_strict_equal_is_sameness_at_every_level(a: Any, b: Any) -> None:
    assert strict_equal(a, b) == (form(a) == form(b))


@given(st.dictionaries(st.sampled_from(KEYS), ATOMS, min_size=1), st.data())
def test_maps_with_the_very_same_keys(d: dict[Any, Any], data: st.DataObject) -> None:
    # Both maps built from one key list: the inline path (same key objects) is taken.
    keys = list(d)
    other = [data.draw(ATOMS) for _ in keys]
    for make in (immutables.Map, pmap):
        a = make(dict(zip(keys, d.values(), strict=True)))
        b = make(dict(zip(keys, other, strict=True)))
        assert strict_equal(a, b) == (form(a) == form(b))


def test_python_equal_is_not_enough() -> None:
    assert not strict_equal(P(0, 0), Q(0, 0))
    assert not strict_equal((0, 0), P(0, 0))
    assert not strict_equal((True,), (1,))
    assert not strict_equal(immutables.Map({0: True}), immutables.Map({0: 1}))
    assert not strict_equal(immutables.Map({True: 0}), immutables.Map({1: 0}))
    assert strict_equal(P(1, "a"), P(1, "a"))
