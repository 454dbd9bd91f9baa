"""The expansion's per-successor loop in C (``child_candidates``) gives exactly the
candidates the Python loop gives, on real models; where a successor's value is not
one the value model takes, the Python loop runs again and names it."""

from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple

import pytest

from checker import Options, Spec, action, action_property, check_spec, invariant
from checker.authoring.loader import load_spec_class
from checker.base.errors import SpecError
from checker.explore.expansion import MUTATION_CHECKS, Expansion
from checker.explore.result import Verdict
from checker.model import CompiledSpec
from checker.values.native import NATIVE
from checker.values.strict import strict_equal

pytestmark = pytest.mark.skipif(NATIVE is None, reason="the C core is not built here")

MODELS = [
    ("bench.go_back_n", {"Messages": "4", "Window": "2"}),  # tuples that grow and shrink
    ("bench.gossip", {}),  # maps of maps: the side-by-side walk
    ("bench.commit_timeouts", {"RMs": "3"}),  # records in a pset: the Python calculator
    ("scm_new_leader_dn_server_start", {}),  # a seed spec: pyrsistent maps and vectors
    ("multipaxos", {}),  # a TLA+ Examples port: sets of message records
]


def _states(exp: Expansion, n: int) -> list[Any]:
    """The first n handles of a breadth-first run."""
    q = deque(exp.handle_of(s) for s in exp.model.initial_states())
    seen = {exp.fp_of(h) for h in q}
    out = []
    while q and len(out) < n:
        h = q.popleft()
        out.append(h)
        for c in exp.expand(0, h)[1]:
            if c[4] is not None and c[4] not in seen:
                seen.add(c[4])
                q.append(c[3])
    return out


@pytest.mark.parametrize(("spec", "consts"), MODELS, ids=[m[0] for m in MODELS])
def test_the_c_candidate_loop_is_the_python_one(spec: str, consts: dict[str, str]) -> None:
    model = CompiledSpec(load_spec_class(spec)(**consts), symmetry=False)
    exp = Expansion(model, [{}], False)
    assert exp.candidates_in_c is not None  # NamedTuple states, nothing per successor
    python = Expansion(model, [{}], False)
    python.candidates_in_c = None
    exp.expanded = python.expanded = MUTATION_CHECKS  # past the first expansions' checks
    compared = 0
    for h in _states(python, 1500):
        got, want = exp.expand(0, h), python.expand(0, h)
        assert got[0] == want[0] and got[2] is None and want[2] is None
        assert len(got[1]) == len(want[1])
        for a, b in zip(got[1], want[1], strict=True):
            # k, action, params; the handle (state, its values, its terms); the fp.
            # (each expand runs the actions again: equal states, other objects)
            assert a[:3] == b[:3] and strict_equal(a[3][0], b[3][0])
            assert a[3][1] is a[3][0] and b[3][1] is b[3][0]  # a NamedTuple is its values
            assert a[3][2] == b[3][2] and a[4] == b[4]
            compared += 1
    assert compared > 500


class _Late(NamedTuple):
    """A counter and a value that turns mutable at step 300."""

    n: int
    x: Any


class _LateList(Spec):
    """A successor holding a list appears only after the loop moved to C."""

    name = "late_list"
    check_deadlock = False

    def init(self) -> list[_Late]:
        """One state."""
        return [_Late(0, ())]

    @action(over=lambda self: range(3))
    def Inc(self, s: _Late, k: int) -> _Late | None:
        """Count up; at 300 put a list in x."""
        if s.n >= 400:
            return None
        return _Late(s.n + 1, [k] if s.n == 300 else (k,))

    @invariant
    def Bounded(self, s: _Late) -> bool:
        """Always true."""
        return s.n <= 1000


def test_a_bad_value_met_by_the_c_loop_is_named_as_before() -> None:
    """The expansion that meets the list at step 300 ran its C loop (past the first
    expansions), which declines; the Python loop then names the variable."""
    model = CompiledSpec(_LateList(), symmetry=False)
    assert Expansion(model, [{}], False).candidates_in_c is not None
    with pytest.raises(SpecError, match="variable x holds a list"):
        check_spec(_LateList(), Options(cache=False))


class _LateStep(_LateList):
    """The same counter, all values immutable, with an action property that the
    step from 300 breaks: an expansion the C loop would serve but for the property."""

    name = "late_step"

    @action(over=lambda self: range(3))
    def Inc(self, s: _Late, k: int) -> _Late | None:
        """Count up (by two from 300)."""
        if s.n >= 400:
            return None
        return _Late(s.n + (2 if s.n == 300 else 1), (k,))

    @action_property
    def StepsByOne(self, s: _Late, t: _Late) -> bool:
        """Every step counts up by one."""
        return t.n == s.n + 1


def test_an_action_property_keeps_the_python_loop() -> None:
    """With an action property selected the loop stays in Python (it checks every
    step), and the late violation is found on the plain path."""
    model = CompiledSpec(_LateStep(), symmetry=False)
    assert Expansion(model, [{}], False).candidates_in_c is None
    result = check_spec(_LateStep(), Options(cache=False))
    assert result.verdict is Verdict.VIOLATION
    assert result.violated == "StepsByOne" and result.action_property
    assert result.trace is not None and len(result.trace.steps) == 302  # (init + 301)
