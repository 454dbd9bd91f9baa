"""The source distribution is complete: licence metadata, and tests that run from it."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the sdist with the venv's setuptools (the build-system floor, >= 77)."""
    out = tmp_path_factory.mktemp("dist")
    code = (
        "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return out / done.stdout.strip().splitlines()[-1]


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
