"""Trace files are untrusted data: reading one never imports or calls what it names.

A trace comes from elsewhere (a CI artifact, a JIRA attachment).  Before this was fixed,
``#meta.types`` named ``os:system`` and a record tagged with it ran a shell command when
the trace was shown, viewed or replayed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.cli.commands import main
from checker.traces.itf import read_itf


def _exploit(tmp_path: Path, marker: Path) -> Path:
    """A die_hard-shaped trace whose values name dangerous callables as their types."""
    doc = {
        "#meta": {
            "spec": "die_hard",
            "variant": "default",
            "property": "BigJugNotFour",
            "types": {
                "Pwn": "os:system",
                "Trunc": "builtins:open",
                "Jugs": "os:system",
            },
        },
        "vars": ["big", "small"],
        "states": [
            {
                "#meta": {"index": 0, "action": "init"},
                "big": {"tag": "Pwn", "value": {"command": f"touch {marker}"}},
                "small": {"tag": "Trunc", "value": {"file": str(marker), "mode": "w"}},
            },
            {
                "#meta": {"index": 1, "action": "FillBig", "action_name": "FillBig"},
                "big": 5,
                "small": {"tag": "Jugs", "value": {"command": f"touch {marker}"}},
            },
        ],
    }
    path = tmp_path / "evil.itf.json"
    path.write_text(json.dumps(doc))
    return path


def test_reading_a_trace_never_imports_or_calls_what_it_names(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = _exploit(tmp_path, marker)
    before = set(sys.modules)
    trace = read_itf(path)
    assert not marker.exists()
    # The records are plain data, shown with their tags.
    big = trace.states[0]["big"]
    assert big.tag == "Pwn" and big.command == f"touch {marker}"
    assert set(sys.modules) - before == set()


@pytest.mark.parametrize(
    "args",
    [
        ["show", "{path}"],
        ["show", "{path}", "--full"],
        ["view", "{path}"],
        ["replay", "die_hard", "{path}"],
    ],
)
def test_no_command_runs_code_from_a_trace(tmp_path: Path, args: list[str]) -> None:
    marker = tmp_path / "pwned"
    path = _exploit(tmp_path, marker)
    result = CliRunner().invoke(main, [a.format(path=path) for a in args])
    assert not marker.exists(), "a command from the trace file ran"
    assert result.exception is None or isinstance(result.exception, SystemExit)
    if args[0] == "show":
        # The record shows as TLA+ writes one: its fields, the string quoted.
        assert '[command |-> "touch' in result.stdout
    if args[0] == "replay":
        # Not a behaviour of die_hard: a divergence, reported, not executed.
        assert result.exit_code == 1
