"""The reachable state graph of a small model, for export (GraphML, DOT).

Built with networkx: node = state ordinal in BFS order, with ``label`` (the state as
text), ``fp`` (its fingerprint in hex), ``init``, ``depth`` and ``violates`` (the first
violated invariant, or ""); edge attribute ``action`` (the action label).  States
outside the constraint are left out, as the explorer leaves them out.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import networkx as nx

from checker.errors import ConfigError
from checker.fingerprint import StateFingerprinter
from checker.model import Model
from checker.pretty import show


class GraphTooLarge(ConfigError):
    """The model has more reachable states than the export limit."""


def state_graph(model: Model, max_nodes: int = 5000, symmetry: bool = False) -> Any:
    """The reachable state graph as a networkx MultiDiGraph (refused above max_nodes)."""
    inits = model.initial_states()
    rens = model.renamings if symmetry else [{}]
    fpr = StateFingerprinter(len(model.variables(inits[0])), rens)
    g: Any = nx.MultiDiGraph()
    index: dict[int, int] = {}
    queue: deque[tuple[Any, int, tuple[int, ...], int]] = deque()

    def node(state: Any, fp: int, depth: int, init: bool) -> int:
        n = len(index)
        if n >= max_nodes:
            raise GraphTooLarge(
                f"the reachable graph has more than {max_nodes} states: raise --max-nodes "
                "or use smaller constants"
            )
        index[fp] = n
        g.add_node(
            n,
            label=show(state)[:500],
            fp=f"{fp:016x}",
            init=init,
            depth=depth,
            violates=model.violated_invariant(state) or "",
        )
        return n

    for s in inits:
        if not model.within(s):
            continue
        fp, fps = fpr.initial(model.variables(s))
        if fp not in index:
            queue.append((s, node(s, fp, 1, True), fps, 1))
    while queue:
        s, n, pfps, depth = queue.popleft()
        pvals = model.variables(s)
        for ai, params, t in model.successors(s):
            if not model.within(t):
                continue
            fp, fps = fpr.child(model.variables(t), pvals, pfps)
            m = index.get(fp)
            if m is None:
                m = node(t, fp, depth + 1, False)
                queue.append((t, m, fps, depth + 1))
            g.add_edge(n, m, action=model.label(ai, params))
    return g


def write_graph(g: Any, path: Path) -> None:
    """GraphML for ``.graphml``, DOT for ``.dot`` / ``.gv``."""
    suffix = path.suffix.lower()
    if suffix == ".graphml":
        nx.write_graphml(g, path)
    elif suffix in (".dot", ".gv"):
        path.write_text(to_dot(g))
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
