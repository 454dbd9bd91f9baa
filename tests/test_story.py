"""A variant's story (checker.Story): what ``mcheck run SPEC --variant bug`` tells when
the command line chooses nothing, the report's order and symptom rather than the
shortest violation of any property; ``--const`` and ``--invariant`` still win, and
``resume`` checks what the interrupted run checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker import Spec, SpecError, Story, action, invariant

ROOT = Path(__file__).resolve().parent.parent
MCHECK = [sys.executable, "-m", "checker"]


def _mcheck(*args: str, cwd: Path = ROOT) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [*MCHECK, *args, "--json"], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, (json.loads(lines[-1]) if lines else {}), proc.stderr


def _run(*args: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    code, out, err = _mcheck("run", *args, "--trace-out", str(tmp_path / "t.itf.json"))
    assert code in (0, 12, 13), err
    return code, out


@pytest.mark.parametrize(
    ("spec", "prop", "length", "loop", "constants"),
    [
        # HDDS-16932: the download ends after the leader change, as the report has it.
        ("scm_install_snapshot_leader_change", "NoStuckInstallInProgress", 6, None,
         {"TIMING": "report"}),
        # HDDS-17579: a write acknowledged, leadership moved, the new leader's read.
        ("om_leader_ready_before_apply", "NoStaleRead", 11, None, {}),
        # RATIS-1369: ALREADY_INSTALLED, then the appends F rejects for ever.
        ("ratis_empty_snapshot_index_default", "FollowerEventuallyCatchesUp", 6, 3, {}),
        # HDDS-16454: the restarted leader starts its datanode server and drops a report.
        ("scm_new_leader_dn_server_start", "NoContainerReportDropped", 2, None,
         {"DN_REPORTS": True}),
    ],
)  # fmt: skip
def test_the_bug_variant_tells_the_reports_story(
    tmp_path: Path,
    spec: str,
    prop: str,
    length: int,
    loop: int | None,
    constants: dict[str, Any],
) -> None:
    code, out = _run(spec, "--variant", "bug", tmp_path=tmp_path)
    assert (out["result"], out["property"], out["trace_length"]) == ("violation", prop, length)
    assert out["loop_start"] == loop
    assert code == (13 if loop is not None else 12)
    for name, value in constants.items():
        assert out["constants"][name] == value
    # The default variant is bug: `mcheck run SPEC` tells the same story.
    _, plain = _run(spec, tmp_path=tmp_path)
    assert (plain["property"], plain["trace_length"]) == (prop, length)


def test_the_story_is_said_under_the_header(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*MCHECK, "run", "om_leader_ready_before_apply", "--variant", "bug",
         "--trace-out", str(tmp_path / "t.itf.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    text = " ".join(proc.stdout.split())
    assert "the report's story (a write the old leader acknowledged" in text
    assert "--invariant all checks every property" in text


def test_invariant_all_and_const_win_over_the_story(tmp_path: Path) -> None:
    # Every property: the mechanism's invariant breaks first, in 7 actions.
    _, every = _run(
        "om_leader_ready_before_apply", "--variant", "bug", "--invariant", "all",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert (every["property"], every["trace_length"]) == (
        "NewLeaderReadyOnlyAfterPreviousTermApplied",
        7,
    )
    # A constant given on the command line: the download may end at any moment (the
    # gate row "HDDS-16932 bug": 258 states; the report's timing has 290).
    _, anytime = _run(
        "scm_install_snapshot_leader_change", "--variant", "bug", "--const", "TIMING=any",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert anytime["constants"]["TIMING"] == "any"
    assert (anytime["distinct_states"], anytime["trace_length"]) == (258, 6)
    _, story = _run("scm_install_snapshot_leader_change", "--variant", "bug", tmp_path=tmp_path)
    assert story["distinct_states"] == 290
    # A variant without a story checks every property at the class's constants.
    _, fix = _run("scm_new_leader_dn_server_start", "--variant", "fix", tmp_path=tmp_path)
    assert fix["result"] == "ok" and fix["constants"]["DN_REPORTS"] is False


def test_simulate_tells_the_story_too(tmp_path: Path) -> None:
    code, out, err = _mcheck(
        "simulate", "om_leader_ready_before_apply", "--variant", "bug", "--seed", "1",
        "--timeout", "120", "--trace-out", str(tmp_path / "t.itf.json"),
    )  # fmt: skip
    assert code == 12, err
    assert out["property"] == "NoStaleRead"


def _stopped_then_resumed(spec: str, max_states: int, tmp_path: Path) -> dict[str, Any]:
    """Run SPEC's bug variant with no option naming constants or properties until
    --max-states stops it, resume it, and return the resumed run's JSON."""
    folder = tmp_path / f"ck-{spec}"
    stopped, first, err = _mcheck(
        "run", spec, "--variant", "bug", "--no-symmetry", "--checkpoint", str(folder),
        "--checkpoint-every", "0.000001", "--max-states", str(max_states),
    )  # fmt: skip
    assert (stopped, first["result"]) == (3, "incomplete"), err
    out = tmp_path / f"{spec}.itf.json"
    code, resumed, err = _mcheck("resume", str(folder), "--trace-out", str(out))
    assert code == 12, err
    return resumed


def test_resume_checks_what_the_story_chose(tmp_path: Path) -> None:
    # The story's property, recorded by the run: over every property the resumed run
    # would stop at the readiness invariant (7 actions).
    out = _stopped_then_resumed("om_leader_ready_before_apply", 300, tmp_path)
    assert (out["property"], out["trace_length"]) == ("NoStaleRead", 11)
    # And the story's constants: DN_REPORTS=TRUE is not on the command line.
    out = _stopped_then_resumed("scm_new_leader_dn_server_start", 3, tmp_path)
    assert out["property"] == "NoContainerReportDropped"
    assert out["constants"]["DN_REPORTS"] is True


def test_list_shows_the_stories() -> None:
    proc = subprocess.run(
        [*MCHECK, "list", "scm_new_leader_dn_server_start"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    text = " ".join(proc.stdout.split())
    assert "story of bug: a restarted SCM wins the election" in text
    assert "DN_REPORTS=TRUE, NoContainerReportDropped" in text


class _Counter(Spec):
    constants = {"N": 2}
    variants = ("bug", "fix")

    def init(self) -> list[int]:
        return [0]

    @action
    def Up(self, s: int) -> int | None:
        return s + 1 if s < self.N else None

    @invariant
    def Small(self, s: int) -> bool:
        return s < 2


@pytest.mark.parametrize(
    ("stories", "message"),
    [
        ({"bgu": Story()}, "stories names variant 'bgu', which it does not declare"),
        ({"bug": Story(constants={"M": 1})}, "sets 'M', which is not a constant"),
        ({"bug": Story(check=("Smal",))}, "checks 'Smal', which is not a property"),
        ({"bug": Story(check=("Up",))}, "checks 'Up', which is not a property"),
        ({"bug": {"check": ("Small",)}}, "is dict, not a checker.Story"),
    ],
)
def test_a_wrong_story_is_refused_when_the_spec_is_defined(
    stories: dict[str, Any], message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        type("Told", (_Counter,), {"stories": stories})
