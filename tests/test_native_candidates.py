"""The expansion's per-successor loop in C (``child_candidates``) gives exactly the
candidates the Python loop gives, on real models, with and without a state
constraint; where a successor's value is not one the value model takes, or the
constraint raises or gives a non-boolean, the Python loop runs again and names it."""

from __future__ import annotations

from collections import Counter, deque
from typing import Any, NamedTuple

import pytest

from checker import Options, Spec, action, action_property, check_spec, invariant
from checker.authoring.loader import load_spec_class
from checker.base.errors import SpecError
from checker.explore.expansion import MUTATION_CHECKS, Expansion
from checker.explore.result import Verdict
from checker.model import CompiledSpec
from checker.store import fingerprints
from checker.store.fingerprints import FingerprintSet
from checker.values.native import NATIVE
from checker.values.strict import strict_equal

pytestmark = pytest.mark.skipif(NATIVE is None, reason="the C core is not built here")

MODELS = [
    ("bench.go_back_n", {"Messages": "4", "Window": "2"}),  # tuples that grow and shrink
    ("bench.gossip", {}),  # maps of maps: the side-by-side walk
    ("bench.commit_timeouts", {"RMs": "3"}),  # records in a pset: the Python calculator
    ("scm_new_leader_dn_server_start", {}),  # a seed spec: pyrsistent maps and vectors
    ("multipaxos", {}),  # a TLA+ Examples port: sets of message records
    ("lamport_mutex", {"maxClock": "3"}),  # a state constraint, in C
    ("raft", {}),  # a state constraint over a log
    ("ewd998", {"N": "2"}),  # frozen dataclass states (their getter), a constraint
    ("die_hard", {}),  # frozen dataclass states with slots, no constraint (58 steps)
]
#: Successors compared per model at least (die_hard has 16 states in all).
ENOUGH = {"die_hard": 50}


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
    _compare_loops(model, spec)


def _compare_loops(model: CompiledSpec, spec: str) -> None:
    """The C loop's candidates against the Python loop's, value by value, on the first
    1,500 states of a breadth-first run."""
    exp = Expansion(model, [{}], False)
    assert exp.candidates_in_c is not None  # nothing but the fingerprint per successor
    python = Expansion(model, [{}], False)
    python.candidates_in_c = None
    exp.expanded = python.expanded = MUTATION_CHECKS  # past the first expansions' checks
    compared = outside = 0
    for h in _states(python, 1500):
        got, want = exp.expand(0, h), python.expand(0, h)
        assert got[0] == want[0] and got[2] is None and want[2] is None
        assert len(got[1]) == len(want[1])
        for a, b in zip(got[1], want[1], strict=True):
            # k, action, params; the handle (state, its values, its terms); the fp.
            # (each expand runs the actions again: equal states, other objects)
            assert a[:3] == b[:3]
            if b[3] is None:  # outside the constraint
                assert a[3] is None and a[4] is None and b[4] is None
                outside += 1
                continue
            assert strict_equal(a[3][0], b[3][0])
            if model.states_are_variables:  # a NamedTuple is its values
                assert a[3][1] is a[3][0] and b[3][1] is b[3][0]
            else:  # a dataclass's, through the model's getter
                assert type(a[3][1]) is tuple and strict_equal(a[3][1], b[3][1])
                assert all(x is y for x, y in zip(a[3][1], model.variables(a[3][0]), strict=True))
            assert a[3][2] == b[3][2] and a[4] == b[4]
            compared += 1
    assert compared > ENOUGH.get(spec, 500)
    if python.constrained:
        assert outside > 0, "the constraint never excluded a successor: the test is idle"


class _Sets(NamedTuple):
    """Six set variables: more than the C memo keeps member tables for (four)."""

    a: frozenset[Any]
    b: frozenset[Any]
    c: frozenset[Any]
    d: frozenset[Any]
    e: frozenset[Any]
    f: frozenset[Any]


