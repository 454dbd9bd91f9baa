"""The ``mcheck`` command line: exit codes, --json fields and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from checker.cli.commands import main

FIXTURES = Path(__file__).parent / "fixtures"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def last_json(stdout: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return data


def test_die_hard_json_reports_the_six_action_counterexample() -> None:
    code, out, _ = run("run", "die_hard", "--json")
    assert code == 12
    data = last_json(out)
    assert data["result"] == "violation"
    assert data["property"] == "BigJugNotFour"
    assert data["trace_length"] == 6
    for key in (
        "spec",
        "variant",
        "distinct_states",
        "states_generated",
        "depth",
        "seconds",
        "states_per_second",
        "constants",
        "symmetry",
    ):
        assert key in data
    assert data["spec"] == "die_hard"
    assert data["constants"] == {"Big": 5, "Small": 3, "Target": 4}
    assert data["symmetry"] is False


def test_human_output_shows_the_counterexample_steps() -> None:
    code, out, _ = run("run", "die_hard")
    assert code == 12
    assert "Invariant BigJugNotFour is violated" in out
    assert "counterexample, 6 actions" in out
    assert "BigToSmall" in out
    assert "big 5->4" in out
    assert "trace saved to traces/die_hard-default-BigJugNotFour.itf.json" in out


def test_a_holding_spec_exits_0() -> None:
    code, out, _ = run("run", "die_hard", "--const", "Target=7", "--json")
    assert code == 0
    data = last_json(out)
    assert data["result"] == "ok"
    assert data["distinct_states"] == 16


def test_limits_give_incomplete_never_ok() -> None:
    code, out, _ = run("run", "two_phase", "--max-states", "10", "--json")
    assert code == 3
    assert last_json(out)["result"] == "incomplete"
    code, out, _ = run("run", "two_phase", "--max-depth", "3", "--json")
    assert code == 3
    assert "max-depth" in last_json(out)["reason"]
    # A depth limit the space fits within is a complete run.
    code, out, _ = run("run", "two_phase", "--max-depth", "50", "--json")
    assert code == 0


def test_deadlock_exit_11_and_no_deadlock_flag() -> None:
    spec = str(FIXTURES / "deadlocking.py")
    code, out, _ = run("run", spec, "--json")
    assert code == 11
    data = last_json(out)
    assert data["result"] == "deadlock"
    assert data["trace_length"] == 4
    code, out, _ = run("run", spec, "--no-deadlock", "--json")
    assert code == 0


def test_dfs_strategy_and_invariant_selection() -> None:
    code, out, _ = run("run", "die_hard", "--strategy", "dfs", "--json")
    assert code == 12
    assert last_json(out)["strategy"] == "dfs"
    # Selecting one of several invariants changes the verdict: over all of them the
    # first to break (NoFalseAlreadyInstalled, 2 actions), selected MatchIndexSound (3).
    spec = "ratis_empty_snapshot_index_default"
    code, out, _ = run("run", spec, "--variant", "bug", "--invariant", "all", "--json")
    assert (code, last_json(out)["property"], last_json(out)["trace_length"]) == (
        12,
        "NoFalseAlreadyInstalled",
        2,
    )
    for flag in ("--invariant", "--property"):
        code, out, _ = run("run", spec, "--variant", "bug", flag, "MatchIndexSound", "--json")
        d = last_json(out)
        assert (code, d["property"], d["trace_length"]) == (12, "MatchIndexSound", 3)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("run", "no_such_spec"), "unknown spec 'no_such_spec'"),
        (("run", "die_hard", "--const", "Nope=1"), "unknown constant 'Nope'"),
        (("run", "die_hard", "--const", "Big=five"), "expects an integer"),
        (("run", "die_hard", "--const", "Big"), "NAME=VALUE"),
        (("run", "die_hard", "--variant", "fix"), "unknown variant 'fix'"),
        (("run", "die_hard", "--invariant", "Nope"), "unknown property 'Nope'"),
        (("run", str(FIXTURES / "broken_import.py")), "does not import"),
        (("run", str(FIXTURES / "broken_syntax.py")), "SyntaxError"),
        (("run", str(FIXTURES / "missing.py")), "not found"),
        # "-1" must not become one server named "-1" (a vacuous pass); names are
        # identifiers, so no markup or path characters reach reports and file names.
        (("run", "raft", "--const", "Server=-1"), "a count of at least 1"),
        (("run", "raft", "--const", "Server=0"), "a count of at least 1"),
        (("run", "raft", "--const", "Server=a[/b],c"), "identifiers like s1"),
        (("run", "raft", "--const", "Server=s1,s1"), "names a model value twice"),
        (("run", str(FIXTURES / "misspelt_setting.py")), "did you mean 'symmetry'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], needle: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


@pytest.mark.parametrize(
    ("variant", "needle", "length"),
    [
        ("action", "action Step raised ZeroDivisionError", 3),
        ("invariant", "invariant Fine raised KeyError", 2),
    ],
)
def test_spec_code_that_raises_is_reported_with_state_and_trace(
    variant: str, needle: str, length: int
) -> None:
    code, out, err = run("run", str(FIXTURES / "raising.py"), "--variant", variant)
    assert code == 2
    assert needle in err
    assert "in state:" in err
    assert f"trace that reached it ({length} actions)" in err
    assert "Traceback" not in err + out


def test_list_shows_specs_variants_and_invariants() -> None:
    code, out, _ = run("list")
    assert code == 0
    for needle in ("die_hard", "raft", "two_phase", "BigJugNotFour", "ElectionSafety"):
        assert needle in out


def test_console_script_is_installed() -> None:
    # The packaging exposes the `mcheck` command (not only the click object).
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "run", "die_hard", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 12
    assert last_json(proc.stdout)["trace_length"] == 6


def test_a_run_without_a_terminal_logs_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI logs get a progress line now and then (TLC: once a minute), on stderr."""
    import checker.cli.commands as cli

    monkeypatch.setattr(cli, "LOG_PROGRESS_EVERY", 0.2)
    r = CliRunner().invoke(
        main, ["run", "raft", "--const", "MaxLogLen=0", "--no-symmetry", "--timeout", "3", "--json"]
    )
    assert r.exit_code == 3
    lines = [x for x in r.stderr.splitlines() if x.startswith("progress: distinct ")]
    assert lines, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["result"] == "incomplete"
