"""Go-Back-N by hand: the same model as :mod:`bench.go_back_n` over plain tuples in a
set, the yardstick for its bench row."""

from __future__ import annotations

from collections import deque

State = tuple[int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _drop(chan: tuple[int, ...], k: int) -> tuple[int, ...]:
    return chan[:k] + chan[k + 1 :]


def successors(s: State, messages: int, window: int, cap: int) -> list[State]:
    """Every successor of ``s`` in the spec's action order."""
    base, nxt, expected, data, acks, delivered = s
    out: list[State] = []
    if nxt < base + window and nxt < messages and len(data) < cap:
        out.append((base, nxt + 1, expected, (*data, nxt), acks, delivered))
    if base != nxt:
        out.append((base, base, expected, data, acks, delivered))
    for k in range(len(data)):
        out.append((base, nxt, expected, _drop(data, k), acks, delivered))
    for k in range(len(data)):
        m = data[k]
        e, d = expected, delivered
        if m == e:
            e, d = e + 1, (*d, m)
        a = acks if len(acks) >= cap else (*acks, e)
        out.append((base, nxt, e, _drop(data, k), a, d))
    for k in range(len(acks)):
        out.append((base, nxt, expected, data, _drop(acks, k), delivered))
    for k in range(len(acks)):
        b = max(base, acks[k])
        out.append((b, max(nxt, b), expected, data, _drop(acks, k), delivered))
    return out


def explore(consts: dict[str, str]) -> tuple[int, int]:
    """BFS with the invariants on every new state; returns (distinct, generated)."""
    messages = int(consts.get("Messages", 4))
    window = int(consts.get("Window", 2))
    cap = int(consts.get("Capacity", 3))
    init: State = (0, 0, 0, (), (), ())
    seen = {init}
    queue = deque([init])
    generated = 1
    while queue:
        s = queue.popleft()
        for t in successors(s, messages, window, cap):
            generated += 1
            if t in seen:
                continue
            seen.add(t)
            base, _, expected, _, acks, delivered = t
            if delivered != tuple(range(expected)) or base > expected:
                raise AssertionError("Go-Back-N invariant violated")
            if any(a > expected for a in acks):
                raise AssertionError("Go-Back-N invariant violated")
            queue.append(t)
    return len(seen), generated
