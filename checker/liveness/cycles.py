r"""Temporal properties under fairness: fair-cycle search and shortest lassos.

Three forms, over state predicates: ``<>P``, ``[]<>P`` and ``P ~> Q``.  Each fails
exactly when some fair behaviour stays forever in a set of "bad" states:

* ``<>P``: a fair behaviour that never meets P: from an initial state, through ¬P
  states only, into a fair cycle of ¬P states;
* ``[]<>P``: a reachable fair cycle with no P state on it;
* ``<>[]P``: a reachable fair cycle through a ¬P state (¬P infinitely often);
* ``P ~> Q``: a reachable state with P and ¬Q, then ¬Q states forever (a fair cycle).

Stuttering counts as TLA+ counts it: every state has a stuttering self-loop, and a
behaviour may stutter forever in a state where no fair action is enabled (a deadlock
included); a step that leaves the state unchanged neither enables nor takes an action
(TLA+'s ``<A>_vars``).  Fairness constraints are per action instance, or on a group of
action families as one action (``WF_vars(A \/ B)``): weak fairness (WF) is violated
by a cycle on which the action is enabled in every state and never taken; strong
fairness (SF) by one on which it is enabled in some state and never taken.

The graph comes from the exploration core (:mod:`checker.liveness.stategraph`), built without
symmetry (a reduction can hide liveness violations, as TLC warns).  It is restricted
to the bad states and split into strongly connected components (an iterative Tarjan
over integer adjacency lists; networkx is the reference in the tests); a component is
kept if every fair instance enabled in it is taken inside it or, for WF, disabled
somewhere in it; one failing only SF is refined (the states where the instance is
enabled are removed and the rest re-split), the classic Streett emptiness check.

The lasso is a shortest one: for a loop state r in a fair component, a shortest
prefix (BFS) to r plus a *shortest* fair cycle through r, found by a breadth-first
search over (state, which fairness obligations the cycle has met so far); r is the
loop state minimising their sum (nearest states first, stopping when no farther one
can do better), so no lasso of the property is shorter.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from checker.authoring.kinds import FairnessKind, TemporalKind
from checker.liveness.stategraph import StateGraph
from checker.model import TemporalProperty

#: Above this many (state, obligation) pairs the exact shortest-cycle search gives way
#: to a greedy fair cycle (still fair, not necessarily shortest).
EXACT_CYCLE_BUDGET = 2_000_000


def strongly_connected(
    nodes: Iterable[int], succ: Sequence[list[tuple[int, int]]], allowed: set[int]
) -> list[list[int]]:
    """SCCs of the subgraph induced by ``allowed`` (iterative Tarjan)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    result: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index or root not in allowed:
            continue
        # A frame keeps its state's edges: a graph's rows may be built when read.
        work: list[tuple[int, int, list[tuple[int, int]]]] = [(root, 0, succ[root])]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, pos, edges = work[-1]
            advanced = False
            while pos < len(edges):
                w = edges[pos][0]
                pos += 1
                if w not in allowed:
                    continue
                if w not in index:
                    work[-1] = (v, pos, edges)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, 0, succ[w]))
                    advanced = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                result.append(comp)
    return result


def fair_components(g: StateGraph, allowed: set[int]) -> list[set[int]]:
    """The maximal fair components inside ``allowed`` (with stuttering self-loops)."""
    found: list[set[int]] = []
    todo = [set(allowed)]
    while todo:
        region = todo.pop()
        for comp_list in strongly_connected(sorted(region), g.succ, region):
            comp = set(comp_list)
            taken = {c for v in comp for (w, iid) in g.succ[v] if w in comp for c in g.meets(iid)}
            en_any: set[int] = set()
            for v in comp:
                en_any |= g.enabled[v]
            weak_fail = False
            strong_bad: set[int] = set()
            for a in en_any - taken:
                if g.fair[a] == FairnessKind.WEAK:
                    if all(a in g.enabled[v] for v in comp):
                        weak_fail = True
                        break
                else:
                    strong_bad.add(a)
            if weak_fail:
                continue
            if strong_bad:
                rest = {v for v in comp if not (g.enabled[v] & strong_bad)}
                if rest:
                    todo.append(rest)
                continue
            found.append(comp)
    return found


