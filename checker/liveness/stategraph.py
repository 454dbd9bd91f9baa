"""The reachable state graph, recorded by the exploration core as it explores.

The core's local backend calls :meth:`GraphRecorder.node` for every stored state and
:meth:`GraphRecorder.edges` for every expanded one, so liveness and ``mcheck graph``
use the very exploration that safety uses (same order, limits and signals) instead of
a loop of their own.  Nodes are the stored states' ordinals; an edge records the
action instance and which successor of its source it was, so a path through the graph
is replayed into a real trace like any counterexample.  States themselves are kept
only when asked (for export); liveness keeps, per node, the truth of each temporal
property's state predicates, evaluated once when the state is first met.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from checker.base.errors import ConfigError, EvaluationError
from checker.model import Model
from checker.store.fingerprints import FingerprintIndex

#: A temporal property's state predicate, keyed (property, parameter index, role).
Atom = tuple[tuple[str, int, str], Callable[[Any], Any]]


def temporal_atoms(model: Model) -> list[Atom]:
    """The state predicates the fair-cycle search reads, in the order the graph keeps
    their truth: per temporal property instance its ``q`` (the predicate), ``p`` (a
    premise) and ``s`` (the initial-state condition)."""
    atoms: list[Atom] = []
    for prop in model.temporal:
        for i, (_params, pred, premise) in enumerate(prop.instances):
            atoms.append(((prop.name, i, "q"), pred))
            if premise is not None:
                atoms.append(((prop.name, i, "p"), premise))
            start = prop.start(i)
            if start is not None:  # read on initial states only (cheap anywhere)
                atoms.append(((prop.name, i, "s"), start))
    return atoms


def atom_truths(atoms: list[Atom], state: Any) -> list[int]:
    """Each atom's truth (0 or 1) in ``state``; a spec error names the property."""
    out: list[int] = []
    for key, pred in atoms:
        try:
            value = pred(state)
        except MemoryError:
            raise
        except Exception as exc:
            raise EvaluationError(f"temporal property {key[0]}", exc, state) from exc
        out.append(1 if value else 0)
    return out


@dataclass
class GraphPart:
    """What one partition of a distributed exploration knows of the state graph: the
    edges of the states it expanded (targets as fingerprints, resolved to ordinals
    when the parts are put together) and the atoms' truth in the states it stored.

    Edges are four parallel arrays in the order they were generated: source ordinal,
    target fingerprint (0 where ``cut``: outside the constraint), the partition's own
    number for the action instance (an index into ``instances``) and which successor
    of its source the edge is.  Truths are a row per stored state: ``truth[i]`` for
    ordinal ``stored[i]``."""

    source: np.ndarray  #: int64
    target: np.ndarray  #: uint64 fingerprints
    cut: np.ndarray  #: bool
    instance: np.ndarray  #: int64, into ``instances``
    index: np.ndarray  #: int64, the successor index k
    instances: list[tuple[int, tuple[Any, ...]]]
    stored: np.ndarray  #: int64 ordinals
    truth: np.ndarray  #: uint8, shape (len(stored), atoms)
    #: Under symmetry (a quotient graph, see checker.liveness.quotient): per edge the
    #: successor's own fingerprint, per stored state its fingerprint under each
    #: renaming (shape (len(stored), renamings)); empty otherwise.
    own: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    lanes: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.uint64))


