"""--cluster: a dask.distributed LocalCluster of 2 processes on 127.0.0.1 gives exactly
one process's figures and counterexample; a worker lost mid-run makes the run
incomplete; options that cannot work there are refused."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.explore.result import Verdict
from tests.seed_helpers import figures
from tests.watch import Watched

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
MCHECK = [sys.executable, "-m", "checker"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """One LocalCluster for the module (starting one takes about two seconds)."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as lc:
        yield lc


def _model(spec: str, variant: str | None = None, properties: Any = None, **c: Any) -> Any:
    return CompiledSpec(load_spec_class(spec)(variant=variant, **c), properties=properties)


@pytest.mark.parametrize("symmetry", [False, True])
def test_cluster_equals_one_process(cluster: Any, symmetry: bool) -> None:
    model = _model("raft", Server="2")
    alone = check(model, Options(symmetry=symmetry))
    spread = check(model, Options(symmetry=symmetry, cluster=cluster.scheduler_address))
    assert alone.verdict is Verdict.OK
    # TLC's counts for 2 servers: 1,760 states, 889 symmetric orbits (the gate's rows).
    assert alone.stats.distinct == (889 if symmetry else 1760)
    assert figures(spread, per_action=True) == figures(alone, per_action=True)


def test_cluster_finds_the_same_counterexample(cluster: Any) -> None:
    model = _model("ratis_heartbeat_match_index", "bug", ["MatchIndexSound"])
    alone = check(model, Options())
    spread = check(model, Options(cluster=cluster.scheduler_address))
    assert alone.verdict is Verdict.VIOLATION and alone.trace is not None
    assert spread.trace is not None
    assert figures(spread, per_action=True) == figures(alone, per_action=True)
    assert spread.trace.states() == alone.trace.states()


@pytest.mark.parametrize("variant", ["bug", "fix"])
def test_cluster_liveness_equals_one_process(cluster: Any, variant: str) -> None:
    """Issue 31: the actors build the behaviour graph; same verdict, graph and lasso."""
    model = _model(
        "ratis_heartbeat_match_index",
        variant,
        ["FollowersEventuallyMatchLeader"],
        MaxLogLen="2",
        MaxMsgs="1",
    )
    # Unreduced: one process checks liveness under symmetry (the quotient graph,
    # unfolded), which the actors do not build (tests/test_liveness_symmetry.py).
    alone = check(model, Options(symmetry=False))
    spread = check(model, Options(symmetry=False, cluster=cluster.scheduler_address))
    assert alone.verdict is (Verdict.VIOLATION if variant == "bug" else Verdict.OK)
    assert figures(spread, per_action=True) == figures(alone, per_action=True)
    assert spread.graph == alone.graph and alone.graph[0] > 0
    if alone.trace is not None:
        assert spread.trace is not None and spread.trace.loop == alone.trace.loop
        assert spread.trace.states() == alone.trace.states()


def test_cluster_liveness_under_symmetry_equals_one_process(cluster: Any) -> None:
    """The actors build the quotient graph (each edge's renaming, each state's lanes):
    the run unfolds it into the graph one process gets, with the same lasso."""
    model = _model(
        "ratis_heartbeat_match_index", "bug", ["FollowersEventuallyMatchLeader"], MaxMsgs="1"
    )
    alone = check(model, Options())
    spread = check(model, Options(cluster=cluster.scheduler_address))
    assert alone.verdict is Verdict.VIOLATION and alone.symmetry and spread.symmetry
    assert figures(spread, per_action=True) == figures(alone, per_action=True)
    assert spread.graph == alone.graph == (7322, 12616)
    assert alone.trace is not None and spread.trace is not None
    assert spread.trace.loop == alone.trace.loop
    assert spread.trace.states() == alone.trace.states()


def test_cluster_limits_are_incomplete(cluster: Any) -> None:
    model = _model("raft", Server="2")
    alone = check(model, Options(symmetry=False, max_states=500))
    spread = check(
        model, Options(symmetry=False, max_states=500, cluster=cluster.scheduler_address)
    )
    assert spread.verdict is Verdict.INCOMPLETE and spread.reason == "max-states 500 reached"
    assert figures(spread, per_action=True) == figures(alone, per_action=True)


