"""The README's commands and its spec example stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
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


def _synopses(text: str) -> dict[str, set[str]]:
    """The options of each ``mcheck CMD ARG [--opt ...]`` synopsis in inline code."""
    found: dict[str, set[str]] = {}
    for m in re.finditer(r"`mcheck (\w+) [A-Z.]+[^`]*?\[--[^`]*`", text):
        found[m.group(1)] = set(re.findall(r"(--[a-z][a-z-]*)", m.group(0)))
    return found


def test_readme_synopses_list_every_option_help_has() -> None:
    synopses = _synopses(README.read_text())
    assert {"resume", "validate"} <= set(synopses)
    for name, options in synopses.items():
        command = main.commands[name]
        names = [o for p in command.params for o in (*p.opts, *p.secondary_opts)]
        has = {o for o in names if o.startswith("--")} - {"--help"}
        # A long option with an alias (--property/--invariant) needs only one name.
        aliases = [set(p.opts) for p in command.params if len(p.opts) > 1]
        missing = {o for o in has - options if not any(o in a and a & options for a in aliases)}
        assert not missing, (name, sorted(missing))
        assert not options - has, (name, sorted(options - has))


def test_exit_codes_are_one_table_in_help_readme_and_ci_docs() -> None:
    from checker.cli.exit_codes import EXIT_CODES

    for name, rows in EXIT_CODES.items():
        out = CliRunner().invoke(main, [name, "--help"], env={"COLUMNS": "200"}).output
        assert "Exit codes:" in out, name
        for code, meaning in rows:
            assert re.search(rf"^\s+{code}  {re.escape(meaning)}$", out, re.M), (name, code)
    # README's paragraph on run's codes and docs/ci.md's on the gate's name the same ones.
    readme = README.read_text().split("Exit codes follow TLC", 1)[1].split("\n\n", 1)[0]
    assert {int(c) for c in re.findall(r"`(\d+)`", readme)} == {c for c, _ in EXIT_CODES["run"]}
    ci = (README.parent / "docs" / "ci.md").read_text().split("- Exit codes", 1)[1]
    ci = ci.split("\n- ", 1)[0].split("\n\n", 1)[0]
    gate_codes = {c for c, _ in EXIT_CODES["gate"]}
    assert {int(c) for c in re.findall(r"\b(\d+)\s+[a-z]", ci)} == gate_codes


def test_the_readme_image_shows_today_s_picture() -> None:
    """docs/img/hdds-16932-bug.png was taken of the page mcheck draws today (its PNG
    records the page's digest); if not, `make readme-image` takes it again."""
    pytest.importorskip("PIL")
    from tests.readme_image import IMAGE, digest, page, recorded_digest

    assert f"]({IMAGE.relative_to(README.parent)})" in README.read_text()
    assert recorded_digest() == digest(page()), "the README image is stale: make readme-image"
