"""``python -m bench.validation``: does ``mcheck validate`` keep pace with a long log?

The log is a real run: pysyncobj 0.3.17, 3 nodes on 127.0.0.1, elections, votes,
commits and the leader stopped and restarted again and again, logged by
``tests/pysyncobj_harness.py`` (``bench/pysyncobj_log.py`` wrote it; it is kept in
``bench/data`` so every session validates the same events).  Each round runs ``mcheck
validate pysyncobj_raft`` on it in a session of its own (``setsid``), with bounds read
from the log (the highest term and commit index, the number of restarts: validation
visits only the states the log allows, so they cost nothing), and prints the median.
Options: ``--rounds=N`` (3), ``--events=N`` (the first N events only).
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

LOG = Path(__file__).parent / "data" / "pysyncobj-12k.ndjson.gz"


def bounds(lines: list[str]) -> dict[str, int]:
    """The spec constants the log needs: its highest term and commit index, and how
    many restarts it has."""
    term, index, restarts = 0, 1, 0
    for line in lines:
        ev = json.loads(line)
        for key, value in ev.get("state", {}).items():
            if key.startswith("term[") and isinstance(value, int):
                term = max(term, value)
            if key.startswith("commitIndex[") and isinstance(value, int):
                index = max(index, value)
        restarts += ev["event"] == "Restart"
    return {"MaxTerm": term, "MaxIndex": index, "MaxRestarts": restarts}


def run(console: Console | None = None, rounds: int = 3, events: int | None = None) -> None:
    """Validate the log ``rounds`` times; print events, seconds and events/s."""
    console = console or Console()
    lines = gzip.decompress(LOG.read_bytes()).decode().splitlines()
    if events is not None:
        lines = lines[:events]
    consts = bounds(lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.ndjson"
        path.write_text("\n".join(lines) + "\n")
        cmd = [sys.executable, "-m", "checker", "validate", "pysyncobj_raft", str(path)]
        for k, v in consts.items():
            cmd += ["--const", f"{k}={v}"]
        times, last = [], ""
        for _ in range(rounds):
            t0 = time.perf_counter()
            proc = subprocess.run(
                cmd, capture_output=True, text=True, start_new_session=True, check=False
            )
            times.append(time.perf_counter() - t0)
            last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
            if proc.returncode != 0:
                console.print(f"validate failed (exit {proc.returncode}): {last}")
                return
    secs = statistics.median(times)
    consts_text = " ".join(f"{k}={v}" for k, v in consts.items())
    console.print(
        f"validate pysyncobj_raft, {len(lines):,} events of a real run ({consts_text}): "
        f"median {secs:.1f} s of {rounds} ({len(lines) / secs:,.0f} events/s, the whole "
        f"command: start-up, reading, search, printing the behaviour)"
    )
    console.print(f"  {last}", soft_wrap=True)


def main(argv: list[str]) -> None:
    """Command line: ``--rounds=N``, ``--events=N``."""
    opts = dict(a.lstrip("-").split("=", 1) for a in argv if "=" in a)
    events = int(opts["events"]) if "events" in opts else None
    run(rounds=int(opts.get("rounds", 3)), events=events)


if __name__ == "__main__":
    main(sys.argv[1:])
