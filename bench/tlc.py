"""Time TLC and mcheck side by side (optional: needs a TLC you provide).

TLC is a reference we compare with, never a dependency: nothing of TLC is in this
project.  Point the bench at a TLC, at Diego Ongaro's ``raft.tla`` (the module
``specs/raft.py`` translates) and at a checkout of the TLA+ Examples (whose models
``specs/`` ports)::

    TLC_CLASSPATH=/path/tla2tools.jar RAFT_TLA=/path/raft.tla \
    TLA_EXAMPLES=/path/to/Examples python -m bench.tlc [ROUNDS] [--only=PART]

Four parts (``--only=raft|examples|workers|simulate``; default all whose inputs are
given):

- ``raft``: raft.tla, one worker each.  The model module and configurations below are
  ours: the same bounded model as ``specs/raft.py`` (3 servers, ``Value = {v1}``,
  MaxTerm 2, MaxMsgs 1, the same state constraint, deadlock not checked).
- ``examples``: the TLA+ Examples models ``specs/`` ports, each with its own
  ``.cfg`` as published, one worker each (``--examples=Name,...`` picks some).
- ``workers``: raft.tla MaxLogLen 1 without symmetry, TLC ``-workers 2`` beside
  mcheck ``--workers 2`` (issue 27: TLC users run several workers).
- ``simulate``: time to a deep violation by random simulation (issue 32): raft.tla
  (MaxLogLen 2) with the probe "no server commits beyond index 1"
  (``bench/raft_commit_probe.py``), TLC ``-simulate`` beside ``mcheck simulate`` (its
  plain walk and ``--swarm``), each with its own default walk, ``--seeds=N`` seeds
  (10), each stopped after ``--timeout=S`` seconds (60).

Each command runs in a session of its own, rounds interleaved; the tables give
medians, TLC's and mcheck's counts side by side (distinct states and depth must agree;
TLC counts a generated state per true disjunct of a guard, mcheck one per action
instance) and mcheck's speed as a multiple of TLC's: TLC's seconds over mcheck's for
the same states (equal to the ratio of generated states per second where the
generated counts agree).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench import simulation

ROOT = Path(__file__).resolve().parent.parent

MODULE = """---- MODULE MCraft ----
EXTENDS raft
CONSTANTS MaxTerm, MaxLogLen, MaxMsgs
StateConstraint ==
    /\\ Cardinality(DOMAIN messages) <= MaxMsgs
    /\\ \\A m \\in DOMAIN messages : messages[m] <= 1
    /\\ \\A i \\in Server : currentTerm[i] <= MaxTerm
    /\\ \\A i \\in Server : Len(log[i]) <= MaxLogLen
Perms == Permutations(Server)
====
"""

CONFIG = """CONSTANTS
  Server = {{s1, s2, s3}}
  Value = {{v1}}
  Follower = Follower
  Candidate = Candidate
  Leader = Leader
  Nil = Nil
  RequestVoteRequest = RequestVoteRequest
  RequestVoteResponse = RequestVoteResponse
  AppendEntriesRequest = AppendEntriesRequest
  AppendEntriesResponse = AppendEntriesResponse
  MaxTerm = 2
  MaxLogLen = {max_log}
  MaxMsgs = {max_msgs}
