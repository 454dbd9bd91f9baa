"""``--workers N``: the exploration core's backend over several processes.

The visited set is partitioned by fingerprint: worker ``w`` owns the fingerprints with
``fp % N == w``.  The coordinator (:class:`checker.explore.engine.Exploration`, the same loop
as one process) asks for one breadth-first level at a time:

1. every worker expands its frontier states (in ordinal order) with the shared
   :class:`~checker.explore.engine.Expansion` and sends each owner the (fingerprint, key) of
   its successors inside the constraint, where ``key = (ordinal of the parent, index
   of the successor)``; states outside the constraint are checked on the spot;
2. each owner keeps, per fingerprint it has not seen, the smallest key: the (parent,
   successor) through which one-process BFS discovers the state first;
3. the winners' generators check their invariants and keep the states (only the
   excess over an even share moves between workers, so pickling stays rare);
4. the level's new states, sorted by key, are the chunk the coordinator commits, and
   their ordinals are numbered in that order, which is one-process BFS's numbering.

So parent pointers, counts, depth and counterexamples equal those of one process.
Faults end the run within seconds: the coordinator waits on each worker's pipe *and*
its process sentinel, so a worker killed (by the OOM killer, say) or out of memory
stops the run as incomplete with a one-line reason; workers poll for a stop and exit
when the coordinator is gone, and every inherited pipe end is closed, so no process
outlives the run.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue as queue_mod
import signal
import time
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from checker.base.errors import MCheckError
from checker.base.signals import say_ready, worker_process
from checker.distributed.partition import LevelBackend, Partition
from checker.explore.engine import ChunkResult, WorkerLost
from checker.explore.expansion import ExpansionFactory, ExpansionSettings, Key, Restart
from checker.explore.options import Options
from checker.liveness.stategraph import GraphPart, GraphRecorder
from checker.model import Model

#: How long a worker waits for a peer's message before checking for a stop.
_POLL = 0.2


class _Stopped(Exception):
    """The coordinator stopped the run (or is gone) while this worker waited."""


class _Link:
    """A worker's side of the coordinator pipe, with orphan detection."""

    def __init__(self, conn: Connection, parent: int) -> None:
        self.conn = conn
        self.parent = parent
        self.stash: list[Any] = []

    def recv(self) -> Any:
        while True:
            if self.stash:
                return self.stash.pop(0)
            if self.conn.poll(_POLL):
                msg = self.conn.recv()
                if msg[0] == "stop":
                    raise _Stopped
                return msg
            if os.getppid() != self.parent:
                raise _Stopped

    def poll_stop(self) -> None:
        """Raise _Stopped if the coordinator said stop (keeping other commands)."""
        while self.conn.poll(0):
            msg = self.conn.recv()
            if msg[0] == "stop":
                raise _Stopped
            self.stash.append(msg)
        if os.getppid() != self.parent:
            raise _Stopped

    def send(self, msg: Any) -> None:
        self.conn.send(msg)


def _worker(
    w: int,
    n: int,
    model: Model,
    renamings: list[dict[Any, Any]],
    deadlock: bool,
    settings: ExpansionSettings,
    make: ExpansionFactory,
    graph: bool,
    inboxes: list[Any],
    conn: Connection,
    others: list[Connection],
    parent: int,
) -> None:
    """One worker process: owns fingerprints ``fp % n == w`` and expands its states."""
    worker_process(parent)
    for c in others:  # ends inherited from the fork that are not this worker's
        with contextlib.suppress(OSError):
            c.close()
    link = _Link(conn, parent)
    try:
        _serve(w, n, model, renamings, deadlock, settings, make, graph, inboxes, link)
    except _Stopped:
        return
    except Restart as exc:
        with contextlib.suppress(Exception):
            link.send(("restart", exc))
    except MemoryError:
        with contextlib.suppress(Exception):
            link.send(("failed", f"worker {w} ran out of memory"))
    except MCheckError as exc:
        # The spec's own error (a refused value, say): the coordinator raises it as one
        # process would (exit 2), not as a worker lost (incomplete).
        try:
            link.send(("error", exc))
        except Exception:
            with contextlib.suppress(Exception):
                link.send(("failed", str(exc)))
    except BaseException as exc:
        with contextlib.suppress(Exception):
            link.send(("failed", f"worker {w} failed: {type(exc).__name__}: {exc}"))
    finally:
        # Whatever is still queued for a peer is no longer wanted (the level is over or
        # the run stopped); without this, exit blocks on a dead peer's full pipe.
        for q in inboxes:
            with contextlib.suppress(Exception):
                q.cancel_join_thread()


