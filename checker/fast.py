"""The fast expansion: interned values, packed states, cached actions and predicates.

What it exploits: a reachable state space is a huge number of combinations of few
distinct values (raft.tla with 3 servers: 705,532 states; per server, a handful of
terms, roles and votes), and an action instance reads only a few of them.

* **Slots.**  A state is cut into *slots*: a variable, or, for a map with the same
  keys in every state (a per-server map), each of its entries.  Each slot's values
  are numbered as met (``SlotTable``); a state is the packed int of its slots'
  numbers, ``WIDTH`` bits each, with the sum of their fingerprint terms above them
  (the state fingerprint adds up variable terms, and a map's term adds up its
  entries', see :func:`checker.fingerprint.variable_term`).
* **Cached actions.**  An action instance is first run on a *tracking* copy of the
  state that records which slots it reads (a per-server map reads as the entries
  looked up) and which it writes.  Its outcome is stored in a decision tree keyed by
  the numbers of the slots it read, in the order it read them: any later state that
  agrees on them gets the successor as one precomputed addition to the packed state
  (numbers and fingerprint at once), without running the spec's code.  Families whose
  parameters come from the state (``over_state``) are cached as a whole; the
  constraint and the invariants are cached the same way.
* **Safety nets.**  Reads the tracking copy cannot see (iterating or indexing the
  state, equality, hashing, printing) count as reading every slot; the successors of
  the first states and of a sample afterwards are recomputed directly and compared,
  and a difference (something the spec reads unseen, or impure spec code) stops the
  run so that :func:`checker.run` can redo it with that action uncached.  Values that
  compare equal in Python but differ are caught while they can be (the first interning
  hits of each slot are compared by type).
* **Wide variables.**  A variable with nearly as many values as there are states (a
  growing message set) is not interned for ever: its value travels with the frontier
  state, and whatever reads it runs directly.  A short pilot exploration decides which
  variables are wide and which maps have fixed keys.

Semantics are those of :class:`checker.engine.Expansion` (which serves the models
this cannot: toy graph models, non-NamedTuple states): the same successors in the
same order, the same fingerprints, the same events.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from pyrsistent import PMap, pmap

from checker.engine import Event, Key, NewState
from checker.errors import EvaluationError, SpecError
from checker.fingerprint import (
    StateValueError,
    TermCalculator,
    encode,
    entry_term,
    in_order,
    map_tag,
)
from checker.model import CompiledSpec

_MASK64 = (1 << 64) - 1
#: Bits per slot number in a packed state (a million values per slot).
WIDTH = 20
_NUM = (1 << WIDTH) - 1

# -- tracking ------------------------------------------------------------------------
#: Slots read during a tracked evaluation (-1: every slot).
_READS: list[int] = []
#: id(tracked intermediate state) -> per variable: the input variable it copies, or -1.
_PROV: dict[int, list[int]] = {}
#: Tracked intermediates kept alive while an evaluation runs (their ids must not be reused).
_KEEP: list[Any] = []


#: (variable, id(map)) -> (the map, its TrackedMap view) for recently read map values.
_VIEWS: dict[tuple[int, int], tuple[Any, Any]] = {}
#: Views kept before starting afresh (a few states' worth).
MAX_VIEWS = 256


class _NotDecomposable(Exception):
    """A tracked map was used in a way entry tracking cannot follow."""


class TrackedMap:
    """Stands in for a fixed-key map variable during a tracked evaluation: looking up
    an entry records that entry's slot as read; ``set`` returns a new tracked map with
    the entry written.  Everything else reads all entries and works on a real map."""

    __slots__ = ("_keys", "_make", "_src", "_vals", "_var")

    def __init__(
        self, var: int, keys: tuple[Any, ...], vals: dict[Any, Any], src: dict[Any, int], make: Any
    ) -> None:
        self._var = var
        self._keys = keys
        self._vals = vals
        self._src = src  # key -> slot while the entry is the input's, -1 once written
        self._make = make

    def _read(self, k: Any) -> None:
        s = self._src[k]
        if s >= 0:
            _READS.append(s)

    def _read_all(self) -> None:
        for s in self._src.values():
            if s >= 0:
                _READS.append(s)

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
            raise _NotDecomposable
        vals = dict(self._vals)
        src = dict(self._src)
        vals[k] = v
        src[k] = -1
        return TrackedMap(self._var, self._keys, vals, src, self._make)

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


def _tracked_class(base: type, decomposed: dict[int, Any], whole_slot: list[int]) -> type:
    """A subclass of a NamedTuple state class whose instances record reads:
    ``whole_slot[i]`` is the slot of variable i when whole; ``decomposed[i]`` gives
    (keys, slots, make) for a fixed-key map variable."""
    fields: tuple[str, ...] = base._fields  # type: ignore[attr-defined]
    n = len(fields)
    getitem = tuple.__getitem__
    reads = _READS
    prov_of = _PROV

    def make_getter(i: int) -> Any:
        if i in decomposed:
            keys, slots, make = decomposed[i]
            src = dict(zip(keys, slots, strict=True))  # shared: TrackedMap copies to write
            views = _VIEWS

            def getter(self: Any) -> Any:
                prov = prov_of.get(id(self))
                raw = getitem(self, i)
                if prov is not None and prov[i] != i:
                    return raw  # the action's own value
                if isinstance(raw, TrackedMap):
                    return raw
                # Every guard and effect of a state reads the same map objects: build
                # the tracked view of one once (reading each entry of a pmap is the
                # slow part), not at every attribute access.
                hit = views.get((i, id(raw)))
                if hit is not None and hit[0] is raw:
                    return hit[1]
                view = TrackedMap(i, keys, {k: raw[k] for k in keys}, src, make)
                if len(views) >= MAX_VIEWS:
                    views.clear()
                views[(i, id(raw))] = (raw, view)  # holds raw: its id stays its own
                return view

        else:
            slot = whole_slot[i]  # -1 for a wide variable: recorded as -2 (uncacheable)
            mark = slot if slot >= 0 else -2

            def getter(self: Any) -> Any:
                prov = prov_of.get(id(self))
                if prov is None or prov[i] == i:
                    reads.append(mark)
                return getitem(self, i)

        return property(getter)

    ns: dict[str, Any] = {name: make_getter(i) for i, name in enumerate(fields)}

    def _replace(self: Any, **changes: Any) -> Any:
        prov = prov_of.get(id(self))
        values = []
        origin = []
        for i, name in enumerate(fields):
            if name in changes:
                values.append(changes.pop(name))
                origin.append(-1)
            else:
                values.append(getitem(self, i))
                origin.append(i if prov is None else prov[i])
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        obj: Any = tuple.__new__(tracked, values)
        prov_of[id(obj)] = origin
        _KEEP.append(obj)
        return obj

    def _make(cls: Any, iterable: Any) -> Any:
        obj: Any = tuple.__new__(tracked, iterable)
        if len(obj) != n:
            raise TypeError(f"Expected {n} arguments, got {len(obj)}")
        prov_of[id(obj)] = [-1] * n
        _KEEP.append(obj)
        return obj

    def read_all(name: str) -> Any:
        method = getattr(tuple, name, None) or getattr(base, name)

        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            reads.append(-1)
            return method(self, *args, **kwargs)

        wrapped.__name__ = name
        return wrapped

    for name in (
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
        "count",
        "index",
        "_asdict",
        "__getnewargs__",
    ):
        ns[name] = read_all(name)
    ns["_replace"] = _replace
    ns["_make"] = classmethod(_make)
    ns["__slots__"] = ()
    tracked: Any = type(base.__name__, (base,), ns)
    return tracked  # type: ignore[no-any-return]


def _begin() -> None:
    _READS.clear()
    _PROV.clear()
    _KEEP.clear()


def _end() -> None:
    _KEEP.clear()
    _PROV.clear()


def _order(reads: list[int], nslots: int) -> list[int] | None:
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


# -- interning and caches ------------------------------------------------------------
class SlotTable:
    """The distinct values of one slot, numbered as met, with their terms."""

    __slots__ = ("checks", "index", "key", "name", "packed", "terms", "values", "var")

    def __init__(self, var: int, name: str, key: Any = None) -> None:
        self.var = var
        self.key = key
        self.name = name
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []
        self.terms: list[int] = []
        #: Per value, its whole share of a handle: its term above the slot numbers
        #: plus its number in the slot's place (writing value n over old is then
        #: one addition of ``packed[n] - packed[old]``).
        self.packed: list[int] = []
        self.checks = 0  # interning hits compared by type so far


#: Interning hits per slot whose values are compared with the representative's.
TYPE_CHECKS = 2000


class _Branch:
    """A decision-tree node: the child for each combination of the numbers of the
    slots it tests, keyed by the packed state masked to those slots."""

    __slots__ = ("kids", "mask", "pos")

    def __init__(self, pos: tuple[int, ...]) -> None:
        self.pos = pos
        self.mask = sum(_NUM << (WIDTH * p) for p in pos)
        self.kids: dict[int, Any] = {}


class _Leaf:
    """A cached outcome."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Tree:
    """A decision tree from slot numbers to cached outcomes.

    A path tests the slots an evaluation read, in the order it read them: the first
    one on its own (usually a guard's: a disabled action is known from it alone), the
    rest together, so a lookup is one or two dictionary probes on ``packed & mask``.
    """

    __slots__ = ("epoch", "leaves", "root")

    def __init__(self) -> None:
        self.root: Any = None
        self.leaves = 0
        self.epoch = 0  # bumped whenever the root is made afresh

    def lookup(self, h: int) -> Any:
        """The cached leaf for a packed state, or None."""
        node = self.root
        while node.__class__ is _Branch:
            node = node.kids.get(h & node.mask)
        return node

    def insert(self, h: int, order: list[int], value: Any) -> None:
        """Store ``value``, valid for every state agreeing with ``h`` on ``order``."""
        leaf = _Leaf(value)
        self.leaves += 1
        if self.leaves > MAX_LEAVES:  # bound memory: start afresh
            self.root = None
            self.leaves = 1
        if self.root is None:
            self.epoch += 1
            if order:
                self.root = _Branch((order[0],))
                self.root.kids[h & self.root.mask] = self._chain(h, order[1:], leaf)
            else:
                self.root = leaf
            return
        node = self.root
        tested: set[int] = set()
        while node.__class__ is _Branch:
            tested.update(node.pos)
            key = h & node.mask
            nxt = node.kids.get(key)
            if nxt is None:
                node.kids[key] = self._chain(h, [p for p in order if p not in tested], leaf)
                return
            node = nxt

    @staticmethod
    def _chain(h: int, positions: list[int], leaf: _Leaf) -> Any:
        if not positions:
            return leaf
        b = _Branch(tuple(positions))
        b.kids[h & b.mask] = leaf
        return b


