"""Every bad input is one line and exit 2, every fault a clean end, no evidence lost.

Each case here ended in exit 255 ("internal error"), a traceback, a hang, a pass that
proved nothing, or output that dropped what the user needed (issue 28).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.cli.commands import main
from checker.cli.gate import markdown_summary
from checker.traces.picture import mermaid
from checker.traces.timeline import TimelineData

ROOT = Path(__file__).resolve().parents[2]
MCHECK = [sys.executable, "-m", "checker"]


def _one_line_error(result: object, *words: str, code: int = 2) -> None:
    exit_code = getattr(result, "exit_code", None)
    if exit_code is None:
        exit_code = getattr(result, "returncode")  # noqa: B009
    stderr = str(getattr(result, "stderr"))  # noqa: B009
    assert exit_code == code, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "internal error" not in lines[0] and "Traceback" not in stderr
    for w in words:
        assert w in lines[0], lines[0]


# -- mcheck validate ------------------------------------------------------------------


def _validate(tmp_path: Path, text: str, name: str = "log.ndjson") -> object:
    log = tmp_path / name
    log.write_text(text)
    return CliRunner().invoke(main, ["validate", "pysyncobj_raft", str(log)])


def test_an_event_missing_a_parameter_the_mapping_reads_names_its_line(tmp_path: Path) -> None:
    log = (
        '{"event": "Timeout", "params": {"node": "a"}}\n'
        '{"event": "Vote", "params": {"node": "b"}}\n'
    )
    result = _validate(tmp_path, log)
    _one_line_error(result, "line 2", "'Vote' has no parameter 'candidate'")


def test_a_huge_integer_in_a_log_is_a_malformed_line(tmp_path: Path) -> None:
    log = '{"event": "Timeout", "params": {"node": "a", "n": ' + "9" * 5000 + "}}\n"
    _one_line_error(_validate(tmp_path, log), "log.ndjson:1")


def test_an_empty_log_proves_nothing_and_says_so(tmp_path: Path) -> None:
    for text in ("", "# only a comment\n\n"):
        _one_line_error(_validate(tmp_path, text), "holds no event")


def test_an_endless_log_is_read_with_a_bound() -> None:
    proc = subprocess.run(
        [*MCHECK, "validate", "pysyncobj_raft", "/dev/zero", "--format", "ndjson"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    _one_line_error(proc, "larger than")


# -- --timeout ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "simulate", "validate"])
@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_timeout_that_is_not_a_duration_is_refused_everywhere(command: str, value: str) -> None:
    args = [command, "die_hard", "--timeout", value]
    if command == "validate":
        args.insert(2, "log.ndjson")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "not a positive, finite number of seconds" in result.output + result.stderr


# -- the gate -------------------------------------------------------------------------


def _manifest(tmp_path: Path) -> Path:
    path = tmp_path / "gate.toml"
    path.write_text('[[check]]\nspec = "die_hard"\nexpect = "violates BigJugNotFour"\n')
    return path


@pytest.mark.parametrize("target", ["missing/folder/junit.xml", "/proc/junit.xml"])
def test_a_junit_report_that_cannot_be_written_is_refused_before_any_check(
    tmp_path: Path, target: str
) -> None:
    junit = target if target.startswith("/") else str(tmp_path / target)
    result = CliRunner().invoke(main, ["gate", str(_manifest(tmp_path)), "--junit", junit])
    _one_line_error(result, "cannot write the JUnit report")
    assert "passed" not in result.stdout  # refused before running anything


def test_a_manifest_that_is_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    loop = tmp_path / "gate.toml"
    loop.symlink_to(loop)
    _one_line_error(CliRunner().invoke(main, ["gate", str(loop)]), "cannot read the manifest")


def test_a_newline_in_a_check_name_stays_in_its_step_summary_row(tmp_path: Path) -> None:
    from checker.cli.gate import GateCheck, GateOutcome

    check = GateCheck(
        name="evil\n| injected | row |\n<img src=x>",
        spec="die_hard",
        variant=None,
        constants={},
        invariants=[],
        expect="holds",
    )
    table = markdown_summary([GateOutcome(check, "ok", None, None, 14, 0.1)])
    rows = table.strip().splitlines()
    assert len(rows) == 3, table
    assert rows[2].count(" | ") == 7
    # Markup arrives as text: every < is escaped.
    assert table.count("<") == table.count("\\<")


# -- pictures and the viewer ----------------------------------------------------------


def test_mermaid_output_passes_no_directive_through() -> None:
    evil = "%%{init: {'theme': 'dark', 'securityLevel': 'loose'}}%%"
    data = TimelineData(
        spec="s",
        variant="v",
        var_names=("x",),
        states=[{"x": 0}, {"x": evil}],
        actions=[None, f"Step({evil})"],
        actors=[None, None],
        lanes=[],
        property="P",
        kind="violation",
        reads=["x"],
    )
    text = mermaid(data)
    assert "%%" not in text and "%" not in text


def test_a_trace_whose_loop_is_no_state_of_it_is_refused(tmp_path: Path) -> None:
    # The trace is made here: traces/*.json are outputs, absent from a clean checkout.
    made = tmp_path / "die_hard.itf.json"
    run = CliRunner().invoke(main, ["run", "die_hard", "--trace-out", str(made)])
    assert run.exit_code == 12, run.output
    doc = json.loads(made.read_text())
    for loop in (99, -1, "2"):
        doc["loop"] = loop
        path = tmp_path / "t.itf.json"
        path.write_text(json.dumps(doc))
        for command in ("show", "view"):
            result = CliRunner().invoke(main, [command, str(path)])
            _one_line_error(result, "'loop' is")


# -- spec errors keep their evidence --------------------------------------------------

RAISING = """
from typing import NamedTuple
from checker import Spec, action, invariant

class S(NamedTuple):
    a: int
    b: int

class RaiseNT(Spec):
    def init(self):
        return [S(0, 0)]

    @action
    def IncA(self, s):
        if s.a == 2 and s.b == 1:
            raise KeyError("boom")
        return s._replace(a=s.a + 1) if s.a < 5 else None

    @action
    def IncB(self, s):
        return s._replace(b=s.b + 1) if s.b < 5 else None

    @invariant
    def Fine(self, s):
        return True
"""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_action_that_raises_prints_the_trace_that_reached_it(
    tmp_path: Path, workers: str
) -> None:
    """With record states the fast engine's pilot met the error first and reported
    it without its trace."""
    spec = tmp_path / "raise_nt.py"
    spec.write_text(RAISING)
    proc = subprocess.run(
        [*MCHECK, "run", str(spec), "--workers", workers],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "action IncA raised KeyError: 'boom'" in proc.stderr
    assert "trace that reached it (3 actions)" in proc.stderr, proc.stderr
