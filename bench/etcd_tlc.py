"""etcd_raft against TLC on Specula's own model (optional: needs TLC and the case study).

``specs/etcd_raft.py`` ports Specula's etcdraft.tla (case study etcd-raft, scenario
snapshot).  This runs TLC on the case study's MCetcdraft.tla, bounded by our wrapper
``bench/etcd/MCetcdraftBounded.tla`` (MCetcdraft's Next has actions with no counter,
so its state space is unbounded; Specula runs it in simulation), and mcheck on the
port, with the same constants, and prints both counts (they must agree)::

    TLC_CLASSPATH=/path/tla2tools.jar:/path/CommunityModules.jar \
    SPECULA_CASE_STUDIES=/path/to/specula-case-studies python -m bench.etcd_tlc [NAME...]

The case study's files are copied into a temporary folder, never into this project.
Each configuration starts from MCetcdraft.cfg with the limits below replaced and the
table's twenty invariants only; ``--full NAME...`` keeps the cfg's INVARIANTS and
PROPERTIES as they stand and compares verdicts (mcheck checks all of its own),
``--bugs [VARIANT...]`` runs the known bugs on both sides (etcdraft.tla with the
fix reverted in a temporary copy, and the invariant Specula's reproduction names) and
compares the shortest counterexamples' lengths, and ``--speed [ROUNDS]`` is the speed
row of ``make bench``.
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
from pathlib import Path
from typing import Any

from bench.tlc import run_tlc_model

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = "etcd-raft/scenarios/snapshot/spec"

#: Every limit the port refuses unless 0, and the port's defaults.
BASE = {
    "ReconfigurationLimit": 0, "MaxTermLimit": 2, "MaxTimeoutLimit": 1, "RequestLimit": 0,
    "RestartLimit": 0, "DropLimit": 0, "DuplicateLimit": 0, "StepDownLimit": 0,
    "HeartbeatLimit": 0, "SnapshotLimit": 0, "CompactLimit": 0, "ConfChangeLimit": 0,
    "ReportUnreachableLimit": 0, "MaxInflightMsgs": 2, "MaxMsgBufferLimit": 2,
    "MaxPendingMsgLimit": 2,
}  # fmt: skip

#: name -> (constants over BASE, servers, symmetry, MaxLogLength)
CONFIGS: dict[str, tuple[dict[str, int], int, bool, int]] = {
    "defaults": ({}, 2, False, 3),
    "one request": ({"RequestLimit": 1}, 2, False, 3),
    "one request, log 4": ({"RequestLimit": 1}, 2, False, 4),
    "heartbeat and step-down": ({"HeartbeatLimit": 1, "StepDownLimit": 1}, 2, False, 3),
    "two timeouts": ({"MaxTimeoutLimit": 2, "MaxTermLimit": 3}, 2, False, 3),
    "buffers of 3": ({"MaxMsgBufferLimit": 3, "MaxPendingMsgLimit": 3}, 2, False, 3),
    "three servers": ({}, 3, False, 3),
    "request and heartbeat, symmetry": ({"RequestLimit": 1, "HeartbeatLimit": 1}, 2, True, 3),
    "one restart": ({"RestartLimit": 1}, 2, False, 3),
    "one request, one compaction, log 4": ({"RequestLimit": 1, "CompactLimit": 1}, 2, False, 4),
    "one drop": ({"DropLimit": 1}, 2, False, 3),
    "one duplicate": ({"DuplicateLimit": 1}, 2, False, 3),
    "one snapshot, one compaction": ({"SnapshotLimit": 1, "CompactLimit": 1}, 2, False, 3),
    "request, snapshot, compaction, symmetry": (
        {"RequestLimit": 1, "SnapshotLimit": 1, "CompactLimit": 1},
        2,
        True,
        3,
    ),
    "report unreachable": ({"RequestLimit": 1, "ReportUnreachableLimit": 1}, 2, False, 3),
    "apply, request, snapshot, compaction": (
        {"ApplyCommitted": 1, "RequestLimit": 1, "SnapshotLimit": 1, "CompactLimit": 1},
        2,
        False,
        3,
    ),
    "one configuration change": ({"ConfChangeLimit": 1}, 2, False, 3),
    "one configuration change, log 4": ({"ConfChangeLimit": 1}, 2, False, 4),
    "one change, three servers, two bootstrapped": (
        {"ConfChangeLimit": 1, "InitServer": 2, "RequestLimit": 1},
        3,
        False,
        4,
    ),
    "two timeouts, one request, log 4": (
        {"MaxTimeoutLimit": 2, "MaxTermLimit": 3, "RequestLimit": 1},
        2,
        False,
        4,
    ),
    "one partition": ({"PartitionLimit": 1}, 2, False, 3),
    "request, restart, drop, duplicate": (
        {"RequestLimit": 1, "RestartLimit": 1, "DropLimit": 1, "DuplicateLimit": 1},
        2,
        False,
        3,
    ),
}

#: The invariants the agreement table and the speed row check, on both sides (the
#: first twenty of MCetcdraft.cfg the port had; ``--full`` checks the whole cfg).
INVARIANTS = (
    "LogInv",
    "MoreThanOneLeaderInv",
    "LogMatchingInv",
    "QuorumLogInv",
    "MoreUpToDateCorrectInv",
    "LeaderCompletenessInv",
    "CommittedIsDurableInv",
    "ProbeLimitInv",
    "ReplicatePauseInv",
    "SnapshotInflightsInv",
    "InflightsLogIndexInv",
    "InflightsMatchIndexInv",
    "InflightsInv",
    "NoPendingSnapshotInv",
    "LeaderSelfReplicateInv",
    "MatchIndexLessThanLogInv",
    "MatchIndexNonNegativeInv",
    "MatchIndexLessThanNextInv",
    "MsgAppFlowPausedConsistencyInv",
    "AppendEntriesPrevLogTermValidInv",
)


def config_text(
    base_cfg: str, consts: dict[str, int], servers: int, sym: bool, log: int, full: bool = False
) -> str:
    """MCetcdraft.cfg with our constants, servers, symmetry, bound and invariants
    (``ApplyCommitted`` is ours: it selects the wrapper's spec with ApplyEntries);
    ``full`` keeps every INVARIANT and PROPERTY of the cfg."""
    consts = dict(consts)
    apply = consts.pop("ApplyCommitted", 0)
    names = ", ".join(f"s{k}" for k in range(1, servers + 1))
    init = ", ".join(f"s{k}" for k in range(1, consts.pop("InitServer", servers) + 1))
    cfg = re.sub(r"\n(\s*)InitServer\s*=\s*\{[^}]*\}", rf"\n\1InitServer = {{{init}}}", base_cfg)
    cfg = re.sub(r"\n(\s*)Server\s*=\s*\{[^}]*\}", rf"\n\1Server = {{{names}}}", cfg)
    cfg = re.sub(r"\n(\s*)Value\s*=\s*\{[^}]*\}", r"\n\1Value = {v1}", cfg)
    for name, value in {**BASE, **consts}.items():
        cfg, n = re.subn(rf"\n(\s*){name}\s*=\s*[^\n\\]*", rf"\n\1{name} = {value}", cfg, count=1)
        if n != 1:
            raise SystemExit(f"bench.etcd_tlc: MCetcdraft.cfg has no constant {name}")
    cfg = cfg.replace("CONSTANTS", f"CONSTANTS\n    MaxLogLength = {log}", 1)
    if apply:
        cfg = cfg.replace("SPECIFICATION mc_etcdSpec\n", "SPECIFICATION mc_etcdSpecApply\n", 1)
    if not sym:
        cfg = cfg.replace("SYMMETRY Symmetry", "")
    cfg = cfg.replace("CONSTRAINT", "CONSTRAINT\n    LogLengthConstraint", 1)
    if full:
        return cfg
    cut = cfg.index("INVARIANTS")
    return cfg[:cut] + "INVARIANTS\n" + "".join(f"    {i}\n" for i in INVARIANTS)


def run_mcheck(
    consts: dict[str, int],
    servers: int,
    sym: bool,
    log: int,
    workers: int = 1,
    full: bool = False,
    invariants: tuple[str, ...] = INVARIANTS,
    variant: str = "default",
) -> dict[str, float]:
    """The port's counts and seconds for one configuration (a command of its own, in
    a session of its own; ``seconds`` is the command's wall time, start included, as
    TLC's is)."""
    args = [f"--const={k}={v}" for k, v in {"InitServer": servers, **consts}.items()]
    args += [f"--const=MaxLogLength={log}", f"--const=Server={servers}"]
    args += [f"--variant={variant}"]
    # TLC checks these only, or (full) every invariant and property of the cfg.
    args += ["--invariant=all"] if full else [f"--invariant={name}" for name in invariants]
    if not sym:
        args.append("--no-symmetry")
    if workers > 1:
        args.append(f"--workers={workers}")
    cmd = [sys.executable, "-m", "checker", "run", "etcd_raft", *args, "--json"]
    start = time.monotonic()
    out = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, check=False, start_new_session=True
    ).stdout
    took = time.monotonic() - start
    d = json.loads(out.strip().splitlines()[-1])
    return {
        "distinct": d["distinct_states"],
        "depth": d["depth"],
        "seconds": took,
        "property": d["property"] or "",
        "length": d["trace_length"] or 0,
    }


