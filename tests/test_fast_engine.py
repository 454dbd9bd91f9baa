"""The fast engine (checker.fastpath) against the plain one: same answers, and its
safety nets.

Every figure of a run (verdict, distinct and generated states, depth, per-action
coverage, the counterexample) must be the same with the caches as without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

from checker import Options, Spec, action, check_spec, invariant
from checker.authoring.loader import load_spec_class
from checker.explore.result import Verdict
from tests.seed_helpers import figures

FIXTURES = Path(__file__).parent / "fixtures"

# (the default engine makes the fast engine after 3,000 states: see conftest.py)
pytestmark = pytest.mark.usefixtures("fast_engine_from_the_first_state")


CASES = [
    ("raft", None, {"Server": "2", "MaxTerm": 2, "MaxLogLen": 1}, False),
    ("raft", None, {"Server": "2", "MaxTerm": 2, "MaxLogLen": 1}, True),
    ("two_phase", None, {"RM": "4"}, True),
    ("die_hard", None, {}, False),
    ("scm_install_snapshot_leader_change", "bug", {}, True),
    ("scm_install_snapshot_leader_change", "fix", {}, True),
    ("scm_new_leader_dn_server_start", "fix", {}, True),
    ("ratis_empty_snapshot_index_default", "bug", {}, False),
    ("om_leader_ready_before_apply", "bug", {}, True),
    ("ratis_heartbeat_match_index", "bug", {"MaxMsgs": 1}, True),
    ("tcommit", None, {}, False),
    ("chameneos", None, {"N": 3, "M": 3}, False),
    ("lamport_mutex", None, {"N": 2, "maxClock": 4}, False),
    ("paxos_commit", None, {"RM": "r1"}, False),
]


@pytest.mark.parametrize(("spec", "variant", "consts", "symmetry"), CASES)
def test_cached_and_direct_runs_agree(
    spec: str, variant: str | None, consts: dict[str, Any], symmetry: bool
) -> None:
    cls = load_spec_class(spec)
    runs = [
        check_spec(cls(variant=variant, **consts), Options(symmetry=symmetry, cache=cache))
        for cache in (True, False)
    ]
    assert figures(runs[0], per_action=True) == figures(runs[1], per_action=True)


def test_workers_with_the_fast_engine_agree() -> None:
    cls = load_spec_class("raft")
    spec = cls(Server="2", MaxTerm=2, MaxLogLen=1)
    one = check_spec(spec, Options(symmetry=True))
    two = check_spec(spec, Options(symmetry=True, workers=2))
    assert figures(one, per_action=True) == figures(two, per_action=True)


def test_a_read_around_the_fields_counts_as_reading_every_slot() -> None:
    """IncY reads with tuple.__getitem__, around the field: the state goes to code
    that is not instrumented (a C method), so its evaluation counts every slot as
    read, and its cached outcomes are keyed on the whole state; IncX, which reads its
    field, is keyed on x alone."""
    from checker.explore.expansion import ExpansionSettings
    from checker.fastpath import FastExpansion
    from checker.fastpath.reads import EVERY
    from checker.model import CompiledSpec

    cls = load_spec_class(str(FIXTURES / "hidden_read.py"))
    cached = check_spec(cls())
    direct = check_spec(cls(), Options(cache=False))
    assert figures(cached, per_action=True) == figures(direct, per_action=True)
    assert cached.verdict is Verdict.VIOLATION and cached.trace is not None
    model = CompiledSpec(cls())
    exp = FastExpansion(model, [{}], False, ExpansionSettings())
    state = model.initial_states()[0]
    reads = {}
    for index in (0, 1):
        effect = model.family_callables(index)[1]
        exp.log.begin(state)
        exp.log.entry(effect)(state)
        reads[model.action_names[index]] = list(dict.fromkeys(exp.log.reads))
    assert reads["IncX"] == [exp.log.layout.whole_slot[0]]
    assert EVERY in reads["IncY"]


def test_a_map_whose_keys_grow_late_is_handled() -> None:
    cls = load_spec_class(str(FIXTURES / "growing_keys.py"))
    cached = check_spec(cls())
    direct = check_spec(cls(), Options(cache=False))
    assert figures(cached, per_action=True) == figures(direct, per_action=True)
    assert cached.stats.distinct == 4501


class Ping(NamedTuple):
    src: int
    dst: int


class Pong(NamedTuple):
    src: int
    dst: int


class Confusable(Spec):
    """A message variable that holds a Ping in one state and an equal Pong in another."""

    check_deadlock = False

    def init(self) -> list[Any]:
        return [(0, Ping(1, 2))]

    @action
    def Flip(self, s: Any) -> Any:
        return (1, Pong(1, 2)) if s[0] == 0 else None

    @invariant
    def Fine(self, s: Any) -> bool:
        return True


class Wrap(NamedTuple):
    n: int
    msg: Any


class ConfusableNT(Spec):
    """The same, with a NamedTuple state (served by the fast engine)."""

    check_deadlock = False

    def init(self) -> list[Wrap]:
        return [Wrap(0, Ping(1, 2))]

    @action
    def Flip(self, s: Wrap) -> Wrap | None:
        return Wrap(1, Pong(1, 2)) if s.n == 0 else None

    @invariant
    def Fine(self, s: Wrap) -> bool:
        return True


def test_values_equal_in_python_but_different_are_told_apart() -> None:
    """Ping(1, 2) == Pong(1, 2) in Python; two states here, in both engines (the fast
    engine used to refuse the spec, or, past 2,000 lookups, to merge them)."""
    for spec in (ConfusableNT(), Confusable()):
        runs = [check_spec(spec, Options(cache=cache)) for cache in (True, False)]
        assert figures(runs[0], per_action=True) == figures(runs[1], per_action=True)
        assert runs[0].verdict is Verdict.OK and runs[0].stats.distinct == 2


def _expand_both_ways(spec: Spec, symmetry: bool, limit: int = 6000) -> tuple[Any, int]:
    """Breadth-first over a spec, expanding each state with the root index and with
    a probe per tree; asserts the two agree and returns the indexed expansion and the
    number of states compared."""
    from collections import deque

    from checker.explore.expansion import ExpansionSettings
    from checker.fastpath import FastExpansion
    from checker.model import CompiledSpec

    model = CompiledSpec(spec, symmetry=symmetry)
    renamings = model.renamings if symmetry else [{}]
    indexed = FastExpansion(model, renamings, False, ExpansionSettings())
    plain = FastExpansion(model, renamings, False, ExpansionSettings())
    plain.indexed = False
    seen: set[int] = set()
    queue: deque[Any] = deque()
    for s in model.initial_states():
        seen.add(indexed.fingerprint_of(s))
        queue.append(s)
    compared = 0
    while queue and compared < limit:
        s = queue.popleft()
        a = indexed.expand(compared, indexed.handle_of(s))
        b = plain.expand(compared, plain.handle_of(s))
        assert [(k, ai, p, fp) for k, ai, p, _, fp in a[1]] == [
            (k, ai, p, fp) for k, ai, p, _, fp in b[1]
        ]
        assert a[0] == b[0] and (a[2] is None) == (b[2] is None)
        compared += 1
        for _, _, _, child, fp in a[1]:
            if fp is not None and fp not in seen:
                seen.add(fp)
                queue.append(indexed.state(child))
    return indexed, compared


def test_the_root_index_gives_every_tree_probe_s_successors() -> None:
    # One probe of the index stands for the instances disabled at their first read;
    # state by state it must give what probing every instance's tree gives.
    for name, consts, sym in (
        ("raft", {"Server": "3", "MaxTerm": 2, "MaxLogLen": 0}, True),
        ("scm_install_snapshot_leader_change", {}, False),
        ("lamport_mutex", {"N": 2, "maxClock": 6}, False),
    ):
        exp, compared = _expand_both_ways(load_spec_class(name)(**consts), sym)
        assert compared > 1000 and exp.indexed, name
        assert exp.roots_mask and 0 < len(exp.by_roots) < compared, name


class Cube(NamedTuple):
    """Three counters."""

    a: int
    b: int
    c: int


class Counting(Spec):
    """Each action reads another counter first, so the combinations of first reads
    are as many as the states: entries of the root index would never be reused."""

    constants = {"N": 20}
    check_deadlock = False
    N: int

    def init(self) -> list[Cube]:
        return [Cube(0, 0, 0)]

    @action
    def IncA(self, s: Cube) -> Cube | None:
        return s._replace(a=s.a + 1) if s.a < self.N else None

    @action
    def IncB(self, s: Cube) -> Cube | None:
        return s._replace(b=s.b + 1) if s.b < self.N else None

    @action
    def IncC(self, s: Cube) -> Cube | None:
        return s._replace(c=s.c + 1) if s.c < self.N else None


def test_the_root_index_steps_aside_where_it_does_not_pay(monkeypatch: pytest.MonkeyPatch) -> None:
    import checker.fastpath.expansion

    monkeypatch.setattr(checker.fastpath.expansion, "ROOT_INDEX_WINDOW", 512)
    exp, compared = _expand_both_ways(Counting(), False, limit=10_000)
    assert compared == 21**3 and not exp.wide and all(c.cached for c in exp.caches)
    assert not exp.indexed and not exp.by_roots
