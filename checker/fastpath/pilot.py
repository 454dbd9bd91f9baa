"""The fast engine's layout, from a short look at the state space.

Before a run the pilot explores a few thousand states breadth-first and decides two
things: which variables are *wide* (nearly as many values as states, a growing message
set: interning them would only fill memory; their values travel with the frontier
state) and which map variables have the same keys in every state seen (each entry
becomes a slot of its own, so an action that reads one server's entry does not depend
on the others').  Both are guesses that only decide speed: a map whose keys change
later makes the run start again with that map whole (:class:`LayoutChanged`), and
every key is checked strictly (a key ``True`` is not the key ``1``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Any

import immutables
from pyrsistent import PMap, pmap

from checker.base.errors import EvaluationError
from checker.explore.expansion import ExpansionSettings
from checker.model import CompiledSpec
from checker.values.fingerprint import StateFingerprinter, in_order
from checker.values.kinds import PMAP_TYPE

#: The map kinds a variable can be cut into per-key slots (the value model's maps).
_MAP_TYPES = (immutables.Map, PMAP_TYPE)


class Unsuitable(Exception):
    """This model's states cannot be interned (unhashable values): the plain
    expansion serves it (and reports what is wrong with its values)."""


#: States the pilot exploration looks at.
PILOT_STATES = 3000


def pilot(model: CompiledSpec) -> tuple[set[int], dict[int, tuple[Any, ...]]]:
    """From a short breadth-first exploration: the wide variables (more distinct
    values than a fifth of the states, and at least 512) and the fixed-key map
    variables (their keys, in order).  Raises :class:`Unsuitable` for unhashable
    state values."""
    try:
        return _pilot(model)
    except TypeError:
        # A value outside the value model (a StateValueError: the plain expansion
        # names it, with the state it came from).
        raise Unsuitable from None


class LayoutNotes:
    """What the layout is decided from: per variable, its distinct values (by their
    terms) and, while it is a map, the keys of each; fed the distinct states one by
    one, by the pilot's own exploration or by the run's first states
    (:class:`checker.fastpath.adaptive.MeasuredExpansion` starts on the plain
    expansion and decides the layout from what it stored)."""

    __slots__ = ("count", "keysets", "values")

    def __init__(self, nvars: int) -> None:
        self.values: list[set[int]] = [set() for _ in range(nvars)]
        self.keysets: list[set[tuple[type, frozenset[Any]]] | None] = [set() for _ in range(nvars)]
        self.count = 0  # distinct states noted

    def note(self, vals: tuple[Any, ...], terms: tuple[int, ...]) -> None:
        """One more distinct state: its variables' values and their terms (a value
        and its term stand for each other: equal values, equal terms)."""
        self.count += 1
        keysets = self.keysets
        for i, term in enumerate(terms):
            known = self.values[i]
            if term in known:
                continue  # a value seen before: its keys were noted then
            known.add(term)
            ks = keysets[i]
            if ks is not None:
                v = vals[i]
                if type(v) in _MAP_TYPES:
                    # The map's kind with its keys: a Map in one state and a pmap in
                    # another are two values, and the layout rebuilds one kind.
                    ks.add((type(v), frozenset(v.keys())))
                else:
                    keysets[i] = None

    def layout(self) -> tuple[set[int], dict[int, tuple[Any, ...]]]:
        """The wide variables (more distinct values than a fifth of the states, and at
        least 512) and the fixed-key map variables (their keys, in order)."""
        n = self.count
        wide = {i for i, v in enumerate(self.values) if len(v) >= 512 and len(v) * 5 > n}
        return wide, _fixed_keys(self.keysets, wide)


def _pilot(model: CompiledSpec) -> tuple[set[int], dict[int, tuple[Any, ...]]]:
    # States are told apart by their fingerprints, each successor's computed from its
    # parent's terms (only the variables an action wrote are hashed), and a
    # variable's distinct terms count its distinct values.  Python's hash and == did
    # it slower and worse: immutables.Map's hash collides on maps of maps (gossip's
    # pilot spent 60% of its time in Map.__eq__), and == is not the value model's
    # equality (True == 1).
    inits = model.initial_states()  # (the state type, and so its variables, is known then)
    nvars = len(model.var_names)
    fpr = StateFingerprinter(nvars, [{}])
    variables, within = model.variables, model.within
    notes = LayoutNotes(nvars)
    note = notes.note
    seen: set[int] = set()
    queue: deque[tuple[Any, tuple[Any, ...], tuple[int, ...]]] = deque()
    try:
        for s in inits:
            vals = variables(s)
            fp, terms = fpr.initial(vals)
            if fp not in seen and within(s):
                seen.add(fp)
                queue.append((s, vals, terms))
                note(vals, terms)
        while queue and len(seen) < PILOT_STATES:
            s, pvals, pterms = queue.popleft()
            for _, _, t in model.successors(s):
                if not within(t):
                    continue
                vals = variables(t)  # (a NamedTuple state is its own values: no copy)
                fp, terms = fpr.child(vals, pvals, pterms)
                if fp in seen:
                    continue
                seen.add(fp)
                queue.append((t, vals, terms))
                note(vals, terms)
    except EvaluationError:
        # Spec code raised: the exploration proper meets the same error and reports
        # it with the trace that reached it; the pilot only stops here.
        pass
    return notes.layout()


def with_layout(
    settings: ExpansionSettings, wide: set[int], fixed: dict[int, tuple[Any, ...]]
) -> ExpansionSettings:
    """``settings`` carrying a layout (wide variables, fixed-key maps' keys), in the
    form a fast engine reads it back (a worker's, a restart's, one made later)."""
    ordered = tuple(sorted(fixed.items(), key=lambda kv: kv[0]))
    return replace(settings, wide=frozenset(wide), fixed=ordered)


def _fixed_keys(keysets: list[Any], wide: set[int]) -> dict[int, tuple[Any, ...]]:
    """The map variables whose keys were the same in every state seen."""
    fixed: dict[int, tuple[Any, ...]] = {}
    for i, ks in enumerate(keysets):
        if ks is not None and len(ks) == 1 and i not in wide:
            ((_, only),) = ks
            if only:
                fixed[i] = tuple(in_order(only))
    return fixed


def supports(model: Any) -> bool:
    """Whether the fast expansion can serve this model (compiled NamedTuple states)."""
    if not isinstance(model, CompiledSpec):
        return False
    model.initial_states()  # the state type is known once there is a state
    return model.is_namedtuple_state


def map_maker(sample: Any) -> Any:
    """How to rebuild a map of the sample's kind from a dict."""
    if isinstance(sample, PMap):
        return pmap
    return type(sample)
