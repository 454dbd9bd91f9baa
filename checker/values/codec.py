"""State values as data: an exact encoding that reads back without running code.

A checkpoint must give back the very values the run had queued (the same types, so
the spec's actions behave the same and each state fingerprints to the stored
fingerprint), and reading one must call nothing the file names: a checkpoint may come
from elsewhere.  Pickle does the first and not the second; the trace files' ITF does
the second and not the first (it reads a pvector back as a tuple).  This encoding does
both for exactly the value kinds a state may hold (:mod:`checker.values.fingerprint`):

* a value is a list of *nodes*, children before parents; a node is a JSON array whose
  first item names its kind and whose other items are atoms or indices of earlier
  nodes: ``["I", 3]``, ``["T", 0, 1]`` (a tuple of nodes 0 and 1), ``["R", 2, ...]``
  (a record of type 2 with these fields).  Equal sub-values are written once (nodes are
  hash-consed on their kind and children, so ``True`` and ``1``, or two record types
  with equal fields, never share a node);
* record types (NamedTuples, frozen dataclasses, enums) are named ``module:QualName``
  with their field names; the reader rebuilds only types of the loaded spec that it is
  given (:func:`value_types`), with those very fields, by ``tuple.__new__`` and
  ``object.__setattr__``: no ``__init__``, ``__post_init__`` or ``__reduce__`` runs;
* every index must point to an earlier node, every atom must be of its kind: a file
  that breaks a rule is refused with the first broken rule (:class:`CodecError`).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sys
from collections.abc import Iterable
from typing import Any

import immutables
import pyrsistent

from checker.base.errors import MCheckError
from checker.values.modelvalue import ModelValue

_PVECTOR: type = type(pyrsistent.pvector())
_PMAP: type = type(pyrsistent.pmap())
_PSET: type = type(pyrsistent.pset())
_PBAG: type = type(pyrsistent.pbag([]))
_IMAP: type = immutables.Map

#: Longest string or name a node may hold, and the largest int (in decimal digits):
#: far beyond any state value, well within what the reader can handle quickly.
MAX_TEXT = 1 << 20
MAX_DIGITS = 4000

#: Deepest nesting a value may have: beyond what :class:`Writer` (recursive, like the
#: engine's fingerprinting) can write, far below where hashing a nested tuple
#: overflows the C stack (a value 10^6 deep crashed the process with no message).
MAX_DEPTH = 500

#: Most nodes a value may have when its shared sub-values are counted at each use:
#: hashing and fingerprinting visit them all, so a small file of nodes that each use
#: the previous one twice (2^100 of them, a "billion laughs") ran in C for ever,
#: deaf to Ctrl-C and the watchdog.  A real state is many orders smaller.
MAX_EXPANDED = 1 << 24


class CodecError(MCheckError):
    """A value that cannot be written, or an encoding that does not read back."""


def _is_record(cls: type) -> bool:
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def _record_kind(cls: type) -> str | None:
    """'R' (NamedTuple), 'D' (frozen dataclass), 'E' (enum) or None."""
    if issubclass(cls, enum.Enum):
        return "E"
    if _is_record(cls):
        return "R"
    if dataclasses.is_dataclass(cls):
        return "D"
    return None


def _fields(cls: type, kind: str) -> list[str]:
    if kind == "R":
        return [str(f) for f in cls._fields]  # type: ignore[attr-defined]
    if kind == "D":
        return [f.name for f in dataclasses.fields(cls)]
    return []


def type_name(cls: type) -> str:
    """How the encoding names a record type: ``module:QualName``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def value_types(modules: Iterable[str], extra: Iterable[type] = ()) -> dict[str, type]:
    """The record types (NamedTuples, dataclasses, enums) a reader may rebuild: those
    defined in or imported by the named (already imported) modules, and the classes
    nested one level inside their classes, keyed by :func:`type_name`.  The caller
    derives ``modules`` from the spec it loaded, never from a file."""
    out: dict[str, type] = {}

    def consider(obj: Any) -> None:
        if isinstance(obj, type) and _record_kind(obj) is not None:
            out.setdefault(type_name(obj), obj)

    for cls in extra:
        consider(cls)
    for name in modules:
        module = sys.modules.get(name)
        if module is None:
            continue
        for obj in list(vars(module).values()):
            consider(obj)
            if inspect.isclass(obj) and obj.__module__ == name:
                for inner in list(vars(obj).values()):
                    consider(inner)
    return out


