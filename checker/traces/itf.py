"""Traces in the Informal Trace Format (ITF), the JSON trace format of Apalache and Quint.

Layout (ADR-015): a top-level object with ``#meta``, ``vars`` and ``states`` (and
``loop`` for a lasso); each state is an object with its own ``#meta`` and one entry
per variable.  Values:

========================  =============================================================
Python                    ITF
========================  =============================================================
bool, str                 JSON boolean, string
int                       JSON number within +-(2^53 - 1), else ``{"#bigint": "..."}``
model value (``s1``)      its name as a string (listed in ``#meta.model_values``)
tuple                     ``{"#tup": [...]}``
pvector, list             JSON array (a sequence)
frozenset, pset           ``{"#set": [...]}`` (sorted, so files are stable)
pmap, immutables.Map      ``{"#map": [[key, value], ...]}`` (sorted by key)
NamedTuple, dataclass     a record ``{field: ...}`` (ADR-015), its type in ``#meta``
None                      the nullary variant ``{"tag": "Nil", "value": {}}``
enum member               its name as a string
========================  =============================================================

Records are plain ITF records, so Apalache, Quint and itf-py read them as records.
For mcheck's exact round trip ``#meta.records`` names each record type's fields in
order (``{"RVRequest": ["mterm", ...]}``) and ``#meta.types`` its ``module:QualName``:
a record whose fields are one type's reads back as that type.  Only where two types
share the same fields (a real union) is a record written as a variant ``{"tag":
"RVRequest", "value": {field: ...}}``.  ``None`` is a nullary variant whose tag is a
valid identifier (itf-py turns tags into namedtuple names, and ``None`` is a keyword);
files written before, with ``{"tag": "None", "value": {"#tup": []}}``, still read.

Reading is safe on untrusted files: it never imports a module or calls an object the
file names.  Records read back as :class:`Record` (tag plus fields), containers as
``immutables.Map``, ``frozenset`` and tuples.  :meth:`ItfTrace.normalize` turns a
spec's own value into that same read form, so a replay compares a spec's states with
a file's without trusting the file's type names.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from immutables import Map
from pyrsistent import PBag, PSet, PVector

from checker.base.errors import MCheckError
from checker.base.reading import TooLarge, read_bounded
from checker.base.safefile import write_atomically
from checker.values import ModelValue, Record
from checker.values.fingerprint import sort_key

MAX_SAFE_INT = (1 << 53) - 1


class TraceFileError(MCheckError):
    """A trace file that is missing, truncated, not ITF, or of another spec."""


#: The tag of ``None``: a nullary variant (see the module docstring).
NONE_TAG = "Nil"


class _Writer:
    def __init__(self) -> None:
        self.types: dict[str, str] = {}
        self.model_values: dict[str, list[str]] = {}
        #: type name -> its fields in order, and every record written (to tag them
        #: afterwards if two types turn out to share their fields).
        self.records: dict[str, list[str]] = {}
        self.written: list[tuple[dict[str, Any], str]] = []

    def value(self, v: Any) -> Any:
        if v is None:
            return {"tag": NONE_TAG, "value": {}}
        if isinstance(v, bool) or (isinstance(v, str) and not isinstance(v, enum.Enum)):
            return v
        if isinstance(v, ModelValue):
            self.model_values.setdefault(v.group, [])
            if v.name not in self.model_values[v.group]:
                self.model_values[v.group].append(v.name)
            return v.name
        if isinstance(v, enum.Enum):
            return v.name
        if isinstance(v, int):
            return v if -MAX_SAFE_INT <= v <= MAX_SAFE_INT else {"#bigint": str(v)}
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            return self._record(type(v), {f: getattr(v, f) for f in v._fields})
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields = {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}
            return self._record(type(v), fields)
        if isinstance(v, tuple):
            return {"#tup": [self.value(x) for x in v]}
        if isinstance(v, PVector | list):
            return [self.value(x) for x in v]
        if isinstance(v, PBag):
            counts: dict[Any, int] = {}
            for x in v:
                counts[x] = counts.get(x, 0) + 1
            return {"#map": [[self.value(k), n] for k, n in sorted(counts.items(), key=_key0)]}
        if isinstance(v, PSet | frozenset | set):
            return {"#set": [self.value(x) for x in sorted(v, key=sort_key)]}
        if isinstance(v, Mapping):
            items = sorted(v.items(), key=_key0)
            return {"#map": [[self.value(k), self.value(x)] for k, x in items]}
        raise TypeError(f"cannot write a value of type {type(v).__name__} to ITF")

    def _record(self, cls: type, fields: dict[str, Any]) -> Any:
        name = cls.__name__
        self.types[name] = f"{cls.__module__}:{cls.__qualname__}"
        self.records[name] = list(fields)
        out = {k: self.value(x) for k, x in fields.items()}
        self.written.append((out, name))
        return out

    def finish(self) -> dict[str, list[str]]:
        """Tag the records that a plain record cannot identify: a type whose fields
        another type shares, one with fields ``tag`` and ``value`` (a variant's), and
        one with no fields; return the field lists of the others (``#meta.records``)."""
        by_shape: dict[tuple[str, ...], list[str]] = {}
        for name, fields in self.records.items():
            by_shape.setdefault(tuple(fields), []).append(name)
        tagged = {
            n
            for shape, names in by_shape.items()
            if len(names) > 1 or set(shape) in ({"tag", "value"}, set())
            for n in names
        }
        for out, name in self.written:
            if name in tagged:
                body = dict(out)
                out.clear()
                out.update({"tag": name, "value": body})
        return {n: f for n, f in self.records.items() if n not in tagged}


def _key0(kv: tuple[Any, Any]) -> str:
    return sort_key(kv[0])


def trace_to_itf(
    states: list[Any],
    var_names: tuple[str, ...],
    variables: Any,
    step_meta: list[dict[str, Any]],
    meta: dict[str, Any],
    loop: int | None = None,
) -> dict[str, Any]:
    """Build the ITF object of a trace; ``variables(state)`` gives a state's values."""
    w = _Writer()
    out_states = []
    for i, (state, smeta) in enumerate(zip(states, step_meta, strict=True)):
        obj: dict[str, Any] = {"#meta": {"index": i, **_json_meta(w, smeta)}}
        for name, v in zip(var_names, variables(state), strict=True):
            obj[name] = w.value(v)
        out_states.append(obj)
    top_meta = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        **meta,
        "model_values": w.model_values,
        "types": w.types,
        "records": w.finish(),
    }
    doc: dict[str, Any] = {"#meta": top_meta, "vars": list(var_names), "states": out_states}
    if loop is not None:
        doc["loop"] = loop
    return doc


def _json_meta(w: _Writer, smeta: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in smeta.items():
        if k == "params":
            out[k] = [w.value(p) for p in v]
        else:
            out[k] = v
    return out


def write_itf(path: Path, doc: dict[str, Any]) -> None:
    """Write an ITF document atomically (a partial file never replaces a good one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(doc, indent=1) + "\n")


#: Deepest nesting of values a trace may hold (deeper files are refused, not crashed on).
MAX_DEPTH = 200


def record_types(*sources: Any) -> dict[str, type]:
    """The record types (NamedTuples, dataclasses) a trace reader may rebuild: those
    defined in or imported by the modules of ``sources`` (spec classes or modules),
    keyed ``module:QualName`` as the writer names them.  Only the spec the user names
    is trusted this way; a file's own type names are never imported."""
    import inspect
    import sys

    out: dict[str, type] = {}
    for src in sources:
        module = src if inspect.ismodule(src) else sys.modules.get(getattr(src, "__module__", ""))
        if module is None:
            continue
        for obj in vars(module).values():
            if not isinstance(obj, type):
                continue
            is_named = issubclass(obj, tuple) and hasattr(obj, "_fields")
            if is_named or dataclasses.is_dataclass(obj):
                out[f"{obj.__module__}:{obj.__qualname__}"] = obj
    return out


def meta_field(meta: dict[str, Any], key: str, kind: type) -> Any:
    """``#meta.key`` when present and of the JSON kind (``dict`` or ``list``) a reader
    needs, an empty one when absent, else a one-line TraceFileError (a trace file comes
    from elsewhere)."""
    value = meta.get(key)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        what = "a list" if kind is list else "an object"
        raise TraceFileError(f"'#meta.{key}' is not {what}")
    return value


class _Reader:
    """Turns ITF JSON values into Python values, never trusting the file's type names:
    a record is rebuilt as its type only when that type is in ``allowed`` (the named
    spec's own types), else it reads as a :class:`Record`."""

    def __init__(self, meta: dict[str, Any], allowed: dict[str, type] | None = None) -> None:
        self.names: dict[str, ModelValue] = {}
        groups = meta_field(meta, "model_values", dict)
        for group, names in groups.items():
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise TraceFileError(f"'#meta.model_values.{group}' is not a list of names")
            for i, name in enumerate(names):
                self.names[name] = _model_value(name, str(group), i)
        self.types: dict[str, type] = {}
        declared = meta_field(meta, "types", dict)
        for tag, path in declared.items():
            cls = (allowed or {}).get(path) if isinstance(path, str) else None
            if cls is not None:
                self.types[str(tag)] = cls
        #: A plain record's fields, in order -> its type's name (``#meta.records``).
        self.shapes: dict[tuple[str, ...], str] = {}
        shapes = meta_field(meta, "records", dict)
        for tag, fields in shapes.items():
            if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
                raise TraceFileError(f"'#meta.records.{tag}' is not a list of field names")
            self.shapes[tuple(fields)] = str(tag)

    def value(self, v: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise TraceFileError(f"values nested deeper than {MAX_DEPTH} levels")
        if isinstance(v, bool | int):
            return v
        if isinstance(v, str):
            return self.names.get(v, v)
        d = depth + 1
        if isinstance(v, list):
            return tuple(self.value(x, d) for x in v)
        if not isinstance(v, dict):
            raise TraceFileError(f"not an ITF value: {_clip(v)}")
        if "#bigint" in v:
            text = v["#bigint"]
            if not isinstance(text, str) or len(text) > 4000:
                raise TraceFileError(f"malformed #bigint: {_clip(text)}")
            try:
                return int(text)
            except ValueError:
                raise TraceFileError(f"malformed #bigint: {_clip(text)}") from None
        if "#tup" in v:
            return tuple(self.value(x, d) for x in _list(v["#tup"], "#tup"))
        if "#set" in v:
            return frozenset(self.value(x, d) for x in _list(v["#set"], "#set"))
        if "#map" in v:
            pairs = _list(v["#map"], "#map")
            out: dict[Any, Any] = {}
            for pair in pairs:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise TraceFileError(f"a #map entry is not a [key, value] pair: {_clip(pair)}")
                out[self.value(pair[0], d)] = self.value(pair[1], d)
            return Map(out)
        if set(v) == {"tag", "value"} and isinstance(v["tag"], str):
            tag = v["tag"]
            body = v["value"]
            if (tag, body) in ((NONE_TAG, {}), ("None", {"#tup": []})):
                return None  # (the second: files written before records were plain)
            if isinstance(body, dict) and not any(str(k).startswith("#") for k in body):
                return self._record(tag, body, d)
        shape = self.shapes.get(tuple(v))
        if shape is not None:
            return self._record(shape, v, d)
        # A record of no known type: keep it as a map from field name to value.
        return Map({k: self.value(x, d) for k, x in v.items()})

    def _record(self, tag: str, body: dict[str, Any], depth: int) -> Any:
        fields = {str(k): self.value(x, depth) for k, x in body.items()}
        cls = self.types.get(tag)
        if cls is not None:
            try:
                return cls(**fields)
            except (TypeError, ValueError):
                pass  # not this type's fields after all: keep it as plain data
        return Record(tag, Map(fields), tuple(fields))


def _list(v: Any, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise TraceFileError(f"{what} does not hold a list: {_clip(v)}")
    return v


def _clip(v: Any, width: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= width else text[: width - 3] + "..."


def _model_value(name: str, group: str, index: int) -> ModelValue:
    try:
        return ModelValue(name, group, index)
    except ValueError:
        return ModelValue._interned[(group, name)]


@dataclasses.dataclass(frozen=True)
class ItfTrace:
    """A trace read from an ITF file: metadata, variable names, states, step metadata."""

    meta: dict[str, Any]
    var_names: tuple[str, ...]
    states: list[dict[str, Any]]  #: per state: variable name -> value
    steps: list[dict[str, Any]]  #: per state: its ``#meta`` (index, action, params, ...)
    loop: int | None = None
    #: The model values the file declares, by name (how names in values are read).
    model_values: dict[str, ModelValue] = dataclasses.field(default_factory=dict)
    #: Record tag -> the (named spec's) type this file's records were rebuilt as.
    record_types: dict[str, type] = dataclasses.field(default_factory=dict)

    def normalize(self, value: Any) -> Any:
        """``value`` (a spec's own) as it would read back from this file: records as
        :class:`Record` unless rebuilt as their type, containers in their read flavour,
        names resolved the same way."""
        reader = _Reader({})
        reader.names = self.model_values
        reader.types = self.record_types
        writer = _Writer()
        written = writer.value(value)
        reader.shapes = {tuple(f): n for n, f in writer.finish().items()}
        return reader.value(written)

    @property
    def length(self) -> int:
        """Number of actions."""
        return len(self.states) - 1


#: Largest trace file read (bytes): a counterexample is a few hundred kilobytes; a
#: file far larger is refused rather than parsed for minutes.
MAX_FILE_BYTES = 64 * 1024 * 1024


def read_itf(path: Path, types: dict[str, type] | None = None) -> ItfTrace:
    """Read an ITF file; a missing, truncated, oversized or non-ITF file raises
    TraceFileError.  ``types`` (see :func:`record_types`) are the record types that may
    be rebuilt; any other record reads as a :class:`Record`."""
    try:
        text = read_bounded(path, MAX_FILE_BYTES).decode("utf-8")
    except TooLarge:
        raise TraceFileError(
            f"{path} is larger than a trace mcheck reads ({MAX_FILE_BYTES:,} bytes)"
        ) from None
    except FileNotFoundError:
        raise TraceFileError(f"trace file not found: {path}") from None
    except IsADirectoryError:
        raise TraceFileError(f"{path} is a directory, not a trace file") from None
    except UnicodeDecodeError as exc:
        raise TraceFileError(
            f"{path} is not a text (UTF-8) file: byte {exc.start} cannot be decoded"
        ) from None
    except OSError as exc:
        raise TraceFileError(f"cannot read trace file {path}: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFileError(
            f"{path} is not valid JSON (truncated?): {exc.msg} at line {exc.lineno}"
        ) from None
    except RecursionError:
        raise TraceFileError(f"{path} nests JSON too deeply to be a trace") from None
    return itf_from_json(doc, str(path), types)


def itf_from_json(doc: Any, where: str = "trace", types: dict[str, type] | None = None) -> ItfTrace:
    """Decode an ITF document already parsed from JSON (see :func:`read_itf`)."""
    if not isinstance(doc, dict) or "states" not in doc or "vars" not in doc:
        raise TraceFileError(f"{where} is not an ITF trace (no 'vars' and 'states')")
    meta = doc.get("#meta") or {}
    if not isinstance(meta, dict):
        raise TraceFileError(f"{where}: '#meta' is not an object")
    if not isinstance(doc["states"], list) or not doc["states"]:
        raise TraceFileError(f"{where} is not an ITF trace (empty or malformed 'states')")
    names = doc["vars"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TraceFileError(f"{where}: 'vars' is not a list of variable names")
    var_names = tuple(names)
    reader = _Reader(meta, types)
    states: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    for i, raw in enumerate(doc["states"]):
        if not isinstance(raw, dict):
            raise TraceFileError(f"{where}: state {i} is not an object")
        missing = [n for n in var_names if n not in raw]
        if missing:
            raise TraceFileError(f"{where}: state {i} lacks variable {missing[0]!r}")
        try:
            states.append({n: reader.value(raw[n]) for n in var_names})
            smeta = raw.get("#meta") or {}
            if not isinstance(smeta, dict):
                raise TraceFileError("its '#meta' is not an object")
            smeta = dict(smeta)
            if "params" in smeta:
                smeta["params"] = tuple(reader.value(p) for p in _list(smeta["params"], "params"))
        except TraceFileError as exc:
            raise TraceFileError(f"{where}: state {i}: {exc}") from None
        except (TypeError, ValueError, KeyError, RecursionError) as exc:
            raise TraceFileError(f"{where}: state {i} has a malformed value: {exc}") from None
        steps.append(smeta)
    loop = doc.get("loop")
    if loop is not None and (
        not isinstance(loop, int) or isinstance(loop, bool) or not 0 <= loop < len(states)
    ):
        raise TraceFileError(
            f"{where}: 'loop' is {_clip(loop)}, not the index of one of its {len(states)} states"
        )
    return ItfTrace(
        meta=meta,
        var_names=var_names,
        states=states,
        steps=steps,
        loop=loop,
        model_values=reader.names,
        record_types=reader.types,
    )
