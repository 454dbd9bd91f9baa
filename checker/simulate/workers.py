"""``simulate --workers N``: the same hunt over several processes, the same answer.

A behaviour is the unit of work: worker ``w`` walks behaviours ``w, w + N, w + 2N,
...`` of the seed, each exactly as one process walks it (behaviour ``b`` draws from
its own ``random.Random("seed:b")``).  A worker that meets a violation in behaviour
``b`` lowers the shared bound to ``b``; every worker stops at the first behaviour
beyond the bound.  The answer is then the violation of the lowest-numbered violating
behaviour, the one a single process meets first, and the coordinator walks that
behaviour again itself (the walk is deterministic) and shortens it as one process
does.  The figures are those of behaviours ``0 .. b`` only (each worker reports them
per behaviour), and the distinct states are those those behaviours visited: with a
violation, or with ``--traces``, every figure equals one process's.  With
``--timeout`` or Ctrl-C the hunt ends incomplete with the figures of the behaviours
finished.  Workers are forked (the model is inherited, not pickled); a worker that
dies ends the hunt as incomplete with its reason.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from checker.base.errors import MCheckError
from checker.base.signals import ignore_interrupts, say_ready, stop_signals, worker_process
from checker.explore.result import Result
from checker.model import Model
from checker.simulate.core import SimulationOptions, SimulationStats, Simulator

#: No violating behaviour yet.
NONE = 2**62
#: Seconds between looks at the workers (progress, the deadline).
_TICK = 0.2


#: Seconds an interrupted hunt waits for its workers' reports before killing them.
WIND_DOWN = 5.0


def simulate_workers(model: Model, opts: SimulationOptions, workers: int) -> Result:
    """Run the hunt over ``workers`` processes (see the module docstring)."""
    opts.validate()
    ctx = mp.get_context("fork")
    best = ctx.Value("q", NONE)
    stop = ctx.Value("b", 0)
    # Per worker so far: behaviours, states, the deepest behaviour (for the progress line).
    walked = ctx.Array("q", 3 * workers)
    t0 = time.perf_counter()
    deadline = time.monotonic() + opts.timeout if opts.timeout else None
    pipes = [ctx.Pipe(duplex=False) for _ in range(workers)]
    procs = [
        ctx.Process(
            target=_worker,
            args=(w, workers, model, opts, deadline, best, stop, walked, pipes[w][1], os.getpid()),
            daemon=True,
        )
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    for _, send in pipes:
        send.close()
    reports: dict[int, Any] = {}
    reason: str | None = None
    interrupted = False
    next_progress = time.perf_counter() + opts.progress_every
    try:
        with stop_signals():
            # Said once the handler that turns SIGTERM into a stop is in place: a script
            # that signals on this line always gets the orderly ending below.
            say_ready(f"{workers} worker processes started")
            reason = _collect(procs, [r for r, _ in pipes], reports, stop, deadline, opts,
                              walked, t0, next_progress)  # fmt: skip
    except KeyboardInterrupt:
        ignore_interrupts()
        reason, interrupted = "interrupted", True
        stop.value = 1
        # The workers stop after their current behaviour; one that does not report
        # within the wind-down is killed (an interrupted run must end within seconds).
        _collect(procs, [r for r, _ in pipes], reports, stop, None, opts, walked, t0, None,
                 give_up=time.monotonic() + WIND_DOWN)  # fmt: skip
    finally:
        for p in procs:
            p.join(timeout=1 if interrupted else 5)
            if p.is_alive():
                p.kill()
    return conclude(model, opts, reports, int(best.value), reason, interrupted, t0)


def _collect(
    procs: list[Any],
    conns: list[Connection],
    reports: dict[int, Any],
    stop: Any,
    deadline: float | None,
    opts: SimulationOptions,
    walked: Any,
    t0: float,
    next_progress: float | None,
    give_up: float | None = None,
) -> str | None:
    """Wait for every worker's report (until ``give_up``, a ``time.monotonic()``
    instant, if given); the reason the hunt stopped early, if any."""
    reason = None
    open_ = {w: conns[w] for w in range(len(procs))}
    while open_ and (give_up is None or time.monotonic() < give_up):
        ready = wait([*open_.values(), *(procs[w].sentinel for w in open_)], timeout=_TICK)
        for w, conn in list(open_.items()):
            if conn in ready or conn.poll():
                with contextlib.suppress(EOFError):
                    reports[w] = conn.recv()
                del open_[w]
            elif procs[w].sentinel in ready and not conn.poll():
                stop.value = 1
                reason = reason or f"worker {w} died (exit {procs[w].exitcode})"
                del open_[w]
        now = time.perf_counter()
        if deadline is not None and time.monotonic() >= deadline and not stop.value:
            stop.value = 1
            reason = f"timeout {opts.timeout}s reached"
        if opts.progress is not None and next_progress is not None and now >= next_progress:
            next_progress = now + opts.progress_every
            counts = walked[:]
            progress = SimulationStats(
                seed=opts.seed,
                behaviours=sum(counts[0::3]),
                states=sum(counts[1::3]),
                deepest=max(counts[2::3], default=0),
            )
            progress.seconds = now - t0
            opts.progress(progress)
    return reason


#: One behaviour's figures: (number, states, generated, deepest, generated per
#: action, taken per action).
Row = tuple[int, int, int, int, list[int], list[int]]


def walk(sim: Simulator, b: int) -> tuple[Row, bool]:
    """Walk behaviour ``b`` as one process does; (its figures, whether it violated)."""
    st = sim.stats
    before = (st.states, st.generated, list(st.action_generated), list(st.action_taken))
    st.deepest = 0
    found = sim.behaviour(b)
    row = (
        b,
        st.states - before[0],
        st.generated - before[1],
        st.deepest,
        [x - y for x, y in zip(st.action_generated, before[2], strict=True)],
        [x - y for x, y in zip(st.action_taken, before[3], strict=True)],
    )
    return row, found is not None


class Walks:
    """The behaviours one worker walks: each one's figures, and each fingerprint it
    visited first with the behaviour that did (what :func:`conclude` merges)."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        sim.fresh = []
        self.rows: list[Row] = []
        self.fps: list[int] = []
        self.firsts: list[int] = []

    def walk(self, b: int) -> bool:
        """Walk behaviour ``b``; whether it violated."""
        row, found = walk(self.sim, b)
        fresh = self.sim.fresh
        assert fresh is not None  # set in __init__
        self.rows.append(row)
        self.fps += fresh
        self.firsts += [b] * len(fresh)
        fresh.clear()
        return found

    def report(self, failure: str | None) -> tuple[list[Row], np.ndarray, np.ndarray, str | None]:
        """(rows, fingerprints, first visitors, a failure) as :func:`conclude` takes them."""
        fps = np.array(self.fps, dtype=np.uint64)
        return self.rows, fps, np.array(self.firsts, dtype=np.int64), failure


