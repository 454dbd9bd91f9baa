"""The one exploration core: breadth- or depth-first, one process or several.

Semantics are TLC's (``ModelChecker.doNext``): every generated state is checked
against the invariants, also one outside the state constraint, which only stops its
exploration; a state outside the constraint is never stored or counted as distinct;
initial states count as depth 1; a state with no successor at all is a deadlock.

The loop is written once.  :class:`Exploration` (the coordinator) takes the frontier
chunk by chunk from a *backend*, which expands the chunk and reports a
:class:`ChunkResult`: the new states in discovery order, keyed by ``(ordinal of the
parent, index of the successor)``, and the earliest *event* (violation, deadlock, spec
error).  The coordinator commits new states up to the earliest event or limit, in key
order, which is exactly the order one sequential BFS (or DFS) would meet them in; it
keeps the trace table, the statistics and the limits.  Three backends exist: the local
one (:class:`LocalBackend`, this process, with a queue or a stack of packed handles and
the visited set behind :class:`checker.store.fingerprints.FingerprintStore`, optionally
recording the state graph for liveness and export), the worker processes of
:mod:`checker.distributed.workers` and the dask actors of
:mod:`checker.distributed.cluster` (both through
:class:`checker.distributed.partition.LevelBackend`).  All do the per-state work
through the same expansion interface (:class:`checker.explore.expansion.ExpansionLike`),
which is all the core knows of how states are expanded: the fast engine plugs in behind
it (see :mod:`checker.fastpath.choice` and docs/engine.md), and a request of it to start
again (:class:`checker.explore.expansion.Restart`) is handled where an exploration is
assembled (:mod:`checker.check.assemble`), not here.
Options come from :mod:`checker.explore.options`.
"""

from __future__ import annotations

import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, Protocol

import numpy as np

from checker.base.errors import ConfigError, EvaluationError, MCheckError
from checker.base.signals import (
    DeadlineReached,
    deferred_stop,
    ignore_interrupts,
    stop_signals,
    watchdog,
    watchdog_paused,
)
from checker.explore.expansion import Event, ExpansionLike, Key, NewState
from checker.explore.kinds import EventKind, Strategy
from checker.explore.options import Options
from checker.explore.result import Stats, Verdict
from checker.explore.snapshot import Snapshot
from checker.model import Model
from checker.store.fingerprints import FingerprintSet, FingerprintStore, OrdinalStore, TraceTable
from checker.store.frontier import BreadthFirstQueue, DepthFirstStack
from checker.values.native import NATIVE

#: Frontier states taken per chunk in breadth-first order.
CHUNK = 1024

#: Expanded states as :meth:`LocalBackend._expand` returns them: per state (ordinal,
#: handle, depth, its successors' actions, its candidates, its event or None).
Batch = list[tuple[int, Any, int, list[int], list[Any], Event | None]]
#: Per expanded state, its ordinal and its successors' actions (the generated counts).
Counts = list[tuple[int, list[int]]]
#: A chunk's new states field by field: parent, choice, fingerprint, action, depth.
Columns = tuple[list[int], ...]


class NewColumns:
    """A level's new states in key order as arrays, one per field of :class:`NewState`.

    The distributed backends report a level this way: recording hundreds of thousands
    of states one Python object at a time was most of the coordinator's share of a
    level, during which every worker waits.
    """

    __slots__ = ("action", "choice", "depth", "fp", "parent")

    def __init__(
        self,
        parent: np.ndarray,
        choice: np.ndarray,
        fp: np.ndarray,
        action: np.ndarray,
        depth: np.ndarray,
    ) -> None:
        self.parent = parent.astype(np.int64, copy=False)
        self.choice = choice.astype(np.int64, copy=False)
        self.fp = fp.astype(np.uint64, copy=False)
        self.action = action.astype(np.int64, copy=False)
        self.depth = depth.astype(np.int64, copy=False)

    def __len__(self) -> int:
        return len(self.parent)

    def __iter__(self) -> Iterator[NewState]:
        """The states one at a time (for a level cut by an event or a limit)."""
        for p, c, f, a, d in zip(
            self.parent.tolist(),
            self.choice.tolist(),
            self.fp.tolist(),
            self.action.tolist(),
            self.depth.tolist(),
            strict=True,
        ):
            yield NewState((p, c), f, a, d)


