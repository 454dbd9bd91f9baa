"""SIGTERM ends every multi-process mode within seconds, whatever started it (issue 49).

A CI runner starts mcheck in the background (SIGINT ignored, inherited by every child),
in a session of its own (setsid), or under ``timeout``; a cancelled job then sends
SIGTERM.  The gate kept running after it (its workers ran the next checks), its summary
claiming 80 failures.  For the gate, ``run --workers``, ``simulate --workers`` and
``--cluster``, in each start mode: wait for the line the command prints once its
worker processes are up (never a fixed sleep), send SIGTERM, and the command must end
with exit 3 within seconds, its worker processes with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent

#: How long the command may take to end after SIGTERM ("within seconds", with room
#: for a loaded machine).
GRACE = 30.0

COMMANDS = {
    "gate": ["gate", str(ROOT / "pyproject.toml"), "--jobs", "2"],
    "run --workers": ["run", "raft", "--const", "MaxLogLen=1", "--no-symmetry", "--workers", "2"],
    "simulate --workers": ["simulate", "raft", "--workers", "2"],
}
MODES = ["foreground", "background", "setsid", "timeout"]


def _ignore_sigint() -> None:
    # What a non-interactive shell does to a command it starts with &.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(args: list[str], mode: str, cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """(the process to signal, the pid whose descendants are mcheck's workers)."""
    cmd = [sys.executable, "-m", "checker", *args]
    kwargs: dict[str, Any] = {"cwd": cwd, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    if mode == "background":
        kwargs["preexec_fn"] = _ignore_sigint
    elif mode == "setsid":
        kwargs["start_new_session"] = True
    elif mode == "timeout":
        cmd = ["timeout", "600", *cmd]
    proc = subprocess.Popen(cmd, **kwargs)
    return proc, proc.pid


def _wait_ready(proc: subprocess.Popen[bytes], lines: list[str]) -> None:
    """Read stderr until the readiness line (kept reading afterwards, so the command
    never blocks on a full pipe)."""
    ready = threading.Event()

    def pump() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode(errors="replace")
            lines.append(line)
            if "started" in line or "are up" in line:
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 300
    while not ready.wait(timeout=0.1):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("never ready:\n" + "".join(lines[-20:]))


def _ends_with_its_workers(args: list[str], mode: str, tmp_path: Path) -> None:
    proc, top = _start(args, mode, tmp_path)
    lines: list[str] = []
    try:
        _wait_ready(proc, lines)
        family = psutil.Process(top).children(recursive=True)
        assert family, "no worker processes"
        os.kill(proc.pid, signal.SIGTERM)
        started = time.monotonic()
        code = proc.wait(timeout=GRACE)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
    _, alive = psutil.wait_procs(family, timeout=GRACE)
    assert not alive, f"{len(alive)} worker process(es) outlived mcheck: {alive}"
    assert code == 3, (code, "".join(lines[-30:]))
    assert took < GRACE, took


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_sigterm_ends_every_multiprocess_mode(command: str, mode: str, tmp_path: Path) -> None:
    _ends_with_its_workers(COMMANDS[command], mode, tmp_path)


@pytest.mark.slow
def test_sigterm_ends_a_cluster_run(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    args = ["run", "raft", "--const", "MaxLogLen=1", "--no-symmetry", "--cluster", "local:2"]
    _ends_with_its_workers(args, "background", tmp_path)


def test_an_interrupted_gate_counts_passed_failed_and_stopped_apart(tmp_path: Path) -> None:
    """The summary said '0 passed, 80 failed' after an interruption, listing checks
    that never started as failures."""
    manifest = tmp_path / "gate.toml"
    manifest.write_text(
        '[[tool.mcheck.gate.check]]\nname = "quick"\nspec = "die_hard"\n'
        'expect = "violates BigJugNotFour"\n\n'
        '[[tool.mcheck.gate.check]]\nname = "long"\nspec = "raft"\n'
        'constants = { MaxLogLen = 1 }\nsymmetry = false\nexpect = "holds"\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "checker", "gate", str(manifest), "--jobs", "2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines: list[str] = []
    try:
        _wait_ready(proc, lines)
        # The quick check ends at once (the gate says so); the long one runs on.
        deadline = time.monotonic() + 300
        while not any("done: quick" in line for line in lines):
            assert time.monotonic() < deadline, "".join(lines[-20:])
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=GRACE)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.decode()
    assert proc.returncode == 3, text[-2000:]
    assert "1 passed, 0 failed, 1 interrupted or not started" in text, text[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_workers_die_with_a_coordinator_killed_outright(command: str, tmp_path: Path) -> None:
    """kill -9 of the coordinator left simulate's two workers walking forever (issue 43):
    a worker dies with its parent, by the kernel's parent-death signal."""
    proc, top = _start(COMMANDS[command], "background", tmp_path)
    lines: list[str] = []
    try:
        _wait_ready(proc, lines)
        family = psutil.Process(top).children(recursive=True)
        assert family
        proc.kill()
        proc.wait(timeout=GRACE)
    finally:
        if proc.poll() is None:
            proc.kill()
    _, alive = psutil.wait_procs(family, timeout=GRACE)
    assert not alive, f"{len(alive)} worker process(es) outlived a killed mcheck: {alive}"
