"""Run ``mcheck`` in a process of its own and wait for what it says, not for the clock.

A fault test signals or kills a run that is under way.  Sleeping a fixed time before
doing so tests the machine: loaded, the run has not started yet; fast, it has already
finished.  :class:`Watched` reads the process's output as it comes and lets a test
wait for a readiness line (the first progress line of an exploration, with
``MCHECK_PROGRESS_EVERY`` set short), with a generous timeout that only a hung run
reaches.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
MCHECK = [sys.executable, "-m", "checker"]

#: Seconds between progress lines while watched (the readiness signal).
PROGRESS_EVERY = "0.2"


def _as_from_a_terminal() -> None:
    # Started as a background job of a non-interactive shell (a CI runner's "cmd &"),
    # the test process and its children inherit SIGINT ignored, and mcheck rightly
    # keeps that (as nohup'd jobs expect): give it the disposition a terminal gives.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watched:
    """An ``mcheck`` process whose stdout and stderr lines are collected as they come."""

    def __init__(
        self, *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, cmd: Any = None
    ) -> None:
        self.proc = subprocess.Popen(
            cmd if cmd is not None else [*MCHECK, *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "MCHECK_PROGRESS_EVERY": PROGRESS_EVERY, **(env or {})},
            preexec_fn=_as_from_a_terminal,
        )
        self.lines: dict[str, list[str]] = {"out": [], "err": []}
        self.cond = threading.Condition()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, "out"), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, "err"), daemon=True),
        ]
        for t in self.readers:
            t.start()

    @property
    def pid(self) -> int:
        """The process id."""
        return self.proc.pid

    def _read(self, stream: IO[str], name: str) -> None:
        for line in stream:
            with self.cond:
                self.lines[name].append(line)
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, text: str, stream: str = "err", timeout: float = 180.0) -> str:
        """The first line of ``stream`` that contains ``text``, once it is written.
        Fails (with everything read so far) if the process ends first, or after
        ``timeout`` seconds: far beyond what a loaded machine needs."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[stream]:
                    if text in line:
                        return line
                if self.proc.poll() is not None and not any(t.is_alive() for t in self.readers):
                    raise AssertionError(
                        f"mcheck ended (exit {self.proc.returncode}) before writing {text!r}:\n"
                        + "".join(self.lines["out"] + self.lines["err"])[-3000:]
                    )
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {text!r} within {timeout} s")
                self.cond.wait(min(left, 0.5))

    def progress(self, timeout: float = 180.0) -> str:
        """Wait until the exploration is under way: its first progress line."""
        return self.wait_for("progress: distinct", timeout=timeout)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the process."""
        self.proc.send_signal(sig)

    def finish(self, timeout: float = 120.0) -> tuple[int, str, str]:
        """Wait for the end: (exit code, stdout, stderr); kill it after ``timeout``."""
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        for t in self.readers:
            t.join(timeout=10)
        return self.proc.returncode, "".join(self.lines["out"]), "".join(self.lines["err"])
