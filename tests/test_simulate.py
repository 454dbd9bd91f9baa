"""Random simulation: deterministic per seed, finds the seeds' violations (safety,
deadlock, liveness lassos), never reports one where the exhaustive check proves the
property, shortens what it finds, and stops like a run (exit 3, partial figures)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.explore.result import Result, Verdict
from checker.explore.trace import replay_choices
from checker.simulate import SimulationOptions, simulate

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
MCHECK = [sys.executable, "-m", "checker"]


def _model(spec: str, variant: str | None = None, properties: Any = None, **consts: Any) -> Any:
    return CompiledSpec(load_spec_class(spec)(variant=variant, **consts), properties=properties)


def _sim(model: Any, **opts: Any) -> Result:
    return simulate(model, SimulationOptions(**opts))


def _signature(r: Result) -> tuple[Any, ...]:
    s = r.simulation
    return (
        r.verdict,
        r.violated,
        tuple(r.trace.labels()) if r.trace else None,
        s.behaviours,
        s.states,
        s.generated,
        s.deepest,
        tuple(s.action_generated),
        tuple(s.action_taken),
        s.behaviour,
        s.found_length,
    )


def test_deterministic_per_seed() -> None:
    runs = {seed: _sim(_model("raft"), seed=seed, traces=10) for seed in (0, 1)}
    again = _sim(_model("raft"), seed=0, traces=10)
    assert _signature(again) == _signature(runs[0])
    assert _signature(runs[1]) != _signature(runs[0])
    # In a fresh interpreter (another hash seed) too.
    code = (
        "from checker.simulate import simulate, SimulationOptions;"
        "from checker import CompiledSpec;from checker.authoring.loader import load_spec_class;"
        "r=simulate(CompiledSpec(load_spec_class('raft')()),SimulationOptions(seed=0,traces=10));"
        "print(r.simulation.states, r.simulation.generated, r.simulation.action_taken)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    s = again.simulation
    assert out.stdout.strip().split(None, 2) == [
        str(s.states),
        str(s.generated),
        str(s.action_taken),
    ]


def _assert_real_violation(model: Any, r: Result, prop: str) -> None:
    assert r.verdict is Verdict.VIOLATION and r.violated == prop and r.trace is not None
    states = r.trace.states()
    # A real behaviour: rebuilt from the initial state by the recorded actions.
    assert states[0] in model.initial_states()
    for before, step in zip(states, r.trace.steps[1:], strict=False):
        assert step.state in [t for _, _, t in model.successors(before)]
    assert all(model.violated_invariant(s) is None for s in states[:-1])
    assert model.violated_invariant(states[-1]) == prop


def test_finds_die_hard_and_shortens_it() -> None:
    model = _model("die_hard")
    r = _sim(model, seed=0, traces=1000)
    _assert_real_violation(model, r, "BigJugNotFour")
    assert r.trace is not None and r.simulation.found_length is not None
    shortest = check(model, Options()).trace
    assert shortest is not None
    assert shortest.length <= r.trace.length <= r.simulation.found_length
    assert r.trace.length < r.simulation.found_length  # seed 0 finds a 13-action one
    assert any("not necessarily the shortest" in w for w in r.warnings)
    raw = _sim(model, seed=0, traces=1000, shrink=False)
    assert raw.trace is not None and raw.trace.length == r.simulation.found_length


def test_shortening_reorders_a_deep_find_down_to_the_shortest() -> None:
    """RATIS-2605's StateMachineSafety violation (MaxTerm=3 MaxMsgs=1), as the
    default hunt finds it (36 actions for seed 1): dropping steps alone left 27; the
    search over the behaviour's own action instances in any order reaches breadth-first
    search's 21."""
    model = _model(
        "ratis_heartbeat_match_index",
        "bug",
        ["StateMachineSafety"],
        MaxTerm=3,
        MaxMsgs=1,
    )
    r = _sim(model, seed=1, swarm=True, guided=True, timeout=120)
    _assert_real_violation(model, r, "StateMachineSafety")
    shortest = check(model, Options()).trace
    assert shortest is not None and shortest.length == 21
    assert r.trace is not None and r.simulation is not None
    assert (r.trace.length, r.simulation.found_length) == (21, 36)


@pytest.mark.parametrize(
    ("spec", "variant", "prop", "consts"),
    [
        ("ratis_heartbeat_match_index", "bug", "MatchIndexSound", {}),
        ("scm_install_snapshot_leader_change", "bug", "NoStuckInstallInProgress", {}),
        ("om_leader_ready_before_apply", "bug", "NoStaleWriteRejection", {}),
    ],
)
def test_finds_seed_bugs(spec: str, variant: str, prop: str, consts: dict[str, Any]) -> None:
    model = _model(spec, variant, [prop], **consts)
    r = _sim(model, seed=0, timeout=60)
    _assert_real_violation(model, r, prop)


