"""Compact, deterministic texts for state values, in one form everywhere, and messages.

Every renderer (timelines, ``show``, ``view``, pictures, ``validate``, ``replay``) and
every action label writes values through :func:`show`, so a value reads the same on
every screen.  The form is TLA+'s as TLC prints it (``"white"``, ``[pos |-> 0]``,
``(0 :> a @@ 1 :> b)``, ``<<1, 2>>``, ``{1, 2}``, ``TRUE``) unless the user asks for
Python's (``--values python`` or ``MCHECK_VALUES=python``: ``'white'``,
``Token(pos=0)``, ``{0: a, 1: b}``, ``(1, 2)``, ``{1, 2}``, ``True``).

How Python's values read in TLA+'s form (README, "Values on screen"):

- a tuple, list or pvector is a sequence, ``<<a, b>>`` (a Python tuple is indexed from 0,
  TLA+'s sequence from 1: a spec whose TLA+ original has a function over ``0..N-1``
  keeps it as a map to have it drawn ``(0 :> a @@ 1 :> b)``);
- a NamedTuple, frozen dataclass or a trace file's record is a record, fields in their
  declared order (TLA+'s records have no type name: Python's form keeps it);
- a map is a function: ``[k |-> v]`` when every key is a string that is an identifier
  (TLA+'s records are such functions), ``<<a, b>>`` when its keys are exactly
  ``1..n`` (a sequence, as TLC prints one), else ``(k :> v @@ ...)``; an empty map is
  ``<<>>``, as TLC prints the empty function;
- a bag is a function to counts (``Bags.tla``); a model value and an enum member are
  their names; ``None`` is ``Nil``.

Depends on nothing but the values.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from pyrsistent import PSet, PVector

from checker.values.fingerprint import sort_key
from checker.values.kinds import PBAG_TYPE
from checker.values.modelvalue import ModelValue
from checker.values.record import Record
from checker.values.strict import strict_equal

#: Default longest text :func:`show` builds: a state value can be huge (a trace file
#: can hold anything), and drawing must stay bounded.
SHOW_LIMIT = 4000
#: Larger sets and maps are summarised (sorting them for display would be unbounded).
_BIG = 5000
#: The forms :func:`show` writes values in.
VALUE_STYLES = ("tla", "python")
#: The environment variable that chooses the form (worker processes inherit it).
STYLE_VARIABLE = "MCHECK_VALUES"

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Emit = Callable[[str], None]


class _Full(Exception):
    """The text budget of a :func:`show` call is spent."""


def value_style() -> str:
    """The form values are written in: ``MCHECK_VALUES`` (``tla`` unless it says
    ``python``).  An environment variable rather than a module setting so that
    every process of a run (workers, a local cluster) writes values alike."""
    return "python" if os.environ.get(STYLE_VARIABLE, "").strip().lower() == "python" else "tla"


def set_value_style(style: str) -> None:
    """Choose the form for this process and the processes it starts."""
    if style not in VALUE_STYLES:
        raise ValueError(f"unknown value style {style!r} (one of {', '.join(VALUE_STYLES)})")
    os.environ[STYLE_VARIABLE] = style


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


def show(v: Any, limit: int = SHOW_LIMIT, style: str | None = None) -> str:
    """A deterministic text for a state value in the chosen form (``style``, by
    default :func:`value_style`), at most ``limit`` characters (longer texts end in
    ``...``), control characters escaped."""
    parts: list[str] = []
    left = [limit]

    def emit(text: str) -> None:
        parts.append(text)
        left[0] -= len(text)
        if left[0] < 0:
            raise _Full

    writer = _python if (style or value_style()) == "python" else _tla
    try:
        writer(v, emit)
    except _Full:
        return "".join(parts)[: max(0, limit - 3)] + "..."
    return "".join(parts)


def display_order(v: Any) -> tuple[int, int, str]:
    """A deterministic order for members and keys as a reader expects it: booleans,
    then numbers by value, strings, model values by their position, then the rest by
    their canonical encoding (never by a salted hash)."""
    if isinstance(v, bool):
        return (0, int(v), "")
    if isinstance(v, int):
        return (1, v, "")
    if isinstance(v, str):
        return (2, 0, v)
    if isinstance(v, ModelValue):
        return (3, v.index, v.group + "\0" + v.name)
    if isinstance(v, enum.Enum):
        return (4, 0, type(v).__name__ + "." + v.name)
    return (9, 0, sort_key(v))


def _sorted_items(v: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    return sorted(v.items(), key=lambda kv: display_order(kv[0]))


def _fields(v: Any) -> tuple[str, list[tuple[str, Any]]] | None:
    """A record's name and fields in their declared order, or None if ``v`` is not one."""
    if isinstance(v, Record):
        order = v._order or tuple(sorted(str(k) for k in v.fields))
        return printable(v.tag), [(k, v.fields[k]) for k in order]
    names = getattr(v, "__dataclass_fields__", None)
    if names is not None and not isinstance(v, type):
        return type(v).__name__, [(n, getattr(v, n)) for n in names]
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v).__name__, list(zip(v._fields, v, strict=True))
    return None