#: A path: [(state, instance that led to it, successor index of that edge)], the
#: first element's instance and index being None.
Path = list[tuple[int, int | None, int | None]]


def _bfs_path(
    g: StateGraph, starts: Iterable[int], goal: Callable[[int], bool], allowed: set[int] | None
) -> Path | None:
    """Shortest path from any start to a goal state."""
    parent: dict[int, tuple[int, int, int] | None] = {}
    queue: deque[int] = deque()
    for s in starts:
        if (allowed is None or s in allowed) and s not in parent:
            parent[s] = None
            queue.append(s)
    while queue:
        v = queue.popleft()
        if goal(v):
            return _unwind(parent, v)
        for pos, (w, iid) in enumerate(g.succ[v]):
            if w not in parent and (allowed is None or w in allowed):
                parent[w] = (v, iid, _index(g, v, pos))
                queue.append(w)
    return None


def _index(g: StateGraph, v: int, pos: int) -> int:
    return g.successor_index(v, pos)


def _unwind(parent: dict[int, tuple[int, int, int] | None], v: int) -> Path:
    path: Path = []
    cur: int | None = v
    while cur is not None:
        prev = parent[cur]
        path.append((cur, prev[1] if prev else None, prev[2] if prev else None))
        cur = prev[0] if prev else None
    path.reverse()
    return path


def _distances(g: StateGraph, starts: Iterable[int], allowed: set[int] | None) -> dict[int, int]:
    dist: dict[int, int] = {}
    queue: deque[int] = deque()
    for s in starts:
        if (allowed is None or s in allowed) and s not in dist:
            dist[s] = 0
            queue.append(s)
    while queue:
        v = queue.popleft()
        for w, _ in g.succ[v]:
            if w not in dist and (allowed is None or w in allowed):
                dist[w] = dist[v] + 1
                queue.append(w)
    return dist


@dataclass
class Lasso:
    """A prefix ending at the loop state, then a cycle back to it ([] = stutter)."""

    prefix: Path
    cycle: Path
    touches_cut: bool

    @property
    def length(self) -> int:
        """Number of steps: the prefix's, then the cycle's (its closing step included)."""
        return len(self.prefix) - 1 + len(self.cycle)


def shortest_fair_cycle(g: StateGraph, comp: set[int], root: int) -> Path | None:
    """A shortest cycle from ``root`` through ``comp`` back to ``root`` that is fair
    ([] when stuttering at root forever is fair), or None when the exact search is too
    large (the caller then builds a greedy one).

    WF instance a is met by a cycle that takes a or visits a state where a is
    disabled; only those enabled at the root matter (the root is on the cycle).  SF
    instance a is met by taking a or by never visiting a state where it is enabled:
    for each choice of SF instances to take, the others' states are avoided.
    """
    weak = sorted(a for a in g.enabled[root] if g.fair.get(a) == FairnessKind.WEAK)
    strong_all: set[int] = set()
    for v in comp:
        strong_all |= {a for a in g.enabled[v] if g.fair.get(a) == FairnessKind.STRONG}
    strong = sorted(strong_all)
    best: Path | None = None
    for r in range(len(strong) + 1):
        for take in itertools.combinations(strong, r):
            avoid = set(strong) - set(take)
            region = {v for v in comp if not (g.enabled[v] & avoid)}
            if root not in region:
                continue
            goals = weak + list(take)
            if len(region) << len(goals) > EXACT_CYCLE_BUDGET:
                return None
            found = _cycle_search(g, region, root, weak, list(take))
            if found is not None and (best is None or len(found) < len(best)):
                best = found
                if not best:
                    return best
    return best


