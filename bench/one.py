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
from checker.loader import load_spec_class
from checker.result import Verdict


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
    return None


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
    del result
    gc.collect()
    if job.get("baseline"):
        t1 = time.perf_counter()
        got = _baseline(spec, consts, job.get("symmetry", False))
        if got is not None:
            out["baseline_seconds"] = time.perf_counter() - t1
            out["baseline_distinct"], out["baseline_generated"] = got
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
