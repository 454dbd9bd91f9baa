"""Faults end cleanly: a killed worker, memory exhaustion, SIGTERM, Ctrl-C anywhere.

Each case runs ``mcheck`` in a process of its own and does to it what the OOM
killer, a user or CI does; the run must end within seconds, with exit 3
("incomplete", never a pass), a one-line reason, the figures so far, and no process
left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.watch import Watched

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MCHECK = [sys.executable, "-m", "checker"]


def _as_from_a_terminal() -> None:
    # Started as a background job of a non-interactive shell (a CI runner's "cmd &"),
    # the test process and its children inherit SIGINT ignored, and mcheck rightly
    # keeps that (as nohup'd jobs expect): give it the disposition a terminal gives.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*args: str, **kw: Any) -> subprocess.Popen[str]:
    """A run whose output is read at its end (for runs not signalled mid-way)."""
    return subprocess.Popen(
        [*MCHECK, *args],
        cwd=kw.pop("cwd", ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
        **kw,
    )


def _children(pid: int) -> list[int]:
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    except FileNotFoundError:  # pragma: no cover - procps is on every CI image
        pytest.skip("pgrep not available")
    return [int(x) for x in out.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _wait_for(cond: Any, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return False


def _json(out: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return data


LONG_RUN = ("run", "raft", "--const", "MaxLogLen=0", "--no-symmetry", "--json")


def test_a_killed_worker_stops_the_run_within_seconds() -> None:
    run = Watched(*LONG_RUN, "--workers", "2")
    run.progress()  # well into the exploration
    workers = _children(run.pid)
    assert len(workers) >= 2
    os.kill(workers[0], signal.SIGKILL)  # as the OOM killer would
    code, out, err = run.finish(timeout=60)
    assert code == 3, err
    d = _json(out)
    assert d["result"] == "incomplete"
    assert "worker" in d["reason"] and "died" in d["reason"] and "SIGKILL" in d["reason"]
    assert d["distinct_states"] > 0
    assert _wait_for(lambda: not any(_alive(p) for p in workers), 5)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_is_an_interruption(workers: str) -> None:
    run = Watched(*LONG_RUN, "--workers", workers)
    run.progress()
    children = _children(run.pid)
    run.signal(signal.SIGTERM)
    code, out, err = run.finish(timeout=60)
    assert code == 3, err
    d = _json(out)
    assert (d["result"], d["reason"]) == ("incomplete", "interrupted")
    assert d["distinct_states"] > 0
    assert _wait_for(lambda: not any(_alive(p) for p in children), 5)


def test_sigterm_while_mcheck_still_imports_is_exit_3(tmp_path: Path) -> None:
    """A SIGTERM (or Ctrl-C) before any command runs: one line, exit 3, not signal 15.
    A stand-in for numpy (which mcheck imports right after arming its handlers) says
    when the import is under way and holds it there."""
    fake = tmp_path / "numpy"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "import sys, time\nprint('importing numpy', file=sys.stderr, flush=True)\ntime.sleep(60)\n"
    )
    for sig in (signal.SIGTERM, signal.SIGINT):
        run = Watched("run", "die_hard", env={"PYTHONPATH": str(tmp_path)})
        run.wait_for("importing numpy")
        run.signal(sig)
        code, _out, err = run.finish(timeout=30)
        assert code == 3, (sig, code, err)
        assert err.strip().splitlines()[-1] == "mcheck: interrupted before a verdict: incomplete"
        assert "Traceback" not in err


def test_a_library_caller_keeps_its_own_signal_handlers() -> None:
    """Importing mcheck in a program (not the command) changes no signal handler."""
    code = (
        "import signal\n"
        "def handlers():\n"
        "    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)\n"
        "before = handlers()\n"
        "import checker\n"
        "assert handlers() == before\n"
        "print('same')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.strip() == "same", proc.stderr


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_running_out_of_memory_is_incomplete_with_figures(workers: str) -> None:
    # Address space: enough to start (imports take about 450 MB of it), not to finish.
    limit = str(700 * 1024 * 1024)
    proc = subprocess.Popen(
        [
            "prlimit",
            f"--as={limit}",
            *MCHECK,
            "run",
            str(FIXTURES / "memory_hog.py"),
            "--workers",
            workers,
            "--json",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 3, (out, err)
    text = out + err
    assert "out of memory" in text
    assert "Traceback" not in text


def _interrupt(
    args: tuple[str, ...], ready: str = "progress: distinct", twice: bool = False, **kw: Any
) -> Any:
    """Start mcheck, wait for the line ``ready`` on stderr, then Ctrl-C it (twice)."""
    run = Watched(*args, **kw)
    run.wait_for(ready)
    run.signal(signal.SIGINT)
    if twice:
        run.signal(signal.SIGINT)
    return run.finish(timeout=60)


LIVENESS_RUN = (
    "run",
    "ratis_heartbeat_match_index",
    "--property",
    "FollowersEventuallyMatchLeader",
    "--json",
)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_during_liveness_is_incomplete(workers: str) -> None:
    code, out, err = _interrupt((*LIVENESS_RUN, "--workers", workers))
    assert code == 3, err
    d = _json(out)
    assert d["result"] == "incomplete" and "interrupted" in d["reason"]


def test_a_killed_worker_stops_a_liveness_run() -> None:
    run = Watched(*LIVENESS_RUN, "--workers", "2")
    run.progress()
    workers = _children(run.pid)
    assert len(workers) >= 2
    os.kill(workers[1], signal.SIGKILL)
    code, out, err = run.finish(timeout=60)
    assert code == 3, err
    d = _json(out)
    assert d["result"] == "incomplete" and "died" in d["reason"], d
    assert _wait_for(lambda: not any(_alive(p) for p in workers), 5)


def test_a_liveness_run_with_workers_times_out_incomplete() -> None:
    proc = _start(*LIVENESS_RUN, "--workers", "2", "--timeout", "2")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    d = _json(out)
    assert d["result"] == "incomplete" and "timeout" in d["reason"], d


def test_a_second_ctrl_c_is_still_exit_3() -> None:
    code, _out, err = _interrupt(LONG_RUN, twice=True)
    assert code == 3, err
    assert "Traceback" not in err


def test_ctrl_c_during_start_up_is_exit_3() -> None:
    # The fixture says when its (30 s) import has begun.
    code, _out, err = _interrupt(("run", str(FIXTURES / "slow_import.py")), ready="slow import")
    assert code == 3
    assert "interrupted" in err and "Traceback" not in err


def test_ctrl_c_during_graph_export_is_exit_3(tmp_path: Path) -> None:
    out_file = tmp_path / "g.graphml"
    code, _out, err = _interrupt(
        (
            "graph",
            "raft",
            "--const",
            "MaxLogLen=0",
            "--out",
            str(out_file),
            "--max-nodes",
            "1000000",
        )
    )
    assert code == 3, err
    assert "incomplete" in err and not out_file.exists()


def _gate_manifest(tmp_path: Path) -> Path:
    manifest = tmp_path / "gate.toml"
    manifest.write_text(
        '[[check]]\nname = "quick"\nspec = "die_hard"\nexpect = "violates BigJugNotFour"\n'
        '[[check]]\nname = "slow"\nspec = "raft"\nconstants = { MaxLogLen = 1 }\n'
        'symmetry = false\nexpect = "holds"\n'
    )
    return manifest


def _quick_check_done(tmp_path: Path) -> bool:
    # The quick check's counterexample is saved when it finishes: the slow one runs.
    return any((tmp_path / "traces").glob("gate-quick*.itf.json"))


@pytest.mark.parametrize(("sig", "jobs"), [(signal.SIGINT, "1"), (signal.SIGTERM, "2")])
def test_interrupting_the_gate_keeps_the_junit_report(tmp_path: Path, sig: int, jobs: str) -> None:
    manifest = _gate_manifest(tmp_path)
    junit = tmp_path / "junit.xml"
    run = Watched("gate", str(manifest), "--junit", str(junit), "--jobs", jobs)
    assert _wait_for(lambda: _quick_check_done(tmp_path), 180)
    pool = _children(run.pid)
    run.signal(sig)
    code, out, err = run.finish(timeout=60)
    assert code == 3, (out, err)
    assert "interrupted" in out and "Traceback" not in out + err
    report = junit.read_text()
    assert 'name="quick"' in report and 'name="slow"' in report
    # No check process outlives the gate.
    assert _wait_for(lambda: not any(_alive(p) for p in pool), 10)


def test_showing_a_huge_trace_is_bounded(tmp_path: Path) -> None:
    doc = {
        "#meta": {"spec": "huge"},
        "vars": ["xs"],
        "states": [
            {"#meta": {"index": 0}, "xs": list(range(1_000_000))},
            {"#meta": {"index": 1, "action": "Step"}, "xs": list(range(1, 1_000_001))},
        ],
    }
    path = tmp_path / "huge.itf.json"
    path.write_text(json.dumps(doc))
    t0 = time.monotonic()
    proc = subprocess.run(
        [*MCHECK, "show", str(path), "--no-color"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - t0 < 20
    assert len(proc.stdout) < 200_000


def test_timeout_bounds_a_huge_symmetry_set_up() -> None:
    """9 servers mean 9! = 362,880 renamings: the first state alone outlasts the
    timeout, so the watchdog (not the check between chunks) must end the run."""
    t0 = time.monotonic()
    proc = _start("run", "raft", "--const", "Server=9", "--timeout", "2", "--json")
    out, err = proc.communicate(timeout=120)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 3, err
    data = _json(out)
    assert data["result"] == "incomplete"
    assert "timeout" in data["reason"]
    # 2 s, the watchdog's 1 s grace, building the renamings and the report.
    assert elapsed < 30, elapsed


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["run", "die_hard", "--trace-out", ""], "--trace-out is empty"),
        (["run", "die_hard", "--picture", " "], "--picture is empty"),
        (["run", ""], "SPEC is empty"),
        (["gate", "--only", "two_phase*", "--junit", ""], "--junit is empty"),
        (["resume", "ck", "--spec", ""], "--spec is empty"),
        (["show", ""], "TRACE is empty"),
        (["run", "die_hard", "--const", ""], "--const is empty"),
    ],
)
def test_an_empty_value_is_refused_not_taken_for_the_default(
    args: list[str], named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unset shell variable (`--trace-out "$OUT"`) wrote the default file and
    `--junit ''` no report, silently (issue 43): one line, exit 2, nothing run."""
    from click.testing import CliRunner

    from checker.cli.commands import main

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert named in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "traces").exists()


