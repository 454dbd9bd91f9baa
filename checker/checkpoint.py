"""Checkpoints: everything an exploration needs to continue after a stop.

A checkpoint is one file, ``DIR/checkpoint.mcp``, written at a chunk boundary (where
the coordinator's trace table, the statistics and the backend's frontier agree):

* a JSON header: the run's *identity* (spec source hash, variant, constants,
  symmetry, strategy, deadlock, depth bound, selected properties, the fingerprint
  function's version and a probe of it), the statistics, the lengths of what follows
  and a SHA-256 of it;
* the trace table's three arrays (fingerprint, parent, choice per stored state): the
  visited set is exactly the table's fingerprints, so it is rebuilt by sorting them;
* the frontier, ``(ordinal, state, depth)`` per queued state, pickled.  Reading it
  back uses an unpickler that builds only the classes of the spec's own modules,
  mcheck's, pyrsistent's and immutables' and a few builtin containers: a checkpoint
  is data, it never names code to run.

The file is written beside its final name, flushed to disk, then renamed over it
(and the folder synced), so a crash or ``kill -9`` during a write leaves the
previous checkpoint whole.  On resume each frontier state is fingerprinted again
and compared with the fingerprint the table holds for it: a different fingerprint
function (or a spec whose states fingerprint differently) is refused, not explored
with a visited set that means something else.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import os
import pickle
import sys
import time
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from checker.errors import ConfigError
from checker.fingerprint import FINGERPRINT_VERSION, encode, fingerprint
from checker.result import Stats

#: The file in a checkpoint folder.
FILE = "checkpoint.mcp"
MAGIC = b"mcheck-checkpoint 1\n"
#: Seconds between checkpoints unless ``--checkpoint-every`` says otherwise.
DEFAULT_EVERY = 300.0


@dataclass
class Snapshot:
    """An exploration stopped at a chunk boundary (what :mod:`checker.engine` saves
    and restores; the file format is this module's business)."""

    stats: Stats
    truncated: bool
    fps: array[int]
    parent: array[int]
    choice: array[int]
    #: (ordinal, state, depth) per queued state, in the order they are taken.
    frontier: list[tuple[int, Any, int]]
    identity: dict[str, Any] = field(default_factory=dict)
    #: What the command line was given, so ``mcheck resume`` can build the same spec.
    origin: dict[str, Any] = field(default_factory=dict)


class CorruptCheckpoint(ConfigError):
    """A checkpoint file that cannot be read back whole."""


# -- identity ------------------------------------------------------------------------


def spec_sources(model: Any) -> dict[str, str]:
    """SHA-256 of the spec's module and of the project modules it uses directly (its
    invariants, its helpers), by module name: a change to any of them changes the
    model, so a checkpoint of the old one must not be resumed with it."""
    spec = getattr(model, "spec", None)
    if spec is None:
        return {}
    module = sys.modules.get(type(spec).__module__)
    if module is None:
        return {}
    names = {module.__name__}
    for value in vars(module).values():
        if inspect.ismodule(value):
            names.add(value.__name__)
        else:
            mod = getattr(value, "__module__", None)
            if isinstance(mod, str):
                names.add(mod)
    out: dict[str, str] = {}
    for name in sorted(names):
        path = _project_file(name)
        if path is not None:
            out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _project_file(module_name: str) -> Path | None:
    """The source file of a module the model is made of: not Python's own, not mcheck's
    (a library the spec imports is part of its model: its version counts too)."""
    top = module_name.split(".")[0]
    if top in ("checker", "builtins") or top in sys.stdlib_module_names:
        return None
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if not file or not file.endswith(".py"):
        return None
    return Path(file).resolve()


def identity_of(
    model: Any, symmetric: bool, strategy: str, deadlock: bool, opts: Any
) -> dict[str, Any]:
    """Everything that decides which states a run visits and in which order."""
    constants = getattr(model, "constants", {})
    return {
        "spec": model.name,
        "sources": spec_sources(model),
        "variant": str(getattr(model, "variant", "")),
        "constants": {k: repr(encode(v)) for k, v in sorted(constants.items())},
        "symmetry": symmetric,
        "strategy": strategy,
        "deadlock": deadlock,
        "max_depth": opts.max_depth,
        "invariants": list(model.invariant_names),
        "actions": list(model.action_names),
        "fingerprint": {
            "version": FINGERPRINT_VERSION,
            # No seed option exists: a probe of the function stands for its seed, so
            # a changed function is caught even where the version was not bumped.
            "probe": fingerprint(("mcheck", 1, frozenset({2, 3}), (None, True))),
        },
    }


#: How identity differences read in the refusal: field -> what it is.
_WHAT = {
    "spec": "spec",
    "sources": "spec source",
    "variant": "variant",
    "constants": "constants",
    "symmetry": "symmetry",
    "strategy": "strategy",
    "deadlock": "deadlock checking",
    "max_depth": "--max-depth",
    "invariants": "selected invariants",
    "actions": "actions",
    "fingerprint": "fingerprint function",
}


def check_identity(saved: dict[str, Any], current: dict[str, Any], where: Path) -> None:
    """Refuse to resume ``saved`` as the run ``current`` describes, naming the first
    difference."""
    for key, what in _WHAT.items():
        if saved.get(key) == current.get(key):
            continue
        if key == "sources":
            changed = sorted(
                n
                for n in set(saved.get(key, {})) | set(current.get(key, {}))
                if saved.get(key, {}).get(n) != current.get(key, {}).get(n)
            )
            detail = f"{', '.join(changed)} changed since the checkpoint"
        elif key == "constants":
            a, b = saved.get(key, {}), current.get(key, {})
            diff = sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))
            detail = ", ".join(f"{n}: {a.get(n)} then, {b.get(n)} now" for n in diff[:3])
        else:
            detail = f"{saved.get(key)!r} then, {current.get(key)!r} now"
        raise ConfigError(f"cannot resume {where}: a different {what} ({detail})")


