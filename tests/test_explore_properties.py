"""Property-based tests of the explorer on random explicit transition systems.

Reachability, shortest counterexamples and symmetry reduction are checked against
answers computed independently (networkx, brute-force orbit enumeration).
"""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from checker import Options
from checker import run as check
from checker.explore.result import Verdict
from checker.model import permute, renamings
from checker.values import model_values
from checker.values.fingerprint import fingerprint
from tests.toy_models import GraphModel


@st.composite
def graphs(draw: Any) -> tuple[int, dict[int, list[int]], list[int], set[int]]:
    n = draw(st.integers(min_value=1, max_value=25))
    edges = {s: sorted(set(draw(st.lists(st.integers(0, n - 1), max_size=4)))) for s in range(n)}
    inits = sorted(set(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))))
    bad = set(draw(st.lists(st.integers(0, n - 1), max_size=3)))
    return n, edges, inits, bad


def _digraph(n: int, edges: dict[int, list[int]]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((a, b) for a, ts in edges.items() for b in ts)
    return g


def _reachable(g: nx.DiGraph, inits: list[int]) -> set[int]:
    seen: set[int] = set(inits)
    for s in inits:
        seen |= nx.descendants(g, s)
    return seen


@given(graphs())
def test_bfs_and_dfs_reach_exactly_the_reachable_states(case: Any) -> None:
    n, edges, inits, _ = case
    expected = _reachable(_digraph(n, edges), inits)
    for strategy in ("bfs", "dfs"):
        model = GraphModel(inits, edges)
        result = check(model, Options(strategy=strategy, deadlock=False))
        assert result.verdict is Verdict.OK
        assert result.stats.distinct == len(expected)


@given(graphs())
def test_bfs_counterexample_is_a_shortest_path(case: Any) -> None:
    n, edges, inits, bad = case
    g = _digraph(n, edges)
    reach = _reachable(g, inits)
    targets = reach & bad
    model = GraphModel(inits, edges, bad=lambda s: s in bad)
    result = check(model, Options(deadlock=False))
    if not targets:
        assert result.verdict is Verdict.OK
        return
    assert result.verdict is Verdict.VIOLATION
    dist = nx.multi_source_dijkstra_path_length(g, set(inits))
    shortest = min(dist[t] for t in targets)
    assert result.trace is not None
    assert result.trace.length == shortest
    # The trace is a real path of the graph ending in a bad state.
    states = result.trace.states()
    assert states[0] in inits and states[-1] in bad
    for a, b in itertools.pairwise(states):
        assert b in edges[a]


@given(graphs())
def test_bfs_depth_is_the_eccentricity_from_the_initial_states(case: Any) -> None:
    n, edges, inits, _ = case
    g = _digraph(n, edges)
    dist = nx.multi_source_dijkstra_path_length(g, set(inits))
    result = check(GraphModel(inits, edges), Options(deadlock=False))
    assert result.stats.depth == max(dist.values()) + 1  # TLC counts inits as depth 1


P = model_values("p", 3, group="P")
RENAMINGS = renamings([P])


@st.composite
def symmetric_systems(draw: Any) -> tuple[list[Any], dict[Any, list[Any]], int]:
    """Random systems over states [p -> 0..k-1], closed under every permutation of P."""
    k = draw(st.integers(min_value=2, max_value=3))
    states = [
        pmap(dict(zip(P, vals, strict=True))) for vals in itertools.product(range(k), repeat=3)
    ]
    base = draw(st.lists(st.tuples(st.sampled_from(states), st.sampled_from(states)), max_size=12))
    edges: dict[Any, set[Any]] = {s: set() for s in states}
    for a, b in base:
        for ren in RENAMINGS:
            edges[permute(a, ren)].add(permute(b, ren))
    init = draw(st.sampled_from(states))
    target = draw(st.integers(min_value=0, max_value=3 * (k - 1)))
    return [init], {s: list(ts) for s, ts in edges.items()}, target


def _orbit_key(s: Any) -> int:
    return min(fingerprint(permute(s, ren)) for ren in RENAMINGS)


@given(symmetric_systems())
def test_symmetry_stores_one_state_per_orbit_and_keeps_verdicts(case: Any) -> None:
    inits, edges, target = case

    def bad(s: Any) -> bool:
        return sum(s.values()) == target

    # Brute force: every reachable state, then its orbit, without the explorer.
    reach: set[Any] = set(inits)
    todo = list(inits)
    while todo:
        s = todo.pop()
        for t in edges[s]:
            if t not in reach:
                reach.add(t)
                todo.append(t)
    orbits = {_orbit_key(s) for s in reach}

    for strategy in ("bfs", "dfs"):
        plain = check(GraphModel(inits, edges), Options(strategy=strategy, deadlock=False))
        reduced = check(
            GraphModel(inits, edges, renamings=RENAMINGS),
            Options(strategy=strategy, deadlock=False),
        )
        assert plain.stats.distinct == len(reach)
        assert reduced.stats.distinct == len(orbits)

        plain_v = check(
            GraphModel(inits, edges, bad=bad), Options(strategy=strategy, deadlock=False)
        )
        reduced_v = check(
            GraphModel(inits, edges, bad=bad, renamings=RENAMINGS),
            Options(strategy=strategy, deadlock=False),
        )
        assert plain_v.verdict is reduced_v.verdict
        if strategy == "bfs" and plain_v.trace is not None:
            assert reduced_v.trace is not None
            assert reduced_v.trace.length == plain_v.trace.length
        if reduced_v.trace is not None:
            # A real behaviour of the unreduced system.
            states = reduced_v.trace.states()
            assert states[0] in inits and bad(states[-1])
            for a, b in itertools.pairwise(states):
                assert b in edges[a]


@given(graphs())
def test_a_violation_counts_the_states_stored_up_to_it(case: Any) -> None:
    """Breadth-first, the run stores every new successor in order, checking each as it
    is stored, and stops at the first that violates: the distinct count is the states
    a one-by-one search stored up to and with it (the explorer checks a state's new
    successors in one call, and must keep exactly those)."""
    _, edges, inits, bad = case
    model = GraphModel(inits, edges, bad=lambda s: s in bad)
    seen: list[Any] = []
    queue: list[Any] = []
    for s in model.initial_states():
        if s not in seen:
            seen.append(s)
            queue.append(s)
    hit = any(s in bad for s in seen)
    while queue and not hit:
        s = queue.pop(0)
        for t in model.edges.get(s, []):
            if t in seen:
                continue
            seen.append(t)
            queue.append(t)
            if t in bad:
                hit = True
                break
    result = check(model, Options(deadlock=False))
    if not hit:
        assert result.verdict is Verdict.OK
        return
    assert result.verdict is Verdict.VIOLATION
    first_bad = next(s for s in seen if s in bad)
    assert result.stats.distinct == seen.index(first_bad) + 1
    assert result.trace is not None and result.trace.states()[-1] == first_bad
