"""Liveness under symmetry: the quotient graph, recorded with a permutation on each
edge, and unfolded into the real graph without running the spec again.

A symmetric exploration stores one state per orbit: the representative ``c`` it met
first.  Every fingerprint the engine computes under symmetry is a vector of lanes, one
per renaming ``p`` of the run (lane p of ``x`` is the fingerprint of ``p(x)``), and
the store keys the smallest.  So for an edge ``c --A(q)--> t`` whose successor ``t``
lies in the orbit of the stored ``r``, the lane of ``r`` that equals ``t``'s own
fingerprint names the renaming ``pi`` with ``t = pi(r)``: the recorder keeps ``pi``
on the edge (two bytes) and each representative's lanes (eight bytes a renaming).

Because the transition relation commutes with every renaming (checked on sampled
states before the run, as for invariants; see :func:`checker.model.renamings.check_symmetry`),
the real state ``g(c)`` has exactly the edges ``g(c) --A(g(q))--> (g o pi)(r)``, and
its fingerprint is lane g of ``c``.  :func:`unfold` builds the real graph from that
with array operations: one node per distinct real fingerprint, its edges, the
fairness constraints its renamed instances meet (asked of the spec, per real
instance, as the unreduced recorder asks them), and each temporal predicate's truth
(instance i of a property at ``g(c)`` is instance j at ``c``, where j's parameters are
i's renamed by the inverse of g: a symmetric property is the conjunction of all its
instances).  The result is the unreduced graph itself, up to the numbering of its
nodes, so the fair-cycle search (:mod:`checker.liveness.cycles`) runs on it unchanged and
gives the same verdict and the same shortest lasso length as an unreduced run; only
the exploration, where the spec's code runs, is reduced.  A lasso is replayed from a
real initial state by its real action instances, each state's fingerprint checked.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from checker.base.errors import SpecError
from checker.explore.trace import Trace, TraceDiverged, replay_choices
from checker.liveness.stategraph import Adjacency, GraphRecorder, StateGraph
from checker.model import Model, instance_partners, permute
from checker.values import ModelValue
from checker.values.fingerprint import encode

#: Real states whose edges :func:`unfold` builds at a time.
UNFOLD_CHUNK = 1 << 15


class QuotientRecorder(GraphRecorder):
    """Records the symmetry-reduced graph: per representative its lanes, per edge the
    renaming from the stored representative to the successor, and per state the
    action instances enabled there (renamed when unfolded)."""

    wants_lanes = True

    def __init__(self, model: Model, renamings: list[dict[ModelValue, ModelValue]]) -> None:
        super().__init__(model)
        self.renamings = renamings
        self.nperm = len(renamings)
        if self.nperm >= 1 << 16:
            raise SpecError(f"{model.name}: too many renamings for liveness under symmetry")
        self.lanes: array[int] = array("Q")
        #: per edge, parallel to the adjacency's arrays: the renaming index pi
        self.perm: array[int] = array("H")
        #: per state: the instances enabled there (stuttering steps excluded)
        self.enabled_iids: list[frozenset[int]] = []
        self._shared_iids: dict[frozenset[int], frozenset[int]] = {}

    def node(self, ordinal: int, state: Any) -> None:
        """A representative stored for the first time."""
        super().node(ordinal, state)
        self.enabled_iids.append(frozenset())

    def node_lanes(self, ordinal: int, lanes: tuple[int, ...]) -> None:
        """The representative's fingerprint under each renaming (ordinals in order)."""
        assert len(self.lanes) == ordinal * self.nperm
        self.lanes.extend(lanes)

    def edges(self, ordinal: int, edges: list[tuple[int, int, tuple[Any, ...], int, int]]) -> None:
        """All successors of an expanded representative: (stored target or -1 outside
        the constraint, action, parameters, successor index, the successor's own
        fingerprint)."""
        g = self.graph
        p = self.nperm
        lanes = self.lanes
        own = lanes[ordinal * p]
        targets: list[int] = []
        iids: list[int] = []
        index: list[int] = []
        enabled: set[int] = set()
        cut = False
        for target, ai, params, k, fp in edges:
            iid = self.instance(ai, params)
            if target >= 0 and fp == own:
                continue  # a stuttering step (the very state, not only its orbit)
            enabled.add(iid)
            if target < 0:
                cut = True
                continue
            row = lanes[target * p : (target + 1) * p]
            try:
                pi = row.index(fp)
            except ValueError:
                raise self._not_in_orbit() from None
            targets.append(target)
            iids.append(iid)
            index.append(k)
            self.perm.append(pi)
        self._adj.set(ordinal, targets, iids, index)
        fs = frozenset(enabled)
        self.enabled_iids[ordinal] = self._shared_iids.setdefault(fs, fs)
        constraints: set[int] = set()
        for iid in fs:
            constraints.update(g.member[iid])
        g.enabled[ordinal] = self.shared_enabled(constraints)
        g.cut[ordinal] = cut

    def _not_in_orbit(self) -> SpecError:
        return SpecError(
            f"{self.model.name}: a successor's fingerprint is none of its orbit "
            "representative's renamed fingerprints (a fingerprint collision, or "
            "a spec that is not symmetric)"
        )

    # -- a distributed exploration's parts (checker.liveness.stategraph.assemble) ------------
    def _view(self) -> np.ndarray:
        return np.frombuffer(self.lanes, dtype=np.uint64).reshape(-1, self.nperm)

    def grown(self, more: int) -> None:
        """Room for ``more`` states' lanes and enabled instances."""
        self.lanes.frombytes(bytes(8 * self.nperm * more))
        self.enabled_iids.extend([frozenset()] * more)

    def stored_lanes(self, ordinals: np.ndarray, rows: np.ndarray) -> None:
        """Stored states' lanes, as the partitions computed them."""
        view = self._view()
        view[ordinals] = rows
        del view  # a live view would forbid growing the array later

    def moving(self, source: np.ndarray, to: np.ndarray, own: np.ndarray) -> np.ndarray:
        """Not stuttering: to another orbit, or to another state of the same one."""
        own_fp = self._view()[:, 0]
        return np.asarray(~((to == source) & (own == own_fp[source])))

    def taken_edges(self, source: np.ndarray, to: np.ndarray, own: np.ndarray) -> None:
        """Each edge's renaming: where its successor's own fingerprint is among the
        target representative's lanes."""
        match = self._view()[to] == own[:, None]
        if not match.any(axis=1).all():
            raise self._not_in_orbit()
        self.perm.frombytes(match.argmax(axis=1).astype(np.uint16).tobytes())

    def enabled_instances(self, source: np.ndarray, iid: np.ndarray) -> None:
        """Per state, the instances its non-stuttering steps take (one shared
        frozenset per distinct set)."""
        if not len(source):
            return
        width = int(iid.max()) + 1
        pair = np.unique(source * width + iid)
        states = pair // width
        ids = (pair % width).tolist()
        starts = np.flatnonzero(np.r_[True, states[1:] != states[:-1]])
        bounds = [*starts.tolist(), len(ids)]
        shared = self._shared_iids
        for v, a, b in zip(states[starts].tolist(), bounds, bounds[1:], strict=False):
            fs = frozenset(ids[a:b])
            self.enabled_iids[v] = shared.setdefault(fs, fs)

    def image(self) -> Any:
        """Not kept in a checkpoint (a symmetric liveness run does not take one)."""
        raise SpecError("a symmetry-reduced liveness graph is not checkpointed")