class Writer:
    """Encodes values into one node list; call :meth:`add` per value, then
    :meth:`document`.  Values must stay alive until then (nodes are memoised by
    identity as well as by content)."""

    def __init__(self, types: dict[str, type] | None = None) -> None:
        #: The types a reader will be given: a record of any other type is refused
        #: now, when the run can still say so, not at resume.
        self.allowed = types
        self.nodes: list[list[Any]] = []
        self.by_id: dict[int, int] = {}
        self.by_content: dict[tuple[Any, ...], int] = {}
        self.types: list[list[Any]] = []
        self.type_index: dict[type, int] = {}

    def _node(self, node: list[Any]) -> int:
        key = tuple(node)
        found = self.by_content.get(key)
        if found is None:
            found = len(self.nodes)
            self.nodes.append(node)
            self.by_content[key] = found
        return found

    def _type(self, cls: type, kind: str) -> int:
        found = self.type_index.get(cls)
        if found is not None:
            return found
        name = type_name(cls)
        if self.allowed is not None and self.allowed.get(name) is not cls:
            raise CodecError(
                f"a state holds a {cls.__qualname__} (from {cls.__module__}), which is not "
                "a type the spec's modules define or import: a checkpoint could not "
                "rebuild it"
            )
        found = len(self.types)
        self.types.append([name, kind, _fields(cls, kind)])
        self.type_index[cls] = found
        return found

    def add(self, v: Any) -> int:
        """The index of the node of ``v`` (written with its children first)."""
        found = self.by_id.get(id(v))
        if found is not None:
            return found
        t = type(v)
        add = self.add
        node: list[Any]
        if v is None:
            node = ["N"]
        elif t is bool:
            node = ["B", v]
        elif t is int:
            node = ["I", v]
        elif t is str:
            node = ["S", v]
        elif t is ModelValue:
            node = ["M", v.name, v.group, v.index]
        elif t is tuple:
            node = ["T", *[add(x) for x in v]]
        elif t is frozenset:
            node = ["F", *[add(x) for x in v]]
        elif t is _IMAP or t is _PMAP:
            node = ["IM" if t is _IMAP else "PM"]
            for k, x in v.items():
                node.append(add(k))
                node.append(add(x))
        elif t is _PVECTOR:
            node = ["PV", *[add(x) for x in v]]
        elif t is _PSET:
            node = ["PS", *[add(x) for x in v]]
        elif t is _PBAG:
            node = ["PB", *[add(x) for x in v]]
        else:
            kind = _record_kind(t)
            if kind == "E":
                node = ["E", self._type(t, kind), v.name]
            elif kind == "R":
                node = ["R", self._type(t, kind), *[add(x) for x in v]]
            elif kind == "D":
                names = _fields(t, kind)
                node = ["D", self._type(t, kind), *[add(getattr(v, n)) for n in names]]
            else:
                raise CodecError(
                    f"a state holds a {t.__qualname__}, which a checkpoint cannot store "
                    "(ints, strings, bools, None, model values, tuples, frozensets, "
                    "NamedTuples, frozen dataclasses, enums, immutables.Map and "
                    "pyrsistent's pmap, pvector, pset and pbag)"
                )
        index = self._node(node)
        if node[0] not in ("N", "B", "I", "S"):
            # Containers and records are memoised by identity too: structural sharing
            # makes most of a state's sub-values objects met before.
            self.by_id[id(v)] = index
        return index

    def document(self) -> dict[str, Any]:
        """The types and nodes written so far (JSON-serialisable)."""
        return {"types": self.types, "nodes": self.nodes}


