"""Counterexample traces, rebuilt by replaying recorded successor choices.

Like TLC, the explorer keeps no states in its visited set, only fingerprints plus, per
stored state, its parent and which successor of the parent it was.  A trace is rebuilt
by walking those parent pointers back to an initial state and replaying the choices
forward through the model: the result is the real behaviour that reached the state,
with real (not canonicalised) states even under symmetry reduction.  Each rebuilt
state's fingerprint is checked against the one stored for it (TLC does the same), so a
spec whose successors come in a different order from one call to the next is reported
instead of yielding a wrong counterexample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from checker.base.errors import SpecError
from checker.model import Model


@dataclass(frozen=True)
class Step:
    """One state of a trace and the action that led to it (None for the first)."""

    state: Any
    action: str | None
    action_name: str | None = None
    params: tuple[Any, ...] = ()
    action_index: int | None = None


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


def make_step(model: Model, ai: int, params: tuple[Any, ...], after: Any) -> Step:
    """The step taking action ``ai(params)`` to ``after``."""
    return Step(
        state=after,
        action=model.label(ai, params),
        action_name=model.action_names[ai],
        params=params,
        action_index=ai,
    )


class TraceDiverged(SpecError):
    """Replaying recorded choices did not give the states the explorer stored."""


def replay_choices(
    model: Model,
    choices: Sequence[int],
    expected: Sequence[int | None] = (),
    fingerprint: Callable[[Any], int] | None = None,
    loop: int | None = None,
) -> Trace:
    """Rebuild a trace from ``choices``: first the index of the initial state, then
    for each step the index of the successor taken among the parent's successors.

    With ``expected`` (a fingerprint per state, None where none was stored) and the
    run's ``fingerprint`` function, every rebuilt state is checked against it.
    """
    inits = model.initial_states()
    state = inits[choices[0]]
    steps = [Step(state=state, action=None)]
    _verify(model, fingerprint, expected, 0, state)
    for i, k in enumerate(choices[1:], start=1):
        succ = model.successors(state)
        if k >= len(succ):
            raise TraceDiverged(_diverged(model, i, "the state has fewer successors than recorded"))
        ai, params, nxt = succ[k]
        steps.append(make_step(model, ai, params, nxt))
        _verify(model, fingerprint, expected, i, nxt)
        state = nxt
    return Trace(steps=tuple(steps), var_names=model.var_names, loop=loop)


def _verify(
    model: Model,
    fingerprint: Callable[[Any], int] | None,
    expected: Sequence[int | None],
    i: int,
    state: Any,
) -> None:
    if fingerprint is None or i >= len(expected) or expected[i] is None:
        return
    if fingerprint(state) != expected[i]:
        raise TraceDiverged(_diverged(model, i, "its fingerprint differs from the stored one"))


def _diverged(model: Model, step: int, why: str) -> str:
    return (
        f"{model.name}: rebuilding the trace diverged at step {step} ({why}): the spec's "
        "successors do not come in the same order every time (order over_state domains "
        "with checker.in_order, never by iterating a set or map)"
    )
