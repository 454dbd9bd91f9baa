"""Fairness grouped by a parameter (``grouped``), against TLC: FairGroups.tla, where
per-instance, per-acceptor and whole-family fairness give three verdicts (issue 46)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker import (
    EvaluationError,
    Options,
    Spec,
    SpecError,
    action,
    check_spec,
    eventually,
    grouped,
)
from checker.authoring.loader import load_spec_class
from checker.cli.commands import main
from checker.explore.result import Verdict

FIXTURES = Path(__file__).parent / "fixtures"
PORT = FIXTURES / "fair_groups.py"
TLC = FIXTURES / "tlc"


def _tlc(name: str) -> tuple[bool, int, int]:
    """TLC's output for one grouping: violated?, states generated, distinct."""
    text = (TLC / f"fair_groups_{name}.out").read_text()
    counts = re.findall(r"(\d+) states generated, (\d+) distinct states found, 0 states left", text)
    generated, distinct = counts[-1]
    return "Temporal property SecondDone was violated" in text, int(generated), int(distinct)


@pytest.mark.parametrize("name", ["instance", "acceptor", "family"])
def test_each_grouping_gives_tlc_s_verdict_and_counts(name: str) -> None:
    cls = load_spec_class(f"{PORT}:FairGroups{name.capitalize()}")
    violated, generated, distinct = _tlc(name)
    for workers in (1, 2):
        r = check_spec(cls(), Options(workers=workers))
        assert (r.verdict is Verdict.VIOLATION, r.stats.generated, r.stats.distinct) == (
            violated,
            generated,
            distinct,
        ), workers
    # TLC: the instance and the family forms fail, each acceptor fair holds.
    assert violated == (name != "acceptor")


@pytest.mark.parametrize(
    ("name", "code", "says"),
    [
        ("Instance", 0, "REPRODUCED"),
        # The lasso never lets a2 receive while some message always could reach it.
        ("Acceptor", 1, "Recv for a2 is enabled in every state of the cycle and never taken"),
        ("Family", 0, "REPRODUCED"),
    ],
)
def test_tlc_s_lasso_is_fair_only_where_tlc_s_grouping_allows_it(
    name: str, code: int, says: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        main,
        [
            "replay",
            f"{PORT}:FairGroups{name}",
            "--from-tlc",
            str(TLC / "fair_groups_instance.out"),
            "--out",
            str(tmp_path / "t.itf.json"),
        ],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == code, result.output
    assert says in result.output


def test_list_names_the_grouped_form() -> None:
    result = CliRunner().invoke(main, ["list", f"{PORT}:FairGroupsAcceptor"])
    assert "WF(Recv) as one action for each value its instances group by" in result.output


def test_a_grouping_must_be_a_function_and_its_errors_are_the_spec_s() -> None:
    with pytest.raises(SpecError, match="grouped"):

        class NotCallable(Spec):  # declaring the class is the test
            fairness = {"Go": grouped("weak", by=3)}  # type: ignore[arg-type]

            def init(self) -> list[int]:
                return [0]

            @action(over=lambda self: [1])
            def Go(self, s: int, p: int) -> int | None:
                return None

    class Raises(Spec):
        fairness = {"Go": grouped("weak", by=lambda p: 1 // 0)}

        def init(self) -> list[int]:
            return [0]

        @action(over=lambda self: [1])
        def Go(self, s: int, p: int) -> int | None:
            return 1 if s == 0 else None

        @eventually
        def Two(self, s: int) -> bool:
            return s == 2

    with pytest.raises(EvaluationError, match="fairness grouping of Go raised ZeroDivisionError"):
        check_spec(Raises(), Options(deadlock=False))
