"""Running spec code on a state that records what it reads.

A cached outcome is valid for every state that agrees on the slots its evaluation
read, so every read must be seen.  The spec gets a *tracked* stand-in for its state:
an object of a class made for the state's NamedTuple class (:func:`tracked_class`)
whose fields are properties that record the slot they read (a fixed-key map reads as
the entries looked up, through :class:`TrackedMap`), whose whole-state operations
(iteration, indexing, comparison, hashing, printing) record every slot as read, and
whose other methods are the state class's own, run on the stand-in.  It says its
class is the state's (``isinstance`` holds), but it is not a tuple: a read around the
fields (``tuple.__getitem__(s, 0)``, a C function that reads a tuple's items directly,
``"%s %s" % s``) raises instead of seeing a value it could depend on unseen, and the
action then runs directly and is not cached.

Each stand-in carries its values and, per field, whether it still holds the input's
(a read of it is a read of the state) or the evaluation's own value; a stand-in made
in an earlier evaluation is refused (:class:`Untrackable`).  All of this is per
:class:`Tracker`: one per expansion, so per run, per restart and per worker process,
never in module globals.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any


class NotDecomposable(Exception):
    """A tracked map was used in a way entry tracking cannot follow."""


class Untrackable(Exception):
    """An evaluation produced something tracking cannot account for (a tracked state
    from outside the evaluation, say): the action runs directly instead."""


class Tracker:
    """What the current tracked evaluation of one expansion reads."""

    __slots__ = ("epoch", "reads", "views")

    def __init__(self) -> None:
        #: Slots read (-1: every slot; -2: a wide variable, so the outcome is not cached).
        self.reads: list[int] = []
        #: Bumped per evaluation: a stand-in of another evaluation is refused.
        self.epoch = 0
        #: (variable, id(map)) -> (the map, its TrackedMap view): every guard and
        #: effect reads the same map objects, and a view is built once per map.
        self.views: dict[tuple[int, int], tuple[Any, Any]] = {}

    def begin(self) -> None:
        """Start an evaluation."""
        self.reads.clear()
        self.epoch += 1


#: Views a tracker keeps before starting afresh (a few states' worth).
MAX_VIEWS = 256


class TrackedMap:
    """Stands in for a fixed-key map variable during a tracked evaluation: looking up
    an entry records that entry's slot as read; ``set`` returns a new tracked map with
    the entry written.  Everything else reads all entries and works on a real map."""

    __slots__ = ("_keys", "_make", "_reads", "_src", "_vals", "_var")

    def __init__(
        self,
        var: int,
        keys: tuple[Any, ...],
        vals: dict[Any, Any],
        src: dict[Any, int],
        make: Any,
        reads: list[int],
    ) -> None:
        self._var = var
        self._keys = keys
        self._vals = vals
        self._src = src  # key -> slot while the entry is the input's, -1 once written
        self._make = make
        self._reads = reads

    def _read(self, k: Any) -> None:
        s = self._src[k]
        if s >= 0:
            self._reads.append(s)

    def _read_all(self) -> None:
        for s in self._src.values():
            if s >= 0:
                self._reads.append(s)

    def real(self) -> Any:
        """A real map with the current entries (every entry read)."""
        self._read_all()
        return self._make({k: self._vals[k] for k in self._keys})

    def __getitem__(self, k: Any) -> Any:
        if k not in self._vals:
            raise KeyError(k)
        self._read(k)
        return self._vals[k]

    def get(self, k: Any, default: Any = None) -> Any:
        """The entry for ``k`` (read), or ``default``."""
        if k not in self._vals:
            return default
        self._read(k)
        return self._vals[k]

    def __contains__(self, k: object) -> bool:
        return k in self._vals  # the keys are the same in every state

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Any:
        return iter(self._keys)

    def keys(self) -> Any:
        """The keys (the same in every state: nothing is read)."""
        return list(self._keys)

    def values(self) -> Any:
        """Every entry (all read)."""
        self._read_all()
        return [self._vals[k] for k in self._keys]

    def items(self) -> Any:
        """Every (key, entry) (all read)."""
        self._read_all()
        return [(k, self._vals[k]) for k in self._keys]

    def set(self, k: Any, v: Any) -> TrackedMap:
        """A copy with entry ``k`` written."""
        if k not in self._vals:
            raise NotDecomposable
        vals = dict(self._vals)
        src = dict(self._src)
        vals[k] = v
        src[k] = -1
        return TrackedMap(self._var, self._keys, vals, src, self._make, self._reads)

    def __eq__(self, other: object) -> bool:
        return bool(self.real() == (other.real() if isinstance(other, TrackedMap) else other))

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.real())

    def __repr__(self) -> str:
        return repr(self.real())

    def __getattr__(self, name: str) -> Any:
        # delete, update, mutate, ...: on a real map (the key set may change).
        return getattr(self.real(), name)


Mapping.register(TrackedMap)

#: The tuple methods that read a whole state: each records every slot as read and runs
#: on a real copy of the state.
WHOLE_STATE_METHODS = (
    "__iter__",
    "__getitem__",
    "__contains__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__repr__",
    "__str__",
    "__format__",
    "__reduce__",
    "__reduce_ex__",
    "__add__",
    "__mul__",
    "__rmul__",
    "__copy__",
    "__deepcopy__",
    "count",
    "index",
    "_asdict",
    "__getnewargs__",
)


def tracked_class(
    base: type, decomposed: dict[int, Any], whole_slot: list[int], tracker: Tracker
) -> type:
    """The class of tracked stand-ins for states of the NamedTuple class ``base``,
    recording reads in ``tracker``: ``whole_slot[i]`` is the slot of variable i when
    whole (-1: a wide variable); ``decomposed[i]`` gives (keys, slots, make) for a
    fixed-key map."""
    fields: tuple[str, ...] = base._fields  # type: ignore[attr-defined]
    n = len(fields)
    reads = tracker.reads
    views = tracker.views

    def current(obj: Any) -> list[int]:
        if obj._epoch != tracker.epoch:
            # A stand-in from another evaluation: its values are another state's.
            raise Untrackable("a tracked state outlived its evaluation")
        prov: list[int] = obj._prov
        return prov

    def make_getter(i: int) -> Any:
        if i in decomposed:
            keys, slots, make = decomposed[i]
            src = dict(zip(keys, slots, strict=True))  # shared: TrackedMap copies to write

            def getter(self: Any) -> Any:
                if current(self)[i] != i:
                    return self._vals[i]  # the evaluation's own value
                raw = self._vals[i]
                hit = views.get((i, id(raw)))
                if hit is not None and hit[0] is raw:
                    return hit[1]
                view = TrackedMap(i, keys, {k: raw[k] for k in keys}, src, make, reads)
                if len(views) >= MAX_VIEWS:
                    views.clear()
                views[(i, id(raw))] = (raw, view)  # holds raw: its id stays its own
                return view

        else:
            slot = whole_slot[i]  # -1 for a wide variable: recorded as -2 (uncacheable)
            mark = slot if slot >= 0 else -2

            def getter(self: Any) -> Any:
                if current(self)[i] == i:
                    reads.append(mark)
                return self._vals[i]

        return property(getter)

    def materialise(obj: Any) -> Any:
        """The real state an object stands for (TrackedMaps made real)."""
        if type(obj) is not tracked:
            return obj
        current(obj)
        vals = [v.real() if isinstance(v, TrackedMap) else v for v in obj._vals]
        return tuple.__new__(base, vals)

    def new(vals: list[Any], prov: list[int]) -> Any:
        obj: Any = object.__new__(tracked)
        obj._vals = vals
        obj._prov = prov
        obj._epoch = tracker.epoch
        return obj

    ns: dict[str, Any] = {name: make_getter(i) for i, name in enumerate(fields)}
    ns["__slots__"] = ("_epoch", "_prov", "_vals")
    # isinstance(s, base) holds for a stand-in (the results of actions are checked
    # that way), though type(s) is this class: it is not a tuple.
    ns["__class__"] = property(lambda self: base)
    ns["_fields"] = fields

    def _replace(self: Any, **changes: Any) -> Any:
        prov = current(self)
        vals = list(self._vals)
        origin = list(prov)
        for i, name in enumerate(fields):
            if name in changes:
                vals[i] = changes.pop(name)
                origin[i] = -1
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return new(vals, origin)

    def _make(cls: Any, iterable: Any) -> Any:
        vals = list(iterable)
        if len(vals) != n:
            raise TypeError(f"Expected {n} arguments, got {len(vals)}")
        return new(vals, [-1] * n)

    def whole(name: str) -> Any:
        method = getattr(tuple, name, None) or getattr(base, name)

        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            reads.append(-1)
            return method(materialise(self), *[materialise(a) for a in args], **kwargs)

        wrapped.__name__ = name
        return wrapped

    for name in WHOLE_STATE_METHODS:
        if hasattr(tuple, name) or hasattr(base, name):
            ns[name] = whole(name)
    ns["__len__"] = lambda self: n  # (the same for every state: nothing is read)
    ns["__bool__"] = lambda self: n > 0
    ns["_replace"] = _replace
    ns["_make"] = classmethod(_make)

    def __getattr__(self: Any, name: str) -> Any:
        # The state class's own methods, properties and constants, on the stand-in.
        attr = inspect.getattr_static(base, name)
        if isinstance(attr, staticmethod | classmethod):
            return getattr(base, name)
        if hasattr(attr, "__get__"):
            return attr.__get__(self, base)
        return attr

    ns["__getattr__"] = __getattr__
    tracked: Any = type(base.__name__, (), ns)
    tracked._new = staticmethod(new)
    return tracked  # type: ignore[no-any-return]


def tracked_input(tracked: type, tracker: Tracker, values: tuple[Any, ...]) -> Any:
    """The tracked stand-in for a state whose variables hold ``values``, for a new
    evaluation (its fields read ``values``, recording the reads)."""
    tracker.begin()
    return tracked._new(list(values), list(range(len(values))))  # type: ignore[attr-defined]


def order_of_reads(reads: list[int], nslots: int) -> list[int] | None:
    """Slots read, first reads first, without repeats (all of them for -1); None when
    a wide variable was read (the outcome then depends on what no slot holds)."""
    if -2 in reads:
        return None
    if -1 in reads:
        return list(range(nslots))
    seen: set[int] = set()
    out = []
    for p in reads:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out