INIT Init
NEXT Next
CONSTRAINT StateConstraint
CHECK_DEADLOCK FALSE
{symmetry}"""

#: The probe of issue 32's hunt, over the MCraft module above.
PROBE_MODULE = """---- MODULE MCprobe ----
EXTENDS MCraft
CommitAtMostOne == \\A i \\in Server : commitIndex[i] <= 1
====
"""

#: (label, folder under specifications/, module, configuration, mcheck spec): the
#: ports with more than a few thousand states (below that both are start-up).
#: SimpleRegular is left out: its module EXTENDS TLAPS, which the Examples do not hold.
EXAMPLES = [
    ("TokenRing", "ewd426", "TokenRing", "TokenRing.cfg", "token_ring"),
    ("Chameneos", "Chameneos", "Chameneos", "Chameneos.cfg", "chameneos"),
    (
        "MultiPaxos (small)",
        "MultiPaxos-SMR",
        "MultiPaxos_MC",
        "MultiPaxos_MC_small.cfg",
        "multipaxos",
    ),
    ("LamportMutex", "lamport_mutex", "MCLamportMutex", "MCLamportMutex.cfg", "lamport_mutex"),
    ("PaxosCommit", "transaction_commit", "PaxosCommit", "PaxosCommit.cfg", "paxos_commit"),
    # (written before any tuning for it, in a style the engine had not met: frozen
    # dataclass states; TLC counts InitiateProbe once per true disjunct of its guard)
    ("EWD998 N=3", "ewd998", "EWD998", "EWD998Small.cfg", "ewd998"),
]

#: (label, MaxLogLen, MaxMsgs, symmetry)
ROWS = [
    ("raft MaxLogLen=0", 0, 1, False),
    ("raft MaxLogLen=0, symmetry", 0, 1, True),
    ("raft MaxLogLen=1, symmetry", 1, 1, True),
]

_TLC_COUNTS = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")
_TLC_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")


def _timed(
    cmd: list[str],
    cwd: Path,
    ok: tuple[int, ...] = (0,),
    timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> tuple[float, str]:
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            start_new_session=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return time.monotonic() - start, ""
    took = time.monotonic() - start
    if proc.returncode not in ok:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise SystemExit(f"bench.tlc: {cmd[0]} failed: {' | '.join(tail)}")
    return took, proc.stdout


def run_tlc(
    classpath: str, work: Path, max_log: int, max_msgs: int, sym: bool, workers: int = 1
) -> dict[str, float]:
    """One TLC run of raft.tla; its seconds and counts."""
    cfg = work / f"MC_{max_log}_{max_msgs}_{int(sym)}.cfg"
    cfg.write_text(
        CONFIG.format(max_log=max_log, max_msgs=max_msgs, symmetry="SYMMETRY Perms" if sym else "")
    )
    return run_tlc_model(classpath, work, "MCraft", cfg.name, workers)


def _tlc(classpath: str, meta: Path, module: str, cfg: str, *options: str) -> list[str]:
    """The command that runs TLC on ``module`` under ``cfg``, its states in ``meta``."""
    cmd = ["java", "-XX:+UseParallelGC", "-cp", classpath, "tlc2.TLC", *options]
    return [*cmd, "-metadir", str(meta), "-config", cfg, f"{module}.tla"]


def run_tlc_model(
    classpath: str, work: Path, module: str, cfg: str, workers: int = 1
) -> dict[str, float]:
    """One TLC run of ``module`` under configuration ``cfg`` (files in ``work``)."""
    meta = Path(tempfile.mkdtemp(prefix="states-", dir=work))
    took, out = _timed(_tlc(classpath, meta, module, cfg, "-workers", str(workers)), work)
    shutil.rmtree(meta, ignore_errors=True)
    counts, depth = _TLC_COUNTS.search(out), _TLC_DEPTH.search(out)
    if counts is None or depth is None:
        raise SystemExit("bench.tlc: TLC printed no final counts")
    return {
        "seconds": took,
        "generated": int(counts.group(1).replace(",", "")),
        "distinct": int(counts.group(2).replace(",", "")),
        "depth": int(depth.group(1)),
    }


def run_mcheck(max_log: int, max_msgs: int, sym: bool, workers: int = 1) -> dict[str, float]:
    """One mcheck run of specs/raft.py at the same bounds; its seconds and counts."""
    args = ["raft", "--const", f"MaxLogLen={max_log}", "--const", f"MaxMsgs={max_msgs}"]
    args += [] if sym else ["--no-symmetry"]
    return run_mcheck_spec(args, workers)


def tree_env(tree: Path) -> dict[str, str] | None:
    """The environment that makes Python import ``tree``'s ``checker`` (None: this
    tree's, as installed)."""
    return None if tree == ROOT else dict(os.environ, PYTHONPATH=str(tree))


