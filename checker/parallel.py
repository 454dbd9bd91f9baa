"""``--workers N``: the exploration core's backend over several processes.

The visited set is partitioned by fingerprint: worker ``w`` owns the fingerprints with
``fp % N == w``.  The coordinator (:class:`checker.engine.Exploration`, the same loop
as one process) asks for one breadth-first level at a time:

1. every worker expands its frontier states (in ordinal order) with the shared
   :class:`~checker.engine.Expansion` and sends each owner the (fingerprint, key) of
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
import heapq
import multiprocessing as mp
import os
import queue as queue_mod
import signal
import time
from multiprocessing.connection import Connection, wait
from typing import Any

from checker.engine import (
    ChunkResult,
    Event,
    Key,
    NewState,
    Options,
    WorkerLost,
    _counter,
    make_expansion,
)
from checker.errors import ConfigError, EvaluationError, MCheckError
from checker.fast import CacheUnsound, LayoutChanged
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


def _event_summary(ev: Event | None) -> Any:
    """An event as plain data (spec exceptions need not pickle)."""
    if ev is None:
        return None
    err = None
    if ev.error is not None:
        err = (ev.error.where, str(ev.error), type(ev.error.cause).__name__)
    return (ev.key, ev.kind, ev.prop, ev.new, err)


def _event_of(summary: Any) -> Event | None:
    if summary is None:
        return None
    key, kind, prop, new, err = summary
    error = None
    if err is not None:
        where, text, _cause = err
        error = EvaluationError(where, _RemoteCause(text))
        error.args = (text,)
    return Event(tuple(key), kind, prop=prop, new=new, error=error)


class _RemoteCause(Exception):
    """A spec exception raised in a worker, carried back as its message."""


def _worker(
    w: int,
    n: int,
    model: Model,
    renamings: list[dict[Any, Any]],
    deadlock: bool,
    fast: dict[str, Any],
    inboxes: list[Any],
    conn: Connection,
    others: list[Connection],
    parent: int,
) -> None:
    """One worker process: owns fingerprints ``fp % n == w`` and expands its states."""
    # Ctrl-C reaches the whole process group: the coordinator handles it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for c in others:  # ends inherited from the fork that are not this worker's
        with contextlib.suppress(OSError):
            c.close()
    link = _Link(conn, parent)
    try:
        _serve(w, n, model, renamings, deadlock, fast, inboxes, link)
    except _Stopped:
        return
    except CacheUnsound as exc:
        with contextlib.suppress(Exception):
            link.send(("unsound", exc.what))
    except LayoutChanged as exc:
        with contextlib.suppress(Exception):
            link.send(("layout", exc.var))
    except MemoryError:
        with contextlib.suppress(Exception):
            link.send(("failed", f"worker {w} ran out of memory"))
    except MCheckError as exc:
        with contextlib.suppress(Exception):
            link.send(("failed", str(exc)))
    except BaseException as exc:
        with contextlib.suppress(Exception):
            link.send(("failed", f"worker {w} failed: {type(exc).__name__}: {exc}"))


def _serve(
    w: int,
    n: int,
    model: Model,
    renamings: list[dict[Any, Any]],
    deadlock: bool,
    fast: dict[str, Any],
    inboxes: list[Any],
    link: _Link,
) -> None:
    exp = make_expansion(model, renamings, deadlock, **fast)
    inbox = inboxes[w]
    visited: set[int] = set()
    # Fingerprints this worker already submitted to other owners: they are visited
    # there, whoever won them, so they need never cross a pipe again.
    remote_seen: set[int] = set()
    frontier: list[tuple[int, Any, int]] = []  # (ordinal, handle, depth)
    stash: dict[str, list[Any]] = {}
    nact = len(model.action_names)

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
            for ordinal, state, depth in cmd[1]:
                handle = exp.handle_of(state)
                visited.add(exp.fp_of(handle))
                frontier.append((ordinal, handle, depth))
            link.send(("ok",))
            continue
        assert op == "level", op
        limited: bool = cmd[1]
        # -- 1. expand -----------------------------------------------------------
        counts: list[tuple[int, list[int]]] = []
        generated = 0
        act_gen = [0] * nact
        first: Event | None = None
        cands: dict[int, tuple[Key, Any, int, int]] = {}
        for ordinal, handle, depth in frontier:
            actions, succ, ev = exp.expand(ordinal, handle)
            counts.append((ordinal, actions))
            generated += len(actions)
            for ai in actions:
                act_gen[ai] += 1
            for k, ai, _params, ch, fp in succ:
                if fp is None:
                    continue
                if fp % n == w:
                    if fp in visited:
                        continue
                elif fp in remote_seen:
                    continue
                key = (ordinal, k)
                old = cands.get(fp)
                if old is None or key < old[0]:
                    cands[fp] = (key, ch, ai, depth + 1)
            if ev is not None:
                first = ev  # later entries' keys all come after it
                break
        outgoing: list[list[tuple[int, Key]]] = [[] for _ in range(n)]
        for fp, (key, *_rest) in cands.items():
            o = fp % n
            outgoing[o].append((fp, key))
            if o != w and not limited:
                remote_seen.add(fp)
        for o in range(n):
            inboxes[o].put(("submit", (w, outgoing[o])))
        link.send(("expanded", generated, act_gen))
        # -- 2. own: decide winners ---------------------------------------------------
        best: dict[int, tuple[Key, int]] = {}
        for submitter, items in receive("submit"):
            for fp, key in items:
                if fp in visited:
                    continue
                old_best = best.get(fp)
                if old_best is None or key < old_best[0]:
                    best[fp] = (key, submitter)
        won: list[list[int]] = [[] for _ in range(n)]
        for fp, (_, submitter) in best.items():
            won[submitter].append(fp)
            if not limited:
                visited.add(fp)
        for o in range(n):
            inboxes[o].put(("won", won[o]))
        # -- 3. check the winners (in key order); they stay here unless rebalanced ---
        winners: list[tuple[Key, int]] = []
        for fps_won in receive("won"):
            for fp in fps_won:
                winners.append((cands[fp][0], fp))
        winners.sort()
        kept: list[tuple[Key, int, Any, int, int]] = []  # (key, fp, handle, action, depth)
        truncated = False
        for key, fp in winners:
            if first is not None and key > first.key:
                break
            _, ch, ai, nd = cands[fp]
            if limited:
                truncated = True
                ev = exp.check(key, ch, False)
            else:
                kept.append((key, fp, ch, ai, nd))
                ev = exp.check(key, ch, True)
            if ev is not None:
                first = ev if first is None or ev.key < first.key else first
                break
        cands.clear()
        link.send(
            (
                "checked",
                [(k, fp, ai, nd) for k, fp, _h, ai, nd in kept],
                _event_summary(first),
                truncated,
            )
        )
        # -- rebalance: the coordinator says how many states go to whom -----------
        plan = link.recv()
        assert plan[0] == "balance", plan[0]
        sends: list[list[Any]] = [[] for _ in range(n)]
        for target, count in plan[1]:
            for _ in range(count):
                sends[target].append(kept.pop())
        for o in range(n):
            # Handles are this process's (interned numbers): ship the states.
            shipped = [(k, fp, exp.state(h), ai, nd) for k, fp, h, ai, nd in sends[o]]
            inboxes[o].put(("ship", shipped))
        for part in receive("ship"):
            for key, fp, t, ai, nd in part:
                kept.append((key, fp, exp.handle_of(t), ai, nd))
        kept.sort(key=lambda e: e[0])
        link.send(("keys", [e[0] for e in kept]))
        # -- 4. number the new frontier ---------------------------------------------
        msg = link.recv()
        assert msg[0] == "ordinals", msg[0]
        frontier = [(o, h, nd) for o, (_k, _fp, h, _ai, nd) in zip(msg[1], kept, strict=True)]
        # The coordinator may ask how much of this level one process would have
        # generated before a stop; the next level's command ends the questions.
        before = _counter(counts)
        while True:
            msg = link.recv()
            if msg[0] != "count_before":
                link.stash.append(msg)
                break
            link.send(("count", *before(tuple(msg[1]))))


class WorkerBackend:
    """The :class:`~checker.engine.Backend` over N worker processes (BFS only)."""

    def __init__(
        self,
        model: Model,
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        opts: Options,
        fast: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.renamings = renamings
        self.n = opts.workers
        self.max_depth = opts.max_depth
        self.exp = make_expansion(model, renamings, deadlock, **(fast or {}))
        # The workers' expansions: the same layout as this one's pilot found.
        self.fast: dict[str, Any] = dict(fast or {})
        if hasattr(self.exp, "wide"):  # the fast engine
            self.fast.update(wide=set(self.exp.wide), fixed=dict(self.exp.fixed))
        self.ctx = mp.get_context("fork")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        self.count = 0
        self.depth = 1
        self.frontier_size = 0
        self.inboxes: list[Any] = []

    # -- process management ----------------------------------------------------------
    def _spawn(self) -> None:
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
                    self.exp.deadlock,
                    self.fast,
                    self.inboxes,
                    child,
                    others,
                    parent,
                ),
                daemon=True,
            )
            p.start()
            self.procs.append(p)
        for mine, child in pipes:
            child.close()  # only the worker holds its end: a dead worker gives EOF
            self.conns.append(mine)

    def _recv(self, w: int) -> Any:
        conn, proc = self.conns[w], self.procs[w]
        while True:
            ready = wait([conn, proc.sentinel], timeout=1.0)
            if conn in ready:
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    raise WorkerLost(self._death(w)) from None
                if msg[0] == "failed":
                    raise WorkerLost(msg[1])
                if msg[0] == "unsound":
                    raise CacheUnsound(msg[1])
                if msg[0] == "layout":
                    raise LayoutChanged(msg[1])
                return msg
            if proc.sentinel in ready or not proc.is_alive():
                raise WorkerLost(self._death(w))

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

    def _send_all(self, msg: Any) -> None:
        for w, c in enumerate(self.conns):
            try:
                c.send(msg)
            except (BrokenPipeError, OSError):
                raise WorkerLost(self._death(w)) from None

    def snapshot(self) -> list[tuple[int, Any, int]]:
        """Not supported: the frontier is spread over the workers (Options.validate
        refuses --checkpoint with --workers)."""
        raise ConfigError("--checkpoint works with one process")

    def restore(self, frontier: list[tuple[int, Any, int]], fps: Any) -> None:
        """Not supported (see :meth:`snapshot`)."""
        raise ConfigError("--checkpoint works with one process")

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
    def pending(self) -> bool:
        """Whether the last level produced new states."""
        return self.frontier_size > 0

    def start(self) -> ChunkResult:
        """Generate and check the initial states here; seed the workers."""
        seeds: list[list[tuple[int, Any, int]]] = [[] for _ in range(self.n)]
        seen: set[int] = set()

        def store(key: Key, fp: int, handle: Any) -> None:
            # Initial states are numbered in order: the n-th new one is ordinal n.
            seeds[fp % self.n].append((len(seen), self.exp.state(handle), 1))
            seen.add(fp)

        new, event = self.exp.initial(seen.__contains__, store)
        inits = self.model.initial_states()
        total = len(inits)
        self.count = len(new)
        self.frontier_size = len(new) if event is None else 0
        if event is None and new:
            self._spawn()
            for w in range(self.n):
                self.conns[w].send(("seed", seeds[w]))
            for w in range(self.n):
                self._recv(w)
        return ChunkResult(new, event, lambda key: (total, {}), frontier=len(new))

    def step(self) -> ChunkResult:
        """One breadth-first level across the workers."""
        n = self.n
        limited = self.max_depth is not None and self.depth >= self.max_depth
        self._send_all(("level", limited))
        expanded = [self._recv(w) for w in range(n)]
        generated = sum(e[1] for e in expanded)
        act_gen = [sum(col) for col in zip(*(e[2] for e in expanded), strict=True)]
        checked = [self._recv(w) for w in range(n)]
        events = [ev for c in checked if (ev := _event_of(c[2])) is not None]
        event = min(events, key=lambda e: e.key) if events else None
        truncated = any(c[3] for c in checked)
        # (fp, action, depth) of every kept state, by its key.
        info = {tuple(key): (fp, ai, nd) for c in checked for key, fp, ai, nd in c[1]}
        for c, plan in zip(self.conns, _balance([len(c[1]) for c in checked]), strict=True):
            c.send(("balance", plan))
        keyed = [self._recv(w)[1] for w in range(n)]
        merged = list(heapq.merge(*[[(tuple(k), w) for k in ks] for w, ks in enumerate(keyed)]))
        ordinals: list[list[int]] = [[] for _ in range(n)]
        for rank, (_key, w) in enumerate(merged):
            ordinals[w].append(self.count + rank)
        for c, ords in zip(self.conns, ordinals, strict=True):
            c.send(("ordinals", ords))
        new = [NewState(key, *info[key]) for key, _ in merged]
        self.count += len(merged)
        self.frontier_size = len(merged)
        if merged:
            self.depth += 1

        def before(key: Key | None) -> tuple[int, dict[int, int]]:
            if key is None:
                return generated, dict(enumerate(act_gen))
            self._send_all(("count_before", key))
            total = 0
            per: dict[int, int] = {}
            for w in range(n):
                msg = self._recv(w)
                total += msg[1]
                for ai, c in msg[2].items():
                    per[ai] = per.get(ai, 0) + c
            return total, per

        return ChunkResult(new, event, before, truncated=truncated, frontier=len(merged))


def _balance(counts: list[int]) -> list[list[tuple[int, int]]]:
    """Transfers [(target, count)] per worker that even out the next frontier.

    New states stay with the worker that generated them (shipping a state costs a
    pickle round trip); only the excess over an even share moves.
    """
    n = len(counts)
    total = sum(counts)
    share = [total // n + (1 if w < total % n else 0) for w in range(n)]
    excess = [(w, counts[w] - share[w]) for w in range(n) if counts[w] > share[w]]
    deficit = [[w, share[w] - counts[w]] for w in range(n) if counts[w] < share[w]]
    plans: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    # Small imbalances are not worth a transfer.
    if not total or max(counts) - min(counts) <= max(64, total // (8 * n)):
        return plans
    d = 0
    for w, extra in excess:
        while extra > 0 and d < len(deficit):
            take = min(extra, deficit[d][1])
            plans[w].append((deficit[d][0], take))
            extra -= take
            deficit[d][1] -= take
            if deficit[d][1] == 0:
                d += 1
    return plans
