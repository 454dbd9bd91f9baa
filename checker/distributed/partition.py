"""One partition of a distributed breadth-first search: what a worker holds and does.

Worker ``w`` of ``n`` owns the fingerprints with ``fp % n == w`` and a share of the
frontier.  A level runs in phases, each a method here; the transport between them is
the caller's (the worker processes of :mod:`checker.distributed.workers` pass the exchanges
through queues, the dask actors of :mod:`checker.distributed.cluster` through the client):

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

from checker.base.errors import ConfigError, EvaluationError
from checker.explore.engine import ChunkResult, NewColumns, _counter
from checker.explore.expansion import Event, ExpansionFactory, ExpansionSettings, Key
from checker.explore.kinds import EventKind
from checker.explore.options import Options
from checker.liveness.stategraph import (
    EdgeLog,
    GraphPart,
    GraphRecorder,
    assemble,
    atom_truths,
    temporal_atoms,
)
from checker.model import Model
from checker.store.fingerprints import FingerprintIndex, FingerprintSet


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


#: Candidates for an owner, in fingerprint order: (fingerprints uint64, parent
#: ordinals int64, successor indices int64); a key is (parent ordinal, successor index).
Candidates = tuple[np.ndarray, np.ndarray, np.ndarray]
#: Kept states as arrays: parent ordinals, successor indices, fingerprints, actions,
#: depths (in key order).
Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

_EMPTY_U64 = np.empty(0, dtype=np.uint64)
_EMPTY_I64 = np.empty(0, dtype=np.int64)


class _Kept:
    """The states a partition keeps at the end of a level, as columns in key order,
    with their handles."""

    __slots__ = ("action", "choice", "fp", "handles", "parent", "truth")

    def __init__(
        self,
        parent: np.ndarray = _EMPTY_I64,
        choice: np.ndarray = _EMPTY_I64,
        fp: np.ndarray = _EMPTY_U64,
        action: np.ndarray = _EMPTY_I64,
        handles: list[Any] | None = None,
        truth: np.ndarray | None = None,
    ) -> None:
        self.parent, self.choice, self.fp, self.action = parent, choice, fp, action
        self.handles: list[Any] = handles if handles is not None else []
        #: With a state graph: the temporal atoms' truth per kept state (a row each).
        self.truth = truth

    def __len__(self) -> int:
        return len(self.handles)


class Partition:
    """Partition ``w`` of ``n``: its visited fingerprints, frontier and level state.

    Everything per candidate successor is array work (numpy): deduplicating a level's
    successors, the visited tests, picking each fingerprint's smallest key, ordering
    the winners; only expanding a state and checking a new one run per state in
    Python, as in one process.  The visited sets are sorted fingerprint arrays, merged
    a level at a time (8 bytes per state instead of a Python set's ~70).
    """

    def __init__(
        self,
        w: int,
        n: int,
        model: Model,
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        settings: ExpansionSettings,
        make: ExpansionFactory,
        graph: bool = False,
    ) -> None:
        self.w, self.n = w, n
        self.model = model
        self.exp = make(model, renamings, deadlock, settings)
        # With a state graph (liveness): the edges of the states expanded here and
        # the temporal atoms' truth in the states kept here.
        self.atoms = temporal_atoms(model) if graph else None
        # Under symmetry the graph is the quotient one (checker.liveness.quotient): its edges
        # carry their successors' own fingerprints, its states their lanes.
        lanes_of = self.exp.lanes_of if graph and len(renamings) > 1 else None
        self.log = EdgeLog(len(self.atoms), lanes_of) if self.atoms is not None else None
        self.visited = FingerprintSet()
        # Fingerprints this worker already submitted to other owners: they are visited
        # there, whoever won them, so they need never be sent again.
        self.remote_seen = FingerprintSet()
        # The frontier: ordinals (ascending) and handles, all at depth ``depth``.
        self.ordinals: list[int] = []
        self.handles: list[Any] = []
        self.depth = 1
        # This level's candidates: sorted unique fingerprints, their smallest keys
        # (parent, choice), actions and handles.
        self.cand: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any]] | None = None
        self.counts: list[tuple[int, list[int]]] = []
        self.first: Event | None = None
        self.kept = _Kept()
        self.limited = False

    def seed(self, entries: list[tuple[int, Any, int]]) -> None:
        """Take initial states (ordinal, state, depth) this partition owns."""
        fps = []
        for ordinal, state, depth in entries:
            handle = self.exp.handle_of(state)
            fps.append(self.exp.fp_of(handle))
            self.ordinals.append(ordinal)
            self.handles.append(handle)
            self.depth = depth
        self.visited.merge(np.unique(np.array(fps, dtype=np.uint64)))

    def expand(self, limited: bool) -> tuple[int, list[int], list[Candidates]]:
        """Phase 1: (states generated, generated per action, candidates per owner)."""
        n, w = self.n, self.w
        self.limited = limited
        counts: list[tuple[int, list[int]]] = []
        acts: list[int] = []
        first: Event | None = None
        # Per successor inside the constraint, in key order: plain ints (and the
        # handles), no tuple per successor: a level's worth of tuples kept alive until
        # the owners answer made the cyclic GC rescan them over and over (mini-Raft,
        # 2 workers: 48 s -> 35 s).
        fps: list[int] = []
        choices: list[int] = []
        actions_of: list[int] = []
        handles: list[Any] = []
        parents: list[int] = []
        expand = self.exp.expand
        log = self.log
        for ordinal, handle in zip(self.ordinals, self.handles, strict=True):
            actions, succ, ev = expand(ordinal, handle)
            counts.append((ordinal, actions))
            if log is not None:
                log.add(ordinal, succ)
            acts += actions
            if succ:
                inside = [c for c in succ if c[4] is not None]
                fps += [c[4] for c in inside if c[4] is not None]
                choices += [c[0] for c in inside]
                actions_of += [c[1] for c in inside]
                handles += [c[3] for c in inside]
                parents += [ordinal] * len(inside)
            if ev is not None:
                first = ev  # later entries' keys all come after it
                break
        if log is not None:
            log.flush()
        fp = np.array(fps, dtype=np.uint64)
        # Successors arrive in key order, so a fingerprint's first occurrence (what
        # np.unique's return_index gives) carries its smallest key.
        ufp, idx = np.unique(fp, return_index=True)
        owner = ufp % np.uint64(n)
        mine = owner == w
        seen = np.empty(len(ufp), dtype=bool)
        seen[mine] = self.visited.contains(ufp[mine])
        seen[~mine] = self.remote_seen.contains(ufp[~mine])
        fresh = ~seen
        ufp, idx, owner = ufp[fresh], idx[fresh], owner[fresh]
        parent = np.array(parents, dtype=np.int64)[idx]
        choice = np.array(choices, dtype=np.int64)[idx]
        action = np.array(actions_of, dtype=np.int64)[idx]
        self.cand = (ufp, parent, choice, action, [handles[i] for i in idx.tolist()])
        outgoing: list[Candidates] = []
        for o in range(n):
            sel = owner == o
            outgoing.append((ufp[sel], parent[sel], choice[sel]))
        if not limited:
            self.remote_seen.merge(ufp[~(owner == w)])
        self.counts, self.first = counts, first
        act_gen = np.bincount(
            np.array(acts, dtype=np.int64), minlength=len(self.model.action_names)
        )
        return len(acts), act_gen.tolist(), outgoing

    def own(self, submissions: list[tuple[int, Candidates]]) -> list[np.ndarray]:
        """Phase 2, as owner: the fingerprints each submitter won (sorted arrays)."""
        parts = [(s, c) for s, c in submissions if len(c[0])]
        if not parts:
            return [_EMPTY_U64] * self.n
        fps = np.concatenate([c[0] for _, c in parts])
        parent = np.concatenate([c[1] for _, c in parts])
        choice = np.concatenate([c[2] for _, c in parts])
        who = np.concatenate([np.full(len(c[0]), s, dtype=np.int64) for s, c in parts])
        # Per fingerprint the smallest key among all submitters: the one-process BFS
        # discovery.
        order = np.lexsort((choice, parent, fps))
        ranked = fps[order]
        lead = np.ones(len(order), dtype=bool)
        lead[1:] = ranked[1:] != ranked[:-1]
        win = order[lead]
        wfps = fps[win]  # sorted: the fingerprint is the primary sort key
        fresh = ~self.visited.contains(wfps)
        win, wfps = win[fresh], wfps[fresh]
        if not self.limited:
            self.visited.merge(wfps)
        winner = who[win]
        return [wfps[winner == s] for s in range(self.n)]

    def check(self, won: list[np.ndarray]) -> tuple[Columns, Any, bool]:
        """Phase 3: check the states won, in key order; (kept as columns, the earliest
        event as a summary, whether a state beyond --max-depth was cut)."""
        assert self.cand is not None
        ufp, cparent, cchoice, caction, handles = self.cand
        wf = np.concatenate(won) if won else _EMPTY_U64
        pos = np.searchsorted(ufp, wf)  # every fingerprint won is a candidate of ours
        pos = pos[np.lexsort((cchoice[pos], cparent[pos]))]
        keep: list[int] = []
        truncated = False
        first = self.first
        check = self.exp.check
        atoms = self.atoms
        truths: list[list[int]] = []
        for i, p, c in zip(pos.tolist(), cparent[pos].tolist(), cchoice[pos].tolist(), strict=True):
            key = (p, c)
            if first is not None and key > first.key:
                break
            if self.limited:
                truncated = True
                ev = check(key, handles[i], False)
            else:
                keep.append(i)
                ev = None
                if atoms is not None:
                    # As one process: the temporal atoms when a state is stored, then
                    # its invariants.
                    state = self.exp.state(handles[i])
                    try:
                        truths.append(atom_truths(atoms, state))
                    except EvaluationError as exc:
                        ev = Event(key, EventKind.ERROR, error=exc, new=True, state=state)
                        truths.append([0] * len(atoms))
                if ev is None:
                    ev = check(key, handles[i], True)
            if ev is not None:
                first = ev if first is None or ev.key < first.key else first
                break
        self.cand = None
        at = np.array(keep, dtype=np.int64)
        truth = None
        if atoms is not None:
            truth = np.array(truths, dtype=np.uint8).reshape(len(keep), len(atoms))
        self.kept = _Kept(
            cparent[at], cchoice[at], ufp[at], caction[at], [handles[i] for i in keep], truth
        )
        k = self.kept
        depth = np.full(len(keep), self.depth + 1, dtype=np.int64)
        return (k.parent, k.choice, k.fp, k.action, depth), event_summary(first), truncated

    def ship(self, plan: list[tuple[int, int]]) -> list[Any]:
        """Phase 4a: the kept states to move, per target: (parents, choices,
        fingerprints, actions, states) from the end of the kept ones (as states:
        handles are this process's interned numbers)."""
        k = self.kept
        sends: list[Any] = [None] * self.n
        end = len(k)
        state = self.exp.state
        for target, count in plan:
            a = end - count
            sends[target] = (
                k.parent[a:end],
                k.choice[a:end],
                k.fp[a:end],
                k.action[a:end],
                [state(h) for h in k.handles[a:end]],
                None if k.truth is None else k.truth[a:end],
            )
            end = a
        if end < len(k):
            self.kept = _Kept(
                k.parent[:end],
                k.choice[:end],
                k.fp[:end],
                k.action[:end],
                k.handles[:end],
                None if k.truth is None else k.truth[:end],
            )
        return sends

    def take(self, parts: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Phase 4b: take the states shipped here; the keys of the kept states, sorted
        (as the arrays of their parent ordinals and successor indices)."""
        k = self.kept
        got = [p for p in parts if p is not None]
        if got:
            handle_of = self.exp.handle_of
            handles = k.handles + [handle_of(t) for p in got for t in p[4]]
            parent = np.concatenate([k.parent, *(p[0] for p in got)])
            choice = np.concatenate([k.choice, *(p[1] for p in got)])
            order = np.lexsort((choice, parent))
            truth = None
            if k.truth is not None:
                truth = np.concatenate([k.truth, *(p[5] for p in got)])[order]
            k = self.kept = _Kept(
                parent[order],
                choice[order],
                np.concatenate([k.fp, *(p[2] for p in got)])[order],
                np.concatenate([k.action, *(p[3] for p in got)])[order],
                [handles[i] for i in order.tolist()],
                truth,
            )
        return k.parent, k.choice

    def number(self, ordinals: np.ndarray) -> None:
        """Phase 4c: the kept states, numbered, are the next frontier."""
        if self.log is not None and self.kept.truth is not None:
            self.log.keep(np.asarray(ordinals), self.kept.truth, self.kept.handles)
        self.ordinals = ordinals.tolist()
        self.handles = self.kept.handles
        self.depth += 1
        self.kept = _Kept()

    def graph_part(self) -> GraphPart:
        """This partition's share of the state graph (see :class:`GraphPart`)."""
        if self.log is None:
            raise ConfigError("this exploration did not record a state graph")
        return self.log.part()

    def count_before(self, key: Key) -> tuple[int, dict[int, int]]:
        """States (and per action) one process would have generated this level before
        ``key``: how TLC counts at a stop."""
        return _counter(self.counts)(tuple(key))  # type: ignore[arg-type]


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
        make: ExpansionFactory,
        settings: ExpansionSettings | None = None,
        recorder: GraphRecorder | None = None,
    ) -> None:
        self.model = model
        #: Makes each partition's expansion (the run's choice, not this module's).
        self.make = make
        self.renamings = renamings
        self.deadlock = deadlock
        self.max_depth = opts.max_depth
        #: With a state graph (liveness): the partitions log their edges and atoms'
        #: truths, put together here when the exploration ends (:meth:`finish`).
        self.recorder = recorder
        self.graph = recorder is not None
        #: The stored states' fingerprints -> ordinals (with a state graph only).
        self.index = FingerprintIndex()
        settings = settings or ExpansionSettings()
        self.exp = make(model, renamings, deadlock, settings)
        # The workers' expansions: the same layout as this one's (its pilot's).
        self.settings = self.exp.layout(settings)
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
            ordinal = len(seen)
            state = self.exp.state(handle)
            owned.append((fp, ordinal, state))
            seen.add(fp)
            if self.recorder is not None:
                # May raise EvaluationError (a temporal predicate): the event.
                self.recorder.node(ordinal, state)
                if self.recorder.wants_lanes:
                    self.recorder.node_lanes(ordinal, self.exp.lanes_of(handle))
                self.recorder.initial(ordinal)

        new, event = self.exp.initial(seen.__contains__, store)
        total = len(self.model.initial_states())
        self.count = len(new)
        if self.graph:
            self.index.add(np.array([fp for fp, _, _ in owned], dtype=np.uint64))
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
        if self.graph:
            self.index.add(new.fp)
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

    def _graph_parts(self) -> list[GraphPart]:
        """Every partition's share of the state graph not fetched yet."""
        raise NotImplementedError

    def add_graph_parts(self, parts: list[GraphPart]) -> None:
        """Add partitions' shares of the state graph (see
        :func:`checker.liveness.stategraph.assemble`)."""
        assert self.recorder is not None
        assemble(self.recorder, parts, self.index)

    def finish(self) -> None:
        """The exploration is over: with a state graph, add what the partitions hold
        of it still."""
        if self.recorder is None or not self.n:
            return
        self.add_graph_parts(self._graph_parts())

    def limited(self) -> bool:
        """Whether this level's successors lie beyond --max-depth."""
        return self.max_depth is not None and self.depth >= self.max_depth

    def snapshot(self) -> list[tuple[int, Any, int]]:
        """Not supported: the frontier is spread over the workers (Options.validate
        refuses --checkpoint with --workers and --cluster)."""
        raise ConfigError("--checkpoint works with one process")

    def graph_image(self) -> Any:
        """Not supported (see :meth:`snapshot`)."""
        raise ConfigError("--checkpoint works with one process")

    def restore(self, frontier: list[tuple[int, Any, int]], fps: Any, graph: Any = None) -> None:
        """Not supported (see :meth:`snapshot`)."""
        raise ConfigError("--checkpoint works with one process")
