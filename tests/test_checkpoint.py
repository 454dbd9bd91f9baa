"""Checkpoint and resume: a resumed run ends with an uninterrupted run's figures and
counterexample; a changed spec, variant, constants or fingerprint function is refused;
a crash during a write keeps the previous checkpoint; Ctrl-C saves a final one."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import checker.check.checkpoint as ckpt
import checker.explore.engine as engine
from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.base.errors import ConfigError
from checker.explore.result import Result, Verdict
from tests.seed_helpers import figures
from tests.watch import Watched

ROOT = Path(__file__).resolve().parents[1]
MCHECK = [sys.executable, "-m", "checker"]


def _model(spec: str, variant: str | None = None, properties: Any = None, **consts: Any) -> Any:
    cls = load_spec_class(spec)
    return CompiledSpec(cls(variant=variant, **consts), properties=properties, symmetry=False)


def _stopped_then_resumed(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    make: Any,
    stop_at: int,
    every: float = 1e-9,
    **opts: Any,
) -> tuple[Result, Result, dict[str, Any]]:
    """Run with a checkpoint at every chunk boundary until --max-states stops it, then
    resume the last checkpoint to the end."""
    # Small chunks: a model of a few thousand states gets many chunk boundaries.
    monkeypatch.setattr(engine, "CHUNK", 64)
    folder = str(tmp_path / "ck")
    first = check(
        make(),
        Options(
            symmetry=False, checkpoint=folder, checkpoint_every=every, max_states=stop_at, **opts
        ),
    )
    assert first.verdict is Verdict.INCOMPLETE
    header = ckpt.read_header(folder)
    # The final checkpoint finishes the chunk in hand, so it may pass the limit.
    assert header["stats"]["distinct"] == first.stats.distinct >= stop_at
    resumed = check(make(), Options(symmetry=False, checkpoint=folder, resume=True, **opts))
    return first, resumed, header


def test_resumed_run_equals_uninterrupted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def make() -> Any:
        return _model("raft", Server="2", MaxTerm=2, MaxLogLen=1)

    _, resumed, header = _stopped_then_resumed(monkeypatch, tmp_path, make, stop_at=900)
    whole = check(make(), Options(symmetry=False))
    # TLC's count for this model (the gate's "raft 2 servers" row).
    assert whole.verdict is Verdict.OK and whole.stats.distinct == 1760
    assert figures(resumed, per_action=True) == figures(whole, per_action=True)
    assert resumed.stats.queue_peak == whole.stats.queue_peak
    # The checkpoint was taken mid-run, not at its end.
    assert header["stats"]["distinct"] < whole.stats.distinct


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_resumed_run_finds_the_same_counterexample(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, strategy: str
) -> None:
    def make() -> Any:
        return _model("om_leader_ready_before_apply", "bug", ["NoStaleWriteRejection"])

    whole = check(make(), Options(symmetry=False, strategy=strategy))
    assert whole.verdict is Verdict.VIOLATION and whole.trace is not None
    _, resumed, _ = _stopped_then_resumed(
        monkeypatch,
        tmp_path,
        make,
        stop_at=whole.stats.distinct // 2,
        # Depth-first takes one state per chunk: a checkpoint at every one is slow.
        every=1e-9 if strategy == "bfs" else 0.05,
        strategy=strategy,
    )
    assert figures(resumed, per_action=True) == figures(whole, per_action=True)
    assert resumed.trace is not None
    assert [s.state for s in resumed.trace.steps] == [s.state for s in whole.trace.steps]


@pytest.mark.parametrize(
    ("spec", "variant", "consts", "props"),
    [
        # A pass, and a lasso (the liveness graph is restored, then finished).
        (
            "scm_install_snapshot_leader_change",
            "fix",
            {"MAX_ELECTIONS": 1},
            ["FollowerEventuallyCatchesUp"],
        ),
        (
            "scm_install_snapshot_leader_change",
            "bug",
            {"MAX_ELECTIONS": 1},
            ["FollowerEventuallyCatchesUp"],
        ),
        # Invariants and the temporal property in one exploration, fairness on groups.
        ("prisoners", None, {}, None),
    ],
)
def test_a_resumed_liveness_run_equals_uninterrupted(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    spec: str,
    variant: str | None,
    consts: dict[str, Any],
    props: Any,
) -> None:
    """Issue 31: a checkpoint holds the behaviour graph recorded so far; the resumed
    run's graph, verdict and lasso are the uninterrupted run's."""

    def make() -> Any:
        return _model(spec, variant, props, **consts)

    whole = check(make(), Options(symmetry=False))
    _, resumed, header = _stopped_then_resumed(
        monkeypatch, tmp_path, make, stop_at=whole.stats.distinct // 2
    )
    assert 0 < header["stats"]["distinct"] < whole.stats.distinct
    assert len(header["lengths"]) == 4 + len(ckpt.GRAPH_ARRAYS)
    assert figures(resumed, per_action=True) == figures(whole, per_action=True)
    assert (resumed.verdict, resumed.violated, resumed.graph) == (
        whole.verdict,
        whole.violated,
        whole.graph,
    )
    if whole.trace is not None:
        assert resumed.trace is not None and resumed.trace.loop == whole.trace.loop
        assert [s.state for s in resumed.trace.steps] == [s.state for s in whole.trace.steps]


def test_a_checkpoint_s_graph_is_checked_before_use(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A graph array edited (an edge to a state never recorded, a truth of 2) or a
    liveness checkpoint resumed without its temporal property: one line each."""

    def make(props: Any = ("FollowerEventuallyCatchesUp",)) -> Any:
        return _model("scm_install_snapshot_leader_change", "fix", list(props), MAX_ELECTIONS=1)

    _stopped_then_resumed(monkeypatch, tmp_path, make, stop_at=2000)
    folder = tmp_path / "ck"
    snap = ckpt.read(folder, ckpt.state_types(make()))
    assert snap.graph is not None
    with pytest.raises(ConfigError, match=r"cannot resume .*: a different selected"):
        check(
            make(["NoStuckInstallInProgress"]),
            Options(symmetry=False, checkpoint=str(folder), resume=True),
        )
    # A successor index past int32 was narrowed on load (an internal error, exit 255).
    for field, value in (("targets", snap.stats.distinct), ("truth", 2), ("ks", 2**31)):
        bad = ckpt.read(folder, ckpt.state_types(make()))
        assert bad.graph is not None
        arr = getattr(bad.graph, field).copy()
        arr.flat[0] = value
        setattr(bad.graph, field, arr)
        other = tmp_path / f"bad-{field}"
        ckpt.write(other, bad, ckpt.state_types(make()))
        with pytest.raises(ckpt.CorruptCheckpoint, match="state graph is damaged"):
            ckpt.read(other, ckpt.state_types(make()))