def _cycle_search(
    g: StateGraph, region: set[int], root: int, weak: list[int], take: list[int]
) -> Path | None:
    bit = {a: 1 << i for i, a in enumerate(weak)}
    tbit = {a: 1 << (len(weak) + i) for i, a in enumerate(take)}
    full = (1 << (len(weak) + len(take))) - 1

    def disabled(v: int) -> int:
        m = 0
        en = g.enabled[v]
        for a, b in bit.items():
            if a not in en:
                m |= b
        return m

    start = disabled(root)
    if start == full:
        return []  # stuttering at the root meets every obligation
    parent: dict[tuple[int, int], tuple[tuple[int, int], int, int] | None] = {(root, start): None}
    queue: deque[tuple[int, int]] = deque([(root, start)])
    while queue:
        node = queue.popleft()
        v, m = node
        for pos, (w, iid) in enumerate(g.succ[v]):
            if w not in region:
                continue
            m2 = m | disabled(w)
            for c in g.meets(iid):
                m2 |= bit.get(c, 0) | tbit.get(c, 0)
            nxt = (w, m2)
            if w == root and m2 == full:
                path: Path = [(w, iid, _index(g, v, pos))]
                cur: tuple[int, int] | None = node
                while cur is not None and parent[cur] is not None:
                    prev = parent[cur]
                    assert prev is not None
                    path.append((cur[0], prev[1], prev[2]))
                    cur = prev[0]
                path.reverse()
                return path
            if nxt not in parent:
                parent[nxt] = (node, iid, _index(g, v, pos))
                queue.append(nxt)
    return None


def greedy_fair_cycle(g: StateGraph, comp: set[int], root: int) -> Path:
    """A fair cycle from root through comp (not necessarily shortest): it takes every
    fair instance that can be taken inside comp, and for the others (WF, never taken)
    passes a state where they are disabled."""
    en_any: set[int] = set()
    for v in comp:
        en_any |= g.enabled[v]
    taken = {c for v in comp for (w, iid) in g.succ[v] if w in comp for c in g.meets(iid)}
    steps: Path = []
    visited = {root}
    cur = root
    for a in sorted(en_any):
        if a in taken:

            def has_edge(v: int, a: int = a) -> bool:
                return any(a in g.meets(i) and w in comp for w, i in g.succ[v])

            path = _bfs_path(g, [cur], has_edge, comp)
            assert path is not None
            steps.extend(path[1:])
            src = path[-1][0]
            pos = next(p for p, (w, i) in enumerate(g.succ[src]) if a in g.meets(i) and w in comp)
            w = g.succ[src][pos][0]
            steps.append((w, g.succ[src][pos][1], _index(g, src, pos)))
            visited.update(v for v, _, _ in path)
            visited.add(w)
            cur = w
        elif all(a in g.enabled[v] for v in visited):

            def disabled(v: int, a: int = a) -> bool:
                return a not in g.enabled[v]

            path = _bfs_path(g, [cur], disabled, comp)
            assert path is not None
            steps.extend(path[1:])
            visited.update(v for v, _, _ in path)
            cur = path[-1][0]
    if cur != root:
        path = _bfs_path(g, [cur], lambda v: v == root, comp)
        assert path is not None
        steps.extend(path[1:])
    return steps


#: Candidate loop states whose shortest fair cycle is computed (nearest first).
MAX_ROOTS = 64


def _lasso_to_components(
    g: StateGraph,
    comps: list[set[int]],
    starts: list[int],
    allowed: set[int] | None,
    head: Path | None = None,
    roots: set[int] | None = None,
) -> Lasso | None:
    """The shortest lasso from ``starts`` into the components: minimise (distance to
    the loop state) + (shortest fair cycle through it) over the loop states (all
    component states, or ``roots``), nearest first, stopping once no farther state can
    do better; ties keep the shorter prefix."""
    comp_of: dict[int, set[int]] = {}
    for comp in comps:
        for v in comp:
            comp_of[v] = comp
    dist = _distances(g, starts, allowed)
    candidates = sorted(
        (d, v) for v, d in dist.items() if v in comp_of and (roots is None or v in roots)
    )
    if not candidates:
        return None
    best: tuple[int, int, Path] | None = None  # (total, root, cycle)
    for tried, (d, root) in enumerate(candidates):
        if best is not None and (d >= best[0] or tried >= MAX_ROOTS):
            break
        comp = comp_of[root]
        cycle = shortest_fair_cycle(g, comp, root)
        if cycle is None:
            cycle = greedy_fair_cycle(g, comp, root)
        total = d + len(cycle)
        if best is None or total < best[0]:
            best = (total, root, cycle)
    assert best is not None
    _, root, cycle = best
    prefix = _bfs_path(g, starts, lambda v: v == root, allowed)
    assert prefix is not None
    if head is not None:
        prefix = head + prefix[1:]
    touched = {v for v, _, _ in cycle} | {root}
    return Lasso(prefix, cycle, any(g.cut[v] for v in touched))


