"""Gossip by hand: the same model as :mod:`bench.gossip` over plain tuples in a set,
the yardstick for its bench row."""

from __future__ import annotations

from collections import deque

State = tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]


def _set(t: tuple, i: int, v: object) -> tuple:  # type: ignore[type-arg]
    return (*t[:i], v, *t[i + 1 :])


def explore(consts: dict[str, str]) -> tuple[int, int]:
    """BFS with the invariant on every new state; returns (distinct, generated)."""
    nodes = int(consts.get("Nodes", 3))
    keys = int(consts.get("Keys", 3))
    max_version = int(consts.get("MaxVersion", 2))
    max_writes = int(consts.get("MaxWrites", 3))
    init: State = (((0,) * keys,) * nodes, (0,) * nodes)
    seen = {init}
    queue = deque([init])
    generated = 1
    while queue:
        s = queue.popleft()
        view, writes = s
        out: list[State] = []
        for n in range(nodes):
            for k in range(keys):
                if k % nodes == n and view[n][k] < max_version and writes[n] < max_writes:
                    mine = _set(view[n], k, view[n][k] + 1)
                    out.append((_set(view, n, mine), _set(writes, n, writes[n] + 1)))
        for i in range(nodes):
            for j in range(nodes):
                if i == j:
                    continue
                vi, vj = view[i], view[j]
                merged = tuple(max(a, b) for a, b in zip(vi, vj, strict=True))
                if merged != vj:
                    out.append((_set(view, j, merged), writes))
        for n in range(nodes):
            reset = tuple(0 if k % nodes != n else v for k, v in enumerate(view[n]))
            if reset != view[n]:
                out.append((_set(view, n, reset), writes))
        for t in out:
            generated += 1
            if t in seen:
                continue
            seen.add(t)
            v = t[0]
            if any(v[n][k] > v[k % nodes][k] for n in range(nodes) for k in range(keys)):
                raise AssertionError("gossip invariant violated")
            queue.append(t)
    return len(seen), generated