def _is_set(v: Any) -> bool:
    return isinstance(v, PSet | frozenset | set)


def _bag_counts(v: Any) -> list[tuple[Any, int]]:
    counts: dict[str, tuple[Any, int]] = {}
    for x in v:
        key = sort_key(x)
        item, n = counts.get(key, (x, 0))
        counts[key] = (item, n + 1)
    return sorted(counts.values(), key=lambda kv: display_order(kv[0]))


def _tla(v: Any, emit: Emit) -> None:
    if isinstance(v, bool):
        emit("TRUE" if v else "FALSE")
    elif isinstance(v, int):
        emit(str(v))
    elif isinstance(v, str):
        emit('"' + printable(v.replace("\\", "\\\\").replace('"', '\\"')) + '"')
    elif v is None:
        emit("Nil")
    elif isinstance(v, ModelValue | enum.Enum):
        emit(printable(v.name))  # a model value, as TLC prints one
    elif (record := _fields(v)) is not None:
        _tla_record(record[1], emit)
    elif isinstance(v, PBAG_TYPE):
        _tla_function(_bag_counts(v), emit)
    elif isinstance(v, Mapping):
        if len(v) > _BIG:
            emit(f"[{len(v):,} entries]")
            return
        _tla_function(_sorted_items(v), emit)
    elif _is_set(v):
        if len(v) > _BIG:
            emit(f"{{{len(v):,} elements}}")
            return
        _tla_items("{", sorted(v, key=display_order), "}", emit)
    elif isinstance(v, PVector | list | tuple):
        _tla_items("<<", v, ">>", emit)
    else:
        emit(printable(str(v)))


def _tla_items(open_: str, items: Iterable[Any], close: str, emit: Emit) -> None:
    _items(open_, items, close, emit, _tla)


def _items(
    open_: str, items: Iterable[Any], close: str, emit: Emit, write: Callable[[Any, Emit], None]
) -> None:
    """``items`` between brackets, comma-separated, each written by ``write``."""
    emit(open_)
    for n, x in enumerate(items):
        if n:
            emit(", ")
        write(x, emit)
    emit(close)


def _tla_record(items: list[tuple[str, Any]], emit: Emit) -> None:
    emit("[")
    for n, (k, x) in enumerate(items):
        if n:
            emit(", ")
        emit(f"{printable(str(k))} |-> ")
        _tla(x, emit)
    emit("]")


def _tla_function(items: list[tuple[Any, Any]], emit: Emit) -> None:
    """A function as TLC prints it: a record, a sequence (domain ``1..n``, the empty
    function too) or ``(k :> v @@ ...)``."""
    keys = [k for k, _ in items]
    if all(type(k) is int for k in keys) and keys == list(range(1, len(keys) + 1)):
        _tla_items("<<", (x for _, x in items), ">>", emit)
    elif all(isinstance(k, str) and _IDENT.match(k) for k in keys):
        _tla_record([(str(k), x) for k, x in items], emit)
    else:
        emit("(")
        for n, (k, x) in enumerate(items):
            if n:
                emit(" @@ ")
            _tla(k, emit)
            emit(" :> ")
            _tla(x, emit)
        emit(")")