def _checkpoint_of(tmp_path: Path, spec: str, *args: str) -> Path:
    folder = tmp_path / "ck"
    proc = subprocess.run(
        [*MCHECK, "run", spec, *args, "--checkpoint", str(folder), "--max-states", "300",
         "--checkpoint-every", "0.000001", "--no-symmetry"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert ckpt.exists(folder)
    return folder


def _resume(folder: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCHECK, "resume", str(folder), *args, "--json"],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (["--variant", "fix"], "a different variant"),
        (["--const", "MaxTerm=3"], "a different constants (MaxTerm: 2 then, 3 now)"),
    ],
)
def test_resume_refuses_another_variant_or_constants(
    tmp_path: Path, args: list[str], refusal: str
) -> None:
    folder = _checkpoint_of(
        tmp_path, "ratis_heartbeat_match_index", "--variant", "bug", "--property", "MatchIndexSound"
    )
    proc = _resume(folder, *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and refusal in lines[0], proc.stderr
    # It said which spec it imported.
    assert "specs/ratis_heartbeat_match_index.py" in proc.stdout.splitlines()[0]


def test_resume_refuses_a_changed_spec_source(tmp_path: Path) -> None:
    spec = tmp_path / "my_raft.py"
    shutil.copy(ROOT / "specs" / "raft.py", spec)
    folder = _checkpoint_of(tmp_path, str(spec))
    spec.write_text(spec.read_text() + "\n# an edit after the checkpoint\n")
    proc = _resume(folder, "--spec", str(spec), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"mcheck: resuming {folder} with the spec in {spec}" in proc.stdout
    (refusal,) = proc.stderr.strip().splitlines()
    assert "a different spec source (mcheck_user_my_raft changed" in refusal, proc.stderr


def test_resume_refuses_another_fingerprint_function(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = str(tmp_path / "ck")
    opts = {"symmetry": False, "checkpoint": folder, "checkpoint_every": 1e-9}
    monkeypatch.setattr(engine, "CHUNK", 64)
    check(_model("raft", Server="2"), Options(max_states=500, **opts))
    # Another version of the encoding, or a changed function under the same version.
    monkeypatch.setattr(ckpt, "FINGERPRINT_VERSION", ckpt.FINGERPRINT_VERSION + 1)
    with pytest.raises(ConfigError, match="a different fingerprint function"):
        check(_model("raft", Server="2"), Options(resume=True, **opts))
    monkeypatch.undo()
    monkeypatch.setattr(ckpt, "fingerprint", lambda v: 42)
    with pytest.raises(ConfigError, match="a different fingerprint function"):
        check(_model("raft", Server="2"), Options(resume=True, **opts))


def test_frontier_that_fingerprints_differently_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The last line of defence: each restored state is fingerprinted again.
    folder = str(tmp_path / "ck")
    monkeypatch.setattr(engine, "CHUNK", 64)
    opts = {"symmetry": False, "checkpoint": folder, "checkpoint_every": 1e-9}
    model = _model("raft", Server="2")
    check(model, Options(max_states=500, **opts))
    snap = ckpt.read(folder, ckpt.state_types(model))
    snap.fps[snap.frontier[0][0]] ^= 1
    ckpt.write(folder, snap)
    with pytest.raises(ConfigError, match="fingerprint differently"):
        check(_model("raft", Server="2"), Options(resume=True, **opts))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "2"], "--checkpoint works with one process"),
    ],
)
def test_checkpoint_refused_where_it_cannot_work(
    tmp_path: Path, args: list[str], message: str
) -> None:
    proc = subprocess.run(
        [*MCHECK, "run", "ratis_heartbeat_match_index", "--checkpoint", str(tmp_path / "c"), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_run_does_not_overwrite_a_checkpoint(tmp_path: Path) -> None:
    folder = _checkpoint_of(tmp_path, "raft")
    before = (folder / ckpt.FILE).read_bytes()
    proc = subprocess.run(
        [*MCHECK, "run", "raft", "--checkpoint", str(folder)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "python -m checker resume" in proc.stderr  # as invoked
    assert (folder / ckpt.FILE).read_bytes() == before


def test_damaged_checkpoint_is_one_line_error(tmp_path: Path) -> None:
    folder = _checkpoint_of(tmp_path, "raft")
    path = folder / ckpt.FILE
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 100])
    proc = _resume(folder)
    assert proc.returncode == 2
    assert "truncated or damaged" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    path.write_bytes(b"hello")
    proc = _resume(folder)
    assert proc.returncode == 2 and "not an mcheck checkpoint" in proc.stderr
    proc = _resume(tmp_path / "nothing-here")
    assert proc.returncode == 2 and "holds no checkpoint" in proc.stderr


def test_a_crash_while_writing_keeps_the_previous_checkpoint(tmp_path: Path) -> None:
    """kill -9 a run that checkpoints continuously, at moments spread over its writes
    (counted from its first checkpoint, not from its start): after each kill the
    folder holds a checkpoint that reads back whole."""
    folder = tmp_path / "ck"
    for delay in (0.0, 0.15, 0.4):
        if folder.exists():
            shutil.rmtree(folder)
        run = Watched(
            "run", "raft", "--const", "MaxLogLen=0", "--no-symmetry",
            "--checkpoint", str(folder), "--checkpoint-every", "0.000001",
        )  # fmt: skip
        end = time.monotonic() + 180
        while not ckpt.exists(folder) and time.monotonic() < end and run.proc.poll() is None:
            time.sleep(0.01)
        assert ckpt.exists(folder), run.finish()
        time.sleep(delay)  # a spread over the writes, after the readiness signal
        run.signal(signal.SIGKILL)
        run.finish()
        snap = ckpt.read(folder, ckpt.state_types(_model("raft")))
        assert len(snap.fps) == snap.stats.distinct > 0
        assert all(0 <= o < len(snap.fps) for o, _, _ in snap.frontier)


def test_ctrl_c_saves_a_final_checkpoint_and_resume_finishes(tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    args = ["raft", "--const", "Server=2", "--const", "MaxTerm=4", "--no-symmetry"]
    run = Watched("run", *args, "--checkpoint", str(folder), "--json")
    run.progress()  # under way (about 5 s of exploration in all)
    run.signal(signal.SIGINT)
    code, out, err = run.finish(timeout=60)
    assert code == 3, err
    stopped = json.loads(out.strip().splitlines()[-1])
    assert stopped["reason"] == "interrupted"
    assert any("continue with python -m checker resume" in w for w in stopped["warnings"])
    # The final checkpoint holds exactly the figures the interrupted run reported.
    assert ckpt.read_header(folder)["stats"]["distinct"] == stopped["distinct_states"]
    done = _resume(folder)
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout.strip().splitlines()[-1])
    whole = check(_model("raft", Server="2", MaxTerm=4), Options(symmetry=False))
    assert (final["distinct_states"], final["states_generated"], final["depth"]) == (
        whole.stats.distinct,
        whole.stats.generated,
        whole.stats.depth,
    )


def test_a_resume_stopped_while_setting_up_keeps_the_checkpoint_s_figures(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--timeout during set-up (here a symmetry check that outlasts it) reports the
    checkpoint's figures, not zero states, and leaves the checkpoint as it was."""
    run_module = sys.modules["checker.check.run"]

    folder = str(tmp_path / "ck")
    monkeypatch.setattr(engine, "CHUNK", 64)

    def make() -> Any:
        return CompiledSpec(load_spec_class("raft")(Server="2"), symmetry=True)

    opts = {"checkpoint": folder, "checkpoint_every": 1e-9}
    check(make(), Options(max_states=500, **opts))
    before = (Path(folder) / ckpt.FILE).read_bytes()
    saved = ckpt.read_header(folder)["stats"]["distinct"]

    def slow_check(*args: Any, **kwargs: Any) -> None:
        time.sleep(30)

    monkeypatch.setattr(run_module, "check_symmetry", slow_check)
    stopped = check(make(), Options(resume=True, timeout=0.2, **opts))
    assert stopped.verdict is Verdict.INCOMPLETE and "setting up" in (stopped.reason or "")
    assert stopped.stats.distinct == saved > 0
    assert any("unchanged" in w for w in stopped.warnings)
    assert (Path(folder) / ckpt.FILE).read_bytes() == before


def test_a_run_stopped_by_max_states_saves_its_checkpoint(tmp_path: Path) -> None:
    # With --checkpoint-every at its default, nothing was saved before the limit, and
    # the limit saved nothing either: `resume` said the folder "holds no checkpoint".
    folder = str(tmp_path / "ck")
    make = lambda: _model("raft", Server="2")  # noqa: E731
    first = check(make(), Options(symmetry=False, checkpoint=folder, max_states=300))
    assert first.verdict is Verdict.INCOMPLETE and first.reason == "max-states 300 reached"
    assert any("checkpoint of" in w for w in first.warnings), first.warnings
    resumed = check(make(), Options(symmetry=False, checkpoint=folder, resume=True))
    whole = check(make(), Options(symmetry=False))
    assert figures(resumed) == figures(whole)
