"""``python -m bench.simulation``: does random simulation pay off on a deep bug?

Two hunts, each beside the breadth-first run that finds the same violation:

- ``raft``: raft.tla (3 servers, ``MaxLogLen=2``) with the probe "no server commits
  beyond index 1" (``bench/raft_commit_probe.py``): BFS needs 20 actions;
- ``ratis``: RATIS-2605 with ``MaxTerm=3 MaxMsgs=1``: BFS needs 21 actions (35,734
  states) to lose a committed entry (StateMachineSafety).

Each is hunted by ``mcheck simulate`` as TLC walks (a random enabled action, then a
random instance), with ``--guided`` (prefer states the behaviour has not visited,
from the action it took least), ``--swarm`` (each behaviour its own subset of actions
and weights), both, and both with ``--workers 2``, over several seeds, each run in a fresh
process of its own (``setsid``).  Prints per seed the time to the violation, and the
median over the seeds that found it: of the whole command, and of the run within
the process (its JSON ``seconds``: without the interpreter's start-up and imports,
which are a tenth of a 3-second BFS).  Options: ``--seeds=N`` (10), ``--timeout=S`` per
seed (60), ``--depth=D`` (100), ``--only=raft|ratis``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROBE = str(Path(__file__).with_name("raft_commit_probe.py"))

HUNTS = {
    "raft": [PROBE, "--const", "MaxLogLen=2", "--property", "CommitAtMostOne"],
    "ratis": [
        "ratis_heartbeat_match_index",
        "--variant",
        "bug",
        "--const",
        "MaxTerm=3",
        "--const",
        "MaxMsgs=1",
        "--property",
        "StateMachineSafety",
    ],
}


def timed(args: list[str]) -> tuple[float, dict[str, object]]:
    """One ``mcheck`` command (``args``) in a session of its own: its wall seconds and
    its JSON result."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "checker", *args, "--json", "--trace-out", "/dev/null"],
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    data: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return time.perf_counter() - t0, data


def hunt(name: str, seeds: int, timeout: str, depth: str) -> None:
    """BFS once, then each seed plain and with --swarm; print the comparison."""
    spec = HUNTS[name]
    bfs_secs, bfs = timed(["run", *spec])
    bfs_in = float(bfs["seconds"])  # type: ignore[arg-type]
    print(
        f"{name}: BFS {bfs['result']} in {bfs['trace_length']} actions, {bfs_secs:.1f} s "
        f"({bfs_in:.2f} s within the process)"
    )
    modes: list[list[str]] = [
        [],
        ["--guided"],
        ["--swarm"],
        ["--swarm", "--guided"],
        ["--swarm", "--guided", "--workers", "2"],
    ]
    for mode in modes:
        label = " ".join(mode) or "plain"
        found: list[float] = []
        within: list[float] = []  # the run's own seconds, without the process start-up
        for seed in range(seeds):
            args = ["simulate", *spec, *mode, "--seed", str(seed), "--depth", depth]
            secs, sim = timed([*args, "--timeout", timeout])
            stats = sim["simulation"]
            assert isinstance(stats, dict)
            print(
                f"  {label} seed {seed}: {sim['result']}"
                + (
                    f" in {sim['trace_length']} actions (found {stats['found_length']})"
                    if sim["result"] == "violation"
                    else ""
                )
                + f", {stats['behaviours']:,} behaviours, {stats['distinct']:,} distinct"
                + f" states seen, {secs:.1f} s"
            )
            if sim["result"] == "violation":
                found.append(secs)
                within.append(float(sim["seconds"]))  # type: ignore[arg-type]
        median = statistics.median(found) if found else None
        ratio = f" ({median / bfs_secs:.2f}x the BFS time)" if median else ""
        inner = ""
        if within:
            m = statistics.median(within)
            inner = f"; within the process {m:.2f} s ({m / bfs_in:.2f}x the BFS's)"
        print(
            f"  {label}: found with {len(found)} of {seeds} seeds within {timeout} s"
            + (f", median {median:.1f} s{ratio}{inner}" if median else "")
        )


def main(argv: list[str]) -> None:
    """Run the hunts (``--only=NAME`` for one)."""
    opts = dict(a.lstrip("-").split("=", 1) for a in argv if "=" in a)
    names = [opts["only"]] if "only" in opts else list(HUNTS)
    for name in names:
        hunt(name, int(opts.get("seeds", 10)), opts.get("timeout", "60"), opts.get("depth", "100"))


if __name__ == "__main__":
    main(sys.argv[1:])
