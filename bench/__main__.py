"""``make bench``: distinct states per second and peak memory on the benchmark specs.

Every row runs in a fresh process (so its peak RSS is its own).  Rows marked with a
baseline also run, in that same process, a minimal hand-written checker of the same
model (plain tuples, a Python set), and print mcheck's throughput as a fraction of it.
``python -m bench --quick`` skips the long rows; ``python -m bench raft`` runs the rows
whose name contains "raft".  Afterwards :mod:`bench.compare` times mcheck against the
Python peers (minicheck, musil) on mini-Raft; ``--no-peers`` skips that, ``--peers-only``
runs only it; ``--rounds=N`` takes each row's median of N runs.  :mod:`bench.validation`
times ``mcheck validate`` on a 12,055-event log of a real pysyncobj run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from bench import compare, etcd_tlc, simulation, validation


@dataclass(frozen=True)
class Row:
    """One benchmark: a spec, its constants, and how to run it."""

    name: str
    spec: str
    consts: dict[str, str]
    variant: str | None = None
    workers: int = 1
    symmetry: bool = False
    baseline: bool = False
    long: bool = False
    invariants: tuple[str, ...] = ()
    #: --cluster: "local:N" (a LocalCluster on 127.0.0.1 for the row).
    cluster: str | None = None
    #: False: --no-cache (the plain expansion: what a spec the fast engine does not
    #: serve, such as one with frozen dataclass states, runs at).
    cache: bool = True
    #: Also time the spec's own code alone over the reachable states (bench.one), and
    #: the row again with the Python value core (MCHECK_PURE=1, issue 47).
    spec_alone: bool = False


ROWS = [
    # The issue-12 yardstick, idiomatic pmap spec against tuples in a set (bench/mini_raft*).
    Row("mini-Raft MaxTerm=4 MaxLog=2", "bench.mini_raft", {}, baseline=True),
    Row("mini-Raft, symmetry", "bench.mini_raft", {}, symmetry=True, baseline=True),
    Row("mini-Raft, 2 workers", "bench.mini_raft", {}, workers=2),
    Row("die_hard", "die_hard", {"Target": "99"}, baseline=True),
    Row("raft MaxLogLen=0", "raft", {"MaxLogLen": "0"}, baseline=True),
    Row("raft MaxLogLen=0, 2 workers", "raft", {"MaxLogLen": "0"}, workers=2),
    Row("raft MaxLogLen=0, dask cluster local:2", "raft", {"MaxLogLen": "0"}, cluster="local:2"),
    Row("raft MaxLogLen=0, symmetry", "raft", {"MaxLogLen": "0"}, symmetry=True),
    Row("raft MaxLogLen=0, --no-cache", "raft", {"MaxLogLen": "0"}, cache=False),
    Row("mini-Raft, --no-cache", "bench.mini_raft", {}, cache=False),
    Row("raft MaxLogLen=1", "raft", {"MaxLogLen": "1"}, baseline=True, long=True),
    Row("raft MaxLogLen=1, 2 workers", "raft", {"MaxLogLen": "1"}, workers=2, long=True),
    Row("raft MaxLogLen=1, symmetry", "raft", {"MaxLogLen": "1"}, symmetry=True, long=True),
    # Issue 27's corpus: models written before any tuning, in styles the engine had
    # not met, each beside its plain twin (bench/*_plain.py) and the time its own code
    # takes alone; --no-cache shows what the plain expansion alone would do.
    Row(
        "Go-Back-N Messages=5 Window=3 (long tuples, many successors)",
        "bench.go_back_n",
        {"Messages": "5", "Window": "3"},
        baseline=True,
        spec_alone=True,
    ),
    Row("Go-Back-N, --no-cache", "bench.go_back_n", {"Messages": "5", "Window": "3"}, cache=False),
    Row("Go-Back-N, 2 workers", "bench.go_back_n", {"Messages": "5", "Window": "3"}, workers=2),
    Row(
        "lease MaxTime=10 (frozen dataclass states: the plain expansion)",
        "bench.lease",
        {"MaxTime": "10"},
        baseline=True,
        spec_alone=True,
    ),
    Row("lease, 2 workers", "bench.lease", {"MaxTime": "10"}, workers=2),
    Row(
        "gossip Keys=4 MaxWrites=4 (nested immutables.Map)",
        "bench.gossip",
        {"Keys": "4", "MaxWrites": "4"},
        baseline=True,
        spec_alone=True,
    ),
    Row("gossip, --no-cache", "bench.gossip", {"Keys": "4", "MaxWrites": "4"}, cache=False),
    Row("gossip, 2 workers", "bench.gossip", {"Keys": "4", "MaxWrites": "4"}, workers=2),
    Row(
        "2PC with timeouts RMs=5 (records in a pset)",
        "bench.commit_timeouts",
        {"RMs": "5"},
        baseline=True,
        spec_alone=True,
    ),
    Row("2PC with timeouts, --no-cache", "bench.commit_timeouts", {"RMs": "5"}, cache=False),
    Row("2PC with timeouts, 2 workers", "bench.commit_timeouts", {"RMs": "5"}, workers=2),
    # A spec not written here (issue 45): Specula's etcd/raft model, ported, at the
    # agreement table's one-configuration-change row (TLC: 77,435 distinct, depth
    # 35); the time its own code takes alone says where the run's time goes.
    Row(
        "etcd/raft (Specula's model) one configuration change",
        "etcd_raft",
        {"ConfChangeLimit": "1"},
        spec_alone=True,
    ),
    Row(
        "etcd/raft one configuration change, 2 workers",
        "etcd_raft",
        {"ConfChangeLimit": "1"},
        workers=2,
    ),
    # The seed specs' fixes at a larger setting than the tests and the gate use.
    Row(
        "HDDS-16932 fix, 3 elections/2 purges/2 failures",
        "scm_install_snapshot_leader_change",
        {"MAX_ELECTIONS": "3", "MAX_PURGES": "2", "MAX_DL_FAILURES": "2"},
        variant="fix",
    ),
    Row(
        "HDDS-16454 fix, fresh cluster",
        "scm_new_leader_dn_server_start",
        {"INIT": "fresh"},
        variant="fix",
        symmetry=True,
        workers=2,
        invariants=("NoLeaderBranchStartBeforeApplied",),
        long=True,
    ),
    Row(
        "HDDS-16454 fix_recapture, MAX_INDEX=3",
        "scm_new_leader_dn_server_start",
        {"MAX_INDEX": "3", "INIT_LOG": "2"},
        variant="fix_recapture",
        symmetry=True,
    ),
    Row(
        "RATIS-1369 fix, LAST=8",
        "ratis_empty_snapshot_index_default",
        {"LAST": "8", "SNAP_L": "5"},
        variant="fix",
    ),
    Row(
        # The defaults since the audit added a bucket (64,575 states); the former
        # MAX_TERM=3 MAX_LOG=5 row grew past what a bench round should take.
        "HDDS-17579 fix, defaults",
        "om_leader_ready_before_apply",
        {},
        variant="fix",
        symmetry=True,
    ),
    Row(
        "LIVENESS RATIS-2605 fix, FollowersEventuallyMatchLeader (generated = edges)",
        "ratis_heartbeat_match_index",
        {},
        variant="fix",
        invariants=("FollowersEventuallyMatchLeader",),
        long=True,
    ),
    Row(
        "LIVENESS HDDS-16932 fix, 3 elections/2 purges/2 failures (generated = edges)",
        "scm_install_snapshot_leader_change",
        {"MAX_ELECTIONS": "3", "MAX_PURGES": "2", "MAX_DL_FAILURES": "2"},
        variant="fix",
        invariants=("FollowerEventuallyCatchesUp",),
    ),
    # Liveness at scale (issue 31): a million-state behaviour graph, one process and
    # two workers (the partitions keep the edges; bytes/state is the graph's cost).
    Row(
        "LIVENESS HDDS-16932 fix, 4 elections/2 purges/2 failures, one process",
        "scm_install_snapshot_leader_change",
        {"MAX_ELECTIONS": "4", "MAX_PURGES": "2", "MAX_DL_FAILURES": "2"},
        variant="fix",
        invariants=("FollowerEventuallyCatchesUp",),
        long=True,
    ),
    Row(
        "LIVENESS HDDS-16932 fix, 4 elections/2 purges/2 failures, --workers 2",
        "scm_install_snapshot_leader_change",
        {"MAX_ELECTIONS": "4", "MAX_PURGES": "2", "MAX_DL_FAILURES": "2"},
        variant="fix",
        invariants=("FollowerEventuallyCatchesUp",),
        workers=2,
        long=True,
    ),
    # Liveness under symmetry (issue 31): the quotient graph unfolded, beside the
    # unreduced run of the same property (s1 starts as leader: 2 of 3! renamings).
    *[
        Row(
            f"LIVENESS RATIS-2605 fix MaxMsgs=2 MaxClientRequests=1, {how}",
            "ratis_heartbeat_match_index",
            {"MaxMsgs": "2", "MaxClientRequests": "1"},
            variant="fix",
            invariants=("FollowersEventuallyMatchLeader",),
            symmetry=sym,
            workers=workers,
            long=True,
        )
        for how, sym, workers in (
            ("one process", False, 1),
            ("symmetry", True, 1),
            ("symmetry, --workers 2", True, 2),
        )
    ],
    # The TLA+ Examples corpus (TLC's published counts; see docs/tla-mapping.md).
    Row("TLA+ Examples: SimpleRegular N=8", "simple_regular", {}, spec_alone=True),
    Row("TLA+ Examples: MultiPaxos small (symmetry)", "multipaxos", {}, symmetry=True, long=True),
    Row("TLA+ Examples: MultiPaxos small", "multipaxos", {}, long=True, spec_alone=True),
    Row("TLA+ Examples: LamportMutex N=3", "lamport_mutex", {}, long=True, spec_alone=True),
    Row("TLA+ Examples: PaxosCommit", "paxos_commit", {}, long=True, spec_alone=True),
    # Written before any tuning for it, as a Python engineer would: frozen dataclass
    # states and a nested record, the style the fast engine does not serve.
    Row(
        "TLA+ Examples: EWD998 N=3 (frozen dataclasses)",
        "ewd998",
        {},
        long=True,
        spec_alone=True,
        invariants=("TerminationDetection", "Inv", "TypeOK"),
    ),
    # The scale row of issue 13 (TLC: 13,917,205 distinct, 202,605,169 generated; depth
    # 42 with 1 worker in 2,217 s here, 43 with 2 workers, whose BFS is not level-strict):
    # run it alone, `python -m bench SCALE`.
    Row(
        "SCALE raft MaxLogLen=0 MaxMsgs=2, dask cluster local:2",
        "raft",
        {"MaxLogLen": "0", "MaxMsgs": "2"},
        cluster="local:2",
        long=True,
    ),
    Row(
        "RATIS-2605 fix, bench (MaxMsgs=3)",
        "ratis_heartbeat_match_index",
        {"MaxMsgs": "3"},
        variant="fix",
        symmetry=True,
        workers=2,
        long=True,
    ),
]


def run_row(row: Row, pure: bool = False) -> dict[str, float]:
    """Run one row in a fresh interpreter and return its figures (``pure``: with the
    Python value core, MCHECK_PURE=1, and without the spec-alone timing)."""
    job = {
        "spec": row.spec,
        "variant": row.variant,
        "workers": row.workers,
        "symmetry": row.symmetry,
        "baseline": row.baseline,
        "constants": row.consts,
        "invariants": list(row.invariants),
        "cluster": row.cluster,
        "cache": row.cache,
        "spec_alone": row.spec_alone and not pure,
    }
    cmd = [sys.executable, "-m", "bench.one", json.dumps(job)]
    env = {**os.environ, "MCHECK_PURE": "1" if pure else "0"}
    # A session of its own, so the row is not charged for our terminal's signals or load.
    proc = subprocess.run(
        cmd, capture_output=True, text=True, check=True, start_new_session=True, env=env
    )
    data: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def median_row(row: Row, rounds: int, pure: bool = False) -> dict[str, float]:
    """Run a row ``rounds`` times; the run with the median time (all its figures)."""
    runs = sorted((run_row(row, pure) for _ in range(rounds)), key=lambda d: d["seconds"])
    return runs[len(runs) // 2]


def main(argv: list[str]) -> None:
    """Run the benchmark rows and print the table."""
    known = {"--quick", "--no-peers", "--peers-only"}
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return
    bad = [
        a for a in argv if a.startswith("-") and a not in known and not a.startswith("--rounds=")
    ]
    if bad:
        sys.exit(f"bench: unknown option {bad[0]} (see python -m bench --help)")
    quick = "--quick" in argv
    rounds = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("--rounds=")), 1)
    only = [a for a in argv if not a.startswith("--")]
    # Wide enough for the whole table in a CI log, whatever the terminal.
    console = Console(width=max(170, Console().width))
    if "--peers-only" in argv:
        compare.main(console=console)
        return
    table = Table(title="mcheck benchmarks (raft: 3 servers, Value={v1}, MaxTerm=2, MaxMsgs=1)")
    for col in (
        "benchmark",
        "result",
        "distinct",
        "generated",
        "depth",
        "seconds",
        "distinct/s",
        "generated/s",
        "peak RSS MB (+ workers)",
        "bytes/state",
        "baseline gen/s",
        "vs baseline",
        "vs spec code alone",
        "Python core s (C speedup)",
        "vs one process",
    ):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    # The same model's unreduced one-process row: (seconds, generated/s).
    single: dict[str, tuple[float, float]] = {}
    for row in ROWS:
        if quick and row.long:
            continue
        if row.name.startswith("SCALE") and not any("SCALE" in o for o in only):
            continue  # an hour-long row: only when asked for by name
        if only and not any(o.lower() in row.name.lower() for o in only):
            continue
        console.print(f"running {row.name} ...", style="dim")
        d = median_row(row, rounds)
        secs = d["seconds"]
        gen_rate = d["generated"] / secs if secs else 0.0
        base = ""
        ratio = ""
        if "baseline_seconds" in d:
            b_rate = d["baseline_generated"] / d["baseline_seconds"]
            base = f"{b_rate:,.0f}"
            ratio = f"{gen_rate / b_rate:.2f}x"
            if d["baseline_distinct"] != d["distinct"]:
                ratio += " (COUNTS DIFFER)"
        alone = ""
        if "spec_alone_seconds" in d and d["spec_alone_seconds"] > 0:
            # >1: faster than the spec's own code runs without any engine (caches).
            alone = f"{d['spec_alone_seconds'] / secs:.2f}x"
        pure_core = ""
        if row.spec_alone:
            # The same row with the Python value core (issue 47), in its own process.
            p = median_row(row, rounds, pure=True)
            pure_core = f"{p['seconds']:,.1f} ({p['seconds'] / secs:.2f}x)" if secs else ""
            if (p["distinct"], p["generated"]) != (d["distinct"], d["generated"]):
                pure_core += " (COUNTS DIFFER)"
        key = row.spec + json.dumps(row.consts, sort_keys=True)
        spread = row.workers > 1 or row.cluster is not None
        versus = ""
        if not row.cache and key in single:
            versus = f"plain path {single[key][1] / gen_rate:.2f}x slower" if gen_rate else ""
        elif not spread and not row.symmetry:
            single[key] = (secs, gen_rate)
        elif key in single and not row.symmetry:
            versus = f"speedup {single[key][0] / secs:.2f}x"
        elif key in single and "graph_states" in d:
            # Liveness under symmetry: the whole run against the unreduced one.
            versus = f"speedup {single[key][0] / secs:.2f}x"
        elif key in single and not spread and gen_rate:
            # Issue 12's yardstick: what symmetry costs per generated state.
            versus = f"symmetry {single[key][1] / gen_rate:.2f}x per generated"
        table.add_row(
            row.name,
            str(d["result"]),
            f"{d['distinct']:,}"
            + (
                f" (graph {d['graph_states']:,})"
                if "graph_states" in d and d["graph_states"] != d["distinct"]
                else ""
            ),
            f"{d['generated']:,}",
            str(d["depth"]),
            f"{secs:,.1f}",
            f"{d['distinct'] / secs:,.0f}" if secs else "-",
            f"{gen_rate:,.0f}",
            f"{d['peak_rss_mb']:,.0f}"
            + (f" + {row.workers}x{d['worker_rss_mb']:,.0f}" if row.workers > 1 else "")
            + (f" + workers <={d['worker_rss_mb']:,.0f}" if row.cluster else ""),
            f"{d['bytes_per_state']:,.0f}" if d["distinct"] >= 10_000 else "-",
            base,
            ratio,
            alone,
            pure_core,
            versus,
        )
    console.print(table)
    if not only:
        # Trace validation of a long real log (issue 27: 12,000 events in under 30 s).
        validation.run(console=console, rounds=1 if quick else 3)
        if not quick:
            # Specula's MC model of etcd/raft at a few million states beside TLC with
            # one and two workers (skipped without TLC and the case study).
            etcd_tlc.speed(rounds)
        if not quick:
            # The simulation hunts of issue 32 (plain, --swarm, --swarm --workers 2),
            # three seeds each: python -m bench.simulation runs ten.
            for name in simulation.HUNTS:
                simulation.hunt(name, seeds=3, timeout="60", depth="100")
    if "--no-peers" not in argv and not only:
        compare.main(rounds=1 if quick else 3, console=console)


if __name__ == "__main__":
    main(sys.argv[1:])
