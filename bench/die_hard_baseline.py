"""Die Hard by hand: tuples and a set, the yardstick for the die_hard benchmark."""

from __future__ import annotations

from collections import deque


def explore(big: int = 5, small: int = 3, target: int = 99) -> tuple[int, int]:
    """BFS over (big, small) with every move; returns (distinct, generated)."""
    seen = {(0, 0)}
    queue = deque([(0, 0)])
    generated = 1
    while queue:
        b, s = queue.popleft()
        succ = []
        if s < small:
            succ.append((b, small))
        if b < big:
            succ.append((big, s))
        if s > 0:
            succ.append((b, 0))
        if b > 0:
            succ.append((0, s))
        if s > 0 and b < big:
            p = min(s, big - b)
            succ.append((b + p, s - p))
        if b > 0 and s < small:
            p = min(b, small - s)
            succ.append((b - p, s + p))
        for t in succ:
            generated += 1
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return len(seen), generated
