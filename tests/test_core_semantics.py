"""The core's semantics, each a wrong answer once (issue 11), now TLC's.

Each test failed on the engine before the one-core redesign.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import networkx as nx
from click.testing import CliRunner

from checker import CompiledSpec, Options, Spec, action, check_spec, invariant
from checker.cli.commands import main
from checker.explore.result import Verdict

FIXTURES = Path(__file__).parent / "fixtures"


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def last_json(out: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return data


def test_invariants_hold_on_states_outside_the_constraint() -> None:
    # TLC: the constraint stops exploration only; x = 3 is generated and checked.
    code, out, _ = cli("run", str(FIXTURES / "constraint_counter.py"), "--json")
    d = last_json(out)
    assert code == 12
    assert (d["property"], d["trace_length"], d["trace"]) == ("NotThree", 3, ["Inc"] * 3)
    # x = 3 is generated (4 states generated) but never stored (3 distinct).
    assert (d["distinct_states"], d["states_generated"], d["depth"]) == (3, 4, 3)


def test_mutable_states_are_refused_with_the_variable_named() -> None:
    for variant, needle in (
        ("list", "variable xs holds a list, which is mutable"),
        ("dict", "variable xs holds a dict, which is mutable"),
        ("set", "variable xs holds a set, which is mutable"),
        ("loose", "the state class Loose is a dataclass that is not frozen"),
        ("inplace", "an action changed its input state in place (variable n"),
        ("float", "variable xs holds a float"),
    ):
        code, _, err = cli("run", str(FIXTURES / "mutable_states.py"), "--variant", variant)
        assert code == 2, variant
        assert needle in err, (variant, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_trace_that_does_not_replay_is_refused_not_printed() -> None:
    # The spec's successor order changes between calls: the rebuilt trace would not
    # be the one explored, and the fingerprint check says so.
    code, out, err = cli("run", str(FIXTURES / "unstable_order.py"))
    assert code == 2
    assert "rebuilding the trace diverged at step" in err
    assert "checker.in_order" in err
    assert "counterexample" not in out


def test_unsound_symmetry_is_refused() -> None:
    code, _, err = cli("run", str(FIXTURES / "index_symmetry.py"))
    assert code == 2
    assert "the declared symmetry is not sound" in err and "--no-symmetry" in err
    code, out, _ = cli("run", str(FIXTURES / "index_symmetry.py"), "--no-symmetry", "--json")
    assert code == 12 and last_json(out)["property"] == "LeaderHasTheHighestTerm"
    # A sound declaration passes the check (raft, two_phase run with symmetry).
    assert check_spec(_raft_small()).symmetry is True


def _raft_small() -> Spec:
    from mcheck_shipped.specs.raft import Raft

    return Raft(Server="2", MaxTerm=1, MaxLogLen=0)


class Stops(Spec):
    """Counts to 2 and stops: a deadlock unless the spec says deadlocks are fine."""

    check_deadlock = False

    def init(self) -> list[int]:
        return [0]

    @action
    def Inc(self, x: int) -> int | None:
        return x + 1 if x < 2 else None

    @invariant
    def Fine(self, x: int) -> bool:
        return True


def test_the_python_api_and_the_cli_share_defaults() -> None:
    # check_spec used to ignore check_deadlock = False and report a deadlock.
    assert check_spec(Stops()).verdict is Verdict.OK
    assert check_spec(Stops(), Options(deadlock=True)).verdict is Verdict.DEADLOCK


def test_property_none_explores_the_whole_space() -> None:
    code, out, _ = cli("run", "die_hard", "--property", "none", "--json")
    d = last_json(out)
    assert code == 0 and d["result"] == "ok" and d["distinct_states"] == 16


def test_temporal_only_runs_report_the_real_figures() -> None:
    spec = str(FIXTURES / "peterson.py")
    code, out, _ = cli("run", spec, "--property", "WantsThenEnters", "--json")
    d = last_json(out)
    assert code == 0
    g = _graph(spec, "plain")
    # TLC's figures: generated counts the initial state and every successor.
    assert d["distinct_states"] == g.number_of_nodes() == 20
    assert d["states_generated"] == 1 + g.number_of_edges()
    inits = [n for n, a in g.nodes(data=True) if a["init"]]
    depth = max(nx.multi_source_dijkstra_path_length(g, inits).values()) + 1
    assert d["depth"] == depth
    assert all(a["generated"] > 0 for n, a in d["actions"].items() if n != "BackOff")
    code, out, _ = cli("run", spec, "--property", "WantsThenEnters", "--strategy", "dfs", "--json")
    d = last_json(out)
    assert (code, d["strategy"], d["distinct_states"]) == (0, "dfs", 20)


def _graph(spec: str, variant: str) -> Any:
    from checker.authoring.loader import load_spec_class
    from checker.check.graph import state_graph

    model = CompiledSpec(load_spec_class(spec)(variant=variant), properties=["none"])
    return state_graph(model)


def test_lassos_are_shortest() -> None:
    # Back-off lets a process that wants the section give up forever: 1 action to the
    # trigger, a 6-action cycle in which both back off; no lasso is shorter.
    code, out, _ = cli("run", str(FIXTURES / "peterson.py"), "--variant", "backoff", "--json")
    d = last_json(out)
    assert code == 13
    assert (d["property"], d["trace_length"], d["loop_start"]) == ("WantsThenEnters", 7, 1)
    assert d["trace"][0] == "SetFlag(0)"
    assert sorted(d["trace"][1:]) == sorted(
        ["SetFlag(1)", "SetTurn(0)", "SetTurn(1)", "BackOff(0)", "SetFlag(0)", "BackOff(1)"]
    )


def test_timelines_have_lanes_for_numbered_processes() -> None:
    code, out, _ = cli("run", str(FIXTURES / "peterson.py"), "--variant", "backoff", "--no-color")
    assert code == 13
    header = next(line for line in out.splitlines() if "action" in line and "env" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")][2:] == ["0", "1", "env"]
    assert "SetFlag(0) @0" in out


def test_liveness_honours_limits() -> None:
    spec = "scm_install_snapshot_leader_change"
    prop = ("--property", "FollowerEventuallyCatchesUp")
    for extra, reason in (
        (("--max-states", "500"), "max-states 500"),
        (("--max-depth", "4"), "max-depth 4"),
        (("--timeout", "0.001"), "timeout"),
    ):
        code, out, _ = cli("run", spec, *prop, *extra, "--json")
        d = last_json(out)
        assert code == 3, extra
        assert d["result"] == "incomplete" and reason in d["reason"]
        assert d["distinct_states"] > 0 or reason == "timeout"


def test_spec_errors_while_building_the_liveness_graph_have_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "raises_live.py"
    path.write_text(
        textwrap.dedent(
            """
            from checker import Spec, action, eventually

            class RaisesLive(Spec):
                fairness = {"Inc": "weak"}

                def init(self):
                    return [0]

                @action
                def Inc(self, x):
                    if x == 2:
                        raise ValueError("boom")
                    return x + 1

                @eventually
                def Big(self, x):
                    return x > 5
            """
        )
    )
    code, _, err = cli("run", str(path))
    assert code == 2
    assert "action Inc raised ValueError: boom" in err
    assert "trace that reached it (2 actions)" in err


def test_traces_of_spec_files_outside_the_repository(tmp_path: Path) -> None:
    spec = tmp_path / "paxos_lite.py"
    spec.write_text(
        textwrap.dedent(
            """
            from typing import NamedTuple
            from checker import Spec, action, invariant

            class M1a(NamedTuple):
                bal: int

            class State(NamedTuple):
                msgs: frozenset

            class PaxosLite(Spec):
                def init(self):
                    return [State(frozenset())]

                @action(over=lambda self: range(3))
                def Phase1a(self, s, b):
                    return s._replace(msgs=s.msgs | {M1a(b)})

                @invariant
                def FewBallots(self, s):
                    return len(s.msgs) < 2
            """
        )
    )
    out = tmp_path / "t.itf.json"
    code, _, _ = cli("run", str(spec), "--trace-out", str(out))
    assert code == 12
    code, text, _ = cli("show", str(out), "--no-color")
    assert code == 0 and "[bal |-> 0]" in text
    code, text, _ = cli("replay", str(spec), str(out))
    assert code == 0, text
    assert "ends in a violation of FewBallots" in text
    code, _, err = cli("replay", str(out))
    assert code == 2 and f"name it, as in mcheck replay {spec}" in err


def test_list_shows_a_users_spec_file_with_temporal_properties_and_symmetry() -> None:
    code, out, _ = cli("list", str(FIXTURES / "peterson.py"))
    assert code == 0
    assert "WantsThenEnters (P ~> Q)" in out and "symmetry: none" in out
    code, out, _ = cli("list")
    assert "symmetry: Server" in out and "FollowerEventuallyCatchesUp (<>P)" in out
    code, out, _ = cli("run", "--help")
    assert "--property, --invariant" in out


def test_the_state_graph_is_the_explorers() -> None:
    # mcheck graph records the same exploration as mcheck run: the same states, and
    # one edge per generated successor (die_hard has no constraint).
    g = _graph("die_hard", "default")
    _code, out, _ = cli("run", "die_hard", "--property", "none", "--json")
    d = last_json(out)
    assert g.number_of_nodes() == d["distinct_states"] == 16
    assert g.number_of_edges() + 1 == d["states_generated"]


def test_a_set_valued_over_state_gives_the_same_counterexample_under_any_hash_seed(
    tmp_path: Path,
) -> None:
    """Iterating a set follows the hash seed; mcheck orders such a domain itself."""
    import os
    import subprocess
    import sys

    spec = str(Path(__file__).parent / "fixtures" / "set_domain.py")
    traces = set()
    for seed in ("1", "2", "3", "4"):
        out = tmp_path / f"seed{seed}.itf.json"
        done = subprocess.run(
            [sys.executable, "-m", "checker", "run", spec, "--trace-out", str(out)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert done.returncode == 12, done.stderr
        traces.add(json.dumps(json.loads(out.read_text())["states"]))
    assert len(traces) == 1
    assert len(json.loads(traces.pop())) == 4
