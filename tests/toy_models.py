"""Explicit transition systems for testing the explorer against networkx.

They implement the :class:`checker.model.compiled.Model` protocol directly, without a Spec, so
the explorer is tested on graphs whose answers are known by other means.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checker.model import Successor
from checker.values import ModelValue
from checker.values.fingerprint import sort_key


class GraphModel:
    """States are hashable values; ``edges[s]`` lists the successors of ``s``."""

    name = "graph"
    var_names = ("state",)
    action_names = ("step",)
    invariant_names = ("NotBad",)
    temporal = ()
    check_deadlock = True

    def __init__(
        self,
        inits: list[Any],
        edges: dict[Any, list[Any]],
        bad: Callable[[Any], bool] = lambda s: False,
        renamings: list[dict[ModelValue, ModelValue]] | None = None,
    ) -> None:
        self.inits = sorted(inits, key=sort_key)
        self.edges = {s: sorted(ts, key=sort_key) for s, ts in edges.items()}
        self.bad = bad
        self.renamings = renamings or [{}]

    def initial_states(self) -> list[Any]:
        return self.inits

    def successors(self, state: Any) -> list[Successor]:
        return [(0, (t,), t) for t in self.edges.get(state, [])]

    def within(self, state: Any) -> bool:
        return True

    def violated_invariant(self, state: Any) -> str | None:
        return "NotBad" if self.bad(state) else None

    def variables(self, state: Any) -> tuple[Any, ...]:
        return (state,)

    def label(self, action: int, params: tuple[Any, ...]) -> str:
        return f"step({params[0]!r})"

    def fairness(self, action: int, params: tuple[Any, ...]) -> list[Any]:
        return []