@dataclass
class ChunkResult:
    """What a backend reports for one chunk of the frontier."""

    new: list[NewState] | NewColumns
    event: Event | None
    #: (states generated, generated per action index) up to ``key`` (None: all),
    #: counting whole action families as TLC does (``incrementStatesGenerated(sz)``
    #: per action): the successors of the family of the successor at ``key``.
    generated_before: Callable[[Key | None], tuple[int, dict[int, int]]]
    truncated: bool = False  #: a new state beyond --max-depth was not stored
    frontier: int = 0


class Backend(Protocol):
    """Where the frontier lives and where states are expanded and deduplicated."""

    def start(self) -> ChunkResult:
        """Generate and check the initial states."""
        ...

    def step(self) -> ChunkResult:
        """Expand the next chunk of the frontier."""
        ...

    def pending(self) -> bool:
        """Whether states remain to be expanded."""
        ...

    def finish(self) -> None:
        """The exploration ended without an event or a stop: complete what it recorded
        (a distributed backend puts the state graph's parts together)."""
        ...

    def close(self) -> None:
        """Release processes and memory."""
        ...

    def snapshot(self) -> list[tuple[int, Any, int]]:
        """The frontier as (ordinal, state, depth), in the order it is taken (at a
        chunk boundary only)."""
        ...

    def graph_image(self) -> Any:
        """The state graph recorded so far, for a snapshot (None: none recorded)."""
        ...

    def restore(self, frontier: list[tuple[int, Any, int]], fps: Any, graph: Any = None) -> None:
        """Continue from a snapshot's frontier; ``fps`` are the stored states'
        fingerprints by ordinal (the visited set), ``graph`` its state graph."""
        ...


class _Graph(Protocol):
    """What the local backend tells a state-graph recorder (see checker.liveness.stategraph)."""

    #: Whether the recorder wants each state's fingerprint under every renaming
    #: (:meth:`node_lanes`) and each edge's successor's own fingerprint (a fifth item
    #: of the edge): a graph recorded under symmetry, unfolded afterwards.
    wants_lanes: bool

    def node(self, ordinal: int, state: Any) -> None: ...

    def node_lanes(self, ordinal: int, lanes: tuple[int, ...]) -> None: ...

    def initial(self, ordinal: int) -> None: ...

    def edges(
        self, ordinal: int, edges: list[tuple[int, int, tuple[Any, ...], int, int]]
    ) -> None: ...

    def image(self) -> Any: ...

    def restore(self, image: Any) -> None: ...