def test_the_fix_is_not_reported() -> None:
    model = _model("ratis_heartbeat_match_index", "fix", ["MatchIndexSound"])
    r = _sim(model, seed=0, traces=200)
    assert r.verdict is Verdict.INCOMPLETE and r.exit_code == 3
    assert "200 random behaviours, no violation (not exhaustive)" in (r.reason or "")


def test_successors_outside_the_constraint_are_checked() -> None:
    # As in a run: x = 3 is outside the constraint x <= 2, generated and checked.
    model = CompiledSpec(load_spec_class(str(FIXTURES / "constraint_counter.py"))())
    r = _sim(model, seed=0, traces=1)
    assert r.verdict is Verdict.VIOLATION and r.violated == "NotThree"
    assert r.trace is not None and r.trace.length == 3


def test_deadlock_and_no_deadlock() -> None:
    cls = load_spec_class(str(FIXTURES / "deadlocking.py"))
    r = _sim(CompiledSpec(cls()), seed=0, traces=5)
    assert r.verdict is Verdict.DEADLOCK and r.trace is not None and r.trace.length == 4
    r = _sim(CompiledSpec(cls()), seed=0, traces=5, deadlock=False)
    assert r.verdict is Verdict.INCOMPLETE and r.simulation.behaviours == 5


def _assert_lasso(model: Any, r: Result, prop: str) -> None:
    assert r.verdict is Verdict.VIOLATION and r.liveness and r.violated == prop
    assert r.exit_code == 13 and r.trace is not None and r.trace.loop is not None
    states = r.trace.states()
    assert states[r.trace.loop] == states[-1]
    replay_choices(model, _choices(model, r))


def _choices(model: Any, r: Result) -> list[int]:
    # The trace's steps as successor indices (replay_choices checks they exist).
    assert r.trace is not None
    states = r.trace.states()
    out = [model.initial_states().index(states[0])]
    for before, after in itertools.pairwise(states):
        out.append([t for _, _, t in model.successors(before)].index(after))
    return out


@pytest.mark.parametrize(
    ("spec", "variant", "prop"),
    [
        ("scm_new_leader_dn_server_start", "mutant_never_start_leader", "DNServerEventuallyStarts"),
        ("ratis_empty_snapshot_index_default", "bug", "FollowerEventuallyCatchesUp"),
        ("ratis_heartbeat_match_index", "bug", "FollowersEventuallyMatchLeader"),
    ],
)
def test_finds_liveness_violations_on_lassos(spec: str, variant: str, prop: str) -> None:
    consts = {"MaxMsgs": 1} if spec == "ratis_heartbeat_match_index" else {}
    model = _model(spec, variant, [prop], **consts)
    r = _sim(model, seed=0, timeout=60)
    _assert_lasso(model, r, prop)


@pytest.mark.parametrize(
    ("spec", "variant", "prop", "consts"),
    [
        ("ratis_empty_snapshot_index_default", "fix", "FollowerEventuallyCatchesUp", {}),
        ("scm_new_leader_dn_server_start", "fix", "DNServerEventuallyStarts", {}),
        ("ratis_heartbeat_match_index", "fix", "FollowersEventuallyMatchLeader", {"MaxMsgs": 1}),
    ],
)
def test_no_false_lasso_where_the_property_holds(
    spec: str, variant: str, prop: str, consts: dict[str, Any]
) -> None:
    """Soundness against the exhaustive checker: where the fair-cycle search proves
    the property, no simulated lasso violates it."""
    model = _model(spec, variant, [prop], **consts)
    assert check(model, Options(symmetry=False)).verdict is Verdict.OK
    for seed in range(2):
        r = _sim(model, seed=seed, traces=20)
        assert r.verdict is Verdict.INCOMPLETE, (seed, r.trace and r.trace.labels())


