"""A TLA+ user's first day (issue 46, "wrong or broken"): no exit 255 for a mutable
value under symmetry, TLC's exit code for an action property, non-boolean predicates
refused, and a closed pipe that leaves the run's exit code alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "fixtures" / "first_day"
ROOT = Path(__file__).resolve().parent.parent
MUTABLE = str(HERE / "symmetric_mutable.py")
NOT_BOOLEAN = str(HERE / "not_boolean.py")


def _mcheck(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "checker", *args],
        stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip


MODES = [
    ("run",),
    ("run", "--no-cache"),
    ("run", "--workers", "2"),
    ("simulate", "--depth", "5"),
    ("simulate", "--depth", "5", "--swarm"),
    ("simulate", "--depth", "5", "--guided"),
    ("simulate", "--depth", "5", "--workers", "2"),
]


@pytest.mark.parametrize("symmetry", [(), ("--no-symmetry",)], ids=["symmetry", "plain"])
@pytest.mark.parametrize("mode", MODES, ids=[" ".join(m) for m in MODES])
def test_a_mutable_value_is_named_and_exit_2_with_or_without_symmetry(
    mode: tuple[str, ...], symmetry: tuple[str, ...]
) -> None:
    if mode[0] == "simulate" and symmetry:
        pytest.skip("simulate has no symmetry option: the first row covers it")
    got = _mcheck(mode[0], MUTABLE, *mode[1:], *symmetry)
    assert got.returncode == 2, got.stdout + got.stderr
    last = got.stderr.strip().splitlines()[-1]
    assert last.startswith("mcheck: error: symmetric_mutable: variable owner holds a dict"), last
    assert "internal error" not in got.stderr


def test_a_mutable_value_on_a_cluster_is_named_too() -> None:
    got = _mcheck("simulate", MUTABLE, "--depth", "5", "--cluster", "local:2")
    assert got.returncode == 2, got.stdout + got.stderr
    assert "variable owner holds a dict" in got.stderr


def test_an_action_property_violated_exits_13_as_tlc() -> None:
    """TLC: "Action property NeverChangeColor is violated." and exit 13 (measured
    with TLC on MCEWD840act.cfg, tests/fixtures/tlc)."""
    port = str(ROOT / "tests" / "fixtures" / "tlc" / "ports.py") + ":MCEWD840"
    for args in (("run", port), ("run", port, "--no-cache"), ("simulate", port, "--depth", "20")):
        got = _mcheck(*args, "--property", "NeverChangeColor")
        assert got.returncode == 13, got.stdout + got.stderr
        assert "NeverChangeColor" in got.stdout
    invariant = _mcheck("run", port, "--invariant", "TokenAlwaysBlack")
    assert invariant.returncode == 12, invariant.stdout + invariant.stderr


@pytest.mark.parametrize(
    ("variant", "words"),
    [
        ("invariant", "invariant Room returned 3 (int), not a boolean"),
        ("constraint", "constraint returned 0 (int), not a boolean"),
        ("temporal", "temporal property Visits returned 0 (int), not a boolean"),
        ("step", "action property Grows returned None (NoneType), not a boolean"),
    ],
)
@pytest.mark.parametrize("mode", [("run",), ("run", "--no-cache"), ("simulate", "--depth", "5")])
def test_a_predicate_that_is_not_boolean_is_refused_by_name(
    variant: str, words: str, mode: tuple[str, ...]
) -> None:
    got = _mcheck(mode[0], NOT_BOOLEAN, *mode[1:], "--variant", variant)
    assert got.returncode == 2, got.stdout + got.stderr
    assert words in got.stderr, got.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("run", "die_hard"), 12),
        (("run", "die_hard", "--json"), 12),
        (("run", "die_hard", "--workers", "2"), 12),
        (("simulate", "die_hard"), 12),
        (("run", "tcommit"), 0),
    ],
)
def test_a_closed_pipe_leaves_the_exit_code_of_the_run(args: tuple[str, ...], code: int) -> None:
    """`mcheck run X | head -1`: the reader gone before the first line (the pipe's
    read end closed before mcheck starts, so the first write fails every time)."""
    r, w = os.pipe()
    os.close(r)
    try:
        got = _mcheck(*args, stdout=w)
    finally:
        os.close(w)
    assert got.returncode == code, got.stderr
    assert "Traceback" not in got.stderr and "BrokenPipe" not in got.stderr


# -- saying it once, in TLA+'s order ------------------------------------------------
PORTS = str(ROOT / "tests" / "fixtures" / "tlc" / "ports.py")


def test_a_violation_is_stated_once_before_its_trace(tmp_path: Path) -> None:
    got = _mcheck("run", "die_hard", "--trace-out", str(tmp_path / "t.itf.json"))
    out = got.stdout
    assert got.returncode == 12
    assert out.count("Invariant BigJugNotFour is violated.") == 1
    verdict = out.index("Invariant BigJugNotFour is violated.")
    assert verdict < out.index("counterexample, 6 actions:")
    assert "die_hard (default): 6 steps" not in out  # the run's header already says so
    full = _mcheck("show", str(tmp_path / "t.itf.json"), "--full").stdout
    assert "initial state: " not in full
    assert full.index("State 1: initial state") < full.index("State 2: ")


def test_a_zero_step_counterexample_has_no_empty_table(tmp_path: Path) -> None:
    spec = tmp_path / "at_once.py"
    spec.write_text(
        "from typing import NamedTuple\n"
        "from checker import Spec, action, invariant\n"
        "class S(NamedTuple):\n    x: int\n"
        "class AtOnce(Spec):\n"
        "    '''Violated in the initial state.'''\n"
        "    def init(self):\n        return [S(0)]\n"
        "    @action\n    def Inc(self, s):\n        return S(s.x + 1) if s.x < 2 else None\n"
        "    @invariant\n    def Positive(self, s):\n        return s.x > 0\n"
    )
    got = _mcheck("run", str(spec), "--trace-out", str(tmp_path / "t.itf.json"))
    assert got.returncode == 12
    assert "mcheck at_once (variant default; bfs)" in got.stdout  # no "; ;" without constants
    assert "counterexample, 0 actions:" in got.stdout
    assert "┏" not in got.stdout and "+---" not in got.stdout
    assert "X Positive is violated in the initial state" in got.stdout


def test_a_lasso_is_said_to_violate_the_property() -> None:
    got = _mcheck("run", f"{PORTS}:MCTokenRing")
    assert got.returncode == 13, got.stdout + got.stderr
    assert "counterexample, 9 actions (a lasso):" in got.stdout
    assert "loop: back in the initial state; steps 1 to 9 repeat forever" in got.stdout
    assert "X the lasso violates CounterSettles" in got.stdout
    assert "in the last state" not in got.stdout


def test_the_viewer_marks_the_loop_where_it_is() -> None:
    from io import StringIO

    from rich.console import Console

    from checker.traces.timeline import TimelineData
    from checker.traces.viewer import Viewer

    states = [{"x": i} for i in (0, 1, 2, 3)]
    data = TimelineData(
        spec="s", variant="v", var_names=("x",), states=states,
        actions=[None, "A", "B", "C"], actors=[None] * 4, lanes=[], loop=1,
    )  # fmt: skip
    v = Viewer(data)

    def screen() -> str:
        out = StringIO()
        Console(file=out, width=100, color_system=None).print(v.render())
        return out.getvalue()

    assert "loop" not in screen()  # the initial state is before the loop
    v.handle("right")
    assert "[the loop comes back to this state]" in screen()
    v.handle("right")
    assert "[in the loop: steps 2 to 3 repeat]" in screen()


def test_seconds_are_never_zero_beside_a_rate() -> None:
    from checker.cli.commands import seconds_text

    assert seconds_text(0.0012) == "0.0012"
    assert seconds_text(0.456) == "0.46"
    assert seconds_text(12.345) == "12.35"
    assert seconds_text(0.0) == "0"


def test_the_header_says_how_the_run_explores() -> None:
    got = _mcheck("run", "die_hard", "--workers", "2")
    assert "; bfs, 2 workers)" in got.stdout.splitlines()[0]


# -- fairness and declarations as a TLA+ user writes them ----------------------------
def test_a_fairness_predicate_reads_the_constants() -> None:
    spec = str(HERE / "fair_constant.py")
    assert _mcheck("run", spec).returncode == 0
    unfair = _mcheck("run", spec, "--const", "Fair=0")
    assert unfair.returncode == 13, unfair.stdout + unfair.stderr
    assert "OneFinishes" in unfair.stdout


def _declared(tmp_path: Path, fairness: str, premise: str) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "declared.py"
    spec.write_text(
        "from typing import NamedTuple\n"
        "from checker import Spec, action, leads_to\n"
        "class S(NamedTuple):\n    x: int\n"
        "class Declared(Spec):\n"
        "    '''Declarations under test.'''\n"
        "    check_deadlock = False\n"
        f"    fairness = {{{fairness!r}: 'weak'}}\n"
        "    def init(self):\n        return [S(0)]\n"
        "    @action\n    def Step(self, s):\n        return S(s.x + 1) if s.x < 2 else None\n"
        f"    @leads_to({premise})\n    def Reaches(self, s):\n        return s.x == 2\n"
    )
    return _mcheck("run", str(spec))


def test_declaration_errors_say_what_is_wrong_not_that_the_spec_does_not_import(
    tmp_path: Path,
) -> None:
    lam = _declared(tmp_path, "Step", "lambda s: s.x == 0")
    assert lam.returncode == 2
    assert "does not import" not in lam.stderr
    assert "@leads_to Reaches: its premise takes (s), but is called as (self, state)" in lam.stderr
    typo = _declared(tmp_path, "Stpe", "lambda self, s: s.x == 0")
    assert typo.returncode == 2
    assert "fairness names 'Stpe', which is not an action (did you mean \"Step\"?)" in typo.stderr
    assert _declared(tmp_path, "Step", "lambda self, s: s.x == 0").returncode == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("run", "die_hrd"), "unknown spec 'die_hrd' (did you mean \"die_hard\"?)"),
        (("run", "die_hard", "--variant", "defualt"), '(did you mean "default"?)'),
        (("run", "die_hard", "--const", "Bgi=3"), '(did you mean "Big"?)'),
        (("run", "die_hard", "--invariant", "BigJugNotFor"), '(did you mean "BigJugNotFour"?)'),
    ],
)
def test_a_near_name_is_suggested(args: tuple[str, ...], words: str) -> None:
    got = _mcheck(*args)
    assert got.returncode == 2 and words in got.stderr, got.stderr


def test_an_output_into_a_new_folder_is_written_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "build" / "die_hard.graphml"
    assert _mcheck("graph", "die_hard", "--out", str(out)).returncode == 0
    assert out.exists()
    (tmp_path / "afile").write_text("")
    bad = _mcheck("graph", "die_hard", "--out", str(tmp_path / "afile" / "g.graphml"))
    assert bad.returncode == 2, bad.stderr
    assert bad.stderr.startswith("mcheck: error: cannot write") and bad.stderr.count("\n") == 1
