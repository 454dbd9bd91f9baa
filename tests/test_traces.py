"""Saved traces (ITF), timelines, the viewer, replay and state-graph export."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from immutables import Map
from pyrsistent import PMap, PSet, PVector, pmap, pset, pvector
from rich.console import Console

from checker import CompiledSpec, Options, invariant
from checker import run as check
from checker.check.graph import state_graph
from checker.cli.commands import main
from checker.traces.itf import itf_from_json, read_itf, record_types, trace_to_itf
from checker.traces.timeline import render_timeline, step_changes
from checker.traces.tracefile import save_trace, timeline_of_itf, timeline_of_run
from checker.traces.viewer import Viewer
from checker.values import model_values
from checker.values.fingerprint import encode
from mcheck_shipped.specs.raft import Raft

S = model_values("s", 3, group="Server")


class Rec(NamedTuple):
    kind: str
    src: Any
    n: int


@dataclass(frozen=True)
class Box:
    item: Any
    flag: bool


atoms = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=5),
    st.booleans(),
    st.none(),
    st.sampled_from(S),
)


def _values(children: Any) -> Any:
    return st.one_of(
        st.lists(children, max_size=3).map(tuple),
        st.lists(children, max_size=3).map(pvector),
        st.frozensets(st.integers(0, 5) | st.sampled_from(S), max_size=3),
        st.frozensets(st.integers(0, 5), max_size=3).map(pset),
        st.dictionaries(st.sampled_from(S), children, max_size=3).map(pmap),
        st.dictionaries(st.integers(0, 3), children, max_size=3).map(Map),
        st.builds(Rec, st.text(max_size=3), st.sampled_from(S), st.integers(0, 9)),
        st.builds(Box, children, st.booleans()),
    )


values = st.recursive(atoms, _values, max_leaves=12)


def _has_flavour(v: Any) -> bool:
    """Whether ``v`` holds a container ITF reads back as another kind."""
    if isinstance(v, PVector | PSet | PMap):
        return True
    if isinstance(v, Map):
        return any(_has_flavour(k) or _has_flavour(x) for k, x in v.items())
    if isinstance(v, tuple | frozenset):
        return any(_has_flavour(x) for x in v)
    if isinstance(v, Box):
        return _has_flavour(v.item)
    return False


@given(values)
def test_itf_round_trip_gives_the_same_value(v: Any) -> None:
    doc = trace_to_itf([v], ("x",), lambda s: (s,), [{"action": "init"}], {"spec": "t"})
    text = json.dumps(doc)  # what lands on disk
    # Naming this module's types (as replay names the spec's) rebuilds the records as
    # them; the containers come back in ITF's flavours (a tuple for a pvector, a
    # frozenset for a pset, a Map for a pmap), which the value model tells apart from
    # Python's others, so a replay compares both sides in the read form.
    back = itf_from_json(json.loads(text), types=record_types(sys.modules[__name__]))
    assert encode(back.states[0]["x"]) == encode(back.normalize(v))
    if not _has_flavour(v):
        assert encode(back.states[0]["x"]) == encode(v)
    # Without them, records read as plain data, equal to the value's read form.
    plain = itf_from_json(json.loads(text))
    assert encode(plain.states[0]["x"]) == encode(plain.normalize(v))


def test_itf_encoding_follows_the_format() -> None:
    v = (2**60, frozenset({1}), pmap({S[0]: None}), Rec("a", S[1], 3))
    doc = trace_to_itf([v], ("x",), lambda s: (s,), [{"action": "init"}], {"spec": "t"})
    assert set(doc) == {"#meta", "vars", "states"}
    x = doc["states"][0]["x"]
    assert doc["states"][0]["#meta"]["index"] == 0
    assert x["#tup"][0] == {"#bigint": str(2**60)}
    assert x["#tup"][1] == {"#set": [1]}
    # None: a nullary variant other tools can name; records: plain ADR-015 records,
    # their fields listed in #meta.records for the exact round trip.
    assert x["#tup"][2] == {"#map": [["s1", {"tag": "Nil", "value": {}}]]}
    assert x["#tup"][3] == {"kind": "a", "src": "s2", "n": 3}
    assert doc["#meta"]["records"] == {"Rec": ["kind", "src", "n"]}


class Twin(NamedTuple):
    """Rec's fields exactly: a plain record could be either, so both are tagged."""

    kind: str
    src: Any
    n: int


