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

import checker.checkpoint as ckpt
import checker.engine as engine
from checker import CompiledSpec, Options
from checker import run as check
from checker.errors import ConfigError
from checker.loader import load_spec_class
from checker.result import Result, Verdict
from tests.seed_helpers import figures

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
    assert 0 < header["stats"]["distinct"] <= stop_at
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
        (["--property", "FollowersEventuallyMatchLeader"], "--checkpoint covers invariant"),
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
    assert proc.returncode == 2 and "mcheck resume" in proc.stderr
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
    """kill -9 a run that checkpoints continuously, at moments spread over its writes:
    after each kill the folder holds a checkpoint that reads back whole."""
    folder = tmp_path / "ck"
    kills = 0
    for delay in (1.3, 1.7, 2.1):
        if folder.exists():
            shutil.rmtree(folder)
        proc = subprocess.Popen(
            [*MCHECK, "run", "raft", "--const", "MaxLogLen=0", "--no-symmetry",
             "--checkpoint", str(folder), "--checkpoint-every", "0.000001"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not ckpt.exists(folder):
            continue  # killed before the first write finished
        kills += 1
        snap = ckpt.read(folder, ckpt.state_types(_model("raft")))
        assert len(snap.fps) == snap.stats.distinct > 0
        assert all(0 <= o < len(snap.fps) for o, _, _ in snap.frontier)
    assert kills >= 2


def test_ctrl_c_saves_a_final_checkpoint_and_resume_finishes(tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    # About 5 s of exploration here (MaxTerm=3 now ends within the 1.5 s before the
    # interrupt, which then tests nothing).
    args = ["raft", "--const", "Server=2", "--const", "MaxTerm=4", "--no-symmetry"]
    proc = subprocess.Popen(
        [*MCHECK, "run", *args, "--checkpoint", str(folder), "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    stopped = json.loads(out.strip().splitlines()[-1])
    assert stopped["reason"] == "interrupted"
    assert any("continue with mcheck resume" in w for w in stopped["warnings"])
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
