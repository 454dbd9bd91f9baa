"""Counterexample traces, rebuilt by replaying recorded successor choices.

Like TLC, the explorer keeps no states in its visited set, only fingerprints plus, per
stored state, its parent and which successor of the parent it was.  A trace is rebuilt
by walking those parent pointers back to an initial state and replaying the choices
forward through the model: the result is the real behaviour that reached the state,
with real (not canonicalised) states even under symmetry reduction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from checker.model import Model


@dataclass(frozen=True)
class Step:
    """One state of a trace and the action that led to it (None for the first)."""

    state: Any
    action: str | None
    action_name: str | None = None
    params: tuple[Any, ...] = ()
    actor: Any = None


@dataclass(frozen=True)
class Trace:
    """A behaviour: an initial state, then one step per action."""

    steps: tuple[Step, ...]
    var_names: tuple[str, ...]
    #: For a lasso: the index of the state the cycle returns to (the last state is
    #: that state again, reached by the cycle's closing step).
    loop: int | None = None

    @property
    def length(self) -> int:
        """Number of actions (states minus one)."""
        return len(self.steps) - 1

    def labels(self) -> list[str]:
        """The action labels, in order."""
        return [s.action for s in self.steps[1:] if s.action is not None]

    def states(self) -> list[Any]:
        """The states, in order."""
        return [s.state for s in self.steps]


def make_step(model: Model, ai: int, params: tuple[Any, ...], before: Any, after: Any) -> Step:
    """The step taking action ``ai(params)`` from ``before`` to ``after``."""
    actor_of = getattr(model, "actor", None)
    return Step(
        state=after,
        action=model.label(ai, params),
        action_name=model.action_names[ai],
        params=params,
        actor=actor_of(ai, params, before) if actor_of is not None else None,
    )


def replay_choices(model: Model, choices: Sequence[int]) -> Trace:
    """Rebuild a trace from ``choices``: first the index of the initial state, then
    for each step the index of the successor taken among the parent's successors."""
    inits = model.initial_states()
    state = inits[choices[0]]
    steps = [Step(state=state, action=None)]
    for k in choices[1:]:
        succ = model.successors(state)
        if k >= len(succ):
            raise RuntimeError("trace replay diverged: the model is not deterministic")
        ai, params, nxt = succ[k]
        steps.append(make_step(model, ai, params, state, nxt))
        state = nxt
    return Trace(steps=tuple(steps), var_names=model.var_names)