def _python(v: Any, emit: Emit) -> None:
    if isinstance(v, bool | int | str) or v is None:
        emit(printable(repr(v)))
    elif isinstance(v, ModelValue):
        emit(printable(v.name))
    elif isinstance(v, enum.Enum):
        emit(printable(f"{type(v).__name__}.{v.name}"))
    elif (record := _fields(v)) is not None:
        emit(record[0] + "(")
        for n, (k, x) in enumerate(record[1]):
            if n:
                emit(", ")
            emit(f"{printable(str(k))}=")
            _python(x, emit)
        emit(")")
    elif isinstance(v, PBAG_TYPE):
        emit("pbag([")
        first = True
        for x, count in _bag_counts(v):
            for _ in range(count):
                if not first:
                    emit(", ")
                first = False
                _python(x, emit)
        emit("])")
    elif isinstance(v, Mapping):
        if len(v) > _BIG:
            emit(f"{{{len(v):,} entries}}")
            return
        emit("{")
        for n, (k, x) in enumerate(_sorted_items(v)):
            if n:
                emit(", ")
            _python(k, emit)
            emit(": ")
            _python(x, emit)
        emit("}")
    elif _is_set(v):
        if len(v) > _BIG:
            emit(f"{{{len(v):,} elements}}")
            return
        if not v:
            emit("frozenset()")
            return
        _python_items("{", sorted(v, key=display_order), "}", emit)
    elif isinstance(v, tuple):
        _python_items("(", v, ",)" if len(v) == 1 else ")", emit)
    elif isinstance(v, PVector | list):
        _python_items("[", v, "]", emit)
    else:
        emit(printable(str(v)))


def _python_items(open_: str, items: Iterable[Any], close: str, emit: Emit) -> None:
    _items(open_, items, close, emit, _python)


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
    record = _fields(m)
    if record is not None:
        return record[1]
    if isinstance(m, Mapping):
        return [(str(k), x) for k, x in _sorted_items(m)]
    return []


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


def set_delta(old: Any, new: Any) -> tuple[list[Any], list[Any]] | None:
    """What a step added to and removed from a set (or a bag: one entry per copy),
    each in display order, or None when the two are not both sets (or both bags).

    A growing set (Paxos's ``msgs``) drawn whole before and after each step hides
    what the step did; every view draws these instead."""
    if _is_set(old) and _is_set(new):
        # Members told apart as the engine tells them (1 is not TRUE), by encoding.
        mine, theirs = {sort_key(x): x for x in old}, {sort_key(x): x for x in new}
        added = [x for k, x in theirs.items() if k not in mine]
        removed = [x for k, x in mine.items() if k not in theirs]
    elif isinstance(old, PBAG_TYPE) and isinstance(new, PBAG_TYPE):
        before, after = dict(_bag_keyed(old)), dict(_bag_keyed(new))
        added, removed = [], []
        for key in set(before) | set(after):
            item = (after.get(key) or before[key])[0]
            a, b = before.get(key, (item, 0))[1], after.get(key, (item, 0))[1]
            added.extend([item] * max(0, b - a))
            removed.extend([item] * max(0, a - b))
    else:
        return None
    return sorted(added, key=display_order), sorted(removed, key=display_order)


def _bag_keyed(v: Any) -> Iterator[tuple[str, tuple[Any, int]]]:
    for x, n in _bag_counts(v):
        yield sort_key(x), (x, n)


class Change(NamedTuple):
    """One row of what a step changed: ``path`` went from ``before`` to ``after``
    (``sign`` empty), or the set at ``path`` gained (``+``, the member in ``after``)
    or lost (``-``, the member in ``before``) one member."""

    path: str
    before: str
    after: str
    sign: str = ""


def changes(name: str, old: Any, new: Any) -> Iterator[Change]:
    """What changed in one variable: maps per key, sets member by member."""
    if old is new or strict_equal(old, new):
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        keys = sorted(set(old.keys()) | set(new.keys()), key=display_order)
        for k in keys:
            a, b = old.get(k, _MISSING), new.get(k, _MISSING)
            if a is b or (a is not _MISSING and b is not _MISSING and strict_equal(a, b)):
                continue
            yield from changes(f"{name}[{show(k)}]", a, b)
        return
    delta = set_delta(old, new)
    if delta is not None:
        added, removed = delta
        for x in removed:
            yield Change(name, show(x), "", "-")
        for x in added:
            yield Change(name, "", show(x), "+")
        return
    yield Change(name, _text(old), _text(new))


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING: Any = _Missing()


def _text(v: Any) -> str:
    return "(absent)" if v is _MISSING else show(v)