def _copy_model(spec: Path, work: Path) -> str:
    """Copy Specula's modules and our bounded wrapper into ``work``; MCetcdraft.cfg's
    text."""
    for f in ("etcdraft.tla", "MCetcdraft.tla"):
        shutil.copy(spec / f, work / f)
    shutil.copy(ROOT / "bench" / "etcd" / "MCetcdraftBounded.tla", work)
    return (spec / "MCetcdraft.cfg").read_text()


#: The speed row of ``make bench``: the MC model at a bound of a few million states.
SPEED = "two timeouts, one request, log 4"


def speed(rounds: int = 1) -> None:
    """``make bench``'s etcd row: the MC model at SPEED's bound, TLC with one and two
    workers beside mcheck in one process and with ``--workers 2`` (medians of
    ``rounds``, each command in a session of its own); skipped without TLC or the
    case study."""
    classpath = os.environ.get("TLC_CLASSPATH")
    study = os.environ.get("SPECULA_CASE_STUDIES")
    if not classpath or not study or not (Path(study) / SPEC_DIR).is_dir():
        print("etcd/raft speed row: skipped (set TLC_CLASSPATH and SPECULA_CASE_STUDIES)")
        return
    consts, servers, sym, log = CONFIGS[SPEED]
    with tempfile.TemporaryDirectory(prefix="etcd-tlc-") as tmp:
        work = Path(tmp)
        base_cfg = _copy_model(Path(study) / SPEC_DIR, work)
        (work / "speed.cfg").write_text(config_text(base_cfg, consts, servers, sym, log))
        runs: dict[str, Callable[[], dict[str, float]]] = {
            "TLC -workers 1": lambda: run_tlc_model(
                classpath, work, "MCetcdraftBounded", "speed.cfg"
            ),
            "TLC -workers 2": lambda: run_tlc_model(
                classpath, work, "MCetcdraftBounded", "speed.cfg", workers=2
            ),
            "mcheck, one process": lambda: run_mcheck(consts, servers, sym, log),
            "mcheck --workers 2": lambda: run_mcheck(consts, servers, sym, log, workers=2),
        }
        got = {name: [run() for _ in range(rounds)] for name, run in runs.items()}
    base = statistics.median(r["seconds"] for r in got["TLC -workers 1"])
    print(f"etcd/raft MC model, {SPEED} ({servers} servers; medians of {rounds}):")
    print("| run | distinct / depth | s | states/s | against TLC -workers 1 |")
    print("|---|---:|---:|---:|---:|")
    for name, results in got.items():
        took = statistics.median(r["seconds"] for r in results)
        r = results[0]
        print(
            f"| {name} | {r['distinct']:,.0f} / {r['depth']:.0f} | {took:.1f} "
            f"| {r['distinct'] / took:,.0f} | {base / took:.2f}x |"
        )


