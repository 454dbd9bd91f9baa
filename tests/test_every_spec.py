"""Every shipped spec and variant, at small constants: the fast engine (default) and
the plain one (``--no-cache``) give the same figures, per action, and the same
counterexample; with symmetry where the spec declares it, and without.

The generated specs of tests/test_differential.py try what a spec could do; these are
what users run.  The constants are the smallest that still reach each spec's
mechanism (the gate and the spec tests check the figures themselves).
"""

from __future__ import annotations

from typing import Any

import pytest

from checker import Options, check_spec
from checker.authoring.loader import available_specs, load_spec_class
from tests.seed_helpers import figures

#: Constants per spec (those not named run at their defaults).
SMALL: dict[str, dict[str, Any]] = {
    "chameneos": {"N": 3, "M": 3},
    "lamport_mutex": {"N": 2, "maxClock": 4},
    "multipaxos": {"Replicas": "2", "MaxBallot": 1},
    "om_leader_ready_before_apply": {"MAX_LOG": 3},
    "paxos_commit": {"RM": "r1"},
    "raft": {"Server": "2", "MaxTerm": 2, "MaxLogLen": 1},
    "ratis_heartbeat_match_index": {"MaxMsgs": 1},
    "simple_regular": {"N": 3},
    "token_ring": {"N": 3, "M": 3},
}


def _cases() -> list[Any]:
    out = []
    for name in available_specs():
        cls = load_spec_class(name)
        for variant in cls.variants or ("default",):
            for symmetry in (False, True) if cls.symmetry else (False,):
                out.append(pytest.param(name, variant, symmetry, id=f"{name}-{variant}-{symmetry}"))
    return out


@pytest.mark.parametrize(("name", "variant", "symmetry"), _cases())
def test_fast_and_plain_engines_agree(name: str, variant: str, symmetry: bool) -> None:
    cls = load_spec_class(name)
    spec = cls(variant=variant, **SMALL.get(name, {}))
    runs = [check_spec(spec, Options(symmetry=symmetry, cache=c)) for c in (True, False)]
    assert figures(runs[0], per_action=True) == figures(runs[1], per_action=True)
    if runs[0].trace is not None:
        assert runs[1].trace is not None
        assert [s.state for s in runs[0].trace.steps] == [s.state for s in runs[1].trace.steps]
