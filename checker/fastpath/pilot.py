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
from typing import Any

import immutables
from pyrsistent import PMap, pmap

from checker.base.errors import EvaluationError
from checker.model import CompiledSpec
from checker.values.fingerprint import in_order
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
        raise Unsuitable from None


def _pilot(model: CompiledSpec) -> tuple[set[int], dict[int, tuple[Any, ...]]]:
    nvars = len(model.var_names)
    values: list[set[Any]] = [set() for _ in range(nvars)]
    keysets: list[set[tuple[type, frozenset[Any]]] | None] = [set() for _ in range(nvars)]
    seen: set[tuple[Any, ...]] = set()
    queue: deque[Any] = deque()

    def note(vals: tuple[Any, ...]) -> None:
        for i, v in enumerate(vals):
            values[i].add(v)
            ks = keysets[i]
            if ks is not None:
                if type(v) in _MAP_TYPES:
                    # The map's kind with its keys: a Map in one state and a pmap in
                    # another are two values, and the layout rebuilds one kind.
                    ks.add((type(v), frozenset(v.keys())))
                else:
                    keysets[i] = None

    try:
        for s in model.initial_states():
            vals = tuple(model.variables(s))
            if vals not in seen and model.within(s):
                seen.add(vals)
                queue.append(s)
                note(vals)
        while queue and len(seen) < PILOT_STATES:
            s = queue.popleft()
            for _, _, t in model.successors(s):
                if not model.within(t):
                    continue
                vals = tuple(model.variables(t))
                if vals in seen:
                    continue
                seen.add(vals)
                queue.append(t)
                note(vals)
    except EvaluationError:
        # Spec code raised: the exploration proper meets the same error and reports
        # it with the trace that reached it; the pilot only stops here.
        pass
    n = len(seen)
    wide = {i for i, v in enumerate(values) if len(v) >= 512 and len(v) * 5 > n}
    return wide, _fixed_keys(keysets, wide)


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