def find_lasso(
    g: StateGraph,
    bad: list[bool],
    prefix_allowed: set[int] | None,
    starts: list[int],
) -> Lasso | None:
    """Shortest prefix from ``starts`` (through ``prefix_allowed``) into a fair
    component of the bad states, then a shortest fair cycle there."""
    bad_set = {v for v, b in enumerate(bad) if b}
    comps = fair_components(g, bad_set)
    if not comps:
        return None
    return _lasso_to_components(g, comps, starts, prefix_allowed)


def _infinitely_often(g: StateGraph, bad: list[bool], starts: list[int]) -> Lasso | None:
    """<>[]Q fails when a fair behaviour meets not-Q infinitely often: a fair cycle
    (anywhere in the graph) through a not-Q state, reached by any prefix."""
    everything = set(range(g.size))
    comps = [c for c in fair_components(g, everything) if any(bad[v] for v in c)]
    if not comps:
        return None
    # Loop states must be not-Q: restrict the components' candidate roots to them.
    roots = [{v for v in c if bad[v]} for c in comps]
    return _lasso_to_components(g, comps, starts, None, roots=set().union(*roots))


def _leads_to_lasso(
    g: StateGraph, bad: list[bool], triggers: list[int], starts: list[int]
) -> Lasso | None:
    """Shortest path to a P-and-not-Q state from which not-Q states lead into a fair
    component, then on through not-Q states into it and round a shortest fair cycle."""
    bad_set = {v for v, b in enumerate(bad) if b}
    comps = fair_components(g, bad_set)
    if not comps:
        return None
    in_comp: set[int] = set().union(*comps)
    doomed = _backward(g, in_comp, bad_set)  # not-Q states that can reach a component
    goals = {v for v in triggers if v in doomed}
    to_trigger = _bfs_path(g, starts, lambda v: v in goals, None)
    if to_trigger is None:
        return None
    return _lasso_to_components(g, comps, [to_trigger[-1][0]], bad_set, head=to_trigger)


def _backward(g: StateGraph, targets: set[int], allowed: set[int]) -> set[int]:
    """The states of ``allowed`` from which a path inside ``allowed`` reaches ``targets``."""
    preds: dict[int, list[int]] = {}
    for v in allowed:
        for w, _ in g.succ[v]:
            if w in allowed:
                preds.setdefault(w, []).append(v)
    seen = set(targets)
    todo = list(targets)
    while todo:
        w = todo.pop()
        for v in preds.get(w, ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def check_property(g: StateGraph, prop: TemporalProperty) -> Lasso | None:
    """A lasso violating ``prop``, or None when it holds on every fair behaviour."""
    n = g.size
    for i, (_params, _pred, premise) in enumerate(prop.instances):
        q = g.truth[(prop.name, i, "q")]
        bad = [not q[v] for v in range(n)]
        starts = g.init
        if prop.start(i) is not None:
            # Only the behaviours from initial states where its condition holds.
            s = g.truth[(prop.name, i, "s")]
            starts = [v for v in g.init if s[v]]
            if not starts:
                continue
        if prop.kind == TemporalKind.EVENTUALLY:
            allowed = {v for v in range(n) if bad[v]}
            lasso = find_lasso(g, bad, allowed, starts)
        elif prop.kind == TemporalKind.ALWAYS_EVENTUALLY:
            lasso = find_lasso(g, bad, None, starts)
        elif prop.kind == TemporalKind.EVENTUALLY_ALWAYS:
            lasso = _infinitely_often(g, bad, starts)
        else:
            assert premise is not None
            p = g.truth[(prop.name, i, "p")]
            triggers = [v for v in range(n) if p[v] and bad[v]]
            if not triggers:
                continue
            lasso = _leads_to_lasso(g, bad, triggers, starts)
        if lasso is not None:
            return lasso
    return None