class _ManySets(Spec):
    """Each action changes one set of the six: a member added, one taken, a record
    replaced by an equal copy (another object, the same value), or 1 replaced by
    True (Python-equal, another value).  Every successor of a state compares with
    the same parent's sets: the C loop's memo of their member tables, and past its
    four tables the table built per successor, must give the Python loop's terms."""

    name = "many_sets"
    check_deadlock = False

    def init(self) -> list[_Sets]:
        """Every set holds 1 and a record."""
        return [_Sets(*[frozenset({1, ("r", 0)}) for _ in range(6)])]

    @action(over=(lambda self: range(6), lambda self: range(4)))
    def Change(self, s: _Sets, i: int, k: int) -> _Sets | None:
        """Change set i in way k (bounded: at most four members)."""
        old = s[i]
        if k == 0:
            if len(old) >= 4:
                return None
            new = old | {("r", len(old))}
        elif k == 1:
            new = frozenset(sorted(old, key=repr)[1:])
        elif k == 2:
            new = frozenset(("r", x[1]) if isinstance(x, tuple) else x for x in old)
        else:
            new = frozenset(True if x == 1 and x is not True else x for x in old)
        return s._replace(**{s._fields[i]: new})


def test_the_c_loop_keeps_the_python_terms_for_many_set_variables() -> None:
    model = CompiledSpec(_ManySets(), symmetry=False)
    _compare_loops(model, "many_sets")


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


class _Clock(NamedTuple):
    """A counter that the constraint bounds, and a flag."""

    n: int
    flag: int


class _Bounded(Spec):
    """A counter whose successors beyond ``Limit`` are outside the constraint; what
    the constraint does at ``Odd`` (a non-boolean, an error) or what the invariant
    says of the state outside it (``Broken``) is what each test varies.  Three
    successors per state, so the C loop runs from the 201st expansion on."""

    name = "bounded"
    check_deadlock = False
    constants = {"Limit": 400, "Odd": -1, "Broken": -1, "Mode": "bool"}

    Limit: int
    Odd: int
    Broken: int
    Mode: str

    def init(self) -> list[_Clock]:
        """One state."""
        return [_Clock(0, 0)]

    @action(over=lambda self: range(3))
    def Tick(self, s: _Clock, k: int) -> _Clock:
        """Count up by one (k = 0), two (k = 1) or not at all, flag k."""
        return _Clock(s.n + (1, 2, 0)[k], k)

    def constraint(self, s: _Clock) -> bool:
        """n <= Limit; at Odd, what Mode says."""
        if s.n == self.Odd:
            if self.Mode == "int":
                return 1  # type: ignore[return-value]
            raise ZeroDivisionError("at Odd")
        return s.n <= self.Limit

    @invariant
    def NotBroken(self, s: _Clock) -> bool:
        """n is not Broken with flag 1 (a state outside the constraint when Broken
        is past Limit)."""
        return not (s.n == self.Broken and s.flag == 1)


def _run_both(monkeypatch: pytest.MonkeyPatch, **consts: Any) -> tuple[Any, Any]:
    """The outcome with the C loop, and with the Python loop only."""
    model = CompiledSpec(_Bounded(**consts), symmetry=False)
    assert Expansion(model, [{}], False).candidates_in_c is not None
    fast = check_spec(_Bounded(**consts), Options(cache=False))
    with monkeypatch.context() as m:
        m.setattr(Expansion, "_candidates_in_c", lambda *args: None)
        plain = check_spec(_Bounded(**consts), Options(cache=False))
    return fast, plain


def test_the_c_loop_counts_what_the_python_loop_counts_under_a_constraint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast, plain = _run_both(monkeypatch)
    assert fast.verdict is Verdict.OK and plain.verdict is Verdict.OK
    # (n, flag) for n in 0 .. Limit: flags 0 and 2 at n = 0 and 1, all three above.
    assert fast.stats.distinct == plain.stats.distinct == 2 + 2 + 3 * 399
    assert fast.stats.generated == plain.stats.generated == 3 * 1201 + 1


def test_a_state_outside_the_constraint_breaks_an_invariant_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The invariant holds on every state inside; the successor n = Limit + 1 with
    flag 1 is outside and breaks it: found after the C loop took over, on the
    same state and trace as the Python loop's."""
    fast, plain = _run_both(monkeypatch, Broken=401)
    for r in (fast, plain):
        assert r.verdict is Verdict.VIOLATION and r.violated == "NotBroken"
        assert r.trace is not None and r.trace.steps[-1].state == _Clock(401, 1)
    assert [x.state for x in fast.trace.steps] == [x.state for x in plain.trace.steps]
    assert len(fast.trace.steps) > 200  # past the expansions the Python loop always runs
    assert fast.stats.generated == plain.stats.generated


