"""Time TLC and mcheck side by side on raft.tla (optional: needs a TLC you provide).

TLC is a reference we compare with, never a dependency: nothing of TLC is in this
project.  Point the bench at a TLC and at Diego Ongaro's ``raft.tla`` (the module
``specs/raft.py`` translates)::

    TLC_CLASSPATH=/path/tla2tools.jar RAFT_TLA=/path/raft.tla python -m bench.tlc [ROUNDS]

The model module and configurations below are ours: the same bounded model as
``specs/raft.py`` (3 servers, ``Value = {v1}``, MaxTerm 2, MaxMsgs 1, the same state
constraint, deadlock not checked).  Each command runs in a session of its own, rounds
interleaved; the table gives medians, TLC's and mcheck's counts side by side (they must
agree) and mcheck's generated states per second as a multiple of TLC's.
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
from pathlib import Path

from rich.console import Console
from rich.table import Table

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

#: (label, MaxLogLen, MaxMsgs, symmetry)
ROWS = [
    ("raft MaxLogLen=0", 0, 1, False),
    ("raft MaxLogLen=0, symmetry", 0, 1, True),
    ("raft MaxLogLen=1, symmetry", 1, 1, True),
]

_TLC_COUNTS = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")
_TLC_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")


def _timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    start = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, start_new_session=True, check=False
    )
    took = time.monotonic() - start
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise SystemExit(f"bench.tlc: {cmd[0]} failed: {' | '.join(tail)}")
    return took, proc.stdout


def run_tlc(classpath: str, work: Path, max_log: int, max_msgs: int, sym: bool) -> dict[str, float]:
    """One TLC run (1 worker); its seconds and counts."""
    cfg = work / f"MC_{max_log}_{max_msgs}_{int(sym)}.cfg"
    cfg.write_text(
        CONFIG.format(max_log=max_log, max_msgs=max_msgs, symmetry="SYMMETRY Perms" if sym else "")
    )
    meta = Path(tempfile.mkdtemp(prefix="states-", dir=work))
    cmd = ["java", "-XX:+UseParallelGC", "-cp", classpath, "tlc2.TLC", "-workers", "1"]
    cmd += ["-metadir", str(meta), "-config", cfg.name, "MCraft.tla"]
    took, out = _timed(cmd, work)
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


def run_mcheck(max_log: int, max_msgs: int, sym: bool) -> dict[str, float]:
    """One mcheck run of specs/raft.py at the same bounds; its seconds and counts."""
    cmd = [sys.executable, "-m", "checker", "run", "raft", "--json"]
    cmd += ["--const", f"MaxLogLen={max_log}", "--const", f"MaxMsgs={max_msgs}"]
    cmd += [] if sym else ["--no-symmetry"]
    took, out = _timed(cmd, ROOT)
    data = json.loads(out)
    return {
        "seconds": took,
        "generated": data["states_generated"],
        "distinct": data["distinct_states"],
        "depth": data["depth"],
    }


def main(argv: list[str]) -> None:
    """Run every row ``ROUNDS`` times (default 3), interleaved, and print medians."""
    classpath, raft = os.environ.get("TLC_CLASSPATH"), os.environ.get("RAFT_TLA")
    if not classpath or not raft or not Path(raft).is_file():
        raise SystemExit("bench.tlc: set TLC_CLASSPATH (a tla2tools.jar) and RAFT_TLA (raft.tla)")
    rounds = int(argv[0]) if argv else 3
    console = Console(width=150)
    with tempfile.TemporaryDirectory(prefix="mcheck-tlc-") as tmp:
        work = Path(tmp)
        shutil.copy(raft, work / "raft.tla")
        (work / "MCraft.tla").write_text(MODULE)
        runs: dict[tuple[str, str], list[dict[str, float]]] = {}
        for r in range(rounds):
            for label, max_log, max_msgs, sym in ROWS:
                console.print(f"round {r + 1}/{rounds}: {label} ...", style="dim")
                tlc = run_tlc(classpath, work, max_log, max_msgs, sym)
                runs.setdefault((label, "TLC"), []).append(tlc)
                runs.setdefault((label, "mcheck"), []).append(run_mcheck(max_log, max_msgs, sym))
    table = Table(title=f"TLC (1 worker) and mcheck on raft.tla, medians of {rounds}")
    for col in ("row", "checker", "distinct", "generated", "depth", "s", "generated/s", "ratio"):
        table.add_column(col, justify="left" if col in ("row", "checker") else "right")
    for label, *_ in ROWS:
        rate = {}
        for who in ("TLC", "mcheck"):
            got = runs[(label, who)]
            secs = statistics.median(g["seconds"] for g in got)
            rate[who] = got[0]["generated"] / secs
            ratio = f"{rate['mcheck'] / rate['TLC']:.2f}x TLC" if who == "mcheck" else ""
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


if __name__ == "__main__":
    main(sys.argv[1:])
