"""Exhaustive exploration: breadth-first (shortest counterexamples) or depth-first.

One code path serves both strategies: the frontier is a deque taken from the left
(BFS) or from the right (DFS).  The visited set holds 64-bit fingerprints only; per
stored state two compact arrays record its parent and which successor of the parent it
was, from which :mod:`checker.trace` rebuilds a counterexample by replay (TLC's
design).  Frontier entries carry the real state plus its per-variable fingerprints so
that a successor's fingerprint is computed incrementally.
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checker.errors import ConfigError, EvaluationError
from checker.fingerprint import StateFingerprinter, collision_probability
from checker.model import Model
from checker.parallel import run_parallel
from checker.result import Result, Stats, Verdict
from checker.trace import Trace, replay_choices

#: How many expansions pass between clock reads (limits, progress).
_TICK = 512


@dataclass
class Options:
    """How to explore: strategy, symmetry, deadlock checking and limits."""

    strategy: str = "bfs"
    symmetry: bool = True
    deadlock: bool = True
    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None
    progress: Callable[[Stats], None] | None = None
    progress_every: float = 0.5
    workers: int = 1


class Store:
    """Visited fingerprints plus, per stored state, its parent and successor index."""

    __slots__ = ("choice", "parent", "seen")

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.parent = array("q")  # ordinal of the parent state, -1 for an initial state
        self.choice = array("I")  # index among the parent's successors (or the inits)

    def add(self, fp: int, parent: int, choice: int) -> int:
        """Record a new state; return its ordinal."""
        self.seen.add(fp)
        self.parent.append(parent)
        self.choice.append(choice)
        return len(self.parent) - 1

    def record(self, parent: int, choice: int) -> int:
        """Record a new state whose fingerprint is kept elsewhere (a worker)."""
        self.parent.append(parent)
        self.choice.append(choice)
        return len(self.parent) - 1

    def choices(self, ordinal: int) -> list[int]:
        """Successor choices from an initial state down to ``ordinal``."""
        path: list[int] = []
        while ordinal >= 0:
            path.append(self.choice[ordinal])
            ordinal = self.parent[ordinal]
        path.reverse()
        return path


def check(model: Model, options: Options | None = None, **meta: Any) -> Result:
    """Explore ``model`` exhaustively (within limits) and check its invariants."""
    opts = options or Options()
    if opts.strategy not in ("bfs", "dfs"):
        raise ConfigError(f"unknown strategy {opts.strategy!r} (bfs or dfs)")
    if opts.workers < 1:
        raise ConfigError("--workers must be at least 1")
    if opts.workers > 1 and opts.strategy != "bfs":
        # Refused rather than silently run with one worker.
        raise ConfigError("--workers > 1 explores breadth-first only; drop --strategy dfs")
    stats = Stats(
        action_generated=[0] * len(model.action_names),
        action_distinct=[0] * len(model.action_names),
    )
    store = Store()
    verdict = Verdict.OK
    prop: str | None = None
    reason: str | None = None
    bad_ordinal = -1
    error: EvaluationError | None = None
    t0 = time.perf_counter()
    try:
        if opts.workers > 1:
            verdict, prop, reason, bad_ordinal = run_parallel(
                model,
                opts.workers,
                opts.symmetry,
                opts.deadlock,
                opts.max_states,
                opts.max_depth,
                opts.timeout,
                stats,
                store.add,
                store.record,
                opts.progress,
            )
        else:
            verdict, prop, reason, bad_ordinal = _run(model, opts, stats, store)
    except EvaluationError as exc:
        verdict, error, reason = Verdict.ERROR, exc, str(exc)
        bad_ordinal = exc.ordinal if exc.ordinal is not None else -1
    stats.seconds = time.perf_counter() - t0
    trace: Trace | None = None
    if bad_ordinal >= 0:
        choices = store.choices(bad_ordinal)
        if error is not None and error.extra_choice is not None:
            choices.append(error.extra_choice)
        trace = replay_choices(model, choices)
        if error is not None:
            error.trace = trace
            error.state = trace.steps[-1].state
    return Result(
        spec=model.name,
        variant=str(meta.get("variant", "")),
        verdict=verdict,
        stats=stats,
        constants=dict(meta.get("constants", {})),
        symmetry=opts.symmetry and len(model.renamings) > 1,
        strategy=opts.strategy,
        action_names=model.action_names,
        violated=prop,
        trace=trace,
        reason=reason,
        collision_probability=collision_probability(stats.distinct, stats.generated),
    )


def _run(
    model: Model, opts: Options, stats: Stats, store: Store
) -> tuple[Verdict, str | None, str | None, int]:
    """The exploration loop; returns (verdict, property, reason, ordinal of the bad state)."""
    rens = model.renamings if opts.symmetry else [{}]
    variables = model.variables
    successors = model.successors
    within = model.within
    violated = model.violated_invariant
    seen = store.seen
    add = store.add
    act_gen = stats.action_generated
    act_new = stats.action_distinct
    max_states = opts.max_states
    max_depth = opts.max_depth
    deadlock = opts.deadlock
    dfs = opts.strategy == "dfs"

    frontier: deque[tuple[Any, int, int, tuple[Any, ...], tuple[int, ...]]] = deque()
    pop = frontier.pop if dfs else frontier.popleft
    push = frontier.append
    current = -1

    try:
        inits = model.initial_states()
        # The number of variables is known once a first state exists.
        fpr = StateFingerprinter(len(variables(inits[0])), rens)
        for k, s in enumerate(inits):
            stats.generated += 1
            if not within(s):
                continue
            vals = variables(s)
            fp, fps = fpr.initial(vals)
            if fp in seen:
                continue
            ordinal = add(fp, -1, k)
            stats.distinct += 1
            stats.depth = 1
            bad = _check(violated, s, ordinal)
            if bad is not None:
                return Verdict.VIOLATION, bad, None, ordinal
            push((s, ordinal, 1, vals, fps))
            if max_states is not None and stats.distinct >= max_states:
                return Verdict.INCOMPLETE, None, f"max-states {max_states} reached", -1

        deadline = time.perf_counter() + opts.timeout if opts.timeout else None
        next_progress = time.perf_counter() + opts.progress_every
        truncated = False
        tick = 0
        peak = len(frontier)
        while frontier:
            s, ordinal, depth, pvals, pfps = pop()
            current = ordinal
            tick += 1
            if tick >= _TICK:
                tick = 0
                now = time.perf_counter()
                if deadline is not None and now >= deadline:
                    stats.queue_peak = max(peak, stats.queue_peak)
                    return Verdict.INCOMPLETE, None, f"timeout {opts.timeout}s reached", -1
                if opts.progress is not None and now >= next_progress:
                    next_progress = now + opts.progress_every
                    stats.queue = len(frontier)
                    stats.queue_peak = peak
                    opts.progress(stats)
            if len(frontier) > peak:
                peak = len(frontier)
            succ = successors(s)
            if not succ:
                if deadlock:
                    return Verdict.DEADLOCK, None, None, ordinal
                continue
            at_limit = max_depth is not None and depth >= max_depth
            ndepth = depth + 1
            for k, (ai, _params, t) in enumerate(succ):
                stats.generated += 1
                act_gen[ai] += 1
                if not within(t):
                    continue
                vals = variables(t)
                fp, fps = fpr.child(vals, pvals, pfps)
                if fp in seen:
                    continue
                if at_limit:
                    truncated = True
                    continue
                child = add(fp, ordinal, k)
                act_new[ai] += 1
                stats.distinct += 1
                if ndepth > stats.depth:
                    stats.depth = ndepth
                bad = _check(violated, t, child)
                if bad is not None:
                    stats.queue_peak = max(peak, stats.queue_peak)
                    return Verdict.VIOLATION, bad, None, child
                push((t, child, ndepth, vals, fps))
                if max_states is not None and stats.distinct >= max_states:
                    stats.queue_peak = max(peak, stats.queue_peak)
                    return Verdict.INCOMPLETE, None, f"max-states {max_states} reached", -1
        stats.queue_peak = max(peak, stats.queue_peak)
        if truncated:
            return Verdict.INCOMPLETE, None, f"max-depth {max_depth} reached", -1
        return Verdict.OK, None, None, -1
    except EvaluationError as exc:
        if exc.ordinal is None:
            exc.ordinal = current
        raise
    except KeyboardInterrupt:
        return Verdict.INCOMPLETE, None, "interrupted", -1


def _check(violated: Callable[[Any], str | None], state: Any, ordinal: int) -> str | None:
    """Evaluate the invariants, tagging an error with the state it was raised on."""
    try:
        return violated(state)
    except EvaluationError as exc:
        exc.ordinal = ordinal
        raise
