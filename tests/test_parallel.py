"""--workers N: the same counts, depth and counterexample as one worker."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checker import Options, check_spec
from checker import run as check
from checker.explore.result import Verdict
from mcheck_shipped.specs.die_hard import DieHard
from mcheck_shipped.specs.raft import Raft
from mcheck_shipped.specs.two_phase import TwoPhase
from tests.seed_helpers import figures
from tests.test_explore_properties import graphs
from tests.toy_models import GraphModel


@settings(max_examples=25, deadline=None)
@given(graphs(), st.booleans())
def test_two_workers_equal_one_on_random_graphs(case: Any, deadlock: bool) -> None:
    _n, edges, inits, bad = case
    one = check(GraphModel(inits, edges, bad=lambda s: s in bad), Options(deadlock=deadlock))
    two = check(
        GraphModel(inits, edges, bad=lambda s: s in bad),
        Options(deadlock=deadlock, workers=2),
    )
    assert figures(one) == figures(two)


def test_workers_equal_one_on_shipped_specs() -> None:
    for spec, sym in (
        (DieHard(), False),
        (TwoPhase(RM="4"), True),
        (TwoPhase(RM="4"), False),
        (Raft(Server="2", MaxTerm=2, MaxLogLen=1), False),
        (Raft(Server="2", MaxTerm=2, MaxLogLen=1), True),
    ):
        one = check_spec(spec, Options(symmetry=sym))
        # Three workers once (an odd split), two for the rest: each run starts processes.
        for workers in (2, 3) if isinstance(spec, Raft) and sym else (2,):
            many = check_spec(spec, Options(symmetry=sym, workers=workers))
            assert figures(one) == figures(many)
    r = check_spec(Raft(Server="2", MaxTerm=2, MaxLogLen=1), Options(symmetry=False, workers=2))
    assert (r.verdict, r.stats.distinct, r.stats.generated, r.stats.depth) == (
        Verdict.OK,
        1760,
        13797,
        28,
    )


def test_spec_errors_in_workers_are_reported_like_one_worker() -> None:
    from pathlib import Path

    from click.testing import CliRunner

    from checker.cli.commands import main

    spec = str(Path(__file__).parent / "fixtures" / "raising.py")
    for variant, needle, length in (
        ("action", "action Step raised ZeroDivisionError", 3),
        ("invariant", "invariant Fine raised KeyError", 2),
    ):
        r = CliRunner().invoke(main, ["run", spec, "--variant", variant, "--workers", "2"])
        assert r.exit_code == 2
        assert needle in r.stderr
        assert f"trace that reached it ({length} actions)" in r.stderr
        assert "Traceback" not in r.output


def test_max_states_stops_workers_where_one_process_stops() -> None:
    # A level is recorded whole when no limit falls inside it; a limit inside a level,
    # or exactly at its end (the states up to some depth), must cut it as one process.
    spec = Raft(Server="2", MaxTerm=2, MaxLogLen=1)
    boundary = check_spec(spec, Options(symmetry=False, max_depth=9)).stats.distinct
    for limit in (1, 7, 300, boundary - 1, boundary, boundary + 1):
        one = check_spec(spec, Options(symmetry=False, max_states=limit))
        two = check_spec(spec, Options(symmetry=False, max_states=limit, workers=2))
        assert one.verdict is Verdict.INCOMPLETE
        assert figures(one) == figures(two), limit
