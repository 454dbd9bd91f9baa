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
