"""The gate's worker processes: checks in parallel, all of them stopped at once.

A check is a whole run, which installs its own SIGTERM handler (a run stops cleanly on
SIGTERM as on Ctrl-C).  A pool that stops its workers with SIGTERM therefore only
interrupts the check each is on, and the worker takes the next one: the gate that
``concurrent.futures`` ran this way printed its summary on SIGTERM and then ran on, its
workers with it.  Here the coordinator owns its processes: it hands each one check at a
time over a pipe, waits on the pipes and on the processes themselves (a worker killed
by the OOM killer is noticed and replaced), and on an interruption kills every worker
with SIGKILL, which no handler can turn into "go on".  Workers also die with the
coordinator (:func:`checker.base.signals.worker_process`): nothing outlives a gate that
was killed outright.  Once the workers are up the command says so on stderr
(:func:`checker.base.signals.say_ready`), for scripts that wait for it.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from checker.base.signals import say_ready, worker_process


def _serve(run: Callable[[Any], Any], conn: Connection, parent: int) -> None:
    """A worker: run the checks it is handed until told to stop (None)."""
    worker_process(parent)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return  # the coordinator is gone
        if msg is None:
            return
        i, task = msg
        try:
            reply: tuple[str, int, Any] = ("ok", i, run(task))
        except KeyboardInterrupt:
            reply = ("interrupted", i, None)
        except Exception as exc:
            reply = ("error", i, f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


class CheckPool:
    """``workers`` processes running ``run(task)`` for the tasks given to :meth:`map`."""

    def __init__(self, workers: int, run: Callable[[Any], Any]) -> None:
        self.n = workers
        self.run_task = run
        self.ctx = mp.get_context("fork")
        self.procs: list[Any] = []
        self.conns: list[Connection] = []
        self.busy: list[int | None] = []

    def _start(self, w: int) -> None:
        mine, theirs = self.ctx.Pipe()
        proc = self.ctx.Process(
            target=_serve, args=(self.run_task, theirs, os.getpid()), daemon=True
        )
        proc.start()
        theirs.close()
        if w < len(self.procs):
            self.procs[w], self.conns[w], self.busy[w] = proc, mine, None
        else:
            self.procs.append(proc)
            self.conns.append(mine)
            self.busy.append(None)

    def map(self, tasks: list[tuple[int, Any]]) -> Iterator[tuple[str, int, Any]]:
        """Run the tasks ((index, task) pairs, in the order given) and yield each
        outcome as it comes: ("ok", index, result), ("error", index, why) or
        ("interrupted", index, None).  A KeyboardInterrupt (Ctrl-C, or SIGTERM turned
        into one) in the caller kills every worker before it propagates."""
        todo = list(reversed(tasks))
        try:
            for w in range(self.n):
                self._start(w)
            say_ready(f"the gate's {self.n} worker processes started")
            for w in range(self.n):
                self._give(w, todo)
            while any(b is not None for b in self.busy):
                ready = wait(
                    [c for c, b in zip(self.conns, self.busy, strict=True) if b is not None]
                    + [
                        p.sentinel
                        for p, b in zip(self.procs, self.busy, strict=True)
                        if b is not None
                    ]
                )
                for w in range(self.n):
                    i = self.busy[w]
                    if i is None:
                        continue
                    if self.conns[w] in ready:
                        try:
                            kind, at, value = self.conns[w].recv()
                        except (EOFError, OSError):
                            kind, at, value = "error", i, self._death(w)
                            self._start(w)
                        self.busy[w] = None
                        yield kind, at, value
                        self._give(w, todo)
                    elif self.procs[w].sentinel in ready:
                        why = self._death(w)
                        self._start(w)
                        yield "error", i, why
                        self._give(w, todo)
        except BaseException:
            self.kill()
            raise
        self.close()

    def _give(self, w: int, todo: list[tuple[int, Any]]) -> None:
        if todo:
            i, task = todo.pop()
            self.conns[w].send((i, task))
            self.busy[w] = i

    def _death(self, w: int) -> str:
        proc = self.procs[w]
        proc.join(timeout=1)
        code = proc.exitcode
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                return f"its worker process was killed ({signal.Signals(-code).name})"
        return f"its worker process died (exit code {code})"

    def running(self) -> list[int]:
        """The tasks being run now (their indexes)."""
        return [b for b in self.busy if b is not None]

    def kill(self) -> None:
        """Stop every worker at once (SIGKILL) and reap it."""
        for proc in self.procs:
            with contextlib.suppress(Exception):
                proc.kill()
        for proc in self.procs:
            with contextlib.suppress(Exception):
                proc.join(timeout=5)
        for conn in self.conns:
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        """Tell the idle workers to end, and reap them."""
        for conn in self.conns:
            with contextlib.suppress(Exception):
                conn.send(None)
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
