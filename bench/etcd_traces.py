"""Specula's etcd/raft traces: mcheck validate beside TLC's Traceetcdraft (optional).

Needs the case study (``SPECULA_CASE_STUDIES``, as for ``bench.etcd_tlc``); TLC
(``TLC_CLASSPATH``, with CommunityModules for Json and IOUtils) is optional::

    SPECULA_CASE_STUDIES=/path/to/specula-case-studies \
    TLC_CLASSPATH=/path/tla2tools.jar:/path/CommunityModules.jar \
    python -m bench.etcd_traces [NAME...]

For every trace of the snapshot scenario (``harness/traces/*.ndjson``) it prints
each tool's verdict and wall time (one command each, in a session of its own: a JVM
or a Python start included), then the tamper sweep: every event Traceetcdraft checks
a recorded value of, taken one at a time with its term raised by one, must make
mcheck reject the trace at that event's line.  The case study's files are read
where they are, or copied into a temporary folder for TLC; nothing of them enters
this project.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "etcd-raft/scenarios/snapshot"
#: Events whose recorded state Traceetcdraft compares (the others it only binds).
UNCHECKED = {"Ready", "Replicate", "ManualSendSnapshot", "ApplyConfChange"}
#: Events of which Traceetcdraft compares the recorded progress only (the sweep
#: raises their ``next`` instead of their term).
PROGRESS_ONLY = {"ReportUnreachable", "ReportSnapshotStatus"}


def run(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[float, int, str]:
    """One command in a session of its own: seconds, exit code, stdout and stderr."""
    start = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, start_new_session=True, check=False
    )
    return time.monotonic() - start, proc.returncode, proc.stdout + proc.stderr


def mcheck_verdict(trace: Path) -> tuple[float, str, str]:
    """``mcheck validate etcd_raft TRACE``: seconds, verdict, the line it stopped at."""
    took, code, out = run(
        [sys.executable, "-m", "checker", "validate", "etcd_raft", str(trace), "--last", "1"]
    )
    m = re.search(r"NOT A BEHAVIOUR: line (\d+)", out)
    verdict = {0: "accepted", 1: "rejected"}.get(code, f"exit {code}")
    return took, verdict, m.group(1) if m else ""


def tlc_verdict(classpath: str, work: Path, trace: Path) -> tuple[float, str, str]:
    """TLC on Traceetcdraft for TRACE: seconds, verdict, the log line it stopped at."""
    meta = Path(tempfile.mkdtemp(prefix="states-", dir=work))
    env = {**os.environ, "JSON": str(trace)}
    cmd = ["java", "-XX:+UseParallelGC", "-cp", classpath, "tlc2.TLC", "-workers", "1"]
    cmd += ["-metadir", str(meta), "-config", "Traceetcdraft.cfg", "Traceetcdraft.tla"]
    took, code, out = run(cmd, env=env, cwd=work)
    shutil.rmtree(meta, ignore_errors=True)
    if "No error has been found" in out:
        return took, "accepted", ""
    if "TraceMatched was violated" in out:
        ls = re.findall(r"/\\ l = (\d+)", out)
        # TraceLog counts the tagged events only: its index k is the k-th event.
        return took, "rejected", f"event {ls[-1]}" if ls else ""
    return took, f"TLC exit {code}", ""


def sweep(trace: Path, upto: int | None) -> tuple[int, int, list[str]]:
    """Raise the term (the progress' next where only progress is compared) of each
    checked event before line ``upto`` (where the trace itself is rejected; None:
    all) in turn; (events, rejected there, misses)."""
    from checker import CompiledSpec
    from checker.authoring.loader import load_spec_class
    from checker.check.validate import Validator, mapping_of, read_ndjson

    cls = load_spec_class("etcd_raft")
    mapping = mapping_of(cls, None)
    assert mapping is not None and mapping.constants is not None and mapping.prepare is not None
    events = read_ndjson(trace)
    spec = cls(**mapping.constants(trace, events))
    _init, kept = mapping.prepare(spec, events)
    checked = [
        (e.line, e.name in PROGRESS_ONLY)
        for e in kept
        if e.name not in UNCHECKED and (upto is None or e.line < upto)
    ]
    lines = trace.read_text().splitlines()
    total, caught, misses = 0, 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for line, progress_only in checked:
            obj = json.loads(lines[line - 1])
            if progress_only:
                obj["event"]["prop"]["next"] += 1
            else:
                obj["event"]["state"]["term"] += 1
            bad = Path(tmp) / trace.name
            bad.write_text("\n".join([*lines[: line - 1], json.dumps(obj), *lines[line:]]) + "\n")
            got = read_ndjson(bad)
            model = CompiledSpec(
                cls(**mapping.constants(bad, got)), properties=["none"], symmetry=False
            )
            out = Validator(model, mapping).run(got)
            total += 1
            if not out.ok and out.failed is not None and out.failed.line == line:
                caught += 1
            else:
                misses.append(
                    f"line {line}: "
                    + (
                        "accepted"
                        if out.ok
                        else f"rejected at {out.failed.line if out.failed else '?'}"
                    )
                )
    return total, caught, misses


def main(argv: list[str]) -> None:
    """Print the trace table (and the tamper sweep) for the traces named, or all."""
    base = os.environ.get("SPECULA_CASE_STUDIES")
    if not base or not (Path(base) / SCENARIO).is_dir():
        print("bench.etcd_traces: skipped (set SPECULA_CASE_STUDIES to the case studies' folder)")
        return
    folder = Path(base) / SCENARIO
    traces = sorted((folder / "harness" / "traces").glob("*.ndjson"))
    if argv:
        traces = [t for t in traces if t.stem in argv]
    classpath = os.environ.get("TLC_CLASSPATH")
    work = Path(tempfile.mkdtemp(prefix="etcd-traces-"))
    for f in (folder / "spec").glob("*.tla"):
        shutil.copy(f, work)
    shutil.copy(folder / "spec" / "Traceetcdraft.cfg", work)
    print(
        "| trace | events | TLC | TLC s | mcheck | mcheck s"
        " | tampered events rejected at their line |"
    )
    print("|---|---:|---|---:|---|---:|---:|")
    sums: dict[str, Any] = {"tlc": 0.0, "mcheck": 0.0, "events": 0, "caught": 0}
    for trace in traces:
        events = sum(1 for line in trace.read_text().splitlines() if '"tag":"trace"' in line)
        tlc = tlc_verdict(classpath, work, trace) if classpath else (0.0, "not run", "")
        mc = mcheck_verdict(trace)
        total, caught, misses = sweep(trace, int(mc[2]) if mc[2] else None)
        sums["tlc"] += tlc[0]
        sums["mcheck"] += mc[0]
        sums["events"] += total
        sums["caught"] += caught
        tlc_text = tlc[1] + (f" ({tlc[2]})" if tlc[2] else "")
        mc_text = mc[1] + (f" (line {mc[2]})" if mc[2] else "")
        print(
            f"| {trace.stem} | {events} | {tlc_text} | {tlc[0]:.2f} | {mc_text} | {mc[0]:.2f} "
            f"| {caught}/{total} |" + (f" misses: {'; '.join(misses[:3])}" if misses else "")
        )
    print(
        f"| all {len(traces)} | | | {sums['tlc']:.1f} | | {sums['mcheck']:.1f} "
        f"| {sums['caught']}/{sums['events']} |"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
