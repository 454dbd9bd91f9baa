"""Compact, deterministic texts for state values (TLA+-flavoured) and messages.

Used by every renderer and by action labels; depends on nothing but the values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pyrsistent import PSet, PVector

from checker.values.fingerprint import sort_key
from checker.values.modelvalue import ModelValue
from checker.values.record import Record

#: Default longest text :func:`show` builds: a state value can be huge (a trace file
#: can hold anything), and drawing must stay bounded.
SHOW_LIMIT = 4000
#: Larger sets and maps are summarised (sorting them for display would be unbounded).
_BIG = 5000


class _Full(Exception):
    """The text budget of a :func:`show` call is spent."""


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``, ``\\n``): strings from
    trace files and specs reach terminals, CI logs and reports."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def show(v: Any, limit: int = SHOW_LIMIT) -> str:
    """A compact, deterministic, TLA+-flavoured text for a state value, at most
    ``limit`` characters (longer texts end in ``...``), control characters escaped."""
    parts: list[str] = []
    left = [limit]

    def emit(text: str) -> None:
        parts.append(text)
        left[0] -= len(text)
        if left[0] < 0:
            raise _Full

    try:
        _show(v, emit)
    except _Full:
        return "".join(parts)[: max(0, limit - 3)] + "..."
    return "".join(parts)


def _show(v: Any, emit: Any) -> None:
    if isinstance(v, Mapping):
        if len(v) > _BIG:
            emit(f"[{len(v):,} entries]")
            return
        items = sorted(v.items(), key=lambda kv: sort_key(kv[0]))
        emit("[")
        for n, (k, x) in enumerate(items):
            if n:
                emit(", ")
            _show(k, emit)
            emit(" |-> ")
            _show(x, emit)
        emit("]")
        return
    if isinstance(v, PSet | frozenset | set):
        if len(v) > _BIG:
            emit(f"{{{len(v):,} elements}}")
            return
        emit("{" + ", ".join(sorted(show(x) for x in v)) + "}")
        return
    if isinstance(v, PVector | list) or (isinstance(v, tuple) and not hasattr(v, "_fields")):
        emit("<<")
        for n, x in enumerate(v):
            if n:
                emit(", ")
            _show(x, emit)
        emit(">>")
        return
    if isinstance(v, bool):
        emit("TRUE" if v else "FALSE")
        return
    if v is None:
        emit("Nil")
        return
    if isinstance(v, Record):
        items = sorted(v.fields.items(), key=lambda kv: str(kv[0]))
        _record(printable(v.tag), items, emit)
        return
    fields = getattr(v, "__dataclass_fields__", None)
    if fields is not None:
        _record(type(v).__name__, [(n, getattr(v, n)) for n in fields], emit)
        return
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        _record(type(v).__name__, list(zip(v._fields, v, strict=True)), emit)
        return
    emit(printable(str(v)))


def _record(name: str, items: list[tuple[Any, Any]], emit: Any) -> None:
    emit(name + "(")
    for n, (k, x) in enumerate(items):
        if n:
            emit(", ")
        emit(f"{printable(str(k))}=")
        _show(x, emit)
    emit(")")


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


_KIND = ("mtype", "type", "kind")
_ROUTE = frozenset((*_SRC, *_DST, *_TERM, *_KIND))


def _message_fields(m: Any) -> list[tuple[str, Any]]:
    """A message's fields in declaration order: NamedTuple, dataclass, record, map."""
    if isinstance(m, Record):
        return [(k, m.fields[k]) for k in m._order or sorted(m.fields)]
    if isinstance(m, Mapping):
        return [(str(k), m[k]) for k in sorted(m, key=sort_key)]
    names = getattr(m, "_fields", None)
    if names is None and hasattr(m, "__dataclass_fields__"):
        names = tuple(m.__dataclass_fields__)
    return [(n, getattr(m, n)) for n in names or ()]


def message_detail(m: Any, width: int = 60) -> str:
    """``AppendReply F->L2 t2 INCONSISTENCY next=1 match=-1``: the brief form plus the
    message's contents, since a report often turns on them.  A field holding an
    upper-case word (a result code) is shown bare; the text is clipped at ``width``."""
    parts = [brief_message(m)]
    for name, v in _message_fields(m):
        if name in _ROUTE:
            continue
        if isinstance(v, str) and v.isupper():
            parts.append(v)
        else:
            parts.append(f"{name}={show(v)}")
    text = " ".join(parts)
    if len(text) <= width:
        return text
    # Clip between words: a cut word reads as a different value.
    cut = text.rfind(" ", 0, width - 3)
    return (text[:cut] if cut > 0 else text[: width - 3]) + " ..."


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
