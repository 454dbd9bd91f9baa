"""TLC's counterexamples transplanted into the Python ports (``replay --from-tlc``).

The fixtures in tests/fixtures/tlc/ were written by TLC (2026.12 build of tlaplus/
tlaplus, ``-workers 1``) on the MC modules beside them; see their README.  Each model's
counterexample in every format TLC writes must reproduce in the port, and a port with
one action changed must diverge at the right state, naming the action and variable.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker import CompiledSpec
from checker.authoring.loader import load_spec_class
from checker.check.transplant import transplant
from checker.traces.tla_values import (
    TlaValueError,
    agrees,
    canon,
    from_json,
    parse_value,
    tla_text,
)
from checker.traces.tlc_trace import read_tlc
from checker.values import ModelValue

TLC = Path(__file__).parent / "fixtures" / "tlc"
PORTS = str(TLC / "ports.py")

#: (fixture stem, port class, the property the port must see fail, TLC's verdict)
MODELS = [
    ("tcommit", "MCTCommit", "NotAllCommitted", "invariant"),
    ("tcommit_deadlock", "MCTCommit", None, "deadlock"),
    ("ewd840", "MCEWD840", "TokenAlwaysBlack", "invariant"),
    ("ewd840_action", "MCEWD840", "NeverChangeColor", "action property"),
    ("ewd840_lasso", "MCEWD840", "DetectedInfinitelyOften", "temporal"),
    ("raft", "MCraft", "NeverLeader", "invariant"),
    # (frozen dataclass states and a nested record; -difftrace diffs the state before
    # the last against the one two before it: see tlc_trace._second_to_last_doubt)
    ("ewd998_no_rule3", "MCEWD998", "Inv", "invariant"),
    ("token_ring", "MCTokenRing", "CounterSettles", "temporal"),
]
#: Where each lasso's cycle goes back to (0-based), as TLC printed it.
LOOPS = {"ewd840_lasso": 0, "token_ring": 0}
#: TLC's plain output, -difftrace, -tool, -dumpTrace json and -dumpTrace tla.
FORMATS = [".out", ".diff.out", ".tool.out", ".json", "_trace.tla"]


def _port(name: str) -> tuple[CompiledSpec, type]:
    cls = load_spec_class(f"{PORTS}:{name}")
    return CompiledSpec(cls(), symmetry=False), cls


def _transplant(stem: str, suffix: str, port: str) -> Any:
    model, cls = _port(port)
    return transplant(
        model, cls, read_tlc(TLC / f"{stem}{suffix}"), getattr(cls, "tla_mapping", None)
    )


@pytest.mark.parametrize("suffix", FORMATS)
@pytest.mark.parametrize(("stem", "port", "prop", "verdict"), MODELS)
def test_every_format_of_every_model_reproduces(
    stem: str, port: str, prop: str | None, verdict: str, suffix: str
) -> None:
    tlc = read_tlc(TLC / f"{stem}{suffix}")
    if suffix.endswith(".out"):
        assert tlc.verdict == verdict
    done = _transplant(stem, suffix, port)
    assert done.reproduced, (done.message, done.details)
    assert done.result is not None and done.result.trace is not None
    if prop is not None:
        assert done.result.violated == prop
    else:
        assert "deadlock" in done.message
    assert done.result.trace.length == len(tlc.states) - 1
    if verdict == "temporal":
        assert done.result.trace.loop == tlc.loop == LOOPS[stem]
        assert f"violates {prop}" in done.message


def test_a_long_simulated_counterexample_reproduces() -> None:
    """TLC -simulate's 25-step raft.tla counterexample, as text and as JSON."""
    for suffix in (".out", ".json"):
        done = _transplant("raft_long", suffix, "MCraft")
        assert done.reproduced, done.message
        assert done.result.trace.length == 25


