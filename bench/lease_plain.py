"""The lease by hand: the same model as :mod:`bench.lease` over plain tuples in a set,
the yardstick for its bench row."""

from __future__ import annotations

from collections import deque
from typing import Any

State = tuple[Any, ...]


def _set(t: tuple[int, ...], i: int, v: int) -> tuple[int, ...]:
    return (*t[:i], v, *t[i + 1 :])


def explore(consts: dict[str, str]) -> tuple[int, int]:
    """BFS with the invariant on every new state; returns (distinct, generated)."""
    clients = int(consts.get("Clients", 3))
    duration = int(consts.get("Duration", 3))
    max_time = int(consts.get("MaxTime", 9))
    max_writes = int(consts.get("MaxWrites", 2))
    none = (-1,) * clients
    init: State = (0, -1, 0, none, none, (0,) * clients)
    seen = {init}
    queue = deque([init])
    generated = 1
    while queue:
        s = queue.popleft()
        now, holder, expiry, sent, believed, writes = s
        out: list[State] = []
        if now < max_time:
            n = now + 1
            out.append(
                (n, holder, expiry, sent, tuple(b if b > n else -1 for b in believed), writes)
            )
        for c in range(clients):
            if now >= expiry and sent[c] == -1 and believed[c] == -1:
                out.append((now, c, now + duration, _set(sent, c, now), believed, writes))
        for c in range(clients):
            if sent[c] != -1:
                until = sent[c] + duration
                b = _set(believed, c, until if until > now else -1)
                out.append((now, holder, expiry, _set(sent, c, -1), b, writes))
        for c in range(clients):
            if believed[c] != -1 and writes[c] < max_writes:
                out.append((now, holder, expiry, sent, believed, _set(writes, c, writes[c] + 1)))
        for c in range(clients):
            if believed[c] != -1:
                e = now if holder == c else expiry
                out.append((now, holder, e, sent, _set(believed, c, -1), writes))
        for t in out:
            generated += 1
            if t in seen:
                continue
            seen.add(t)
            trusting = [c for c, b in enumerate(t[4]) if b != -1]
            if len(trusting) > 1 or not all(c == t[1] and t[0] < t[2] for c in trusting):
                raise AssertionError("lease invariant violated")
            queue.append(t)
    return len(seen), generated