def test_records_sharing_their_fields_are_written_as_variants() -> None:
    v = (Rec("a", S[0], 1), Twin("b", S[1], 2), Box(1, True))
    doc = trace_to_itf([v], ("x",), lambda s: (s,), [{"action": "init"}], {"spec": "t"})
    x = doc["states"][0]["x"]["#tup"]
    assert x[0] == {"tag": "Rec", "value": {"kind": "a", "src": "s1", "n": 1}}
    assert x[1] == {"tag": "Twin", "value": {"kind": "b", "src": "s2", "n": 2}}
    assert x[2] == {"item": 1, "flag": True}
    assert doc["#meta"]["records"] == {"Box": ["item", "flag"]}
    back = itf_from_json(json.loads(json.dumps(doc)), types=record_types(sys.modules[__name__]))
    assert back.states[0]["x"] == v


class NoLeader(Raft):
    """Raft with a deliberately false invariant, to get a message-heavy trace."""

    name = "raft"

    @invariant
    def NeverLeader(self, s: Any) -> bool:
        return "Leader" not in s.state.values()


@pytest.fixture(scope="module")
def raft_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Path]:
    spec = NoLeader(MaxLogLen=0)
    model = CompiledSpec(spec, properties=["NeverLeader"])
    result = check(model, Options())
    path = tmp_path_factory.mktemp("traces") / "raft.itf.json"
    save_trace(result, model, path)
    return result, model, path


def test_saved_trace_reads_back_as_the_same_states(raft_trace: Any) -> None:
    result, model, path = raft_trace
    back = read_itf(path, types=record_types(Raft))
    plain = read_itf(path)  # no types named: records come back as plain data
    assert back.length == result.trace.length == 9
    for step, state, pstate in zip(result.trace.steps, back.states, plain.states, strict=True):
        for name, v in zip(model.var_names, model.variables(step.state), strict=True):
            assert encode(state[name]) == encode(v)
            assert encode(pstate[name]) == encode(plain.normalize(v))
    assert back.meta["property"] == "NeverLeader"
    assert back.meta["spec"] == "raft"
    assert back.meta["constants"]["Server"] == ["s1", "s2", "s3"]
    assert back.steps[4]["action_name"] == "Receive"


@pytest.mark.parametrize("width", [80, 160])
def test_timeline_fits_the_terminal_and_shows_messages(raft_trace: Any, width: int) -> None:
    result, model, path = raft_trace
    for data in (timeline_of_run(result, model), timeline_of_itf(read_itf(path))):
        out = io.StringIO()
        render_timeline(data, Console(file=out, width=width, color_system=None))
        text = out.getvalue()
        assert max(len(line) for line in text.splitlines()) <= width
        assert "NeverLeader is violated" in text
        assert 'state = (s1 :> "Leader"' in text
        # The cells say what was sent and received (the table wraps them, so the
        # cell contents are checked as data and the words in the drawn text).
        sent = [t.plain for t in step_changes(data, 3)["s1"]]
        # A send shows the message's contents, a receipt names it briefly.
        assert sent == ["sent RVRequest s1->s1 t2 mlastLogTerm=0 mlastLogIndex=0"]
        got = [t.plain for t in step_changes(data, 4)["s1"]]
        assert got[:2] == [
            "received RVRequest s1->s1 t2",
            "sent RVResponse s1->s1 t2 mvoteGranted=TRUE mlog=<<>>",
        ]
        assert "RVRequest" in text and "RVResponse" in text
        assert "received" in text
        for lane in ("s1", "s2", "s3", "env"):
            assert lane in text


def test_show_command_full_and_vars(raft_trace: Any) -> None:
    _, _, path = raft_trace
    r = CliRunner().invoke(main, ["show", str(path), "--no-color", "--width", "100"])
    assert r.exit_code == 0
    assert "NeverLeader is violated" in r.stdout
    r = CliRunner().invoke(main, ["show", str(path), "--full", "--vars", "state,currentTerm"])
    assert r.exit_code == 0
    assert "state = " in r.stdout and "votedFor = " not in r.stdout
    r = CliRunner().invoke(main, ["show", str(path), "--vars", "nope"])
    assert r.exit_code == 2 and "unknown variable 'nope'" in r.stderr