class EdgeLog:
    """A partition's growing share of the state graph (see :class:`GraphPart`): plain
    lists while a level runs, one array per column at the end."""

    def __init__(
        self, natoms: int, lanes_of: Callable[[Any], tuple[int, ...]] | None = None
    ) -> None:
        #: Under symmetry: a handle's fingerprints under every renaming (the
        #: expansion's), for the successors' own fingerprints and the stored lanes.
        self.lanes_of = lanes_of
        self.own: list[int] = []
        self.lanes: list[np.ndarray] = []
        self.source: list[int] = []
        self.target: list[int] = []
        self.cut: list[bool] = []
        self.instance: list[int] = []
        self.index: list[int] = []
        self.ids: dict[tuple[int, tuple[Any, ...]], int] = {}
        self.natoms = natoms
        self.stored: list[np.ndarray] = []
        self.truth: list[np.ndarray] = []
        # Each level's edges as arrays (25 bytes an edge, not a Python int apiece).
        self.columns: list[tuple[np.ndarray, ...]] = []

    def add(self, ordinal: int, cands: list[Any]) -> None:
        """The edges of one expanded state: its candidates ``(k, action, params,
        handle, fp)``, fp None outside the constraint."""
        ids = self.ids
        lanes_of = self.lanes_of
        for k, ai, params, h, fp in cands:
            key = (ai, params)
            iid = ids.get(key)
            if iid is None:
                iid = ids[key] = len(ids)
            if lanes_of is not None:
                self.own.append(0 if fp is None else lanes_of(h)[0])
            self.source.append(ordinal)
            self.target.append(0 if fp is None else fp)
            self.cut.append(fp is None)
            self.instance.append(iid)
            self.index.append(k)

    def keep(self, ordinals: np.ndarray, truth: np.ndarray, handles: list[Any]) -> None:
        """The atoms' truth for stored states, numbered (and, under symmetry, the
        lanes of their handles)."""
        self.stored.append(ordinals.astype(np.int64, copy=False))
        self.truth.append(truth)
        if self.lanes_of is not None and handles:
            self.lanes.append(np.array([self.lanes_of(h) for h in handles], dtype=np.uint64))

    def flush(self) -> None:
        """Turn the edges logged since the last flush into arrays (once a level)."""
        if not self.source:
            return
        self.columns.append(
            (
                np.array(self.source, dtype=np.int64),
                np.array(self.target, dtype=np.uint64),
                np.array(self.cut, dtype=bool),
                np.array(self.instance, dtype=np.int32),
                np.array(self.index, dtype=np.int32),
                np.array(self.own, dtype=np.uint64),
            )
        )
        self.source, self.target, self.cut, self.instance, self.index = [], [], [], [], []
        self.own = []

    def part(self) -> GraphPart:
        """Everything logged since the last call, as arrays (handed over: the log
        keeps only its instance numbering)."""
        self.flush()
        cols = self.columns or [
            (
                np.empty(0, dtype=np.int64),
                np.empty(0, dtype=np.uint64),
                np.empty(0, dtype=bool),
                np.empty(0, dtype=np.int32),
                np.empty(0, dtype=np.int32),
                np.empty(0, dtype=np.uint64),
            )
        ]
        part = GraphPart(
            np.concatenate([c[0] for c in cols]),
            np.concatenate([c[1] for c in cols]),
            np.concatenate([c[2] for c in cols]),
            np.concatenate([c[3] for c in cols]).astype(np.int64),
            np.concatenate([c[4] for c in cols]).astype(np.int64),
            list(self.ids),
            np.concatenate(self.stored) if self.stored else np.empty(0, dtype=np.int64),
            np.concatenate(self.truth)
            if self.truth
            else np.empty((0, self.natoms), dtype=np.uint8),
            np.concatenate([c[5] for c in cols]),
            np.concatenate(self.lanes) if self.lanes else np.empty((0, 0), dtype=np.uint64),
        )
        self.columns, self.stored, self.truth, self.lanes = [], [], [], []
        return part


class Adjacency(Sequence[list[tuple[int, int]]]):
    """Each state's edges in flat arrays: (successor ordinal, action instance id) and
    which successor of its state the edge is, 16 bytes an edge and 16 a state (a
    Python list of tuples per state took about 100 bytes an edge).

    Reads as a sequence of per-state lists of ``(successor, instance)`` pairs, built
    when asked: the fair-cycle search reads the states it visits, not all of them.
    Edges are written once per state, in any order of states (depth-first included).
    """

    __slots__ = ("dst", "end", "iid", "ks", "start")

    def __init__(self) -> None:
        self.start: array[int] = array("q")
        self.end: array[int] = array("q")
        self.dst: array[int] = array("q")
        self.iid: array[int] = array("i")
        self.ks: array[int] = array("i")

    def add_states(self, n: int) -> None:
        """``n`` more states, without edges yet."""
        self.start.frombytes(bytes(8 * n))
        self.end.frombytes(bytes(8 * n))

    def set(self, v: int, targets: Iterable[int], iids: Iterable[int], ks: Iterable[int]) -> None:
        """State ``v``'s edges (parallel sequences)."""
        a = len(self.dst)
        self.dst.extend(targets)
        self.iid.extend(iids)
        self.ks.extend(ks)
        self.start[v] = a
        self.end[v] = len(self.dst)

    def __len__(self) -> int:
        return len(self.start)

    def __getitem__(self, v: int) -> list[tuple[int, int]]:  # type: ignore[override]
        a, b = self.start[v], self.end[v]
        return list(zip(self.dst[a:b], self.iid[a:b], strict=True))

    def __iter__(self) -> Iterator[list[tuple[int, int]]]:
        for v in range(len(self.start)):
            yield self[v]

    def row_index(self, v: int) -> list[int]:
        """Which successor of ``v`` each of its edges is."""
        return self.ks[self.start[v] : self.end[v]].tolist()

    def successor_index(self, v: int, pos: int) -> int:
        """Which successor of ``v`` its ``pos``-th edge is."""
        return self.ks[self.start[v] + pos]

    @property
    def edge_count(self) -> int:
        """Edges recorded."""
        return len(self.dst)

    def rows(self) -> list[list[tuple[int, int]]]:
        """Every state's edges as lists (a comparison in tests, a small export)."""
        return list(self)