class LocalBackend:
    """This process: a queue (BFS) or stack (DFS) of frontier states, the visited set,
    and optionally a state-graph recorder that sees every edge."""

    def __init__(
        self,
        model: Model,
        expansion: ExpansionLike,
        strategy: str,
        max_depth: int | None,
        graph: _Graph | None = None,
        store: FingerprintStore | None = None,
    ) -> None:
        self.model = model
        self.exp = expansion
        self.dfs = strategy == Strategy.DFS
        self.max_depth = max_depth
        self.graph = graph
        self.lanes = graph is not None and graph.wants_lanes
        # The visited set, through its interface: fingerprints only, or with a state
        # graph their ordinals too (an edge needs the ordinal of a state seen before).
        if store is None:
            store = OrdinalStore() if graph is not None else FingerprintSet()
        self.store: FingerprintStore = store
        # (ordinal, handle, depth) entries; breadth-first only the handles are kept.
        self.frontier: BreadthFirstQueue | DepthFirstStack = (
            DepthFirstStack() if self.dfs else BreadthFirstQueue()
        )
        self.count = 0
        self.peak = 0

    def pending(self) -> bool:
        """Whether states remain to be expanded."""
        return bool(self.frontier)

    def finish(self) -> None:
        """Nothing to complete: the state graph, if any, was recorded as it went."""

    def close(self) -> None:
        """Drop the frontier and the visited set."""
        self.frontier.clear()

    def snapshot(self) -> list[tuple[int, Any, int]]:
        """The frontier as (ordinal, state, depth), in the order that rebuilds it."""
        state = self.exp.state
        return [(o, state(h), d) for o, h, d in self.frontier]

    def graph_image(self) -> Any:
        """The state graph recorded so far (see :meth:`GraphRecorder.image`), if any."""
        return self.graph.image() if self.graph is not None else None

    def restore(self, frontier: list[tuple[int, Any, int]], fps: Any, graph: Any = None) -> None:
        """Continue from a checkpoint: the visited set from the stored fingerprints
        (with a state graph, fingerprint -> ordinal, and the graph itself), the
        frontier fingerprinted again and checked against them."""
        if self.graph is not None:
            if graph is None:
                raise ConfigError(
                    "the checkpoint holds no state graph: it was written by a run "
                    "without temporal properties"
                )
            self.graph.restore(graph)
        else:
            if graph is not None:
                raise ConfigError(
                    "the checkpoint holds a state graph: it was written by a run with "
                    "temporal properties"
                )
        self.store.load(np.frombuffer(fps, dtype=np.uint64))
        self.count = len(fps)
        if not self.dfs:
            # Breadth-first, the queue is every stored state not yet expanded: the
            # newest ones, in ordinal order (checkpoint.read checked depths).
            first = self.count - len(frontier)
            if [o for o, _, _ in frontier] != list(range(first, self.count)):
                raise ConfigError(
                    "the checkpoint's queue is not its newest states in order, as a "
                    "breadth-first run leaves it: it cannot be resumed"
                )
        handle_of, fp_of = self.exp.handle_of, self.exp.fp_of
        for o, state, depth in frontier:
            try:
                h = handle_of(state)
                same = 0 <= o < len(fps) and fp_of(h) == fps[o]
            except (MCheckError, TypeError, ValueError, AttributeError, IndexError) as exc:
                raise ConfigError(
                    f"the checkpoint's queued state {o} is not a state of this spec ({exc})"
                ) from None
            if not same:
                raise ConfigError(
                    "the checkpoint's states fingerprint differently now (another "
                    "fingerprint function or spec): it cannot be resumed"
                )
            self.frontier.append(o, h, depth)

    def _store(self, key: Key, fp: int, handle: Any, depth: int) -> int:
        n = self.count
        self.count += 1
        self.store.add(fp)
        self.frontier.append(n, handle, depth)
        if self.graph is not None:
            # May raise EvaluationError (a temporal predicate): the caller's event.
            self.graph.node(n, self.exp.state(handle))
            if self.lanes:
                self.graph.node_lanes(n, self.exp.lanes_of(handle))
            if key[0] == -1:
                self.graph.initial(n)
        return n

    def _seen(self, fp: int) -> bool:
        return fp in self.store

    def start(self) -> ChunkResult:
        """Generate and check the initial states."""
        new, event = self.exp.initial(
            self._seen, lambda key, fp, handle: self._store(key, fp, handle, 1)
        )
        total = len(self.model.initial_states())
        self.peak = max(self.peak, len(self.frontier))
        return ChunkResult(new, event, lambda key: (total, {}), frontier=len(self.frontier))

    def step(self) -> ChunkResult:
        """Expand a chunk: up to CHUNK states breadth-first, or one depth-first."""
        take = 1 if self.dfs else min(CHUNK, len(self.frontier))
        out = ChunkResult([], None, _counter([]))
        counts: Counts = []
        # The chunk's new states, field by field (parent, choice, fp, action, depth):
        # recorded as arrays, not an object per state.
        cols: Columns = ([], [], [], [], [])
        # Expand a batch of states first, so that one search tells which of their
        # successors the compact fingerprint array already holds (the hottest test);
        # as many as the store wants per search (see FingerprintStore.batch).
        taken = 0
        per = self.store.batch
        # Successors the store holds need no candidate (Expansion.screen), except in
        # a graph run: an edge to a known state is recorded too.
        screen = self.exp.screen if self.graph is None else None
        while taken < take and out.event is None:
            if screen is not None:
                screen(self.store.view())
            batch = self._expand(min(per, take - taken))
            taken += len(batch)
            self._commit(batch, out, counts, cols)
            # Freed now, not when the next batch is made: its successors die while
            # still in the caches, and their memory serves the next batch's.
            del batch
        self.peak = max(self.peak, len(self.frontier))
        parents, choices, fps, acts, depths = cols
        out.new = NewColumns(
            np.array(parents, dtype=np.int64),
            np.array(choices, dtype=np.int64),
            np.array(fps, dtype=np.uint64),
            np.array(acts, dtype=np.int64),
            np.array(depths, dtype=np.int64),
        )
        out.generated_before = _counter(counts)
        out.frontier = len(self.frontier)
        return out

    def _expand(self, n: int) -> Batch:
        """Take and expand up to ``n`` states, stopping after one that has an event
        (the run ends at it, so the states taken after it are not put back)."""
        expand = self.exp.expand
        batch = []
        for o, h, depth in self.frontier.take_many(n):
            actions, cands, ev = expand(o, h)
            batch.append((o, h, depth, actions, cands, ev))
            if ev is not None:
                break
        return batch

    def _commit(self, batch: Batch, out: ChunkResult, counts: Counts, cols: Columns) -> None:
        """Store the batch's new successors in key order until an event: each one's
        fields go to ``cols``, each parent's new children to the frontier at once.

        The store adds the batch's candidates at once (one search in C for all of
        them) and says which were new; a new one is stored here, in order, so it
        takes the ordinal the store gave it.  Candidates of a parent at the depth
        limit are only looked up, not added: in a batch they all come after the
        others (breadth-first the queue is in depth order; depth-first a batch is one
        state), so a look-up sees exactly what came before them.  An event ends the
        run, so candidates after it, added but not stored, are never looked up."""
        graph = self.graph
        max_depth = self.max_depth
        if graph is None and max_depth is None:
            self._commit_new(batch, out, counts, cols)
            return
        exp = self.exp
        check = exp.check
        store = self.store
        ordinal = store.ordinal if graph is not None else None  # type: ignore[attr-defined]
        parents, choices, fps_new, acts, depths = cols
        wanted: list[int] = []
        for b in batch:
            if max_depth is None or b[2] + 1 <= max_depth:
                wanted += [c[4] for c in b[4] if c[4] is not None]
        new_flags = iter(store.add_batch(wanted))
        extend = self.frontier.extend
        event: Event | None = None
        edges: list[Any] = []
        # Under symmetry a recorded edge also carries its successor's own fingerprint.
        lanes_of = exp.lanes_of if self.lanes else None
        for o, _h, depth, actions, cands, ev in batch:
            counts.append((o, actions))
            nd = depth + 1
            beyond = max_depth is not None and nd > max_depth
            if graph is not None:
                edges = []
            born: list[Any] = []  # this state's new children, in key order
            for k, ai, params, ch, fp in cands:
                if fp is None:  # outside the constraint (already checked)
                    if graph is not None:
                        edges.append((-1, ai, params, k, 0))
                    continue
                known = fp in store if beyond else not next(new_flags)
                if known:
                    if ordinal is not None:
                        own = lanes_of(ch)[0] if lanes_of is not None else 0
                        edges.append((ordinal(fp), ai, params, k, own))
                    continue
                key = (o, k)
                if beyond:
                    out.truncated = True
                    event = check(key, ch, False)
                    if event is not None:
                        break
                    continue
                parents.append(o)
                choices.append(k)
                fps_new.append(fp)
                acts.append(ai)
                depths.append(nd)
                born.append(ch)
                if graph is not None:
                    n = self.count + len(born) - 1  # (the ordinal the store gave it)
                    try:
                        # May raise EvaluationError (a temporal predicate): the event.
                        graph.node(n, exp.state(ch))
                    except EvaluationError as exc:
                        event = Event(
                            key, EventKind.ERROR, error=exc, new=True, state=exp.state(ch)
                        )
                        break
                    if lanes_of is not None:
                        lanes = lanes_of(ch)
                        graph.node_lanes(n, lanes)
                        edges.append((n, ai, params, k, lanes[0]))
                    else:
                        edges.append((n, ai, params, k, 0))
                event = check(key, ch, True)
                if event is not None:
                    break
            if born:
                extend(self.count, born, nd)
                self.count += len(born)
            if graph is not None:
                graph.edges(o, edges)
            if event is None:
                event = ev
            if event is not None:
                out.event = event
                return

    def _commit_new(self, batch: Batch, out: ChunkResult, counts: Counts, cols: Columns) -> None:
        """:meth:`_commit` for a run that records no graph and has no depth limit
        (most runs): the store picks each parent's new candidates at once (in C where
        the core is built), so a known candidate, most of them, costs no Python step.
        The same stores, checks and events in the same order as :meth:`_commit`."""
        check_new = self.exp.check_new
        parents, choices, fps_new, acts, depths = cols
        fresh = self.store.add_groups([b[4] for b in batch], 4)
        # The new children of consecutive parents at one depth, in key order: queued
        # at once (one call per batch and depth, not per parent).
        born: list[Any] = []
        born_depth = 0
        event: Event | None = None
        for (o, _h, depth, actions, _cands, ev), new in zip(batch, fresh, strict=True):
            counts.append((o, actions))
            if new:
                nd = depth + 1
                if nd != born_depth:
                    self._queue(born, born_depth)
                    born, born_depth = [], nd
                # The invariants first: a violation keeps the children up to and with
                # the violating one, as storing and checking one by one would.
                checked, event = check_new(o, new)
                if event is not None:
                    new = new[: checked + 1]
                for k, ai, _params, ch, fp in new:
                    parents.append(o)
                    choices.append(k)
                    fps_new.append(fp)
                    acts.append(ai)
                    depths.append(nd)
                    born.append(ch)
            if event is None:
                event = ev
            if event is not None:
                out.event = event
                break
        self._queue(born, born_depth)

    def _queue(self, born: list[Any], depth: int) -> None:
        """Queue new states, numbered from the next ordinal, at one depth."""
        if born:
            self.frontier.extend(self.count, born, depth)
            self.count += len(born)


