"""TLA+ values as TLC prints them, and the spec's values in the same terms.

A TLC counterexample writes each value in TLA+ syntax (``(s1 :> 0 @@ s2 :> 1)``,
``[mtype |-> RequestVoteRequest, mterm |-> 2]``, ``<<>>``, ``{"a", "b"}``, ``1..3``);
``-dumpTrace json`` writes them as JSON, losing what JSON cannot say.  Both are read
here into one *canonical* form of plain tagged tuples, and a spec's own Python values
(NamedTuples, frozen dataclasses, tuples, frozensets, ``immutables.Map`` and pyrsistent
maps, model values, enums) are put in the same form by :func:`canon`, so the two are
compared with :func:`agrees` and shown in TLA+ syntax with :func:`tla_text`.

The canonical form follows TLA+'s own identities: a sequence is a function over
``1..n`` (``<<>>`` is the empty function, which TLC prints for an empty map), a record
is a function over strings.  Two choices are lenient, because a Python port cannot
say what TLA+ says and the common case must need no mapping code:

- a model value and a string of the same text agree (a port often spells TLA+'s
  model value ``Follower`` as the string ``"Follower"`` or an enum member);
- a function over ``0..n-1`` is a sequence too (a port keeps such a function as a
  tuple indexed from 0, as EWD840's ``active`` is).

Forms: ``("b", bool)``, ``("i", int)``, ``("s", text)`` a string, ``("m", name)`` a
model value (or enum member), ``("none",)`` Python's None, ``("set", frozenset)``,
``("seq", tuple)``, ``("fn", frozenset of (key, value))``, and, read from JSON only,
``("arr", tuple)``: an array that may have been a set or a sequence.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Mapping
from typing import Any

from checker.base.errors import MCheckError
from checker.values import ModelValue

__all__ = [
    "MAX_DEPTH",
    "TlaValueError",
    "agrees",
    "canon",
    "from_json",
    "parse_value",
    "parse_values",
    "tla_text",
]

Canon = tuple[Any, ...]

#: Deepest nesting read (a deeper value is refused, never a RecursionError).
MAX_DEPTH = 100


class TlaValueError(MCheckError):
    """A value that is not TLA+ as TLC prints it, or nests too deeply (exit 2)."""


# -- the canonical form -----------------------------------------------------------------


def _fn(pairs: list[tuple[Canon, Canon]]) -> Canon:
    """A function from its (key, value) pairs: a sequence when its domain is 1..n or
    0..n-1 (see the module docstring)."""
    if not pairs:
        return ("seq", ())
    if all(k[0] == "i" for k, _ in pairs):
        ordered = sorted(pairs, key=lambda kv: kv[0][1])
        first = ordered[0][0][1]
        if first in (0, 1) and all(k[1] == first + j for j, (k, _) in enumerate(ordered)):
            return ("seq", tuple(v for _, v in ordered))
    return ("fn", frozenset(pairs))


def canon(value: Any, depth: int = 0) -> Canon:
    """A spec's value in the canonical form (see the module docstring)."""
    if depth > MAX_DEPTH:
        raise TlaValueError("a value nests more deeply than any trace holds")
    d = depth + 1
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("i", int(value))
    if isinstance(value, str):
        return ("s", str(value))
    if isinstance(value, ModelValue):
        return ("m", value.name)
    if isinstance(value, enum.Enum):
        return ("m", value.name)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return _fn([(("s", f), canon(v, d)) for f, v in zip(value._fields, value, strict=True)])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fn(
            [(("s", f.name), canon(getattr(value, f.name), d)) for f in dataclasses.fields(value)]
        )
    if type(value).__name__ == "PBag":  # a bag is a function to counts (Bags.tla)
        counts: dict[Canon, int] = {}
        for x in value:
            c = canon(x, d)
            counts[c] = counts.get(c, 0) + 1
        return _fn([(k, ("i", n)) for k, n in counts.items()])
    if isinstance(value, frozenset | set) or type(value).__name__ == "PSet":
        return ("set", frozenset(canon(x, d) for x in value))
    if isinstance(value, Mapping) or (hasattr(value, "items") and hasattr(value, "keys")):
        return _fn([(canon(k, d), canon(v, d)) for k, v in value.items()])
    if isinstance(value, tuple | list) or type(value).__name__ == "PVector":
        return ("seq", tuple(canon(x, d) for x in value))
    raise TlaValueError(f"a value of type {type(value).__name__} has no TLA+ form")


_NAMES = ("s", "m")


