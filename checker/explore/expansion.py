"""What the exploration core asks of an *expansion*, and the plain one.

An expansion does the per-state work every backend shares: the initial states, a
state's successors with their fingerprints (under the symmetry renamings), the
constraint and the invariants, spec errors turned into events that carry the failing
state.  Backends hold states as opaque *handles* and only ever call an expansion
through :class:`ExpansionLike`.  The core (:mod:`checker.explore.engine`) knows this module
and nothing of the fast engine: :mod:`checker.fastpath.choice` picks the expansion a run
uses, :class:`ExpansionSettings` is what a run tells it, and :class:`Restart` is how
an expansion asks for the exploration to start again with other settings (the fast
engine does when a map's keys turn out not to be fixed, or a cached outcome is not
what running the action gives).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from checker.base.errors import EvaluationError, SpecError
from checker.explore.kinds import EventKind, SwitchPolicy
from checker.model import Model
from checker.values.fingerprint import StateFingerprinter, StateValueError, bad_value_message
from checker.values.native import NATIVE

_MASK64 = (1 << 64) - 1

#: Expanded states whose values are checked for in-place changes: a diagnostic of a
#: spec that breaks the immutability of states (object.__setattr__ on a frozen
#: dataclass), not a check of the engine.
MUTATION_CHECKS = 200


Key = tuple[int, int]


@dataclass
class Event:
    """Something that stops the run, at ``key`` in sequential discovery order:
    ``(ordinal, -1)`` for the state being expanded (deadlock, an error in its
    actions), ``(ordinal, k)`` for its k-th successor, ``(-1, k)`` for initial state k."""

    key: Key
    kind: EventKind
    prop: str | None = None
    error: EvaluationError | None = None
    #: The event's state is a new stored state (it has an ordinal of its own).
    new: bool = False
    state: Any = None


class NewState(NamedTuple):
    """A state stored for the first time, as reported by a backend."""

    key: Key
    fp: int
    action: int
    depth: int


@dataclass(frozen=True)
class ExpansionSettings:
    """How a run wants its states expanded (what ``--no-cache`` and the restarts of
    the fast engine change); the same object goes to every worker."""

    #: Use the fast engine's caches where it can serve the model.
    cache: bool = True
    #: Actions and predicates (by name) that run directly, not from a cache.
    uncached: frozenset[str] = frozenset()
    #: Map variables (by index) kept whole, not cut into per-key slots.
    whole: frozenset[int] = frozenset()
    #: The fast engine's layout, decided once by the coordinator's pilot and given to
    #: the workers (None: decide it here): wide variables, and fixed-key maps' keys.
    wide: frozenset[int] | None = None
    fixed: tuple[tuple[int, tuple[Any, ...]], ...] | None = None
    #: When the fast engine serves the model, whether the plain expansion may take
    #: over where it is measured cheaper (see :mod:`checker.fastpath.adaptive`): "measured",
    #: "alternate" (tests: every handoff, whatever the cost) or "fast" (never).
    switching: SwitchPolicy = SwitchPolicy.MEASURED


#: Makes the expansion a run uses (model, renamings, deadlock, settings): handed to
#: every backend by the one place an exploration is assembled
#: (:mod:`checker.check.assemble`), so no backend chooses one itself.
ExpansionFactory = Callable[[Model, list[dict[Any, Any]], bool, ExpansionSettings], "ExpansionLike"]


class Restart(Exception):
    """Start the exploration again with ``settings`` (which must cache strictly less
    than before: a run restarts a bounded number of times); ``note`` says why, for
    the run's warnings (None: nothing the user needs to know)."""

    def __init__(self, settings: ExpansionSettings, note: str | None) -> None:
        super().__init__(note or "restart")
        self.settings = settings
        self.note = note

    def __reduce__(self) -> Any:
        return (Restart, (self.settings, self.note))


Candidate = tuple[int, int, tuple[Any, ...], Any, "int | None"]