@pytest.mark.parametrize("suffix", FORMATS)
def test_a_mutant_diverges_at_the_step_naming_action_and_variable(suffix: str) -> None:
    """Prepare(r2) aborts in the mutant: TLC's state 3 is where no behaviour goes on."""
    done = _transplant("tcommit", suffix, "MutantTCommit")
    assert not done.reproduced
    assert done.state == 3
    assert "Prepare" in (done.tlc_action or "")
    assert done.details[0] == "Prepare(r2) differs in 1 variable(s)"
    assert done.details[1].startswith("  rmState: TLC has")
    assert '"aborted"' in done.details[1]


@pytest.mark.parametrize("suffix", [".out", ".json", "_trace.tla"])
def test_a_raft_mutant_diverges_where_the_leader_is_elected(suffix: str) -> None:
    done = _transplant("raft", suffix, "MutantRaft")
    assert not done.reproduced
    assert done.state == 10
    assert done.details[0] == "BecomeLeader(s1) differs in 1 variable(s)"
    assert done.details[1].startswith("  elections: TLC has")


def test_tlc_s_difftrace_leaves_the_state_before_the_last_in_doubt() -> None:
    """TLC diffed EWD998's state 6 against state 4: counter, changed at state 5 and
    not printed at 6, is unknown there, not state 5's value (the run it came from
    says (1, 0) at state 6, which is state 4's); the other formats print it."""
    diff = read_tlc(TLC / "ewd998_no_rule3.diff.out")
    whole = read_tlc(TLC / "ewd998_no_rule3.out")
    assert len(diff.states) == len(whole.states) == 7
    assert "counter" not in diff.states[5]
    assert whole.states[5]["counter"] == whole.states[3]["counter"] != whole.states[4]["counter"]
    assert any("diffs state 6 against state 4" in note for note in diff.notes)
    for i in (0, 1, 2, 3, 4, 6):
        assert diff.states[i] == whole.states[i]
    assert {k: v for k, v in whole.states[5].items() if k != "counter"} == diff.states[5]
    # The other -difftrace fixtures end as TLC diffed them, or as a lasso: untouched.
    for stem in ("tcommit", "raft", "ewd840_lasso", "token_ring"):
        assert not any("diffs state" in n for n in read_tlc(TLC / f"{stem}.diff.out").notes)


def test_the_unfair_lasso_is_refused_where_the_port_keeps_fairness_tlc_lacked() -> None:
    """TLC's lasso of Liveness without fairness stutters; the port has WF: no reproduction."""
    model, cls = _port("MCEWD840")
    tlc = read_tlc(TLC / "ewd840_lasso.out")
    # The same cycle, but declared to stutter at its first state (TLC's Stuttering).
    tlc.states, tlc.actions, tlc.numbers, tlc.loop = tlc.states[:1], tlc.actions[:1], [1], 0
    done = transplant(model, cls, tlc, None)
    assert not done.reproduced
    assert "not a fair behaviour" in done.message


# -- the value reader ---------------------------------------------------------------


def test_tla_values_in_full() -> None:
    v = parse_value('[a |-> 1, b |-> <<TRUE, "x">>, c |-> {s1, s2}, d |-> (0 :> -1 @@ 1 :> 2)]')
    assert tla_text(v) == '[a |-> 1, b |-> <<TRUE, "x">>, c |-> {s1, s2}, d |-> <<-1, 2>>]'
    assert parse_value("1..3") == ("set", frozenset({("i", 1), ("i", 2), ("i", 3)}))
    assert parse_value("[x \\in {1, 2} |-> 0]") == parse_value("<<0, 0>>")
    assert parse_value('"a\\"b"') == ("s", 'a"b')
    assert parse_value("<<>>") == canon({})  # TLC prints an empty function so
    assert parse_value("(s1 :> 1 @@ s2 :> 2)") == (
        "fn",
        frozenset({(("m", "s1"), ("i", 1)), (("m", "s2"), ("i", 2))}),
    )
    for bad in ("(s1 :> )", "[a |-> 1", "{1, 2", "<<1,, 2>>", "1 2", "(a :> 1 @@ a :> 2)", "$"):
        with pytest.raises(TlaValueError):
            parse_value(bad)
    with pytest.raises(TlaValueError):
        parse_value("<<" * 500 + ">>" * 500)