@dataclass
class Unfolded:
    """The real graph unfolded from a quotient graph, and what a trace needs."""

    graph: StateGraph
    #: per real node: its fingerprint (unreduced), for replaying a lasso
    fps: np.ndarray
    #: per real node: (representative ordinal, renaming index) it was built from
    origin: np.ndarray
    orbits: int  #: representatives the exploration stored


def composition(renamings: list[dict[ModelValue, ModelValue]]) -> np.ndarray:
    """``table[a, b]``: the index of the renaming ``x -> a(b(x))``."""
    members = sorted(
        {v for r in renamings for pair in r.items() for v in pair},
        key=lambda m: (m.group, m.index),
    )

    def key(f: Callable[[ModelValue], ModelValue]) -> tuple[ModelValue, ...]:
        return tuple(f(m) for m in members)

    index = {key(lambda m, r=r: r.get(m, m)): i for i, r in enumerate(renamings)}  # type: ignore[misc]
    n = len(renamings)
    table = np.empty((n, n), dtype=np.int64)
    for a, ra in enumerate(renamings):
        for b, rb in enumerate(renamings):
            composed = key(lambda m, ra=ra, rb=rb: ra.get(rb.get(m, m), rb.get(m, m)))  # type: ignore[misc]
            found = index.get(composed)
            if found is None:
                raise SpecError("the symmetry renamings are not closed under composition")
            table[a, b] = found
    return table


def property_maps(model: Model, inverse: list[int]) -> dict[str, np.ndarray] | None:
    """Per temporal property, ``m[g, i]``: the instance j whose parameters are
    instance i's renamed by the inverse of renaming g (None: some renamed parameters
    are no instance of the property, which is then not symmetric)."""
    rows = [instance_partners(model, model.renamings[inverse[g]]) for g in range(len(inverse))]
    if any(r is None for r in rows):
        return None
    return {
        prop.name: np.array([r[prop.name] for r in rows if r is not None], dtype=np.int64)
        for prop in model.temporal
    }


