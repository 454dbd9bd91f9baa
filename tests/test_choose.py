"""choose(): TLA+'s CHOOSE in TLC's order of values, whatever order the set iterates in."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker import choose, model_values
from checker.base.errors import SpecError

P = model_values("p", 4, group="Proc")


def test_integers_booleans_and_model_values() -> None:
    assert choose(frozenset({5, 3, 9})) == 3
    assert choose({5, 3, 9}, lambda x: x > 3) == 5
    assert choose(frozenset({True, False})) is False
    assert choose(frozenset(reversed(P))) is P[0]
    assert choose(frozenset(P), lambda p: p is not P[0]) is P[1]


def test_sequences_and_sets_are_shorter_first() -> None:
    assert choose([(2,), (1, 1), (3,)]) == (2,)
    assert choose([frozenset({1, 2}), frozenset({9}), frozenset({3})]) == frozenset({3})
    assert choose([frozenset({1, 3}), frozenset({1, 2})]) == frozenset({1, 2})


def test_no_candidate_and_mixed_kinds_are_the_specs_errors() -> None:
    with pytest.raises(SpecError, match="no element"):
        choose({1, 2}, lambda x: x > 5)
    with pytest.raises(SpecError, match="different kinds"):
        choose([1, "a"])


@given(st.lists(st.integers(-50, 50), min_size=1, unique=True), st.randoms())
def test_the_choice_does_not_depend_on_the_iteration_order(xs: list[int], rnd: Any) -> None:
    shuffled = list(xs)
    rnd.shuffle(shuffled)
    assert choose(shuffled) == choose(frozenset(xs)) == min(xs)
    if any(x % 3 == 0 for x in xs):
        assert choose(shuffled, lambda x: x % 3 == 0) == min(x for x in xs if x % 3 == 0)
