"""The fast engine (checker.fast) against the plain one: same answers, and its
safety nets.

Every figure of a run (verdict, distinct and generated states, depth, per-action
coverage, the counterexample) must be the same with the caches as without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

from checker import Options, Spec, action, check_spec, invariant
from checker.errors import SpecError
from checker.loader import load_spec_class
from checker.result import Verdict
from tests.seed_helpers import figures

FIXTURES = Path(__file__).parent / "fixtures"


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


def test_a_hidden_read_is_caught_and_the_run_redone() -> None:
    cls = load_spec_class(str(FIXTURES / "hidden_read.py"))
    cached = check_spec(cls())
    direct = check_spec(cls(), Options(cache=False))
    assert figures(cached, per_action=True) == figures(direct, per_action=True)
    assert cached.verdict is Verdict.VIOLATION and cached.trace is not None
    assert any("IncY" in w and "uncached" in w for w in cached.warnings)


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


def test_values_equal_in_python_but_different_are_refused() -> None:
    with pytest.raises(SpecError, match="compare equal in Python but are different"):
        check_spec(ConfusableNT())
