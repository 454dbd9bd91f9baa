"""Every mcheck command README.md shows is accepted as written, and each whose
comment gives its exit code exits with that code (issue 46: "the README true as
printed")."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from checker.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PREFIX = ".venv/bin/mcheck "


def readme_commands() -> list[tuple[list[str], str]]:
    """Each ``.venv/bin/mcheck ...`` line of README's code blocks (continued lines
    joined) as its arguments, with the comment after it."""
    found: list[tuple[list[str], str]] = []
    in_block = False
    pending = ""
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            continue
        if pending:
            line, pending = pending + " " + line.strip(), ""
        if not line.startswith(PREFIX):
            continue
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1]
            continue
        command, _, comment = line[len(PREFIX) :].partition(" #")
        found.append((shlex.split(command), comment.strip()))
    return found


COMMANDS = readme_commands()


def test_the_readme_shows_commands() -> None:
    names = {args[0] for args, _ in COMMANDS}
    assert {"run", "show", "replay", "simulate", "validate", "gate", "resume"} <= names
    assert len(COMMANDS) >= 25


@pytest.mark.parametrize("args", [a for a, _ in COMMANDS], ids=[" ".join(a) for a, _ in COMMANDS])
def test_every_readme_command_is_accepted_as_written(args: list[str]) -> None:
    """Its command exists and takes every option as the README spells it."""
    assert args[0] in main.commands, args  # (no README command passes --values first)
    with main.make_context("mcheck", [args[0]]) as ctx:
        main.commands[args[0]].make_context(args[0], list(args[1:]), parent=ctx)


def _expected_exit(comment: str) -> int | None:
    m = re.match(r"(\d+)\b", comment) or re.search(r"\bexit (\d+)", comment)
    return int(m.group(1)) if m else None


RUNNABLE = [(a, _expected_exit(c)) for a, c in COMMANDS if _expected_exit(c) is not None]


@pytest.mark.parametrize(("args", "code"), RUNNABLE, ids=[" ".join(a) for a, _ in RUNNABLE])
def test_each_readme_command_with_an_exit_code_exits_with_it(
    args: list[str], code: int, tmp_path: Path
) -> None:
    # Run from a folder that sees the project's files but keeps what runs write.
    for name in ("tests", "specs", "invariants"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "logs").symlink_to(ROOT / "traces" / "logs")
    done = subprocess.run(
        [sys.executable, "-m", "checker", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == code, (args, done.stdout[-1500:], done.stderr[-1500:])
