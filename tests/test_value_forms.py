"""One form for values on every screen (TLA+'s, or Python's on request), and a set's
change drawn as the members a step added and removed (issue 46)."""

from __future__ import annotations

import html
import textwrap
from pathlib import Path
from typing import Any, NamedTuple

import immutables
import pytest
from click.testing import CliRunner
from pyrsistent import pbag, pmap, pvector

from checker.cli.commands import main
from checker.values import ModelValue
from checker.values.show import STYLE_VARIABLE, show
from tests.soundness.values import Point, Role

FIXTURES = Path(__file__).parent / "fixtures"
PAXOS = str(FIXTURES / "paxos_msgs.py")


@pytest.fixture(autouse=True)
def _tla_form(monkeypatch: pytest.MonkeyPatch) -> None:
    # --values sets the variable for the process and its workers: undo it after each test.
    monkeypatch.setenv(STYLE_VARIABLE, "tla")
    # Wide enough that no table cell wraps a member (a suite's terminal may be narrow).
    monkeypatch.setenv("COLUMNS", "200")


def cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout


class Token(NamedTuple):
    pos: int
    color: str


S1 = ModelValue("s1", "Server", 0)
S2 = ModelValue("s2", "Server", 1)

CASES: list[tuple[Any, str, str]] = [
    ("white", '"white"', "'white'"),
    ('say "hi"\n', '"say \\"hi\\"\\n"', "'say \"hi\"\\n'"),
    (True, "TRUE", "True"),
    (None, "Nil", "None"),
    (S1, "s1", "s1"),
    (Role.LEADER, "LEADER", "Role.LEADER"),
    (Token(0, "black"), '[pos |-> 0, color |-> "black"]', "Token(pos=0, color='black')"),
    (Point(1, 2), "[src |-> 1, dst |-> 2]", "Point(src=1, dst=2)"),
    ((1, (2, 3)), "<<1, <<2, 3>>>>", "(1, (2, 3))"),
    (pvector([1]), "<<1>>", "[1]"),
    (frozenset({2, 1}), "{1, 2}", "{1, 2}"),
    (frozenset(), "{}", "frozenset()"),
    (immutables.Map({S2: 1, S1: 0}), "(s1 :> 0 @@ s2 :> 1)", "{s1: 0, s2: 1}"),
    (pmap({"b": 2, "a": 1}), "[a |-> 1, b |-> 2]", "{'a': 1, 'b': 2}"),
    (pmap({2: "y", 1: "x"}), '<<"x", "y">>', "{1: 'x', 2: 'y'}"),
    (pmap({0: "x", 1: "y"}), '(0 :> "x" @@ 1 :> "y")', "{0: 'x', 1: 'y'}"),
    (immutables.Map(), "<<>>", "{}"),
    (pbag([S1, S1, S2]), "(s1 :> 2 @@ s2 :> 1)", "pbag([s1, s1, s2])"),
]


@pytest.mark.parametrize(("value", "tla", "python"), CASES, ids=[c[1] for c in CASES])
def test_each_kind_is_written_as_tla_writes_it_or_as_python_does(
    value: Any, tla: str, python: str
) -> None:
    assert show(value) == tla
    assert show(value, style="tla") == tla
    assert show(value, style="python") == python


def test_a_long_value_is_cut_within_its_limit() -> None:
    text = show(frozenset(range(1000)), limit=50)
    assert len(text) <= 50 and text.startswith("{0, 1, 2")


def _run_paxos(tmp_path: Path, *before: str) -> tuple[str, Path]:
    trace = tmp_path / "p.itf.json"
    code, text = cli(*before, "run", PAXOS, "--trace-out", str(trace), "--no-color")
    assert code == 12, text
    return text, trace


GREW = '[type |-> "1b", acc |-> "a1", bal |-> 1]'
WHOLE = '{[type |-> "1a", bal |-> 0], [type |-> "1a", bal |-> 1]'


def test_a_growing_set_shows_what_each_step_added_in_every_view(tmp_path: Path) -> None:
    text, trace = _run_paxos(tmp_path)
    # The step's row names the one message sent; the whole set appears once, in the
    # violating state's listing, never as a before -> after cell.
    assert f"msgs + {GREW}" in text
    assert 'msgs + [type |-> "1a", bal |-> 0]' in text
    assert text.count(WHOLE) == 1
    code, shown = cli("show", str(trace), "--width", "200", "--no-color")
    assert code == 0 and f"msgs + {GREW}" in shown and shown.count(WHOLE) == 1
    page = tmp_path / "p.html"
    code, _ = cli("show", str(trace), "--format", "html", "--out", str(page))
    # The picture wraps a note at its lane's width: each step's note starts with the
    # member it added.
    notes = html.unescape(page.read_text())
    assert notes.count("msgs + [type |->") == 4 and 'msgs + [type |-> "1b", acc |->' in notes
    code, mermaid = cli("show", str(trace), "--format", "mermaid")
    # Mermaid cannot hold "|->" or "<<" in a note: its arrows are drawn as such.
    assert code == 0 and 'msgs + [type |→ "1b", acc |→ "a1", bal |→ 1]' in mermaid


def test_removed_members_a_cut_list_and_tla_equality_in_a_step(tmp_path: Path) -> None:
    spec = tmp_path / "swap.py"
    spec.write_text(
        textwrap.dedent(
            """
            from typing import NamedTuple
            from checker import Spec, action, invariant

            class S(NamedTuple):
                pool: frozenset
                flag: object

            class Swap(Spec):
                name = "swap"
                def init(self):
                    return [S(frozenset({0, 1, 2}), 1)]

                @action
                def Swap(self, s):
                    if 0 not in s.pool:
                        return None
                    return S(frozenset(range(1, 11)), True)

                @invariant
                def HasZero(self, s):
                    return 0 in s.pool
            """
        )
    )
    code, text = cli("run", str(spec), "--no-color")
    assert code == 12, text
    assert "pool - 0" in text
    # Eight members added: six drawn, the rest counted.
    assert "pool + 3" in text and "pool + 8" in text and "pool + 9" not in text
    assert "pool + and 2 more" in text
    # 1 and TRUE are different TLA+ values: the change is drawn (Python's == hides it).
    assert "flag 1->TRUE" in text


def test_python_form_on_request_by_option_or_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, trace = _run_paxos(tmp_path, "--values", "python")
    assert "msgs + M1b(type='1b', acc='a1', bal=1)" in text and "|->" not in text
    monkeypatch.setenv(STYLE_VARIABLE, "python")
    code, shown = cli("show", str(trace), "--no-color", "--width", "200")
    assert code == 0 and "msgs + M1b(type='1b', acc='a1', bal=1)" in shown
    code, shown = cli("--values", "tla", "show", str(trace), "--no-color", "--width", "200")
    assert code == 0 and f"msgs + {GREW}" in shown
    code, _ = cli("--values", "java", "show", str(trace))
    assert code == 2


def test_action_labels_write_their_arguments_in_the_same_form(tmp_path: Path) -> None:
    text, _ = _run_paxos(tmp_path)
    assert "Phase1b(<<0, 1>>)" in text
    text, _ = _run_paxos(tmp_path, "--values", "python")
    assert "Phase1b((0, 1))" in text
