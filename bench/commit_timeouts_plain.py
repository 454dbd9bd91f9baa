"""Two-phase commit with timeouts by hand: the same model as
:mod:`bench.commit_timeouts` over plain tuples and frozensets, messages as tagged
tuples, the yardstick for its bench row."""

from __future__ import annotations

from collections import deque
from typing import Any

State = tuple[Any, ...]


def _rm(rms: tuple[str, ...], rm: int, st: str) -> tuple[str, ...]:
    return (*rms[:rm], st, *rms[rm + 1 :])


def explore(consts: dict[str, str]) -> tuple[int, int]:
    """BFS with the invariants on every new state; returns (distinct, generated)."""
    n = int(consts.get("RMs", 4))
    init: State = (("working",) * n, "init", frozenset(), frozenset())
    seen = {init}
    queue = deque([init])
    generated = 1
    commit, abort = ("decision", "commit"), ("decision", "abort")
    while queue:
        s = queue.popleft()
        rms, tm, prepared, msgs = s
        out: list[State] = []
        for r in range(n):
            if rms[r] == "working":
                out.append((_rm(rms, r, "prepared"), tm, prepared, msgs | {("prepared", r)}))
        for r in range(n):
            if rms[r] == "working":
                out.append((_rm(rms, r, "aborted"), tm, prepared, msgs | {("aborted", r)}))
        for r in range(n):
            if rms[r] == "prepared" and ("query", r) not in msgs:
                out.append((rms, tm, prepared, msgs | {("query", r)}))
        for r in range(n):
            if rms[r] in ("working", "prepared"):
                if commit in msgs:
                    out.append((_rm(rms, r, "committed"), tm, prepared, msgs))
                elif abort in msgs:
                    out.append((_rm(rms, r, "aborted"), tm, prepared, msgs))
        for r in range(n):
            if tm == "init" and r not in prepared and ("prepared", r) in msgs:
                out.append((rms, tm, prepared | {r}, msgs))
        if tm == "init" and len(prepared) == n:
            out.append((rms, "committed", prepared, msgs | {commit}))
        if tm == "init":
            out.append((rms, "aborted", prepared, msgs | {abort}))
        for t in out:
            generated += 1
            if t in seen:
                continue
            seen.add(t)
            if "committed" in t[0] and "aborted" in t[0]:
                raise AssertionError("commit invariant violated")
            if any(("aborted", r) in t[3] and ("prepared", r) in t[3] for r in range(n)):
                raise AssertionError("commit invariant violated")
            queue.append(t)
    return len(seen), generated
