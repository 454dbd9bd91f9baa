"""Checkpoints: everything an exploration needs to continue after a stop.

A checkpoint is one file, ``DIR/checkpoint.mcp``, written at a chunk boundary (where
the coordinator's trace table, the statistics and the backend's frontier agree):

* a JSON header: the run's *identity* (spec source hash, variant, constants,
  symmetry, strategy, deadlock, depth bound, selected properties, the fingerprint
  function's version and a probe of it), the statistics, the lengths of what follows
  and a SHA-256 of it;
* the trace table's three arrays (fingerprint, parent, choice per stored state): the
  visited set is exactly the table's fingerprints, so it is rebuilt by sorting them;
* the frontier, ``(ordinal, state, depth)`` per queued state, its states in the data
  encoding of :mod:`checker.values.codec` (JSON nodes: atoms, containers, records by
  type name and fields).  No pickle: reading it back rebuilds only the record types
  of the spec that was loaded (by ``tuple.__new__`` and ``object.__setattr__``),
  imports nothing and calls nothing the file names.

Every header field is checked for its type and range, and the arrays against each
other and the statistics (one entry per distinct state, parents before children, the
frontier's depths those of its parent chains), before anything uses them: a
checkpoint may come from elsewhere, and a tampered one is one line, never a crash.

The file is written beside its final name, flushed to disk, then renamed over it
(and the folder synced), so a crash or ``kill -9`` during a write leaves the
previous checkpoint whole.  On resume each frontier state is fingerprinted again
and compared with the fingerprint the table holds for it: a different fingerprint
function (or a spec whose states fingerprint differently) is refused, not explored
with a visited set that means something else.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
import json
import math
import os
import stat
import sys
import time
from array import array
from collections.abc import Iterator
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from checker.base.errors import ConfigError
from checker.base.safefile import atomic_writer, check_writable
from checker.check import checkpointkey
from checker.explore import options
from checker.explore.result import Stats
from checker.explore.snapshot import Snapshot
from checker.liveness.stategraph import GraphImage
from checker.values.codec import CodecError, Reader, Writer, value_types
from checker.values.fingerprint import FINGERPRINT_VERSION, encode, fingerprint

#: The file in a checkpoint folder.
FILE = "checkpoint.mcp"
MAGIC = b"mcheck-checkpoint 1\n"


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
    ident = {
        "spec": model.name,
        "sources": spec_sources(model),
        "variant": str(getattr(model, "variant", "")),
        "constants": {k: repr(encode(v)) for k, v in sorted(constants.items())},
        # The options that decide which states a run visits and in which order, as
        # the options table marks them (checker.explore.options.RUN_OPTIONS).
        **options.identity_options(opts, symmetry=symmetric, strategy=strategy, deadlock=deadlock),
        "invariants": list(model.invariant_names),
        "actions": list(model.action_names),
        "fingerprint": {
            "version": FINGERPRINT_VERSION,
            # No seed option exists: a probe of the function stands for its seed, so
            # a changed function is caught even where the version was not bumped.
            "probe": fingerprint(("mcheck", 1, frozenset({2, 3}), (None, True))),
        },
    }
    temporal = [prop.name for prop in getattr(model, "temporal", ())]
    if temporal:  # (absent otherwise: checkpoints of invariant runs read as before)
        ident["temporal"] = temporal
    return ident


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
    "temporal": "selected temporal properties",
    "actions": "actions",
    "fingerprint": "fingerprint function",
}


def check_identity(saved: dict[str, Any], current: dict[str, Any], where: Path) -> None:
    """Refuse to resume ``saved`` as the run ``current`` describes, naming the first
    difference."""
    for key, what in _WHAT.items():
        if saved.get(key) == current.get(key):
            continue
        then, now = saved.get(key), current.get(key)
        if key in ("sources", "constants") and isinstance(then, dict) and isinstance(now, dict):
            diff = sorted(str(n) for n in set(then) | set(now) if then.get(n) != now.get(n))
            if key == "sources":
                detail = f"{', '.join(diff)} changed since the checkpoint"
            else:
                detail = ", ".join(f"{n}: {then.get(n)} then, {now.get(n)} now" for n in diff[:3])
        else:
            detail = f"{_clip(then)} then, {now!r} now"
        raise ConfigError(f"cannot resume {where}: a different {what} ({detail})")


#: What ``origin`` (the command line a checkpoint records) holds besides its run
#: options (whose table is checker.explore.options.RUN_OPTIONS): field -> (the check, what it
#: must be).
_ORIGIN: dict[str, tuple[Any, str]] = {
    "spec": (lambda v: isinstance(v, str) and 0 < len(v) < 4096, "a spec name or file"),
    "variant": (lambda v: v is None or isinstance(v, str), "a variant name"),
    "consts": (lambda v: _strings(v), "a list of NAME=VALUE"),
    "properties": (lambda v: _strings(v), "a list of property names"),
}


def check_origin(folder: str | os.PathLike[str], origin: Any) -> dict[str, Any]:
    """``origin`` (a checkpoint header's record of the command line), every field
    present and of its type, or a one-line :class:`CorruptCheckpoint`; only the known
    fields are kept (a resume writes them back into its own checkpoints)."""
    path = Path(folder) / FILE
    if not isinstance(origin, dict):
        raise CorruptCheckpoint(f"{path}: corrupt header ('origin' is not an object)")
    for key, (ok, what) in _ORIGIN.items():
        if key not in origin or not ok(origin[key]):
            raise CorruptCheckpoint(f"{path}: corrupt header ('origin.{key}' is not {what})")
    kept = options.check_recorded(origin.get("options"))
    if isinstance(kept, str):
        raise CorruptCheckpoint(f"{path}: corrupt header (origin {kept})")
    return {**{key: origin[key] for key in _ORIGIN}, "options": kept}


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


# -- the file ------------------------------------------------------------------------


#: The file a run or resume holds locked while it uses a checkpoint folder.
LOCK = "checkpoint.lock"


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold ``folder`` (made if missing) for one run: a second run or resume of the
    same folder is refused rather than both writing it and both saying "saved".  An
    advisory lock (``flock``) that the system drops when the process ends, however it
    ends; the lock file is opened without following a link planted in its place."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise ConfigError(f"checkpoint folder {folder}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"checkpoint folder {folder} is in use by another mcheck run or resume"
            ) from None
        # A folder the run could not save into is refused before it starts.
        check_writable(path / FILE, "checkpoints to")
        yield
    finally:
        os.close(fd)


def _in_use(folder: Path) -> bool:
    """Whether a run or resume holds ``folder``'s lock now (without taking it)."""
    try:
        fd = os.open(folder / LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops a lock this probe took
    return False


def exists(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds a checkpoint."""
    return (Path(folder) / FILE).is_file()


def state_types(model: Any) -> dict[str, type]:
    """The record types a checkpoint of ``model`` may hold and rebuild: those its spec's
    modules define or import (derived from the loaded spec, never from a file)."""
    spec = getattr(model, "spec", None)
    if spec is None:
        return {}
    modules = {type(spec).__module__, *spec_sources(model)}
    return value_types(modules, extra=[type(spec)])


def write(
    folder: str | os.PathLike[str], snap: Snapshot, types: dict[str, type] | None = None
) -> Path:
    """Write ``snap`` to ``folder`` atomically (the previous checkpoint stays valid
    until the new one is whole on disk); ``types`` (see :func:`state_types`) are the
    record types a resume can rebuild: a state holding another is refused now."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    writer = Writer(types)
    states = [writer.add(state) for _, state, _ in snap.frontier]
    doc: dict[str, Any] = {
        "states": states,
        "ordinals": [o for o, _, _ in snap.frontier],
        "depths": [d for _, _, d in snap.frontier],
    }
    g = snap.graph
    if g is not None:
        doc["graph"] = {
            "init": g.init,
            "atoms": [list(k) for k in g.atom_keys],
            "instances": [[ai, writer.add(params)] for ai, params in g.instances],
        }
    frontier = json.dumps({**writer.document(), **doc}, separators=(",", ":")).encode()
    parts = [snap.fps.tobytes(), snap.parent.tobytes(), snap.choice.tobytes(), frontier]
    if g is not None:
        # The graph's arrays, in GRAPH_ARRAYS order.
        parts += [np.ascontiguousarray(getattr(g, name)).tobytes() for name, _ in GRAPH_ARRAYS]
    digest = hashlib.sha256()
    for p in parts:
        digest.update(p)
    header = {
        "format": FORMAT,
        "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "identity": snap.identity,
        "origin": snap.origin,
        "stats": asdict(snap.stats),
        "truncated": snap.truncated,
        "lengths": [len(p) for p in parts],
        "itemsizes": [snap.fps.itemsize, snap.parent.itemsize, snap.choice.itemsize],
        "sha256": digest.hexdigest(),
    }
    # Signed with the user's key: the header holds the content's checksum, so this
    # covers the whole file (see checker.check.checkpointkey).
    header["signature"] = checkpointkey.sign(_signed_part(header))
    head = json.dumps(header, sort_keys=True).encode()
    final = root / FILE
    with atomic_writer(final, durable=True) as f:
        f.write(MAGIC)
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for p in parts:
            f.write(p)
    return final


def _signed_part(header: dict[str, Any]) -> bytes:
    """What a checkpoint's signature covers: the header but the signature, in one
    canonical text."""
    return json.dumps(
        {k: v for k, v in header.items() if k != "signature"}, sort_keys=True
    ).encode()


class UntrustedCheckpoint(ConfigError):
    """A checkpoint not signed with this user's key (see checker.check.checkpointkey)."""


#: The option that resumes one anyway.
TRUST_FLAG = "--trust-checkpoint"


def authenticate(folder: str | os.PathLike[str], trusted: bool = False) -> bool:
    """Whether the checkpoint in ``folder`` is signed with this user's key (the whole
    file checked against its header first).  One that is not is refused
    (:class:`UntrustedCheckpoint`), unless ``trusted``: then False, and the caller
    says the result rests on a file mcheck cannot vouch for."""
    root = Path(folder)
    header, _ = _read(root, body=True)
    if checkpointkey.verify(_signed_part(header), header.get("signature")):
        return True
    if trusted:
        return False
    raise UntrustedCheckpoint(
        f"{root / FILE} is not signed with your checkpoint key (it comes from elsewhere, or "
        f"was changed): its figures could be anyone's; resume it with {TRUST_FLAG} if you "
        f"trust its source (the result will say so), or share the key with "
        f"{checkpointkey.ENV}"
    )


def read_header(folder: str | os.PathLike[str], whole: bool = False) -> dict[str, Any]:
    """The JSON header of the checkpoint in ``folder`` (identity, origin, statistics),
    every field checked for its type and range; with ``whole``, also the rest of the
    file against the header's checksum (``resume`` does so before importing a spec)."""
    header, _ = _read(Path(folder), body=whole)
    return header


def read(folder: str | os.PathLike[str], types: dict[str, type]) -> Snapshot:
    """The checkpoint in ``folder``.  ``types`` (see :func:`state_types` of the loaded
    spec) are the only classes its frontier may be rebuilt as; every array is checked
    against the others and the statistics before anything uses it."""
    root = Path(folder)
    path = root / FILE
    header, body = _read(root, body=True)
    assert body is not None
    pieces: list[bytes] = []
    at = 0
    for n in header["lengths"]:
        pieces.append(body[at : at + n])
        at += n
    fps, parent, choice = array("Q"), array("q"), array("I")
    for arr, raw in zip((fps, parent, choice), pieces[:3], strict=False):
        if len(raw) % arr.itemsize:
            raise CorruptCheckpoint(f"{path}: an array of {len(raw)} bytes is not whole")
        arr.frombytes(raw)
    stats = Stats(**header["stats"])
    _check_table(path, stats, fps, parent)
    graph: GraphImage | None = None
    try:
        doc = json.loads(pieces[3])
        if not isinstance(doc, dict):
            raise CodecError("not an object")
        reader = Reader(doc, types)
        frontier = _frontier(doc, reader)
        if len(pieces) > 4:
            graph = _graph(doc, reader, pieces[4:])
    except CodecError as exc:
        raise CorruptCheckpoint(f"{path}: its frontier does not read back ({exc})") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CorruptCheckpoint(f"{path}: its frontier is not JSON ({exc})") from None
    _check_frontier(path, stats, frontier, parent)
    if graph is not None:
        _check_graph(path, stats, graph)
    return Snapshot(
        stats=stats,
        truncated=header["truncated"],
        fps=fps,
        parent=parent,
        choice=choice,
        frontier=frontier,
        identity=header["identity"],
        origin=header["origin"],
        graph=graph,
    )


#: A checkpoint's state-graph arrays after the frontier: (GraphImage field, dtype).
GRAPH_ARRAYS = [
    ("offsets", np.int64),
    ("targets", np.int64),
    ("iids", np.int64),
    ("ks", np.int64),
    ("enabled_offsets", np.int64),
    ("enabled", np.int64),
    ("cut", np.uint8),
    ("truth", np.uint8),
]


def _graph(doc: dict[str, Any], reader: Reader, raw: list[bytes]) -> GraphImage:
    """The state graph's part of a checkpoint (its values decoded, not yet checked
    against the table: :func:`_check_graph`)."""
    meta = doc.get("graph")
    if not isinstance(meta, dict):
        raise CodecError("the graph's arrays come without its 'graph' object")
    init, atoms, instances = meta.get("init"), meta.get("atoms"), meta.get("instances")
    if not (isinstance(init, list) and all(type(o) is int for o in init)):
        raise CodecError("'graph.init' is not a list of ordinals")
    if not (
        isinstance(atoms, list)
        and all(
            isinstance(a, list)
            and len(a) == 3
            and isinstance(a[0], str)
            and type(a[1]) is int
            and a[2] in ("p", "q", "s")
            for a in atoms
        )
    ):
        raise CodecError("'graph.atoms' is not a list of [property, index, role]")
    if not (
        isinstance(instances, list) and all(isinstance(x, list) and len(x) == 2 for x in instances)
    ):
        raise CodecError("'graph.instances' is not a list of [action, parameters]")
    decoded = []
    for ai, params in instances:
        value = reader.value(params)
        if type(ai) is not int or not isinstance(value, tuple):
            raise CodecError("an action instance is not [action number, parameter tuple]")
        decoded.append((ai, value))
    arrays: dict[str, np.ndarray] = {}
    for (name, dtype), blob in zip(GRAPH_ARRAYS, raw, strict=True):
        if len(blob) % np.dtype(dtype).itemsize:
            raise CodecError(f"the graph's {name} array is not whole")
        arrays[name] = np.frombuffer(blob, dtype=dtype)
    return GraphImage(
        init=list(init),
        atom_keys=[(a[0], a[1], a[2]) for a in atoms],
        instances=decoded,
        **arrays,
    )


def _check_graph(path: Path, stats: Stats, g: GraphImage) -> None:
    """The graph's arrays agree with each other and with the table: an offset list per
    state, edges to recorded states, instances that exist, truths and cut flags of
    0 or 1 for every state."""
    n = stats.distinct

    def bad(what: str) -> CorruptCheckpoint:
        return CorruptCheckpoint(f"{path}: its state graph is damaged ({what})")

    for name, off, items in (
        ("successors", g.offsets, len(g.targets)),
        ("enabled constraints", g.enabled_offsets, len(g.enabled)),
    ):
        if len(off) != n + 1 or off[0] != 0 or off[-1] != items or (np.diff(off) < 0).any():
            raise bad(f"the {name} are not listed per state")
    if not len(g.targets) == len(g.iids) == len(g.ks):
        raise bad("edge arrays of different lengths")
    if len(g.targets) and (g.targets.min() < 0 or g.targets.max() >= n):
        raise bad("an edge leads to a state not recorded")
    if len(g.iids) and (g.iids.min() < 0 or g.iids.max() >= len(g.instances)):
        raise bad("an edge names an action instance not listed")
    if len(g.ks) and (g.ks.min() < 0 or g.ks.max() >= 1 << 31):
        raise bad("a successor index below 0 or past 2^31 (the graph keeps 32 bits)")
    if len(g.iids) and len(g.instances) >= 1 << 31:
        raise bad("more action instances than the graph's 32 bits number")
    if len(g.enabled) and g.enabled.min() < 0:
        raise bad("a negative fairness constraint")
    if len(g.cut) != n or (g.cut > 1).any():
        raise bad("the cut flags are not one 0/1 per state")
    if len(g.truth) != n * len(g.atom_keys) or (g.truth > 1).any():
        raise bad("the predicates' truths are not one 0/1 per state and predicate")
    g.truth = g.truth.reshape(len(g.atom_keys), n)
    if any(not 0 <= o < n for o in g.init) or len(set(g.init)) != len(g.init):
        raise bad("an initial state is not a recorded state, or is listed twice")


def _frontier(doc: dict[str, Any], reader: Reader) -> list[tuple[int, Any, int]]:
    states, ordinals, depths = doc.get("states"), doc.get("ordinals"), doc.get("depths")
    if not (isinstance(states, list) and isinstance(ordinals, list) and isinstance(depths, list)):
        raise CodecError("'states', 'ordinals' and 'depths' are not lists")
    if not len(states) == len(ordinals) == len(depths):
        raise CodecError("'states', 'ordinals' and 'depths' differ in length")
    out = []
    for s, o, d in zip(states, ordinals, depths, strict=True):
        if type(o) is not int or type(d) is not int:
            raise CodecError("an ordinal or a depth is not an integer")
        out.append((o, reader.value(s), d))
    return out


def _check_table(path: Path, stats: Stats, fps: array[int], parent: array[int]) -> None:
    """The trace table agrees with itself and with the statistics: one entry per
    distinct state, each parent an earlier state, the initial states first, no
    fingerprint twice."""
    n = stats.distinct
    if not len(fps) == len(parent) == n:
        raise CorruptCheckpoint(
            f"{path}: {len(fps):,} fingerprints and {len(parent):,} parents for "
            f"{n:,} distinct states"
        )
    if n == 0:
        raise CorruptCheckpoint(f"{path}: it records no state")
    p = np.frombuffer(parent, dtype=np.int64)
    if (p < -1).any() or (p >= np.arange(n)).any():
        raise CorruptCheckpoint(f"{path}: a state's parent is not an earlier state")
    roots = np.flatnonzero(p == -1)
    if len(roots) == 0 or roots[-1] != len(roots) - 1:
        raise CorruptCheckpoint(f"{path}: the initial states are not recorded first")
    if len(np.unique(np.frombuffer(fps, dtype=np.uint64))) != n:
        raise CorruptCheckpoint(f"{path}: a fingerprint is recorded twice")
    if sum(stats.action_distinct) != n - len(roots):
        raise CorruptCheckpoint(f"{path}: the per-action counts do not add up to the states")


def _check_frontier(
    path: Path, stats: Stats, frontier: list[tuple[int, Any, int]], parent: array[int]
) -> None:
    """The frontier is non-empty, names distinct recorded states, each at the depth
    its parents give it (so a resumed run's depths and depth bound stay right)."""
    if not frontier:
        raise CorruptCheckpoint(
            f"{path}: its frontier is empty (a run leaves no checkpoint with nothing to do)"
        )
    if len(frontier) != stats.queue:
        raise CorruptCheckpoint(
            f"{path}: {len(frontier):,} queued states, but its statistics say {stats.queue:,}"
        )
    ords = np.array([o for o, _, _ in frontier], dtype=np.int64)
    depths = np.array([d for _, _, d in frontier], dtype=np.int64)
    if (ords < 0).any() or (ords >= stats.distinct).any() or len(np.unique(ords)) != len(ords):
        raise CorruptCheckpoint(f"{path}: a queued state is not a recorded state, or is twice")
    # Each queued state's depth is the length of its parent chain (vectorised: one
    # step up every chain at a time).
    p = np.frombuffer(parent, dtype=np.int64)
    length = np.ones(len(ords), dtype=np.int64)
    cur = p[ords]
    while True:
        live = cur >= 0
        if not live.any():
            break
        length[live] += 1
        cur = np.where(live, p[np.maximum(cur, 0)], -1)
    if (length != depths).any() or depths.max() > stats.depth:
        raise CorruptCheckpoint(f"{path}: a queued state's depth is not its parents' count")


def _read(root: Path, body: bool) -> tuple[dict[str, Any], bytes | None]:
    path = root / FILE
    try:
        # A FIFO or a device would block or never end: only a regular file is read.
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise CorruptCheckpoint(f"{path}: not a regular file")
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                raise CorruptCheckpoint(f"{path}: not an mcheck checkpoint")
            n = int.from_bytes(f.read(8), "little")
            if n <= 0 or n > MAX_HEADER:
                raise CorruptCheckpoint(f"{path}: corrupt header")
            header = json.loads(f.read(n))
            _check_header(path, header)
            if not body:
                return header, None
            size = os.fstat(f.fileno()).st_size
            expected = sum(header["lengths"])
            if size - f.tell() != expected:
                raise CorruptCheckpoint(
                    f"{path}: truncated or damaged (its size does not match its header)"
                )
            data = f.read(expected)
    except FileNotFoundError:
        if _in_use(root):
            raise ConfigError(
                f"{root} holds no checkpoint yet: the mcheck run using it has not saved one"
            ) from None
        raise ConfigError(f"{root} holds no checkpoint ({FILE})") from None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CorruptCheckpoint(f"{path}: cannot be read ({exc})") from None
    if len(data) != expected or hashlib.sha256(data).hexdigest() != header["sha256"]:
        raise CorruptCheckpoint(f"{path}: truncated or damaged (its checksum does not match)")
    return header, data


#: Largest header read (bytes): identity, origin and statistics are a few kilobytes.
MAX_HEADER = 1 << 24


def _check_header(path: Path, header: Any) -> None:
    """Every field of the header of its type and in its range (a checkpoint may come
    from elsewhere: nothing in it is used before it passes here)."""

    def bad(what: str) -> CorruptCheckpoint:
        return CorruptCheckpoint(f"{path}: corrupt header ({what})")

    if not isinstance(header, dict):
        raise bad("not an object")
    fmt = header.get("format")
    if fmt != FORMAT:
        if fmt == 1:
            raise CorruptCheckpoint(
                f"{path}: written by an older mcheck (format 1, a pickled frontier), which "
                "this one does not read: run the check again"
            )
        raise CorruptCheckpoint(f"{path}: unknown checkpoint format")
    for key, kind in (("identity", dict), ("origin", dict), ("stats", dict), ("truncated", bool)):
        if not isinstance(header.get(key), kind):
            raise bad(f"'{key}' is not {'an object' if kind is dict else 'a boolean'}")
    lengths = header.get("lengths")
    if not (
        isinstance(lengths, list)
        and len(lengths) in (4, 4 + len(GRAPH_ARRAYS))
        and all(_count(x) for x in lengths)
    ):
        raise bad("'lengths' is not four byte counts (twelve with a state graph)")
    if header.get("itemsizes") != ITEMSIZES:
        raise CorruptCheckpoint(
            f"{path}: written on a machine with other word sizes ('itemsizes' is not {ITEMSIZES})"
        )
    signature = header.get("signature")
    if signature is not None and not (
        isinstance(signature, str) and len(signature) == 64 and set(signature) <= set(_HEX)
    ):
        raise bad("'signature' is not an HMAC-SHA256")
    digest = header.get("sha256")
    if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= set(_HEX)):
        raise bad("'sha256' is not a SHA-256 digest")
    stats = header["stats"]
    names = {f.name for f in fields(Stats)}
    if set(stats) != names:
        odd = sorted(set(stats) ^ names)
        raise bad(f"'stats' has other fields than a run's: {', '.join(map(str, odd))[:80]}")
    for name in names - {"seconds", "action_generated", "action_distinct"}:
        if not _count(stats[name]):
            raise bad(f"'stats.{name}' is not a count")
    seconds = stats["seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise bad("'stats.seconds' is not a number")
    if not (math.isfinite(seconds) and seconds >= 0):
        raise bad("'stats.seconds' is not a duration")
    actions = header["identity"].get("actions")
    if not (isinstance(actions, list) and all(isinstance(a, str) for a in actions)):
        raise bad("'identity.actions' is not a list of action names")
    for name in ("action_generated", "action_distinct"):
        per = stats[name]
        if not (isinstance(per, list) and len(per) == len(actions) and all(map(_count, per))):
            raise bad(f"'stats.{name}' is not one count per action")
    if not (
        stats["generated"] >= stats["distinct"]
        and sum(stats["action_generated"]) <= stats["generated"]
        and stats["queue_peak"] >= stats["queue"]
        and stats["depth"] >= 1
    ):
        raise bad("its counts contradict each other")


def _clip(v: Any, width: int = 80) -> str:
    # A value read from a file, shown in a one-line error: repr escapes control
    # characters, and a long one is cut.
    text = repr(v)
    return text if len(text) <= width else text[: width - 3] + "..."


FORMAT = 2
ITEMSIZES = [8, 8, 4]
_HEX = "0123456789abcdef"


def _count(x: Any) -> bool:
    return type(x) is int and 0 <= x < 1 << 62