def agrees(recorded: Canon, actual: Canon) -> bool:
    """Whether a value read from TLC's output (``recorded``) is the spec's value
    (``actual``, from :func:`canon`), under the lenient identities above and, for a
    JSON array, as whichever of a set or a sequence the spec's value is."""
    if recorded == actual:
        return True
    rt, at = recorded[0], actual[0]
    if rt in _NAMES and at in _NAMES:
        return bool(recorded[1] == actual[1])
    if rt == "arr":
        items = recorded[1]
        if at == "seq":
            return len(items) == len(actual[1]) and all(
                agrees(r, a) for r, a in zip(items, actual[1], strict=True)
            )
        if at == "set":
            return _same_members(list(items), list(actual[1]))
        return False
    if rt != at:
        return False
    if rt == "seq":
        return len(recorded[1]) == len(actual[1]) and all(
            agrees(r, a) for r, a in zip(recorded[1], actual[1], strict=True)
        )
    if rt == "set":
        return _same_members(list(recorded[1]), list(actual[1]))
    if rt == "fn":
        mine = dict(actual[1])
        if len(mine) != len(recorded[1]):
            return False
        for k, v in recorded[1]:
            got = mine.get(k)
            if got is None:
                got = next((a for ak, a in mine.items() if agrees(k, ak)), None)
            if got is None or not agrees(v, got):
                return False
        return True
    return False


def _same_members(recorded: list[Canon], actual: list[Canon]) -> bool:
    """Set equality where members agree rather than compare equal."""
    if len(recorded) != len(actual):
        return False
    left = list(actual)
    for r in recorded:
        j = next((j for j, a in enumerate(left) if agrees(r, a)), None)
        if j is None:
            return False
        left.pop(j)
    return True


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def tla_text(c: Canon, width: int | None = None) -> str:
    """A canonical value in TLA+ syntax (``width``: cut with an ellipsis)."""
    text = _text(c)
    if width is not None and len(text) > width:
        return text[: max(width - 3, 1)] + "..."
    return text


def _text(c: Canon) -> str:
    tag = c[0]
    if tag == "b":
        return "TRUE" if c[1] else "FALSE"
    if tag == "i":
        return str(c[1])
    if tag == "s":
        body = str(c[1]).replace("\\", "\\\\").replace('"', '\\"')
        return f'"{body}"'
    if tag == "m":
        return str(c[1])
    if tag == "none":
        return "None"
    if tag in ("seq", "arr"):
        return "<<" + ", ".join(_text(x) for x in c[1]) + ">>"
    if tag == "set":
        return "{" + ", ".join(sorted(_text(x) for x in c[1])) + "}"
    pairs = sorted(c[1], key=lambda kv: _text(kv[0]))
    if pairs and all(k[0] == "s" and _IDENT.match(k[1]) for k, _ in pairs):
        return "[" + ", ".join(f"{k[1]} |-> {_text(v)}" for k, v in pairs) + "]"
    return "(" + " @@ ".join(f"{_text(k)} :> {_text(v)}" for k, v in pairs) + ")"


# -- reading TLA+ text ------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>"(?:[^"\\]|\\.)*")
      | (?P<num>-?\d+(?![A-Za-z_]))
      | (?P<op><<|>>|\|->|:>|@@|\.\.|\\in\b|[{}\[\](),])
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)

#: Reads a model value's name: the mapping's value for it, else the model value.
NameHook = Callable[[str], Canon]
#: Renames a record field (the mapping's field names).
FieldHook = Callable[[str], str]


def _model_value(name: str) -> Canon:
    return ("m", name)


def _same_field(name: str) -> str:
    return name


