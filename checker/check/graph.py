"""The reachable state graph of a small model, for export (GraphML, DOT).

Explored by the one exploration core (:mod:`checker.explore.engine`, recording the graph as
liveness does), then built with networkx: node = state ordinal in BFS order, with
``label`` (the state as text), ``fp`` (its fingerprint in hex), ``init``, ``depth`` and
``violates`` (the first violated invariant, or ""); edge attribute ``action`` (the
action label).  States outside the constraint are left out, as the explorer leaves
them out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx

from checker.base.errors import ConfigError, MCheckError
from checker.base.safefile import atomic_writer, write_atomically
from checker.check.assemble import explore
from checker.explore.options import Options
from checker.explore.result import Stats, Verdict
from checker.liveness.stategraph import GraphRecorder
from checker.model import Model
from checker.values.show import show


class GraphTooLarge(ConfigError):
    """The model has more reachable states than the export limit."""


class GraphIncomplete(MCheckError):
    """The exploration stopped (interrupted, out of memory) before the graph was whole."""


def state_graph(
    model: Model,
    max_nodes: int = 5000,
    violates: Callable[[Any], str | None] | None = None,
    progress: Callable[[Stats], None] | None = None,
) -> Any:
    """The reachable state graph as a networkx MultiDiGraph (refused above max_nodes).

    ``model`` should select no invariant (the whole graph is wanted, bad states
    included); ``violates`` names the invariant a state breaks, for the node label;
    ``progress`` is called with the figures as the exploration goes.
    """
    opts = Options(deadlock=False, max_states=max_nodes + 1, symmetry=False, progress=progress)
    outcome, recorder = explore(
        model, opts, [{}], False, [], record=lambda: GraphRecorder(model, keep_states=True)
    )
    assert recorder is not None
    if outcome.verdict is Verdict.INCOMPLETE and outcome.stats.distinct > max_nodes:
        raise GraphTooLarge(
            f"the reachable graph has more than {max_nodes} states: raise --max-nodes "
            "or use smaller constants"
        )
    if outcome.verdict is not Verdict.OK:
        raise GraphIncomplete(outcome.reason or outcome.verdict.value)
    rg = recorder.graph
    table = outcome.table
    g: Any = nx.MultiDiGraph()
    depth = [1] * rg.size
    for v in range(rg.size):
        parent = table.parent[v]
        if parent >= 0:
            depth[v] = depth[parent] + 1
    inits = set(rg.init)
    for v, state in enumerate(rg.states):
        g.add_node(
            v,
            label=show(state)[:500],
            fp=f"{table.fps[v]:016x}",
            init=v in inits,
            depth=depth[v],
            violates=(violates(state) if violates is not None else None) or "",
        )
    for v in range(rg.size):
        for w, iid in rg.succ[v]:
            ai, params = rg.instances[iid]
            g.add_edge(v, w, action=model.label(ai, params))
    return g


def write_graph(g: Any, path: Path) -> None:
    """GraphML for ``.graphml``, DOT for ``.dot`` / ``.gv``."""
    suffix = path.suffix.lower()
    if suffix == ".graphml":
        with atomic_writer(path) as f:
            nx.write_graphml(g, f)
    elif suffix in (".dot", ".gv"):
        write_atomically(path, to_dot(g))
    else:
        raise ConfigError(f"unknown graph format {suffix!r}: use .graphml or .dot")


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(g: Any) -> str:
    """Graphviz DOT text (written by hand: no pydot dependency for a dozen lines)."""
    lines = ["digraph states {", "  node [shape=box, fontsize=9];"]
    for n, data in g.nodes(data=True):
        attrs = [f"label={_q(str(data['label'])[:120])}"]
        if data.get("init"):
            attrs.append("penwidth=2")
        if data.get("violates"):
            attrs.append("color=red")
        lines.append(f"  {n} [{', '.join(attrs)}];")
    for a, b, data in g.edges(data=True):
        lines.append(f"  {a} -> {b} [label={_q(str(data.get('action', '')))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
