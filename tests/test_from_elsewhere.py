"""A checkpoint or trace folder from someone else (issue 43's critical items).

* A checkpoint is signed with the user's key (checker/check/checkpointkey.py): one that was
  forged or edited (extra roots, another variant in its header) is refused, exit 2,
  unless the user says it is trusted; then the result says it rests on that file.
* Nothing mcheck writes follows a link planted in the folder it writes to: a
  checkpoint, a trace file, a JUnit report, a picture, a graph.
* A resume writes back only the fields of the command line it knows.
* ``mcheck replay`` confirms a lasso only if it is a fair behaviour.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import checker.check.checkpoint as ckpt
from checker.check import checkpointkey

ROOT = Path(__file__).resolve().parent.parent


def _mcheck(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "checker", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def _checkpoint(cwd: Path, *args: str, env: dict[str, str] | None = None, stop: int = 5) -> Path:
    """A checkpoint of a run stopped early (the folder ``ck`` under ``cwd``)."""
    done = _mcheck(
        cwd,
        "run",
        *args,
        "--checkpoint",
        "ck",
        "--checkpoint-every",
        "0.000001",
        "--max-states",
        str(stop),
        env=env,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    return cwd / "ck"


def _parts(folder: Path) -> tuple[dict[str, Any], list[bytes]]:
    data = (folder / ckpt.FILE).read_bytes()
    at = len(ckpt.MAGIC)
    n = int.from_bytes(data[at : at + 8], "little")
    header = json.loads(data[at + 8 : at + 8 + n])
    at += 8 + n
    parts = []
    for length in header["lengths"]:
        parts.append(data[at : at + length])
        at += length
    return header, parts


def _forge(folder: Path, header_edit: Any = None, fps_edit: Any = None) -> None:
    """Edit as an attacker would, then recompute lengths and the checksum (anyone can)."""
    header, parts = _parts(folder)
    if fps_edit is not None:
        parts[0] = fps_edit(parts[0])
    header["lengths"] = [len(p) for p in parts]
    header["sha256"] = hashlib.sha256(b"".join(parts)).hexdigest()
    if header_edit is not None:
        header_edit(header)
    head = json.dumps(header).encode()
    (folder / ckpt.FILE).write_bytes(
        ckpt.MAGIC + len(head).to_bytes(8, "little") + head + b"".join(parts)
    )


def _one_line_refusal(done: Any, *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcheck: error: "), done.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_a_genuine_checkpoint_resumes(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path, "die_hard")
    done = _mcheck(tmp_path, "resume", str(folder), "--json")
    assert done.returncode == 12, done.stdout + done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["property"] == "BigJugNotFour"


def _variant(header: dict[str, Any]) -> None:
    header["identity"]["variant"] = "fix"
    header["origin"]["variant"] = "fix"


def _extra_root(fps: bytes) -> bytes:
    return fps + (12345).to_bytes(8, "little")


@pytest.mark.parametrize(
    ("header_edit", "fps_edit"),
    [(_variant, None), (None, _extra_root), (lambda h: h.pop("signature"), None)],
    ids=["another variant in the header", "a fingerprint added", "the signature dropped"],
)
def test_a_forged_checkpoint_is_refused_unless_trusted(
    tmp_path: Path, header_edit: Any, fps_edit: Any
) -> None:
    """The SHA-256 was all there was: a bug checkpoint resumed as fix, or with extra
    roots resumed to a pass no run earned."""
    folder = _checkpoint(
        tmp_path, "scm_install_snapshot_leader_change", "--variant", "bug", stop=100
    )
    _forge(folder, header_edit, fps_edit)
    _one_line_refusal(_mcheck(tmp_path, "resume", str(folder)), "not signed", "--trust-checkpoint")
    trusted = _mcheck(tmp_path, "resume", str(folder), "--trust-checkpoint", "--json")
    # Trusted, it goes on (or the file is refused on its merits); if it runs, its
    # result says what it rests on.
    if trusted.returncode in (0, 3, 12):
        row = json.loads(trusted.stdout.splitlines()[-1])
        assert any("not signed with your key" in w for w in row["warnings"]), row


def test_another_key_is_another_user(tmp_path: Path) -> None:
    """MCHECK_CHECKPOINT_KEY: a CI secret, or a key a team shares."""
    folder = _checkpoint(tmp_path, "die_hard", env={checkpointkey.ENV: "team-secret"})
    _one_line_refusal(_mcheck(tmp_path, "resume", str(folder)), "not signed")
    done = _mcheck(tmp_path, "resume", str(folder), env={checkpointkey.ENV: "team-secret"})
    assert done.returncode == 12, done.stdout + done.stderr


def test_the_key_file_is_the_user_s_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(checkpointkey.ENV, raising=False)
    key = checkpointkey.signing_key()
    path = checkpointkey.key_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(key) == 32
    assert checkpointkey.signing_key() == key  # made once, then read
    path.chmod(0o666)
    with pytest.raises(Exception, match="writable by others"):
        checkpointkey.signing_key()
    path.unlink()
    other = tmp_path / "elsewhere.key"
    other.write_text("00" * 32)
    path.symlink_to(other)
    with pytest.raises(Exception, match="plain file"):
        checkpointkey.signing_key()


def test_a_resume_writes_no_unknown_header_field_back(tmp_path: Path) -> None:
    """The header kept unknown 'origin' keys and resume wrote them back (a note
    '$(touch PWNED)' travelled on from checkpoint to checkpoint)."""
    folder = _checkpoint(tmp_path, "raft", "--const", "Server=2")
    _forge(folder, lambda h: h["origin"].update(note="$(touch PWNED)"))
    done = _mcheck(
        tmp_path,
        "resume",
        str(folder),
        "--trust-checkpoint",
        "--max-states",
        "400",
        "--checkpoint-every",
        "0.000001",
    )
    assert done.returncode == 3, done.stdout + done.stderr
    header, _ = _parts(folder)
    assert header["stats"]["distinct"] > 5  # the resume's own checkpoint
    assert "note" not in header["origin"]
    assert not (tmp_path / "PWNED").exists()


def test_no_write_follows_a_planted_link(tmp_path: Path) -> None:
    """checkpoint.mcp.tmp -> ../victim.sh made resume write the checkpoint into the
    victim; the same held for traces/X.itf.json.tmp and the JUnit report's .tmp."""
    victim = tmp_path / "victim.sh"
    victim.write_text("echo untouched\n")
    folder = _checkpoint(tmp_path, "raft", "--const", "Server=2")
    (folder / (ckpt.FILE + ".tmp")).symlink_to(victim)
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "die_hard-default-BigJugNotFour.itf.json.tmp").symlink_to(victim)
    (tmp_path / "j.xml.tmp").symlink_to(victim)
    # The final names themselves as links: replaced, never written through.
    (traces / "die_hard-default-BigJugNotFour.itf.json").symlink_to(victim)
    (tmp_path / "pic.html").symlink_to(victim)

    done = _mcheck(
        tmp_path, "resume", str(folder), "--max-states", "400", "--checkpoint-every", "0.000001"
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert _parts(folder)[0]["stats"]["distinct"] > 5  # written since
    done = _mcheck(tmp_path, "run", "die_hard", "--picture", "pic.html")
    assert done.returncode == 12, done.stdout + done.stderr
    manifest = tmp_path / "gate.toml"
    manifest.write_text(
        '[[tool.mcheck.gate.check]]\nspec = "die_hard"\nexpect = "violates BigJugNotFour"\n'
    )
    done = _mcheck(tmp_path, "gate", str(manifest), "--junit", "j.xml", "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr

    assert victim.read_text() == "echo untouched\n"
    assert not (traces / "die_hard-default-BigJugNotFour.itf.json").is_symlink()
    assert not (tmp_path / "pic.html").is_symlink()
    assert (tmp_path / "j.xml").read_text().startswith("<?xml")
    leftovers = [p.name for p in tmp_path.rglob("*.tmp") if not p.is_symlink()]
    assert leftovers == []


def test_replay_refuses_a_lasso_that_breaks_fairness(tmp_path: Path) -> None:
    """A stutter at a state where a weakly fair action is enabled was confirmed as 'a
    real behaviour ... violates FollowerEventuallyCatchesUp' (exit 0) for the fix,
    where mcheck run proves the property holds."""
    spec = "ratis_empty_snapshot_index_default"
    done = _mcheck(
        tmp_path, "run", spec, "--variant", "bug", "--property",
        "FollowerEventuallyCatchesUp", "--trace-out", "bug.itf.json",
    )  # fmt: skip
    assert done.returncode == 13, done.stdout + done.stderr
    doc = json.loads((tmp_path / "bug.itf.json").read_text())
    stutter = {**doc, "states": doc["states"][:1], "loop": 0}
    (tmp_path / "stutter.itf.json").write_text(json.dumps(stutter))
    for variant in ("fix", "bug"):
        done = _mcheck(tmp_path, "replay", spec, "stutter.itf.json", "--variant", variant)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "not a fair behaviour" in done.stdout and "weak fairness" in done.stdout
    # The genuine lasso is fair, and still confirmed.
    done = _mcheck(tmp_path, "replay", spec, "bug.itf.json", "--variant", "bug")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "violates FollowerEventuallyCatchesUp" in done.stdout
