"""Is a symmetry declaration sound?  Checked on a sample of reachable states before a
run reduces by it (safety), and before a liveness run explores the quotient graph.

A renaming of the symmetric sets must map states to states with the same verdicts and
successors to successors; a spec that stores a server as an int or a string, or
orders servers by name, fails this and would otherwise get a wrong state count
silently.  The renamings themselves are :mod:`checker.model.renamings`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checker.base.errors import EvaluationError
from checker.model import instance_partners, permute
from checker.values import ModelValue
from checker.values.fingerprint import Renaming, encode
from checker.values.kinds import StateValueError

SOUNDNESS_SAMPLE = 120
WALK_LENGTH = 40


def _generators(rens: list[dict[ModelValue, ModelValue]]) -> list[dict[ModelValue, ModelValue]]:
    """The transpositions (one pair of members swapped): they generate the group, and
    a spec that treats two members differently is caught by their swap."""
    return [r for r in rens if len(r) == 2]


class _Sample:
    """Reachable states to check a symmetry declaration on, and their fingerprints
    as they are and renamed by each transposition.

    The sample is the initial states and then the states met along deterministic
    random walks (a fixed seed): deep states, where the members' values differ, say
    more than the first breadth-first ones, which are mostly symmetric themselves.
    Successors are compared by fingerprints taken under the renaming (one remembered
    term per map entry and set element), so nothing is renamed but the state itself.
    """

    def __init__(self, model: Any) -> None:
        from checker.values.fingerprint import TermCalculator

        self.model = model
        self.gens = _generators(model.renamings)
        self.calc = TermCalculator([{}, *self.gens])
        # A successor shares most variables' values with its parent (the very
        # objects): their terms are remembered by identity, holding the value so its
        # id stays its own.
        self.terms: dict[tuple[int, int], tuple[Any, int]] = {}

    def fps(self, state: Any) -> tuple[int, ...]:
        """The state's fingerprint as is (first) and renamed by each generator."""
        lanes = self.calc.lanes
        assert lanes is not None
        total = 0
        for i, v in enumerate(self.model.variables(state)):
            hit = self.terms.get((i, id(v)))
            if hit is None or hit[0] is not v:
                hit = (v, self.calc.term(i, v))
                self.terms[(i, id(v))] = hit
            total += hit[1]
        return tuple(lanes.split(total))

    def walk(self, deadline: float | None) -> Iterator[tuple[Any, list[Any]]]:
        """Distinct sampled states with their successors, until the sample is full
        or the deadline passes."""
        import random
        import time

        model = self.model
        inits = model.initial_states()
        rng = random.Random(0)
        checked: set[tuple[int, ...]] = set()
        steps = 0
        walk = 0
        while len(checked) < SOUNDNESS_SAMPLE and steps < 4 * SOUNDNESS_SAMPLE:
            s = inits[walk % len(inits)]
            walk += 1
            for _ in range(WALK_LENGTH):
                if deadline is not None and time.perf_counter() >= deadline:
                    return
                steps += 1
                succ = model.successors(s)
                key = self.fps(s)
                if key not in checked:
                    checked.add(key)
                    yield s, succ
                inside = [t for _, _, t in succ if model.within(t)]
                if not inside or len(checked) >= SOUNDNESS_SAMPLE:
                    break
                s = rng.choice(inside)


