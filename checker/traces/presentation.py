"""How a spec's traces are drawn: lanes, owners, actors and what a property reads.

Kept apart from :mod:`checker.model.compiled` on purpose: exploration never needs it, and the
explorer never sees it.  Timelines, trace files and the gate's trace text use a
:class:`Presentation` built from the spec by :func:`presentation_of`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from checker.authoring.spec import Spec
from checker.values import ModelValue


def member_name(v: Any) -> str:
    """The lane name of a member: a model value's name, anything else as text."""
    return v.name if isinstance(v, ModelValue) else str(v)


class _RecordingState:
    """Stands in for a state and remembers which variables were read."""

    def __init__(self, state: Any) -> None:
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._state, name)

    def __getitem__(self, key: Any) -> Any:
        self.read.add(str(key))
        return self._state[key]


@dataclass
class Presentation:
    """What a timeline needs beyond the states: lanes, owners, who takes each step."""

    #: The members that get a lane each (servers, processes), in order.
    lane_members: tuple[Any, ...] = ()
    #: Variables that belong to one lane though not keyed by members: var -> lane name.
    owners: dict[str, str] = field(default_factory=dict)
    #: Per action family: ``(spec, state, *params) -> member`` or None (first lane param).
    actors: dict[int, Callable[..., Any]] = field(default_factory=dict)
    spec: Spec | None = None
    var_names: tuple[str, ...] = ()

    @property
    def lanes(self) -> list[str]:
        """The lane names, in order."""
        return [member_name(v) for v in self.lane_members]

    def actor(self, action: int, params: tuple[Any, ...], state: Any) -> Any:
        """The lane member that takes this step, or None for the environment."""
        fn = self.actors.get(action)
        if fn is not None:
            try:
                return fn(self.spec, state, *params)
            except Exception:
                return None
        for p in params:
            if any(p is m or (type(p) is type(m) and p == m) for m in self.lane_members):
                return p
        return None

    def reads_of(self, invariant_name: str, state: Any) -> list[str]:
        """The variables invariant ``invariant_name`` reads when evaluated on ``state``.

        Evaluated on a proxy that records attribute (or key) access, so a report can
        show the values that break an invariant without the spec saying which they are.
        """
        if self.spec is None:
            return []
        decl = {d.name: d for d in type(self.spec)._invariants}.get(invariant_name)
        if decl is None:
            return []
        proxy = _RecordingState(state)
        try:
            decl.predicate(self.spec, proxy)
        except Exception:
            return list(self.var_names)
        return [n for n in self.var_names if n in proxy.read]


def presentation_of(spec: Spec, var_names: tuple[str, ...] = ()) -> Presentation:
    """The presentation of a spec instance (lanes from its ``lanes`` declaration)."""
    cls = type(spec)
    actors = {ai: d.actor for ai, d in enumerate(cls._actions) if d.actor is not None}
    return Presentation(
        lane_members=spec.lane_values(),
        owners=dict(cls.owners),
        actors=actors,
        spec=spec,
        var_names=var_names,
    )