@dataclass
class StateGraph:
    """The reachable state graph with the data fairness and temporal checks need."""

    init: list[int]
    #: per state: (successor, action instance id) pairs; the recorder keeps an
    #: :class:`Adjacency`, tests may give lists
    succ: Adjacency | list[list[tuple[int, int]]]
    enabled: list[frozenset[int]]  #: per state: fairness constraints enabled there
    cut: list[bool]  #: per state: some successor was outside the constraint
    instances: list[tuple[int, tuple[Any, ...]]]  #: instance id -> (action, params)
    fair: dict[int, str]  #: fairness constraint id -> "weak" | "strong"
    #: per state, parallel to ``succ``: which successor of the state the edge is
    succ_index: list[list[int]] = field(default_factory=list)
    #: (property, parameter index, "p" | "q" | "s") -> truth of that predicate per
    #: state ("s": the initial-state condition)
    truth: dict[tuple[str, int, str], bytearray] = field(default_factory=dict)
    states: list[Any] = field(default_factory=list)  #: only when kept (export)
    #: instance id -> the fairness constraints its steps meet; when left empty, a
    #: fair instance is its own constraint (constraint id = instance id).
    member: list[tuple[int, ...]] = field(default_factory=list)

    def meets(self, iid: int) -> tuple[int, ...]:
        """The fairness constraints a step of instance ``iid`` meets."""
        if self.member:
            return self.member[iid]
        return (iid,) if iid in self.fair else ()

    @property
    def size(self) -> int:
        """Number of states."""
        return len(self.succ)

    @property
    def edges(self) -> int:
        """Number of (non-stuttering) transitions inside the constraint."""
        if isinstance(self.succ, Adjacency):
            return self.succ.edge_count
        return sum(len(s) for s in self.succ)

    def successor_index(self, v: int, pos: int) -> int:
        """Which successor of state ``v`` its ``pos``-th edge is."""
        if isinstance(self.succ, Adjacency):
            return self.succ.successor_index(v, pos)
        return self.succ_index[v][pos] if self.succ_index else pos

    def index_rows(self) -> list[list[int]]:
        """Per state, which successor each edge is."""
        if isinstance(self.succ, Adjacency):
            return [self.succ.row_index(v) for v in range(self.size)]
        return [list(r) for r in self.succ_index]


@dataclass
class GraphImage:
    """A recorded state graph as arrays, for a checkpoint (see :mod:`checker.check.checkpoint`).

    Successors are CSR: state v's edges are ``targets/iids/ks[offsets[v]:offsets[v+1]]``
    (ordinal, action instance, successor index); likewise the fairness constraints
    enabled in v.  Instances are listed by number as (action, parameters); their
    fairness constraints are not stored but worked out again from the spec on resume,
    in the same order, so they get the same numbers."""

    init: list[int]
    offsets: np.ndarray  #: int64, states + 1
    targets: np.ndarray  #: int64
    iids: np.ndarray  #: int64
    ks: np.ndarray  #: int64
    enabled_offsets: np.ndarray  #: int64, states + 1
    enabled: np.ndarray  #: int64 constraint ids
    cut: np.ndarray  #: uint8 per state
    truth: np.ndarray  #: uint8, one row per atom key
    atom_keys: list[tuple[str, int, str]]
    instances: list[tuple[int, tuple[Any, ...]]]


