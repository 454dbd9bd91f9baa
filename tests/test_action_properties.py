"""Action properties (TLA+'s ``[][A]_vars``) and ``enabled`` (TLA+'s ``ENABLED``).

CoffeeCan, ported from the TLA+ Examples with every property of its cfg, gives TLC's
published figures (5,150 distinct, 20,002 generated, depth 1) with both action
properties, ENABLED in a liveness property and the hypothesis holding.  A can with
wrong rules breaks each action property: on a step to a state already seen (every
state of the can is an initial state), to a state outside the constraint, in one
process with and without the caches, with two workers, in simulation; each time the
counterexample ends in a step a brute-force search over all transitions calls
violating, and it replays.  A step that changes nothing never breaks one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker import CompiledSpec, Options, Verdict, check_spec, eventually
from checker.authoring.loader import load_spec_class
from checker.base.errors import SpecError
from checker.simulate import SimulationOptions, simulate
from tests.fixtures.leaky_can import Can, LeakyCan

ROOT = Path(__file__).resolve().parents[1]
LEAKY = str(ROOT / "tests" / "fixtures" / "leaky_can.py")


def test_coffee_can_gives_tlcs_figures_with_every_property_of_its_cfg() -> None:
    cls = load_spec_class("coffee_can")
    result = check_spec(cls(), Options())
    assert result.verdict is Verdict.OK, result.violated
    # tlaplus/Examples manifest, CoffeeCan100Beans.cfg.
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (
        5150,
        20002,
        1,
    )
    model = CompiledSpec(cls())
    assert model.action_property_names == ("MonotonicDecrease", "LoopInvariant")
    assert [t.name for t in model.temporal] == [
        "EventuallyTerminates",
        "TerminationHypothesisEven",
        "TerminationHypothesisOdd",
    ]


def _violating_steps(spec: LeakyCan, prop: str) -> set[tuple[Can, Can]]:
    """Every transition of the spec that breaks ``prop`` (brute force)."""
    model = CompiledSpec(spec, properties=[prop])
    pred = model.action_property_predicate(prop)
    assert pred is not None
    bad = set()
    for s in model.initial_states():  # every state of the can is an initial state
        for _, _, t in model.successors(s):
            if t != s and not pred(s, t):
                bad.add((s, t))
    return bad


@pytest.mark.parametrize(
    ("variant", "prop"), [("count", "MonotonicDecrease"), ("parity", "LoopInvariant")]
)
@pytest.mark.parametrize(
    "opts",
    [Options(), Options(cache=False), Options(workers=2)],
    ids=["cached", "no-cache", "workers"],
)
def test_a_broken_action_property_ends_in_the_step_that_breaks_it(
    variant: str, prop: str, opts: Options
) -> None:
    spec = LeakyCan(variant=variant)
    result = check_spec(spec, opts, properties=[prop])
    assert result.verdict is Verdict.VIOLATION and result.violated == prop
    assert result.trace is not None and result.trace.length == 1
    before, after = result.trace.steps[-2].state, result.trace.steps[-1].state
    assert (before, after) in _violating_steps(spec, prop)
    # The step goes to a state the search had already stored: checked all the same.
    assert after in CompiledSpec(spec).initial_states()


def test_a_stuttering_step_breaks_no_action_property() -> None:
    # Termination leaves the can as it is: [A]_vars holds on it although the can
    # does not lose a bean.
    result = check_spec(LeakyCan(variant="right"), Options())
    assert result.verdict is Verdict.OK
    assert result.stats.action_generated[3] > 0  # Termination was taken


class _Bounded(LeakyCan):
    """Only cans with at most one black bean are explored: the wrong rule's result
    (two more black beans) always lies outside the constraint."""

    def constraint(self, s: Any) -> bool:
        return bool(s.black <= 1)


def test_a_step_out_of_the_constraint_is_checked() -> None:
    spec = _Bounded(variant="count")
    result = check_spec(spec, Options(), properties=["MonotonicDecrease"])
    assert result.verdict is Verdict.VIOLATION and result.trace is not None
    before, after = result.trace.steps[-2].state, result.trace.steps[-1].state
    assert before.black <= 1 < after.black
    assert (before, after) in _violating_steps(spec, "MonotonicDecrease")


def test_simulation_finds_a_broken_action_property() -> None:
    model = CompiledSpec(LeakyCan(variant="parity"), properties=["LoopInvariant"])
    result = simulate(model, SimulationOptions(seed=1, traces=200, depth=20))
    assert result.verdict is Verdict.VIOLATION and result.violated == "LoopInvariant"
    assert result.trace is not None
    before, after = result.trace.steps[-2].state, result.trace.steps[-1].state
    assert (before, after) in _violating_steps(LeakyCan(variant="parity"), "LoopInvariant")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checker", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "120"},
    )


def test_cli_run_list_and_replay(tmp_path: Path) -> None:
    trace = tmp_path / "t.itf.json"
    ran = _cli("run", LEAKY, "--variant", "parity", "--trace-out", str(trace), cwd=tmp_path)
    assert ran.returncode == 13, ran.stdout + ran.stderr  # TLC exits 13 for an action property
    assert "Action property LoopInvariant is violated by the last step." in ran.stdout
    assert "X LoopInvariant is violated by the last step" in ran.stdout
    ok = _cli("replay", LEAKY, str(trace), cwd=tmp_path)
    assert ok.returncode == 0 and "its last step breaks LoopInvariant" in ok.stdout
    fixed = _cli("replay", LEAKY, str(trace), "--variant", "right", cwd=tmp_path)
    assert fixed.returncode == 1
    listed = _cli("list", LEAKY, cwd=tmp_path)
    assert "action properties ([][A]_vars): MonotonicDecrease, LoopInvariant" in listed.stdout
    one = _cli("run", LEAKY, "--variant", "parity", "--property", "MonotonicDecrease", cwd=tmp_path)
    assert one.returncode == 0, one.stdout  # LoopInvariant not selected


def test_enabled_is_tla_enabled() -> None:
    cls = load_spec_class("coffee_can")
    spec = cls(MaxBeanCount=3)
    can = sys.modules[cls.__module__].Can
    state = sys.modules[cls.__module__].CoffeeCanState
    assert spec.enabled(state(can(1, 0)), "Termination")  # a stuttering step counts
    assert not spec.enabled(state(can(1, 1)), "Termination")
    assert spec.enabled(state(can(1, 1)), "PickDifferentColor")
    assert not spec.enabled(state(can(2, 0)), "PickDifferentColor")
    with pytest.raises(SpecError, match="no action 'Stop'"):
        spec.enabled(state(can(1, 0)), "Stop")


def test_list_names_both_fairness_forms(tmp_path: Path) -> None:
    listed = _cli("list", "coffee_can", cwd=tmp_path).stdout
    assert (
        "fairness: WF(PickSameColorWhite \\/ PickSameColorBlack \\/ PickDifferentColor \\/ "
        "Termination) as one action, any instance" in listed
    )
    listed = _cli("list", "ratis_heartbeat_match_index", cwd=tmp_path).stdout
    assert "WF(AdvanceCommitIndex) for each instance on its own" in listed


@pytest.mark.parametrize(
    ("fairness", "message"),
    [
        ({frozenset({"Termination"}): "weak"}, "give a family's name"),
        ({(): "weak"}, "give a family's name"),
        ({("Termination", "Termination"): "weak"}, "distinct family names only"),
        ({("Termination",): ("weak", lambda: True)}, "a predicate picks instances of one"),
        ({"Termination": ("weak",)}, r"is not \(kind, predicate over the parameters\)"),
    ],
)
def test_an_ambiguous_fairness_form_is_refused(fairness: Any, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        type("Ambiguous", (LeakyCan,), {"fairness": fairness})


def test_a_property_that_reads_the_initial_state() -> None:
    """TLA+'s IF P THEN <>A ELSE <>B with P on the first state: each branch checked on
    the behaviours that start where it applies.  Without the condition, each branch
    alone fails (on the behaviours of the other), so the condition is what makes the
    hypothesis hold."""
    cls = load_spec_class("coffee_can")
    spec = cls(MaxBeanCount=6)
    assert check_spec(spec, Options()).verdict is Verdict.OK

    class Unconditioned(cls):  # type: ignore[misc,valid-type]
        name = "coffee_can_unconditioned"

        @eventually
        def TerminationHypothesisEven(self, s: Any) -> bool:
            return bool(s.can.black == 1 and s.can.white == 0)

    r = check_spec(Unconditioned(MaxBeanCount=6), Options(), ["TerminationHypothesisEven"])
    assert r.verdict is Verdict.VIOLATION and r.trace is not None
    assert r.trace.steps[0].state.can.white % 2 == 1  # a behaviour the IF excludes
    # Simulation checks the same lassos with the same condition.
    model = CompiledSpec(spec, properties=["TerminationHypothesisEven", "TerminationHypothesisOdd"])
    sim = simulate(model, SimulationOptions(seed=0, traces=300, depth=20))
    assert sim.verdict is Verdict.INCOMPLETE  # nothing found: the hypothesis holds