def run_mcheck_spec(
    args: list[str], workers: int = 1, tree: Path = ROOT, ok: tuple[int, ...] = (0,)
) -> dict[str, float]:
    """One ``mcheck run`` (``args``: the spec and its options) of the checker in
    ``tree`` (this one unless said), exiting with a code in ``ok``; seconds and counts."""
    cmd = [sys.executable, "-m", "checker", "run", *args, "--json"]
    cmd += ["--workers", str(workers)] if workers > 1 else []
    took, out = _timed(cmd, tree, ok=ok, env=tree_env(tree))
    data = json.loads(out.strip().splitlines()[-1])
    return {
        "seconds": took,
        "generated": data["states_generated"],
        "distinct": data["distinct_states"],
        "depth": data["depth"],
    }


Runner = Callable[[], dict[str, float]]


def _compare(
    console: Console, title: str, rows: list[tuple[str, Runner, Runner]], rounds: int
) -> None:
    """Run each row's TLC and mcheck ``rounds`` times, interleaved; print medians."""
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for r in range(rounds):
        for label, tlc, mcheck in rows:
            console.print(f"round {r + 1}/{rounds}: {label} ...", style="dim")
            runs.setdefault((label, "TLC"), []).append(tlc())
            runs.setdefault((label, "mcheck"), []).append(mcheck())
    table = Table(title=f"{title}, medians of {rounds}")
    for col in ("row", "checker", "distinct", "generated", "depth", "s", "generated/s", "ratio"):
        table.add_column(col, justify="left" if col in ("row", "checker") else "right")
    for label, *_ in rows:
        rate, seconds = {}, {}
        for who in ("TLC", "mcheck"):
            got = runs[(label, who)]
            secs = statistics.median(g["seconds"] for g in got)
            rate[who] = got[0]["generated"] / secs
            seconds[who] = secs
            # The same states, so the ratio is of the times: TLC counts a successor per
            # true disjunct of a guard (EWD998's InitiateProbe), mcheck one per action
            # instance, so generated/s would credit TLC with work it repeats.
            ratio = f"{seconds['TLC'] / secs:.2f}x TLC" if who == "mcheck" else ""
            theirs = runs[(label, "TLC")][0]
            if who == "mcheck" and (got[0]["distinct"], got[0]["depth"]) != (
                theirs["distinct"],
                theirs["depth"],
            ):
                ratio += " (COUNTS DIFFER)"
            elif who == "mcheck" and got[0]["generated"] != theirs["generated"]:
                ratio += " (generated: TLC per disjunct)"
            each = ", ".join(f"{g['seconds']:.1f}" for g in got)
            table.add_row(
                label,
                who,
                f"{got[0]['distinct']:,}",
                f"{got[0]['generated']:,}",
                str(got[0]["depth"]),
                f"{secs:.1f} ({each})",
                f"{rate[who]:,.0f}",
                ratio,
            )
    console.print(table)