#: Cached outcomes kept per tree before it is cleared (bounds the caches' memory).
MAX_LEAVES = 200_000
#: Root index entries kept before starting afresh; expansions over which it counts
#: the entries it had to build (more than one per two states: given up).
MAX_ROOT_ENTRIES = 4096
ROOT_INDEX_WINDOW = 1 << 16


class CacheUnsound(Exception):
    """A cached outcome differs from a direct evaluation: something the spec reads is
    invisible to tracking (or the spec is not a pure function of the state)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class Unsuitable(Exception):
    """This model's states cannot be interned (unhashable values): the plain
    expansion serves it (and reports what is wrong with its values)."""


class LayoutChanged(Exception):
    """A map variable's keys changed after the pilot judged them fixed."""

    def __init__(self, var: int) -> None:
        super().__init__(var)
        self.var = var


#: Expanded states whose successors are all recomputed directly and compared with
#: the cached ones: the first ones, then one in VERIFY_EVERY.
VERIFY_FIRST = 64
VERIFY_EVERY = 4096
#: Expanded states whose values are checked for in-place changes.
MUTATION_CHECKS = 200


class _Cached:
    """One cache over the slots: of an action instance (leaf value: None when
    disabled, else its outcome), of a state-drawn family (a list of outcomes), or of a
    predicate (a bool)."""

    __slots__ = ("cached", "fn", "index", "name", "params", "tree")

    def __init__(
        self,
        name: str,
        index: int = -1,
        params: tuple[Any, ...] | None = None,
        fn: Callable[[Any], bool] | None = None,
        cached: bool = True,
    ) -> None:
        self.name = name
        self.index = index
        self.params = params
        self.fn = fn
        self.cached = cached
        self.tree = _Tree()


