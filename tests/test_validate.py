"""mcheck validate: implementation logs checked against a spec (matching logs,
partial states, silent steps, the first unmatched event, malformed lines), the
RATIS-1369 excerpts' verdicts, and every trace mcheck writes validating on its own
variant."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import CompiledSpec
from checker.authoring.loader import load_spec_class
from checker.check.validate import LogEvent, LogMapping, On, Validator, read_log
from checker.explore.result import Result, Stats, Verdict
from checker.explore.trace import replay_choices
from checker.traces.tracefile import save_trace

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "traces" / "logs"
MCHECK = [sys.executable, "-m", "checker"]


def _model(spec: str, variant: str | None = None, **consts: Any) -> CompiledSpec:
    return CompiledSpec(load_spec_class(spec)(variant=variant, **consts), properties=["none"])


def _validate(
    model: CompiledSpec, events: list[LogEvent], mapping: LogMapping | None = None
) -> Any:
    return Validator(model, mapping).run(events)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCHECK, "validate", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("log", "variant", "ok", "line"),
    [
        ("ratis-1369-bug.log", "bug", True, None),
        ("ratis-1369-bug.log", "fix", False, 5),  # fix: "snapshotIndex is -1", not 0
        ("ratis-1369-fix.log", "fix", True, None),
        ("ratis-1369-fix.log", "bug", False, 4),  # bug: 0, so ALREADY_INSTALLED
    ],
)
def test_ratis_1369_excerpts(log: str, variant: str, ok: bool, line: int | None) -> None:
    cls = load_spec_class("ratis_empty_snapshot_index_default")
    model = _model("ratis_empty_snapshot_index_default", variant)
    out = _validate(model, read_log(LOGS / log, "ratis-log", cls), cls.log_mapping)
    assert out.ok is ok, out.reason
    if not ok:
        assert out.failed is not None and out.failed.line == line
        assert out.failed.name == "snapshotIndex" and "snapshotIndex = " in out.reason
    else:
        assert out.trace is not None
        # The log's five events: HandleNotify and HandleInstallReply as steps.
        labels = out.trace.labels()
        assert any(lab.startswith("HandleNotify") and "[log line" in lab for lab in labels)


def test_ratis_1369_cli() -> None:
    ok = _cli("ratis_empty_snapshot_index_default", "traces/logs/ratis-1369-bug.log",
              "--variant", "bug")  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "[log line 4]" in ok.stdout and "OK: all 5 events" in ok.stdout
    bad = _cli("ratis_empty_snapshot_index_default", "traces/logs/ratis-1369-bug.log",
               "--variant", "fix")  # fmt: skip
    assert bad.returncode == 1
    assert "NOT A BEHAVIOUR: line 5 (snapshotIndex" in bad.stdout
    assert "snapshotIndex = -1 where the log says 0" in bad.stdout
    assert "candidate state 1:" in bad.stdout


def _ev(line: int, name: str, **state: Any) -> LogEvent:
    return LogEvent(line, name, state=state)


def test_partial_states_and_the_first_unmatched_event() -> None:
    model = _model("die_hard")
    # Only `big` is logged: the implementation does not see the small jug.
    log = [_ev(1, "FillBig", big=5), _ev(2, "BigToSmall", big=2), _ev(3, "EmptySmall")]
    assert _validate(model, log).ok
    wrong = [_ev(1, "FillBig", big=5), _ev(2, "BigToSmall", big=3)]
    out = _validate(model, wrong)
    assert not out.ok and out.failed is not None and out.failed.line == 2
    assert out.reason == "BigToSmall gives big = 2 where the log says 3"
    # An action whose guard no candidate state satisfies is named as such.
    out = _validate(model, [_ev(1, "FillBig"), _ev(2, "FillBig")])
    assert not out.ok and out.failed is not None and out.failed.line == 2
    assert "no candidate state enables FillBig" in out.reason


def test_silent_steps_are_bounded() -> None:
    model = _model("die_hard")
    # The log shows only the small jug being emptied; the fills happened unlogged.
    mapping = LogMapping(
        events={"empty": On(actions=("EmptySmall",), state={"small": "small"})},
        silent=("FillBig", "BigToSmall"),
        max_silent=2,
    )
    out = _validate(model, [LogEvent(7, "empty", state={"small": 0})], mapping)
    assert out.ok and out.trace is not None
    assert [lab.split()[0] for lab in out.trace.labels()] == [
        "FillBig",
        "BigToSmall",
        "EmptySmall",
    ]
    assert out.trace.labels()[0].endswith("[silent]")
    assert out.trace.labels()[-1].endswith("[log line 7]")
    tight = LogMapping(events=mapping.events, silent=mapping.silent, max_silent=1)
    out = _validate(model, [LogEvent(7, "empty", state={"small": 0})], tight)
    assert not out.ok and "after up to 1 silent steps" in out.reason


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"event": "FillBig"}\nnot json\n', "log.ndjson:2: not JSON"),
        ('{"params": {}}\n', 'log.ndjson:1: the event has no "event" name'),
        ('{"event": "FillBig", "state": 3}\n', '"params" and "state" must be objects'),
        ('{"event": "Fly"}\n', "line 1: event 'Fly' is not an action of die_hard"),
        ('{"event": "FillBig", "state": {"water": 1}}\n', "'water' is not a variable"),
        ('{"event": "FillBig", "extra": 1}\n', "unknown field 'extra'"),
    ],
)
def test_malformed_logs_are_one_line_exit_2(tmp_path: Path, content: str, message: str) -> None:
    log = tmp_path / "log.ndjson"
    log.write_text(content)
    proc = _cli("die_hard", str(log))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_limits_are_incomplete(tmp_path: Path) -> None:
    log = tmp_path / "log.ndjson"
    log.write_text('{"event": "FillBig"}\n{"event": "BigToSmall"}\n')
    proc = _cli("die_hard", str(log), "--max-states", "1")
    assert proc.returncode == 3 and "INCOMPLETE (max-states 1 reached)" in proc.stdout


SPECS = [
    ("die_hard", None, {}),
    ("ratis_heartbeat_match_index", "bug", {}),
    ("ratis_empty_snapshot_index_default", "fix", {}),
    ("scm_install_snapshot_leader_change", "bug", {}),
]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_trace_mcheck_writes_validates_on_its_own_variant(data: Any) -> None:
    spec, variant, consts = data.draw(st.sampled_from(SPECS))
    model = CompiledSpec(load_spec_class(spec)(variant=variant, **consts))
    choices = [data.draw(st.integers(0, len(model.initial_states()) - 1))]
    state = model.initial_states()[choices[0]]
    for _ in range(data.draw(st.integers(0, 8))):
        succ = model.successors(state)
        if not succ:
            break
        k = data.draw(st.integers(0, len(succ) - 1))
        choices.append(k)
        state = succ[k][2]
    trace = replay_choices(model, choices)
    result = Result(
        spec=model.name, variant=model.variant, verdict=Verdict.VIOLATION, stats=Stats(),
        constants=dict(model.constants), symmetry=False, strategy="bfs",
        action_names=model.action_names, violated="P", trace=trace,
    )  # fmt: skip
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = save_trace(result, model, Path(tmp) / "t.itf.json")
        events = read_log(path, "itf", type(model.spec))
    out = Validator(_model(spec, variant, **consts), None).run(events)
    assert out.ok, (spec, choices, out.reason)
    assert out.trace is not None and out.trace.states() == trace.states()


def test_ndjson_values_compare_in_plain_form(tmp_path: Path) -> None:
    # Sets as lists in any order, records as objects, model values by name.
    model = _model("ratis_empty_snapshot_index_default", "bug")
    log = tmp_path / "log.ndjson"
    log.write_text(
        json.dumps({"event": "SendNotify", "state": {"nextIndex": 0,
                    "net": [{"src": "L", "dst": "F", "first": 1}]}}) + "\n"
    )  # fmt: skip
    events = read_log(log, "ndjson", type(model.spec))
    assert Validator(model, None).run(events).ok
