"""Run one mini-Raft job on a Python peer (or the plain baseline) and print JSON figures.

``make bench`` runs this in the peers' own virtualenv (``build/bench-peers``: Python
>= 3.12, minicheck 0.4.0 and musil 0.36.7 from PyPI), one job per fresh process in a
session of its own, so each timing and peak RSS belongs to that checker alone.  It
imports nothing of mcheck: each peer is handed :class:`bench.mini_raft_plain.MiniRaftPlain`
in its natural API (minicheck: a ``transitions`` function; musil: one guarded
``Action`` per action instance).

Usage: ``python -m bench.peers '{"checker": "musil", "symmetry": true, "workers": 1,
"n": 3, "max_term": 4, "max_log": 2}'``
"""

from __future__ import annotations

import json
import resource
import sys
import time
from typing import Any

from bench.mini_raft_plain import MiniRaftPlain, State, Step, plain_bfs

FIELDS = ("currentTerm", "role", "votedFor", "votesGranted", "log", "commitIndex")


def _minicheck(model: MiniRaftPlain) -> int:
    from minicheck import Protocol, check_safety

    steps = model.actions()

    def transitions(s: State) -> list[tuple[str, State]]:
        out = []
        for label, step in steps:
            t = step(s)
            if t is not None:
                out.append((label, t))
        return out

    invs = {
        name: (lambda d, f=f: f(tuple(d[k] for k in FIELDS)))
        for name, f in model.invariants().items()
    }
    proto = Protocol(
        name="mini-raft",
        candidate=False,
        fields=FIELDS,
        initial=model.init(),
        transitions=transitions,
        invariants=invs,
    )
    res = check_safety(proto, max_states=50_000_000)
    if not all(p["holds"] for p in res["properties"].values()):
        raise SystemExit(f"minicheck reported a violation on mini-Raft: {res['properties']}")
    return int(res["reachable_states"])


def _musil(model: MiniRaftPlain, symmetry: bool, workers: int) -> int:
    from musil import Action, Model, check

    def action(label: str, step: Step) -> Any:
        # enabled() computes the successor once and apply() hands it back, so musil's
        # guard/effect split costs no second evaluation of the spec.
        memo: dict[int, State | None] = {}

        def enabled(s: State) -> bool:
            t = step(s)
            memo[id(s)] = t
            return t is not None

        def apply(s: State) -> State:
            t = memo.pop(id(s), None)
            return t if t is not None else step(s)  # type: ignore[return-value]

        return Action(label, enabled, apply)

    m = Model(
        init=[model.init()],  # a bare tuple would be read as several initial states
        actions=[action(label, step) for label, step in model.actions()],
        invariants=model.invariants(),
        terminal=lambda s: True,
    )
    canon = model.canonical() if symmetry else None
    res = check(m, max_states=50_000_000, canonicalize=canon, workers=workers)
    if not res.ok:
        raise SystemExit(f"musil reported a violation on mini-Raft: {res}")
    return int(res.states_explored)


def main(argv: list[str]) -> None:
    """argv[0]: a JSON job (checker, symmetry, workers, n, max_term, max_log)."""
    job = json.loads(argv[0])
    model = MiniRaftPlain(job.get("n", 3), job.get("max_term", 4), job.get("max_log", 2))
    symmetry = bool(job.get("symmetry"))
    workers = int(job.get("workers", 1))
    t0 = time.perf_counter()
    if job["checker"] == "plain":
        distinct, generated, _depth = plain_bfs(model, symmetry)
    elif job["checker"] == "minicheck":
        if symmetry or workers > 1:
            raise SystemExit("minicheck has no symmetry reduction and no workers")
        distinct, generated = _minicheck(model), 0
    elif job["checker"] == "musil":
        distinct, generated = _musil(model, symmetry, workers), 0
    else:
        raise SystemExit(f"unknown checker {job['checker']!r}")
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        json.dumps(
            {
                "distinct": distinct,
                "generated": generated,
                "seconds": secs,
                "peak_rss_mb": peak / 1024,
                "worker_rss_mb": kids / 1024,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