def _worker(
    w: int,
    n: int,
    model: Model,
    opts: SimulationOptions,
    deadline: float | None,
    best: Any,
    stop: Any,
    walked: Any,
    conn: Connection,
    parent: int,
) -> None:
    """Walk behaviours ``w, w + n, ...`` until the bound, the limit or a stop; send
    each one's figures and the first behaviour to visit each fingerprint."""
    worker_process(parent)
    sim = Simulator(model, opts)
    walks = Walks(sim)
    failure: str | None = None
    b = w
    try:
        while opts.traces is None or b < opts.traces:
            if stop.value or b > best.value:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
            found = walks.walk(b)
            walked[3 * w] += 1
            walked[3 * w + 1] = sim.stats.states
            walked[3 * w + 2] = max(walked[3 * w + 2], sim.stats.deepest)
            if found:
                with best.get_lock():
                    best.value = min(best.value, b)
                break
            b += n
    except MCheckError:
        # The spec's own fault (a value states cannot hold): walks are deterministic,
        # so the coordinator walks behaviour b again and reports it as one process does.
        with best.get_lock():
            best.value = min(best.value, b)
    except BaseException as exc:  # a spec error is found by the coordinator's walk
        failure = f"worker {w} failed: {type(exc).__name__}: {exc}"
    with contextlib.suppress(Exception):
        conn.send(walks.report(failure))
    conn.close()


def conclude(
    model: Model,
    opts: SimulationOptions,
    reports: dict[int, Any],
    bound: int,
    reason: str | None,
    interrupted: bool,
    t0: float,
) -> Result:
    """Merge the workers' figures up to the violating behaviour (all of them without
    one), walk that behaviour again here and conclude as one process does."""
    coord = Simulator(model, opts)
    failures = [r[3] for r in reports.values() if r[3]]
    if failures and reason is None:
        reason = failures[0]
    found = coord.behaviour(bound) if bound != NONE else None
    if found is not None:
        coord.found_in(bound)
    limit = bound if bound != NONE else NONE
    stats = coord.stats
    stats.behaviours = stats.states = stats.generated = stats.deepest = 0
    n = len(model.action_names)
    stats.action_generated, stats.action_taken = [0] * n, [0] * n
    for rows, _, _, _ in reports.values():
        for b, states, generated, deepest, gen, taken in rows:
            if b > limit:
                continue
            stats.behaviours += 1
            stats.states += states
            stats.generated += generated
            stats.deepest = max(stats.deepest, deepest)
            stats.action_generated = [
                x + y for x, y in zip(stats.action_generated, gen, strict=True)
            ]
            stats.action_taken = [x + y for x, y in zip(stats.action_taken, taken, strict=True)]
    all_fps = [r[1][r[2] <= limit] for r in reports.values()]
    stats.distinct = int(np.unique(np.concatenate(all_fps)).size) if all_fps else 0
    stats.seconds = time.perf_counter() - t0
    return coord.conclude(found, reason, interrupted)
