"""Temporal properties under fairness: fair-cycle search and lasso counterexamples.

Three forms, over state predicates: ``<>P``, ``[]<>P`` and ``P ~> Q``.  Each fails
exactly when some fair behaviour stays forever in a set of "bad" states:

* ``<>P``: a fair behaviour that never meets P: from an initial state, through ¬P
  states only, into a fair cycle of ¬P states;
* ``[]<>P``: a reachable fair cycle with no P state on it;
* ``P ~> Q``: a reachable state with P and ¬Q, then ¬Q states forever (a fair cycle).

Stuttering counts as TLA+ counts it: every state has a stuttering self-loop, and a
behaviour may stutter forever in a state where no fair action is enabled (a deadlock
included).  Fairness is per action instance: weak fairness (WF) is violated by a cycle
on which an instance is enabled in every state and never taken; strong fairness (SF)
by one on which it is enabled in some state and never taken.

Algorithm: build the reachable state graph (no symmetry: reduction can hide liveness
violations, as TLC warns), restrict it to the bad states, split it into strongly
connected components (an iterative Tarjan over integer adjacency lists: networkx is
used as the reference in the tests but costs about 1 KB per node and several times the
time here), and keep a component if every fair instance enabled in it is either taken
inside it or, for WF, disabled somewhere in it.  A component failing only SF is
refined (the states where the instance is enabled are removed, the rest re-split), the
classic Streett-style emptiness check.  The lasso is a shortest prefix (BFS) into a fair
component, then a cycle through it that takes or avoids each fair instance as needed.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from checker.errors import ConfigError, EvaluationError
from checker.fingerprint import StateFingerprinter, encode
from checker.model import CompiledSpec
from checker.result import Result, Stats, Verdict
from checker.spec import Spec, TemporalDecl
from checker.trace import Step, Trace, make_step


@dataclass
class StateGraph:
    """The reachable state graph with the data fairness needs."""

    states: list[Any]
    init: list[int]
    succ: list[list[tuple[int, int]]]  #: per state: (successor, action instance id)
    enabled: list[frozenset[int]]  #: per state: fair instances enabled there
    cut: list[bool]  #: per state: some successor was outside the constraint
    instances: list[tuple[int, tuple[Any, ...]]]  #: instance id -> (action, params)
    fair: dict[int, str]  #: fair instance id -> "weak" | "strong"
    choice: list[int] = field(default_factory=list)  #: per state: index among inits

    @property
    def edges(self) -> int:
        """Number of (non-stuttering) transitions."""
        return sum(len(s) for s in self.succ)


def build_graph(model: CompiledSpec, max_states: int | None = None) -> StateGraph:
    """Explore every reachable state (no symmetry) and keep the graph."""
    spec = model.spec
    cls = type(spec)
    inits = model.initial_states()
    fpr = StateFingerprinter(len(model.variables(inits[0])), [{}])
    index: dict[int, int] = {}
    states: list[Any] = []
    fps: list[tuple[int, ...]] = []
    init_ids: list[int] = []
    choice: list[int] = []
    for k, s in enumerate(inits):
        if not model.within(s):
            continue
        fp, f = fpr.initial(model.variables(s))
        if fp not in index:
            index[fp] = len(states)
            states.append(s)
            fps.append(f)
            init_ids.append(index[fp])
            choice.append(k)
    inst_ids: dict[tuple[int, Any], int] = {}
    instances: list[tuple[int, tuple[Any, ...]]] = []
    fair: dict[int, str] = {}
    fairness = dict(cls.fairness)
    names = model.action_names
    succ: list[list[tuple[int, int]]] = []
    enabled: list[frozenset[int]] = []
    cut: list[bool] = []
    i = 0
    while i < len(states):
        s = states[i]
        pvals = model.variables(s)
        out: list[tuple[int, int]] = []
        en: set[int] = set()
        was_cut = False
        for ai, params, t in model.successors(s):
            key = (ai, encode(params))
            iid = inst_ids.get(key)
            if iid is None:
                iid = len(instances)
                inst_ids[key] = iid
                instances.append((ai, params))
                how = fairness.get(names[ai])
                if how is not None:
                    kind, pred = how if isinstance(how, tuple) else (how, None)
                    if pred is None or pred(*params):
                        fair[iid] = kind
            if iid in fair:
                en.add(iid)
            if not model.within(t):
                was_cut = True
                continue
            fp, f = fpr.child(model.variables(t), pvals, fps[i])
            j = index.get(fp)
            if j is None:
                j = len(states)
                if max_states is not None and j >= max_states:
                    raise LivenessTooLarge(max_states)
                index[fp] = j
                states.append(t)
                fps.append(f)
            out.append((j, iid))
        succ.append(out)
        enabled.append(frozenset(en))
        cut.append(was_cut)
        i += 1
    return StateGraph(states, init_ids, succ, enabled, cut, instances, fair, choice)


class LivenessTooLarge(Exception):
    """The state graph exceeded the limit given to build_graph."""


def strongly_connected(
    nodes: Iterable[int], succ: list[list[tuple[int, int]]], allowed: set[int]
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
        work: list[tuple[int, int]] = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, pos = work[-1]
            edges = succ[v]
            advanced = False
            while pos < len(edges):
                w = edges[pos][0]
                pos += 1
                if w not in allowed:
                    continue
                if w not in index:
                    work[-1] = (v, pos)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, 0))
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
            taken = {iid for v in comp for (w, iid) in g.succ[v] if w in comp}
            en_any: set[int] = set()
            for v in comp:
                en_any |= g.enabled[v]
            weak_fail = False
            strong_bad: set[int] = set()
            for a in en_any - taken:
                if g.fair[a] == "weak":
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


def _bfs_path(
    g: StateGraph, starts: Iterable[int], goal: Callable[[int], bool], allowed: set[int] | None
) -> list[tuple[int, int | None]] | None:
    """Shortest path from any start to a goal state: [(state, instance that led to it)]."""
    parent: dict[int, tuple[int, int] | None] = {}
    queue: deque[int] = deque()
    for s in starts:
        if (allowed is None or s in allowed) and s not in parent:
            parent[s] = None
            queue.append(s)
    while queue:
        v = queue.popleft()
        if goal(v):
            path: list[tuple[int, int | None]] = []
            cur: int | None = v
            while cur is not None:
                prev = parent[cur]
                path.append((cur, prev[1] if prev else None))
                cur = prev[0] if prev else None
            path.reverse()
            return path
        for w, iid in g.succ[v]:
            if w not in parent and (allowed is None or w in allowed):
                parent[w] = (v, iid)
                queue.append(w)
    return None


@dataclass
class Lasso:
    """A prefix ending at the loop state, then a cycle back to it ([] = stutter)."""

    prefix: list[tuple[int, int | None]]
    cycle: list[tuple[int, int | None]]
    touches_cut: bool


def _cycle(g: StateGraph, comp: set[int], root: int) -> list[tuple[int, int | None]]:
    """A cycle from root through comp that is fair: it takes every fair instance that
    can be taken inside comp, and for the others (WF, never taken) passes a state
    where they are disabled.  Empty when stuttering at root is already fair."""
    en_any: set[int] = set()
    for v in comp:
        en_any |= g.enabled[v]
    taken = {iid for v in comp for (w, iid) in g.succ[v] if w in comp}
    steps: list[tuple[int, int | None]] = []
    visited = {root}
    cur = root
    for a in sorted(en_any):
        if a in taken:

            def has_edge(v: int, a: int = a) -> bool:
                return any(i == a and w in comp for w, i in g.succ[v])

            path = _bfs_path(g, [cur], has_edge, comp)
            assert path is not None
            steps.extend(path[1:])
            src = path[-1][0]
            w = next(w for w, i in g.succ[src] if i == a and w in comp)
            steps.append((w, a))
            visited.update(v for v, _ in path)
            visited.add(w)
            cur = w
        elif all(a in g.enabled[v] for v in visited):

            def disabled(v: int, a: int = a) -> bool:
                return a not in g.enabled[v]

            path = _bfs_path(g, [cur], disabled, comp)
            assert path is not None
            steps.extend(path[1:])
            visited.update(v for v, _ in path)
            cur = path[-1][0]
    if cur != root:
        path = _bfs_path(g, [cur], lambda v: v == root, comp)
        assert path is not None
        steps.extend(path[1:])
    return steps


def find_lasso(
    g: StateGraph,
    bad: list[bool],
    prefix_allowed: set[int] | None,
    starts: list[int],
) -> Lasso | None:
    """Shortest prefix from ``starts`` (through ``prefix_allowed``) into a fair
    component of the bad states, and a fair cycle there."""
    bad_set = {v for v, b in enumerate(bad) if b}
    comps = fair_components(g, bad_set)
    if not comps:
        return None
    member: dict[int, int] = {}
    for n, comp in enumerate(comps):
        for v in comp:
            member[v] = n
    prefix = _bfs_path(g, starts, lambda v: v in member, prefix_allowed)
    if prefix is None:
        return None
    return _close(g, comps, prefix)


def _close(g: StateGraph, comps: list[set[int]], prefix: list[tuple[int, int | None]]) -> Lasso:
    """The lasso whose prefix ends in one of the fair components: add a fair cycle."""
    root = prefix[-1][0]
    comp = next(c for c in comps if root in c)
    cycle = _cycle(g, comp, root)
    touched = {v for v, _ in cycle} | {root}
    return Lasso(prefix, cycle, any(g.cut[v] for v in touched))


def temporal_params(model: CompiledSpec, decl: TemporalDecl) -> list[tuple[Any, ...]]:
    """The parameter tuples a temporal property is checked for (``[()]`` if none)."""
    if not decl.over:
        return [()]
    doms = [model.domain(decl.name, d) for d in decl.over]
    return [tuple(p) for p in itertools.product(*doms)]


def check_temporal(model: CompiledSpec, g: StateGraph, decl: TemporalDecl) -> Lasso | None:
    """A lasso violating ``decl``, or None when it holds on every fair behaviour."""
    spec = model.spec
    n = len(g.states)

    def truth(fn: Callable[..., bool], params: tuple[Any, ...]) -> list[bool]:
        out = []
        for s in g.states:
            try:
                out.append(bool(fn(spec, s, *params)))
            except Exception as exc:
                raise EvaluationError(f"temporal property {decl.name}", exc, s) from exc
        return out

    for params in temporal_params(model, decl):
        q = truth(decl.predicate, params)
        bad = [not x for x in q]
        if decl.kind == "eventually":
            allowed = {v for v in range(n) if bad[v]}
            lasso = find_lasso(g, bad, allowed, g.init)
        elif decl.kind == "always_eventually":
            lasso = find_lasso(g, bad, None, g.init)
        else:
            assert decl.premise is not None
            p = truth(decl.premise, params)
            triggers = [v for v in range(n) if p[v] and bad[v]]
            if not triggers:
                continue
            # Shortest path to a trigger, then through ¬Q states into a fair cycle.
            lasso = _leads_to_lasso(g, bad, triggers)
        if lasso is not None:
            return lasso
    return None


def _leads_to_lasso(g: StateGraph, bad: list[bool], triggers: list[int]) -> Lasso | None:
    """Shortest path to a P-and-not-Q state from which not-Q states lead into a fair
    component, then on through not-Q states into it."""
    bad_set = {v for v, b in enumerate(bad) if b}
    comps = fair_components(g, bad_set)
    if not comps:
        return None
    in_comp: set[int] = set().union(*comps)
    doomed = _backward(g, in_comp, bad_set)  # not-Q states that can reach a component
    goals = {v for v in triggers if v in doomed}
    to_trigger = _bfs_path(g, g.init, lambda v: v in goals, None)
    if to_trigger is None:
        return None
    rest = _bfs_path(g, [to_trigger[-1][0]], lambda v: v in in_comp, bad_set)
    assert rest is not None
    return _close(g, comps, to_trigger + rest[1:])


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


def lasso_trace(model: CompiledSpec, g: StateGraph, lasso: Lasso) -> Trace:
    """The lasso as a Trace whose ``loop`` is the index of the state the cycle returns
    to; the last state listed is that state again (the cycle's closing step)."""
    steps: list[Step] = []
    path = lasso.prefix + lasso.cycle
    prev_state: Any = None
    for k, (v, iid) in enumerate(path):
        state = g.states[v]
        if k == 0 or iid is None:
            steps.append(Step(state=state, action=None))
        else:
            ai, params = g.instances[iid]
            steps.append(make_step(model, ai, params, prev_state, state))
        prev_state = state
    return Trace(steps=tuple(steps), var_names=model.var_names, loop=len(lasso.prefix) - 1)


@dataclass
class LivenessReport:
    """The outcome of checking temporal properties."""

    violated: str | None
    trace: Trace | None
    states: int
    edges: int
    seconds: float
    warnings: list[str]
    incomplete: str | None = None


def check_temporals(
    model: CompiledSpec, names: list[str], max_states: int | None = None
) -> LivenessReport:
    """Check the named temporal properties; the first violated one gives a lasso."""
    import time

    t0 = time.perf_counter()
    decls = {d.name: d for d in type(model.spec)._temporals}
    warnings: list[str] = []
    try:
        g = build_graph(model, max_states)
    except LivenessTooLarge:
        return LivenessReport(
            None,
            None,
            max_states or 0,
            0,
            time.perf_counter() - t0,
            warnings,
            incomplete=f"max-states {max_states} reached while building the state graph",
        )
    for name in names:
        lasso = check_temporal(model, g, decls[name])
        if lasso is not None:
            if lasso.touches_cut:
                warnings.append(
                    f"the cycle violating {name} touches states whose successors the state "
                    "constraint cut off: it may be an artefact of the bound"
                )
            return LivenessReport(
                name,
                lasso_trace(model, g, lasso),
                len(g.states),
                g.edges,
                time.perf_counter() - t0,
                warnings,
            )
    return LivenessReport(None, None, len(g.states), g.edges, time.perf_counter() - t0, warnings)


def split_properties(
    cls: type[Spec], names: tuple[str, ...] | list[str]
) -> tuple[list[str] | None, list[str]]:
    """Selected invariants (None: all) and temporal properties (default: all)."""
    invs, temps = cls.invariant_names(), cls.temporal_names()
    if not names:
        return None, temps
    unknown = [n for n in names if n not in invs and n not in temps]
    if unknown:
        known = ", ".join(invs + temps) or "none"
        raise ConfigError(f"unknown property {unknown[0]!r} for {cls.spec_name()} (known: {known})")
    return [n for n in invs if n in names], [n for n in temps if n in names]


def liveness_result(
    model: CompiledSpec, names: list[str], max_states: int | None, safety: Result | None
) -> Result:
    """Check temporal properties on the full state graph (never under symmetry, and
    saying so) and report like a safety run: a lasso trace, exit code 13."""
    warnings = []
    if type(model.spec).symmetry:
        warnings.append(
            "temporal properties are checked without symmetry reduction "
            "(a reduction can hide liveness violations)"
        )
    report = check_temporals(model, names, max_states)
    warnings += report.warnings
    spec = model.spec
    if safety is not None:
        # The safety pass's figures stay the run's figures (with symmetry, if any);
        # the liveness graph's size is reported beside them.
        stats = replace(safety.stats, seconds=safety.stats.seconds + report.seconds)
    else:
        stats = Stats(
            distinct=report.states,
            generated=report.edges,
            seconds=report.seconds,
            action_generated=[0] * len(model.action_names),
            action_distinct=[0] * len(model.action_names),
        )
    if report.incomplete:
        verdict = Verdict.INCOMPLETE
    else:
        verdict = Verdict.VIOLATION if report.violated else Verdict.OK
    return Result(
        spec=model.name,
        variant=spec.variant,
        verdict=verdict,
        stats=stats,
        constants=spec.constant_values,
        symmetry=False,
        strategy="bfs",
        action_names=model.action_names,
        violated=report.violated,
        trace=report.trace,
        reason=report.incomplete,
        liveness=report.violated is not None,
        warnings=warnings,
        graph=(report.states, report.edges),
    )