class ExpansionLike(Protocol):
    """What backends call (see :class:`Expansion` for the meaning of each)."""

    def initial(
        self, seen: Callable[[int], bool], store: Callable[[Key, int, Any], Any]
    ) -> tuple[list[NewState], Event | None]: ...

    def expand(
        self, ordinal: int, handle: Any
    ) -> tuple[list[int], list[Candidate], Event | None]: ...

    def check(self, key: Key, handle: Any, new: bool) -> Event | None: ...

    def check_new(self, ordinal: int, cands: list[Candidate]) -> tuple[int, Event | None]: ...

    def state(self, handle: Any) -> Any: ...

    def handle_of(self, state: Any) -> Any: ...

    def fp_of(self, handle: Any) -> int: ...

    def lanes_of(self, handle: Any) -> tuple[int, ...]: ...

    def fingerprint_of(self, state: Any) -> int: ...

    def layout(self, settings: ExpansionSettings) -> ExpansionSettings: ...

    def screen(self, visited: Any) -> None: ...


class Expansion:
    """The per-state work every backend shares: successors, the constraint,
    fingerprints (under the symmetry renamings) and the invariants, with spec errors
    turned into events that carry the failing state.

    Backends hold states as opaque *handles*: here ``(state, variable values,
    per-variable terms)``; the fast engine (:mod:`checker.fastpath`) uses packed slot
    numbers instead, with the same interface.
    """

    def __init__(self, model: Model, renamings: list[dict[Any, Any]], deadlock: bool) -> None:
        self.model = model
        self.deadlock = deadlock
        inits = model.initial_states()
        self.nvars = len(model.variables(inits[0]))
        self.fpr = StateFingerprinter(self.nvars, renamings)
        self.expanded = 0
        # No constraint declared (a compiled spec says so): no call per successor.
        self.constrained = bool(getattr(model, "has_constraint", True))
        # Action properties ([][A]_vars): checked on every step (None: none selected).
        self.step_check: Callable[[Any, Any], str | None] | None = None
        if getattr(model, "action_property_names", ()):
            self.step_check = model.violated_action_property
        self.states_are_variables = bool(getattr(model, "states_are_variables", False))
        # The whole per-successor loop in C where nothing but the fingerprint and the
        # constraint runs per successor (NamedTuple states, no action property): the
        # same candidates, built without a Python step per successor.  The constraint
        # goes in as the spec's own predicate, so no wrapper frame runs per successor;
        # anything it does that is not True or False comes back to the Python loop.
        self.candidates_in_c: Callable[..., Any] | None = None
        self.c_within: Callable[[Any], Any] | None = None
        if self.constrained:
            self.c_within = getattr(model, "constraint_predicate", None)
        # Other states (a frozen dataclass) give their variables through the model's
        # own getter, which the C loop calls as the Python loop calls ``variables``.
        self.c_getter: Callable[[Any], tuple[Any, ...]] | None = None
        if not self.states_are_variables:
            self.c_getter = getattr(model, "variables_getter", None)
        if (
            NATIVE is not None
            and self.fpr.c_child is not None
            and (self.states_are_variables or self.c_getter is not None)
            and (self.c_within is not None or not self.constrained)
            and self.step_check is None
        ):
            self.candidates_in_c = NATIVE.child_candidates
        # The visited set as the store lends it for the next states' expansion (see
        # screen), or None.
        self.visited: Any = None

    def screen(self, visited: Any) -> None:
        """Successors ``visited`` holds (an image of the visited set from
        :meth:`checker.store.fingerprints.FingerprintStore.view`, None for none) may
        be left out of the candidates of the states expanded next: the caller would
        find them known and drop them.  Sound whenever the store only grows between
        this call and its search: a state held now is held then.  Nine successors in
        ten are known; where the C loop runs, a known one costs no object."""
        self.visited = visited

    def layout(self, settings: ExpansionSettings) -> ExpansionSettings:
        """The settings a worker's expansion should use to agree with this one."""
        return settings

    def fingerprint(
        self, state: Any, parent: tuple[tuple[Any, ...], tuple[int, ...]] | None = None
    ) -> tuple[tuple[Any, ...], int, tuple[int, ...]]:
        """(variable values, fingerprint, per-variable terms) of a state; with the
        parent's values and terms, only changed variables are re-encoded."""
        vals = self.model.variables(state)
        try:
            if parent is None:
                fp, vf = self.fpr.initial(vals)
            else:
                fp, vf = self.fpr.child(vals, parent[0], parent[1])
        except StateValueError as exc:
            raise SpecError(self._bad_value(vals, exc)) from None
        except RecursionError:
            raise SpecError(f"{self.model.name}: a state value nests too deeply") from None
        return vals, fp, vf

    def _bad_value(self, vals: tuple[Any, ...], exc: StateValueError) -> str:
        return bad_value_message(self.model.name, self.model.var_names, vals, exc)

    # -- handles -----------------------------------------------------------------------
    def handle_of(self, state: Any) -> Any:
        """The handle of a state object."""
        vals, _, vf = self.fingerprint(state)
        return (state, vals, vf)

    def state(self, handle: Any) -> Any:
        """The state a handle stands for."""
        return handle[0]

    def fp_of(self, handle: Any) -> int:
        """The fingerprint of a handle's state."""
        return self.fpr.finish(sum(handle[2]))

    def lanes_of(self, handle: Any) -> tuple[int, ...]:
        """The fingerprint of a handle's state renamed by each of the run's renamings,
        in their order (the identity's first: the state's own, unreduced fingerprint);
        one lane without symmetry."""
        total = sum(handle[2])
        lanes = self.fpr.lanes
        return lanes.split(total) if lanes is not None else (total & _MASK64,)

    def fingerprint_of(self, state: Any) -> int:
        """A state's fingerprint (as the store holds it)."""
        return self.fingerprint(state)[1]

    def initial(
        self,
        seen: Callable[[int], bool],
        store: Callable[[Key, int, Any], Any],
    ) -> tuple[list[NewState], Event | None]:
        """Generate and check the initial states, keyed ``(-1, k)``: ``seen(fp)`` says
        whether one is known, ``store(key, fp, handle)`` keeps a new one (it may raise a
        spec error from a temporal predicate, which becomes the event)."""
        model = self.model
        new: list[NewState] = []
        for k, s in enumerate(model.initial_states()):
            key = (-1, k)
            try:
                inside = model.within(s)
            except EvaluationError as exc:
                return new, Event(key, EventKind.ERROR, error=exc, state=s)
            is_new = False
            if inside:
                vals, fp, vf = self.fingerprint(s)
                if seen(fp):
                    continue
                new.append(NewState(key, fp, -1, 1))
                is_new = True
                try:
                    store(key, fp, (s, vals, vf))
                except EvaluationError as exc:
                    return new, Event(key, EventKind.ERROR, error=exc, new=True, state=s)
            ev = self._check_state(key, s, is_new)
            if ev is not None:
                return new, ev
        return new, None

    def check(self, key: Key, handle: Any, new: bool) -> Event | None:
        """The invariants on one generated state: a violation or error event, or None."""
        return self._check_state(key, handle[0], new)

    def check_new(self, ordinal: int, cands: list[Candidate]) -> tuple[int, Event | None]:
        """The invariants on a state's new successors (its candidates, in order, all
        with a handle this expansion made): the position of the first violation or
        error and its event, or ``(len(cands), None)``.  One call per expanded state,
        where :meth:`check` through the switching wrapper was three frames per new
        state."""
        check_state = self._check_state
        for i, c in enumerate(cands):
            ev = check_state((ordinal, c[0]), c[3][0], True)
            if ev is not None:
                return i, ev
        return len(cands), None

    def _check_state(self, key: Key, state: Any, new: bool) -> Event | None:
        try:
            bad = self.model.violated_invariant(state)
        except EvaluationError as exc:
            return Event(key, EventKind.ERROR, error=exc, new=new, state=state)
        if bad is not None:
            return Event(key, EventKind.VIOLATION, prop=bad, new=new, state=state)
        return None

    def expand(
        self, ordinal: int, handle: Any
    ) -> tuple[list[int], list[tuple[int, int, tuple[Any, ...], Any, int | None]], Event | None]:
        """Successors of one state: (action of each successor, candidates, event).

        A candidate is ``(k, action, params, handle, fp)``, with handle and fp None for
        a state outside the constraint; a successor the visited set holds may have
        none (see :meth:`screen`).  States outside the constraint are checked
        against the invariants here (every time they are generated, as TLC does), and
        every step against the action properties (after the step's candidate, so a
        new state's own invariant violation, found when it is stored, comes first as
        in TLC); the first violation, a spec error or a deadlock ends the list.
        """
        state, vals, vfps = handle
        model = self.model
        try:
            succ = model.successors(state)
        except EvaluationError as exc:
            return [], [], Event((ordinal, -1), EventKind.ERROR, error=exc, state=state)
        if not succ:
            ev = Event((ordinal, -1), EventKind.DEADLOCK, state=state) if self.deadlock else None
            return [], [], ev
        self.expanded += 1
        if (
            self.candidates_in_c is not None
            and self.expanded > MUTATION_CHECKS
            # (asked again here: what the C loop leaves out must still be absent)
            and self.step_check is None
        ):
            made = self._candidates_in_c(ordinal, succ, vals, vfps)
            if made is not None:
                return made
        actions = [ai for ai, _, _ in succ]
        cands: list[tuple[int, int, tuple[Any, ...], Any, int | None]] = []
        append = cands.append
        within = model.within
        constrained = self.constrained
        variables = model.variables
        # A NamedTuple state is its own tuple of variables: no call to get them.
        as_is = self.states_are_variables
        child = self.fpr.child
        c_child, update = self.fpr.c_child, self.fpr.calc.update
        step_check = self.step_check
        k = 0
        t: Any = None
        try:
            for k, (ai, params, t) in enumerate(succ):
                if not constrained or within(t):
                    tvals = t if as_is else variables(t)
                    if c_child is not None:
                        fp, vf = c_child(tvals, vals, vfps, update)
                    else:
                        fp, vf = child(tvals, vals, vfps)
                    append((k, ai, params, (t, tvals, vf), fp))
                else:
                    append((k, ai, params, None, None))
                    ev = self._check_state((ordinal, k), t, False)
                    if ev is not None:
                        return actions, cands, ev
                if step_check is not None:
                    bad = step_check(state, t)
                    if bad is not None:
                        ev = Event((ordinal, k), EventKind.VIOLATION, prop=bad, state=t)
                        return actions, cands, ev
        except EvaluationError as exc:
            return actions, cands, Event((ordinal, k), EventKind.ERROR, error=exc, state=t)
        except StateValueError as exc:
            raise SpecError(self._bad_value(variables(t), exc)) from None
        except RecursionError:
            raise SpecError(f"{model.name}: a state value nests too deeply") from None
        if self.expanded <= MUTATION_CHECKS:
            self._check_not_mutated(state, vals, vfps, succ)
        return actions, cands, None

    def _candidates_in_c(
        self, ordinal: int, succ: list[Any], vals: tuple[Any, ...], vfps: tuple[int, ...]
    ) -> tuple[list[int], list[Candidate], Event | None] | None:
        """``expand``'s loop in C, then the invariants of the successors outside the
        constraint, in order (the first violation or error ends the list, as in the
        Python loop); None where the Python loop must run instead: a value outside the
        value model, or a constraint that raised or gave a non-boolean, which it names."""
        within = self.c_within
        if self.constrained and within is None:
            return None
        assert self.candidates_in_c is not None
        try:
            made = self.candidates_in_c(
                succ, vals, vfps, self.fpr.calc.update, within, self.c_getter, self.visited
            )
        except Exception:
            # A bad value, or the constraint's own error: the Python loop raises it
            # again, naming the state it came from (and wrapping the spec's error).
            return None
        if made is None:
            return None
        actions, cands, outside = made
        for k in outside:
            ev = self._check_state((ordinal, k), succ[k][2], False)
            if ev is not None:
                # The list ends at successor k (known ones have no candidate, so
                # the candidates are not indexed by k).
                return actions, [c for c in cands if c[0] <= k], ev
        return actions, cands, None

    def _check_not_mutated(
        self, state: Any, vals: tuple[Any, ...], vfps: tuple[int, ...], succ: list[Any]
    ) -> None:
        # An action that changes its input in place and returns it looks like a
        # stuttering step and the change goes unseen: re-fingerprint the parent.
        _, _, now = self.fingerprint(state)
        if now != vfps:
            changed = [self.model.var_names[i] for i in range(self.nvars) if now[i] != vfps[i]] or [
                "?"
            ]
            names = sorted({self.model.action_names[ai] for ai, _, _ in succ})
            raise SpecError(
                f"{self.model.name}: an action changed its input state in place "
                f"(variable {changed[0]}; one of {', '.join(names)}): return a new state "
                "instead of modifying the one given"
            )
