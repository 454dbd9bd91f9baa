"""What ships is complete: every module of the tree in the wheel and the sdist, licence
metadata, and tests that run from the sdist."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _clean_copy(dest: Path) -> Path:
    """The files a clean checkout holds (tracked and new unignored ones, links as links).

    Building in the working tree would let a stale ``build/`` or ``*.egg-info`` lend the
    package a module its configuration leaves out (it hid a missing ``checker.fastpath``).
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        rel = Path(os.fsdecode(raw))
        src = ROOT / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree, not yet committed
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dest / rel)
        else:
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel), built as ``python -m build`` does: the wheel from the sdist."""
    src = _clean_copy(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        # --no-isolation: the venv's setuptools (the build-system floor, >= 77), no
        # download during the suite.
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def sdist(dist: tuple[Path, Path]) -> Path:
    """The source distribution."""
    return dist[0]


def _tree_modules() -> set[str]:
    """Every module of the installed packages as the tree holds them (relative paths)."""
    found = set()
    for package in ("checker", "mcheck_shipped"):
        # followlinks: mcheck_shipped/specs and /invariants are links to the top level
        for folder, dirs, files in os.walk(ROOT / package, followlinks=True):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = Path(folder).relative_to(ROOT)
            found.update((rel / f).as_posix() for f in files if f.endswith(".py"))
    return found


def test_every_module_of_the_tree_is_in_the_wheel_and_the_sdist(
    dist: tuple[Path, Path],
) -> None:
    sdist_path, wheel_path = dist
    modules = _tree_modules()
    # the subpackages and the shipped specs, followed through the mcheck_shipped links
    assert "checker/fastpath/expansion.py" in modules
    assert "mcheck_shipped/specs/raft.py" in modules
    with zipfile.ZipFile(wheel_path) as whl:
        in_wheel = set(whl.namelist())
    with tarfile.open(sdist_path) as tar:
        in_sdist = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert sorted(modules - in_wheel) == [], "modules the wheel lacks"
    assert sorted(modules - in_sdist) == [], "modules the sdist lacks"
    assert "checker/py.typed" in in_wheel
    # The C value core (issue 47): compiled into the wheel, its source in the sdist.
    assert [n for n in in_wheel if n.startswith("checker/values/_native.") and n.endswith(".so")]
    assert "checker/values/_native.c" in in_sdist


def test_sdist_carries_licence_and_metadata(sdist: Path) -> None:
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        top = tar.getnames()[0].split("/", 1)[0]
        pkg_info = tar.extractfile(f"{top}/PKG-INFO")
        assert pkg_info is not None
        meta = pkg_info.read().decode()
    for needed in ("LICENSE", "tests/test_gate.py", "tests/fixtures/raising.py", "docs/ci.md"):
        assert needed in names, needed
    assert "License-Expression: Apache-2.0" in meta
    assert "Classifier: Programming Language :: Python :: 3.11" in meta
    assert not any(n.endswith(".itf.json") for n in names)


def test_tests_run_from_the_sdist(sdist: Path, tmp_path: Path) -> None:
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    (unpacked,) = tmp_path.iterdir()
    env = {**os.environ, "PYTHONPATH": str(unpacked)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_gate.py",
            "-k",
            "junit or matching or project_manifest",
        ],
        cwd=unpacked,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