def check_symmetry(model: Any, deadline: float | None = None) -> None:
    """Refuse a symmetry declaration that is not sound on a sample of reachable states.

    A renaming of the symmetric sets must map states to states with the same verdicts:
    for sampled reachable states s (see :class:`_Sample`) and each transposition p,
    the constraint and the invariants must give the same answer on p(s) as on s, and
    the successors of p(s) must be exactly the renamed successors of s (as musil's
    ``symmetry_reduction_sound`` checks).  A spec that stores a server as an int or a
    string, or orders servers by name, fails this and would otherwise get a wrong state
    count silently.
    """
    from checker.base.errors import SpecError

    sample = _Sample(model)
    gens = sample.gens
    if not gens:
        return
    fps = sample.fps
    step_props = bool(getattr(model, "action_property_names", ()))

    def check(s: Any, succ: list[Any]) -> None:
        within = model.within(s)
        verdict = model.violated_invariant(s)
        renamed = [fps(t) for _, _, t in succ]
        for g, p in enumerate(gens, 1):
            ps = permute(s, p)
            what = None
            if model.within(ps) != within:
                what = "the state constraint's verdict"
            elif model.violated_invariant(ps) != verdict:
                what = "an invariant's verdict"
            elif step_props and any(
                model.violated_action_property(s, t)
                != model.violated_action_property(ps, permute(t, p))
                for _, _, t in succ
            ):
                what = "an action property's verdict on one of its steps"
            else:
                got = sorted(fps(t)[0] for _, _, t in model.successors(ps))
                if got != sorted(f[g] for f in renamed):
                    what = "its successors (the actions do not commute with the renaming)"
            if what is not None:
                swap = ", ".join(f"{a}->{b}" for a, b in sorted(p.items(), key=_by_index))
                raise SpecError(
                    f"{model.name}: the declared symmetry is not sound: renaming {swap} in a "
                    f"reachable state changes {what}. A symmetric set's members must be "
                    "model values that the spec only compares, and no int or string may "
                    "stand for them; fix the spec or run with --no-symmetry"
                )

    try:
        for s, succ in sample.walk(deadline):
            check(s, succ)
    except (EvaluationError, StateValueError):
        # The spec's own error (an action that raises, a mutable value in a state):
        # the exploration meets it in its place, after whatever comes first in
        # breadth-first order (an initial state's invariant, say), and reports it with
        # its trace and the variable named; a check of the declaration must not change
        # which one the run reports.
        return


def temporal_symmetry_problem(model: Any, deadline: float | None = None) -> str | None:
    """Why the temporal properties cannot be checked on the symmetry-reduced graph
    (None: they can, as far as the sample shows).

    Unfolding the quotient graph (:mod:`checker.liveness.quotient`) renames each step's action
    instance and each property instance besides the states, so on the sampled states
    (:class:`_Sample`) and for each transposition p: instance i of a property must
    hold at p(s) exactly when the instance with i's parameters renamed holds at s
    (premises and initial-state conditions too), and the steps of p(s) must be the
    steps of s with their action instances and successors renamed.  Fairness needs
    nothing more: it is asked of the spec for each real instance."""
    from checker.liveness.stategraph import atom_truths, temporal_atoms

    sample = _Sample(model)
    gens = sample.gens
    if not gens:
        return None
    partner = [instance_partners(model, p) for p in gens]
    if any(m is None for m in partner):
        return "a temporal property's instances do not rename into each other"
    atoms = temporal_atoms(model)
    fps = sample.fps

    def labelled(ren: Renaming, steps: list[Any], lane: int) -> list[tuple[int, str, int]]:
        return sorted(
            (ai, repr(encode(permute(params, ren))), fps(t)[lane]) for ai, params, t in steps
        )

    try:
        for s, succ in sample.walk(deadline):
            truths = dict(zip([k for k, _ in atoms], atom_truths(atoms, s), strict=True))
            for g, p in enumerate(gens, 1):
                ps = permute(s, p)
                swap = ", ".join(f"{a}->{b}" for a, b in sorted(p.items(), key=_by_index))
                m = partner[g - 1]
                assert m is not None
                for ((name, i, role), _), value in zip(atoms, atom_truths(atoms, ps), strict=True):
                    if truths[(name, m[name][i], role)] != value:
                        return f"renaming {swap} changes the verdict of {name}"
                if labelled(p, succ, g) != labelled({}, model.successors(ps), 0):
                    return f"renaming {swap} does not rename the steps' action instances"
    except (EvaluationError, StateValueError):
        return None  # the spec's own error: the exploration reports it in its place
    return None


def _by_index(kv: tuple[ModelValue, ModelValue]) -> tuple[str, int]:
    return (kv[0].group, kv[0].index)
