"""A plain step-by-step rendering of a trace (used where no lanes are known).

A step shows the action and only what changed.  Maps keyed by model values (the usual
per-server variables) are shown per key, ``currentTerm[s1]: 1 -> 2``; a set by the
members the step added and removed, ``msgs + [type |-> "1b", ...]``.  Timelines with
one lane per server live in :mod:`checker.traces.timeline`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from checker.explore.trace import Trace
from checker.values.show import Change, changes, show

__all__ = ["render_trace", "show"]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 3)] + "..."


def render_trace(
    trace: Trace, console: Console, title: str | None = None, last: int | None = None
) -> None:
    """Print a trace step by step: the initial state, then each action and its changes.
    With ``last``, a longer trace shows only its last ``last`` steps, after the whole
    state they start from (a validated log of thousands of events is read from its
    end; printing every step would take longer than checking it)."""
    width = max(40, console.width)
    if title:
        console.print(Text(title, style="bold"))
    start = 0
    if last is not None and len(trace.steps) > last + 1:
        start = len(trace.steps) - last - 1
        console.print(Text(f"({start:,} earlier steps not shown)", style="dim"), soft_wrap=True)
    first = trace.steps[start]
    label = "initial state" if start == 0 else first.action
    console.print(Text(f"State {start + 1}: {label}", style="bold cyan"))
    vals = _vars(trace, first.state)
    for name, v in zip(trace.var_names, vals, strict=True):
        console.print(Text(_clip(f"  {name} = {show(v)}", width)), soft_wrap=False)
    prev = vals
    for i, step in enumerate(trace.steps[start + 1 :], start=start + 2):
        console.print(Text(f"State {i}: {step.action}", style="bold cyan"))
        cur = _vars(trace, step.state)
        rows: list[Change] = []
        for name, a, b in zip(trace.var_names, prev, cur, strict=True):
            rows.extend(changes(name, a, b))
        if not rows:
            console.print(Text("  (nothing changed: stuttering step)", style="dim"))
        for row in rows:
            line = Text("  ")
            line.append(row.path, style="bold")
            if row.sign == "+":  # a member the step added to the set
                line.append(" + ")
                line.append(row.after, style="green")
            elif row.sign == "-":
                line.append(" - ")
                line.append(row.before, style="red")
            else:
                line.append(": ")
                line.append(row.before, style="red")
                line.append(" -> ")
                line.append(row.after, style="green")
            line.truncate(width, overflow="ellipsis")
            console.print(line, soft_wrap=False)
        prev = cur
    console.print()


def _vars(trace: Trace, state: Any) -> tuple[Any, ...]:
    names = trace.var_names
    if names == ("state",):
        return (state,)
    if isinstance(state, Mapping):
        return tuple(state[n] for n in names)
    return tuple(getattr(state, n) for n in names)