def _serve(
    w: int,
    n: int,
    model: Model,
    renamings: list[dict[Any, Any]],
    deadlock: bool,
    settings: ExpansionSettings,
    make: ExpansionFactory,
    graph: bool,
    inboxes: list[Any],
    link: _Link,
) -> None:
    part = Partition(w, n, model, renamings, deadlock, settings, make, graph)
    inbox = inboxes[w]
    stash: dict[str, list[Any]] = {}

    def receive(tag: str) -> list[Any]:
        # Peers run ahead: a later phase's message may come first; keep it for later.
        got = stash.pop(tag, [])
        while len(got) < n:
            try:
                t, payload = inbox.get(timeout=_POLL)
            except queue_mod.Empty:
                link.poll_stop()
                continue
            if t == tag:
                got.append(payload)
            else:
                stash.setdefault(t, []).append(payload)
        return got

    while True:
        cmd = link.recv()
        op = cmd[0]
        if op == "seed":
            part.seed(cmd[1])
            link.send(("ok",))
            continue
        if op == "graph":
            link.send(("graph", part.graph_part()))
            continue
        assert op == "level", op
        if part.log is not None:
            # The previous level's edges (their targets all numbered by now): the
            # coordinator adds them to the graph while this level is expanded.
            link.send(("edges", part.graph_part()))
        generated, act_gen, outgoing = part.expand(cmd[1])
        for o in range(n):
            inboxes[o].put(("submit", (w, outgoing[o])))
        link.send(("expanded", generated, act_gen))
        won = part.own(receive("submit"))
        for o in range(n):
            inboxes[o].put(("won", won[o]))
        # won[] from each owner lists what this worker won: the states stay here.
        link.send(("checked", *part.check(receive("won"))))
        # -- rebalance: the coordinator says how many states go to whom -----------
        plan = link.recv()
        assert plan[0] == "balance", plan[0]
        for o, shipped in enumerate(part.ship(plan[1])):
            inboxes[o].put(("ship", shipped))
        link.send(("keys", part.take(receive("ship"))))
        msg = link.recv()
        assert msg[0] == "ordinals", msg[0]
        part.number(msg[1])
        # The coordinator may ask how much of this level one process would have
        # generated before a stop; the next level's command ends the questions.
        while True:
            msg = link.recv()
            if msg[0] != "count_before":
                link.stash.append(msg)
                break
            link.send(("count", *part.count_before(tuple(msg[1]))))


