"""etcd_raft (Specula's etcdraft.tla: the core, snapshots, ReportUnreachable) against TLC.

The figures are TLC's (``-workers 1``, no symmetry unless said) on Specula's
MCetcdraft.tla (case study etcd-raft/scenarios/snapshot) under our wrapper module
``bench/etcd/MCetcdraftBounded.tla`` (a log-length CONSTRAINT: the MC model is
unbounded), produced by ``python -m bench.etcd_tlc`` with the case study's path in
``SPECULA_CASE_STUDIES``; distinct states and depth must be equal.  The larger rows
of docs/specs/etcd-raft.md are left to the bench and one gate row (the suite's time).
"""

from __future__ import annotations

from typing import Any

import pytest

from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.base.errors import ConfigError
from checker.explore.result import Verdict

#: name -> (constants, symmetry, TLC's distinct states, TLC's depth)
TLC: dict[str, tuple[dict[str, Any], bool, int, int]] = {
    "defaults": ({}, False, 4757, 32),
    "one request": ({"RequestLimit": 1}, False, 10337, 33),
    "one restart": ({"RestartLimit": 1}, False, 17483, 36),
    "one drop": ({"DropLimit": 1}, False, 12163, 35),
    "one duplicate": ({"DuplicateLimit": 1}, False, 11321, 33),
    "report unreachable": ({"RequestLimit": 1, "ReportUnreachableLimit": 1}, False, 26561, 34),
}


@pytest.mark.parametrize("name", list(TLC))
def test_counts_equal_tlc(name: str) -> None:
    consts, symmetry, distinct, depth = TLC[name]
    spec = load_spec_class("etcd_raft")(**consts)
    r = check(CompiledSpec(spec, symmetry=symmetry), Options(symmetry=symmetry))
    assert r.verdict is Verdict.OK, r.violated
    assert (r.stats.distinct, r.stats.depth) == (distinct, depth)


@pytest.mark.parametrize("limit", ["PartitionLimit"])
def test_parts_not_ported_are_refused(limit: str) -> None:
    with pytest.raises(ConfigError, match=f"{limit} must be 0"):
        load_spec_class("etcd_raft")(**{limit: 1})
