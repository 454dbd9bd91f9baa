"""The symmetry soundness check refuses each way a spec can break its declaration.

Two of the asymmetric specs here give a *different* (wrong) state count with the
reduction than the orbits of their real state space, so a declaration the check let
through would be a silent wrong answer; the sound control is accepted, and its reduced
count equals the number of orbits computed by brute force (a plain search and the
renamings applied to every state).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from immutables import Map

from checker import CompiledSpec, Options, Spec, action, check_spec, invariant, model_values
from checker.base.errors import SpecError
from checker.check.symmetry import check_symmetry
from checker.model import permute
from checker.values import ModelValue


class State(NamedTuple):
    """A term per server, the servers that voted, and a leader (or None)."""

    term: Map[ModelValue, int]
    voted: frozenset[ModelValue]
    leader: ModelValue | None


class Election(Spec):
    """Servers raise their terms and vote; one may lead.  ``variant`` picks a way to
    break the symmetry the spec declares (``sound`` breaks nothing)."""

    constants = {"Server": model_values("s", 3, group="Server"), "MaxTerm": 2}
    variants = ("sound", "first_special", "ordered", "asymmetric_invariant", "by_name")
    symmetry = ("Server",)
    check_deadlock = False
    Server: tuple[ModelValue, ...]
    MaxTerm: int

    def init(self) -> list[State]:
        return [State(Map(dict.fromkeys(self.Server, 0)), frozenset(), None)]

    @action(over="Server")
    def Bump(self, s: State, i: ModelValue) -> State | None:
        if s.term[i] >= self.MaxTerm:
            return None
        if self.variant == "first_special" and i is self.Server[0] and s.term[i] >= 1:
            return None  # the first server stops one term early
        return s._replace(term=s.term.set(i, s.term[i] + 1))

    @action(over="Server")
    def Vote(self, s: State, i: ModelValue) -> State | None:
        if i in s.voted:
            return None
        if self.variant == "ordered" and any(j.index > i.index for j in s.voted):
            return None  # servers vote in the order of their names
        return s._replace(voted=s.voted | {i})

    @action(over="Server")
    def Lead(self, s: State, i: ModelValue) -> State | None:
        if s.leader is not None or len(s.voted) < 2:
            return None
        if self.variant == "by_name" and str(i) > str(max(s.voted, key=str)):
            return None  # compares names, not values
        return s._replace(leader=i)

    @invariant
    def LeaderHasVoted(self, s: State) -> bool:
        if self.variant == "asymmetric_invariant":
            return s.leader is not self.Server[2] or s.term[self.Server[2]] < 2
        return s.leader is None or len(s.voted) >= 2


def _reachable(spec: Spec) -> list[Any]:
    model = CompiledSpec(spec)
    seen = dict.fromkeys(model.initial_states())
    queue = list(seen)
    while queue:
        s = queue.pop()
        for _, _, t in model.successors(s):
            if model.within(t) and t not in seen:
                seen[t] = None
                queue.append(t)
    return list(seen)


def _orbits(spec: Spec) -> int:
    model = CompiledSpec(spec)
    return len({frozenset(permute(s, p) for p in model.renamings) for s in _reachable(spec)})


@pytest.mark.parametrize("variant", ["first_special", "ordered", "asymmetric_invariant", "by_name"])
def test_each_kind_of_asymmetry_is_refused(variant: str) -> None:
    spec = Election(variant=variant)
    with pytest.raises(SpecError, match="the declared symmetry is not sound"):
        check_symmetry(CompiledSpec(spec))


@pytest.mark.parametrize("variant", ["first_special", "by_name"])
def test_the_refused_declarations_would_have_given_wrong_counts(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Why refusing matters: without the check, the reduced count is not the number of
    # orbits of the reachable states (computed here by brute force).  ("ordered" reaches
    # the same states as the sound spec by another order: refused all the same, since
    # its transitions do not commute with renaming.)
    import importlib

    run_module = importlib.import_module("checker.check.run")
    monkeypatch.setattr(run_module, "check_symmetry", lambda model, deadline=None: None)
    got = check_spec(Election(variant=variant), Options(deadlock=False))
    assert got.stats.distinct != _orbits(Election(variant=variant))


def test_a_sound_declaration_passes_and_counts_orbits() -> None:
    spec = Election(variant="sound")
    check_symmetry(CompiledSpec(spec))
    reduced = check_spec(Election(variant="sound"), Options(deadlock=False))
    full = check_spec(Election(variant="sound"), Options(deadlock=False, symmetry=False))
    assert reduced.stats.distinct == _orbits(spec) < full.stats.distinct == len(_reachable(spec))


def test_the_check_is_deterministic_and_names_the_swap() -> None:
    messages = set()
    for _ in range(2):
        with pytest.raises(SpecError) as info:
            check_symmetry(CompiledSpec(Election(variant="first_special")))
        messages.add(str(info.value))
    assert len(messages) == 1 and "renaming s1->" in messages.pop()


# -- how a spec writes its symmetry -----------------------------------------------------


def test_one_name_is_that_name_not_its_letters() -> None:
    class ByName(Election):
        symmetry = "Server"  # type: ignore[assignment]

    assert ByName.symmetry == ("Server",)
    spec = ByName(variant="sound")
    result = check_spec(spec, Options(deadlock=False))
    assert result.stats.distinct == _orbits(spec) < _orbits_free(spec)


def _orbits_free(spec: Spec) -> int:
    return len(_reachable(spec))


def test_a_symmetry_that_is_not_names_is_one_line() -> None:
    with pytest.raises(SpecError, match="symmetry must name constants"):

        class Numbered(Election):
            symmetry = (1,)  # type: ignore[assignment]

    with pytest.raises(SpecError, match="symmetry is a method"):

        class Method(Election):
            def symmetry(self) -> tuple[str, ...]:  # type: ignore[override]
                return ("Server",)


def test_a_symmetry_property_follows_the_variant() -> None:
    from tests.fixtures.variant_symmetry import VariantSymmetry

    free = CompiledSpec(VariantSymmetry(variant="free"))
    ordered = CompiledSpec(VariantSymmetry(variant="ordered"))
    assert free.symmetric and not ordered.symmetric
    # Free voting: 4 orbits ({}, one voter, two, all); ordered voting declares no
    # symmetry and reaches every subset, unreduced.
    assert check_spec(VariantSymmetry(variant="free"), Options()).stats.distinct == 4
    assert check_spec(VariantSymmetry(variant="ordered"), Options()).stats.distinct == 8
    # Without the reduction the free variant reaches all 8 subsets.
    full = check_spec(VariantSymmetry(variant="free"), Options(symmetry=False))
    assert full.stats.distinct == 8


def test_list_and_run_take_a_symmetry_property() -> None:
    import subprocess
    import sys
    from pathlib import Path

    spec = str(Path(__file__).parent / "fixtures" / "variant_symmetry.py")
    listed = subprocess.run(
        [sys.executable, "-m", "checker", "list", spec], capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert "symmetry: Server (free); none (ordered)" in listed.stdout
    for variant in ("free", "ordered"):
        ran = subprocess.run(
            [sys.executable, "-m", "checker", "run", spec, "--variant", variant],
            capture_output=True,
            text=True,
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