class GraphRecorder:
    """Builds a :class:`StateGraph` from the core's node and edge reports."""

    #: An unreduced graph needs no fingerprints under renamings (see
    #: :class:`checker.liveness.quotient.QuotientRecorder`).
    wants_lanes = False

    def __init__(self, model: Model, keep_states: bool = False) -> None:
        self.model = model
        self.keep_states = keep_states
        self._adj = Adjacency()
        self.graph = StateGraph([], self._adj, [], [], [], {})
        # Most states enable the same few sets of fairness constraints: one frozenset each.
        self._shared: dict[frozenset[int], frozenset[int]] = {}
        self._ids: dict[tuple[int, tuple[Any, ...]], int] = {}
        self._constraints: dict[Any, int] = {}
        self._atoms = temporal_atoms(model)
        for key, _ in self._atoms:
            self.graph.truth[key] = bytearray()

    def node(self, ordinal: int, state: Any) -> None:
        """A state stored for the first time (ordinals arrive in order)."""
        g = self.graph
        assert ordinal == len(g.succ)
        self._adj.add_states(1)
        g.enabled.append(frozenset())
        g.cut.append(False)
        if self.keep_states:
            g.states.append(state)
        for (key, _), value in zip(self._atoms, atom_truths(self._atoms, state), strict=True):
            g.truth[key].append(value)

    def node_lanes(self, ordinal: int, lanes: tuple[int, ...]) -> None:
        """Not asked for (``wants_lanes`` is false)."""

    def initial(self, ordinal: int) -> None:
        """Mark a stored state as initial."""
        self.graph.init.append(ordinal)

    def edges(self, ordinal: int, edges: list[tuple[int, int, tuple[Any, ...], int, int]]) -> None:
        """All successors of an expanded state: (target or -1 if outside the
        constraint, action, parameters, successor index, and a fingerprint this
        recorder does not read)."""
        g = self.graph
        targets: list[int] = []
        iids: list[int] = []
        index: list[int] = []
        enabled: set[int] = set()
        cut = False
        for target, ai, params, k, _own in edges:
            iid = self.instance(ai, params)
            if target == ordinal:
                continue  # a stuttering step: neither enables nor takes an action
            enabled.update(g.member[iid])
            if target < 0:
                cut = True
                continue
            targets.append(target)
            iids.append(iid)
            index.append(k)
        self._adj.set(ordinal, targets, iids, index)
        g.enabled[ordinal] = self.shared_enabled(enabled)
        g.cut[ordinal] = cut

    def image(self) -> GraphImage:
        """The graph recorded so far as arrays (for a checkpoint)."""
        g = self.graph

        def csr(rows: list[Any]) -> np.ndarray:
            return np.cumsum(np.array([0] + [len(r) for r in rows], dtype=np.int64))

        adj = self._adj
        start = np.frombuffer(adj.start, dtype=np.int64)
        end = np.frombuffer(adj.end, dtype=np.int64)
        counts = end - start
        # Each state's run of edges, gathered in ordinal order (written in any order).
        gather = np.repeat(start - np.r_[0, np.cumsum(counts)[:-1]], counts) + np.arange(
            int(counts.sum())
        )
        keys = self.atom_keys
        return GraphImage(
            init=list(g.init),
            offsets=np.r_[0, np.cumsum(counts)].astype(np.int64),
            targets=np.frombuffer(adj.dst, dtype=np.int64)[gather].copy(),
            iids=np.frombuffer(adj.iid, dtype=np.int32)[gather].astype(np.int64),
            ks=np.frombuffer(adj.ks, dtype=np.int32)[gather].astype(np.int64),
            enabled_offsets=csr(g.enabled),
            enabled=np.array([c for en in g.enabled for c in sorted(en)], dtype=np.int64),
            cut=np.array(g.cut, dtype=np.uint8),
            truth=np.array([np.frombuffer(g.truth[k], dtype=np.uint8) for k in keys]).reshape(
                len(keys), g.size
            ),
            atom_keys=keys,
            instances=list(g.instances),
        )

    def restore(self, image: GraphImage) -> None:
        """Continue from an image (a checkpoint's graph, its arrays already checked
        against each other): the instances are numbered again through the spec, so an
        instance or a constraint the spec does not have is refused."""
        if self.graph.size:
            raise ConfigError("a state graph can only be restored into an empty recorder")
        if image.atom_keys != self.atom_keys:
            raise ConfigError("the checkpoint's graph was recorded for other temporal properties")
        nactions = len(self.model.action_names)
        for n, (ai, params) in enumerate(image.instances):
            if not (type(ai) is int and 0 <= ai < nactions and isinstance(params, tuple)):
                raise ConfigError("the checkpoint's graph names an action the spec does not have")
            if self.instance(ai, params) != n:
                raise ConfigError("the checkpoint's graph lists an action instance twice")
        g = self.graph
        if len(image.enabled) and int(image.enabled.max()) >= len(g.fair):
            raise ConfigError("the checkpoint's graph names a fairness constraint the spec lacks")
        g.init = list(image.init)
        adj = self._adj
        adj.start = array("q", image.offsets[:-1].astype(np.int64).tobytes())
        adj.end = array("q", image.offsets[1:].astype(np.int64).tobytes())
        adj.dst = array("q", image.targets.astype(np.int64).tobytes())
        adj.iid = array("i", image.iids.astype(np.int32).tobytes())
        adj.ks = array("i", image.ks.astype(np.int32).tobytes())
        en = image.enabled.tolist()
        eoff = image.enabled_offsets.tolist()
        g.enabled = [self.shared_enabled(en[a:b]) for a, b in pairwise(eoff)]
        g.cut = [bool(c) for c in image.cut.tolist()]
        for row, key in zip(image.truth, self.atom_keys, strict=True):
            g.truth[key] = bytearray(row.tobytes())

    # -- what :func:`assemble` asks of a recorder (a quotient graph answers more) ------
    def grown(self, more: int) -> None:
        """``more`` states were added by :func:`assemble` (nothing more to keep)."""

    def stored_lanes(self, ordinals: np.ndarray, rows: np.ndarray) -> None:
        """Stored states' fingerprints under the renamings (none without symmetry)."""

    def moving(self, source: np.ndarray, to: np.ndarray, own: np.ndarray) -> np.ndarray:
        """Which edges are not stuttering steps: those to another state."""
        return np.asarray(to != source)

    def taken_edges(self, source: np.ndarray, to: np.ndarray, own: np.ndarray) -> None:
        """Edges about to be appended to the adjacency, in its order."""

    def enabled_instances(self, source: np.ndarray, iid: np.ndarray) -> None:
        """The instances each state enables (its constraints are all kept here)."""

    def shared_enabled(self, constraints: Iterable[int]) -> frozenset[int]:
        """The one frozenset this graph keeps for a set of enabled constraints (most
        states enable the same few sets)."""
        fs = frozenset(constraints)
        return self._shared.setdefault(fs, fs)

    @property
    def atom_keys(self) -> list[tuple[str, int, str]]:
        """The keys of :attr:`StateGraph.truth`, in :func:`temporal_atoms` order."""
        return [key for key, _ in self._atoms]

    def instance(self, ai: int, params: tuple[Any, ...]) -> int:
        """The graph's number for an action instance (numbered on first use, with the
        fairness constraints its steps meet)."""
        key = (ai, params)
        iid = self._ids.get(key)
        if iid is None:
            g = self.graph
            iid = len(g.instances)
            self._ids[key] = iid
            g.instances.append((ai, params))
            meets = []
            for key, kind in self.model.fairness(ai, params):
                cid = self._constraints.get(key)
                if cid is None:
                    cid = len(self._constraints)
                    self._constraints[key] = cid
                    g.fair[cid] = kind
                meets.append(cid)
            g.member.append(tuple(meets))
        return iid


