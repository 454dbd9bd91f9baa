"""TLA+'s ``CHOOSE x \\in S : P(x)`` as TLC evaluates it.

TLC enumerates the set in its order of values (``Value.compareTo``) and returns the
first element that satisfies the predicate, so a result that depends on which element
is chosen (a liveness verdict, a trace) follows that order.  :func:`choose` uses the
same order where it is known from TLC's own values:

- integers by value, ``FALSE`` before ``TRUE``;
- model values of one constant in their declared order (TLC: their creation order,
  which for one constant's set is the order of the cfg);
- sequences (tuples) shorter first, then element by element; sets smaller first, then
  element by element in this order (TLC normalizes a set and compares it so);
- records (NamedTuples, frozen dataclasses) by their values in field order.

Strings are ordered by their characters.  TLC orders strings by when its parser first
met each one, which a Python spec cannot know: a CHOOSE among strings whose result
matters should choose among model values or numbers instead.  Values of different
kinds cannot be compared (TLC stops with "Attempted to compare ..."): a ``SpecError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from checker.base.errors import SpecError
from checker.values import ModelValue


def tlc_key(v: Any) -> tuple[Any, ...]:
    """A sort key giving TLC's order of values (see the module docstring)."""
    if isinstance(v, bool):
        return (0, int(v))
    if isinstance(v, int):
        return (1, v)
    if isinstance(v, str):
        return (2, v)
    if isinstance(v, ModelValue):
        return (3, v.group, v.index)
    if isinstance(v, frozenset | set) or type(v).__name__ == "PSet":
        return (4, len(v), tuple(sorted(tlc_key(x) for x in v)))
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return (5, tuple(tlc_key(x) for x in v))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (5, tuple(tlc_key(getattr(v, f.name)) for f in dataclasses.fields(v)))
    if isinstance(v, tuple | list) or type(v).__name__ == "PVector":
        return (6, len(v), tuple(tlc_key(x) for x in v))
    raise SpecError(f"choose(): no TLC order is known for a {type(v).__name__} ({v!r})")


def choose(values: Iterable[Any], predicate: Callable[[Any], bool] | None = None) -> Any:
    """``CHOOSE x \\in values : predicate(x)``: the first value in TLC's order that
    satisfies ``predicate`` (every value, without one).  No such value is the spec's
    error, as in TLC ("CHOOSE x \\in S: P, but no element of S satisfied P")."""
    items = list(values)
    keyed = [(tlc_key(v), n, v) for n, v in enumerate(items)]
    kinds = {k[0][0] for k in keyed}
    if len(kinds) > 1:
        raise SpecError(f"choose(): values of different kinds cannot be compared: {items!r}")
    for _, _, v in sorted(keyed, key=lambda k: (k[0], k[1])):
        if predicate is None or predicate(v):
            return v
    raise SpecError(f"choose(): no element of {items!r} satisfies the predicate")
