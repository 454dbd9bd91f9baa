"""Liveness: fair-cycle search against a brute-force reference, and the seed lassos."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import networkx as nx
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.cli.commands import main
from checker.liveness.cycles import StateGraph, fair_components, find_lasso, strongly_connected


@st.composite
def fair_graphs(draw: Any) -> tuple[StateGraph, list[bool]]:
    n = draw(st.integers(min_value=1, max_value=6))
    labels = draw(st.integers(min_value=1, max_value=3))
    succ: list[list[tuple[int, int]]] = []
    for _ in range(n):
        out = draw(
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, labels - 1)), max_size=3)
        )
        succ.append(sorted(set(out)))
    fair = {
        a: k
        for a in range(labels)
        if (k := draw(st.sampled_from(["weak", "strong", None]))) is not None
    }
    enabled = [frozenset(i for _, i in out if i in fair) for out in succ]
    bad = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    g = StateGraph(
        init=[0],
        succ=succ,
        enabled=enabled,
        cut=[False] * n,
        instances=[(0, (a,)) for a in range(labels)],
        fair=fair,
    )
    return g, bad


def _strongly_connected(g: StateGraph, nodes: set[int]) -> bool:
    d = nx.DiGraph()
    d.add_nodes_from(nodes)
    d.add_edges_from((v, w) for v in nodes for w, _ in g.succ[v] if w in nodes)
    return nx.is_strongly_connected(d)


def _fair(g: StateGraph, nodes: set[int]) -> bool:
    taken = {i for v in nodes for w, i in g.succ[v] if w in nodes}
    for a, kind in g.fair.items():
        if a in taken:
            continue
        enabled_at = [a in g.enabled[v] for v in nodes]
        if kind == "weak" and all(enabled_at):
            return False
        if kind == "strong" and any(enabled_at):
            return False
    return True


def brute_force_eventually(g: StateGraph, bad: list[bool]) -> bool:
    """<>(not bad) fails iff some fair strongly connected set of bad states (a single
    state may stutter) is reachable from the initial state through bad states."""
    n = g.size
    reach: set[int] = set()
    todo = [v for v in g.init if bad[v]]
    while todo:
        v = todo.pop()
        if v in reach:
            continue
        reach.add(v)
        todo.extend(w for w, _ in g.succ[v] if bad[w])
    for size in range(1, n + 1):
        for subset in itertools.combinations(sorted(reach), size):
            s = set(subset)
            if _strongly_connected(g, s) and _fair(g, s):
                return True
    return False


@settings(max_examples=300, deadline=None)
@given(fair_graphs())
def test_eventually_agrees_with_brute_force_and_lassos_are_fair(case: Any) -> None:
    g, bad = case
    allowed = {v for v, b in enumerate(bad) if b}
    lasso = find_lasso(g, bad, allowed, g.init)
    assert (lasso is not None) == brute_force_eventually(g, bad)
    if lasso is None:
        return
    path = [v for v, _, _ in lasso.prefix]
    assert path[0] in g.init and all(bad[v] for v in path)
    for (a, _, _), (b, iid, _) in itertools.pairwise(lasso.prefix):
        assert (b, iid) in g.succ[a]
    root = path[-1]
    cycle_states = [root] + [v for v, _, _ in lasso.cycle]
    assert cycle_states[-1] == root
    for (a, _, _), (b, iid, _) in itertools.pairwise([(root, None, None), *lasso.cycle]):
        assert (b, iid) in g.succ[a]
    assert _cycle_is_fair(g, root, lasso.cycle)
    # No lasso is shorter: brute force over every loop state reachable through bad
    # states (networkx distances) and every closed walk through it.
    dist = _bad_distances(g, bad)
    shortest = min(d + brute_force_shortest_cycle(g, bad, r) for r, d in dist.items())
    assert lasso.length == shortest
    assert len(lasso.cycle) == brute_force_shortest_cycle(g, bad, root)


def _bad_distances(g: StateGraph, bad: list[bool]) -> dict[int, int]:
    d = nx.DiGraph()
    nodes = [v for v in range(g.size) if bad[v]]
    d.add_nodes_from(nodes)
    d.add_edges_from((v, w) for v in nodes for w, _ in g.succ[v] if bad[w])
    starts = [v for v in g.init if bad[v]]
    return dict(nx.multi_source_dijkstra_path_length(d, starts)) if starts else {}


def _cycle_is_fair(g: StateGraph, root: int, cycle: list[Any]) -> bool:
    states = [root] + [v for v, _, _ in cycle]
    taken = {iid for _, iid, _ in cycle}
    for a, kind in g.fair.items():
        enabled_at = [a in g.enabled[v] for v in states]
        if a not in taken:
            if kind == "weak" and all(enabled_at):
                return False
            if kind == "strong" and any(enabled_at):
                return False
    return True


def brute_force_shortest_cycle(g: StateGraph, bad: list[bool], root: int, limit: int = 9) -> int:
    """Length of the shortest fair closed walk from root through bad states (0: a fair
    stutter), by enumerating every walk up to ``limit`` steps."""
    if _cycle_is_fair(g, root, []):
        return 0
    walks: list[list[Any]] = [[]]
    for length in range(1, limit + 1):
        longer = []
        for walk in walks:
            here = walk[-1][0] if walk else root
            for w, iid in g.succ[here]:
                if not bad[w]:
                    continue
                step = [*walk, (w, iid, None)]
                if w == root and _cycle_is_fair(g, root, step):
                    return length
                longer.append(step)
        walks = longer
    return limit + 1


@settings(max_examples=100, deadline=None)
@given(fair_graphs())
def test_scc_split_matches_networkx(case: Any) -> None:
    g, _ = case
    nodes = set(range(g.size))
    ours = {frozenset(c) for c in strongly_connected(sorted(nodes), g.succ, nodes)}
    d = nx.DiGraph()
    d.add_nodes_from(nodes)
    d.add_edges_from((v, w) for v in nodes for w, _ in g.succ[v])
    assert ours == {frozenset(c) for c in nx.strongly_connected_components(d)}
    for comp in fair_components(g, nodes):
        assert _fair(g, comp) and _strongly_connected(g, comp)


def _run(*args: str) -> tuple[int, dict[str, Any]]:
    r = CliRunner().invoke(main, ["run", *args, "--json"])
    return r.exit_code, json.loads(r.stdout.strip().splitlines()[-1])


def test_hdds_16932_liveness_lasso_is_the_reject_retry_loop(tmp_path: Path) -> None:
    out = tmp_path / "lasso.itf.json"
    code, d = _run(
        "scm_install_snapshot_leader_change",
        "--property",
        "FollowerEventuallyCatchesUp",
        "--trace-out",
        str(out),
    )
    assert code == 13
    assert (d["result"], d["property"]) == ("violation", "FollowerEventuallyCatchesUp")
    # The shortest lasso (13 actions, F's handling of L2's vote request among them,
    # since weak fairness will not leave it undelivered): once the new leader L2 has
    # purged its log, its InstallSnapshot notifications are answered forever while
    # F's install from L1 stays in progress.
    assert (d["trace_length"], d["loop_start"]) == (13, 10)
    cycle = d["trace"][d["loop_start"] :]
    assert cycle == [
        "SendNotify(L2)",
        "HandleNotify(Notify L2->F t2)",
        "HandleInstallReply(InstallReply F->L2 t2)",
    ]
    assert json.loads(out.read_text())["loop"] == 10
    r = CliRunner().invoke(main, ["replay", "scm_install_snapshot_leader_change", str(out)])
    assert r.exit_code == 0, r.output
    assert "violates FollowerEventuallyCatchesUp" in r.stdout
    r = CliRunner().invoke(main, ["show", str(out), "--no-color", "--width", "120"])
    assert "repeat forever" in r.stdout
    code, d = _run(
        "scm_install_snapshot_leader_change",
        "--variant",
        "fix_and_scm_guard",
        "--property",
        "FollowerEventuallyCatchesUp",
    )
    assert code == 0 and d["result"] == "ok" and d["distinct_states"] == 23636


def test_ratis_1369_liveness_lasso_3_plus_3() -> None:
    code, d = _run(
        "ratis_empty_snapshot_index_default", "--property", "FollowerEventuallyCatchesUp"
    )
    assert code == 13
    assert (d["trace_length"], d["loop_start"]) == (6, 3)
    assert d["trace"][3:] == [
        "SendAppend",
        "HandleAppend(AppendReq L->F)",
        "HandleAppendReply(AppendReply F->L)",
    ]
    code, d = _run(
        "ratis_empty_snapshot_index_default",
        "--variant",
        "fix",
        "--property",
        "FollowerEventuallyCatchesUp",
    )
    assert code == 0


def test_ratis_2605_liveness_under_symmetry() -> None:
    code, d = _run(
        "ratis_heartbeat_match_index",
        "--property",
        "FollowersEventuallyMatchLeader",
        "--const",
        "MaxMsgs=1",
    )
    assert code == 13
    assert d["property"] == "FollowersEventuallyMatchLeader"
    # 12 actions to a leader whose follower s1 stays behind, then a 6-action cycle of
    # heartbeats to both followers (the loop used to be 18 actions long).
    assert (d["trace_length"], d["loop_start"]) == (18, 12)
    # Checked on the symmetry-reduced graph, unfolded (checker.liveness.quotient): no warning,
    # and the graph is the unreduced one (tests/test_liveness_symmetry.py).
    assert d["symmetry"] is True and d["warnings"] == []
    assert d["liveness_graph"] == {"states": 7322, "edges": 12616}
    assert d["distinct_states"] == 3667
    assert d["trace"][5] == "SendAppendEntries(s2, s1, TRUE)"
    code, d = _run(
        "ratis_heartbeat_match_index",
        "--variant",
        "fix",
        "--property",
        "FollowersEventuallyMatchLeader",
        "--const",
        "MaxMsgs=1",
    )
    assert code == 0 and d["liveness_graph"]["states"] == 7252


def test_unknown_property_is_one_line() -> None:
    r = CliRunner().invoke(main, ["run", "die_hard", "--property", "Nope"])
    assert r.exit_code == 2
    assert "unknown property 'Nope'" in r.stderr


def test_cycle_at_the_constraint_boundary_is_flagged() -> None:
    spec = str(Path(__file__).parent / "fixtures" / "bounded_counter.py")
    code, d = _run(spec)
    assert code == 13
    assert d["property"] == "ReachesGoal"
    assert any("cut off" in w for w in d["warnings"])
