"""Compact, deterministic texts for state values (TLA+-flavoured) and messages.

Used by every renderer and by action labels; depends on nothing but the values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pyrsistent import PSet, PVector

from checker.fingerprint import sort_key
from checker.values import ModelValue, Record


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
    if isinstance(v, Record):
        items = sorted(v.fields.items(), key=lambda kv: str(kv[0]))
        return v.tag + "(" + ", ".join(f"{k}={show(x)}" for k, x in items) + ")"
    fields = getattr(v, "__dataclass_fields__", None)
    if fields is not None:
        return (
            type(v).__name__ + "(" + ", ".join(f"{n}={show(getattr(v, n))}" for n in fields) + ")"
        )
    return str(v)


_SRC = ("msource", "source", "src", "sender", "from_")
_DST = ("mdest", "dest", "dst", "receiver", "to")
_TERM = ("mterm", "term")


def _name(v: Any) -> str:
    return v.name if isinstance(v, ModelValue) else str(v)


def _field(rec: Any, names: Iterable[str]) -> Any:
    for n in names:
        if isinstance(rec, Mapping):
            if n in rec:
                return rec[n]
        elif hasattr(rec, n):
            return getattr(rec, n)
    return None


def is_message(v: Any) -> bool:
    """A record with a source and a destination."""
    if isinstance(v, str | int | ModelValue) or v is None:
        return False
    return _field(v, _SRC) is not None and _field(v, _DST) is not None


def brief_message(m: Any) -> str:
    """``RVRequest s1->s2 t2``: type, route and term of a message."""
    kind = _field(m, ("mtype", "type", "kind"))
    kind_text = type(m).__name__ if not isinstance(m, Mapping) else str(kind or "msg")
    if isinstance(m, Record):
        kind_text = m.tag
    if isinstance(kind, str) and isinstance(m, Mapping):
        kind_text = kind
    src, dst = _field(m, _SRC), _field(m, _DST)
    term = _field(m, _TERM)
    text = f"{kind_text} {_name(src)}->{_name(dst)}"
    return text + (f" t{term}" if isinstance(term, int) else "")


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