def unfold(rec: QuotientRecorder, model: Model, real_inits: list[int]) -> Unfolded:
    """The real state graph from a recorded quotient graph (see the module docstring).

    ``real_inits``: the unreduced fingerprints of the spec's initial states inside the
    constraint, in the spec's order.  Every renamed representative is a real state, but
    only those reachable from these are the spec's (its initial states need not be
    closed under renaming: a seeded leader, say), so the graph is cut down to them and
    numbered breadth-first from them, as an unreduced exploration numbers its states."""
    q = rec.graph
    p = rec.nperm
    nq = q.size
    lanes = np.frombuffer(rec.lanes, dtype=np.uint64).reshape(nq, p)
    comp = composition(rec.renamings)
    inverse = [int(np.nonzero(comp[g] == 0)[0][0]) for g in range(p)]
    maps = property_maps(model, inverse)
    if maps is None:
        raise SpecError(f"{model.name}: a temporal property is not symmetric")

    # Candidate real nodes: the distinct lanes, each with a pair it comes from
    # (representative, renaming); equal lanes are one state (a symmetric state).
    flat = lanes.ravel()
    uniq, first, inv = np.unique(flat, return_index=True, return_inverse=True)
    # (representative, renaming) -> candidate; 32-bit indices keep this lean.
    cand_of = inv.astype(np.int32).reshape(nq, p)
    del inv
    cc = (first // p).astype(np.int32)
    cg = (first % p).astype(np.int32)
    del first

    # The quotient's edges, gathered representative by representative.
    adj = rec._adj
    start = np.frombuffer(adj.start, dtype=np.int64)
    end = np.frombuffer(adj.end, dtype=np.int64)
    counts = end - start
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    gather = np.repeat(start - offsets[:-1], counts) + np.arange(int(counts.sum()), dtype=np.int64)
    qdst = np.frombuffer(adj.dst, dtype=np.int64)[gather]
    qiid = np.frombuffer(adj.iid, dtype=np.int32)[gather]
    qks = np.frombuffer(adj.ks, dtype=np.int32)[gather]
    qperm = np.frombuffer(rec.perm, dtype=np.uint16)[gather]
    del gather

    # Breadth-first from the real initial states, a level at a time: a node's edges
    # are its representative's, renamed (g(c) --> (g o pi)(r)).
    init_cands: list[int] = []
    for f in real_inits:
        i = int(np.searchsorted(uniq, np.uint64(f)))
        if i >= len(uniq) or int(uniq[i]) != f:
            raise SpecError(
                f"{model.name}: an initial state is in no explored orbit (a fingerprint "
                "collision, or a spec that is not symmetric)"
            )
        if i not in init_cands:
            init_cands.append(i)
    new_id = np.full(len(uniq), -1, dtype=np.int32)
    order_parts: list[np.ndarray] = []
    level = np.array(init_cands, dtype=np.int64)
    new_id[level] = np.arange(len(level))
    count = len(level)
    while len(level):
        order_parts.append(level)
        lc, lg = cc[level], cg[level]
        n_e = counts[lc]
        tot = int(n_e.sum())
        if not tot:
            break
        off = np.r_[0, np.cumsum(n_e)].astype(np.int64)
        idx = np.repeat(offsets[lc] - off[:-1], n_e) + np.arange(tot, dtype=np.int64)
        tg = cand_of[qdst[idx], comp[np.repeat(lg, n_e), qperm[idx]]]
        fresh = tg[new_id[tg] < 0]
        _, at = np.unique(fresh, return_index=True)
        level = fresh[np.sort(at)]
        new_id[level] = np.arange(count, count + len(level))
        count += len(level)
    order = np.concatenate(order_parts) if order_parts else np.zeros(0, dtype=np.int64)
    rc, rg = cc[order], cg[order]
    fps = uniq[order]
    n = len(order)

    # Instance renaming: rename[g, iid] (new real instances numbered by the recorder,
    # so their fairness constraints come from the spec as for an unreduced graph).
    nq_inst = len(q.instances)
    rename = np.empty((p, nq_inst), dtype=np.int64)
    for g, ren in enumerate(rec.renamings):
        for iid in range(nq_inst):
            ai, params = q.instances[iid]
            rename[g, iid] = rec.instance(ai, permute(params, ren))

    # Real edges, node by node in the new numbering, a chunk of nodes at a time (the
    # index arithmetic takes tens of bytes an edge while it lasts).
    rcount = counts[rc]
    total = int(rcount.sum())
    roff = np.r_[0, np.cumsum(rcount)].astype(np.int64)
    dst = np.empty(total, dtype=np.int64)
    iid_real = np.empty(total, dtype=np.int32)
    ks = np.empty(total, dtype=np.int32)
    for a in range(0, n, UNFOLD_CHUNK):
        b = min(n, a + UNFOLD_CHUNK)
        lo, hi = int(roff[a]), int(roff[b])
        cnt = rcount[a:b]
        idx = np.repeat(offsets[rc[a:b]] - (roff[a:b] - lo), cnt) + np.arange(hi - lo)
        eg = np.repeat(rg[a:b], cnt)
        dst[lo:hi] = new_id[cand_of[qdst[idx], comp[eg, qperm[idx]]]]
        iid_real[lo:hi] = rename[eg, qiid[idx]]
        ks[lo:hi] = qks[idx]
    del qdst, qiid, qks, qperm
    radj = Adjacency()
    radj.start = array("q", roff[:-1].tobytes())
    radj.end = array("q", roff[1:].tobytes())
    radj.dst = array("q", dst.tobytes())
    del dst
    radj.iid = array("i", iid_real.tobytes())
    radj.ks = array("i", ks.tobytes())
    del iid_real, ks

    # Enabled constraints: the representative's enabled instances, renamed.
    # Few distinct (set, renaming) pairs: each is worked out once, then looked up.
    member = q.member
    sets: dict[int, int] = {}
    distinct: list[frozenset[int]] = []
    set_of = np.empty(nq, dtype=np.int64)
    for c, en in enumerate(rec.enabled_iids):
        k = sets.get(id(en))
        if k is None:
            k = sets[id(en)] = len(distinct)
            distinct.append(en)
        set_of[c] = k
    pairs, which = np.unique(set_of[rc] * p + rg, return_inverse=True)
    table: list[frozenset[int]] = []
    for pair in pairs.tolist():
        en, row = distinct[pair // p], rename[pair % p]
        cons: set[int] = set()
        for i in en:
            cons.update(member[int(row[i])])
        table.append(rec.shared_enabled(cons))
    enabled = [table[i] for i in which.tolist()]
    del which
    qcut = np.frombuffer(bytes(bytearray(q.cut)), dtype=np.uint8)
    cut = qcut[rc].astype(bool).tolist()

    # Each temporal predicate's truth, per real node, from the renamed instance.
    truth: dict[tuple[str, int, str], bytearray] = {}
    qtruth = {k: np.frombuffer(bytes(v), dtype=np.uint8) for k, v in q.truth.items()}
    for (name, i, role), _ in qtruth.items():
        out = np.empty(n, dtype=np.uint8)
        m = maps[name]
        for g in range(p):
            sel = rg == g
            out[sel] = qtruth[(name, int(m[g, i]), role)][rc[sel]]
        truth[(name, i, role)] = bytearray(out.tobytes())

    graph = StateGraph(
        init=list(range(len(init_cands))),
        succ=radj,
        enabled=enabled,
        cut=cut,
        instances=q.instances,
        fair=q.fair,
        truth=truth,
        member=q.member,
    )
    return Unfolded(graph, fps, np.stack([rc, rg], axis=1), nq)


def unfolded_trace(
    model: Model,
    unfolded: Unfolded,
    path: list[tuple[int, int | None, int | None]],
    fingerprint: Callable[[Any], int],
    loop: int,
) -> Trace:
    """A lasso's path through the unfolded graph as a real trace: from the real
    initial state with the first node's fingerprint, each step the successor of the
    named action instance (parameters strictly equal) with the next node's
    fingerprint; then replayed by those choices, every state checked."""
    g = unfolded.graph
    fps = [int(unfolded.fps[v]) for v, _, _ in path]
    inits = model.initial_states()
    first = next((k for k, s in enumerate(inits) if fingerprint(s) == fps[0]), None)
    if first is None:
        raise TraceDiverged(f"{model.name}: no initial state has the lasso's first fingerprint")
    choices = [first]
    state = inits[first]
    for step, (_v, iid, _k) in enumerate(path[1:], start=1):
        assert iid is not None
        ai, params = g.instances[iid]
        want = repr(encode(params))
        for k, (bi, bparams, nxt) in enumerate(model.successors(state)):
            if bi == ai and repr(encode(bparams)) == want and fingerprint(nxt) == fps[step]:
                choices.append(k)
                state = nxt
                break
        else:
            raise TraceDiverged(
                f"{model.name}: step {step} of the lasso: no successor of "
                f"{model.label(ai, params)} has the recorded fingerprint"
            )
    return replay_choices(model, choices, fps, fingerprint, loop=loop)