@pytest.mark.parametrize("command", ["run", "resume"])
def test_a_checkpoint_folder_in_use_is_refused(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs or resumes of one checkpoint folder both ran and both said "saved"
    (issue 43): the second is refused, exit 2, while the first holds the folder."""
    from click.testing import CliRunner

    from checker.check.checkpoint import folder_lock
    from checker.cli.commands import main

    monkeypatch.chdir(tmp_path)
    ck = tmp_path / "ck"
    runner = CliRunner()
    first = runner.invoke(
        main,
        [
            "run",
            "raft",
            "--checkpoint",
            str(ck),
            "--checkpoint-every",
            "0.000001",
            "--max-states",
            "50",
        ],
    )
    assert first.exit_code == 3, first.output  # a checkpoint to resume
    args = ["run", "raft", "--checkpoint", str(tmp_path / "other")]
    if command == "resume":
        args = ["resume", str(ck)]
    with folder_lock(ck if command == "resume" else tmp_path / "other"):
        held = runner.invoke(main, args)
    assert held.exit_code == 2, held.output
    assert "is in use by another mcheck run or resume" in held.stderr
    # Released with the holder: the folder is free again.
    again = runner.invoke(main, ["resume", str(ck), "--max-states", "60"])
    assert again.exit_code == 3, again.output


def test_resuming_a_folder_whose_run_has_not_saved_yet_says_so(tmp_path: Path) -> None:
    # It said the folder "holds no checkpoint", as if no run were using it.
    from click.testing import CliRunner

    from checker.check.checkpoint import folder_lock
    from checker.cli.commands import main

    fresh = tmp_path / "fresh"
    with folder_lock(fresh):
        held = CliRunner().invoke(main, ["resume", str(fresh)])
    assert held.exit_code == 2, held.output
    assert "has not saved one" in held.stderr
    idle = CliRunner().invoke(main, ["resume", str(fresh)])
    assert idle.exit_code == 2 and "holds no checkpoint (" in idle.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["run", "die_hard", "--workers", "1000"],
        ["run", "die_hard", "--workers", str(10**30)],
        ["simulate", "die_hard", "--workers", "100000"],
        ["run", "die_hard", "--cluster", f"local:{10**30}"],
        ["gate", "--jobs", "500"],
    ],
)
def test_more_workers_than_the_machine_runs_is_refused_before_any_starts(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--workers 1000 started processes until the open files ran out (exit 255) or
    crawled past any timeout; 10**30 was an OverflowError (issue 43)."""
    from click.testing import CliRunner

    from checker.base.machine import process_limit
    from checker.cli.commands import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")  # the gate refuses before reading it
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"this machine runs at most {process_limit()} worker processes" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["show", "/dev/zero"],
        ["show", "/dev/urandom"],
        ["replay", "die_hard", "/dev/zero"],
        ["validate", "die_hard", "/dev/zero", "--format", "itf"],
        ["gate", "/dev/zero"],
    ],
)
def test_a_device_is_read_no_further_than_a_file_could_be(args: list[str]) -> None:
    """The ITF and manifest readers trusted st_size, 0 for a device, and read
    /dev/zero until memory ran out (issue 43): one line, exit 2, under a 3 GB cap."""
    done = subprocess.run(
        [sys.executable, "-m", "checker", *args],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _cap_memory(3 << 30),
    )
    assert done.returncode == 2, done.stderr[-500:]
    assert "is larger than" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _cap_memory(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")
def test_validate_running_out_of_memory_is_one_line_exit_3(tmp_path: Path) -> None:
    # A log too large for the memory left ended in "out of memory" and 113 lines of
    # MemoryError tracebacks, exit 1 ("no behaviour matches"): spec code that raised
    # MemoryError was reported as the spec's error.
    log = tmp_path / "big.ndjson"
    fill = json.dumps({"event": "FillSmall", "state": {"small": 3, "big": 0}})
    empty = json.dumps({"event": "EmptySmall", "state": {"small": 0, "big": 0}})
    log.write_text(f"{fill}\n{empty}\n" * 1_000_000)
    limit = str(700 * 1024 * 1024)
    proc = subprocess.run(
        ["prlimit", f"--as={limit}", *MCHECK, "validate", "die_hard", str(log)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert "out of memory" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    # Said before it starts: the log is larger than the memory left could validate.
    assert "may need about" in proc.stderr.splitlines()[0], proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr


def test_spec_code_out_of_memory_is_incomplete_not_a_spec_error(tmp_path: Path) -> None:
    spec = tmp_path / "hungry.py"
    spec.write_text(
        "from typing import NamedTuple\n"
        "from checker import Spec, action, invariant\n\n"
        "class S(NamedTuple):\n    x: int\n\n"
        "class Hungry(Spec):\n"
        "    def init(self):\n        return [S(0)]\n\n"
        "    @action\n"
        "    def Grow(self, s):\n        return S(s.x + 1) if s.x < 5 else None\n\n"
        "    @invariant\n"
        "    def Small(self, s):\n"
        "        if s.x == 3:\n            raise MemoryError\n"
        "        return True\n"
    )
    proc = subprocess.run(
        [*MCHECK, "run", str(spec)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "out of memory" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and "raised" not in proc.stdout
