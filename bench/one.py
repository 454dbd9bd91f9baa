"""Run one benchmark in this (fresh) process and print its figures as JSON.

mcheck runs first, so the process's peak RSS is its own; the plain-Python baseline of
the same model runs afterwards in the same process, so the two throughputs are
measured under the same machine load and their ratio is meaningful.
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from typing import Any

from checker import Options, check_spec
from checker.authoring.loader import load_spec_class
from checker.explore.result import Verdict


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _baseline(spec: str, consts: dict[str, str], symmetry: bool) -> tuple[int, int] | None:
    if spec == "bench.mini_raft":
        from bench.mini_raft_plain import MiniRaftPlain, plain_bfs

        model = MiniRaftPlain(3, int(consts.get("MaxTerm", 4)), int(consts.get("MaxLog", 2)))
        distinct, generated, _depth = plain_bfs(model, symmetry)
        return distinct, generated
    if spec == "raft":
        from bench.raft_baseline import explore

        return explore(
            int(consts.get("Server", 3)),
            int(consts.get("MaxTerm", 2)),
            int(consts.get("MaxLogLen", 1)),
            int(consts.get("MaxMsgs", 1)),
        )
    if spec == "die_hard":
        from bench.die_hard_baseline import explore as dh

        return dh()
    if spec in TWINS:
        import importlib

        twin: Any = importlib.import_module(TWINS[spec])
        got: tuple[int, int] = twin.explore(consts)
        return got
    return None


#: Issue 27's models and their plain twins (each ``explore(constants) -> (distinct,
#: generated)``, written as a one-off checker would: tuples in a set).
TWINS = {
    "bench.go_back_n": "bench.go_back_n_plain",
    "bench.lease": "bench.lease_plain",
    "bench.gossip": "bench.gossip_plain",
    "bench.commit_timeouts": "bench.commit_timeouts_plain",
}


def _spec_alone(instance: Any) -> float:
    """Seconds the spec's own code takes over the reachable states: every state's
    successors (the actions as written), the action properties or the state
    constraint of every step, and the invariants of each distinct generated state,
    inside the constraint or outside it, with no engine around them: what no engine
    that runs the spec's code can beat (the caches can, by not running it).

    A state outside the constraint is not stored, but TLC's semantics (and ours)
    check its invariants all the same: an engine could remember which of them passed,
    so each distinct one is counted once, not once per time it is generated."""
    from collections import deque

    from checker.explore.expansion import Expansion
    from checker.model import CompiledSpec
    from checker.values.records import native_records, record_types

    model = CompiledSpec(instance, symmetry=False)
    exp = Expansion(model, [{}], False)
    queue = deque(exp.handle_of(s) for s in model.initial_states())
    seen = {exp.fp_of(h) for h in queue}
    states = []
    outside: list[Any] = []  # the distinct generated states outside the constraint
    outside_seen: set[int] = set()
    for s in model.initial_states():
        if not model.within(s) and (fp := exp.fingerprint_of(s)) not in outside_seen:
            outside_seen.add(fp)
            outside.append(s)
    while queue:
        h = queue.popleft()
        states.append(h[0])
        cands = exp.expand(0, h)[1]
        for c in cands:
            if c[4] is not None and c[4] not in seen:
                seen.add(c[4])
                queue.append(c[3])
        if any(c[3] is None for c in cands):
            succ = model.successors(h[0])
            for c in cands:
                if c[3] is None:
                    t = succ[c[0]][2]
                    fp = exp.fingerprint_of(t)
                    if fp not in outside_seen:
                        outside_seen.add(fp)
                        outside.append(t)
    # Timed with the records' C _replace and __new__ a run gives the spec
    # (checker.values.records): they make the spec's own code faster, and the engine's
    # share is measured against that code as a run runs it.
    with native_records(record_types(model)):
        return _time_spec(model, states, outside)


def _time_spec(model: Any, states: list[Any], outside: list[Any]) -> float:
    successors, violated = model.successors, model.violated_invariant
    stepped = model.violated_action_property
    within = model.within
    props, constrained = bool(model.action_property_names), model.has_constraint
    t0 = time.perf_counter()
    if props or constrained:
        # The spec's action properties ([][A]_vars) are its code too, on every step,
        # and so is its state constraint, on every generated state (as TLC runs it).
        for s in states:
            for _, _, t in successors(s):
                if props:
                    stepped(s, t)
                if constrained:
                    within(t)
            violated(s)
        for t in outside:
            violated(t)
    else:
        for s in states:
            successors(s)
            violated(s)
    return time.perf_counter() - t0


def main(argv: list[str]) -> None:
    """argv[0]: a JSON object with spec, variant, workers, symmetry, baseline,
    constants and invariants."""
    job = json.loads(argv[0])
    spec = job["spec"]
    consts: dict[str, str] = job.get("constants", {})
    cls = load_spec_class(spec)
    instance = cls(variant=job.get("variant"), **consts)
    gc.collect()
    rss0 = _rss_kb()
    t0 = time.perf_counter()
    result = check_spec(
        instance,
        Options(
            symmetry=job.get("symmetry", False),
            workers=job.get("workers", 1),
            cluster=job.get("cluster"),
            cache=job.get("cache", True),
            deadlock=False,
        ),
        properties=job.get("invariants") or None,
    )
    secs = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # With --workers (or a local cluster) the states live in the worker processes:
    # report the largest.
    worker_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out: dict[str, Any] = {
        "result": result.verdict.value,
        "distinct": result.stats.distinct,
        "generated": result.stats.generated,
        "depth": result.stats.depth,
        "seconds": secs,
        "peak_rss_mb": peak_kb / 1024,
        "worker_rss_mb": worker_kb / 1024,
        "bytes_per_state": (
            peak_kb
            - rss0
            + worker_kb * job.get("workers", 1) * (1 if job.get("workers", 1) > 1 else 0)
        )
        * 1024
        / max(1, result.stats.distinct),
        "complete": result.verdict is not Verdict.INCOMPLETE,
    }
    if result.graph is not None:
        # Liveness: the behaviour graph (under symmetry, unfolded from the orbits) is
        # what the memory holds, so bytes/state is per state of it.
        out["graph_states"], out["graph_edges"] = result.graph
        out["bytes_per_state"] = (
            out["bytes_per_state"] * result.stats.distinct / max(1, result.graph[0])
        )
    del result
    gc.collect()
    if job.get("baseline"):
        t1 = time.perf_counter()
        got = _baseline(spec, consts, job.get("symmetry", False))
        if got is not None:
            out["baseline_seconds"] = time.perf_counter() - t1
            out["baseline_distinct"], out["baseline_generated"] = got
    if job.get("spec_alone"):
        out["spec_alone_seconds"] = _spec_alone(instance)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
