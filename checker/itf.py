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
NamedTuple, dataclass     a variant ``{"tag": "RVRequest", "value": {field: ...}}``
None                      the variant ``{"tag": "None", "value": {"#tup": []}}``
enum member               its name as a string
========================  =============================================================

Records of NamedTuple and dataclass types are written as Quint-style variants (a
record with ``tag`` and ``value``) so the reader can rebuild the right type; the
types are listed in ``#meta.types`` as ``module:QualName``.  Reading gives values
equal to the written ones up to the flavour of immutable container (a ``pmap`` reads
back as an ``immutables.Map``): the same canonical encoding, hence the same state.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from immutables import Map
from pyrsistent import PBag, PSet, PVector

from checker.errors import MCheckError
from checker.fingerprint import sort_key
from checker.values import ModelValue

MAX_SAFE_INT = (1 << 53) - 1


class TraceFileError(MCheckError):
    """A trace file that is missing, truncated, not ITF, or of another spec."""


class _Writer:
    def __init__(self) -> None:
        self.types: dict[str, str] = {}
        self.model_values: dict[str, list[str]] = {}

    def value(self, v: Any) -> Any:
        if v is None:
            return {"tag": "None", "value": {"#tup": []}}
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
        self.types[cls.__name__] = f"{cls.__module__}:{cls.__qualname__}"
        return {"tag": cls.__name__, "value": {k: self.value(x) for k, x in fields.items()}}


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
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)


class _Reader:
    def __init__(self, meta: dict[str, Any]) -> None:
        self.names: dict[str, ModelValue] = {}
        for group, names in (meta.get("model_values") or {}).items():
            for i, name in enumerate(names):
                self.names[name] = _model_value(name, group, i)
        self.types: dict[str, Any] = {}
        for tag, path in (meta.get("types") or {}).items():
            self.types[tag] = _import(path)

    def value(self, v: Any) -> Any:
        if isinstance(v, bool | int):
            return v
        if isinstance(v, str):
            return self.names.get(v, v)
        if isinstance(v, list):
            return tuple(self.value(x) for x in v)
        if not isinstance(v, dict):
            raise TraceFileError(f"not an ITF value: {v!r}")
        if "#bigint" in v:
            return int(v["#bigint"])
        if "#tup" in v:
            return tuple(self.value(x) for x in v["#tup"])
        if "#set" in v:
            return frozenset(self.value(x) for x in v["#set"])
        if "#map" in v:
            return Map({self.value(k): self.value(x) for k, x in v["#map"]})
        if set(v) == {"tag", "value"} and isinstance(v["tag"], str):
            tag = v["tag"]
            if tag == "None" and v["value"] == {"#tup": []}:
                return None
            cls = self.types.get(tag)
            if cls is not None and isinstance(v["value"], dict):
                fields = {k: self.value(x) for k, x in v["value"].items()}
                return cls(**fields)
        # A plain record: keep it as a map from field name to value.
        return Map({k: self.value(x) for k, x in v.items()})


def _model_value(name: str, group: str, index: int) -> ModelValue:
    try:
        return ModelValue(name, group, index)
    except ValueError:
        return ModelValue._interned[(group, name)]


def _import(path: str) -> Any:
    module, _, qual = path.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise TraceFileError(f"trace names type {path}, which does not import: {exc}") from None
    return obj


@dataclasses.dataclass(frozen=True)
class ItfTrace:
    """A trace read from an ITF file: metadata, variable names, states, step metadata."""

    meta: dict[str, Any]
    var_names: tuple[str, ...]
    states: list[dict[str, Any]]  #: per state: variable name -> value
    steps: list[dict[str, Any]]  #: per state: its ``#meta`` (index, action, params, ...)
    loop: int | None = None

    @property
    def length(self) -> int:
        """Number of actions."""
        return len(self.states) - 1


def read_itf(path: Path) -> ItfTrace:
    """Read an ITF file; a missing, truncated or non-ITF file raises TraceFileError."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise TraceFileError(f"trace file not found: {path}") from None
    except OSError as exc:
        raise TraceFileError(f"cannot read trace file {path}: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFileError(
            f"{path} is not valid JSON (truncated?): {exc.msg} at line {exc.lineno}"
        ) from None
    return itf_from_json(doc, str(path))


def itf_from_json(doc: Any, where: str = "trace") -> ItfTrace:
    """Decode an ITF document already parsed from JSON."""
    if not isinstance(doc, dict) or "states" not in doc or "vars" not in doc:
        raise TraceFileError(f"{where} is not an ITF trace (no 'vars' and 'states')")
    meta = doc.get("#meta") or {}
    if not isinstance(meta, dict) or not isinstance(doc["states"], list) or not doc["states"]:
        raise TraceFileError(f"{where} is not an ITF trace (empty or malformed 'states')")
    var_names = tuple(doc["vars"])
    reader = _Reader(meta)
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
            smeta = dict(raw.get("#meta") or {})
            if "params" in smeta:
                smeta["params"] = tuple(reader.value(p) for p in smeta["params"])
        except (TypeError, ValueError, KeyError) as exc:
            raise TraceFileError(f"{where}: state {i} has a malformed value: {exc}") from None
        steps.append(smeta)
    loop = doc.get("loop")
    return ItfTrace(
        meta=meta,
        var_names=var_names,
        states=states,
        steps=steps,
        loop=loop if isinstance(loop, int) else None,
    )