#: The C core's per-family count of a chunk's successors (None: the Counter below).
_ACTION_COUNTS: Callable[[list[tuple[int, list[int]]]], Any] | None = (
    NATIVE.action_counts if NATIVE is not None else None
)


def _counter(
    counts: list[tuple[int, list[int]]],
) -> Callable[[Key | None], tuple[int, dict[int, int]]]:
    """Generated states up to a key, counting whole action families (as TLC does);
    ``counts`` lists (ordinal, action of each successor) per expanded state."""

    def before(key: Key | None) -> tuple[int, dict[int, int]]:
        if key is None:  # the whole chunk: counted in C
            if _ACTION_COUNTS is not None:
                # One pass over the chunk's lists in C, no list of every successor's
                # family built first (Go-Back-N: 4% of its run went to that and the
                # Counter).
                got = _ACTION_COUNTS(counts)
                if got is not None:
                    return got  # type: ignore[no-any-return]
            every = list(chain.from_iterable(actions for _, actions in counts))
            return len(every), Counter(every)
        total = 0
        per: dict[int, int] = {}
        for o, actions in counts:
            if key is not None and o > key[0]:
                break
            if key is not None and o == key[0]:
                if key[1] >= 0:
                    last = actions[key[1]]
                    # Successors come grouped by action family, in family order.
                    upto = key[1] + 1
                    while upto < len(actions) and actions[upto] == last:
                        upto += 1
                    actions = actions[:upto]
                else:
                    actions = []
            total += len(actions)
            for ai in actions:
                per[ai] = per.get(ai, 0) + 1
            if key is not None and o == key[0]:
                break
        return total, per

    return before


