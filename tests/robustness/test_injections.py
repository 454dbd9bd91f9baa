"""Names and strings from elsewhere cannot steer the terminal, CI or the file system.

A spec's name, a state's strings, a gate check's name and command-line values end up
in terminal output, GitHub workflow commands, JUnit XML, the step summary and trace
file names.  Each case feeds the hostile form and checks that it arrives inert.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MCHECK = [sys.executable, "-m", "checker"]


def _mcheck(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCHECK, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_escape_sequences_in_states_are_shown_escaped(tmp_path: Path) -> None:
    """An OSC title and a clear-screen in a state string never reach the terminal raw."""
    spec = shutil.copy(FIXTURES / "escaped.py", tmp_path / "escaped.py")
    run = _mcheck("run", str(spec), cwd=tmp_path)
    assert run.returncode == 12
    assert "\x1b" not in run.stdout + run.stderr
    (trace,) = (tmp_path / "traces").glob("*.itf.json")
    for command in (["show", str(trace)], ["show", str(trace), "--full"]):
        shown = _mcheck(*command, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "\x1b" not in shown.stdout + shown.stderr
        assert "\\x1b]0;pwned" in shown.stdout


def test_a_spec_name_cannot_write_outside_the_traces_folder(tmp_path: Path) -> None:
    """name = "../../escaped": the default trace path stays in ./traces."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    spec = shutil.copy(FIXTURES / "escaped.py", work / "escaped.py")
    assert _mcheck("run", str(spec), cwd=work).returncode == 12
    written = list(tmp_path.rglob("*.itf.json"))
    assert len(written) == 1
    assert written[0].parent == work / "traces"


def test_an_undeclared_variant_is_refused(tmp_path: Path) -> None:
    """A spec without variants accepts only "default", so no path can ride on one."""
    run = _mcheck("run", "die_hard", "--variant", "/../../../x", cwd=tmp_path)
    assert run.returncode == 2
    assert "unknown variant" in run.stderr
    assert not list(tmp_path.rglob("*.itf.json"))


def test_rich_markup_in_user_values_is_printed_as_text(tmp_path: Path) -> None:
    """'[/b]' in a trace path or a check name is text, not a closing tag."""
    out = tmp_path / "a[b]" / "c[/b].itf.json"
    run = _mcheck("run", "die_hard", "--trace-out", str(out), cwd=tmp_path)
    assert run.returncode == 12, run.stderr
    assert out.exists()
    assert "c[/b].itf.json" in run.stdout.replace("\n", "")


_HOSTILE = "bad\\n::warning title=pwned::injected [/closing] \\u0001"


def test_gate_output_cannot_issue_workflow_commands(tmp_path: Path) -> None:
    """A check name with a newline and '::warning ...::' stays one inert line in the
    log, the annotations, the step summary, and well-formed JUnit XML."""
    manifest = tmp_path / "gate.toml"
    manifest.write_text(f'[[check]]\nname = "{_HOSTILE}"\nspec = "die_hard"\nexpect = "holds"\n')
    summary = tmp_path / "summary.md"
    junit = tmp_path / "junit.xml"
    run = _mcheck(
        "gate",
        str(manifest),
        "--junit",
        str(junit),
        "--jobs",
        "1",
        cwd=tmp_path,
        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert run.returncode == 1  # die_hard does not hold: the check fails, and says so
    for line in (run.stdout + run.stderr).splitlines():
        assert not line.lstrip().startswith("::warning"), line
        if line.startswith("::error"):
            assert "\n" not in line and "%0A" in line
    ET.parse(junit)  # well-formed despite the control character
    rows = [r for r in summary.read_text().splitlines() if r.startswith("|")]
    assert len(rows) == 3  # header, rule, one row: the newline did not split it
