"""The fast engine's wrong answers of issue 26, each now the plain engine's answer.

Each spec here made the default engine (packed states, cached outcomes) answer
differently from ``--no-cache``: values equal in Python but not in TLA+ merged by its
interning (a wrong pass), state kept in module globals across a restart (a wrong
count, unbounded here).  The figures asserted are the plain engine's, which a
from-scratch search gives too (tests/test_differential.py checks that on generated
specs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import immutables
import pytest

from checker import Options, Spec, action, check_spec, invariant
from checker.authoring.loader import load_spec_class
from checker.explore.result import Verdict
from tests.seed_helpers import figures

FIXTURES = Path(__file__).parent / "fixtures"


def _both(spec: Spec, **opts: Any) -> Any:
    runs = [check_spec(spec, Options(cache=cache, **opts)) for cache in (True, False)]
    assert figures(runs[0], per_action=True) == figures(runs[1], per_action=True)
    return runs[0]


def test_a_late_pong_is_not_taken_for_a_ping() -> None:
    """Send writes a new Ping(0, 0) in every state; Reply writes Pong(0, 0) once
    a = b = 50, far past the 2,000 interning hits the old engine compared by type."""
    spec = load_spec_class(str(FIXTURES / "ping_pong.py"))()
    result = _both(spec)
    assert result.verdict is Verdict.VIOLATION and result.violated == "NoPong"
    assert result.stats.distinct == 2602
    assert result.trace is not None and result.trace.length == 101


def test_a_restart_does_not_reuse_the_previous_attempt_s_views() -> None:
    """A map gains a key after the pilot: the run starts again and the later maps'
    slots move; views left over from the first attempt filed the constraint's
    verdicts under the wrong slots, and the run never ended."""
    spec = load_spec_class(str(FIXTURES / "late_key_views.py"))()
    result = _both(spec)
    assert result.verdict is Verdict.OK and result.stats.distinct == 40812


class Box(NamedTuple):
    """A step counter and one value."""

    n: int
    v: Any


class Flips(Spec):
    """The value goes through ints, bools, tuples of each, sets of each and maps
    keyed by each, late in the run: each is another TLA+ value than its neighbour."""

    constants = {"Late": 2500}
    Late: int
    check_deadlock = False
    VALUES = (
        1,
        True,
        (1,),
        (True,),
        frozenset({1}),
        frozenset({True}),
        immutables.Map({1: 0}),
        immutables.Map({True: 0}),
        immutables.Map({0: 1}),
        immutables.Map({0: True}),
    )

    def init(self) -> list[Box]:
        return [Box(0, 1)]

    @action
    def Count(self, s: Box) -> Box | None:
        return s._replace(n=s.n + 1) if s.n < self.Late else None

    @action(over=lambda self: range(len(self.VALUES)))
    def Set(self, s: Box, i: int) -> Box | None:
        return s._replace(v=self.VALUES[i]) if s.n >= self.Late else None

    @invariant
    def NoBoolInside(self, s: Box) -> bool:
        v = s.v
        inside = list(v.values()) + list(v.keys()) if isinstance(v, immutables.Map) else v
        return not any(type(x) is bool for x in (inside if not isinstance(v, int) else [v]))


def test_ints_and_bools_at_every_depth_are_different_values() -> None:
    result = _both(Flips())
    assert result.verdict is Verdict.VIOLATION and result.violated == "NoBoolInside"
    # The counter's 2,501 states, then Set(0) (1, seen already) and Set(1): True.
    assert result.stats.distinct == 2502
    assert result.trace is not None and result.trace.labels()[-1] == "Set(1)"


class Net(NamedTuple):
    """A counter and the set of messages in flight."""

    n: int
    msgs: frozenset[Any]


class Ping(NamedTuple):
    src: int


class Pong(NamedTuple):
    src: int


class Network(Spec):
    """A set-valued variable whose Ping is replaced by an equal Pong, built afresh:
    set difference (by ==) sees no change, the fingerprint must."""

    check_deadlock = False

    def init(self) -> list[Net]:
        return [Net(0, frozenset({Ping(0)}))]

    @action
    def Count(self, s: Net) -> Net | None:
        return s._replace(n=s.n + 1) if s.n < 3 else None

    @action
    def Answer(self, s: Net) -> Net | None:
        if s.n == 3 and Ping(0) in s.msgs and all(type(m) is Ping for m in s.msgs):
            return s._replace(msgs=frozenset({Pong(0)}))
        return None

    @invariant
    def NoPong(self, s: Net) -> bool:
        return all(type(m) is Ping for m in s.msgs)


@pytest.mark.parametrize("symmetry", [False, True])
def test_a_set_whose_member_changes_type_changes_its_fingerprint(symmetry: bool) -> None:
    result = _both(Network(), symmetry=symmetry)
    assert result.verdict is Verdict.VIOLATION and result.stats.distinct == 5


class Slot(NamedTuple):
    """A step counter and a value that may be cleared."""

    n: int
    held: Any


class Clearing(Spec):
    """Clear sets ``held`` to None; it reads the state around its fields, so it runs
    directly, where the successor is packed from its parent by the values that
    changed: a change *to None* was taken for no change (None stood for 'no parent
    value'), and the cleared states were never explored."""

    check_deadlock = False

    def init(self) -> list[Slot]:
        return [Slot(0, "x")]

    @action
    def Step(self, s: Slot) -> Slot | None:
        return Slot(s.n + 1, s.held) if s.n < 3 else None

    @action
    def Clear(self, s: Slot) -> Slot | None:
        held = tuple.__getitem__(s, 1)  # around the field: never cached
        return Slot(s.n, None) if held is not None else None

    @action
    def Refill(self, s: Slot) -> Slot | None:
        return Slot(s.n, "y") if s.held is None and s.n == 3 else None

    @invariant
    def HeldNeverY(self, s: Slot) -> bool:
        return s.held != "y"


def test_a_directly_run_action_that_clears_a_variable_to_none() -> None:
    result = _both(Clearing())
    assert result.verdict is Verdict.VIOLATION and result.violated == "HeldNeverY"
    assert result.trace is not None and result.trace.labels()[-2:] == ["Clear", "Refill"]
