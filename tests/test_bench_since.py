"""bench.since: an old commit beside this tree on one machine (issue 47's yardstick)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bench.since import ROOT, Speedup, has_spec, imports_from, summary


def _run(seconds: float, distinct: int = 10) -> dict[str, float]:
    return {"seconds": seconds, "distinct": distinct, "generated": 30, "depth": 4}


def test_summary_takes_medians_and_the_old_over_new_ratio() -> None:
    runs = {
        "old": [_run(30.0), _run(10.0), _run(20.0)],
        "new": [_run(4.0), _run(6.0), _run(5.0)],
        "TLC": [_run(2.0), _run(2.0), _run(3.0)],
    }
    got = summary(runs)
    assert got == Speedup(old_s=20.0, new_s=5.0, counts_agree=True, tlc_s=2.0)
    assert got.speedup == 4.0


def test_summary_flags_trees_that_counted_different_states() -> None:
    got = summary({"old": [_run(2.0, distinct=10)], "new": [_run(1.0, distinct=11)]})
    assert not got.counts_agree
    assert got.tlc_s is None


def test_this_tree_imports_its_own_checker() -> None:
    assert imports_from(ROOT).is_relative_to(ROOT.resolve())
    assert has_spec(ROOT, "paxos_commit") and not has_spec(ROOT, "no_such_spec")


@pytest.mark.skipif(
    not (ROOT / ".git").exists() or shutil.which("git") is None, reason="needs a git checkout"
)
def test_head_beside_itself_counts_the_same_and_leaves_no_worktree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.since import main

    main(["HEAD", "1", "--specs=die_hard,no_such_spec", "--no-build"])
    out = capsys.readouterr().out
    assert "no_such_spec: not in both trees, left out" in out
    row = next(line for line in out.splitlines() if "die_hard" in line and "│" in line)
    assert "14" in row and "x" in row and "COUNTS DIFFER" not in row
    trees = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True, check=True
    ).stdout
    assert "mcheck-since-" not in trees