def test_the_spec_values_agree_with_tla_where_tla_says_they_are_equal() -> None:
    s1 = ModelValue("s1", "Server", 0)
    assert agrees(parse_value("(s1 :> Leader)"), canon({s1: "Leader"}))  # model value ~ string
    assert agrees(parse_value("<<FALSE, TRUE>>"), canon((False, True)))
    assert agrees(parse_value("(0 :> FALSE @@ 1 :> TRUE)"), canon((False, True)))
    assert not agrees(parse_value("<<1>>"), canon((True,)))  # TRUE is not 1
    assert not agrees(parse_value("{1, 2}"), canon((1, 2)))  # a set is not a sequence
    # JSON arrays are either: compared as what the spec's value is.
    assert agrees(from_json([2, 1]), canon(frozenset({1, 2})))
    assert agrees(from_json([1, 2]), canon((1, 2)))
    assert not agrees(from_json([2, 1]), canon((1, 2)))


# -- bad input: one line, exit 2 ----------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checker", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    text = (TLC / "raft.out").read_text()
    cut = text[: text.index("State 4:") + 200]  # ends inside a value
    (tmp_path / "cut.out").write_text(cut)
    (tmp_path / "readme.out").write_text("not a counterexample at all\n")
    (tmp_path / "dump.json").write_text(
        '{"counterexample": {"state": [[1, {"x": 1}]], "action": []}}'
    )
    (tmp_path / "bad.tla").write_text(
        "---- MODULE m ----\nCounterExample == [state |-> {<<1, [x |-> ]>>}]\n====\n"
    )
    big = tmp_path / "big.out"
    with open(big, "wb") as fh:  # a sparse gigabyte: refused by its size, not read
        fh.truncate(1 << 30)
    cases = {
        "cut.out": "variable",
        "readme.out": "no TLC counterexample",
        "dump.json": "not a variable of",
        "bad.tla": "not a TLA+ value TLC prints",
        "big.out": "larger than",
        "missing.out": "not found",
    }
    for name, words in cases.items():
        got = _cli("replay", f"{PORTS}:MCraft", "--from-tlc", str(tmp_path / name), cwd=tmp_path)
        assert got.returncode == 2, (name, got.stdout, got.stderr)
        lines = got.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mcheck: error:"), (name, got.stderr)
        assert words in lines[0], (name, lines[0])


def test_a_mapping_value_with_no_tla_form_is_one_line_and_exit_2(tmp_path: Path) -> None:
    port = tmp_path / "float_port.py"
    port.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(TLC)!r})\n"
        "from ports import MCraft\n"
        "from checker.check.validate import LogMapping\n"
        "class FloatRaft(MCraft):\n"
        "    tla_mapping = LogMapping(events={}, values={'Nil': 1.5})\n"
    )
    got = _cli("replay", f"{port}:FloatRaft", "--from-tlc", str(TLC / "raft.out"), cwd=tmp_path)
    assert got.returncode == 2, got.stdout + got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "float has no TLA+ form" in lines[0], got.stderr


def test_the_command_reproduces_and_saves_the_trace(tmp_path: Path) -> None:
    got = _cli("replay", "tcommit", "--from-tlc", str(TLC / "tcommit.tool.out"),
               "--out", "t.itf.json", cwd=tmp_path)  # fmt: skip
    # The shipped port has no NotAllCommitted: the behaviour is found, the property
    # named as missing, not guessed.
    assert got.returncode == 1, got.stdout + got.stderr
    assert "TLC's property NotAllCommitted is not a property of tcommit" in got.stdout
    got = _cli("replay", f"{PORTS}:MCTCommit", "--from-tlc", str(TLC / "tcommit.out"),
               "--out", "t.itf.json", cwd=tmp_path)  # fmt: skip
    assert got.returncode == 0, got.stdout + got.stderr
    again = _cli("replay", f"{PORTS}:MCTCommit", "t.itf.json", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    mutant = _cli(
        "replay", f"{PORTS}:MutantTCommit", "--from-tlc", str(TLC / "tcommit.out"), cwd=tmp_path
    )
    assert mutant.returncode == 1
    assert "Diverges at TLC's state 3" in mutant.stdout