def assemble(recorder: GraphRecorder, parts: list[GraphPart], known: FingerprintIndex) -> None:
    """Add the partitions' parts of a distributed exploration to ``recorder``'s graph;
    ``known`` indexes every state stored so far (each part's edge targets among them).
    Parts may come a level at a time (in level order) or all at once at the end.

    States already recorded (the initial ones, seen by :meth:`GraphRecorder.node` in
    the coordinator) keep their truths.  Edges are taken in the order one process
    records them (by source ordinal, then successor index), so action instances and
    fairness constraints get the same numbers; as in :meth:`GraphRecorder.edges`, a
    stuttering step neither enables nor takes anything and one outside the
    constraint only enables; a target no partition stored (beyond --max-depth) is
    left out, as one process leaves it.  Array work except one pass per state (its
    successor list), so the coordinator's share stays small beside the workers'.
    """
    g = recorder.graph
    n = known.count
    have = len(g.succ)
    more = n - have
    adj = recorder._adj
    adj.add_states(more)
    g.enabled.extend([frozenset()] * more)
    g.cut.extend([False] * more)
    recorder.grown(more)
    keys = recorder.atom_keys
    for key in keys:
        g.truth[key].extend(bytes(more))
    for p in parts:
        if not len(p.stored):
            continue
        recorder.stored_lanes(p.stored, p.lanes)
        for j, key in enumerate(keys):
            view = np.frombuffer(g.truth[key], dtype=np.uint8)
            view[p.stored] = p.truth[:, j]
            del view  # a live view would forbid growing the bytearray later
    if not parts:
        return
    # The partitions' instance numbers -> one number per distinct (action, params).
    canon: dict[tuple[int, tuple[Any, ...]], int] = {}
    local = [
        np.array([canon.setdefault(key, len(canon)) for key in p.instances], dtype=np.int64)
        for p in parts
    ]
    inst_keys = list(canon)
    source = np.concatenate([p.source for p in parts])
    target = np.concatenate([p.target for p in parts])
    cut = np.concatenate([p.cut for p in parts])
    inst = np.concatenate([m[p.instance] for p, m in zip(parts, local, strict=True)])
    index = np.concatenate([p.index for p in parts])
    own = np.concatenate([p.own for p in parts])
    if len(own) != len(source):
        own = np.zeros(len(source), dtype=np.uint64)
    order = np.lexsort((index, source))
    source, target, cut, inst, index, own = (
        a[order] for a in (source, target, cut, inst, index, own)
    )
    ordinal, found = known.find(target)
    to = np.where(cut, -1, ordinal)
    # A target no partition stored lies beyond --max-depth: one process records no
    # edge to it (nor does the step enable anything).
    keep = cut | found
    source, to, inst, index, own = source[keep], to[keep], inst[keep], index[keep], own[keep]
    if not len(source):
        return
    # Instance ids in order of first use, as one process numbers them edge by edge.
    used, first = np.unique(inst, return_index=True)
    rank = np.zeros(len(inst_keys), dtype=np.int64)
    for c in used[np.argsort(first)].tolist():
        rank[c] = recorder.instance(*inst_keys[c])
    iid = rank[inst]
    # A stuttering step neither enables nor takes an action; a cut one enables only.
    moving = recorder.moving(source, to, own)
    taken = moving & (to >= 0)
    _fill_enabled(recorder, source[moving], iid[moving])
    recorder.enabled_instances(source[moving], iid[moving])
    for v in np.unique(source[moving & (to < 0)]).tolist():
        g.cut[v] = True
    src_t = source[taken]
    if not len(src_t):
        return
    recorder.taken_edges(src_t, to[taken], own[taken])
    # Sources arrive in ordinal order: their runs are appended to the arrays whole.
    base = len(adj.dst)
    adj.dst.frombytes(to[taken].astype(np.int64).tobytes())
    adj.iid.frombytes(iid[taken].astype(np.int32).tobytes())
    adj.ks.frombytes(index[taken].astype(np.int32).tobytes())
    starts = np.flatnonzero(np.r_[True, src_t[1:] != src_t[:-1]])
    ends = np.r_[starts[1:], len(src_t)]
    first, last = np.frombuffer(adj.start, dtype=np.int64), np.frombuffer(adj.end, dtype=np.int64)
    first[src_t[starts]] = base + starts
    last[src_t[starts]] = base + ends
    del first, last  # a live view would forbid growing the arrays later


