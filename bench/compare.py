"""``make bench`` part two: mcheck against the Python peers on the same mini-Raft.

Every checker runs under one interpreter (the peers' virtualenv ``build/bench-peers``,
Python >= 3.12 because musil needs it, with mcheck installed into it too), every command
in a session of its own (``setsid``) and a fresh process, rounds interleaved so a burst
of load on the shared machine hits every checker alike.  Each figure is the median over
the rounds; ratios are of medians.  The distinct counts must agree with mcheck's (with
symmetry: the orbit count), else the row says so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "build" / "bench-peers"
PEER_PINS = ("minicheck==0.4.0", "musil==0.36.7")
MODEL = {"n": 3, "max_term": 4, "max_log": 2}
#: A job still running after this long is stopped and shown as "> N s".
JOB_TIMEOUT = 300


@dataclass(frozen=True)
class Job:
    """One command of the comparison: a checker with symmetry and workers."""

    checker: str  # "mcheck", "plain", "minicheck" or "musil"
    symmetry: bool = False
    workers: int = 1

    @property
    def label(self) -> str:
        """How the table names it."""
        extra = [
            s
            for s, on in (
                ("symmetry", self.symmetry),
                (f"{self.workers} workers", self.workers > 1),
            )
            if on
        ]
        return self.checker + (f" ({', '.join(extra)})" if extra else "")


JOBS = [
    Job("plain"),
    Job("minicheck"),
    Job("musil"),
    Job("mcheck"),
    Job("plain", symmetry=True),
    Job("musil", symmetry=True),
    Job("mcheck", symmetry=True),
    Job("musil", workers=2),
    Job("mcheck", workers=2),
]


def _runs_312(candidate: str) -> bool:
    """Whether ``candidate`` starts and is Python >= 3.12 (a pyenv shim may exist and fail)."""
    try:
        proc = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.strip() == "True"


def _python_312() -> str | None:
    if sys.version_info >= (3, 12):
        return sys.executable
    pyenv = Path.home() / ".pyenv" / "versions"
    candidates = [shutil.which(name) for name in ("python3.12", "python3.13")]
    candidates += [str(c) for c in sorted(pyenv.glob("3.1[2-9]*/bin/python"))]
    for cand in candidates:
        if cand and _runs_312(cand):
            return cand
    return None


def ensure_peers() -> Path | None:
    """The peers' interpreter, creating its virtualenv on first use; None if impossible."""
    py = PEERS / "bin" / "python"
    if py.exists():
        return py
    base = _python_312()
    if base is None:
        return None
    try:
        subprocess.run([base, "-m", "venv", str(PEERS)], check=True)
        pins = [*PEER_PINS, "-e", str(ROOT)]
        subprocess.run([str(py), "-m", "pip", "install", "-q", *pins], check=True)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(PEERS, ignore_errors=True)  # half-made: the next run starts afresh
        raise SystemExit(f"bench.compare: could not set up the peers' venv: {exc}") from None
    return py


def run_job(py: Path, job: Job) -> dict[str, float]:
    """Run one job in a fresh process in its own session; its figures as a dict."""
    if job.checker == "mcheck":
        spec = {
            "spec": "bench.mini_raft",
            "symmetry": job.symmetry,
            "workers": job.workers,
            "constants": {"MaxTerm": str(MODEL["max_term"]), "MaxLog": str(MODEL["max_log"])},
        }
        cmd = [str(py), "-m", "bench.one", json.dumps(spec)]
    else:
        peer = {"checker": job.checker, "symmetry": job.symmetry, "workers": job.workers, **MODEL}
        cmd = [str(py), "-m", "bench.peers", json.dumps(peer)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
        env=dict(os.environ),
    )
    try:
        out, err = proc.communicate(timeout=JOB_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its whole session: workers included
        proc.communicate()
        return {"error": 1.0, "message": f"> {JOB_TIMEOUT} s (stopped)"}  # type: ignore[dict-item]
    if proc.returncode != 0:
        tail = (err.strip().splitlines() or ["no output"])[-1]
        return {"error": 1.0, "message": tail}  # type: ignore[dict-item]
    data: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return data


def _versus(job: Job, med: dict[Job, float]) -> str:
    """mcheck's speed as a multiple of the fastest peer run the same way."""
    if job.checker != "mcheck":
        return ""
    peers = [
        secs
        for j, secs in med.items()
        if j.checker in ("minicheck", "musil")
        and (j.symmetry, j.workers) == (job.symmetry, job.workers)
    ]
    return f"{min(peers) / med[job]:.2f}x best peer" if peers else ""


def main(rounds: int = 3, console: Console | None = None) -> None:
    """Run every job ``rounds`` times, interleaved, and print the medians and ratios."""
    console = console or Console(width=170)
    py = ensure_peers()
    if py is None:
        console.print("peers skipped: no Python >= 3.12 for musil", style="yellow")
        return
    runs: dict[Job, list[dict[str, float]]] = {j: [] for j in JOBS}
    for r in range(rounds):
        for job in JOBS:
            if runs[job] and "error" in runs[job][0]:
                continue  # it failed or timed out once: another round says nothing new
            console.print(f"round {r + 1}/{rounds}: {job.label} ...", style="dim")
            runs[job].append(run_job(py, job))
    ok = {j: [d for d in runs[j] if "error" not in d] for j in JOBS}
    med = {j: statistics.median(d["seconds"] for d in ok[j]) for j in JOBS if ok[j]}
    table = Table(
        title=(
            f"mini-Raft ({MODEL['n']} servers, MaxTerm {MODEL['max_term']}, MaxLog "
            f"{MODEL['max_log']}): medians of {rounds} rounds, one interpreter "
            f"({py.resolve()})"
        )
    )
    for col in ("checker", "distinct", "seconds (runs)", "distinct/s", "peak RSS MB", "vs"):
        table.add_column(col, justify="left" if col == "checker" else "right")
    for job in JOBS:
        if job not in med:
            msg = str(runs[job][0].get("message", "failed"))
            table.add_row(job.label, "-", msg[:60], "-", "-", "-")
            continue
        secs = med[job]
        counts = {int(d["distinct"]) for d in ok[job]}
        distinct = min(counts)
        table.add_row(
            job.label,
            f"{distinct:,}" + ("" if len(counts) == 1 else " (VARIES)"),
            f"{secs:,.1f} (" + ", ".join(f"{d['seconds']:.1f}" for d in ok[job]) + ")",
            f"{distinct / secs:,.0f}",
            f"{statistics.median(d['peak_rss_mb'] for d in ok[job]):,.0f}",
            _versus(job, med),
        )
    console.print(table)
    one, two = med.get(Job("mcheck")), med.get(Job("mcheck", workers=2))
    if one and two:
        console.print(f"mcheck --workers 2 vs one process: {one / two:.2f}x")
    for sym in (False, True):
        m, p = med.get(Job("mcheck", symmetry=sym)), med.get(Job("plain", symmetry=sym))
        if m and p:
            console.print(
                f"mcheck vs plain tuple+set BFS{' (symmetry)' if sym else ''}: {p / m:.2f}x"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