def _hunt(console: Console, classpath: str, work: Path, seeds: int, timeout: float) -> None:
    """Issue 32: seconds to the probe's violation by TLC -simulate and mcheck simulate
    (plain and --swarm), whole commands, one seed at a time."""
    (work / "MCprobe.tla").write_text(PROBE_MODULE)
    cfg = CONFIG.format(max_log=2, max_msgs=1, symmetry="") + "INVARIANT CommitAtMostOne\n"
    (work / "MCprobe.cfg").write_text(cfg)
    found: dict[str, list[float]] = {"TLC -simulate": [], "mcheck simulate": [], "--swarm": []}
    for seed in range(1, seeds + 1):
        meta = Path(tempfile.mkdtemp(prefix="sim-", dir=work))
        options = ["-simulate", "-depth", "100", "-seed", str(seed), "-workers", "1"]
        cmd = _tlc(classpath, meta, "MCprobe", "MCprobe.cfg", *options)
        took, out = _timed(cmd, work, ok=(0, 12, 13), timeout=timeout)
        hit = "Invariant CommitAtMostOne is violated" in out
        if hit:
            found["TLC -simulate"].append(took)
        console.print(f"seed {seed}: TLC -simulate {took:.1f} s, found: {hit}", style="dim")
        for name, extra in (("mcheck simulate", []), ("--swarm", ["--swarm"])):
            # The same hunt as bench.simulation's (its probe, its bound, its runner).
            args = ["simulate", *simulation.HUNTS["raft"], "--seed", str(seed), "--depth", "100"]
            took, sim = simulation.timed([*args, *extra, "--timeout", str(timeout)])
            if sim.get("result") == "violation":
                found[name].append(took)
    table = Table(title=f"time to 'no commit beyond index 1' violated, {seeds} seeds")
    for col in ("hunter", "found", "median s", "each s"):
        table.add_column(col, justify="left" if col == "hunter" else "right")
    for name, times in found.items():
        med = f"{statistics.median(times):.1f}" if times else "-"
        table.add_row(name, f"{len(times)}/{seeds}", med, ", ".join(f"{t:.1f}" for t in times))
    console.print(table)


def main(argv: list[str]) -> None:
    """Run the parts whose inputs are given (or ``--only``'s), ``ROUNDS`` times each
    (default 3), interleaved, and print medians."""
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    numbers = [a for a in argv if not a.startswith("--")]
    rounds = int(numbers[0]) if numbers else 3
    classpath = os.environ.get("TLC_CLASSPATH")
    raft, examples = os.environ.get("RAFT_TLA"), os.environ.get("TLA_EXAMPLES")
    given_raft = bool(raft and Path(raft).is_file())
    given_examples = bool(examples and Path(examples).is_dir())
    if not classpath or not (given_raft or given_examples):
        raise SystemExit(
            "bench.tlc: set TLC_CLASSPATH (a tla2tools.jar) and RAFT_TLA (raft.tla) "
            "and/or TLA_EXAMPLES (a checkout of tlaplus/Examples)"
        )
    parts = [opts["only"]] if "only" in opts else []
    if not parts:
        parts = ["raft", "workers", "simulate"] if given_raft else []
        parts += ["examples"] if given_examples else []
    console = Console(width=150)
    with tempfile.TemporaryDirectory(prefix="mcheck-tlc-") as tmp:
        work = Path(tmp)
        if raft:
            shutil.copy(raft, work / "raft.tla")
            (work / "MCraft.tla").write_text(MODULE)
        cp = classpath
        rows: list[tuple[str, Runner, Runner]] = []
        if "raft" in parts:
            rows = [
                (label, partial(run_tlc, cp, work, m, n, y), partial(run_mcheck, m, n, y))
                for label, m, n, y in ROWS
            ]
            _compare(console, "TLC (1 worker) and mcheck on raft.tla", rows, rounds)
        if "workers" in parts:
            rows = [
                (
                    "raft MaxLogLen=1, 2 workers",
                    partial(run_tlc, cp, work, 1, 1, False, workers=2),
                    partial(run_mcheck, 1, 1, False, workers=2),
                )
            ]
            _compare(console, "TLC -workers 2 and mcheck --workers 2 on raft.tla", rows, rounds)
        if "examples" in parts and examples:
            wanted = opts.get("examples", "").split(",") if "examples" in opts else None
            rows = []
            for label, folder, module, cfg, spec in EXAMPLES:
                if wanted is not None and label not in wanted:
                    continue
                here = work / folder
                shutil.copytree(Path(examples) / "specifications" / folder, here)
                tlc = partial(run_tlc_model, cp, here, module, cfg)
                rows.append((label, tlc, partial(run_mcheck_spec, [spec])))
            _compare(console, "TLC (1 worker) and mcheck on the TLA+ Examples", rows, rounds)
        if "simulate" in parts:
            seeds, timeout = int(opts.get("seeds", "10")), float(opts.get("timeout", "60"))
            _hunt(console, cp, work, seeds, timeout)


if __name__ == "__main__":
    main(sys.argv[1:])
