"""``simulate --cluster ADDRESS``: the hunt's behaviours as dask tasks, the same answer.

Behaviours are handed out in batches of consecutive numbers, each batch a task on the
cluster that builds the model from its recipe (:func:`checker.distributed.cluster.recipe_of`)
and walks its behaviours exactly as one process walks them (behaviour ``b`` draws
from its own ``random.Random("seed:b")``), stopping at its first violation.  The
coordinator keeps two batches per worker running, in order of their numbers; once a
batch reports a violation in behaviour ``b``, nothing after ``b`` is handed out and
batches wholly after it are cancelled, while those before it run to their end (one
of them may hold an earlier violation).  The answer is the lowest-numbered violating
behaviour, walked again and shortened here: one process's answer, with one process's
figures for behaviours ``0 .. b`` (:func:`checker.simulate.workers.conclude`).  A
timeout or Ctrl-C ends the hunt incomplete with the figures of the batches finished;
a lost worker or scheduler ends it incomplete with a one-line reason.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

import numpy as np

from checker.base.errors import ConfigError, MCheckError
from checker.base.signals import ignore_interrupts, stop_signals
from checker.distributed.cluster import dask_module, model_of, open_client, quiet_dask, recipe_of
from checker.explore.result import Result
from checker.model import Model
from checker.simulate.core import SimulationOptions, SimulationStats, Simulator
from checker.simulate.workers import NONE, Row, Walks, conclude

#: Behaviours per task: long enough to repay building the model on the worker.
BATCH = 32


def walk_batch(
    recipe: dict[str, Any], opts: SimulationOptions, first: int, count: int, deadline: float | None
) -> tuple[list[Row], np.ndarray, np.ndarray, str | None, int]:
    """On a cluster worker: walk behaviours ``first .. first + count - 1`` (up to the
    first violation, ``--traces`` or the wall-clock ``deadline``); (rows, fingerprints
    first visited, the behaviour that visited each first, a failure, the violating
    behaviour or NONE)."""
    violating = NONE
    walks: Walks | None = None
    b = first
    try:
        walks = Walks(Simulator(model_of(recipe), opts))
        for b in range(first, first + count):
            if opts.traces is not None and b >= opts.traces:
                break
            if deadline is not None and time.time() >= deadline:
                break
            if walks.walk(b):
                violating = b
                break
    except Exception as exc:  # a spec error is found by the coordinator's walk
        if isinstance(exc, MCheckError) and walks is not None:
            # The spec's own fault (a value states cannot hold): walks are
            # deterministic, so the coordinator walks behaviour b again and reports it
            # as one process does.
            return (*walks.report(None), b)
        failure = f"{type(exc).__name__}: {exc}"
        if walks is None:
            return [], _u64([]), _i64([]), failure, violating
        return (*walks.report(failure), violating)
    return (*walks.report(None), violating)


def _u64(xs: list[int]) -> np.ndarray:
    return np.array(xs, dtype=np.uint64)


def _i64(xs: list[int]) -> np.ndarray:
    return np.array(xs, dtype=np.int64)


def simulate_cluster(model: Model, opts: SimulationOptions, address: str) -> Result:
    """Run the hunt on the dask cluster ``address`` (see the module docstring)."""
    distributed = dask_module()
    quiet_dask()
    recipe = recipe_of(model)
    # What a task needs of the options (a progress callback does not travel).
    task_opts = replace(opts, progress=None, workers=1, cluster=None)
    t0 = time.perf_counter()
    deadline = time.time() + opts.timeout if opts.timeout else None
    client = cluster = None
    reports: dict[int, Any] = {}
    reason: str | None = None
    interrupted = False
    bound = NONE
    try:
        with stop_signals():
            try:
                client, cluster, workers = open_client(distributed, address)
            except ConfigError:
                raise
            except Exception as exc:
                raise ConfigError(
                    f"the dask cluster {address} did not start ({type(exc).__name__}: {exc})"
                ) from None
            bound, reason = _hunt(
                distributed, client, len(workers), recipe, task_opts, opts, deadline, reports, t0
            )
    except KeyboardInterrupt:
        ignore_interrupts()
        reason, interrupted = "interrupted", True
    finally:
        with contextlib.suppress(Exception):
            if client is not None:
                client.close()
        with contextlib.suppress(Exception):
            if cluster is not None:
                cluster.close()
    if interrupted:
        # Batches after an interruption are not waited for: the finished ones count.
        bound = min((r[4] for r in reports.values()), default=NONE)
        bound = _settled(reports, bound)
    return conclude(model, opts, {k: v[:4] for k, v in reports.items()}, bound, reason,
                    interrupted, t0)  # fmt: skip


def _settled(reports: dict[int, Any], bound: int) -> int:
    """A violation counts only when every behaviour before it was walked: otherwise
    an unwalked earlier one might have violated first (the hunt is incomplete)."""
    if bound == NONE:
        return NONE
    # The violating behaviour itself is walked again by the coordinator (a walk that
    # raised has no row of its own).
    walked = sorted(b for r in reports.values() for b, *_ in r[0] if b < bound)
    return bound if walked == list(range(bound)) else NONE


def _hunt(
    distributed: Any,
    client: Any,
    n: int,
    recipe: dict[str, Any],
    task_opts: SimulationOptions,
    opts: SimulationOptions,
    deadline: float | None,
    reports: dict[int, Any],
    t0: float,
) -> tuple[int, str | None]:
    """Hand out batches until a violation is settled, the behaviours run out, the
    deadline or a failure; (the violating behaviour or NONE, why it stopped early)."""
    pending: dict[Any, int] = {}
    done = distributed.as_completed()
    next_b = 0
    bound = NONE
    reason: str | None = None
    next_progress = time.perf_counter() + opts.progress_every

    def more() -> bool:
        return (
            reason is None
            and bound == NONE
            and (opts.traces is None or next_b < opts.traces)
            and (deadline is None or time.time() < deadline)
        )

    while len(pending) < 2 * n and more():
        f = client.submit(walk_batch, recipe, task_opts, next_b, BATCH, deadline, pure=False)
        pending[f] = next_b
        done.add(f)
        next_b += BATCH
    for f in done:
        first = pending.pop(f, None)
        if first is None:
            continue  # cancelled
        try:
            got = f.result()
        except Exception as exc:
            reason = (
                f"a cluster worker was lost ({type(exc).__name__}: {exc}); the hunt is incomplete"
            )
            break
        reports[first] = got
        if got[3] is not None and reason is None:
            reason = f"a cluster worker failed: {got[3]}"
        bound = min(bound, got[4])
        for other, fb in list(pending.items()):
            if fb > bound:  # wholly after the violation: not needed
                other.cancel()
                del pending[other]
        if deadline is not None and time.time() >= deadline and reason is None:
            reason = f"timeout {opts.timeout}s reached"
        while len(pending) < 2 * n and more():
            nf = client.submit(walk_batch, recipe, task_opts, next_b, BATCH, deadline, pure=False)
            pending[nf] = next_b
            done.add(nf)
            next_b += BATCH
        if opts.progress is not None and time.perf_counter() >= next_progress:
            next_progress = time.perf_counter() + opts.progress_every
            rows = [row for r in reports.values() for row in r[0]]
            progress = SimulationStats(
                seed=opts.seed, behaviours=len(rows), states=sum(row[1] for row in rows)
            )
            progress.seconds = time.perf_counter() - t0
            opts.progress(progress)
        if not pending:
            break
    for f in pending:
        f.cancel()
    return _settled(reports, bound), reason