def _fill_enabled(recorder: GraphRecorder, source: np.ndarray, iid: np.ndarray) -> None:
    """Per state, the fairness constraints its (non-stuttering) steps meet, one shared
    frozenset per distinct set (the recorder's, across every part added)."""
    g = recorder.graph
    counts = np.array([len(m) for m in g.member], dtype=np.int64)
    if not counts.any():
        return
    flat = np.array([c for m in g.member for c in m], dtype=np.int64)
    offs = np.r_[0, np.cumsum(counts)[:-1]]
    reps = counts[iid]
    if not reps.any():
        return
    edge = np.repeat(np.arange(len(iid)), reps)
    # j-th constraint of each edge's instance: position within its run of repeats.
    j = np.arange(len(edge)) - np.repeat(np.cumsum(reps) - reps, reps)
    cid = flat[offs[iid[edge]] + j]
    width = int(cid.max()) + 1
    # Distinct (state, constraint) pairs; sources come sorted, so the sort is cheap
    # (np.unique's hashing was most of this function on a million states).
    pair = np.sort(source[edge] * width + cid)
    pair = pair[np.r_[True, pair[1:] != pair[:-1]]]
    st = pair // width
    cs = (pair % width).tolist()
    starts = np.flatnonzero(np.r_[True, st[1:] != st[:-1]])
    bounds = [*starts.tolist(), len(cs)]
    enabled, shared = g.enabled, recorder.shared_enabled
    for v, a, b in zip(st[starts].tolist(), bounds, bounds[1:], strict=False):
        enabled[v] = shared(cs[a:b])