# -- the pilot ----------------------------------------------------------------------
#: States the pilot exploration looks at.
PILOT_STATES = 3000


def pilot(model: CompiledSpec) -> tuple[set[int], dict[int, tuple[Any, ...]]]:
    """From a short breadth-first exploration: the wide variables (more distinct
    values than a fifth of the states, and at least 512) and the fixed-key map
    variables (their keys, in order).  Raises :class:`Unsuitable` for unhashable
    state values."""
    try:
        return _pilot(model)
    except TypeError:
        raise Unsuitable from None


def _pilot(model: CompiledSpec) -> tuple[set[int], dict[int, tuple[Any, ...]]]:
    nvars = len(model.var_names)
    values: list[set[Any]] = [set() for _ in range(nvars)]
    keysets: list[set[frozenset[Any]] | None] = [set() for _ in range(nvars)]
    seen: set[tuple[Any, ...]] = set()
    queue: deque[Any] = deque()

    def note(vals: tuple[Any, ...]) -> None:
        for i, v in enumerate(vals):
            values[i].add(v)
            ks = keysets[i]
            if ks is not None:
                if isinstance(v, Mapping) and not isinstance(v, dict):
                    ks.add(frozenset(v.keys()))
                else:
                    keysets[i] = None

    try:
        for s in model.initial_states():
            vals = tuple(model.variables(s))
            if vals not in seen and model.within(s):
                seen.add(vals)
                queue.append(s)
                note(vals)
        while queue and len(seen) < PILOT_STATES:
            s = queue.popleft()
            for _, _, t in model.successors(s):
                if not model.within(t):
                    continue
                vals = tuple(model.variables(t))
                if vals in seen:
                    continue
                seen.add(vals)
                queue.append(t)
                note(vals)
    except EvaluationError:
        # Spec code raised: the exploration proper meets the same error and reports
        # it with the trace that reached it; the pilot only stops here.
        pass
    n = len(seen)
    wide = {i for i, v in enumerate(values) if len(v) >= 512 and len(v) * 5 > n}
    return wide, _fixed_keys(keysets, wide)


def _fixed_keys(keysets: list[Any], wide: set[int]) -> dict[int, tuple[Any, ...]]:
    """The map variables whose keys were the same in every state seen."""
    fixed: dict[int, tuple[Any, ...]] = {}
    for i, ks in enumerate(keysets):
        if ks is not None and len(ks) == 1 and i not in wide:
            (only,) = ks
            if only:
                fixed[i] = tuple(in_order(only))
    return fixed


def supports(model: Any) -> bool:
    """Whether the fast expansion can serve this model (compiled NamedTuple states)."""
    if not isinstance(model, CompiledSpec):
        return False
    model.initial_states()  # the state type is known once there is a state
    return model.is_namedtuple_state


def _map_maker(sample: Any) -> Any:
    """How to rebuild a map of the sample's kind from a dict."""
    if isinstance(sample, PMap):
        return pmap
    return type(sample)


