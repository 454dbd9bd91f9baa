"""``make bench``: distinct states per second and peak memory on the benchmark specs.

Every row runs in a fresh process (so its peak RSS is its own).  Rows marked with a
baseline also run, in that same process, a minimal hand-written checker of the same
model (plain tuples, a Python set), and print mcheck's throughput as a fraction of it.
``python -m bench --quick`` skips the long rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class Row:
    """One benchmark: a spec, its constants, and how to run it."""

    name: str
    spec: str
    consts: tuple[str, ...]
    variant: str = "-"
    workers: int = 1
    symmetry: bool = False
    baseline: bool = False
    long: bool = False


ROWS = [
    Row("die_hard", "die_hard", ("Target=99",), baseline=True),
    Row("raft MaxLogLen=0", "raft", ("MaxLogLen=0",), baseline=True),
    Row("raft MaxLogLen=0, 2 workers", "raft", ("MaxLogLen=0",), workers=2),
    Row("raft MaxLogLen=0, symmetry", "raft", ("MaxLogLen=0",), symmetry=True),
    Row("raft MaxLogLen=1", "raft", ("MaxLogLen=1",), baseline=True, long=True),
    Row("raft MaxLogLen=1, 2 workers", "raft", ("MaxLogLen=1",), workers=2, long=True),
    Row("raft MaxLogLen=1, symmetry", "raft", ("MaxLogLen=1",), symmetry=True, long=True),
]


def run_row(row: Row) -> dict[str, float]:
    """Run one row in a fresh interpreter and return its figures."""
    cmd = [
        sys.executable,
        "-m",
        "bench.one",
        row.spec,
        row.variant,
        str(row.workers),
        "1" if row.symmetry else "0",
        "1" if row.baseline else "0",
        *row.consts,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    data: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def main(argv: list[str]) -> None:
    """Run the benchmark rows and print the table."""
    quick = "--quick" in argv
    console = Console()
    table = Table(title="mcheck benchmarks (3 servers, Value={v1}, MaxTerm=2, MaxMsgs=1)")
    for col in (
        "benchmark",
        "result",
        "distinct",
        "generated",
        "depth",
        "seconds",
        "distinct/s",
        "generated/s",
        "peak RSS MB",
        "bytes/state",
        "baseline gen/s",
        "vs baseline",
    ):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    single: dict[str, float] = {}
    for row in ROWS:
        if quick and row.long:
            continue
        console.print(f"running {row.name} ...", style="dim")
        d = run_row(row)
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
        key = row.spec + " ".join(row.consts)
        if row.workers == 1 and not row.symmetry:
            single[key] = secs
        elif row.workers > 1 and key in single:
            ratio = f"speedup {single[key] / secs:.2f}x"
        table.add_row(
            row.name,
            str(d["result"]),
            f"{d['distinct']:,}",
            f"{d['generated']:,}",
            str(d["depth"]),
            f"{secs:,.1f}",
            f"{d['distinct'] / secs:,.0f}" if secs else "-",
            f"{gen_rate:,.0f}",
            f"{d['peak_rss_mb']:,.0f}",
            f"{d['bytes_per_state']:,.0f}",
            base,
            ratio,
        )
    console.print(table)


if __name__ == "__main__":
    main(sys.argv[1:])
