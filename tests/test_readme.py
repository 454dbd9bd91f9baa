"""The README's commands and its spec example stay true."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from checker.cli.commands import main

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_starts_with_the_two_commands() -> None:
    text = README.read_text()
    first_block = re.search(r"```\n(.*?)```", text, re.S)
    assert first_block is not None
    assert first_block.group(1).split() == ["make", "demo", "make", "test"]


def test_readme_spec_example_runs(tmp_path: Path) -> None:
    text = README.read_text()
    # The example is the first Python block of "Writing a spec" (other sections
    # show fragments that are not whole specs).
    section = text.split("## Writing a spec", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    spec = tmp_path / "election_example.py"
    spec.write_text(block.group(1))
    result = CliRunner().invoke(main, ["run", str(spec), "--variant", "fix"])
    # Two servers can lead in term 0 in this toy: the example finds it in 2 steps.
    assert result.exit_code == 12, result.output
    assert "OneLeaderPerTerm is violated" in result.stdout
    assert "BecomeLeader(s2)" in result.stdout
    assert "counterexample, 2 actions" in result.stdout
