"""The pytest plugin: ``pytest --mcheck-gate`` runs a manifest's checks as items, and
the README's Python API example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from tests.test_gate import GOOD

ROOT = Path(__file__).resolve().parent.parent

# test_gate's two checks, the second with a wrong count: one pass, one failure.
MANIFEST = GOOD.replace("distinct_states = 80", "distinct_states = 81").replace(
    'name = "two phase"', 'name = "two phase, wrong count"'
)


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_plugin_is_an_entry_point() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert names.get("mcheck") == "checker.cli.pytest_plugin"


def test_gate_checks_run_as_pytest_items(tmp_path: Path) -> None:
    (tmp_path / "gate.toml").write_text(MANIFEST)
    run = _pytest(tmp_path, "--mcheck-gate=gate.toml")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout
    assert "two phase, wrong count: 80 distinct states, recorded 81" in run.stdout
    # Off unless asked for: the same folder without the option runs nothing of it.
    quiet = _pytest(tmp_path)
    assert "passed" not in quiet.stdout and "failed" not in quiet.stdout


def test_ini_setting_selects_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "gate.toml").write_text(MANIFEST.split('\n[[check]]\nname = "two')[0])
    (tmp_path / "pytest.ini").write_text("[pytest]\nmcheck_gate = gate.toml\n")
    run = _pytest(tmp_path)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr


def test_readme_python_api_example_runs(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"```python\n(# test_my_spec\.py.*?)```", text, re.S)
    assert m, "the README's pytest example"
    (tmp_path / "test_my_spec.py").write_text(m.group(1))
    run = _pytest(tmp_path, "test_my_spec.py")
    assert run.returncode == 0 and "passed" in run.stdout, run.stdout + run.stderr
