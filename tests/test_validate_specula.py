"""validate on logs in Specula's NDJSON envelope, through a declared mapping."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from checker import CompiledSpec
from checker.authoring.loader import load_spec_class
from checker.check.transplant import transplant
from checker.check.validate import Validator, mapping_of, read_ndjson
from checker.traces.tlc_trace import read_tlc

HERE = Path(__file__).parent / "fixtures" / "specula"
SPEC = str(HERE / "elections.py")


def _validate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checker", "validate", SPEC, *args],
        capture_output=True, text=True, timeout=120, cwd=cwd,
    )  # fmt: skip


def test_the_envelope_keeps_tagged_events_and_their_fields() -> None:
    events = read_ndjson(HERE / "good.ndjson")
    assert [e.line for e in events] == [2, 4, 5, 6, 7, 8]  # config and debug lines skipped
    assert events[1].params == {"nid": "n1", "msg": {"from": "n2", "term": 1}}
    assert events[5].state == {}  # a field missing on a line: nothing to compare
    cls = load_spec_class(SPEC)
    model = CompiledSpec(cls(), properties=["none"], symmetry=False)
    out = Validator(model, mapping_of(cls, None)).run(events)
    assert out.ok and out.trace is not None
    assert [s.action_name for s in out.trace.steps[1:]] == [
        "Timeout", "ReceiveVote", "BecomeLeader", "Timeout", "Timeout", "StepDown",
    ]  # fmt: skip


def test_a_seeded_bad_value_is_blamed_on_its_line_action_and_field() -> None:
    got = _validate(str(HERE / "bad_term.ndjson"))
    assert got.returncode == 1, got.stdout + got.stderr
    assert "NOT A BEHAVIOUR: line 7 (BecomeCandidate" in got.stdout
    assert "the furthest line reached: 6" in got.stdout
    assert "candidate 1 (after line 6): Timeout(n3): term is 3 where the log says 4" in got.stdout


def test_a_seeded_impossible_event_is_blamed_on_the_guard() -> None:
    got = _validate(str(HERE / "bad_leader.ndjson"))
    assert got.returncode == 1, got.stdout + got.stderr
    assert "NOT A BEHAVIOUR: line 5 (BecomeLeader" in got.stdout
    assert "BecomeLeader: not enabled (its guard is false for the logged parameters)" in got.stdout


def test_coverage_over_several_logs_names_what_never_happened(tmp_path: Path) -> None:
    lines = (HERE / "good.ndjson").read_text().splitlines()
    short = tmp_path / "short.ndjson"
    short.write_text("\n".join(lines[:2]) + "\n")  # config + one candidate
    got = _validate(str(short), "--coverage")
    assert got.returncode == 0, got.stdout + got.stderr
    assert "actions taken: Timeout; never taken: ReceiveVote, BecomeLeader, StepDown" in got.stdout
    assert "mapped events never seen: BecomeLeader, ReceiveVote, StepDown" in got.stdout
    both = _validate(str(short), str(HERE / "good.ndjson"), "--coverage")
    assert both.returncode == 0
    assert "coverage over 2 logs" in both.stdout and "never taken: none" in both.stdout
    worst = _validate(str(short), str(HERE / "bad_term.ndjson"))
    assert worst.returncode == 1


def test_another_tag_and_a_malformed_envelope(tmp_path: Path) -> None:
    log = tmp_path / "other.ndjson"
    rows = [json.loads(x) for x in (HERE / "good.ndjson").read_text().splitlines()]
    for r in rows:
        if r["tag"] == "trace":
            r["tag"] = "ratis-grpc"
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert _validate(str(log), "--tag", "ratis-grpc").returncode == 0
    empty = _validate(str(log))  # no line has the tag "trace"
    assert empty.returncode == 2 and "holds no event" in empty.stderr
    broken = tmp_path / "broken.ndjson"
    broken.write_text('{"tag": "trace", "ts": 1, "event": "BecomeLeader"}\n')
    got = _validate(str(broken))
    assert got.returncode == 2
    assert got.stderr.strip().count("\n") == 0 and ":1:" in got.stderr


def test_a_huge_log_is_refused_by_its_size_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.ndjson"
    with open(big, "wb") as fh:  # a sparse gigabyte: refused before a byte is read
        fh.truncate(1 << 30)
    got = _validate(str(big))
    assert got.returncode == 2, got.stdout + got.stderr
    assert "larger than" in got.stderr and got.stderr.strip().count("\n") == 0


def test_an_itf_trace_of_another_tool_transplants(tmp_path: Path) -> None:
    """ITF as Apalache and Quint write it (#bigint, #map, #tup, #set) into TCommit."""
    rm = lambda *v: {"#map": [[f"r{i}", s] for i, s in enumerate(v, start=1)]}  # noqa: E731
    doc = {
        "vars": ["rmState"],
        "states": [
            {"rmState": rm("working", "working", "working")},
            {"rmState": rm("aborted", "working", "working"), "mbt::actionTaken": "Decide"},
        ],
    }
    path = tmp_path / "t.itf.json"
    path.write_text(json.dumps(doc))
    cls = load_spec_class("tcommit")
    model = CompiledSpec(cls(), symmetry=False)
    tlc = read_tlc(path)
    done = transplant(model, cls, tlc, cls.tla_mapping, prop="TCConsistent")
    assert done.result is not None and done.result.trace is not None
    assert done.result.trace.steps[1].action_name == "DecideAbort"
    assert not done.reproduced and "TCConsistent holds" in done.message  # holds: no bug