@pytest.mark.parametrize(
    ("mode", "says"), [("int", "not a boolean"), ("raise", "ZeroDivisionError")]
)
def test_a_constraint_that_misbehaves_late_is_named(
    monkeypatch: pytest.MonkeyPatch, mode: str, says: str
) -> None:
    """A constraint that gives 1, or raises, at n = 350 (long after the C loop took
    over): the same error, on the same state, as from the Python loop."""
    fast, plain = _run_both(monkeypatch, Odd=350, Mode=mode)
    for r in (fast, plain):
        assert r.verdict is Verdict.ERROR
        assert "constraint" in str(r.error) and says in str(r.error)
        assert r.trace is not None and r.trace.steps[-1].state.n == 350
    assert len(fast.trace.steps) == len(plain.trace.steps)


@pytest.mark.parametrize(
    "counts",
    [
        [],
        [(0, [])],
        [(0, [0, 1, 1]), (1, [2, 2, 2, 0]), (5, [])],
        [(3, [7] * 50), (4, list(range(40)))],
        [(0, [4095, 0])],
    ],
)
def test_a_chunks_successors_are_counted_per_family_as_the_counter_counts(
    counts: list[tuple[int, list[int]]],
) -> None:
    """action_counts against Counter, the reference the explorer falls back to."""
    if NATIVE is None:
        pytest.skip("the C core is not built here (or MCHECK_PURE=1)")
    every = [a for _, actions in counts for a in actions]
    assert NATIVE.action_counts(counts) == (len(every), dict(Counter(every)))


@pytest.mark.parametrize(
    "counts",
    [[(0, [True])], [(0, [-1])], [(0, [1 << 70])], [(0, [4096])], [(0, (1, 2))], [[0, [1]]], (0,)],
)
def test_what_the_c_count_does_not_count_goes_back_to_the_counter(counts: object) -> None:
    """A bool (a family is an int, and True is not 1 here), a negative or huge number,
    anything not a list of (ordinal, list) pairs: None, and the explorer counts it."""
    if NATIVE is None:
        pytest.skip("the C core is not built here (or MCHECK_PURE=1)")
    assert NATIVE.action_counts(counts) is None


@pytest.mark.parametrize(("spec", "consts"), MODELS, ids=[m[0] for m in MODELS])
def test_the_screened_c_loop_leaves_out_exactly_the_known_successors(
    monkeypatch: pytest.MonkeyPatch, spec: str, consts: dict[str, str]
) -> None:
    """With the visited set's view (Expansion.screen), the C loop's candidates are the
    unscreened ones less those whose fingerprint the set holds (in its sorted array
    or its recent set), in order, with the same fields; the actions are all there."""
    monkeypatch.setattr(fingerprints, "RECENT_MIN", 8)  # merges along the way
    model = CompiledSpec(load_spec_class(spec)(**consts), symmetry=False)
    exp = Expansion(model, [{}], False)
    exp.expanded = MUTATION_CHECKS
    visited = FingerprintSet()
    left_out = kept = 0
    for n, h in enumerate(_states(exp, 600)):
        exp.screen(None)
        actions, whole, ev = exp.expand(0, h)
        exp.screen(visited.view())
        got = exp.expand(0, h)
        assert got[0] == actions and got[2] is None and ev is None
        want = [c for c in whole if c[4] is None or c[4] not in visited]
        assert [c[0] for c in got[1]] == [c[0] for c in want]
        for a, b in zip(got[1], want, strict=True):
            assert a[:3] == b[:3] and a[4] == b[4]
            assert (a[3] is None) == (b[3] is None)
            if a[3] is not None:
                assert strict_equal(a[3][0], b[3][0]) and a[3][2] == b[3][2]
        left_out += len(whole) - len(want)
        kept += sum(1 for c in want if c[4] is not None)
        # Every other state's inside successors become known, a few at a time.
        if n % 2:
            visited.add_batch([c[4] for c in whole if c[4] is not None])
    least = 10 if spec == "die_hard" else 100  # (16 states in all)
    assert left_out > least and kept > least  # both sides served
    assert len(visited.frozen) > 0 and len(visited.recent) > 0
