"""A real Raft implementation's runs validated against its spec: pysyncobj, 3 nodes
on 127.0.0.1, its state logged by tests/pysyncobj_harness.py (no fork of its code),
checked with mcheck validate against specs/pysyncobj_raft.py; a run with its leader
stopped and restarted included, and a tampered log refused at the tampered line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker import CompiledSpec
from checker.authoring.loader import load_spec_class
from checker.check.validate import Validator, read_log

harness = pytest.importorskip("tests.pysyncobj_harness")

#: Bounds a few seconds of a real run stay within (validation visits only the states
#: consistent with the log, so generous bounds cost nothing).
BOUNDS = {"MaxTerm": 40, "MaxIndex": 100, "MaxRestarts": 5}


def _validate(log: Path) -> Any:
    cls = load_spec_class("pysyncobj_raft")
    model = CompiledSpec(cls(**BOUNDS), properties=["none"], symmetry=False)
    return Validator(model, cls.log_mapping).run(read_log(log, "ndjson", cls))


@pytest.mark.parametrize("restart", [False, True])
def test_pysyncobj_runs_are_behaviours_of_the_spec(tmp_path: Path, restart: bool) -> None:
    log = tmp_path / "run.ndjson"
    info = harness.run(log, restart=restart)
    assert info["first_leader"] is not None, "no leader elected in the run"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    kinds = {e["event"] for e in events}
    assert {"Timeout", "Vote", "BecomeLeader", "AdvanceCommit"} <= kinds
    if restart:
        assert "Restart" in kinds and info["final_leader"] is not None
    out = _validate(log)
    assert out.ok, (out.failed, out.reason)
    assert out.events == len(events)


def test_a_log_the_spec_cannot_produce_is_named_at_its_line(tmp_path: Path) -> None:
    log = tmp_path / "run.ndjson"
    harness.run(log, restart=False)
    lines = log.read_text().splitlines()
    votes = [i for i, line in enumerate(lines) if json.loads(line)["event"] == "Vote"]
    assert votes
    # A second vote by the same node in the same term, for the other node.
    first = json.loads(lines[votes[0]])
    voter, cand = first["params"]["node"], first["params"]["candidate"]
    other = next(n for n in "abc" if n not in (voter, cand))
    forged = {"event": "Vote", "params": {"node": voter, "candidate": other},
              "state": {f"votedFor[{voter}]": other}}  # fmt: skip
    lines.insert(votes[0] + 1, json.dumps(forged))
    log.write_text("\n".join(lines) + "\n")
    out = _validate(log)
    assert not out.ok and out.failed is not None and out.failed.line == votes[0] + 2
    assert "no candidate state enables Vote" in out.reason
