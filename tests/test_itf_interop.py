"""Traces other tools read: every shipped bug's counterexample parses with itf-py.

itf-py (the Python ITF library on PyPI, a dev dependency) builds a namedtuple per
variant tag and per record; it rejected mcheck's old ``{"tag": "None", ...}`` (a
keyword cannot name a namedtuple).  Each trace is written as ``mcheck run`` writes
it, parsed by itf-py and by mcheck's own reader, and the two readings compared value
by value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import itf_py
import pytest

from checker import CompiledSpec, Options, run
from checker.authoring.loader import load_spec_class
from checker.cli.gate import load_manifest
from checker.traces.itf import read_itf
from checker.traces.tracefile import save_trace
from checker.values import ModelValue, Record

ROOT = Path(__file__).resolve().parent.parent
ALL_VIOLATIONS = [
    c
    for c in load_manifest(ROOT / "pyproject.toml")
    if c.expect.startswith("violates ") or c.expect == "deadlock"
]
#: Rows whose search visits more than this are left to the gate: a spec's trace has
#: the same variables and value shapes in every row, and every spec and variant with
#: a counterexample keeps a cheaper row here (tested below).
MAX_STATES = 100_000
VIOLATIONS = [c for c in ALL_VIOLATIONS if (c.distinct_states or 0) <= MAX_STATES]
#: Specs with no counterexample under MAX_STATES at all, and why: left to the gate.
ONLY_EXPENSIVE = {
    "etcd_raft": "its known bugs need 3 servers or two elections: 0.5-1 M states",
}


def _plain_mcheck(v: Any) -> Any:
    """mcheck's reading as plain data: records and maps as dicts, sets as frozensets."""
    if v is None:
        return ("Nil",)
    if isinstance(v, ModelValue):
        return v.name
    if isinstance(v, Record):
        return {k: _plain_mcheck(x) for k, x in v.fields.items()}
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return {k: _plain_mcheck(getattr(v, k)) for k in v._fields}
    if isinstance(v, Mapping):
        return {_key(_plain_mcheck(k)): _plain_mcheck(x) for k, x in v.items()}
    if isinstance(v, frozenset):
        return frozenset(_key(_plain_mcheck(x)) for x in v)
    if isinstance(v, tuple | list):
        return [_plain_mcheck(x) for x in v]
    return v


def _plain_itf_py(v: Any) -> Any:
    """itf-py's reading as the same plain data."""
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        if type(v).__name__ == "Nil" and not v._fields:
            return ("Nil",)
        return {k: _plain_itf_py(getattr(v, k)) for k in v._fields}
    if isinstance(v, Mapping):
        return {_key(_plain_itf_py(k)): _plain_itf_py(x) for k, x in v.items()}
    if isinstance(v, frozenset):
        return frozenset(_key(_plain_itf_py(x)) for x in v)
    if isinstance(v, tuple | list):
        return [_plain_itf_py(x) for x in v]
    return v


def _key(v: Any) -> Any:
    """A hashable stand-in for a plain value (dict keys and set members)."""
    return json.dumps(v, sort_keys=True, default=sorted) if isinstance(v, dict | list) else v


def test_the_corpus_is_the_shipped_bugs() -> None:
    assert len(VIOLATIONS) >= 15
    kept = {(c.spec, c.variant) for c in VIOLATIONS}
    expected = {(c.spec, c.variant) for c in ALL_VIOLATIONS if c.spec not in ONLY_EXPENSIVE}
    assert expected == kept


@pytest.mark.parametrize("check", VIOLATIONS, ids=[c.name for c in VIOLATIONS])
def test_itf_py_reads_every_shipped_counterexample(check: Any, tmp_path: Path) -> None:
    cls = load_spec_class(check.spec)
    model = CompiledSpec(
        cls(variant=check.variant, **check.constants),
        properties=check.invariants,
        symmetry=check.symmetry,
    )
    deadlock = True if check.expect == "deadlock" else None
    result = run(model, Options(symmetry=check.symmetry, deadlock=deadlock))
    assert result.trace is not None
    path = save_trace(result, model, tmp_path / "t.itf.json")
    theirs = itf_py.trace_from_json(json.loads(path.read_text()))
    ours = read_itf(path)
    assert list(theirs.vars) == list(ours.var_names)
    assert len(theirs.states) == len(ours.states)
    for mine, other in zip(ours.states, theirs.states, strict=True):
        for name in ours.var_names:
            assert _plain_itf_py(other.values[name]) == _plain_mcheck(mine[name]), name