def test_spec_error_is_reported_with_its_trace() -> None:
    cls = load_spec_class(str(FIXTURES / "raising.py"))
    r = _sim(CompiledSpec(cls(variant="action")), seed=0, traces=3)
    assert r.verdict is Verdict.ERROR and r.error is not None
    assert "Step raised ZeroDivisionError" in (r.reason or "")
    assert r.trace is not None and r.trace.steps[-1].state == 3


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCHECK, "simulate", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_cli_violation_json_and_saved_trace(tmp_path: Path) -> None:
    out = tmp_path / "t.itf.json"
    proc = _cli("die_hard", "--seed", "3", "--json", "--trace-out", str(out))
    assert proc.returncode == 12, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["result"] == "violation" and data["strategy"] == "simulate"
    assert data["simulation"]["seed"] == 3 and data["simulation"]["behaviours"] >= 1
    assert data["trace_file"] == str(out) and out.is_file()
    shown = subprocess.run(
        [*MCHECK, "replay", "die_hard", str(out)], cwd=ROOT, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stdout


def test_cli_limits_are_incomplete_and_bad_options_refused() -> None:
    proc = _cli("raft", "--timeout", "1")
    assert proc.returncode == 3
    assert "INCOMPLETE (timeout 1.0s reached)" in proc.stdout
    assert "behaviours" in proc.stdout
    proc = _cli("raft", "--traces", "5", "--json")
    assert proc.returncode == 3
    assert json.loads(proc.stdout.strip().splitlines()[-1])["simulation"]["behaviours"] == 5
    proc = _cli("raft", "--depth", "0")
    assert proc.returncode == 2
    proc = _cli("raft", "--property", "NoSuchThing", "--traces", "1")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_json_reports_the_real_figures_at_the_top_level() -> None:
    # die_hard with an unreachable target: 16 reachable states, all visited by 200
    # behaviours of 100 states (the exhaustive run's count is the independent figure).
    proc = subprocess.run(
        [*MCHECK, "simulate", "die_hard", "--const", "Target=99", "--traces", "200", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    exhaustive = subprocess.run(
        [*MCHECK, "run", "die_hard", "--const", "Target=99", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    every = json.loads(exhaustive.stdout.strip().splitlines()[-1])["distinct_states"]
    assert data["distinct_states"] == data["simulation"]["distinct"] == every == 16
    assert data["states_per_second"] > 0


def test_the_swarm_finds_a_bug_a_plain_walk_misses() -> None:
    from tests.fixtures.reset_counter import ResetCounter

    model = CompiledSpec(ResetCounter(), symmetry=False)
    plain = simulate(model, SimulationOptions(seed=3, traces=300, depth=60))
    assert plain.verdict is Verdict.INCOMPLETE  # 24 increments in a row: about 2**-24
    runs = [
        simulate(model, SimulationOptions(seed=3, traces=300, depth=60, swarm=True))
        for _ in range(2)
    ]
    for swarm in runs:
        assert swarm.verdict is Verdict.VIOLATION and swarm.violated == "BelowTop"
        assert swarm.trace is not None and swarm.trace.length == 24  # shortened: the BFS length
        sim = swarm.simulation
        assert sim is not None and sim.swarm is not None
        assert "Inc" in sim.swarm and "Reset" not in sim.swarm
    # Deterministic per seed: the same behaviour, configuration and trace.
    a, b = (r.simulation for r in runs)
    assert a is not None and b is not None
    assert (a.behaviour, a.swarm) == (b.behaviour, b.swarm)
    assert runs[0].trace is not None and runs[1].trace is not None
    assert runs[0].trace.labels() == runs[1].trace.labels()


def test_guidance_finds_a_bug_a_plain_walk_misses() -> None:
    """--guided prefers states the behaviour has not visited: a reset back to a seen
    state loses to the climb, so the first behaviour reaches the top."""
    from tests.fixtures.reset_counter import ResetCounter

    model = CompiledSpec(ResetCounter(), symmetry=False)
    guided = [
        simulate(model, SimulationOptions(seed=3, traces=300, depth=60, guided=True))
        for _ in range(2)
    ]
    for r in guided:
        assert r.verdict is Verdict.VIOLATION and r.violated == "BelowTop"
        assert r.simulation is not None and r.simulation.behaviour == 0
        assert r.trace is not None and r.trace.length == 24
    assert _figures(guided[0]) == _figures(guided[1])  # deterministic per seed
    # Without novelty (all successors seen), the family taken least is preferred:
    # die_hard's six actions are each taken in a guided walk.
    dh = CompiledSpec(load_spec_class("die_hard")(Target=99), symmetry=False)
    r = simulate(dh, SimulationOptions(seed=0, traces=5, depth=50, guided=True))
    assert r.simulation is not None and all(n > 0 for n in r.simulation.action_taken)


def test_swarm_on_the_command_line() -> None:
    spec = str(Path(__file__).parent / "fixtures" / "reset_counter.py")
    proc = subprocess.run(
        [*MCHECK, "simulate", spec, "--swarm", "--traces", "100", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 12, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["simulation"]["swarm_configuration"].startswith("Inc x")
    assert data["strategy"] == "simulate"


def test_the_default_hunt_is_the_swarm_with_guidance_and_tlc_s_walk_is_asked_for() -> None:
    """The best measured hunt (README, "Random simulation") is what a bare
    ``mcheck simulate`` runs; ``--no-swarm --no-guided`` is TLC's -simulate walk."""
    spec = str(Path(__file__).parent / "fixtures" / "reset_counter.py")
    runs = {}
    for extra in ([], ["--no-swarm", "--no-guided"]):
        proc = subprocess.run(
            [*MCHECK, "simulate", spec, "--traces", "100", "--json", *extra],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode in (3, 12), proc.stderr
        runs[bool(extra)] = json.loads(proc.stdout.strip().splitlines()[-1])["simulation"]
    assert runs[False]["swarm_configuration"] is not None
    assert runs[True]["swarm_configuration"] is None
    # Guidance fingerprints every successor: the guided walk saw them, the plain one not.
    assert runs[False] != runs[True]


def _figures(r: Result) -> tuple[Any, ...]:
    s = r.simulation
    assert s is not None
    return (
        r.verdict,
        r.violated,
        r.trace.labels() if r.trace is not None else None,
        r.trace.loop if r.trace is not None else None,
        s.behaviours,
        s.states,
        s.generated,
        s.deepest,
        s.distinct,
        s.action_generated,
        s.action_taken,
        s.behaviour,
        s.found_length,
        s.swarm,
    )


@pytest.mark.parametrize(
    ("spec", "variant", "props", "opts"),
    [
        ("die_hard", None, None, {"seed": 1, "traces": 500}),
        ("die_hard", None, None, {"seed": 1, "traces": 500, "swarm": True}),
        ("die_hard", None, None, {"seed": 1, "traces": 500, "swarm": True, "guided": True}),
        ("ratis_heartbeat_match_index", "fix", ["MatchIndexSound"], {"seed": 2, "traces": 40}),
        ("ratis_heartbeat_match_index", "bug", ["MatchIndexSound"], {"seed": 0, "traces": 2000}),
        (
            "ratis_empty_snapshot_index_default",
            "bug",
            ["FollowerEventuallyCatchesUp"],
            {"seed": 0, "traces": 500},
        ),
    ],
    ids=["violation", "swarm", "guided", "no-violation", "deep", "liveness"],
)
@pytest.mark.parametrize("workers", [2, 3])
def test_workers_give_one_process_answer_and_figures(
    spec: str, variant: str | None, props: Any, opts: dict[str, Any], workers: int
) -> None:
    model = _model(spec, variant, props)
    one = _sim(model, **opts)
    many = _sim(model, **opts, workers=workers)
    assert _figures(many) == _figures(one)


def test_workers_stop_at_ctrl_c_as_incomplete_with_partial_figures() -> None:
    import signal

    from tests.watch import Watched

    args = ["ratis_heartbeat_match_index", "--variant", "fix", "--property", "MatchIndexSound"]
    run = Watched("simulate", *args, "--workers", "2", "--json")
    run.wait_for("progress: behaviours")  # under way
    run.signal(signal.SIGINT)
    code, out, err = run.finish(timeout=60)
    assert code == 3, err
    data = json.loads(out.strip().splitlines()[-1])
    assert data["reason"] == "interrupted" and data["simulation"]["behaviours"] > 0


def test_workers_progress_tells_the_deepest_behaviour_so_far() -> None:
    """The progress line of `simulate --workers` said `deepest 0` (issue 43)."""
    from checker.simulate.core import SimulationStats

    model = _model("ratis_heartbeat_match_index", "fix", ["MatchIndexSound"])
    seen: list[SimulationStats] = []
    r = _sim(model, seed=0, traces=400, workers=2, progress=seen.append, progress_every=0.01)
    assert r.simulation is not None and seen
    assert all(p.deepest <= r.simulation.deepest for p in seen)
    assert max(p.deepest for p in seen) > 0


def test_workers_stop_at_the_timeout_as_incomplete() -> None:
    model = _model("ratis_heartbeat_match_index", "fix", ["MatchIndexSound"])
    r = _sim(model, seed=0, timeout=1.0, workers=2)
    assert r.verdict is Verdict.INCOMPLETE and r.exit_code == 3
    assert r.reason == "timeout 1.0s reached"
    assert r.simulation is not None and r.simulation.behaviours > 0
