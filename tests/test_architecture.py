"""The rooms of checker/ import one way (docs/architecture.md), and no module imports
itself through others.

The layers are declared in pyproject.toml ([tool.importlinter]) and checked here with
import-linter, as `make lint` does; circles inside a room, which layers do not see,
with grimp (import-linter's import graph) and networkx.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx

ROOT = Path(__file__).resolve().parent.parent


def test_the_rooms_import_downwards_only() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--config", "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "KEPT" in done.stdout and "BROKEN" not in done.stdout


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph("checker", exclude_type_checking_imports=True)
    edges = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, imported)
    cycles = list(nx.simple_cycles(edges))
    assert cycles == [], [" -> ".join(c) for c in cycles[:5]]


def test_every_module_is_in_a_room() -> None:
    """checker/ holds rooms (subpackages) and, at the top, only the public facade and
    the modules kept so that the documented imports keep working."""
    top = sorted(p.stem for p in (ROOT / "checker").glob("*.py"))
    assert top == ["__init__", "__main__", "errors", "loader", "result", "validate"]


def test_graph_restarts_as_run_does(tmp_path: Path) -> None:
    """mcheck graph assembled its own exploration and did not handle the fast engine's
    Restart: a map that gains a key after the pilot made it exit 255 where mcheck run
    passes.  Both now come through checker.check.assemble."""
    spec = str(ROOT / "tests" / "fixtures" / "growing_keys.py")
    out = tmp_path / "g.graphml"
    for args in (["run", spec], ["graph", spec, "--out", str(out), "--max-nodes", "20000"]):
        done = subprocess.run(
            [sys.executable, "-m", "checker", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert out.stat().st_size > 0


def test_the_options_table_is_the_one_source() -> None:
    """Each run option reaches the command line, the gate's keys and the checkpoint's
    identity from checker.explore.options.RUN_OPTIONS, not from copies by hand."""
    from checker.check.checkpoint import identity_of
    from checker.cli.commands import run as run_command
    from checker.explore.options import RUN_OPTIONS, Options, gate_keys
    from checker.model import CompiledSpec
    from mcheck_shipped.specs.die_hard import DieHard

    flags = {opt for p in run_command.params for opt in p.opts + p.secondary_opts}
    for o in RUN_OPTIONS:
        for flag in o.flag.split("/"):
            assert flag in flags, flag
    assert gate_keys() == {o.gate: o.name for o in RUN_OPTIONS if o.gate is not None}
    ident = identity_of(CompiledSpec(DieHard()), True, "bfs", True, Options())
    table = {o.name for o in RUN_OPTIONS if o.identity}
    assert table <= set(ident) and table == {"strategy", "symmetry", "deadlock", "max_depth"}