class _Parser:
    def __init__(self, text: str, names: NameHook, fields: FieldHook) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        pos, end = 0, len(text)
        while pos < end:
            m = _TOKEN.match(text, pos)
            if m is None:
                if text[pos:].strip() == "":
                    break
                raise TlaValueError(f"not a TLA+ value at {_clip(text[pos:])!r}")
            kind = m.lastgroup
            assert kind is not None
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0
        self.names = names
        self.fields = fields

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise TlaValueError(
                f"the value ends early{f' (expected {want!r})' if want else ''}: "
                f"{_clip(self.text)!r}"
            )
        tok = self.tokens[self.i]
        if want is not None and tok[1] != want:
            raise TlaValueError(f"expected {want!r}, found {tok[1]!r} in {_clip(self.text)!r}")
        self.i += 1
        return tok

    def value(self, depth: int = 0) -> Canon:
        """value := term (':>' value ('@@' term ':>' value)*)?  at the top or in ()."""
        if depth > MAX_DEPTH:
            raise TlaValueError("a value nests more deeply than any trace holds")
        first = self.term(depth)
        if self.peek() == "..":
            self.take()
            hi = self.term(depth)
            if first[0] != "i" or hi[0] != "i":
                raise TlaValueError(f"a range of non-integers in {_clip(self.text)!r}")
            if hi[1] - first[1] > 1_000_000:
                raise TlaValueError("a range of more than a million integers")
            return ("set", frozenset(("i", k) for k in range(first[1], hi[1] + 1)))
        if self.peek() != ":>":
            return first
        pairs: list[tuple[Canon, Canon]] = []
        key = first
        while True:
            self.take(":>")
            pairs.append((key, self.term(depth)))
            if self.peek() != "@@":
                break
            self.take()
            key = self.term(depth)
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise TlaValueError(f"a function with a key twice in {_clip(self.text)!r}")
        return _fn(pairs)

    def term(self, depth: int) -> Canon:
        kind, tok = self.take()
        d = depth + 1
        if kind == "str":
            return ("s", _unescape(tok[1:-1]))
        if kind == "num":
            return ("i", int(tok))
        if kind == "ident":
            if tok == "TRUE":
                return ("b", True)
            if tok == "FALSE":
                return ("b", False)
            return self.names(tok)
        if tok == "(":
            inner = self.value(d)
            self.take(")")
            return inner
        if tok == "<<":
            items = self.items(">>", d)
            return ("seq", tuple(items))
        if tok == "{":
            return ("set", frozenset(self.items("}", d)))
        if tok == "[":
            return self.bracket(d)
        raise TlaValueError(f"unexpected {tok!r} in {_clip(self.text)!r}")

    def items(self, close: str, depth: int) -> list[Canon]:
        out: list[Canon] = []
        if self.peek() == close:
            self.take()
            return out
        while True:
            out.append(self.value(depth))
            if self.peek() == ",":
                self.take()
                continue
            self.take(close)
            return out

    def bracket(self, depth: int) -> Canon:
        """``[f |-> v, ...]`` (a record) or ``[x \\in S |-> v]`` (a constant function)."""
        kind, tok = self.take()
        if kind != "ident":
            raise TlaValueError(f"a record field must be a name, not {tok!r}")
        if self.peek() == "\\in":
            self.take()
            domain = self.value(depth)
            self.take("|->")
            body = self.value(depth)
            self.take("]")
            if domain[0] != "set":
                raise TlaValueError(f"[{tok} \\in S |-> v] over a non-set in {_clip(self.text)!r}")
            return _fn([(k, body) for k in domain[1]])
        pairs: list[tuple[Canon, Canon]] = []
        while True:
            self.take("|->")
            pairs.append((("s", self.fields(tok)), self.value(depth)))
            if self.peek() != ",":
                break
            self.take()
            kind, tok = self.take()
            if kind != "ident":
                raise TlaValueError(f"a record field must be a name, not {tok!r}")
        self.take("]")
        return _fn(pairs)


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def parse_value(
    text: str, names: NameHook = _model_value, fields: FieldHook = _same_field
) -> Canon:
    """One TLA+ value as TLC prints it."""
    p = _Parser(text, names, fields)
    out = p.value()
    if p.i != len(p.tokens):
        raise TlaValueError(f"more after the value in {_clip(text)!r}")
    return out


def parse_values(
    text: str, names: NameHook = _model_value, fields: FieldHook = _same_field
) -> list[Canon]:
    """A comma-separated list of TLA+ values (an action's arguments)."""
    p = _Parser(text, names, fields)
    out: list[Canon] = []
    if not p.tokens:
        return out
    while True:
        out.append(p.value())
        if p.peek() is None:
            return out
        p.take(",")


def from_json(
    value: Any,
    names: NameHook = _model_value,
    fields: FieldHook = _same_field,
    depth: int = 0,
) -> Canon:
    """A value of TLC's ``-dumpTrace json`` in the canonical form: arrays stay
    ambiguous (``arr``: set or sequence), strings may be model values, and an
    object's keys are TLA+ text (``"[mtype |-> X]"`` for a message, ``"s1"``)."""
    if depth > MAX_DEPTH:
        raise TlaValueError("a value nests more deeply than any trace holds")
    d = depth + 1
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("i", value)
    if isinstance(value, str):
        got = names(value)
        return ("s", value) if got == ("m", value) else got
    if isinstance(value, list):
        return ("arr", tuple(from_json(x, names, fields, d) for x in value))
    if isinstance(value, dict):
        pairs = []
        for k, v in value.items():
            try:
                key = parse_value(k, names, fields)
            except TlaValueError:
                key = ("s", k)
            if key[0] == "m":  # a record's field, or a model value of the domain
                key = ("s", fields(key[1])) if fields(key[1]) != key[1] else key
            pairs.append((key, from_json(v, names, fields, d)))
        return _fn(pairs)
    raise TlaValueError(f"a JSON {type(value).__name__} is no TLA+ value")
