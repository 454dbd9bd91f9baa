"""A corpus of damaged trace files: every command that reads one answers in one line.

Each case starts from a real counterexample (die_hard's) and breaks one thing, the
way a truncated CI artifact, a hand-edited attachment or a hostile file would.  No
command may print a traceback or an internal error (exit 255); a file it cannot use
is exit 2 with one line.  New commands that read traces belong in COMMANDS.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from checker.cli.commands import main

Mutation = Callable[[dict[str, Any]], Any]


def _set(path: list[str | int], value: Any) -> Mutation:
    def apply(doc: dict[str, Any]) -> None:
        target: Any = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return apply


MUTATIONS: dict[str, Mutation] = {
    "vars is a number": _set(["vars"], 5),
    "vars holds numbers": _set(["vars"], [1, 2]),
    "#meta is a list": _set(["#meta"], [1]),
    "states is an object": _set(["states"], {"a": 1}),
    "a state is a number": _set(["states", 0], 5),
    "loop is a string": _set(["loop"], "x"),
    "loop is past the end": _set(["loop"], 10**6),
}
for key in ("model_values", "types", "lanes", "owners", "constants", "property_reads"):
    MUTATIONS[f"#meta.{key} is a list"] = _set(["#meta", key], [1])
    MUTATIONS[f"#meta.{key} is a string"] = _set(["#meta", key], "x")

RAW: dict[str, bytes] = {
    "binary bytes": b"\x00\xff\xfe{garbage",
    "100k-deep nesting": b"[" * 100_000 + b"]" * 100_000,
    "empty file": b"",
}

COMMANDS: list[Callable[[str], list[str]]] = [
    lambda p: ["show", p],
    lambda p: ["replay", "die_hard", p],
    lambda p: ["view", p],
]


@pytest.fixture(scope="module")
def die_hard_trace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("trace") / "dh.itf.json"
    r = CliRunner().invoke(main, ["run", "die_hard", "--trace-out", str(out)])
    assert r.exit_code == 12, r.output
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _answers_cleanly(path: Path) -> None:
    for command in COMMANDS:
        args = command(str(path))
        r = CliRunner().invoke(main, args, input="q")
        assert "Traceback" not in r.output + r.stderr, args
        assert r.exit_code != 255, (args, r.stderr)
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
        if r.exit_code == 2:
            assert len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_damaged_trace_is_answered_in_one_line(
    name: str, die_hard_trace: dict[str, Any], tmp_path: Path
) -> None:
    doc = copy.deepcopy(die_hard_trace)
    MUTATIONS[name](doc)
    path = tmp_path / "damaged.itf.json"
    path.write_text(json.dumps(doc))
    _answers_cleanly(path)


@pytest.mark.parametrize("name", sorted(RAW))
def test_a_file_that_is_not_json_is_exit_2(name: str, tmp_path: Path) -> None:
    path = tmp_path / "raw.itf.json"
    path.write_bytes(RAW[name])
    _answers_cleanly(path)
    r = CliRunner().invoke(main, ["show", str(path)])
    assert r.exit_code == 2
