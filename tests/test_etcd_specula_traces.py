"""etcd_raft validates traces in Specula's format as Traceetcdraft.tla does.

The trace here is the project's own (tests/fixtures/etcd/two_node_election.ndjson,
written for these tests in the format Specula's harness records etcd/raft's
interaction tests in: bootstrap lines, an election, one entry replicated and
committed).  Specula's 38 real traces are measured by ``python -m bench.etcd_traces``
beside TLC (docs/specs/etcd-raft.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.etcd_traces import sweep
from checker import CompiledSpec
from checker.authoring.loader import load_spec_class
from checker.check.validate import Validator, mapping_of, read_ndjson

TRACE = Path(__file__).parent / "fixtures" / "etcd" / "two_node_election.ndjson"


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checker", "validate", "etcd_raft", str(path), "--last", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _altered(tmp_path: Path, line: int, change: object) -> Path:
    lines = TRACE.read_text().splitlines()
    obj = json.loads(lines[line - 1])
    change(obj["event"])  # type: ignore[operator]
    lines[line - 1] = json.dumps(obj)
    out = tmp_path / TRACE.name
    out.write_text("\n".join(lines) + "\n")
    return out


def test_the_trace_is_a_behaviour_with_the_actions_traceetcdraft_takes() -> None:
    got = _validate(TRACE)
    assert got.returncode == 0, got.stdout + got.stderr
    assert (
        "constants from the log: Server=<<1, 2>>, InitServer=2, Value=<<0>>, MaxInflightMsgs=256"
        in got.stdout
    )
    steps = [
        line.split(": ", 1)[1] for line in got.stdout.splitlines() if line.startswith("State ")
    ]
    assert steps[0] == "initial state"
    assert steps[1:] == [
        "Timeout(1)  [log line 6]", "RequestVote(1, 1)  [log line 7]",
        "RequestVote(1, 2)  [log line 8]", "Ready(1)  [log line 9]",
        "Receive(RVResp 1->1 t1)  [log line 10]", "Receive(RVReq 1->2 t1)  [log line 11]",
        "Ready(2)  [log line 14]", "Receive(RVResp 2->1 t1)  [log line 15]",
        "BecomeLeader(1)  [log line 16]", "ClientRequest(1, 0)  [log line 17]",
        "AppendEntriesToSelf(1)  [log line 18]", "AppendEntries(1, 2, 3, 4)  [log line 19]",
        "Ready(1)  [log line 20]", "Receive(AEResp 1->1 t1)  [log line 21]",
        "Receive(AEReq 1->2 t1)  [log line 22]", "Ready(2)  [log line 24]",
        "Receive(AEResp 2->1 t1)  [log line 25]", "AdvanceCommitIndex(1)  [log line 26]",
    ]  # fmt: skip


def test_every_checked_event_with_its_term_raised_is_rejected_at_its_line() -> None:
    total, caught, misses = sweep(TRACE, None)
    assert total == 13 and caught == total, misses  # 18 events, 4 Ready and 1 Replicate unchecked


@pytest.mark.parametrize(
    ("line", "change", "why"),
    [
        (19, lambda e: e["msg"].update(entries=2), "AppendEntries"),
        (26, lambda e: e["state"].update(commit=4), "commit[1] is 3 where the log says 4"),
        (11, lambda e: e["state"].update(vote="1"), "vote[2] before is Nil where the log says 1"),
        (16, lambda e: e.update(conf=[["1"], []]), "BecomeLeader(1): conf[1]"),
    ],
)
def test_an_altered_event_is_rejected_at_its_line(
    tmp_path: Path, line: int, change: object, why: str
) -> None:
    got = _validate(_altered(tmp_path, line, change))
    assert got.returncode == 1, got.stdout + got.stderr
    assert f"NOT A BEHAVIOUR: line {line} " in got.stdout
    assert why in got.stdout


def test_a_line_traceetcdraft_skips_is_not_compared(tmp_path: Path) -> None:
    # Line 12 is the BecomeFollower the vote request at line 11 caused: TraceNext
    # steps over it (LoglineIsBecomeFollowerInUpdateTermOrReturnToFollower reads its
    # term only), so its commit index is never compared.
    got = _validate(_altered(tmp_path, 12, lambda e: e["state"].update(commit=9)))
    assert got.returncode == 0, got.stdout + got.stderr
    # With another term it is no longer that line: a step-down of a follower, which
    # no state allows.
    got = _validate(_altered(tmp_path, 12, lambda e: e["state"].update(term=7)))
    assert got.returncode == 1 and "NOT A BEHAVIOUR: line 12 " in got.stdout


def test_the_config_line_sets_the_limits_it_names(tmp_path: Path) -> None:
    lines = TRACE.read_text().splitlines()
    lines[0] = json.dumps(
        {"tag": "config", "config": {"MaxInflightMsgs": 1, "DisableConfChangeValidation": True}}
    )
    path = tmp_path / TRACE.name
    path.write_text("\n".join(lines) + "\n")
    cls = load_spec_class("etcd_raft")
    mapping = mapping_of(cls, None)
    assert mapping is not None and mapping.constants is not None
    events = read_ndjson(path)
    fixed = mapping.constants(path, events)
    assert fixed["MaxInflightMsgs"] == 1 and fixed["DisableConfChangeValidation"] is True
    assert [s.name for s in fixed["Server"]] == ["1", "2"]
    model = CompiledSpec(cls(**fixed), properties=["none"], symmetry=False)
    assert Validator(model, mapping).run(events).ok


def test_a_trace_from_a_node_without_nid_is_refused_as_malformed(tmp_path: Path) -> None:
    got = _validate(_altered(tmp_path, 6, lambda e: e.pop("nid")))
    assert got.returncode == 2, got.stdout + got.stderr
    assert "line 6: event 'BecomeCandidate' has no nid" in got.stdout + got.stderr


def test_an_event_without_the_state_traceetcdraft_compares_is_refused_as_malformed(
    tmp_path: Path,
) -> None:
    got = _validate(_altered(tmp_path, 6, lambda e: e.pop("state")))
    assert got.returncode == 2, got.stdout + got.stderr
    assert "line 6: event 'BecomeCandidate' has no parameter 'term'" in got.stdout + got.stderr
    assert "Traceback" not in got.stdout + got.stderr
