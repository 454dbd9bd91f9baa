"""The fast engine's pilot against an oracle: the same short breadth-first look,
with states and values told apart by the value model's injective encoding (no
fingerprints, no Python hash or ==), must give the same wide variables and the same
fixed-key maps."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from checker.authoring.loader import load_spec_class
from checker.fastpath import pilot as pilot_module
from checker.model import CompiledSpec
from checker.values.fingerprint import encode, in_order
from tests.fixtures.pilot_values import PilotValues


def oracle(model: CompiledSpec, limit: int) -> tuple[set[int], dict[int, tuple[Any, ...]]]:
    """The pilot's rules, spelled out over encodings."""
    nvars = len(model.var_names)
    values: list[set[Any]] = [set() for _ in range(nvars)]
    keys: list[set[Any]] = [set() for _ in range(nvars)]
    maps = [True] * nvars
    seen: set[Any] = set()
    queue: deque[Any] = deque()

    def visit(s: Any) -> None:
        vals = tuple(model.variables(s))
        code = tuple(encode(v) for v in vals)
        if code in seen or not model.within(s):
            return
        seen.add(code)
        queue.append(s)
        for i, v in enumerate(vals):
            values[i].add(code[i])
            if type(v) in pilot_module._MAP_TYPES:
                keys[i].add((type(v), frozenset(encode(k) for k in v)))
            else:
                maps[i] = False

    for s in model.initial_states():
        visit(s)
    while queue and len(seen) < limit:
        for _, _, t in model.successors(queue.popleft()):
            visit(t)
    n = len(seen)
    wide = {i for i, v in enumerate(values) if len(v) >= 512 and len(v) * 5 > n}
    fixed = {}
    for i in range(nvars):
        if maps[i] and len(keys[i]) == 1 and i not in wide:
            sample = model.variables(model.initial_states()[0])[i]
            if len(sample):
                fixed[i] = tuple(in_order(sample.keys()))
    return wide, fixed


@pytest.mark.parametrize(
    ("spec", "consts"),
    [
        ("tests.fixtures.pilot_values", {}),
        ("bench.gossip", {"Keys": "4", "MaxWrites": "4"}),
        ("paxos_commit", {}),
        ("lamport_mutex", {}),
        ("raft", {"MaxLogLen": "1"}),
        ("tests.fixtures.growing_keys", {}),
    ],
)
def test_the_pilot_agrees_with_an_oracle_over_encodings(spec: str, consts: dict[str, str]) -> None:
    cls = PilotValues if spec == "tests.fixtures.pilot_values" else load_spec_class(spec)
    model = CompiledSpec(cls(**consts), symmetry=False)
    model.initial_states()
    got = pilot_module.pilot(model)
    assert got == oracle(model, pilot_module.PILOT_STATES)


def test_the_pilot_counts_values_as_the_value_model_does() -> None:
    # grows holds a past n under a changing key: about as many values as states
    # (wide); views at most 625, n only as many as the look reaches levels.  views
    # and fixed keep their keys.
    model = CompiledSpec(PilotValues(), symmetry=False)
    model.initial_states()
    wide, fixed = pilot_module.pilot(model)
    names = model.var_names
    assert {names[i] for i in wide} == {"grows"}
    assert {names[i]: k for i, k in fixed.items()} == {"views": (0, 1), "fixed": ("a", "b")}
