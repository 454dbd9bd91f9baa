"""Running spec code on a state that records what it reads.

A cached outcome is valid for every state that agrees on the slots its evaluation
read, so the reads must all be seen.  The spec gets a *tracked* state: an instance of
a subclass of its NamedTuple class whose fields are properties that record the slot
they read (a fixed-key map reads as the entries looked up, through
:class:`TrackedMap`), and whose whole-state operations (iteration, indexing,
comparison, hashing, printing) record every slot as read.

The tuple underneath holds no value at all: each item is an :class:`Unread` stand-in
that raises :class:`Bypassed` at any use.  A read that goes around the properties
(``tuple.__getitem__(s, 0)``, a C function that reads a tuple's items directly, such
as ``json.dumps`` or ``"%s %s" % s``) therefore cannot see a real value and silently
depend on it: it fails, and the evaluation is redone directly and that action is not
cached.  ``Bypassed`` derives from ``BaseException`` so that a spec's ``except
Exception`` cannot swallow it.

All of this is per :class:`Tracker`: one per expansion, so per run, per restart and
per worker process, never in module globals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn


class Bypassed(BaseException):
    """Spec code used a state's storage without going through its fields."""


class NotDecomposable(Exception):
    """A tracked map was used in a way entry tracking cannot follow."""


class Untrackable(Exception):
    """An evaluation produced something tracking cannot account for (a tracked state
    from outside the evaluation, say): the action runs directly instead."""


class Unread:
    """What a tracked state's storage holds in place of a value: any use raises."""

    __slots__ = ("field",)
    field: int

    def __init__(self, field: int) -> None:
        object.__setattr__(self, "field", field)

    def _bypassed(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Bypassed(f"field {object.__getattribute__(self, 'field')} was read around it")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _bypassed
    __hash__ = __bool__ = __len__ = __iter__ = __contains__ = _bypassed
    __getitem__ = __str__ = __repr__ = __format__ = __int__ = __index__ = _bypassed
    __float__ = __add__ = __radd__ = __sub__ = __mul__ = __call__ = _bypassed
    __reduce__ = __reduce_ex__ = __getattr__ = __setattr__ = __copy__ = _bypassed


class Tracker:
    """What the current tracked evaluation of one expansion reads and builds."""

    __slots__ = ("input", "keep", "prov", "reads", "views")

    def __init__(self) -> None:
        #: Slots read (-1: every slot; -2: a wide variable, so the outcome is not cached).
        self.reads: list[int] = []
        #: id(tracked state) -> per variable, the input variable it still holds (its
        #: own index) or -1 once written.
        self.prov: dict[int, list[int]] = {}
        #: Tracked states made during the evaluation, kept alive (their ids must stay
        #: theirs while ``prov`` is keyed by them).
        self.keep: list[Any] = []
        #: The real values of the evaluation's input state.
        self.input: tuple[Any, ...] = ()
        #: (variable, id(map)) -> (the map, its TrackedMap view): every guard and
        #: effect reads the same map objects, and a view is built once per map.
        self.views: dict[tuple[int, int], tuple[Any, Any]] = {}

    def begin(self, values: tuple[Any, ...]) -> None:
        """Start an evaluation of the state whose values are ``values``."""
        self.reads.clear()
        self.prov.clear()
        self.keep.clear()
        self.input = values

    def end(self) -> None:
        """Forget the evaluation's intermediate states."""
        self.keep.clear()
        self.prov.clear()
        self.input = ()


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
#: on a real copy of the state (the storage underneath holds no values).
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
    """A subclass of the NamedTuple state class ``base`` whose instances record reads in
    ``tracker``: ``whole_slot[i]`` is the slot of variable i when whole (-1: a wide
    variable); ``decomposed[i]`` gives (keys, slots, make) for a fixed-key map."""
    fields: tuple[str, ...] = base._fields  # type: ignore[attr-defined]
    n = len(fields)
    getitem = tuple.__getitem__
    reads = tracker.reads
    prov_of = tracker.prov
    views = tracker.views
    keep = tracker.keep

    def provenance(obj: Any) -> list[int]:
        prov = prov_of.get(id(obj))
        if prov is None:
            # A tracked state from another evaluation: its storage means nothing now.
            raise Untrackable("a tracked state outlived its evaluation")
        return prov

    def make_getter(i: int) -> Any:
        if i in decomposed:
            keys, slots, make = decomposed[i]
            src = dict(zip(keys, slots, strict=True))  # shared: TrackedMap copies to write

            def getter(self: Any) -> Any:
                if provenance(self)[i] != i:
                    return getitem(self, i)  # the evaluation's own value
                raw = tracker.input[i]
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
                if provenance(self)[i] != i:
                    return getitem(self, i)
                reads.append(mark)
                return tracker.input[i]

        return property(getter)

    def real_values(obj: Any) -> list[Any]:
        """The values an instance stands for (TrackedMaps made real)."""
        prov = provenance(obj)
        out = []
        for i in range(n):
            v = tracker.input[i] if prov[i] == i else getitem(obj, i)
            out.append(v.real() if isinstance(v, TrackedMap) else v)
        return out

    def materialise(obj: Any) -> Any:
        return tuple.__new__(base, real_values(obj)) if type(obj) is tracked else obj

    ns: dict[str, Any] = {name: make_getter(i) for i, name in enumerate(fields)}

    def _replace(self: Any, **changes: Any) -> Any:
        prov = provenance(self)
        values = []
        origin = []
        for i, name in enumerate(fields):
            if name in changes:
                values.append(changes.pop(name))
                origin.append(-1)
            else:
                values.append(getitem(self, i))
                origin.append(prov[i])
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        obj: Any = tuple.__new__(tracked, values)
        prov_of[id(obj)] = origin
        keep.append(obj)
        return obj

    def _make(cls: Any, iterable: Any) -> Any:
        obj: Any = tuple.__new__(tracked, iterable)
        if len(obj) != n:
            raise TypeError(f"Expected {n} arguments, got {len(obj)}")
        prov_of[id(obj)] = [-1] * n
        keep.append(obj)
        return obj

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
    ns["_replace"] = _replace
    ns["_make"] = classmethod(_make)
    ns["__slots__"] = ()
    #: The storage of every tracked input: no values.
    ns["_unread"] = tuple(Unread(i) for i in range(n))
    tracked: Any = type(base.__name__, (base,), ns)
    return tracked  # type: ignore[no-any-return]


def tracked_input(tracked: type, tracker: Tracker, values: tuple[Any, ...]) -> Any:
    """The tracked stand-in for a state whose variables hold ``values``: its storage
    holds :class:`Unread` stand-ins, its fields read ``values`` (recording the reads)."""
    tracker.begin(values)
    obj: Any = tuple.__new__(tracked, tracked._unread)  # type: ignore[attr-defined]
    tracker.prov[id(obj)] = list(range(len(values)))
    tracker.keep.append(obj)
    return obj


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