class FastExpansion:
    """:class:`checker.engine.Expansion`'s interface over packed, cached states.

    A handle is the packed int ``terms << NB | numbers`` (``NB`` bits of slot
    numbers), or, with wide variables, ``(packed, wide values, wide terms)``.
    """

    def __init__(
        self,
        model: CompiledSpec,
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        wide: set[int] | None = None,
        fixed: dict[int, tuple[Any, ...]] | None = None,
        uncached: set[str] | None = None,
        whole: set[int] | None = None,
    ) -> None:
        self.model = model
        self.deadlock = deadlock
        inits = model.initial_states()
        sample = model.variables(inits[0])
        self.nvars = len(sample)
        names = model.var_names
        if wide is None or fixed is None:
            wide, fixed = pilot(model)
        self.wide = sorted(wide)
        self.wide_set = set(self.wide)
        self.fixed = {i: k for i, k in fixed.items() if i not in (whole or set())}
        # The slots: whole narrow variables, and the entries of fixed-key maps.
        self.tables: list[SlotTable] = []
        self.whole_slot = [-1] * self.nvars
        self.decomposed: dict[int, Any] = {}
        for i in range(self.nvars):
            if i in self.wide_set:
                continue
            if i in self.fixed:
                keys = self.fixed[i]
                slots = []
                for k in keys:
                    slots.append(len(self.tables))
                    self.tables.append(SlotTable(i, f"{names[i]}[{k}]", k))
                self.decomposed[i] = (keys, tuple(slots), _map_maker(sample[i]))
            else:
                self.whole_slot[i] = len(self.tables)
                self.tables.append(SlotTable(i, names[i]))
        self.nslots = len(self.tables)
        # Bits of slot numbers in a packed state, a whole number of bytes: the sums
        # above them can then be read from the handle's bytes without a shift.
        self.nb = -(-WIDTH * self.nslots // 8) * 8
        self.shift = [WIDTH * s for s in range(self.nslots)]
        self.slot_bits = (1 << (WIDTH * self.nslots)) - 1  # the slot numbers of a handle
        self.mapcache: dict[int, dict[tuple[int, ...], Any]] = {i: {} for i in self.decomposed}
        self.calc = TermCalculator(renamings)
        self.rens = self.calc.rens
        self.lanes = self.calc.lanes
        self.lane_reader: tuple[Any, int] = (
            self.lanes.reader(self.nb // 8) if self.lanes else (None, 0)
        )
        base = sum(map_tag(i) for i in self.decomposed) & ((1 << 64) - 1)
        self.base = self.lanes.pack([base] * len(self.rens)) if self.lanes else base
        self.tracked: Any = _tracked_class(model.state_type, self.decomposed, self.whole_slot)  # type: ignore[arg-type]
        uncached = uncached or set()
        self.caches: list[_Cached] = []  # per static instance, or per state-drawn family
        for ai, name in enumerate(model.action_names):
            instances = model.family_instances(ai)
            if instances is None:
                self.caches.append(_Cached(name, ai, None, cached=name not in uncached))
            else:
                for p in instances:
                    self.caches.append(_Cached(name, ai, p, cached=name not in uncached))
        self.constraint = (
            _Cached("constraint", fn=model.spec.constraint, cached="constraint" not in uncached)
            if model.has_constraint
            else None
        )
        self.invariants = [
            _Cached(n, fn=fn, cached=n not in uncached) for n, fn in model.invariant_predicates
        ]
        self.expanded = 0
        # The root index (see _entry): per combination of the slots the instances'
        # trees test first, the instances not already known to be disabled.
        self.roots_mask = 0
        self.by_roots: dict[int, list[tuple[_Cached, Any]]] = {}
        self.indexed = True
        self.every: list[tuple[_Cached, Any]] = [(c, None) for c in self.caches]  # unindexed
        self.entries_built = 0  # in the window of expansions from window_start
        self.window_start = 0

    # -- values ----------------------------------------------------------------------
    def _slot_term(self, slot: int, value: Any) -> int:
        table = self.tables[slot]
        try:
            if table.var in self.decomposed:
                kf = self.calc.fps(table.key)
                vf = self.calc.fps(value)
                if self.lanes is None:
                    return entry_term(table.var, kf[0], vf[0])
                return self.lanes.pack(
                    [entry_term(table.var, kf[r], vf[r]) for r in range(len(self.rens))]
                )
            return self._var_term(table.var, value)
        except StateValueError as exc:
            raise SpecError(f"{self.model.name}: variable {table.name} holds {exc}") from None

    def _var_term(self, var: int, value: Any, old: Any = None, old_term: int = 0) -> int:
        """A variable's term; with its value and term in the parent state, updated
        from them (a wide set gaining one message costs one element term)."""
        try:
            if old is None:
                return self.calc.term(var, value)
            return self.calc.update(var, value, old, old_term)
        except StateValueError as exc:
            raise SpecError(
                f"{self.model.name}: variable {self.model.var_names[var]} holds {exc}"
            ) from None
        except RecursionError:
            raise SpecError(f"{self.model.name}: a state value nests too deeply") from None

    def intern(self, slot: int, value: Any) -> int:
        """The number of a slot's value (numbering it when new)."""
        table = self.tables[slot]
        n = table.index.get(value)
        if n is None:
            n = len(table.values)
            if n > _NUM:
                raise SpecError(
                    f"{self.model.name}: {table.name} took more than {_NUM:,} distinct "
                    "values, more than the fast engine packs"
                )
            term = self._slot_term(slot, value)
            table.terms.append(term)
            table.packed.append((term << self.nb) + (n << self.shift[slot]))
            table.index[value] = n
            table.values.append(value)
            return n
        if table.checks < TYPE_CHECKS:
            table.checks += 1
            rep = table.values[n]
            if rep is not value and encode(rep) != encode(value):
                raise SpecError(
                    f"{self.model.name}: in {table.name}, {value!r} and {rep!r} compare "
                    "equal in Python but are different values: Python's sets and dicts "
                    "(and mcheck) treat them as one; give such records a field that "
                    "tells them apart, or use frozen dataclasses"
                )
        return n

    def _pack(self, vals: Any) -> tuple[int, int]:
        """(slot numbers, term sum) of a state's variable values."""
        ids = 0
        total = self.base
        tables = self.tables
        shift = self.shift
        for i in range(self.nvars):
            if i in self.wide_set:
                continue
            v = vals[i]
            d = self.decomposed.get(i)
            if d is None:
                s = self.whole_slot[i]
                n = self.intern(s, v)
                ids |= n << shift[s]
                total += tables[s].terms[n]
                continue
            keys, slots, _ = d
            if not isinstance(v, Mapping) or len(v) != len(keys):
                raise LayoutChanged(i)
            for k, s in zip(keys, slots, strict=True):
                if k not in v:
                    raise LayoutChanged(i)
                n = self.intern(s, v[k])
                ids |= n << shift[s]
                total += tables[s].terms[n]
        return ids, total

    def handle_of(self, state: Any) -> Any:
        """The handle of a state object."""
        vals = self.model.variables(state)
        ids, total = self._pack(vals)
        if not self.wide:
            return (total << self.nb) | ids
        wides = tuple(vals[p] for p in self.wide)
        wterms = tuple(self._var_term(p, vals[p]) for p in self.wide)
        return ((total + sum(wterms)) << self.nb) | ids, wides, wterms

    def _split(self, handle: Any) -> tuple[int, tuple[Any, ...], tuple[int, ...]]:
        if self.wide:
            return handle  # type: ignore[no-any-return]
        return handle, (), ()

    def state(self, handle: Any) -> Any:
        """The state object a handle stands for (interned values)."""
        h, wides, _ = self._split(handle)
        h &= self.slot_bits  # the slot numbers only: shifting the sums along is waste
        tables = self.tables
        shift = self.shift
        vals: list[Any] = [None] * self.nvars
        for i in range(self.nvars):
            s = self.whole_slot[i]
            if s >= 0:
                vals[i] = tables[s].values[(h >> shift[s]) & _NUM]
        for i, (keys, slots, make) in self.decomposed.items():
            combo = tuple((h >> shift[s]) & _NUM for s in slots)
            m = self.mapcache[i].get(combo)
            if m is None:
                m = make(
                    {k: tables[s].values[n] for k, s, n in zip(keys, slots, combo, strict=True)}
                )
                if len(self.mapcache[i]) > 1 << 16:
                    self.mapcache[i].clear()
                self.mapcache[i][combo] = m
            vals[i] = m
        for p, v in zip(self.wide, wides, strict=True):
            vals[p] = v
        return self.model.make_state(vals)

    def finish(self, total: int) -> int:
        """The fingerprint from a sum of terms."""
        return self.lanes.minimum(total) if self.lanes is not None else total & _MASK64

    def fp_of(self, handle: Any) -> int:
        """The fingerprint of a handle's state."""
        return self.finish(self._split(handle)[0] >> self.nb)

    def fingerprint_of(self, state: Any) -> int:
        """A state's fingerprint (as the store holds it)."""
        return self.fp_of(self.handle_of(state))

    # -- predicates ----------------------------------------------------------------------
    def _pred(self, pred: _Cached, handle: Any, state: Any | None) -> tuple[bool, Any]:
        """(verdict, the state if it had to be built)."""
        h = self._split(handle)[0]
        if pred.cached:
            leaf = pred.tree.lookup(h)
            if leaf is not None:
                return leaf.value, state
        if state is None:
            state = self.state(handle)
        assert pred.fn is not None
        if not pred.cached:
            return bool(pred.fn(state)), state
        _begin()
        try:
            value = bool(pred.fn(tuple.__new__(self.tracked, state)))
            order = _order(_READS, self.nslots)
        except (EvaluationError, SpecError, MemoryError):
            raise
        except Exception:
            # The spec's error, or one the tracking copy caused: settle it directly.
            pred.cached = False
            return bool(pred.fn(state)), state
        finally:
            _end()
        if order is None:
            pred.cached = False
        else:
            pred.tree.insert(h, order, value)
        return value, state

    def within(self, handle: Any, state: Any | None = None) -> tuple[bool, Any]:
        """The constraint (cached)."""
        if self.constraint is None:
            return True, state
        try:
            return self._pred(self.constraint, handle, state)
        except (EvaluationError, SpecError, MemoryError):
            raise
        except Exception as exc:
            raise EvaluationError("constraint", exc, state) from exc

    def violated(self, handle: Any, state: Any | None = None) -> tuple[str | None, Any]:
        """The first invariant the state violates (cached), and the state if built."""
        for inv in self.invariants:
            try:
                ok, state = self._pred(inv, handle, state)
            except (EvaluationError, SpecError, MemoryError):
                raise
            except Exception as exc:
                raise EvaluationError(f"invariant {inv.name}", exc, state) from exc
            if not ok:
                return inv.name, state
        return None, state

    def check(self, key: Key, handle: Any, new: bool) -> Event | None:
        """The invariants on one generated state: a violation or error event, or None."""
        h = handle if not self.wide else handle[0]
        for inv in self.invariants:  # the cached verdicts first, inline
            node = inv.tree.root if inv.cached else None
            while node.__class__ is _Branch:
                node = node.kids.get(h & node.mask)
            if node is None or not node.value:
                break
        else:
            return None
        try:
            bad, state = self.violated(handle)
        except EvaluationError as exc:
            return Event(key, "error", error=exc, new=new, state=exc.state)
        if bad is not None:
            return Event(key, "violation", prop=bad, new=new, state=state)
        return None

    # -- successors ------------------------------------------------------------------
    def _evaluate(self, cache: _Cached, state: Any, h: int) -> Any:
        """Run an instance (or a state-drawn family) on a tracking copy; cache and
        return its outcome (instance: None or one outcome; family: a list)."""
        model = self.model
        tracked = tuple.__new__(self.tracked, state)
        _begin()
        try:
            if cache.params is not None:
                t = model.instance_step(cache.index, cache.params, tracked)
                results = [] if t is None else [(cache.params, t)]
            else:
                results = model.family_successors(cache.index, tracked)
            order = _order(_READS, self.nslots)
            if order is None:
                cache.cached = False
                return self._direct(cache, state)
            outcomes = [
                (cache.index, params, *self._delta(t, tracked, state, h, order))
                for params, t in results
            ]
        except (EvaluationError, SpecError, _NotDecomposable, MemoryError, LayoutChanged):
            cache.cached = False
            return self._direct(cache, state)
        except Exception:
            # An error the tracking copy caused (a tracked map where a real one was
            # needed): this one runs directly from now on.
            cache.cached = False
            return self._direct(cache, state)
        finally:
            _end()
        if any(o[2] is None for o in outcomes):
            cache.cached = False
            return self._direct(cache, state)
        value: Any = outcomes if cache.params is None else (outcomes[0] if outcomes else None)
        cache.tree.insert(h, order, value)
        return value

    def _direct(self, cache: _Cached, state: Any) -> Any:
        """The outcome computed directly (spec errors raise here, with the real state)."""
        model = self.model
        if cache.params is not None:
            t = model.instance_step(cache.index, cache.params, state)
            return None if t is None else (cache.index, cache.params, None, t)
        return [
            (cache.index, params, None, t)
            for params, t in model.family_successors(cache.index, state)
        ]

    def _delta(self, t: Any, tracked: Any, state: Any, h: int, order: list[int]) -> tuple[Any, Any]:
        """What a successor changes: (delta to add to the packed state for the written
        slots that were read, the other writes as (slot, number, term)), or (None,
        None) if it writes a wide variable (the instance then runs directly)."""
        if t is tracked:
            return 0, ()
        getitem = tuple.__getitem__
        prov = _PROV.get(id(t)) if type(t) is self.tracked else None
        read = set(order)
        writes: list[tuple[int, Any]] = []
        for i in range(self.nvars):
            if prov is not None and prov[i] == i:
                continue  # copied from the input by _replace
            v = getitem(t, i)
            if v is getitem(state, i) and (
                i in self.decomposed or i in self.wide_set or self.whole_slot[i] in read
            ):
                continue  # the input's own value
            if i in self.wide_set:
                return None, None
            d = self.decomposed.get(i)
            if d is None:
                writes.append((self.whole_slot[i], v))
                continue
            keys, slots, _ = d
            if isinstance(v, TrackedMap):
                if v._var != i:
                    raise _NotDecomposable
                for k, s in zip(keys, slots, strict=True):
                    if v._src[k] == -1:
                        writes.append((s, v._vals[k]))
                    elif v._src[k] != s:
                        raise _NotDecomposable
                continue
            if not isinstance(v, Mapping) or len(v) != len(keys) or any(k not in v for k in keys):
                raise LayoutChanged(i)
            for k, s in zip(keys, slots, strict=True):
                writes.append((s, v[k]))
        delta = 0
        extra = []
        for s, v in writes:
            n = self.intern(s, v)
            packed = self.tables[s].packed
            if s in read:
                old_n = (h >> self.shift[s]) & _NUM
                delta += packed[n] - packed[old_n]
            else:
                extra.append((self.shift[s], n, packed[n], packed))
        return delta, tuple(extra)

    def _apply_extra(self, h: int, extra: tuple[tuple[int, int, int, list[int]], ...]) -> int:
        """Apply writes to slots the outcome did not read (set to a constant): each
        ``(shift, number, packed contribution, the slot's contributions)``.
        (:meth:`expand` has this loop inline.)"""
        low = h & self.slot_bits  # (under symmetry the sums above are hundreds of bits)
        for sh, n, hv, packed in extra:
            old = (low >> sh) & _NUM
            if n != old:
                h += hv - packed[old]
        return h

    def _verify(self, state: Any, h: int, succ: list[Any]) -> None:
        """Compare the successors computed from the caches with a direct run."""
        direct = self.model.successors(state)
        mine = [(ai, params) for ai, params, *_ in succ]
        if [(ai, p) for ai, p, _ in direct] != mine:
            raise CacheUnsound(self._first_diff(direct, mine))
        for (ai, _params, t), (_, _, delta, extra) in zip(direct, succ, strict=True):
            if delta is None:
                continue
            child = self._apply_extra(h + delta, extra) if extra else h + delta
            if self._split(self.handle_of(t))[0] != child:
                raise CacheUnsound(self.model.action_names[ai])

    def _first_diff(self, direct: list[Any], mine: list[Any]) -> str:
        names = self.model.action_names
        for (ai, p, _), m in zip(direct, mine, strict=False):
            if (ai, p) != m:
                return str(names[ai])
        longer = direct[len(mine) :] or mine[len(direct) :]
        return str(names[longer[0][0]]) if longer else "?"

    def _entry(self, h: int, key: int) -> list[tuple[_Cached, Any]]:
        """The root index's entry for the states agreeing with ``h`` on the slots the
        trees test first (``key``): per action instance, in order, the node below its
        tree's root (None: look the whole path up), leaving out the instances disabled
        at the root (an action whose guard reads one slot first and fails there).

        Most instances are disabled in most states, and one probe of this index
        replaces one probe per instance.  An entry whose instance met an uncached
        child is dropped and built again (see :meth:`expand`); a tree made afresh
        drops them all.
        """
        entry: list[tuple[_Cached, Any]] = []
        for cache in self.caches:
            root = cache.tree.root if cache.cached else None
            if root.__class__ is _Branch:
                node = root.kids.get(h & root.mask)
                if node.__class__ is _Leaf and node.value is None:
                    continue
                entry.append((cache, node))
            elif root.__class__ is _Leaf:
                if root.value is not None:
                    entry.append((cache, root))
            else:
                entry.append((cache, None))
        by_roots = self.by_roots
        if len(by_roots) >= MAX_ROOT_ENTRIES:
            by_roots.clear()
        by_roots[key] = entry
        # Where entries are seldom reused (the first slots read take too many
        # combinations of values), building them is waste: back to a probe per tree.
        self.entries_built += 1
        window = self.expanded - self.window_start
        if window >= ROOT_INDEX_WINDOW:
            if self.entries_built * 2 > window:
                self.indexed = False
                by_roots.clear()
            self.window_start = self.expanded
            self.entries_built = 0
        return entry

    def _new_root(self) -> None:
        """A tree was made afresh: its root may test another slot, and the index's
        entries hold nodes of the old one."""
        mask = 0
        for cache in self.caches:
            root = cache.tree.root
            if root.__class__ is _Branch:
                mask |= root.mask
        self.roots_mask = mask
        self.by_roots.clear()

    def expand(
        self, ordinal: int, handle: Any
    ) -> tuple[list[int], list[tuple[int, int, tuple[Any, ...], Any, int | None]], Event | None]:
        """Successors of one state (see :meth:`checker.engine.Expansion.expand`).

        The hot loop of a run: every line here is paid per generated state, so the
        cached paths are written out inline.  An outcome is ``(action, params, delta,
        extra writes)``, or ``(action, params, None, state)`` when computed directly.
        """
        if self.wide:
            h, wides, wterms = handle
        else:
            h, wides, wterms = handle, (), ()
        state: Any = None
        succ: list[Any] = []
        append = succ.append
        try:
            key = 0
            if self.indexed:
                key = h & self.roots_mask
                entry = self.by_roots.get(key)
                if entry is None:
                    entry = self._entry(h, key)
            else:
                entry = self.every
            stale = False
            for cache, leaf in entry:
                if leaf is None and not cache.cached:
                    if state is None:
                        state = self.state(handle)
                    value = self._direct(cache, state)
                else:
                    if leaf is None:  # not indexed: the whole path
                        stale = True  # (the root's child exists now, or will)
                        leaf = cache.tree.root
                    while leaf.__class__ is _Branch:
                        leaf = leaf.kids.get(h & leaf.mask)
                    if leaf is None:
                        if state is None:
                            state = self.state(handle)
                        epoch = cache.tree.epoch
                        value = self._evaluate(cache, state, h)
                        if cache.tree.epoch != epoch:
                            self._new_root()
                    else:
                        value = leaf.value
                if value is None:
                    continue
                if cache.params is None:
                    succ.extend(value)
                else:
                    append(value)
            if stale and self.indexed:
                self.by_roots.pop(key, None)
        except EvaluationError as exc:
            if exc.state is None:
                exc.state = state if state is not None else self.state(handle)
            return [], [], Event((ordinal, -1), "error", error=exc, state=exc.state)
        self.expanded += 1
        expanded = self.expanded
        if expanded <= VERIFY_FIRST or not expanded % VERIFY_EVERY:
            if state is None:
                state = self.state(handle)
            self._verify(state, h, succ)
        if expanded <= MUTATION_CHECKS and state is not None:
            self._check_not_mutated(h)
        actions = [x[0] for x in succ]
        if not succ:
            ev = Event((ordinal, -1), "deadlock") if self.deadlock else None
            return actions, [], ev
        nb = self.nb
        lanes = self.lanes
        unpack, nbytes = self.lane_reader
        slot_bits = self.slot_bits
        constraint = self.constraint
        croot = constraint.tree.root if constraint is not None and constraint.cached else None
        invariants = self.invariants
        cands: list[tuple[int, int, tuple[Any, ...], Any, int | None]] = []
        put = cands.append
        k = 0
        c: Any = None
        t: Any = None
        try:
            for k, (ai, params, delta, extra) in enumerate(succ):
                if delta is not None:
                    t = None
                    c = h + delta
                    if extra:  # writes to slots not read (see _apply_extra)
                        low = h & slot_bits
                        for sh, n, hv, packed in extra:
                            old = (low >> sh) & _NUM
                            if n != old:
                                c += hv - packed[old]
                    child = c if not wides else (c, wides, wterms)
                else:
                    t = extra
                    child = handle if t is state else self._child(handle, state, t)
                    c = child if not self.wide else child[0]
                if constraint is not None:
                    node = croot
                    while node.__class__ is _Branch:
                        node = node.kids.get(c & node.mask)
                    if node is None:
                        inside = self.within(child, t)[0]
                        croot = constraint.tree.root if constraint.cached else None
                    else:
                        inside = node.value
                    if not inside:
                        # Outside the constraint: checked against the invariants every
                        # time it is generated (TLC), from the caches when they hit.
                        put((k, ai, params, None, None))
                        for inv in invariants:
                            node = inv.tree.root if inv.cached else None
                            while node.__class__ is _Branch:
                                node = node.kids.get(c & node.mask)
                            if node is None or not node.value:
                                ev = self.check((ordinal, k), child, False)
                                if ev is not None:
                                    return actions, cands, ev
                                break
                        continue
                if lanes is None:
                    put((k, ai, params, child, (c >> nb) & _MASK64))
                else:  # the smallest lane, read straight from the handle's bytes
                    put((k, ai, params, child, min(unpack(c.to_bytes(nbytes, "little")))))
        except EvaluationError as exc:
            if exc.state is None:
                exc.state = t if t is not None else self.state(child)
            return actions, cands, Event((ordinal, k), "error", error=exc, state=exc.state)
        return actions, cands, None

    def _check_not_mutated(self, h: int) -> None:
        # An action that changed a value of its input in place (a frozen dataclass
        # cheated with object.__setattr__) would leave the tables' terms stale.
        for s, table in enumerate(self.tables):
            n = (h >> self.shift[s]) & _NUM
            if self._slot_term(s, table.values[n]) != table.terms[n]:
                raise SpecError(
                    f"{self.model.name}: an action changed its input state in place "
                    f"({table.name}): return a new state instead of modifying the one given"
                )

    def _child(self, handle: Any, pstate: Any, t: Any) -> Any:
        """The handle of a directly computed successor: only the slots whose values
        are not the parent's very objects are interned (the parent was built from the
        tables' own values)."""
        h, wides, wterms = self._split(handle)
        vals = self.model.variables(t)
        pvals = self.model.variables(pstate)
        tables = self.tables
        shift = self.shift
        nb = self.nb
        for i in range(self.nvars):
            v = vals[i]
            pv = pvals[i]
            if v is pv or i in self.wide_set:
                continue
            d = self.decomposed.get(i)
            if d is None:
                pairs = [(self.whole_slot[i], v, None)]
            else:
                keys, slots, _ = d
                if not isinstance(v, Mapping) or len(v) != len(keys):
                    raise LayoutChanged(i)
                try:
                    pairs = [(s, v[k], pv[k]) for k, s in zip(keys, slots, strict=True)]
                except KeyError:
                    raise LayoutChanged(i) from None
            for s, x, px in pairs:
                if x is px:
                    continue
                n = self.intern(s, x)
                old = (h >> shift[s]) & _NUM
                if n != old:
                    packed = tables[s].packed
                    h += packed[n] - packed[old]
        if not self.wide:
            return h
        nw = list(wides)
        nt = list(wterms)
        for j, p in enumerate(self.wide):
            v = vals[p]
            if v is not wides[j]:
                term = self._var_term(p, v, wides[j], wterms[j])
                h += (term - wterms[j]) << nb
                nw[j] = v
                nt[j] = term
        return h, tuple(nw), tuple(nt)

    def initial(
        self,
        seen: Callable[[int], bool],
        store: Callable[[Key, int, Any], Any],
    ) -> tuple[list[NewState], Event | None]:
        """Generate and check the initial states (see Expansion.initial)."""
        new: list[NewState] = []
        for k, s in enumerate(self.model.initial_states()):
            key = (-1, k)
            handle = self.handle_of(s)
            try:
                inside, _ = self.within(handle, s)
            except EvaluationError as exc:
                return new, Event(key, "error", error=exc, state=s)
            is_new = False
            if inside:
                fp = self.fp_of(handle)
                if seen(fp):
                    continue
                new.append(NewState(key, fp, -1, 1))
                is_new = True
                try:
                    store(key, fp, handle)
                except EvaluationError as exc:
                    return new, Event(key, "error", error=exc, new=True, state=s)
            ev = self.check(key, handle, is_new)
            if ev is not None:
                return new, ev
        return new, None