class WorkerBackend(LevelBackend):
    """The :class:`~checker.explore.engine.Backend` over N worker processes (BFS only)."""

    def __init__(
        self,
        model: Model,
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        opts: Options,
        make: ExpansionFactory,
        settings: ExpansionSettings | None = None,
        recorder: GraphRecorder | None = None,
    ) -> None:
        super().__init__(model, renamings, deadlock, opts, make, settings, recorder)
        self.workers = opts.workers
        self.ctx = mp.get_context("fork")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        self.inboxes: list[Any] = []

    # -- process management ----------------------------------------------------------
    def _launch(self) -> None:
        self.n = self.workers
        ctx = self.ctx
        self.inboxes = [ctx.Queue() for _ in range(self.n)]
        pipes = [ctx.Pipe() for _ in range(self.n)]
        parent = os.getpid()
        for w in range(self.n):
            mine, child = pipes[w]
            others = [c for i, (a, b) in enumerate(pipes) for c in (a, b) if i != w] + [mine]
            p = ctx.Process(
                target=_worker,
                args=(
                    w,
                    self.n,
                    self.model,
                    self.renamings,
                    self.deadlock,
                    self.settings,
                    self.make,
                    self.graph,
                    self.inboxes,
                    child,
                    others,
                    parent,
                ),
                daemon=True,
            )
            p.start()
            self.procs.append(p)
        say_ready(f"{self.n} worker processes started")
        for mine, child in pipes:
            child.close()  # only the worker holds its end: a dead worker gives EOF
            self.conns.append(mine)

    def _recv(self, w: int) -> Any:
        conn, proc = self.conns[w], self.procs[w]
        while True:
            # Every running worker's sentinel, not only w's: a worker waiting on w may
            # be waiting for what another worker was to send it through their queues,
            # and if that one died, w never answers (a killed worker hung a liveness
            # run so).  Another that ended is left out: its sentinel stays ready, and
            # waiting on it would spin.
            sentinels = [p.sentinel for p in self.procs if p is proc or p.exitcode is None]
            ready = wait([conn, *sentinels], timeout=1.0)
            if conn in ready:
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    raise WorkerLost(self._death(w)) from None
                if msg[0] == "failed":
                    raise WorkerLost(msg[1])
                if msg[0] in ("restart", "error"):
                    raise msg[1]
                return msg
            if proc.sentinel in ready or not proc.is_alive():
                raise WorkerLost(self._death(w))
            for v, other in enumerate(self.procs):
                # (a worker that ended cleanly is not lost: only a crash or a kill)
                if other.exitcode not in (None, 0):
                    raise WorkerLost(self._death(v))

    def _death(self, w: int) -> str:
        proc = self.procs[w]
        proc.join(timeout=0.5)
        code = proc.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        return f"worker {w} died ({how}); the run is incomplete"

    def _send(self, w: int, msg: Any) -> None:
        """Send to worker ``w``; a worker that died (its pipe broken) ends the run incomplete."""
        try:
            self.conns[w].send(msg)
        except OSError:  # BrokenPipeError, ConnectionResetError
            raise WorkerLost(self._death(w)) from None

    def _send_all(self, msg: Any) -> None:
        for w in range(len(self.conns)):
            self._send(w, msg)

    def close(self) -> None:
        """Stop every worker; none may outlive the run."""
        for c in self.conns:
            with contextlib.suppress(Exception):
                c.send(("stop",))
        deadline = time.monotonic() + 2.0
        for p in self.procs:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        for p in self.procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=1.0)
            if p.is_alive():
                p.kill()
                p.join(timeout=1.0)
        for c in self.conns:
            with contextlib.suppress(Exception):
                c.close()
        for q in self.inboxes:
            with contextlib.suppress(Exception):
                q.close()
                q.cancel_join_thread()
        self.conns, self.procs, self.inboxes = [], [], []

    # -- the Backend protocol ------------------------------------------------------
    def _seed(self, seeds: list[list[tuple[int, Any, int]]]) -> None:
        for w in range(self.n):
            self._send(w, ("seed", seeds[w]))
        for w in range(self.n):
            self._recv(w)

    def _graph_parts(self) -> list[GraphPart]:
        self._send_all(("graph",))
        return [self._recv(w)[1] for w in range(self.n)]

    def step(self) -> ChunkResult:
        """One breadth-first level across the workers."""
        n = self.n
        self._send_all(("level", self.limited()))
        if self.graph:
            self.add_graph_parts([self._recv(w)[1] for w in range(n)])
        expanded = [self._recv(w) for w in range(n)]
        generated = sum(e[1] for e in expanded)
        act_gen = [sum(col) for col in zip(*(e[2] for e in expanded), strict=True)]
        checked = [self._recv(w)[1:] for w in range(n)]

        def balance(plans: list[list[tuple[int, int]]]) -> list[tuple[np.ndarray, np.ndarray]]:
            for w, plan in enumerate(plans):
                self._send(w, ("balance", plan))
            return [self._recv(w)[1] for w in range(n)]

        def number(ordinals: list[np.ndarray]) -> None:
            for w, ords in enumerate(ordinals):
                self._send(w, ("ordinals", ords))

        def ask(key: Key) -> list[tuple[int, dict[int, int]]]:
            self._send_all(("count_before", key))
            return [self._recv(w)[1:] for w in range(n)]

        return self._finish(generated, act_gen, checked, balance, number, ask)