def test_cli_local_cluster() -> None:
    proc = subprocess.run(
        [*MCHECK, "run", "raft", "--const", "Server=2", "--no-symmetry", "--cluster", "local:2",
         "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (data["distinct_states"], data["depth"]) == (1760, 28)


def test_a_lost_worker_makes_the_run_incomplete(cluster: Any) -> None:
    with distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
    run = Watched(
        "run", "raft", "--const", "MaxLogLen=0", "--no-symmetry",
        "--cluster", cluster.scheduler_address,
    )  # fmt: skip
    run.progress()
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    code, out, err = run.finish(timeout=120)
    assert code == 3, (out, err)
    assert "INCOMPLETE (a cluster worker was lost" in out, out
    assert "Traceback" not in err, err


def test_a_lost_scheduler_makes_the_run_incomplete(tmp_path: Path) -> None:
    """The scheduler killed mid-run: exit 3 with one reason, none of dask's
    tracebacks (the client logs its reconnection attempts)."""
    port = _free_port()
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", str(port), "--no-dashboard"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    address = f"tcp://127.0.0.1:{port}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
         "--nworkers", "2", "--no-dashboard"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        run = Watched(
            "run", "raft", "--const", "MaxLogLen=1", "--no-symmetry", "--cluster", address
        )
        run.progress()
        scheduler.kill()
        code, out, err = run.finish(timeout=120)
    finally:
        scheduler.kill()
        worker.kill()
        scheduler.wait()
        worker.wait()
    assert code == 3, (out, err)
    assert f"the dask scheduler {address} was lost" in out, out
    assert "Traceback" not in err and "ERROR" not in err, err


def test_a_worker_killed_while_the_cluster_starts_is_incomplete() -> None:
    """local:2 with a worker process killed as soon as it appears: exit 3, one
    reason (dask's "Nanny failed to start" was an internal error)."""
    run = Watched("run", "raft", "--const", "MaxLogLen=0", "--no-symmetry", "--cluster", "local:2")
    killed = None
    end = time.monotonic() + 120
    while killed is None and time.monotonic() < end and run.proc.poll() is None:
        for pid in _child_pids(run.pid):
            with contextlib.suppress(OSError):
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                    break
        time.sleep(0.01)
    assert killed is not None
    code, out, err = run.finish(timeout=120)
    assert code == 3, (out, err)
    assert "INCOMPLETE (the dask cluster local:2 did not start" in out or "was lost" in out, out
    assert "Traceback" not in err, err


def _child_pids(pid: int) -> list[int]:
    proc = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(x) for x in proc.stdout.split()]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "2"], "drop --workers"),
        (["--strategy", "dfs"], "breadth-first only"),
        (["--checkpoint", "/nonexistent/ck"], "--checkpoint works with one process"),
        (["--cluster", "not a url"], "a scheduler address such as tcp://10.0.0.1:8786"),
        ([], "needs a worker count"),
    ],
)
def test_cluster_refuses_what_cannot_work(args: list[str], message: str) -> None:
    where = "local:0" if not args else "local:2"
    proc = subprocess.run(
        [*MCHECK, "run", "ratis_heartbeat_match_index", "--cluster", where, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize(
    ("variant", "traces"),
    [("bug", None), ("fix", 100)],  # a violation found; a clean hunt of 100 behaviours
)
def test_simulate_on_a_cluster_equals_one_process(
    cluster: Any, variant: str, traces: int | None
) -> None:
    """Issue 32: behaviours as dask tasks; the same violation and the same figures."""
    from checker.simulate import SimulationOptions, simulate

    model = _model("ratis_heartbeat_match_index", variant, MaxMsgs="1")
    base = SimulationOptions(seed=3, depth=40, traces=traces, timeout=120)
    alone = simulate(model, base)
    spread = simulate(model, replace(base, cluster=cluster.scheduler_address))
    assert (spread.verdict, spread.violated) == (alone.verdict, alone.violated)
    assert alone.simulation is not None and spread.simulation is not None
    a, s = alone.simulation, spread.simulation
    assert (s.behaviours, s.states, s.generated, s.distinct, s.action_taken) == (
        a.behaviours,
        a.states,
        a.generated,
        a.distinct,
        a.action_taken,
    )
    if variant == "bug":
        assert alone.trace is not None and spread.trace is not None
        assert spread.trace.states() == alone.trace.states()
    else:
        assert a.behaviours == 100


def test_simulate_refuses_workers_with_a_cluster() -> None:
    proc = subprocess.run(
        [*MCHECK, "simulate", "raft", "--cluster", "local:2", "--workers", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "drop --workers" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
