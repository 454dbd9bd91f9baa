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

# (the default engine makes the fast engine after 3,000 states: see conftest.py)
pytestmark = pytest.mark.usefixtures("fast_engine_from_the_first_state")


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


_EDITED = """
from typing import NamedTuple
from checker import Spec, action, invariant

class S(NamedTuple):
    x: int

class Counter(Spec):
    def init(self):
        return [S(0)]

    @action
    def Step(self, s):
        if s.x >= {limit}:
            return None
        return S(s.x + 1)

    @invariant
    def Small(self, s):
        return s.x < 3
"""


def test_the_fast_path_runs_the_code_that_was_imported_not_a_stale_source(
    tmp_path: Path,
) -> None:
    """A spec file rewritten in place and imported again in the same process (a watch
    loop, a notebook, the pytest plugin, the generated-spec check, where it made the
    cached engines see 2 states of 3) is instrumented from the text its code came
    from: Python's line cache keeps the first text of a file name, and a copy made
    from that would run the old action in the fast path."""
    import linecache
    import types

    from checker.fastpath.instrument import HELPERS, instrument

    helpers = dict.fromkeys(HELPERS, print)
    path = tmp_path / "counter.py"

    def step_copy(limit: int, trees: dict[str, Any]) -> types.FunctionType | None:
        return instrument(load_spec_class(str(path)).Step, helpers, trees)

    def consts(fn: types.FunctionType | None) -> set[Any]:
        assert fn is not None
        return set(fn.__code__.co_consts)

    path.write_text(_EDITED.format(limit=4))
    assert 4 in consts(step_copy(4, {}))
    assert linecache.getlines(str(path))  # the line cache holds the first text now
    # Same length, same lines, another guard: the copy is of the new text.
    path.write_text(_EDITED.format(limit=5))
    copy = step_copy(5, {})
    assert 5 in consts(copy) and 4 not in consts(copy)
    # A file changed after its import: no copy (the function runs as it is, its
    # arguments counted as read in full), never a copy of text that is not running.
    cls = load_spec_class(str(path))
    path.write_text(_EDITED.format(limit=7))
    assert instrument(cls.Step, helpers, {}) is None
    # Running the imported spec still gives its own answer, with and without cache.
    with_cache, plain = check_spec(cls(), Options()), check_spec(cls(), Options(cache=False))
    assert (with_cache.verdict, with_cache.stats.distinct) == (Verdict.VIOLATION, 4)
    assert (plain.verdict, plain.stats.distinct) == (Verdict.VIOLATION, 4)


def test_a_spec_rewritten_within_a_second_to_the_same_length_is_checked_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's bytecode cache trusts a .pyc whose recorded size and whole-second
    modification time match the source: a spec file is compiled from its text."""
    import os
    import sys

    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as on most machines
    path = tmp_path / "counter.py"
    distinct = []
    for limit in (1, 2):
        path.write_text(_EDITED.format(limit=limit))
        os.utime(path, (1_700_000_000, 1_700_000_000))  # one second for both texts
        r = check_spec(load_spec_class(str(path))(), Options())
        distinct.append((r.verdict, r.stats.distinct))
    assert distinct == [(Verdict.DEADLOCK, 2), (Verdict.DEADLOCK, 3)]