@dataclass
class Outcome:
    """What an exploration established, before traces are rebuilt and reported."""

    verdict: Verdict
    stats: Stats
    table: TraceTable
    prop: str | None = None
    reason: str | None = None
    #: The state the trace must reach: its ordinal, plus the index of one more
    #: successor when that state was not stored (outside the constraint, an error).
    ordinal: int = -1
    extra: int | None = None
    error: EvaluationError | None = None
    warnings: list[str] = field(default_factory=list)
    interrupted: bool = False


class Exploration:
    """The coordinator: commits chunk results in order, keeps the trace table, the
    statistics and the limits, and turns the earliest event into an :class:`Outcome`."""

    def __init__(
        self,
        model: Model,
        options: Options,
        backend: Backend,
        checkpointer: Callable[[Snapshot], str] | None = None,
        resume: Snapshot | None = None,
        deadline: float | None = None,
    ) -> None:
        self.model = model
        #: When the whole run must stop (``time.perf_counter()``), set-up included:
        #: the caller's watchdog keeps the same one.  None: ``timeout`` from now.
        self.deadline = deadline
        self.opts = options
        self.backend = backend
        n = len(model.action_names)
        self.stats = Stats(action_generated=[0] * n, action_distinct=[0] * n)
        self.table = TraceTable()
        self.truncated = False
        #: Writes a snapshot and says where (see checker.check.checkpoint); None: no checkpoints.
        self.checkpointer = checkpointer
        self.resume = resume
        self.saved: str | None = None
        self.t0 = 0.0

    def run(self) -> Outcome:
        """Explore until the frontier is empty, an event, a limit or an interruption."""
        opts = self.opts
        stats = self.stats
        started = time.perf_counter()
        deadline = self.deadline
        if deadline is None and opts.timeout:
            deadline = started + opts.timeout
        # A resumed run's clock goes on from the time the checkpoint recorded.
        self.t0 = started - (self.resume.stats.seconds if self.resume is not None else 0.0)
        next_progress = started + opts.progress_every
        next_checkpoint = started + opts.checkpoint_every
        # Memory set aside so that "out of memory" can still be reported.
        reserve: bytearray | None = bytearray(8 << 20)
        outcome: Outcome | None = None
        try:
            with (
                stop_signals(),
                watchdog(deadline),
                deferred_stop(self.checkpointer is not None) as stop_asked,
            ):
                if self.resume is not None:
                    self._restore(self.resume)
                    stats = self.stats
                else:
                    outcome = self._commit(self.backend.start())
                while outcome is None and self.backend.pending():
                    now = time.perf_counter()
                    if stop_asked[0]:
                        # Ctrl-C while checkpointing: the chunk was finished first, so
                        # the final checkpoint is one the run can continue from.
                        self._save(final=True)
                        outcome = self._stop(Verdict.INCOMPLETE, "interrupted")
                        outcome.interrupted = True
                        break
                    if deadline is not None and now >= deadline:
                        self._save(final=True)
                        outcome = self._stop(Verdict.INCOMPLETE, f"timeout {opts.timeout}s reached")
                        break
                    if self.checkpointer is not None and now >= next_checkpoint:
                        self._save(final=False)
                        next_checkpoint = time.perf_counter() + opts.checkpoint_every
                    if opts.progress is not None and now >= next_progress:
                        next_progress = now + opts.progress_every
                        stats.seconds = now - self.t0
                        opts.progress(stats)
                    outcome = self._commit(self.backend.step())
                if outcome is None:
                    self.backend.finish()
        except DeadlineReached:
            outcome = self._stop(Verdict.INCOMPLETE, f"timeout {opts.timeout}s reached")
        except KeyboardInterrupt:
            # The run is over: a second Ctrl-C must not break the report of this one.
            ignore_interrupts()
            outcome = self._stop(Verdict.INCOMPLETE, "interrupted")
            outcome.interrupted = True
        except MemoryError:
            reserve = None
            outcome = self._stop(
                Verdict.INCOMPLETE, f"out of memory after {stats.distinct:,} distinct states"
            )
        except (WorkerLost, SaveFailed) as exc:
            outcome = self._stop(Verdict.INCOMPLETE, str(exc))
        finally:
            del reserve
            with suppress(KeyboardInterrupt):
                self.backend.close()
        if outcome is None:
            if self.truncated:
                outcome = self._stop(Verdict.INCOMPLETE, f"max-depth {opts.max_depth} reached")
            else:
                outcome = self._stop(Verdict.OK, None)
        if self.saved is not None and outcome.verdict is Verdict.INCOMPLETE:
            outcome.warnings.append(self.saved)
        self.stats.seconds = time.perf_counter() - self.t0
        return outcome

    def _save(self, final: bool) -> None:
        """Write a checkpoint (at a chunk boundary: table, statistics and frontier
        agree).  The watchdog is held off meanwhile: a write cut short keeps the
        previous checkpoint, but the timeout must not waste the one being written."""
        if self.checkpointer is None:
            return
        with watchdog_paused(rearm=not final):
            stats = self.stats
            snap = Snapshot(
                stats=replace(
                    stats,
                    seconds=time.perf_counter() - self.t0,
                    action_generated=list(stats.action_generated),
                    action_distinct=list(stats.action_distinct),
                ),
                truncated=self.truncated,
                fps=self.table.fps,
                parent=self.table.parent,
                choice=self.table.choice,
                frontier=self.backend.snapshot(),
                graph=self.backend.graph_image(),
            )
            self.saved = self.checkpointer(snap)

    def _restore(self, snap: Snapshot) -> None:
        """Continue from a checkpoint: its trace table, statistics and frontier."""
        if len(snap.stats.action_generated) != len(self.model.action_names):
            raise ConfigError("the checkpoint was written for other actions")
        inits = len(self.model.initial_states())
        roots = np.frombuffer(snap.parent, dtype=np.int64) == -1
        if (np.frombuffer(snap.choice, dtype=np.uint32)[roots] >= inits).any():
            raise ConfigError(
                f"the checkpoint records an initial state beyond the spec's {inits}: it "
                "cannot be resumed"
            )
        self.table.fps = array("Q", snap.fps)
        self.table.parent = array("q", snap.parent)
        self.table.choice = array("I", snap.choice)
        self.stats = replace(
            snap.stats,
            action_generated=list(snap.stats.action_generated),
            action_distinct=list(snap.stats.action_distinct),
        )
        self.truncated = snap.truncated
        self.backend.restore(snap.frontier, snap.fps, snap.graph)

    def _stop(self, verdict: Verdict, reason: str | None) -> Outcome:
        return Outcome(verdict, self.stats, self.table, reason=reason)

    def _commit(self, chunk: ChunkResult) -> Outcome | None:
        """Record the chunk's new states in key order up to its event or a limit."""
        stats = self.stats
        limit = self.opts.max_states
        event = chunk.event
        cut: Key | None = event.key if event is not None else None
        stop: Outcome | None = None
        event_ordinal = -1
        new = chunk.new
        if (
            isinstance(new, NewColumns)
            and event is None
            and (limit is None or stats.distinct + len(new) < limit)
        ):
            self._commit_columns(new)
            new = []
        for ns in new:
            if cut is not None and ns.key > cut:
                break
            ordinal = self.table.record(ns.fp, ns.key[0], ns.key[1])
            stats.distinct += 1
            if ns.depth > stats.depth:
                stats.depth = ns.depth
            if ns.action >= 0:
                stats.action_distinct[ns.action] += 1
            if event is not None and ns.key == event.key:
                event_ordinal = ordinal
                break
            if limit is not None and stats.distinct >= limit and stop is None:
                stop = self._stop(Verdict.INCOMPLETE, f"max-states {limit} reached")
                if self.checkpointer is None:
                    cut = ns.key
                    event = None
                    break
                # With --checkpoint the chunk in hand is finished (the saved frontier
                # must be the table's), so the count may pass the limit by a chunk;
                # an event within it is still reported, as a finished chunk's would be.
        generated, per_action = chunk.generated_before(cut)
        stats.generated += generated
        for ai, count in per_action.items():
            stats.action_generated[ai] += count
        stats.queue = chunk.frontier
        stats.queue_peak = max(stats.queue_peak, chunk.frontier)
        self.truncated = self.truncated or chunk.truncated
        if event is not None:
            return self._event_outcome(event, event_ordinal)
        if stop is not None and self.checkpointer is not None:
            self._save(final=True)
        return stop

    def _commit_columns(self, new: NewColumns) -> None:
        """Record a whole level at once (no event, no limit inside it)."""
        if not len(new):
            return
        stats = self.stats
        self.table.extend(new.fp, new.parent, new.choice)
        stats.distinct += len(new)
        stats.depth = max(stats.depth, int(new.depth.max()))
        acts = new.action[new.action >= 0]
        per = np.bincount(acts, minlength=len(stats.action_distinct))
        for ai, c in enumerate(per.tolist()):
            stats.action_distinct[ai] += c

    def _event_outcome(self, event: Event, event_ordinal: int) -> Outcome:
        parent, k = event.key
        if event.new:
            ordinal, extra = event_ordinal, None
        elif k == -1:
            ordinal, extra = parent, None  # the state being expanded
        else:
            ordinal, extra = parent, k  # one successor further (or initial state k)
        verdict = {
            "violation": Verdict.VIOLATION,
            "deadlock": Verdict.DEADLOCK,
            "error": Verdict.ERROR,
        }[event.kind]
        reason = str(event.error) if event.error is not None else None
        return Outcome(
            verdict,
            self.stats,
            self.table,
            prop=event.prop,
            reason=reason,
            ordinal=ordinal,
            extra=extra,
            error=event.error,
        )


class SaveFailed(Exception):
    """Raised by a checkpointer that could not write its checkpoint (a full disk, a
    folder gone read-only): the run stops, incomplete, with its figures so far."""


class WorkerLost(Exception):
    """A worker process died or failed: the run stops as incomplete, never a pass."""
