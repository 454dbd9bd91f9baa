"""Liveness under symmetry (issue 31): the quotient graph, unfolded, is the unreduced
graph, so every verdict, graph size and shortest lasso length equals the unreduced
run's, and every lasso replays as a real behaviour (fingerprint-checked state by
state as it is rebuilt).

Checked on every shipped spec that declares a symmetry and a temporal property, and
on generated symmetric specs (processes as model values, actions that read only
values, never names; seeded initial states that are not closed under renaming; weak,
strong, grouped and per-instance fairness, some of it naming one process; the four
kinds of property, per process or over all).  Where the reduction does not apply (a
property that names a process, instances that do not rename into each other,
workers) the run says so and checks the unreduced graph, with the same answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pyrsistent import PMap, pmap

from checker import Options, Spec, action, check_spec
from checker.authoring.spec import always_eventually, eventually, eventually_always, leads_to
from checker.check.assemble import explore
from checker.cli.commands import build_spec, main
from checker.explore.result import Result
from checker.liveness.quotient import QuotientRecorder
from checker.model import CompiledSpec
from checker.values import ModelValue, model_values
from checker.values.fingerprint import fingerprint
from tests.test_liveness_parallel import _same_graph

PROCS = model_values("lp", 3, group="Procs")

#: Shipped specs with a symmetry and temporal properties, at small bounds.
SHIPPED: list[tuple[str, str, tuple[str, ...]]] = [
    ("ratis_heartbeat_match_index", "bug", ("MaxMsgs=1",)),
    ("ratis_heartbeat_match_index", "fix", ("MaxLogLen=2", "MaxMsgs=1")),
    ("scm_new_leader_dn_server_start", "mutant_never_start_leader", ()),
    ("scm_new_leader_dn_server_start", "fix", ()),
    ("om_leader_ready_before_apply", "fix", ("MAX_LOG=2",)),
    ("om_leader_ready_before_apply", "bug", ("MAX_LOG=2",)),
]


def _both(spec_of: Any, props: list[str] | None = None) -> tuple[Result, Result]:
    plain = check_spec(spec_of(), Options(symmetry=False), properties=props)
    reduced = check_spec(spec_of(), Options(symmetry=True), properties=props)
    return plain, reduced


def _same_answer(plain: Result, reduced: Result) -> None:
    assert (plain.verdict, plain.violated, plain.liveness) == (
        reduced.verdict,
        reduced.violated,
        reduced.liveness,
    )
    if plain.liveness or plain.verdict.value == "ok":
        # The unfolded graph is the unreduced one: same states, same edges.
        assert plain.graph == reduced.graph
    if plain.trace is None:
        assert reduced.trace is None
        return
    assert reduced.trace is not None
    assert plain.trace.length == reduced.trace.length
    assert (plain.trace.loop is None) == (reduced.trace.loop is None)


def _reduced_used(reduced: Result) -> None:
    assert reduced.symmetry
    assert not any("without symmetry reduction" in w for w in reduced.warnings)


@pytest.mark.parametrize("case", SHIPPED, ids=lambda c: f"{c[0]}-{c[1]}-{len(c[2])}")
def test_shipped_liveness_with_symmetry_equals_without(case: Any) -> None:
    name, variant, consts = case
    props = type(build_spec(name, variant, consts)).temporal_names()
    plain, reduced = _both(lambda: build_spec(name, variant, consts), props)
    _same_answer(plain, reduced)
    _reduced_used(reduced)
    assert reduced.stats.distinct < plain.stats.distinct  # the exploration was reduced


# -- generated symmetric specs -----------------------------------------------------


class LiveState(NamedTuple):
    """Per process a level; one shared counter."""

    level: PMap[ModelValue, int]
    shared: int


@dataclass(frozen=True)
class LiveAct:
    """An action over one process (or a pair), reading values only."""

    salt: int
    guard: int  #: disabled where the hash is 0 modulo this
    pair: bool  #: over (p, q), p != q: q takes a value from p's and its own
    shared: bool  #: writes the shared counter too


@dataclass(frozen=True)
class LiveDesc:
    """A generated symmetric spec with temporal properties."""

    nprocs: int
    levels: int
    actions: tuple[LiveAct, ...]
    #: (action index, or a tuple of them as one action, "weak"/"strong", only lp1's?)
    fairness: tuple[tuple[Any, str, bool], ...]
    #: (kind, target level, other level, per process)
    props: tuple[tuple[str, int, int, bool], ...]
    seeded: bool  #: lp1 starts one level up (initial states not closed under renaming)
    bound: int | None  #: a state constraint on the sum of the levels


@st.composite
def live_descs(draw: Any) -> LiveDesc:
    """A random LiveDesc (a few hundred states at most)."""
    nprocs = draw(st.sampled_from([2, 3]))
    levels = draw(st.integers(2, 4))
    acts = tuple(
        LiveAct(
            draw(st.integers(0, 999)),
            draw(st.sampled_from([2, 3, 5, 97])),
            draw(st.booleans()),
            draw(st.booleans()),
        )
        for _ in range(draw(st.integers(1, 3)))
    )
    # At most two fairness entries, one per instance (over one process): the exact
    # shortest fair cycle is searched over subsets of the constraints met, so a dozen
    # per-pair constraints take tens of seconds a spec (a cost of the search, the
    # same with and without symmetry, not what this test is about).
    fair: list[tuple[Any, str, bool]] = []
    for i in range(len(acts)):
        if len(fair) < 2 and draw(st.booleans()):
            kind = draw(st.sampled_from(["weak", "strong"]))
            if acts[i].pair or any(type(f[0]) is int for f in fair):
                fair.append(((i,), kind, False))  # the family as one action
            else:
                fair.append((i, kind, draw(st.booleans())))
    if len(acts) > 1 and len(fair) < 2 and draw(st.booleans()):
        fair.append(((0, 1), draw(st.sampled_from(["weak", "strong"])), False))
    kinds = ["eventually", "always_eventually", "eventually_always", "leads_to"]
    props = tuple(
        (
            draw(st.sampled_from(kinds)),
            draw(st.integers(0, levels - 1)),
            draw(st.integers(0, levels - 1)),
            draw(st.booleans()),
        )
        for _ in range(draw(st.integers(1, 2)))
    )
    bound = draw(st.sampled_from([None, None, nprocs * (levels - 1) - 1]))
    return LiveDesc(nprocs, levels, acts, tuple(fair), props, draw(st.booleans()), bound)


def build_live(desc: LiveDesc) -> type[Spec]:
    """The Spec class a LiveDesc describes."""
    procs = PROCS[: desc.nprocs]
    levels = desc.levels

    def init(self: Any) -> list[LiveState]:
        start = dict.fromkeys(procs, 0)
        if desc.seeded:
            start[procs[0]] = 1
        return [LiveState(pmap(start), 0)]

    def step(a: LiveAct) -> Any:
        def move(s: LiveState, src: ModelValue, dst: ModelValue) -> LiveState | None:
            h = fingerprint((a.salt, s.level[src], s.level[dst], s.shared))
            if h % a.guard == 0:
                return None
            new = (s.level[src] + 1 + (h >> 7) % 2) % levels
            shared = (s.shared + (h >> 13) % 2) % 3 if a.shared else s.shared
            return LiveState(s.level.set(dst, new), shared)

        def one(self: Any, s: LiveState, p: ModelValue) -> LiveState | None:
            return move(s, p, p)

        def two(self: Any, s: LiveState, p: ModelValue, q: ModelValue) -> LiveState | None:
            return None if p == q else move(s, p, q)

        return two if a.pair else one

    ns: dict[str, Any] = {
        "constants": {"Procs": procs},
        "symmetry": ("Procs",),
        "check_deadlock": False,
        "init": init,
    }
    for k, a in enumerate(desc.actions):
        fn = step(a)
        fn.__name__ = f"A{k}"
        ns[f"A{k}"] = action(over=("Procs", "Procs") if a.pair else "Procs")(fn)
    fairness: dict[Any, Any] = {}
    for which, kind, only_first in desc.fairness:
        if isinstance(which, tuple):
            fairness[tuple(f"A{i}" for i in which)] = kind
        elif only_first and desc.actions[which].pair:
            fairness[f"A{which}"] = (kind, lambda p, q: p == PROCS[0])
        elif only_first:
            fairness[f"A{which}"] = (kind, lambda p: p == PROCS[0])
        else:
            fairness[f"A{which}"] = kind
    ns["fairness"] = fairness
    for n, (kind, target, other, per_proc) in enumerate(desc.props):
        name = f"P{n}"
        if kind == "leads_to":

            def q(self: Any, s: LiveState, p: ModelValue, t: int = target) -> bool:
                return s.level[p] == t

            def pre(self: Any, s: LiveState, p: ModelValue, o: int = other) -> bool:
                return s.level[p] == o

            fn = leads_to(pre, over=("Procs",), name=name)(q)
        else:
            deco = {
                "eventually": eventually,
                "always_eventually": always_eventually,
                "eventually_always": eventually_always,
            }[kind]
            if per_proc:

                def pp(self: Any, s: LiveState, p: ModelValue, t: int = target) -> bool:
                    return s.level[p] == t

                fn = deco(over=("Procs",), name=name)(pp)
            else:

                def anyp(self: Any, s: LiveState, t: int = target) -> bool:
                    return any(v == t for v in s.level.values()) and s.shared != 2

                fn = deco(name=name)(anyp)
        ns[name] = fn
    if desc.bound is not None:
        ns["constraint"] = lambda self, s, b=desc.bound: sum(s.level.values()) <= b
    return type("GeneratedLive", (Spec,), ns)


@settings(max_examples=40, deadline=None)
@given(live_descs())
def test_generated_liveness_with_symmetry_equals_without(desc: LiveDesc) -> None:
    cls = build_live(desc)
    plain, reduced = _both(cls)
    _same_answer(plain, reduced)
    _reduced_used(reduced)


# -- where the reduction does not apply --------------------------------------------


class NamesOne(Spec):
    """A property that names one process: the symmetry holds for the invariant-free
    transition relation, not for the property, so liveness runs unreduced."""

    constants = {"Procs": PROCS[:3]}
    symmetry = ("Procs",)
    check_deadlock = False
    fairness = {"Up": "weak"}

    def init(self) -> list[LiveState]:
        """Every process at level 0."""
        return [LiveState(pmap(dict.fromkeys(self.Procs, 0)), 0)]

    @action(over="Procs")
    def Up(self, s: LiveState, p: ModelValue) -> LiveState | None:
        """A process climbs to level 2, and only the first falls back."""
        if s.level[p] >= 2:
            return None
        return s._replace(level=s.level.set(p, s.level[p] + 1))

    @eventually
    def FirstAtTwo(self, s: LiveState) -> bool:
        """lp1 reaches level 2 (names a process)."""
        return s.level[PROCS[0]] == 2

    @eventually(over=lambda self: self.Procs[:1])
    def SomeAtTwo(self, s: LiveState, p: ModelValue) -> bool:
        """Instances over part of the set: they do not rename into each other."""
        return s.level[p] == 2


@pytest.mark.parametrize("prop", ["FirstAtTwo", "SomeAtTwo"])
def test_an_asymmetric_property_is_checked_unreduced(prop: str) -> None:
    plain, reduced = _both(NamesOne, [prop])
    _same_answer(plain, reduced)
    assert reduced.verdict.value == "ok"
    assert any("without symmetry reduction" in w for w in reduced.warnings)


def test_a_checkpointed_run_checks_liveness_unreduced_and_says_so(tmp_path: Path) -> None:
    spec = build_spec("scm_new_leader_dn_server_start", "mutant_never_start_leader", ())
    props = type(spec).temporal_names()
    one = check_spec(spec, Options(symmetry=True), properties=props)
    saved = check_spec(
        spec, Options(symmetry=True, checkpoint=str(tmp_path / "ck")), properties=props
    )
    _same_answer(one, saved)
    assert any("not checkpointed" in w for w in saved.warnings)


# -- the quotient graph built by workers -------------------------------------------


def _quotient(case: tuple[str, str, tuple[str, ...]], opts: Options) -> QuotientRecorder:
    name, variant, consts = case
    model = CompiledSpec(build_spec(name, variant, consts), symmetry=True)
    unchecked = model.without_invariants()
    outcome, rec = explore(
        unchecked,
        opts,
        model.renamings,
        False,
        [],
        record=lambda: QuotientRecorder(unchecked, model.renamings),
    )
    assert isinstance(rec, QuotientRecorder) and outcome.verdict.value == "ok"
    return rec


@pytest.mark.parametrize("case", SHIPPED[1:3], ids=lambda c: f"{c[0]}-{c[1]}-{len(c[2])}")
def test_two_workers_build_the_one_process_quotient_graph(case: Any) -> None:
    one, two = _quotient(case, Options()), _quotient(case, Options(workers=2))
    _same_graph(one.graph, two.graph)
    assert bytes(one.lanes) == bytes(two.lanes)
    assert one.perm == two.perm
    assert one.enabled_iids == two.enabled_iids


@pytest.mark.parametrize("case", SHIPPED[:3], ids=lambda c: f"{c[0]}-{c[1]}-{len(c[2])}")
def test_a_liveness_run_under_symmetry_with_workers_equals_one_process(case: Any) -> None:
    name, variant, consts = case
    spec = build_spec(name, variant, consts)
    props = type(spec).temporal_names()
    one, two = (check_spec(spec, Options(workers=w), properties=props) for w in (1, 2))
    _same_answer(one, two)
    _reduced_used(two)
    assert (one.stats.distinct, one.stats.generated) == (two.stats.distinct, two.stats.generated)
    if one.trace is not None:
        assert two.trace is not None and one.trace.loop == two.trace.loop
        assert one.trace.states() == two.trace.states()


def test_cli_reports_the_reduced_and_the_unfolded_graph(tmp_path: Path) -> None:
    args = ["ratis_heartbeat_match_index", "--property", "FollowersEventuallyMatchLeader"]
    args += ["--const", "MaxMsgs=1", "--variant", "fix", "--json"]
    runner = CliRunner()
    reduced = json.loads(runner.invoke(main, ["run", *args]).stdout)
    plain = json.loads(runner.invoke(main, ["run", *args, "--no-symmetry"]).stdout)
    assert reduced["result"] == plain["result"] == "ok"
    assert reduced["symmetry"] is True
    assert reduced["liveness_graph"] == plain["liveness_graph"]
    assert reduced["liveness_graph"]["states"] == plain["distinct_states"]
    assert reduced["distinct_states"] < plain["distinct_states"]