def main(argv: list[str]) -> None:
    """Run the configurations named (default: all) and print the table."""
    classpath = os.environ.get("TLC_CLASSPATH")
    study = os.environ.get("SPECULA_CASE_STUDIES")
    if not classpath or not study:
        raise SystemExit("bench.etcd_tlc: set TLC_CLASSPATH and SPECULA_CASE_STUDIES")
    names = argv or list(CONFIGS)
    with tempfile.TemporaryDirectory(prefix="etcd-tlc-") as tmp:
        work = Path(tmp)
        base_cfg = _copy_model(Path(study) / SPEC_DIR, work)
        print("| configuration | TLC distinct / depth | TLC s | mcheck distinct / depth | s |")
        print("|---|---:|---:|---:|---:|")
        for name in names:
            consts, servers, sym, log = CONFIGS[name]
            cfg = f"{re.sub(r'[^a-z0-9]+', '_', name)}.cfg"
            (work / cfg).write_text(config_text(base_cfg, consts, servers, sym, log))
            tlc = run_tlc_model(classpath, work, "MCetcdraftBounded", cfg)
            mc = run_mcheck(consts, servers, sym, log)
            same = (tlc["distinct"], tlc["depth"]) == (mc["distinct"], mc["depth"])
            print(
                f"| {name} | {tlc['distinct']:,.0f} / {tlc['depth']:.0f} | {tlc['seconds']:.1f} "
                f"| {mc['distinct']:,.0f} / {mc['depth']:.0f} | {mc['seconds']:.1f} |"
                + ("" if same else " DIFFERENT")
            )


