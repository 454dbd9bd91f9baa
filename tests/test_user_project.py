"""A user's project outside this repository: its own specs run by name (before a
shipped spec of the same name), from ./specs or a configured folder, in run, list and
its own gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

COUNTER = '''
from checker import Spec, action, invariant

from limits import LIMIT  # a helper module beside the spec


class {cls}(Spec):
    """Counts to LIMIT; claims it never reaches 3."""

    def init(self):
        return [0]

    @action
    def Inc(self, s):
        return s + 1 if s < LIMIT else None

    @invariant
    def BelowThree(self, s):
        return s < 3
'''


def _project(root: Path, folder: str, name: str, cls: str = "MyCounter") -> None:
    specs = root / folder
    specs.mkdir(parents=True)
    (specs / f"{name}.py").write_text(COUNTER.format(cls=cls))
    (specs / "limits.py").write_text("LIMIT = 5\n")


def _mcheck(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("mcheck")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_project_spec_runs_by_name_in_run_list_and_gate(tmp_path: Path) -> None:
    _project(tmp_path, "specs", "my_counter")
    r = _mcheck(tmp_path, "run", "my_counter", "--json")
    assert r.returncode == 12, r.stdout + r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["property"] == "BelowThree"
    r = _mcheck(tmp_path, "list")
    assert "my_counter" in r.stdout and "die_hard" in r.stdout
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.mcheck.gate.check]]\nspec = "my_counter"\n'
        'expect = "violates BelowThree"\ntrace_length = 3\n'
    )
    r = _mcheck(tmp_path, "gate", "--jobs", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "traces" / "gate-my_counter-default.itf.json").is_file()


def test_configured_folder_and_a_shipped_name_taken_by_the_project(tmp_path: Path) -> None:
    _project(tmp_path, "models", "die_hard", cls="NotTheJugs")
    (tmp_path / "pyproject.toml").write_text('[tool.mcheck]\nspecs = "models"\n')
    r = _mcheck(tmp_path, "run", "die_hard", "--json")
    assert r.returncode == 12, r.stdout + r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["property"] == "BelowThree"  # the project's


def test_bad_specs_setting_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mcheck]\nspecs = 5\n")
    r = _mcheck(tmp_path, "run", "die_hard")
    assert r.returncode == 2
    assert "[tool.mcheck] specs" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("name", ["../escape", "a.b.c"])
def test_odd_names_do_not_reach_into_project_files(tmp_path: Path, name: str) -> None:
    _project(tmp_path, "specs", "ok")
    r = _mcheck(tmp_path, "run", name)
    assert r.returncode == 2 and "Traceback" not in r.stderr


OWN_INVARIANTS_SPEC = """
from checker import Spec, action, invariant

from invariants.bounds import below_three  # the project's own invariants package


class Bounded(Spec):
    def init(self):
        return [0]

    @action
    def Inc(self, s):
        return s + 1 if s < 5 else None

    @invariant
    def BelowThree(self, s):
        return below_three(s)
"""


def test_project_packages_named_specs_and_invariants_do_not_collide(tmp_path: Path) -> None:
    """The shipped specs and invariants install as mcheck_shipped.*: a project's own
    `specs` and `invariants` packages import as themselves, and shipped specs still
    find their own invariants beside them."""
    for pkg in ("specs", "invariants"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "invariants" / "bounds.py").write_text("def below_three(s):\n    return s < 3\n")
    (tmp_path / "specs" / "bounded.py").write_text(OWN_INVARIANTS_SPEC)
    r = _mcheck(tmp_path, "run", "bounded", "--json")
    assert r.returncode == 12, r.stdout + r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["property"] == "BelowThree"
    r = _mcheck(tmp_path, "run", "raft", "--const", "Server=2", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["distinct_states"] == 889
    # Nothing named specs or invariants is installed.
    probe = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('invariants'))"],
        cwd=tmp_path.parent,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert probe.stdout.strip() == "None", probe.stdout + probe.stderr
