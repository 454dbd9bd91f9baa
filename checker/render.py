"""Plain renderings of states, changes and counterexamples for the terminal.

A step shows the action and only what changed.  Maps keyed by model values (the usual
per-server variables) are shown per key, ``currentTerm[s1]: 1 -> 2``, so a reader sees
which server moved.  Richer timelines (one lane per server) build on these helpers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pyrsistent import PSet, PVector
from rich.console import Console
from rich.text import Text

from checker.fingerprint import sort_key
from checker.trace import Trace


def show(v: Any) -> str:
    """A compact, deterministic, TLA+-flavoured text for a state value."""
    if isinstance(v, Mapping):
        items = sorted(v.items(), key=lambda kv: sort_key(kv[0]))
        return "[" + ", ".join(f"{show(k)} |-> {show(x)}" for k, x in items) + "]"
    if isinstance(v, PSet | frozenset | set):
        return "{" + ", ".join(sorted(show(x) for x in v)) + "}"
    if isinstance(v, PVector | list):
        return "<<" + ", ".join(show(x) for x in v) + ">>"
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return "<<" + ", ".join(show(x) for x in v) + ">>"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if v is None:
        return "Nil"
    fields = getattr(v, "__dataclass_fields__", None)
    if fields is not None:
        return (
            type(v).__name__ + "(" + ", ".join(f"{n}={show(getattr(v, n))}" for n in fields) + ")"
        )
    return str(v)


def changes(name: str, old: Any, new: Any) -> Iterator[tuple[str, str, str]]:
    """What changed in one variable, as (path, old text, new text) rows."""
    if old is new or old == new:
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        keys = sorted(set(old.keys()) | set(new.keys()), key=sort_key)
        for k in keys:
            a, b = old.get(k, _MISSING), new.get(k, _MISSING)
            if a is b or (a is not _MISSING and b is not _MISSING and a == b):
                continue
            yield from changes(f"{name}[{show(k)}]", a, b)
        return
    yield name, _text(old), _text(new)


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING: Any = _Missing()


def _text(v: Any) -> str:
    return "(absent)" if v is _MISSING else show(v)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 3)] + "..."


def render_trace(trace: Trace, console: Console, title: str | None = None) -> None:
    """Print a trace step by step: the initial state, then each action and its changes."""
    width = max(40, console.width)
    if title:
        console.print(Text(title, style="bold"))
    first = trace.steps[0].state
    console.print(Text("State 1: initial state", style="bold cyan"))
    vals = _vars(trace, first)
    for name, v in zip(trace.var_names, vals, strict=True):
        console.print(Text(_clip(f"  {name} = {show(v)}", width)), soft_wrap=False)
    prev = vals
    for i, step in enumerate(trace.steps[1:], start=2):
        console.print(Text(f"State {i}: {step.action}", style="bold cyan"))
        cur = _vars(trace, step.state)
        rows: list[tuple[str, str, str]] = []
        for name, a, b in zip(trace.var_names, prev, cur, strict=True):
            rows.extend(changes(name, a, b))
        if not rows:
            console.print(Text("  (nothing changed: stuttering step)", style="dim"))
        for path, a, b in rows:
            line = Text("  ")
            line.append(path, style="bold")
            line.append(": ")
            line.append(a, style="red")
            line.append(" -> ")
            line.append(b, style="green")
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
