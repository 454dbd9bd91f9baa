"""Hints print the command as the user typed it (.venv/bin/mcheck, mcheck, python -m
checker), so copying one works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checker.base import invocation

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("argv0", "path", "expected"),
    [
        (".venv/bin/mcheck", "/usr/bin", ".venv/bin/mcheck"),
        ("mcheck", "/usr/bin", "mcheck"),
        ("/opt/checker/__main__.py", "/usr/bin", "python -m checker"),
        ("pytest", "/usr/bin", "mcheck"),
    ],
)
def test_the_command_as_invoked(
    monkeypatch: pytest.MonkeyPatch, argv0: str, path: str, expected: str
) -> None:
    monkeypatch.setattr(sys, "argv", [argv0])
    monkeypatch.setenv("PATH", path)
    assert invocation.command() == expected


def test_a_venv_mcheck_on_path_is_plain_mcheck(monkeypatch: pytest.MonkeyPatch) -> None:
    venv_bin = Path(sys.executable).parent
    monkeypatch.setattr(sys, "argv", [str(venv_bin / "mcheck")])
    monkeypatch.setenv("PATH", str(venv_bin))
    assert invocation.command() == "mcheck"


def test_the_trace_hint_of_a_run(tmp_path: Path) -> None:
    """The hint names the very command to show the saved trace, in one piece even on
    a terminal narrower than the line (it is for copying)."""
    mcheck = Path(sys.executable).parent / "mcheck"
    if not mcheck.exists():
        pytest.skip("no mcheck script beside this interpreter")
    out = subprocess.run(
        [str(mcheck), "run", "die_hard", "--trace-out", str(tmp_path / "t.itf.json")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "60"},
    ).stdout
    assert f"({mcheck} show {tmp_path / 't.itf.json'})" in out
