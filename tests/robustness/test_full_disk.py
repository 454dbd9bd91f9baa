"""A full disk or a read-only folder is the environment, not a bug: one line, never an
internal error (exit 255), no temporary file left, no result lost.

Before: a full disk under ``--checkpoint`` ended in exit 255 with a ``.tmp`` left
behind; ``resume`` of a read-only folder and ``gate --update`` of a read-only manifest
ran every check before failing with exit 255.  These tests make the system calls fail
(the machines run as root, for whom chmod does not make a folder read-only).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any, NoReturn

import pytest
from click.testing import CliRunner

import checker.base.safefile as safefile
import checker.explore.engine as engine
from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.cli.commands import main
from checker.explore.result import Verdict


def _model() -> Any:
    return CompiledSpec(load_spec_class("raft")(Server="2"), symmetry=False)


def _fail(code: int) -> Any:
    def fail(*args: Any, **kwargs: Any) -> NoReturn:
        raise OSError(code, os.strerror(code))

    return fail


def _one_line(result: Any, code: int, *words: str) -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcheck: error: "), result.stderr
    assert "internal error" not in lines[0]
    for w in words:
        assert w in lines[0], lines[0]


def test_a_full_disk_stops_the_run_incomplete_with_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "ck"
    monkeypatch.setattr(safefile.os, "fsync", _fail(errno.ENOSPC))
    result = check(_model(), Options(symmetry=False, checkpoint=str(folder), checkpoint_every=1e-9))
    assert result.verdict is Verdict.INCOMPLETE
    assert result.reason is not None and "No space left on device" in result.reason
    assert result.stats.distinct > 0
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoint.lock"]  # no .tmp


def test_a_disk_that_fills_keeps_the_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "ck"
    monkeypatch.setattr(engine, "CHUNK", 64)
    real = safefile.os.fsync
    calls = {"n": 0}

    def fsync_then_full(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] > 3:  # the first checkpoint (file and folder) is written
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(safefile.os, "fsync", fsync_then_full)
    result = check(_model(), Options(symmetry=False, checkpoint=str(folder), checkpoint_every=1e-9))
    assert result.verdict is Verdict.INCOMPLETE
    assert result.reason is not None and "the previous checkpoint" in result.reason
    monkeypatch.setattr(safefile.os, "fsync", real)
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoint.lock", "checkpoint.mcp"]
    resumed = check(_model(), Options(symmetry=False, checkpoint=str(folder), resume=True))
    assert resumed.verdict is Verdict.OK and resumed.stats.distinct == 1760


def test_the_cli_says_a_full_disk_in_one_line_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(safefile.os, "fsync", _fail(errno.ENOSPC))
    r = CliRunner().invoke(
        main,
        ["run", "raft", "--const", "Server=2", "--no-symmetry",
         "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "0.001"],
    )  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "No space left on device" in r.stdout and "Traceback" not in r.output


def test_resuming_a_read_only_folder_is_refused_before_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "ck"
    stopped = CliRunner().invoke(
        main,
        ["run", "raft", "--const", "Server=2", "--no-symmetry",
         "--checkpoint", str(folder), "--max-states", "300"],
    )  # fmt: skip
    assert stopped.exit_code == 3, stopped.output
    monkeypatch.setattr(safefile.tempfile, "mkstemp", _fail(errno.EROFS))
    r = CliRunner().invoke(main, ["resume", str(folder)])
    _one_line(r, 2, "cannot write checkpoints to", "Read-only file system")
    assert "distinct states" not in r.stdout


def test_gate_update_of_a_read_only_manifest_is_refused_before_any_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = tmp_path / "gate.toml"
    manifest.write_text('[[check]]\nspec = "die_hard"\nexpect = "violates BigJugNotFour"\n')
    monkeypatch.setattr(safefile.tempfile, "mkstemp", _fail(errno.EROFS))
    r = CliRunner().invoke(main, ["gate", str(manifest), "--jobs", "1", "--update"])
    _one_line(r, 2, "cannot write the manifest", "Read-only file system")
    assert "die_hard" not in r.stdout


def test_a_trace_that_cannot_be_written_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = safefile.os.replace
    monkeypatch.setattr(safefile.os, "replace", _fail(errno.ENOSPC))
    out = tmp_path / "t.itf.json"
    r = CliRunner().invoke(main, ["run", "die_hard", "--trace-out", str(out)])
    monkeypatch.setattr(safefile.os, "replace", real)
    assert r.exit_code != 255 and "Traceback" not in r.output, r.output
    assert "No space left on device" in r.output
    assert not list(tmp_path.iterdir())
