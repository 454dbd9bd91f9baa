"""``python -m bench.simulation``: does random simulation pay off on a deep bug?

RATIS-2605 with ``MaxTerm=3 MaxMsgs=1``: breadth-first search needs 21 actions (and
35,734 states) to lose a committed entry (StateMachineSafety).  This times
``mcheck simulate`` on it over several seeds, each in a fresh process (``setsid``),
next to the breadth-first run, and prints how many seeds found it and how fast.
Options: ``--seeds=N`` (10), ``--timeout=S`` per seed (60), ``--depth=D`` (40).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

SPEC = [
    "ratis_heartbeat_match_index",
    "--variant",
    "bug",
    "--const",
    "MaxTerm=3",
    "--const",
    "MaxMsgs=1",
    "--property",
    "StateMachineSafety",
]


def _timed(args: list[str]) -> tuple[float, dict[str, object]]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "checker", *args, "--json", "--trace-out", "/dev/null"],
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    data: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return time.perf_counter() - t0, data


def main(argv: list[str]) -> None:
    """Run BFS once and the simulation once per seed; print the comparison."""
    opts = dict(a.lstrip("-").split("=", 1) for a in argv if "=" in a)
    seeds, timeout, depth = (
        int(opts.get("seeds", 10)),
        opts.get("timeout", "60"),
        opts.get("depth", "40"),
    )
    bfs_secs, bfs = _timed(["run", *SPEC])
    print(f"BFS: {bfs['result']} in {bfs['trace_length']} actions, {bfs_secs:.1f} s")
    found: list[float] = []
    for seed in range(seeds):
        secs, sim = _timed(
            ["simulate", *SPEC, "--seed", str(seed), "--depth", depth, "--timeout", timeout]
        )
        stats = sim["simulation"]
        assert isinstance(stats, dict)
        print(
            f"seed {seed}: {sim['result']}"
            + (
                f" in {sim['trace_length']} actions (found {stats['found_length']})"
                if sim["result"] == "violation"
                else ""
            )
            + f", {stats['behaviours']:,} behaviours, {secs:.1f} s"
        )
        if sim["result"] == "violation":
            found.append(secs)
    median = f", median {statistics.median(found):.1f} s" if found else ""
    print(f"simulation found it with {len(found)} of {seeds} seeds within {timeout} s{median}")


if __name__ == "__main__":
    main(sys.argv[1:])
