"""One partition of a distributed breadth-first search: what a worker holds and does.

Worker ``w`` of ``n`` owns the fingerprints with ``fp % n == w`` and a share of the
frontier.  A level runs in phases, each a method here; the transport between them is
the caller's (the worker processes of :mod:`checker.parallel` pass the exchanges
through queues, the dask actors of :mod:`checker.cluster` through the client):

1. :meth:`expand` the frontier (in ordinal order), keeping per new fingerprint the
   smallest key ``(parent ordinal, successor index)``, and hand each owner its
   ``(fp, key)`` candidates;
2. :meth:`own`: as owner, pick per fingerprint not yet visited the smallest key among
   all submitters (the one-process BFS discovery) and say who won what;
3. :meth:`check` the states won (in key order) against the invariants and keep them;
4. :meth:`ship` / :meth:`take` even out the next frontier, and :meth:`number` gives
   the kept states the ordinals the coordinator assigned in key order.

So parent pointers, counts, depth and counterexamples equal those of one process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from checker.engine import (
    ChunkResult,
    Event,
    Key,
    NewColumns,
    Options,
    _counter,
    make_expansion,
)
from checker.errors import ConfigError, EvaluationError
from checker.model import Model


def event_summary(ev: Event | None) -> Any:
    """An event as plain data (spec exceptions need not pickle)."""
    if ev is None:
        return None
    err = None
    if ev.error is not None:
        err = (ev.error.where, str(ev.error), type(ev.error.cause).__name__)
    return (ev.key, ev.kind, ev.prop, ev.new, err)


class RemoteCause(Exception):
    """A spec exception raised in a worker, carried back as its message."""


def event_of(summary: Any) -> Event | None:
    """The event a summary stands for (its spec error re-created from the text)."""
    if summary is None:
        return None
    key, kind, prop, new, err = summary
    error = None
    if err is not None:
        where, text, _cause = err
        error = EvaluationError(where, RemoteCause(text))
        error.args = (text,)
    return Event(tuple(key), kind, prop=prop, new=new, error=error)


#: One candidate for the owner: (fingerprint, key).
Candidate = tuple[int, Key]
#: Kept states as arrays: parent ordinals, successor indices, fingerprints, actions,
#: depths (in key order).
Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class Partition:
    """Partition ``w`` of ``n``: its visited fingerprints, frontier and level state."""

    def __init__(
        self,
        w: int,
        n: int,
        model: Model,
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        fast: dict[str, Any],
    ) -> None:
        self.w, self.n = w, n
        self.model = model
        self.exp = make_expansion(model, renamings, deadlock, **fast)
        self.visited: set[int] = set()
        # Fingerprints this worker already submitted to other owners: they are visited
        # there, whoever won them, so they need never be sent again.
        self.remote_seen: set[int] = set()
        self.frontier: list[tuple[int, Any, int]] = []  # (ordinal, handle, depth)
        self.cands: dict[int, tuple[Key, Any, int, int]] = {}
        self.counts: list[tuple[int, list[int]]] = []
        self.first: Event | None = None
        self.kept: list[tuple[Key, int, Any, int, int]] = []  # key, fp, handle, action, depth
        self.limited = False

    def seed(self, entries: list[tuple[int, Any, int]]) -> None:
        """Take initial states (ordinal, state, depth) this partition owns."""
        for ordinal, state, depth in entries:
            handle = self.exp.handle_of(state)
            self.visited.add(self.exp.fp_of(handle))
            self.frontier.append((ordinal, handle, depth))

    def expand(self, limited: bool) -> tuple[int, list[int], list[list[Candidate]]]:
        """Phase 1: (states generated, generated per action, candidates per owner)."""
        n, w = self.n, self.w
        self.limited = limited
        nact = len(self.model.action_names)
        counts: list[tuple[int, list[int]]] = []
        generated = 0
        act_gen = [0] * nact
        first: Event | None = None
        cands: dict[int, tuple[Key, Any, int, int]] = {}
        visited, remote_seen = self.visited, self.remote_seen
        for ordinal, handle, depth in self.frontier:
            actions, succ, ev = self.exp.expand(ordinal, handle)
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
        outgoing: list[list[Candidate]] = [[] for _ in range(n)]
        for fp, (key, *_rest) in cands.items():
            o = fp % n
            outgoing[o].append((fp, key))
            if o != w and not limited:
                remote_seen.add(fp)
        self.cands, self.counts, self.first = cands, counts, first
        return generated, act_gen, outgoing

    def own(self, submissions: list[tuple[int, list[Candidate]]]) -> list[list[int]]:
        """Phase 2, as owner: the fingerprints each submitter won."""
        best: dict[int, tuple[Key, int]] = {}
        visited = self.visited
        for submitter, items in submissions:
            for fp, key in items:
                if fp in visited:
                    continue
                old = best.get(fp)
                if old is None or key < old[0]:
                    best[fp] = (key, submitter)
        won: list[list[int]] = [[] for _ in range(self.n)]
        for fp, (_, submitter) in best.items():
            won[submitter].append(fp)
            if not self.limited:
                visited.add(fp)
        return won

    def check(self, won: list[list[int]]) -> tuple[Columns, Any, bool]:
        """Phase 3: check the states won, in key order; (kept as columns, the earliest
        event as a summary, whether a state beyond --max-depth was cut)."""
        cands = self.cands
        winners = sorted((cands[fp][0], fp) for fps in won for fp in fps)
        kept: list[tuple[Key, int, Any, int, int]] = []
        truncated = False
        first = self.first
        for key, fp in winners:
            if first is not None and key > first.key:
                break
            _, ch, ai, nd = cands[fp]
            if self.limited:
                truncated = True
                ev = self.exp.check(key, ch, False)
            else:
                kept.append((key, fp, ch, ai, nd))
                ev = self.exp.check(key, ch, True)
            if ev is not None:
                first = ev if first is None or ev.key < first.key else first
                break
        self.cands = {}
        self.kept = kept
        return _columns(kept), event_summary(first), truncated

    def ship(self, plan: list[tuple[int, int]]) -> list[list[Any]]:
        """Phase 4a: the kept states to move, per target (as states: handles are this
        process's interned numbers)."""
        sends: list[list[Any]] = [[] for _ in range(self.n)]
        for target, count in plan:
            for _ in range(count):
                sends[target].append(self.kept.pop())
        state = self.exp.state
        return [[(k, fp, state(h), ai, nd) for k, fp, h, ai, nd in part] for part in sends]

    def take(self, parts: list[list[Any]]) -> tuple[np.ndarray, np.ndarray]:
        """Phase 4b: take the states shipped here; the keys of the kept states, sorted
        (as the arrays of their parent ordinals and successor indices)."""
        for part in parts:
            for key, fp, t, ai, nd in part:
                self.kept.append((tuple(key), fp, self.exp.handle_of(t), ai, nd))
        self.kept.sort(key=lambda e: e[0])
        keys = self.kept
        return (
            np.fromiter((e[0][0] for e in keys), np.int64, len(keys)),
            np.fromiter((e[0][1] for e in keys), np.int64, len(keys)),
        )

    def number(self, ordinals: np.ndarray) -> None:
        """Phase 4c: the kept states, numbered, are the next frontier."""
        self.frontier = [
            (o, h, nd)
            for o, (_k, _fp, h, _ai, nd) in zip(ordinals.tolist(), self.kept, strict=True)
        ]
        self.kept = []

    def count_before(self, key: Key) -> tuple[int, dict[int, int]]:
        """States (and per action) one process would have generated this level before
        ``key``: how TLC counts at a stop."""
        return _counter(self.counts)(tuple(key))  # type: ignore[arg-type]


def _columns(kept: list[tuple[Key, int, Any, int, int]]) -> Columns:
    """Kept states (key, fp, handle, action, depth) as arrays: parent, choice, fp,
    action, depth (a pipe or the network carries arrays as raw bytes)."""
    m = len(kept)
    return (
        np.fromiter((e[0][0] for e in kept), np.int64, m),
        np.fromiter((e[0][1] for e in kept), np.int64, m),
        np.fromiter((e[1] for e in kept), np.uint64, m),
        np.fromiter((e[3] for e in kept), np.int64, m),
        np.fromiter((e[4] for e in kept), np.int64, m),
    )


def commit_level(
    checked: list[tuple[Columns, Any, bool]],
    balance: Callable[[list[list[tuple[int, int]]]], list[tuple[np.ndarray, np.ndarray]]],
    number: Callable[[list[np.ndarray]], None],
    count: int,
) -> tuple[NewColumns, Event | None, bool]:
    """The coordinator's half of a level after :meth:`Partition.check`: even out the
    kept states (``balance`` sends the plans and returns each worker's sorted keys),
    number them in key order from ``count`` (``number`` sends the ordinals), and
    report the level's new states, earliest event and truncation.

    All of it is array work: a level's states are sorted by key once (a lexsort), and
    each worker's ordinals are the ranks of its keys in that order (a searchsorted).
    """
    events = [ev for c in checked if (ev := event_of(c[1])) is not None]
    event = min(events, key=lambda e: e.key) if events else None
    truncated = any(c[2] for c in checked)
    parent, choice, fp, action, depth = (
        np.concatenate([c[0][i] for c in checked]) for i in range(5)
    )
    order = np.lexsort((choice, parent))
    new = NewColumns(parent[order], choice[order], fp[order], action[order], depth[order])
    keyed = balance(_balance([len(c[0][0]) for c in checked]))
    # One integer per key, ordered as the keys: parent * span + choice.
    span = int(choice.max()) + 1 if len(choice) else 1
    if len(parent) and (int(parent.max()) + 1) * span >= 1 << 62:
        raise ConfigError("a level too large to number (ordinal x successors beyond 2^62)")
    merged = new.parent * span + new.choice
    number([count + np.searchsorted(merged, p * span + c) for p, c in keyed])
    return new, event, truncated


def generated_counter(
    generated: int,
    act_gen: list[int],
    ask: Callable[[Key], list[tuple[int, dict[int, int]]]],
) -> Callable[[Key | None], tuple[int, dict[int, int]]]:
    """ChunkResult.generated_before for a level: the whole level's counts, or (at a
    stop) the sum of what each worker says one process generated before ``key``."""

    def before(key: Key | None) -> tuple[int, dict[int, int]]:
        if key is None:
            return generated, dict(enumerate(act_gen))
        total = 0
        per: dict[int, int] = {}
        for got, counts in ask(key):
            total += got
            for ai, c in counts.items():
                per[ai] = per.get(ai, 0) + c
        return total, per

    return before


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


class LevelBackend:
    """What the two distributed backends (worker processes, a dask cluster) share:
    the coordinator's expansion (initial states, the fast engine's layout the workers
    reuse), the level counters, seeding, and the end of each level."""

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
        self.deadlock = deadlock
        self.max_depth = opts.max_depth
        self.exp = make_expansion(model, renamings, deadlock, **(fast or {}))
        # The workers' expansions: the same layout as this one's pilot found.
        self.fast: dict[str, Any] = dict(fast or {})
        if hasattr(self.exp, "wide"):  # the fast engine
            self.fast.update(wide=set(self.exp.wide), fixed=dict(self.exp.fixed))
        self.n = 0
        self.count = 0
        self.depth = 1
        self.frontier_size = 0

    def _launch(self) -> None:
        """Start the workers (and set ``n``)."""
        raise NotImplementedError

    def _seed(self, seeds: list[list[tuple[int, Any, int]]]) -> None:
        """Give worker w the initial states ``seeds[w]`` (ordinal, state, depth)."""
        raise NotImplementedError

    def pending(self) -> bool:
        """Whether the last level produced new states."""
        return self.frontier_size > 0

    def start(self) -> ChunkResult:
        """Generate and check the initial states here; start and seed the workers."""
        seen: set[int] = set()
        owned: list[tuple[int, int, Any]] = []

        def store(key: Key, fp: int, handle: Any) -> None:
            # Initial states are numbered in order: the n-th new one is ordinal n.
            owned.append((fp, len(seen), self.exp.state(handle)))
            seen.add(fp)

        new, event = self.exp.initial(seen.__contains__, store)
        total = len(self.model.initial_states())
        self.count = len(new)
        self.frontier_size = len(new) if event is None else 0
        if event is None and new:
            self._launch()
            seeds: list[list[tuple[int, Any, int]]] = [[] for _ in range(self.n)]
            for fp, ordinal, state in owned:
                seeds[fp % self.n].append((ordinal, state, 1))
            self._seed(seeds)
        return ChunkResult(new, event, lambda key: (total, {}), frontier=len(new))

    def _finish(
        self,
        generated: int,
        act_gen: list[int],
        checked: list[tuple[Columns, Any, bool]],
        balance: Callable[[list[list[tuple[int, int]]]], list[tuple[np.ndarray, np.ndarray]]],
        number: Callable[[list[np.ndarray]], None],
        ask: Callable[[Key], list[tuple[int, dict[int, int]]]],
    ) -> ChunkResult:
        """The end of a level: number its new states (see commit_level)."""
        new, event, truncated = commit_level(checked, balance, number, self.count)
        self.count += len(new)
        self.frontier_size = len(new)
        if new:
            self.depth += 1
        return ChunkResult(
            new,
            event,
            generated_counter(generated, act_gen, ask),
            truncated=truncated,
            frontier=len(new),
        )

    def limited(self) -> bool:
        """Whether this level's successors lie beyond --max-depth."""
        return self.max_depth is not None and self.depth >= self.max_depth

    def snapshot(self) -> list[tuple[int, Any, int]]:
        """Not supported: the frontier is spread over the workers (Options.validate
        refuses --checkpoint with --workers and --cluster)."""
        raise ConfigError("--checkpoint works with one process")

    def restore(self, frontier: list[tuple[int, Any, int]], fps: Any) -> None:
        """Not supported (see :meth:`snapshot`)."""
        raise ConfigError("--checkpoint works with one process")