class Reader:
    """Rebuilds the values of a :class:`Writer` document, trusting nothing in it."""

    def __init__(self, doc: Any, types: dict[str, type]) -> None:
        if not isinstance(doc, dict):
            raise CodecError("the values are not an object")
        raw_types = doc.get("types")
        nodes = doc.get("nodes")
        if not isinstance(raw_types, list) or not isinstance(nodes, list):
            raise CodecError("the values lack their 'types' and 'nodes' lists")
        self.types = [self._resolve(i, t, types) for i, t in enumerate(raw_types)]
        self.values: list[Any] = []
        # Per node: its nesting depth and its size with shared sub-values expanded,
        # checked before anything hashes it (building a frozenset or map does).
        self.depth: list[int] = []
        self.expanded: list[int] = []
        for i, node in enumerate(nodes):
            try:
                self._measure(node)
                self.values.append(self._build(node))
            except CodecError as exc:
                raise CodecError(f"value node {i}: {exc}") from None
            except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
                raise CodecError(f"value node {i} does not build: {exc}") from None

    def value(self, index: Any) -> Any:
        """The value of node ``index``."""
        return self.values[self._ref(index, len(self.values))]

    @staticmethod
    def _resolve(i: int, raw: Any, types: dict[str, type]) -> tuple[type, str, int]:
        if (
            not isinstance(raw, list)
            or len(raw) != 3
            or not isinstance(raw[0], str)
            or raw[1] not in ("R", "D", "E")
            or not isinstance(raw[2], list)
        ):
            raise CodecError(f"type {i} is not [name, kind, fields]")
        name, kind, fields = raw
        cls = types.get(name)
        if cls is None:
            raise CodecError(
                f"the values name the type {_clip(name)}, which is not a record type of this spec"
            )
        if _record_kind(cls) != kind or _fields(cls, kind) != fields:
            raise CodecError(f"the type {_clip(name)} has other fields in this spec")
        return cls, kind, len(fields)

    @staticmethod
    def _ref(r: Any, limit: int) -> int:
        if type(r) is not int or not 0 <= r < limit:
            raise CodecError(f"{_clip(r)} is not the index of an earlier node")
        return r

    def _measure(self, node: Any) -> None:
        """Record the depth and expanded size of ``node`` (refused past the bounds)."""
        if not isinstance(node, list) or not node or not isinstance(node[0], str):
            raise CodecError(f"{_clip(node)} is not a node")
        kind = node[0]
        if kind in _CONTAINERS:
            refs = node[1:]
        elif kind in ("R", "D") and len(node) >= 2:
            refs = node[2:]
        else:
            self.depth.append(0)
            self.expanded.append(1)
            return
        n = len(self.values)
        depth, expanded = 0, 1
        for r in refs:
            i = self._ref(r, n)
            depth = max(depth, self.depth[i])
            expanded += self.expanded[i]
        if depth >= MAX_DEPTH:
            raise CodecError(f"a value nested deeper than {MAX_DEPTH} levels")
        if expanded > MAX_EXPANDED:
            raise CodecError(
                f"a value of more than {MAX_EXPANDED:,} parts once its shared parts are "
                "counted at each use"
            )
        self.depth.append(depth + 1)
        self.expanded.append(expanded)

    def _build(self, node: Any) -> Any:
        if not isinstance(node, list) or not node or not isinstance(node[0], str):
            raise CodecError(f"{_clip(node)} is not a node")
        kind = node[0]
        n = len(self.values)
        vals = self.values
        if kind in _CONTAINERS:
            items = [vals[self._ref(r, n)] for r in node[1:]]
            if kind in ("IM", "PM"):
                if len(items) % 2:
                    raise CodecError("a map node holds an odd number of items")
                pairs = dict(zip(items[::2], items[1::2], strict=True))
                if len(pairs) * 2 != len(items):
                    raise CodecError("a map node holds a key twice")
                return _IMAP(pairs) if kind == "IM" else pyrsistent.pmap(pairs)
            return _CONTAINERS[kind](items)
        if kind == "N" and len(node) == 1:
            return None
        if kind == "B" and len(node) == 2 and type(node[1]) is bool:
            return node[1]
        if kind == "I" and len(node) == 2 and type(node[1]) is int:
            if len(str(abs(node[1]))) > MAX_DIGITS:
                raise CodecError("an int too large for a state value")
            return node[1]
        if kind == "S" and len(node) == 2 and type(node[1]) is str:
            return _text(node[1])
        if kind == "M" and len(node) == 4:
            name, group, index = node[1:]
            if type(name) is not str or type(group) is not str or type(index) is not int:
                raise CodecError("a model value is not [name, group, index]")
            try:
                return ModelValue(_text(name), _text(group), index)
            except ValueError as exc:
                raise CodecError(str(exc)) from None
        if kind in ("R", "D", "E") and len(node) >= 2:
            cls, tkind, arity = self.types[self._ref(node[1], len(self.types))]
            if tkind != kind:
                raise CodecError(f"a {kind} node names a type of kind {tkind}")
            if kind == "E":
                members = vars(cls).get("_member_map_", {})
                member = members.get(node[2]) if len(node) == 3 else None
                if member is None or type(node[2]) is not str:
                    raise CodecError(f"{_clip(node[2:])} is not a member of {cls.__qualname__}")
                return member
            if len(node) - 2 != arity:
                raise CodecError(f"a {cls.__qualname__} with {len(node) - 2} fields, not {arity}")
            fields = [vals[self._ref(r, n)] for r in node[2:]]
            if kind == "R":
                return tuple.__new__(cls, fields)
            obj: Any = object.__new__(cls)
            for f, x in zip(_fields(cls, "D"), fields, strict=True):
                object.__setattr__(obj, f, x)
            return obj
        raise CodecError(f"{_clip(node)} is not a node of a known kind")


_CONTAINERS: dict[str, Any] = {
    "T": tuple,
    "F": frozenset,
    "IM": None,
    "PM": None,
    "PV": pyrsistent.pvector,
    "PS": pyrsistent.pset,
    "PB": pyrsistent.pbag,
}


def _text(s: str) -> str:
    if len(s) > MAX_TEXT:
        raise CodecError("a string too long for a state value")
    return s


def _clip(v: Any, width: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= width else text[: width - 3] + "..."