def test_replay_accepts_the_real_behaviour_and_names_a_blocked_step(raft_trace: Any) -> None:
    _, _, path = raft_trace
    spec_file = Path(__file__).parent / "fixtures" / "raft_no_leader.py"
    r = CliRunner().invoke(main, ["replay", f"{spec_file}:NoLeader", str(path)])
    assert r.exit_code == 0, r.output
    assert "ends in a violation of NeverLeader (9 steps)" in r.stdout
    # With MaxTerm=1 no server may time out: the very first step is blocked.
    r = CliRunner().invoke(
        main, ["replay", f"{spec_file}:NoLeader", str(path), "--const", "MaxTerm=1"]
    )
    assert r.exit_code == 0  # MaxTerm bounds only the constraint, not the actions
    r = CliRunner().invoke(
        main, ["replay", f"{spec_file}:NoLeader", str(path), "--const", "Server=s1,s2"]
    )
    assert r.exit_code == 1
    assert "step 0" in r.stdout


def test_run_saves_the_trace_where_asked(tmp_path: Path) -> None:
    target = tmp_path / "dh.itf.json"
    r = CliRunner().invoke(main, ["run", "die_hard", "--trace-out", str(target), "--json"])
    assert r.exit_code == 12
    assert json.loads(r.stdout.splitlines()[-1])["trace_file"] == str(target)
    r = CliRunner().invoke(main, ["replay", "die_hard", str(target)])
    assert r.exit_code == 0
    r = CliRunner().invoke(main, ["replay", "die_hard", str(target), "--const", "Big=6"])
    assert r.exit_code == 1
    assert "step 1: FillBig produces a different state" in r.stdout
    assert "big: trace has 5, spec gives 6" in r.stdout


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "not found"),
        ('{"vars": ["x"], "states": [', "not valid JSON"),
        ('{"hello": 1}', "not an ITF trace"),
        ('{"vars": ["x"], "states": []}', "not an ITF trace"),
        ('{"vars": ["x"], "states": [{"y": 1}]}', "lacks variable 'x'"),
    ],
)
def test_bad_trace_files_are_one_line_exit_2(
    tmp_path: Path, content: str | None, needle: str
) -> None:
    path = tmp_path / "t.itf.json"
    if content is not None:
        path.write_text(content)
    for args in (["show", str(path)], ["replay", "die_hard", str(path)], ["view", str(path)]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, args
        assert needle in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.output


def test_replaying_another_specs_trace_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "dh.itf.json"
    CliRunner().invoke(main, ["run", "die_hard", "--trace-out", str(target)])
    r = CliRunner().invoke(main, ["replay", "two_phase", str(target)])
    assert r.exit_code == 2
    assert "trace of spec 'die_hard', not 'two_phase'" in r.stderr


def _screen(v: Viewer) -> str:
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(v.render())
    return out.getvalue()


def test_viewer_keys_headless(raft_trace: Any) -> None:
    _, _, path = raft_trace
    v = Viewer(timeline_of_itf(read_itf(path)))
    assert "step 0/9: initial state" in _screen(v)
    for key in ("right", "l", "n"):
        v.handle(key)
    assert "step 3/9: RequestVote(s1, s1)" in _screen(v)
    v.handle("left")
    assert "step 2/9: Timeout(s2)" in _screen(v)
    for key in ("g", "7", "enter"):
        v.handle(key)
    assert "step 7/9" in _screen(v)
    assert "received RVRequest" in _screen(v)
    v.handle("f")
    screen = _screen(v)
    assert "full state" in screen and "votedFor" in screen
    for key in ("v", *"state", "enter"):
        v.handle(key)
    screen = _screen(v)
    assert "variables: state" in screen and "votedFor" not in screen
    v.handle("f")
    v.handle("home")
    for key in ("c", *"state", "enter"):
        v.handle(key)
    assert "step 1/9: Timeout(s1)" in _screen(v)
    for key in ("c", *"state", "enter"):
        v.handle(key)
    assert "step 2/9" in _screen(v)
    v.handle("G")
    assert "NeverLeader is violated here" in _screen(v)
    for key in ("g", "9", "9", "enter"):
        v.handle(key)
    assert "no step '99'" in _screen(v)
    v.handle("q")
    assert v.done


def test_graph_export_matches_the_explorer(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["graph", "die_hard", "--out", str(tmp_path / "g.graphml")])
    assert r.exit_code == 0
    g = nx.read_graphml(tmp_path / "g.graphml")
    assert g.number_of_nodes() == 16  # die_hard's reachable states (Target=4 included)
    r = CliRunner().invoke(main, ["graph", "two_phase", "--out", str(tmp_path / "g.dot")])
    assert r.exit_code == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph states {")
    r = CliRunner().invoke(
        main, ["graph", "raft", "--out", str(tmp_path / "r.dot"), "--max-nodes", "100"]
    )
    assert r.exit_code == 2
    assert "more than 100 states" in r.stderr
    model = CompiledSpec(Raft(Server="2", MaxTerm=2, MaxLogLen=1), symmetry=False)
    assert state_graph(model, max_nodes=10_000).number_of_nodes() == 1760


SEED_TRACES = [
    ("scm_install_snapshot_leader_change", "bug", {}),
    ("ratis_heartbeat_match_index", "bug", {"MaxMsgs": 1}),
    ("om_leader_ready_before_apply", "bug", {}),
]


@pytest.mark.parametrize(("spec", "variant", "consts"), SEED_TRACES)
@pytest.mark.parametrize("width", [80, 100, 120, 160])
def test_timeline_never_splits_a_word(
    spec: str, variant: str, consts: dict[str, Any], width: int
) -> None:
    """Every word of every change is drawn whole at any width (a split word reads as
    another value); lanes where nothing happens take no column."""
    from checker.authoring.loader import load_spec_class

    model = CompiledSpec(load_spec_class(spec)(variant=variant, **consts))
    result = check(model, Options())
    assert result.trace is not None
    data = timeline_of_run(result, model)
    out = io.StringIO()
    render_timeline(data, Console(file=out, width=width, color_system=None))
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    drawn = set(text.split())
    for i in range(1, len(data.states)):
        for texts in step_changes(data, i).values():
            for t in texts:
                for word in t.plain.split():
                    assert word in drawn, (width, word)
    header = next((line for line in text.splitlines() if line.startswith("┃")), "")
    for lane in [*data.lanes, "env"]:
        busy = any(step_changes(data, i)[lane] for i in range(1, len(data.states)))
        if header and not busy:
            assert f" {lane} " not in header


def test_piped_output_uses_a_wide_enough_width(raft_trace: Any) -> None:
    _, _, path = raft_trace
    r = CliRunner().invoke(main, ["show", str(path), "--no-color"], env={"COLUMNS": None})
    widest = max(len(line) for line in r.stdout.splitlines())
    assert 80 < widest <= 120


def test_variables_owned_by_env_are_drawn_in_its_lane(tmp_path: Path) -> None:
    """HDDS-16454's ghost variables (what each start captured) go to the env lane, keyed
    by server, in the run's timeline and in the saved trace's; the servers' lanes keep
    the mechanism (issue 29: six bookkeeping fields crowded them)."""
    from mcheck_shipped.specs.scm_new_leader_dn_server_start import ScmNewLeaderDnServerStart

    model = CompiledSpec(ScmNewLeaderDnServerStart(variant="bug", INIT="fresh"))
    result = check(model, Options())
    assert result.trace is not None
    path = tmp_path / "t.itf.json"
    save_trace(result, model, path)
    for data in (timeline_of_run(result, model), timeline_of_itf(read_itf(path))):
        cells = {lane: [t.plain for t in ts] for lane, ts in step_changes(data, 1).items()}
        assert any(c.startswith("startPath[s1] ") for c in cells["env"]), cells
        assert any(c.startswith("dnServerStarted ") for c in cells["s1"]), cells
        assert not any(c.startswith("start") for c in cells["s1"]), cells


def test_a_long_timeline_is_drawn_block_by_block_with_whole_step_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A 300,000-step trace printed nothing for minutes: every step's cells were worked
    # out (1.2 GB) before the one table was printed; steps past 999 showed as "19...".
    import checker.traces.timeline as timeline

    n = 2 * timeline.BLOCK + 7
    data = timeline.TimelineData(
        spec="long",
        variant="default",
        var_names=("x",),
        states=[{"x": i} for i in range(n + 1)],
        actions=[None] + ["Step"] * n,
        actors=[None] * (n + 1),
        lanes=[],
    )
    worked_out = {"n": 0}
    real = timeline.step_changes

    def counted(*args: Any, **kwargs: Any) -> Any:
        worked_out["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(timeline, "step_changes", counted)
    out = io.StringIO()
    console = Console(file=out, width=100, no_color=True)
    seen_at_print: list[int] = []
    real_print = console.print

    def recording_print(*args: Any, **kwargs: Any) -> None:
        seen_at_print.append(worked_out["n"])
        real_print(*args, **kwargs)

    monkeypatch.setattr(console, "print", recording_print)
    timeline.render_timeline(data, console)
    text = out.getvalue()
    # The first table is printed once its block is worked out, not after every step.
    assert timeline.BLOCK in seen_at_print and worked_out["n"] == n
    assert f"│ {n} │" in text and f"x {n - 1}->{n}" in text and "…" not in text


class Msg(NamedTuple):
    mtype: str
    msource: Any
    mdest: Any


class Counters(NamedTuple):
    timeout: int
    compact: int


def _two_bags() -> Any:
    """etcd/raft's shape: a reply goes to ``pendingMessages``, ``Ready`` moves it to
    ``messages``, the destination receives it; a record and a log change on the way."""
    import checker.traces.timeline as timeline

    m = Msg("AEResp", "s3", "s1")
    empty: Map[Any, int] = Map()
    states = [
        {"pending": empty, "net": empty, "c": Counters(0, 0), "log": (1, 2, 3)},
        {"pending": Map({m: 1}), "net": empty, "c": Counters(1, 0), "log": (1, 2, 3)},
        {"pending": empty, "net": Map({m: 1}), "c": Counters(1, 0), "log": (1, 2, 3, 4)},
        {"pending": empty, "net": empty, "c": Counters(1, 1), "log": (3, 4)},
    ]
    return timeline.TimelineData(
        spec="bags",
        variant="default",
        var_names=("pending", "net", "c", "log"),
        states=states,
        actions=[None, "Reply", "Ready", "Receive"],
        actors=[None, "s3", "s3", "s1"],
        lanes=["s1", "s3"],
        owners={"log": "s1"},
    )


def test_a_message_moved_between_two_bags_is_a_move_not_a_drop_and_a_send() -> None:
    # The etcd/raft counterexamples read "env dropped X" and "sent X" again at every
    # Ready, and a self-addressed message was "received" when Ready flushed it.
    data = _two_bags()
    plain = [
        {lane: [t.plain for t in ts] for lane, ts in step_changes(data, i).items()}
        for i in range(1, 4)
    ]
    assert plain[0]["s3"] == ["sent Msg s3->s1"]
    assert plain[0]["env"] == ["c.timeout 0->1"]
    assert plain[1]["s3"] == ["Msg s3->s1 moved from pending to net"]
    assert plain[1]["env"] == []
    assert plain[1]["s1"] == ["log ++ 4"]
    assert plain[2]["s1"] == ["received Msg s3->s1", "log drops its first 2"]
    assert plain[2]["env"] == ["c.compact 0->1"]


def test_the_picture_draws_one_arrow_through_a_move() -> None:
    from checker.traces.picture import picture_of

    pic = picture_of(_two_bags())
    assert [(a.src, a.dst, a.sent, a.end, a.how) for a in pic.arrows] == [
        ("s3", "s1", 1, 3, "received")
    ]
    assert pic.notes[2]["s3"] == ["Msg s3->s1 moved from pending to net"]


@pytest.mark.parametrize(
    ("before", "after", "kinds"),
    [
        ({"a": {}, "b": {}}, {"a": {"m": 1}, "b": {}}, [("sent", 1, None, "a")]),
        ({"a": {"m": 1}, "b": {}}, {"a": {}, "b": {"m": 1}}, [("moved", 1, "a", "b")]),
        (
            {"a": {"m": 2}, "b": {}},
            {"a": {}, "b": {"m": 1}},
            [("dropped", 1, "a", None), ("moved", 1, "a", "b")],
        ),
        ({"a": {"m": 1}, "b": {}}, {"a": {"m": 1}, "b": {"m": 1}}, [("duplicated", 1, None, "b")]),
        ({"a": {"m": 1}, "b": {}}, {"a": {}, "b": {}}, [("dropped", 1, "a", None)]),
    ],
)
def test_network_events_pair_moves_first(before: Any, after: Any, kinds: Any) -> None:
    from checker.traces.network import network_events

    m = Msg("X", "s1", "s2")
    changes = {
        v: ({m: before[v]["m"]} if before[v] else {}, {m: after[v]["m"]} if after[v] else {})
        for v in before
    }
    got = [
        (e.kind, e.copies, e.source, e.target) for e in network_events(changes, "s3", ["s1", "s2"])
    ]
    assert got == kinds