#: TLC's verdict line on a violation ("Invariant X is violated." / "Action property
#: X is violated.", "Temporal properties were violated.") and its trace's last state.
_TLC_VIOLATED = re.compile(r"Error: (?:Invariant|Action property) (\w+) is violated")
_TLC_STATE = re.compile(r"^State (\d+):", re.M)


def full(names: list[str]) -> None:
    """Every INVARIANT and PROPERTY of MCetcdraft.cfg on both sides: the verdict (the
    property violated and the counterexample's length, or the counts)."""
    classpath = os.environ.get("TLC_CLASSPATH")
    study = os.environ.get("SPECULA_CASE_STUDIES")
    if not classpath or not study:
        raise SystemExit("bench.etcd_tlc: set TLC_CLASSPATH and SPECULA_CASE_STUDIES")
    with tempfile.TemporaryDirectory(prefix="etcd-tlc-") as tmp:
        work = Path(tmp)
        base_cfg = _copy_model(Path(study) / SPEC_DIR, work)
        print("| configuration | TLC | s | mcheck | s |")
        print("|---|---|---:|---|---:|")
        for name in names or list(CONFIGS):
            consts, servers, sym, log = CONFIGS[name]
            cfg = f"full_{re.sub(r'[^a-z0-9]+', '_', name)}.cfg"
            (work / cfg).write_text(config_text(base_cfg, consts, servers, sym, log, full=True))
            tlc = _tlc_verdict(classpath, work, cfg)
            mc = run_mcheck(consts, servers, sym, log, full=True)
            mine = (
                f"{mc['property']} in {mc['length']:.0f} actions"
                if mc["property"]
                else f"holds, {mc['distinct']:,.0f} / {mc['depth']:.0f}"
            )
            print(
                f"| {name} | {tlc['verdict']} | {tlc['seconds']:.1f} | {mine} "
                f"| {mc['seconds']:.1f} |"
            )


def _tlc_verdict(
    classpath: str, work: Path, cfg: str, module: str = "MCetcdraftBounded"
) -> dict[str, str | float]:
    """TLC on ``module`` under ``cfg``: the property it reports violated with its
    trace's length in actions, or its counts."""
    from bench.tlc import _TLC_COUNTS, _TLC_DEPTH, _timed, _tlc

    meta = Path(tempfile.mkdtemp(prefix="states-", dir=work))
    dump = meta / "trace.json"
    cmd = _tlc(classpath, meta, module, cfg, "-dumpTrace", "json", str(dump))
    took, out = _timed(cmd, work, ok=(0, 12, 13))
    steps = _dumped_actions(dump)
    shutil.rmtree(meta, ignore_errors=True)
    bad = _TLC_VIOLATED.search(out)
    if bad:
        # The length comes from TLC's dump, not from its printed "State N:" lines:
        # TLC rebuilds the last step by evaluating every successor of the state
        # before it, and where one of those is an evaluation error it prints the
        # trace without its last state and writes no dump.
        verdict = (
            f"{bad.group(1)} in {steps} actions"
            if steps is not None
            else f"{bad.group(1)}, trace not rebuilt (printed {_printed_states(out)} states)"
        )
    else:
        counts, depth = _TLC_COUNTS.search(out), _TLC_DEPTH.search(out)
        if counts is None or depth is None:
            raise SystemExit(f"bench.etcd_tlc: TLC printed no verdict:\n{out[-2000:]}")
        verdict = f"holds, {counts.group(2)} / {depth.group(1)}"
    return {"verdict": verdict, "seconds": took}


