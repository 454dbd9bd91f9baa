"""The fast expansion: interned values, packed states, cached actions and predicates.

What it exploits: a reachable state space is a huge number of combinations of few
distinct values (raft.tla with 3 servers: 705,532 states; per server, a handful of
terms, roles and votes), and an action instance reads only a few of them.

* **Slots.**  A state is cut into *slots*: a variable, or, for a map with the same
  keys in every state (a per-server map), each of its entries.  Each slot's values
  are numbered as met, type-strictly (:mod:`checker.fastpath.slots`); a state is the
  packed int of its slots' numbers, ``WIDTH`` bits each, with the sum of their
  fingerprint terms above them (the state fingerprint adds up variable terms, and a
  map's term adds up its entries', see :func:`checker.values.fingerprint.variable_term`).
* **Cached actions.**  An action instance is run on a *tracked* copy of the state
  that records which slots it reads (:mod:`checker.fastpath.tracking`) and which it
  writes.  Its outcome, once the same action run directly on the real state gave the
  same successor, is stored in a decision tree keyed by the numbers of the slots it
  read (:mod:`checker.fastpath.trees`): any later state that agrees on them gets the
  successor as one precomputed addition to the packed state, without running the
  spec's code.  Families whose parameters come from the state (``over_state``) are
  cached as a whole; the constraint and the invariants are cached the same way.
* **What keeps it sound.**  Every cached outcome is checked against a direct run when
  it is made (not a sample of states); a tracked state is not a tuple, so a read that
  goes around its fields fails instead of going unseen;
  values are numbered type-strictly; all of it is state of this object, so a run, a
  restart and a worker each start clean.  When an outcome differs from the direct
  run, a map's keys turn out not to be fixed, or a slot takes more values than a
  number holds, the expansion raises :class:`checker.explore.expansion.Restart` and the run
  starts again with that action uncached, that map whole or that variable wide.
  docs/engine.md lists what the fast path assumes of a spec and how each assumption
  is enforced.
* **Wide variables.**  A variable with nearly as many values as there are states (a
  growing message set) is not interned for ever: its value travels with the frontier
  state, and whatever reads it runs directly (:mod:`checker.fastpath.pilot`).

Semantics are those of :class:`checker.explore.expansion.Expansion` (which serves the models
this cannot: toy graph models, non-NamedTuple states): the same successors in the
same order, the same fingerprints, the same events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from checker.base.errors import EvaluationError, SpecError, require_boolean
from checker.explore.expansion import (
    MUTATION_CHECKS,
    Event,
    ExpansionSettings,
    Key,
    NewState,
    Restart,
)
from checker.explore.kinds import EventKind
from checker.fastpath.pilot import map_maker, pilot, with_layout
from checker.fastpath.reads import EVERY, WIDE, Layout, ReadLog, Untracked
from checker.fastpath.slots import NUM as _NUM
from checker.fastpath.slots import WIDTH, SlotTable
from checker.fastpath.trees import MAX_ROOT_ENTRIES, ROOT_INDEX_WINDOW, Branch, Cached, Leaf
from checker.model import CompiledSpec
from checker.values import ModelValue
from checker.values.fingerprint import StateValueError, TermCalculator, entry_term, map_tag
from checker.values.kinds import kind_of
from checker.values.strict import strict_equal

_MASK64 = (1 << 64) - 1
_ABSENT: Any = object()


class _Direct(Exception):
    """A tracked evaluation must be redone directly (and its action not cached)."""


class FastExpansion:
    """:class:`checker.explore.expansion.ExpansionLike` over packed, cached states.

    A handle is the packed int ``terms << NB | numbers`` (``NB`` bits of slot
    numbers), or, with wide variables, ``(packed, wide values, wide terms)``.
    Everything it learns (slot tables, trees, the tracker) belongs to this instance:
    a run, each of its restarts and each worker has its own.
    """

    def __init__(
        self,
        model: CompiledSpec,
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        settings: ExpansionSettings,
    ) -> None:
        self.model = model
        self.deadlock = deadlock
        self.settings = settings
        inits = model.initial_states()
        sample = model.variables(inits[0])
        self.nvars = len(sample)
        names = model.var_names
        if settings.wide is None or settings.fixed is None:
            found_wide, found_fixed = pilot(model)
        else:
            found_wide, found_fixed = set(settings.wide), dict(settings.fixed)
        self.wide = sorted(found_wide)
        self.wide_set = set(self.wide)
        self.fixed = {i: k for i, k in found_fixed.items() if i not in settings.whole}
        # The slots: whole narrow variables, and the entries of fixed-key maps.
        self.tables: list[SlotTable] = []
        self.whole_slot = [-1] * self.nvars
        self.decomposed: dict[int, Any] = {}
        self.key_ids: dict[int, tuple[frozenset[int], bool]] = {}
        for i in range(self.nvars):
            if i in self.wide_set:
                continue
            if i in self.fixed:
                keys = self.fixed[i]
                slots = []
                for k in keys:
                    slots.append(len(self.tables))
                    self.tables.append(SlotTable(i, f"{names[i]}[{k}]", k))
                self.decomposed[i] = (keys, tuple(slots), map_maker(sample[i]))
                # Keys that only ever equal themselves (model values) need no strict
                # check of a map's key objects (see _keys_are).
                self.key_ids[i] = (
                    frozenset(map(id, keys)),
                    all(type(k) is ModelValue for k in keys),
                )
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
        # Each cut map's constant term, of its own kind (a Map's and a pmap's differ).
        base = sum(map_tag(i, kind_of(type(sample[i]))) for i in self.decomposed) & _MASK64
        self.base = self.lanes.pack([base] * len(self.rens)) if self.lanes else base
        keyslot: dict[int, dict[Any, int]] = {}
        slotkey: dict[int, Any] = {}
        for i, (keys, slots, _) in self.decomposed.items():
            keyslot[i] = dict(zip(keys, slots, strict=True))
            slotkey.update(zip(slots, keys, strict=True))
        self.log = ReadLog(
            Layout(
                fields={n: i for i, n in enumerate(names)},
                whole_slot=self.whole_slot,
                wide=frozenset(self.wide_set),
                keyslot=keyslot,
                slotkey=slotkey,
                slots_of={i: d[1] for i, d in self.decomposed.items()},
                state_type=model.state_type,  # type: ignore[arg-type]
            )
        )
        #: Each fixed-key map variable's map type: a map of another kind is another
        #: value (the layout changes, as when its keys do).
        self.map_types = {i: type(sample[i]) for i in self.decomposed}
        uncached = settings.uncached
        self.caches: list[Cached] = []  # per static instance, or per state-drawn family
        for ai, name in enumerate(model.action_names):
            instances = model.family_instances(ai)
            if instances is None:
                self.caches.append(Cached(name, ai, None, cached=name not in uncached))
            else:
                for p in instances:
                    self.caches.append(Cached(name, ai, p, cached=name not in uncached))
        self.constraint = (
            Cached("constraint", fn=model.spec.constraint, cached="constraint" not in uncached)
            if model.has_constraint
            else None
        )
        self.invariants = [
            Cached(n, fn=fn, cached=n not in uncached) for n, fn in model.invariant_predicates
        ]
        self.expanded = 0
        # The root index (see _entry): per combination of the slots the instances'
        # trees test first, the instances not already known to be disabled.
        self.roots_mask = 0
        self.by_roots: dict[int, list[tuple[Cached, Any]]] = {}
        self.indexed = True
        self.every: list[tuple[Cached, Any]] = [(c, None) for c in self.caches]  # unindexed
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
        """The number of a slot's value (numbering it when new), found type-strictly
        (see :class:`SlotTable`)."""
        table = self.tables[slot]
        n = table.find(value)
        if n is not None:
            return n
        n = len(table.values)
        if n > _NUM:
            # More values than a slot number holds: the variable is wide after all.
            raise Restart(
                replace(
                    self.layout(self.settings),
                    wide=frozenset(self.wide_set | {table.var}),
                    whole=self.settings.whole | {table.var},
                ),
                None,
            )
        term = self._slot_term(slot, value)
        return table.add(value, term, (term << self.nb) + (n << self.shift[slot]))

    def _keys_are(self, var: int, value: Any) -> bool:
        """Whether a map value has exactly the fixed keys of variable ``var``: the
        same number, each found, and strictly the same key values (a map keyed
        ``True`` where the layout has ``1`` is another map)."""
        keys = self.decomposed[var][0]
        if type(value) is not self.map_types[var] or len(value) != len(keys):
            return False
        ids, identity_only = self.key_ids[var]
        if identity_only:
            return all(k in value for k in keys)
        if ids.issuperset(map(id, value.keys())):
            return True  # the very key objects of the layout
        theirs = {(type(k), k): k for k in value}
        return all(strict_equal(k, theirs.get((type(k), k), _ABSENT)) for k in keys)

    def screen(self, visited: Any) -> None:
        """Kept for the interface: the fast engine builds every candidate (its loop is
        Python, where a membership test per successor would cost what it saves)."""

    def layout(self, settings: ExpansionSettings) -> ExpansionSettings:
        """``settings`` with this expansion's layout, for the workers (and restarts)
        to use the same slots without a pilot of their own."""
        return with_layout(settings, self.wide_set, self.fixed)

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
            if not self._keys_are(i, v):
                raise self._layout_changed(i)
            for k, s in zip(keys, slots, strict=True):
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

    def lanes_of(self, handle: Any) -> tuple[int, ...]:
        """The fingerprint of a handle's state under each renaming (see
        :meth:`checker.explore.expansion.Expansion.lanes_of`)."""
        total = self._split(handle)[0] >> self.nb
        return self.lanes.split(total) if self.lanes is not None else (total & _MASK64,)

    def fingerprint_of(self, state: Any) -> int:
        """A state's fingerprint (as the store holds it)."""
        return self.fp_of(self.handle_of(state))

    # -- tracked evaluation ------------------------------------------------------------
    def _track(self, state: Any, run: Callable[[Any], Any]) -> tuple[Any, list[int] | None]:
        """Run ``run`` on the real ``state``, through instrumented copies of the spec's
        code (:mod:`checker.fastpath.reads`): (its result, the slots it read in order,
        or None if what it read cannot be cached).  ``run`` finishes its work inside
        (what the log knows of the evaluation's objects holds only until the next).
        Raises :class:`_Direct` when the evaluation must be done directly."""
        self.log.begin(state)
        try:
            value = run(state)
        except (SpecError, MemoryError, Restart):
            raise
        except Exception:
            # The spec's own error (settled by the direct run, with the real state), or
            # a callable that cannot be instrumented (Untracked): run directly.
            raise _Direct from None
        return value, self._order(self.log.reads)

    def _order(self, reads: list[int]) -> list[int] | None:
        """The slots read, first reads first, without repeats (all of them after a read
        of everything); None after a read of a wide variable (what no slot holds)."""
        if WIDE in reads:
            return None
        if EVERY in reads:
            return list(range(self.nslots))
        return list(dict.fromkeys(reads))

    def _unsound(self, name: str) -> Restart:
        """A cached outcome differs from running the code directly on the same state:
        the code reads something tracking does not see, or is not a function of the
        state.  The run starts again with it run directly (earlier outcomes from its
        cache may have been applied to states they do not hold for)."""
        return Restart(
            replace(self.layout(self.settings), uncached=self.settings.uncached | {name}),
            f"{name}: a cached result differed from running it directly (it reads the "
            "state in a way mcheck cannot follow, or is not a pure function of the "
            "state); the exploration was redone with it uncached",
        )

    def _layout_changed(self, var: int) -> Restart:
        """A map judged to have fixed keys has others: start again with it whole."""
        return Restart(replace(self.layout(self.settings), whole=self.settings.whole | {var}), None)

    # -- predicates ----------------------------------------------------------------------
    def _pred(self, pred: Cached, handle: Any, state: Any | None) -> tuple[bool, Any]:
        """(verdict, the state if it had to be built).  A verdict computed on a
        tracked state is cached only after the same predicate, run directly on the
        real state, gave the same verdict."""
        h = self._split(handle)[0]
        if pred.cached:
            leaf = pred.tree.lookup(h)
            if leaf is not None:
                return leaf.value, state
        if state is None:
            state = self.state(handle)
        assert pred.fn is not None
        fn = pred.fn
        direct = require_boolean(fn(state))
        if not pred.cached:
            return direct, state
        log = self.log
        try:
            copy = log.entry(fn)
            value, order = self._track(state, lambda s: bool(log.esc(copy(s))))
        except (_Direct, Untracked):
            pred.cached = False
            return direct, state
        if value != direct:
            raise self._unsound(pred.name)
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
        except (EvaluationError, SpecError, MemoryError, Restart):
            raise
        except Exception as exc:
            raise EvaluationError("constraint", exc, state) from exc

    def violated(self, handle: Any, state: Any | None = None) -> tuple[str | None, Any]:
        """The first invariant the state violates (cached), and the state if built."""
        for inv in self.invariants:
            try:
                ok, state = self._pred(inv, handle, state)
            except (EvaluationError, SpecError, MemoryError, Restart):
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
            while node.__class__ is Branch:
                node = node.kids.get(h & node.mask)
            if node is None or not node.value:
                break
        else:
            return None
        try:
            bad, state = self.violated(handle)
        except EvaluationError as exc:
            return Event(key, EventKind.ERROR, error=exc, new=new, state=exc.state)
        if bad is not None:
            return Event(key, EventKind.VIOLATION, prop=bad, new=new, state=state)
        return None

    def check_new(self, ordinal: int, cands: list[Any]) -> tuple[int, Event | None]:
        """:meth:`check` on a state's new successors in order (see
        :meth:`checker.explore.expansion.Expansion.check_new`)."""
        check = self.check
        for i, c in enumerate(cands):
            ev = check((ordinal, c[0]), c[3], True)
            if ev is not None:
                return i, ev
        return len(cands), None

    # -- successors ------------------------------------------------------------------
    def _evaluate(self, cache: Cached, state: Any, handle: Any) -> Any:
        """An instance's (or a state-drawn family's) outcome at a state no cached
        outcome covers: run on the real state through the spec's instrumented code,
        checked against a direct run (every cached outcome is, when it is made), then
        cached.  Returns the outcome (instance: None or one outcome; family: a list)."""
        h = self._split(handle)[0]
        direct = self._direct(cache, state)  # spec errors raise here, with the real state
        log = self.log
        name, effect, guard, dynamic, arity = self.model.family_callables(cache.index)
        try:
            effect_copy = log.entry(effect)
            guard_copy = None if guard is None else log.entry(guard)
            dynamic_copy = None if dynamic is None else log.entry(dynamic)
        except Untracked:
            cache.cached = False
            return direct

        def step(s: Any, params: tuple[Any, ...]) -> Any:
            if guard_copy is not None and not log.esc(guard_copy(s, *params)):
                return None
            return effect_copy(s, *params)

        def run(s: Any) -> Any:
            if cache.params is not None:
                t = step(s, cache.params)
                results = [] if t is None else [(cache.params, t)]
            else:
                assert dynamic_copy is not None
                drawn = self.model.drawn_instances(
                    name, lambda x: log.esc(dynamic_copy(x)), arity, s
                )
                results = []
                for params in drawn:
                    t = step(s, params)
                    if t is not None:
                        results.append((params, t))
            order = self._order(log.reads)
            if order is None:
                return None, None
            return order, [
                (cache.index, params, *self._writes(t, s, h, order)) for params, t in results
            ]

        try:
            (order, outcomes), _ = self._track(state, run)
        except _Direct:
            cache.cached = False
            return direct
        if order is None or any(o[2] is None for o in outcomes):
            # It read or wrote a wide variable: what no slot holds.
            cache.cached = False
            return direct
        self._same_as_direct(cache, state, handle, outcomes, direct)
        value: Any = outcomes if cache.params is None else (outcomes[0] if outcomes else None)
        cache.tree.insert(h, order, value)
        return value

    def _same_as_direct(
        self, cache: Cached, state: Any, handle: Any, outcomes: list[Any], direct: Any
    ) -> None:
        """Raise unless the tracked outcomes are what the direct run gave: the same
        instances (parameters compared strictly) and the same successor handles (the
        direct successor's packed from the parent's by the slots whose values are not
        the parent's very objects, as every directly computed successor is)."""
        h = self._split(handle)[0]
        plain = direct if cache.params is None else ([] if direct is None else [direct])
        if len(plain) != len(outcomes):
            raise self._unsound(cache.name)
        for (ai, params, delta, extra), (dai, dparams, _, t) in zip(outcomes, plain, strict=True):
            if ai != dai or not strict_equal(params, dparams):
                raise self._unsound(cache.name)
            child = self._apply_extra(h + delta, extra) if extra else h + delta
            if self._split(self._child(handle, state, t))[0] != child:
                raise self._unsound(cache.name)

    def _direct(self, cache: Cached, state: Any) -> Any:
        """The outcome computed directly (spec errors raise here, with the real state)."""
        model = self.model
        if cache.params is not None:
            t = model.instance_step(cache.index, cache.params, state)
            return None if t is None else (cache.index, cache.params, None, t)
        return [
            (cache.index, params, None, t)
            for params, t in model.family_successors(cache.index, state)
        ]

    def _writes(self, t: Any, state: Any, h: int, order: list[int]) -> tuple[Any, Any]:
        """What successor ``t`` of ``state`` changes: (the delta to add to the packed
        state for the written slots that were read, the writes to slots not read as
        (shift, number, term, the slot's terms)), or (None, None) if it writes a wide
        variable (the instance then runs directly).

        A slot is unchanged only where the read log knows ``t`` keeps the input's value
        there (a field ``_replace`` did not name; a map entry ``set`` or ``put`` did not
        write); every other slot is written with the value ``t`` holds, which is the
        input's own only if the evaluation read it (then the delta is zero) or holds it
        by chance (a constant that is the same object): a write either way."""
        if t is state:
            return 0, ()
        read = set(order)
        log = self.log
        prov = log.provenance(t)
        writes: list[tuple[int, Any]] = []
        for i in range(self.nvars):
            if prov is not None and prov[i]:
                continue  # the input's own value, kept by _replace
            v = t[i]
            if i in self.wide_set:
                return None, None
            d = self.decomposed.get(i)
            if d is None:
                slot = self.whole_slot[i]
                if v is state[i] and slot in read:
                    continue  # the value read, written back: no change
                writes.append((slot, v))
                continue
            keys, slots, _ = d
            written = log.written_entries(i, v)
            if written is not None:
                writes.extend((s, v[k]) for k, s in zip(keys, slots, strict=True) if s in written)
                continue
            if not self._keys_are(i, v):
                raise self._layout_changed(i)
            writes.extend((s, v[k]) for k, s in zip(keys, slots, strict=True))
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

    def _entry(self, h: int, key: int) -> list[tuple[Cached, Any]]:
        """The root index's entry for the states agreeing with ``h`` on the slots the
        trees test first (``key``): per action instance, in order, the node below its
        tree's root (None: look the whole path up), leaving out the instances disabled
        at the root (an action whose guard reads one slot first and fails there).

        Most instances are disabled in most states, and one probe of this index
        replaces one probe per instance.  An entry whose instance met an uncached
        child is dropped and built again (see :meth:`expand`); a tree made afresh
        drops them all.
        """
        entry: list[tuple[Cached, Any]] = []
        for cache in self.caches:
            root = cache.tree.root if cache.cached else None
            if root.__class__ is Branch:
                node = root.kids.get(h & root.mask)
                if node.__class__ is Leaf and node.value is None:
                    continue
                entry.append((cache, node))
            elif root.__class__ is Leaf:
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
            if root.__class__ is Branch:
                mask |= root.mask
        self.roots_mask = mask
        self.by_roots.clear()

    def expand(
        self, ordinal: int, handle: Any
    ) -> tuple[list[int], list[tuple[int, int, tuple[Any, ...], Any, int | None]], Event | None]:
        """Successors of one state (see :meth:`checker.explore.engine.Expansion.expand`).

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
                    while leaf.__class__ is Branch:
                        leaf = leaf.kids.get(h & leaf.mask)
                    if leaf is None:
                        if state is None:
                            state = self.state(handle)
                        epoch = cache.tree.epoch
                        value = self._evaluate(cache, state, handle)
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
            return [], [], Event((ordinal, -1), EventKind.ERROR, error=exc, state=exc.state)
        self.expanded += 1
        if self.expanded <= MUTATION_CHECKS and state is not None:
            self._check_not_mutated(h)
        actions = [x[0] for x in succ]
        if not succ:
            ev = Event((ordinal, -1), EventKind.DEADLOCK) if self.deadlock else None
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
                    while node.__class__ is Branch:
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
                            while node.__class__ is Branch:
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
            return actions, cands, Event((ordinal, k), EventKind.ERROR, error=exc, state=exc.state)
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
                pairs = [(self.whole_slot[i], v, pv)]  # (v is not pv: see above)
            else:
                keys, slots, _ = d
                if not self._keys_are(i, v):
                    raise self._layout_changed(i)
                pairs = [(s, v[k], pv[k]) for k, s in zip(keys, slots, strict=True)]
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
                return new, Event(key, EventKind.ERROR, error=exc, state=s)
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
                    return new, Event(key, EventKind.ERROR, error=exc, new=True, state=s)
            ev = self.check(key, handle, is_new)
            if ev is not None:
                return new, ev
        return new, None
