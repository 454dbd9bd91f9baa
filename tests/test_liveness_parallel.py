"""Liveness over ``--workers`` and ``--cluster`` (issue 31): the partitions build the
behaviour graph, and it is the one process's graph, edge for edge.

Each shipped spec with a temporal property, per variant: the graph put together from
two workers' parts equals the graph one process records (states, edges in order, the
action instances and fairness constraints they meet, which states are cut, every
temporal predicate's truth), and a whole run (safety, then the fair-cycle search)
gives the same verdict, counts and lasso.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import check_spec
from checker.check.assemble import explore
from checker.cli.commands import build_spec
from checker.explore.options import Options
from checker.liveness.stategraph import GraphRecorder, StateGraph
from checker.model import CompiledSpec
from checker.store.fingerprints import FingerprintIndex

#: (spec, variant, constants, whether its temporal properties alone fail with a
#: lasso): small enough for the default suite; between them, edges cut by a
#: constraint, fairness on action instances and on groups, passes and lassos.
CASES: list[tuple[str, str | None, tuple[str, ...], bool]] = [
    ("coffee_can", None, ("MaxBeanCount=20",), False),
    ("ewd840", None, (), False),
    ("token_ring", None, ("N=4", "M=4"), False),
    ("prisoners", None, (), False),
    ("ratis_heartbeat_match_index", "bug", ("MaxLogLen=2", "MaxMsgs=1"), True),
    ("ratis_heartbeat_match_index", "fix", ("MaxLogLen=2", "MaxMsgs=1"), False),
    ("scm_install_snapshot_leader_change", "bug", ("MAX_ELECTIONS=1",), True),
    ("scm_install_snapshot_leader_change", "mutant_keep_download", ("MAX_ELECTIONS=1",), False),
    ("ratis_empty_snapshot_index_default", "bug", (), True),
    ("ratis_empty_snapshot_index_default", "fix", (), False),
    ("scm_new_leader_dn_server_start", "fix", (), False),
    ("scm_new_leader_dn_server_start", "mutant_never_start_leader", (), True),
    ("om_leader_ready_before_apply", "fix", ("MAX_LOG=2",), False),
]


def _graph(case: tuple[str, str | None, tuple[str, ...], bool], opts: Options) -> StateGraph:
    name, variant, consts, _ = case
    model = CompiledSpec(build_spec(name, variant, consts), symmetry=False)
    unchecked = model.without_invariants()
    outcome, recorder = explore(
        unchecked, opts, [{}], False, [], record=lambda: GraphRecorder(unchecked)
    )
    assert recorder is not None and outcome.verdict.value == "ok"
    return recorder.graph


def _same_graph(a: StateGraph, b: StateGraph) -> None:
    assert a.size == b.size and a.edges == b.edges
    assert a.init == b.init
    assert list(a.succ) == list(b.succ)
    assert a.index_rows() == b.index_rows()
    assert a.enabled == b.enabled
    assert a.cut == b.cut
    assert a.instances == b.instances
    assert a.member == b.member
    assert a.fair == b.fair
    assert a.truth == b.truth


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_two_workers_build_the_one_process_graph(case: Any) -> None:
    _same_graph(_graph(case, Options()), _graph(case, Options(workers=2)))


@pytest.mark.parametrize("temporal_only", [False, True], ids=["all", "temporal"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_a_liveness_run_with_workers_equals_one_process(case: Any, temporal_only: bool) -> None:
    name, variant, consts, lasso = case
    spec = build_spec(name, variant, consts)
    props = type(spec).temporal_names() if temporal_only else None
    # Without symmetry: one process would check these under it (the quotient graph,
    # unfolded), which the workers do not build (tests/test_liveness_symmetry.py).
    runs = [check_spec(spec, Options(workers=w, symmetry=False), properties=props) for w in (1, 2)]
    one, two = runs
    if temporal_only:  # the lassos are compared, not only passes
        assert one.liveness == lasso
    assert (one.verdict, one.violated, one.liveness) == (two.verdict, two.violated, two.liveness)
    assert (one.stats.distinct, one.stats.generated, one.stats.depth) == (
        two.stats.distinct,
        two.stats.generated,
        two.stats.depth,
    )
    assert one.graph == two.graph
    if one.trace is None:
        assert two.trace is None
        return
    assert two.trace is not None
    assert one.trace.loop == two.trace.loop
    assert [s.state for s in one.trace.steps] == [s.state for s in two.trace.steps]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=20), max_size=6), st.data())
def test_the_fingerprint_index_answers_as_a_dict(levels: list[list[int]], data: Any) -> None:
    """The coordinator's fingerprint -> ordinal index, grown a level at a time."""
    index = FingerprintIndex()
    plain: dict[int, int] = {}
    for level in levels:
        fresh = [fp for fp in dict.fromkeys(level) if fp not in plain]
        for fp in fresh:
            plain[fp] = len(plain)
        index.add(np.array(fresh, dtype=np.uint64))
    probes = [*plain, *data.draw(st.lists(st.integers(0, 2**64 - 1), max_size=10))]
    ordinal, found = index.find(np.array(probes, dtype=np.uint64))
    for fp, o, f in zip(probes, ordinal.tolist(), found.tolist(), strict=True):
        assert f == (fp in plain)
        if f:
            assert o == plain[fp]