def _dumped_actions(dump: Path) -> int | None:
    """The number of actions in TLC's ``-dumpTrace json`` counterexample, or None
    when TLC wrote none."""
    if not dump.is_file():
        return None
    return len(json.loads(dump.read_text())["counterexample"]["action"])


def _printed_states(out: str) -> int:
    """How many states TLC printed of its counterexample."""
    return max((int(n) for n in _TLC_STATE.findall(out)), default=0)


#: The known bugs (the three of issue 45, and bd3c759 of Specula's reproduce folder):
#: mcheck variant -> (the invariant Specula's reproduction names, and the revert as
#: (etcdraft.tla's text, what replaces it)).  Each runs at its story's bounds in
#: specs/etcd_raft.py, so the cross-check follows the stories; 7280's bug is the spec
#: as it stands, at the bounds in BUG_7280.
BUGS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "revert_76f1249": (
        "AppendEntriesPrevLogTermValidInv",
        (
            ("/\\ (range[1] = range[2] \\/ range[1] >= log[i].offset)", "/\\ TRUE"),
            (
                "/\\ (range[1] = 1 \\/ range[1] - 1 = log[i].snapshotIndex"
                " \\/ range[1] - 1 >= log[i].offset)",
                "/\\ TRUE",
            ),
            # Specula's reproduction sends no entries from a compacted range: as
            # SubSeq it is an evaluation error, which TLC meets rebuilding the last
            # step of its trace and then prints the trace without it.
            (
                "entries == SubSeq(log[i].entries, range[1] - log[i].offset + 1,"
                " lastEntry - log[i].offset + 1)",
                "entries == IF range[1] < log[i].offset THEN <<>> ELSE"
                " SubSeq(log[i].entries, range[1] - log[i].offset + 1,"
                " lastEntry - log[i].offset + 1)",
            ),
        ),
    ),
    "revert_124": (
        "SnapshotTransitionCorrectInv",
        (
            (
                "\\/ newMatchIndex + 1 >= pendingSnapshot[i][j]",
                "\\/ newMatchIndex = pendingSnapshot[i][j]",
            ),
        ),
    ),
    "revert_bd3c759": (
        "SinglePendingLeaveJointInv",
        (
            ("/\\ pendingConfChangeIndex[i] = 0  \\* Previous config change has been applied",
             "/\\ TRUE"),
            (
                "ConfigEntry)\n    /\\ pendingConfChangeIndex' = [pendingConfChangeIndex EXCEPT"
                " ![i] = LastIndex(log'[i])]",
                "ConfigEntry)\n    /\\ UNCHANGED pendingConfChangeIndex",
            ),
        ),
    ),
    "default": ("NoConfigGapDuringElectionInv", ()),
}  # fmt: skip

#: etcd#7280's bounds (the default variant has no story): 2 servers, one change, two
#: timeouts, one heartbeat, one message pending and one append in flight.
BUG_7280: dict[str, Any] = {
    "ConfChangeLimit": 1, "MaxTimeoutLimit": 2, "MaxTermLimit": 3, "HeartbeatLimit": 1,
    "MaxPendingMsgLimit": 1, "MaxInflightMsgs": 1,
}  # fmt: skip