# -- the file ------------------------------------------------------------------------


def exists(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds a checkpoint."""
    return (Path(folder) / FILE).is_file()


def write(folder: str | os.PathLike[str], snap: Snapshot) -> Path:
    """Write ``snap`` to ``folder`` atomically (the previous checkpoint stays valid
    until the new one is whole on disk)."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    frontier = pickle.dumps(snap.frontier, protocol=pickle.HIGHEST_PROTOCOL)
    parts = [snap.fps.tobytes(), snap.parent.tobytes(), snap.choice.tobytes(), frontier]
    digest = hashlib.sha256()
    for p in parts:
        digest.update(p)
    header = {
        "format": 1,
        "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "identity": snap.identity,
        "origin": snap.origin,
        "stats": asdict(snap.stats),
        "truncated": snap.truncated,
        "lengths": [len(p) for p in parts],
        "itemsizes": [snap.fps.itemsize, snap.parent.itemsize, snap.choice.itemsize],
        "sha256": digest.hexdigest(),
    }
    head = json.dumps(header, sort_keys=True).encode()
    final = root / FILE
    tmp = root / (FILE + ".tmp")
    with open(tmp, "wb") as f:
        f.write(MAGIC)
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for p in parts:
            f.write(p)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    _sync_folder(root)
    return final


def _sync_folder(root: Path) -> None:
    # The rename itself is durable only once the folder's entry is on disk.
    try:
        fd = os.open(root, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_header(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON header of the checkpoint in ``folder`` (identity, origin, statistics)."""
    header, _ = _read(Path(folder), body=False)
    return header


def read(folder: str | os.PathLike[str], modules: set[str] | None = None) -> Snapshot:
    """The checkpoint in ``folder``; ``modules`` are the module names whose classes the
    frontier may hold (the spec's sources; default: those its identity lists)."""
    root = Path(folder)
    header, body = _read(root, body=True)
    assert body is not None
    lengths = header["lengths"]
    pieces: list[bytes] = []
    at = 0
    for n in lengths:
        pieces.append(body[at : at + n])
        at += n
    fps, parent, choice = array("Q"), array("q"), array("I")
    for arr, raw, size in zip((fps, parent, choice), pieces[:3], header["itemsizes"], strict=True):
        if arr.itemsize != size:
            raise CorruptCheckpoint(f"{root / FILE}: written on a machine with other word sizes")
        arr.frombytes(raw)
    allowed = set(modules if modules is not None else header["identity"].get("sources", {}))
    try:
        frontier = _SafeUnpickler(io.BytesIO(pieces[3]), allowed).load()
    except CorruptCheckpoint:
        raise
    except Exception as exc:
        raise CorruptCheckpoint(f"{root / FILE}: its frontier does not read back ({exc})") from None
    stats = Stats(**header["stats"])
    return Snapshot(
        stats=stats,
        truncated=bool(header["truncated"]),
        fps=fps,
        parent=parent,
        choice=choice,
        frontier=frontier,
        identity=header["identity"],
        origin=header.get("origin", {}),
    )


def _read(root: Path, body: bool) -> tuple[dict[str, Any], bytes | None]:
    path = root / FILE
    try:
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                raise CorruptCheckpoint(f"{path}: not an mcheck checkpoint")
            n = int.from_bytes(f.read(8), "little")
            if n <= 0 or n > 1 << 30:
                raise CorruptCheckpoint(f"{path}: corrupt header")
            header = json.loads(f.read(n))
            if not isinstance(header, dict) or header.get("format") != 1:
                raise CorruptCheckpoint(f"{path}: unknown checkpoint format")
            if not body:
                return header, None
            data = f.read()
    except FileNotFoundError:
        raise ConfigError(f"{root} holds no checkpoint ({FILE})") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise CorruptCheckpoint(f"{path}: cannot be read ({exc})") from None
    try:
        lengths = [int(x) for x in header["lengths"]]
        expected = str(header["sha256"])
    except (KeyError, TypeError, ValueError):
        raise CorruptCheckpoint(f"{path}: corrupt header") from None
    if sum(lengths) != len(data) or hashlib.sha256(data).hexdigest() != expected:
        raise CorruptCheckpoint(f"{path}: truncated or damaged (its checksum does not match)")
    return header, data


#: Builtins a frontier may name: containers and atoms, nothing that runs code.
_BUILTINS = {
    "frozenset",
    "set",
    "tuple",
    "list",
    "dict",
    "int",
    "float",
    "complex",
    "str",
    "bytes",
    "bytearray",
    "bool",
    "slice",
    "range",
    "object",
}
#: Library packages whose classes (and pyrsistent's pickle helpers) may be built.
_LIBRARIES = ("pyrsistent", "immutables")
#: copyreg's helpers for objects pickled by class (dataclasses, enums' members).
_COPYREG = {"_reconstructor", "__newobj__", "__newobj_ex__"}


class _SafeUnpickler(pickle.Unpickler):
    """Builds only values: classes of the allowed modules (already imported: the spec
    is loaded before its checkpoint is read), the libraries' persistent types and a
    few builtins.  Anything else (os.system, eval, ...) is refused."""

    def __init__(self, file: io.BytesIO, modules: set[str]) -> None:
        super().__init__(file)
        self.modules = modules

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if module == "copyreg" and name in _COPYREG:
            return super().find_class(module, name)
        if module == "collections" and name in ("OrderedDict", "deque"):
            return super().find_class(module, name)
        top = module.split(".")[0]
        if module in self.modules or top in _LIBRARIES or module == "checker.values":
            loaded = sys.modules.get(module)
            obj = getattr(loaded, name, None) if loaded is not None else None
            if isinstance(obj, type) or (top == "pyrsistent" and callable(obj)):
                return obj
        raise CorruptCheckpoint(
            f"checkpoint names {module}.{name}, which is not a state value of this spec"
        )
