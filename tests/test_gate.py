"""mcheck gate: expectations, failures, limits, JUnit, annotations, --update."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.cli.commands import main

GOOD = """
[[check]]
name = "die hard"
spec = "die_hard"
expect = "violates BigJugNotFour"
trace_length = 6

[[check]]
name = "two phase"
spec = "two_phase"
expect = "holds"
distinct_states = 80
"""


def gate(
    tmp_path: Path, text: str, *args: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    manifest = tmp_path / "gate.toml"
    manifest.write_text(text)
    r = CliRunner().invoke(main, ["gate", str(manifest), "--jobs", "1", *args], env=env)
    return r.exit_code, r.stdout, r.stderr


def test_matching_manifest_passes(tmp_path: Path) -> None:
    code, out, _ = gate(tmp_path, GOOD)
    assert code == 0, out
    assert "2 passed, 0 failed" in out


def test_flipped_expectation_fails_naming_the_check(tmp_path: Path) -> None:
    flipped = GOOD.replace('expect = "holds"', 'expect = "violates TCConsistent"')
    code, out, _ = gate(tmp_path, flipped)
    assert code == 1
    assert "FAIL two phase: expected violates TCConsistent, but it holds (unexpected pass)" in (
        " ".join(out.split())
    )
    flipped = GOOD.replace('expect = "violates BigJugNotFour"', 'expect = "holds"')
    code, out, _ = gate(tmp_path, flipped)
    assert code == 1
    flat = " ".join(out.split())
    assert "FAIL die hard: expected to hold, but violates BigJugNotFour" in flat
    assert "BigToSmall" in out  # the unexpected counterexample is shown


def test_changed_trace_length_or_count_fails(tmp_path: Path) -> None:
    code, out, _ = gate(tmp_path, GOOD.replace("trace_length = 6", "trace_length = 5"))
    assert code == 1
    assert "trace length 6, recorded 5" in " ".join(out.split())
    code, out, _ = gate(tmp_path, GOOD.replace("distinct_states = 80", "distinct_states = 81"))
    assert code == 1
    assert "80 distinct states, recorded 81" in " ".join(out.split())


def test_incomplete_check_fails(tmp_path: Path) -> None:
    limited = (
        GOOD
        + '\n[[check]]\nname = "limited"\nspec = "two_phase"\nexpect = "holds"\nmax_states = 5\n'
    )
    code, out, _ = gate(tmp_path, limited, "--only", "limited")
    assert code == 1
    assert "incomplete" in out and "never a pass" in " ".join(out.split())


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[check]]\nspec = "nope"\nexpect = "holds"\n', "unknown spec 'nope'"),
        (
            '[[check]]\nspec = "die_hard"\nvariant = "fix"\nexpect = "holds"\n',
            "unknown variant 'fix'",
        ),
        (
            '[[check]]\nspec = "die_hard"\nconstants = { Huge = 1 }\nexpect = "holds"\n',
            "unknown constant 'Huge'",
        ),
        ('[[check]]\nspec = "die_hard"\nexpect = "violates Nope"\n', "has no property 'Nope'"),
        ('[[check]]\nspec = "die_hard"\nexpect = "maybe"\n', "expect must be"),
        ("[[check]\n", "not valid TOML"),
        ("[tool]\nx = 1\n", "lists no checks"),
        # Type confusion: each was read wrongly or crashed before (issue 18).
        (
            '[[check]]\nspec = "die_hard"\nexpect = "holds"\nsymmetry = "false"\n',
            "symmetry must be",
        ),
        ('[[check]]\nspec = "die_hard"\nexpect = "holds"\ntrace_length = "6"\n', "an integer"),
        (
            '[[check]]\nspec = "die_hard"\nexpect = "holds"\nmax_states = -1\n',
            "max_states must be a positive integer",
        ),
        ('[[check]]\nspec = "die_hard"\nexpect = "holds"\nconstants = 5\n', "a table"),
        ('[[check]]\nspec = "die_hard"\nexpect = "holds"\ntimeout = "x"\n', "a number"),
        ('[[check]]\nspec = "die_hard"\nexpect = "holds"\ninvariants = [1]\n', "names"),
        ('[[tool.mcheck.gate]]\nname = "x"\n', "lists no checks"),
        ("[tool.mcheck]\ngate = 5\n", "lists no checks"),
        ("check = 5\n", "must be tables"),
    ],
)
def test_bad_manifest_is_one_line_exit_2(tmp_path: Path, text: str, needle: str) -> None:
    code, out, err = gate(tmp_path, text)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in out + err


def test_junit_report_parses_with_the_right_counts(tmp_path: Path) -> None:
    flipped = GOOD.replace('expect = "holds"', 'expect = "violates TCConsistent"')
    junit = tmp_path / "report.xml"
    code, _, _ = gate(tmp_path, flipped, "--junit", str(junit))
    assert code == 1
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    assert root.get("tests") == "2" and root.get("failures") == "1"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["die hard", "two phase"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and "unexpected pass" in (failure.get("message") or "")
    out = cases[0].find("system-out")
    assert out is not None and "trace file: " in (out.text or "")


def test_junit_report_validates_against_the_junit_10_layout(tmp_path: Path) -> None:
    """The layout CI reporters read (tests/fixtures/schemas/junit.xsd): a raising spec
    is an <error>, a mismatch a <failure>, properties only at suite level."""
    xmlschema = pytest.importorskip("xmlschema")
    raising = Path(__file__).parent / "fixtures" / "raising.py"
    text = GOOD.replace('expect = "holds"', 'expect = "violates TCConsistent"') + (
        f'\n[[check]]\nname = "raises"\nspec = "{raising}"\nvariant = "action"\nexpect = "holds"\n'
    )
    junit = tmp_path / "report.xml"
    code, _, _ = gate(tmp_path, text, "--junit", str(junit))
    assert code == 1
    schema = xmlschema.XMLSchema(Path(__file__).parent / "fixtures" / "schemas" / "junit.xsd")
    schema.validate(str(junit))
    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    (suite,) = root.findall("testsuite")
    assert suite.find("properties") is not None
    raised = suite.findall("testcase")[2]
    assert raised.find("error") is not None and raised.find("failure") is None
    assert not root.findall(".//testcase/properties")


def test_github_annotations_and_step_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    flipped = GOOD.replace('expect = "violates BigJugNotFour"', 'expect = "holds"')
    code, out, _ = gate(
        tmp_path,
        flipped,
        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(lines) == 1
    assert "file=specs/die_hard.py" in lines[0] and ",line=" in lines[0]
    assert "| die hard |" in summary.read_text()


def test_update_rewrites_recorded_figures(tmp_path: Path) -> None:
    stale = GOOD.replace("trace_length = 6", "trace_length = 9  # old").replace(
        "distinct_states = 80", "distinct_states = 1"
    )
    code, out, _ = gate(tmp_path, stale, "--update")
    assert code == 0, out
    assert "updated die hard: trace_length 9 -> 6" in out
    text = (tmp_path / "gate.toml").read_text()
    assert "trace_length = 6" in text and "# old" in text
    assert "distinct_states = 80" in text and "distinct_states = 14" in text
    code, out, _ = gate(tmp_path, text)
    assert code == 0


def test_update_keeps_every_comment_in_its_place(tmp_path: Path) -> None:
    """A figure the check did not record yet goes after its last key, not below the
    comment that introduces the next check; escaped names are matched."""
    text = (
        '[[check]]\nname = "die \\"hard\\""  # quoted\nspec = "die_hard"\n'
        'expect = "violates BigJugNotFour"\n\n'
        "# The next check: two phase commit.\n"
        '[[check]]\nname = "two phase"\nspec = "two_phase"\nexpect = "holds"\n'
    )
    code, out, _ = gate(tmp_path, text, "--update")
    assert code == 0, out
    got = (tmp_path / "gate.toml").read_text()
    lines = got.splitlines()
    comment = lines.index("# The next check: two phase commit.")
    assert lines[comment + 1] == "[[check]]"  # still right above its check
    assert lines.index("trace_length = 6") < comment
    assert "# quoted" in got
    code, _, _ = gate(tmp_path, got)
    assert code == 0


def test_project_manifest_covers_every_shipped_spec_and_variant() -> None:
    import tomllib

    from checker.authoring.loader import available_specs, load_spec_class

    root = Path(__file__).resolve().parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text())
    checks = data["tool"]["mcheck"]["gate"]["check"]
    covered = {(c["spec"], c.get("variant")) for c in checks}
    for name in available_specs():
        cls = load_spec_class(name)
        for variant in cls.variants:
            default = cls.variants[0]
            assert (name, variant) in covered or (variant == default and (name, None) in covered)


def test_counterexamples_are_kept_under_traces(tmp_path: Path) -> None:
    """Every counterexample the gate finds is saved as ITF beside the manifest (CI
    uploads the folder); the step summary names each file, and the file replays."""
    summary = tmp_path / "summary.md"
    code, out, _ = gate(
        tmp_path, GOOD, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert code == 0, out
    saved = tmp_path / "traces" / "gate-die-hard.itf.json"
    assert saved.is_file()
    assert sorted(p.name for p in (tmp_path / "traces").iterdir()) == [saved.name]
    assert "1 counterexample(s) saved under" in " ".join(out.split())
    assert "gate-die-hard.itf.json" in summary.read_text()
    r = CliRunner().invoke(main, ["replay", str(saved)])
    assert r.exit_code == 0 and "ends in a violation of BigJugNotFour" in r.stdout
    other = tmp_path / "elsewhere"
    code, _, _ = gate(tmp_path, GOOD, "--traces", str(other))
    assert code == 0 and (other / saved.name).is_file()


def test_spec_paths_resolve_against_the_manifest_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    spec = Path(__file__).parent / "fixtures" / "bounded_counter.py"
    (project / "models" / "counter.py").write_text(spec.read_text())
    (project / "gate.toml").write_text(
        '[[check]]\nspec = "models/counter.py"\ninvariants = ["ReachesGoal"]\n'
        'expect = "violates ReachesGoal"\n'
    )
    monkeypatch.chdir(tmp_path)  # not the manifest's folder
    r = CliRunner().invoke(main, ["gate", str(project / "gate.toml"), "--jobs", "1"])
    assert r.exit_code == 0, r.output


def test_annotation_points_at_a_temporal_property_definition(tmp_path: Path) -> None:
    text = (
        '[[check]]\nname = "dn liveness"\nspec = "scm_new_leader_dn_server_start"\n'
        'variant = "mutant_never_start_leader"\ninvariants = ["DNServerEventuallyStarts"]\n'
        'expect = "holds"\n'
    )
    code, out, _ = gate(tmp_path, text, env={"GITHUB_ACTIONS": "true"})
    assert code == 1
    (line,) = [x for x in out.splitlines() if x.startswith("::error ")]
    src = Path(__file__).resolve().parent.parent / "specs" / "scm_new_leader_dn_server_start.py"
    want = next(
        n
        for n, text in enumerate(src.read_text().splitlines(), 1)
        if text.lstrip().startswith("def DNServerEventuallyStarts")
    )
    assert "file=specs/scm_new_leader_dn_server_start.py" in line
    assert f",line={want}," in line


def test_parallel_gate_starts_the_biggest_check_first_and_reports_in_manifest_order(
    tmp_path: Path,
) -> None:
    """With two processes the check the manifest records as biggest is submitted
    first (a gate lasts as long as its longest check: it must not start last), and
    the report keeps the manifest's order."""
    from checker.cli import gate as gate_module

    checks = gate_module.load_manifest(_write(tmp_path, GOOD))
    submitted: list[str] = []
    real = gate_module.CheckPool

    class Recording(real):  # type: ignore[misc, valid-type]
        def map(self, tasks):  # type: ignore[no-untyped-def]
            submitted.extend(task.name for _, task in tasks)
            return super().map(tasks)

    gate_module.CheckPool = Recording  # type: ignore[misc]
    try:
        outcomes, interrupted = gate_module.run_all(checks, jobs=2)
    finally:
        gate_module.CheckPool = real  # type: ignore[misc]
    assert not interrupted
    assert submitted == ["two phase", "die hard"]  # 80 recorded states before none
    assert [o.check.name for o in outcomes] == ["die hard", "two phase"]
    assert all(o.problems == [] for o in outcomes)


def _write(tmp_path: Path, text: str) -> Path:
    manifest = tmp_path / "gate.toml"
    manifest.write_text(text)
    return manifest