def _bug_bounds(variant: str) -> tuple[dict[str, int], int, bool, int]:
    """(constants over BASE, servers, symmetry, MaxLogLength) for ``variant``: its
    story's constants in specs/etcd_raft.py (BUG_7280 for ``default``), on the port's
    defaults."""
    from checker.authoring.loader import load_spec_class

    cls = load_spec_class("etcd_raft")
    told = cls.story_for(variant)
    consts = {**cls.constants, **(told.constants if told else BUG_7280)}
    servers = len(consts.pop("Server"))
    log = consts.pop("MaxLogLength")
    given = {k: int(v) for k, v in consts.items() if isinstance(v, (bool, int))}
    ours = {k: v for k, v in given.items() if k in BASE or k in ("InitServer", "ApplyCommitted")}
    return ours, servers, bool(cls.symmetry), log


def _reproduction_definition(study: Path, name: str) -> str:
    """The TLA+ definition of invariant ``name`` where etcdraft.tla itself no longer
    has it, as Specula's bug reproductions give it (``spec/bugs/reproduce/*/
    etcdraft.tla``): read from the case study at run time, never copied into this
    project; empty when etcdraft.tla defines it."""
    if re.search(rf"^{name} ==", (study / SPEC_DIR / "etcdraft.tla").read_text(), re.M):
        return ""
    for f in sorted((study / SPEC_DIR / "bugs" / "reproduce").glob("*/etcdraft.tla")):
        m = re.search(rf"^{name} ==\n(?:[ \t]+\S.*\n)+", f.read_text(), re.M)
        if m:
            return m.group(0)
    raise SystemExit(f"bench.etcd_tlc: no reproduction defines {name}")


def bugs(names: list[str]) -> None:
    """The known bugs on both sides: TLC on etcdraft.tla with the fix reverted
    (a text change of a temporary copy, refused unless it applies exactly once),
    checking the reproduction's invariant; mcheck's variant with the same constants.
    Breadth-first, so both counterexamples are shortest and must be equally long."""
    classpath = os.environ.get("TLC_CLASSPATH")
    study = os.environ.get("SPECULA_CASE_STUDIES")
    if not classpath or not study:
        raise SystemExit("bench.etcd_tlc: set TLC_CLASSPATH and SPECULA_CASE_STUDIES")
    print("| bug variant | invariant | TLC | s | mcheck | s |")
    print("|---|---|---|---:|---|---:|")
    for variant in names or list(BUGS):
        inv, revert = BUGS[variant]
        consts, servers, sym, log = _bug_bounds(variant)
        with tempfile.TemporaryDirectory(prefix="etcd-bug-") as tmp:
            work = Path(tmp)
            base_cfg = _copy_model(Path(study) / SPEC_DIR, work)
            spec = (work / "etcdraft.tla").read_text()
            for old, new in revert:
                if spec.count(old) != 1:
                    raise SystemExit(f"bench.etcd_tlc: etcdraft.tla has {old!r} not once")
                spec = spec.replace(old, new)
            (work / "etcdraft.tla").write_text(spec)
            (work / "MCetcdraftBugs.tla").write_text(
                "---- MODULE MCetcdraftBugs ----\nEXTENDS MCetcdraftBounded\n\n"
                + _reproduction_definition(Path(study), inv)
                + "\n====\n"
            )
            cfg = config_text(base_cfg, consts, servers, sym, log)
            cfg = cfg[: cfg.index("INVARIANTS")] + f"INVARIANTS\n    {inv}\n"
            (work / "bug.cfg").write_text(cfg)
            tlc = _tlc_verdict(classpath, work, "bug.cfg", module="MCetcdraftBugs")
        mc = run_mcheck(consts, servers, sym, log, invariants=(inv,), variant=variant)
        mine = (
            f"{mc['property']} in {mc['length']:.0f} actions"
            if mc["property"]
            else f"holds, {mc['distinct']:,.0f} / {mc['depth']:.0f}"
        )
        print(
            f"| {variant} | {inv} | {tlc['verdict']} | {tlc['seconds']:.1f} | {mine} "
            f"| {mc['seconds']:.1f} |"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--bugs"]:
        bugs(sys.argv[2:])
    elif sys.argv[1:2] == ["--speed"]:
        speed(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    elif sys.argv[1:2] == ["--full"]:
        full(sys.argv[2:])
    else:
        main(sys.argv[1:])
