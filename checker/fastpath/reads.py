"""What an evaluation reads of its state, recorded while it runs on the real state.

The fast engine caches an action's outcome (or a predicate's verdict) for every state
that agrees with the one it was computed on in the *slots* the evaluation read (a slot
is a variable, or one entry of a map whose keys never change).  A cached outcome is
right only if that read set is complete: it may hold more than the code read (fewer
cache hits), never less.

Spec code runs on the real state and sees the real values (the plain engine's view,
exactly), through a copy of its own code whose operations on values report here
(:mod:`checker.fastpath.instrument`).  This module keeps, for one evaluation, which
objects stand for the input state (and which of its fields are still the input's), and
which are the input's fixed-key maps (and which of their entries are still the
input's); an operation on one of them records the slots it reads:

* a field of the state: that variable's slot (a fixed-key map field records nothing
  yet: its entries are recorded as they are looked up);
* an entry looked up (``m[k]``, ``m.get(k)``, ``put(m, k, v)``): that entry's slot;
* the keys, the size, the type, membership, ``set``: nothing (the keys and the map's
  kind are the same in every state: the engine checks that on every state it packs);
* anything else done with the state or one of its maps, or handing it to code that is
  not instrumented: every slot it holds.

It also knows what the evaluation's results are made of: a state made by the genuine
``_replace`` of a tracked state keeps that state's fields it does not name, and a map
made by ``set`` or :func:`checker.values.put` on a tracked map keeps its other entries.
That provenance tells the engine which slots of a successor are the input's (unchanged
whatever they hold) and which were written (:meth:`ReadLog.writes_of`).

All of it belongs to one :class:`ReadLog`, one per expansion: nothing here is global.
"""

from __future__ import annotations

import builtins
import gc
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any, NamedTuple

from checker.fastpath.instrument import (
    ALL,
    BOX,
    CALL,
    CT,
    DICT,
    ESC,
    GA,
    GI,
    IT,
    SETITEM,
    SLICE,
    SPLAT,
    instrument,
    may_instrument,
)
from checker.values import put as _put
from checker.values.records import is_namedtuple_replace
from checker.values.strict import strict_equal

#: A read of every slot; a read of a wide variable (the outcome cannot be cached).
EVERY = -1
WIDE = -2

#: Tracked objects: the state (or one made from it by _replace), one of its fixed-key
#: maps (or one made from it by set/put), and a container the evaluation built that
#: holds tracked objects (a dict of keyword arguments, a *args tuple).
_STATE, _MAP, _CONTAINER = 0, 1, 2

#: Callables that reach frames (and through them any local): reading everything.
_FRAME_CALLS: frozenset[Any] = frozenset(
    {
        sys._getframe,
        inspect.currentframe,
        inspect.stack,
        inspect.trace,
        gc.get_referrers,
        gc.get_objects,
        gc.get_referents,
        builtins.locals,
        builtins.vars,
        builtins.globals,
    }
)
#: Attributes that reach frames, cells and namespaces: reading everything.
_FRAME_ATTRS = frozenset(
    {
        "f_locals",
        "f_back",
        "f_globals",
        "tb_frame",
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "cell_contents",
        "__closure__",
        "__globals__",
    }
)
#: Map methods that depend on the keys only (the same in every state).
_KEY_METHODS = frozenset({"keys", "__len__", "__contains__", "__iter__", "iterkeys"})
#: State attributes that are the class's, not the state's values.
_CLASS_ATTRS = frozenset({"_fields", "_field_defaults", "__class__", "_make"})


class Layout(NamedTuple):
    """What the log needs of the expansion's layout."""

    fields: dict[str, int]  #: field name -> variable index
    whole_slot: list[int]  #: variable -> its slot (-1: a fixed-key map or wide)
    wide: frozenset[int]  #: wide variables
    #: fixed-key map variable -> (key -> slot, found as the map finds a key: by ==),
    #: and slot -> its key object (a written key must be the layout's strictly)
    keyslot: dict[int, dict[Any, int]]
    slotkey: dict[int, Any]
    slots_of: dict[int, tuple[int, ...]]  #: fixed-key map variable -> its slots
    state_type: type


class Untracked(Exception):
    """The evaluation cannot be cached (the callable is not instrumentable)."""


class ReadLog:
    """One expansion's record of what each tracked evaluation reads (see the module
    docstring).  :meth:`begin` starts an evaluation on a real state."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.reads: list[int] = []
        #: id -> (object, kind, info): the state objects (info: per field, whether it
        #: holds the input's value) and maps (info: ((variable, written slots), ...)).
        self.objs: dict[int, tuple[Any, int, Any]] = {}
        self.variants: dict[Any, types.FunctionType | None] = {}
        #: The code objects of every copy made, nested ones included: a function made
        #: from one (a lambda or def inside a copy) is instrumented already.
        self.copies: set[types.CodeType] = set()
        #: Parsed source files, by file name.
        self.trees: dict[str, Any] = {}
        self.helpers: dict[str, Any] = {
            GA: self.ga,
            GI: self.gi,
            CALL: self.call,
            ESC: self.esc,
            IT: self.it,
            CT: self.ct,
            ALL: self.every,
            SLICE: slice,
            DICT: self.dict_made,
            SETITEM: self.setitem,
            SPLAT: self.splat,
            BOX: self.box,
        }
        self.nvars = len(layout.whole_slot)

    # -- one evaluation ---------------------------------------------------------------------
    def begin(self, state: Any) -> None:
        """Start an evaluation on ``state`` (a real state, every field the input's)."""
        self.reads = []
        objs: dict[int, tuple[Any, int, Any]] = {}
        objs[id(state)] = (state, _STATE, (True,) * self.nvars)
        for var in self.layout.keyslot:
            m = state[var]
            known = objs.get(id(m))
            pairs: tuple[tuple[int, frozenset[int]], ...] = ((var, frozenset()),)
            if known is not None and known[1] == _MAP:
                pairs = known[2] + pairs  # one map object in two variables: both
            objs[id(m)] = (m, _MAP, pairs)
        self.objs = objs

    def variant(self, fn: Any) -> types.FunctionType | None:
        """The instrumented copy of a Python function (None: it is not instrumented)."""
        try:
            return self.variants[fn]
        except KeyError:
            pass
        except TypeError:
            return None
        made = None
        if type(fn) is types.FunctionType and may_instrument(fn):
            made = instrument(fn, self.helpers, self.trees)
            if made is not None:
                stack = [made.__code__]
                while stack:
                    code = stack.pop()
                    self.copies.add(code)
                    stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        self.variants[fn] = made
        return made

    def entry(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """A callable the engine runs (a bound method of the spec, a function): its
        instrumented copy; raises :class:`Untracked` if there is none."""
        if type(fn) is types.MethodType:
            copy = self.variant(fn.__func__)
            if copy is None:
                raise Untracked(getattr(fn, "__qualname__", repr(fn)))
            return types.MethodType(copy, fn.__self__)
        copy = self.variant(fn)
        if copy is None:
            raise Untracked(getattr(fn, "__qualname__", repr(fn)))
        return copy

    # -- recording -------------------------------------------------------------------------
    def every(self) -> None:
        """Count every slot as read."""
        self.reads.append(EVERY)

    def _field(self, i: int) -> None:
        slot = self.layout.whole_slot[i]
        if slot >= 0:
            self.reads.append(slot)
        elif i in self.layout.wide:
            self.reads.append(WIDE)
        # (a fixed-key map: its entries are recorded as they are looked up)

    def _all_of(self, hit: tuple[Any, int, Any]) -> None:
        """Everything a tracked object holds of the input counts as read."""
        obj, kind, info = hit
        if kind == _CONTAINER:
            # Once: a container may hold itself.
            del self.objs[id(obj)]
            for x in list(obj.items()) if isinstance(obj, dict) else list(obj):
                if isinstance(x, tuple) and isinstance(obj, dict):
                    self.esc(x[0])
                    self.esc(x[1])
                else:
                    self.esc(x)
            return
        if kind == _MAP:
            for var, written in info:
                self.reads.extend(s for s in self.layout.slots_of[var] if s not in written)
            return
        if all(info):
            self.reads.append(EVERY)
            return
        for i, own in enumerate(info):
            if not own:
                continue
            if i in self.layout.keyslot:
                m = obj[i]
                inner = self.objs.get(id(m))
                if inner is not None and inner[0] is m and inner[1] == _MAP:
                    self._all_of(inner)
                else:
                    self.reads.extend(self.layout.slots_of[i])
            else:
                self._field(i)

    def _key(self, pairs: Any, key: Any) -> None:
        for var, written in pairs:
            try:
                slot = self.layout.keyslot[var].get(key)
            except TypeError:  # unhashable: the lookup raises as the map's would
                continue
            if slot is not None and slot not in written:
                self.reads.append(slot)

    def _tracked(self, x: Any) -> tuple[Any, int, Any] | None:
        hit = self.objs.get(id(x))
        if hit is not None and hit[0] is x:
            return hit
        return None

    # -- the operations instrumented code calls --------------------------------------------
    def esc(self, x: Any) -> Any:
        """``x`` goes where its use is not followed: all it holds counts as read."""
        hit = self.objs.get(id(x))
        if hit is not None and hit[0] is x:
            self._all_of(hit)
            return x
        owner = getattr(x, "__self__", None) if callable(x) else None
        if owner is not None:
            hit = self._tracked(owner)
            if hit is not None:  # a bound method of the state or of one of its maps
                self._all_of(hit)
        return x

    def ga(self, obj: Any, name: str) -> Any:
        """``obj.name``."""
        hit = self.objs.get(id(obj))
        if hit is None or hit[0] is not obj:
            if name in _FRAME_ATTRS:
                self.reads.append(EVERY)
            return getattr(obj, name)
        if hit[1] == _STATE:
            i = self.layout.fields.get(name)
            if i is not None:
                if hit[2][i]:
                    self._field(i)
                return getattr(obj, name)
            if name in _CLASS_ATTRS or name == "_replace":
                return getattr(obj, name)  # (_replace: followed when called)
            attr = inspect.getattr_static(type(obj), name, None)
            if isinstance(attr, staticmethod | classmethod):
                return getattr(obj, name)  # no access to the state's values
            if not isinstance(attr, types.FunctionType):
                self._all_of(hit)  # a property, or anything else: it may read anything
            return getattr(obj, name)  # (a method: followed when called, or escapes)
        return getattr(obj, name)  # a map's method: followed when called, or escapes

    def gi(self, obj: Any, key: Any) -> Any:
        """``obj[key]``."""
        hit = self.objs.get(id(obj))
        if hit is not None and hit[0] is obj:
            if hit[1] == _MAP:
                self._key(hit[2], key)
            else:
                self._all_of(hit)  # indexing the state as a tuple
        return obj[key]

    def it(self, x: Any) -> Any:
        """The iterable of a ``for`` loop or comprehension: a map yields its keys (the
        same in every state); the state yields its values; a container yields what it
        holds, which stays tracked (a dict: its keys, escaped when they went in)."""
        hit = self.objs.get(id(x))
        if hit is not None and hit[0] is x and hit[1] != _MAP:
            if hit[1] == _STATE:
                self._all_of(hit)
        elif hit is None or hit[0] is not x:
            self.esc(x)
        return x

    def ct(self, x: Any) -> Any:
        """The right operand of ``in``: membership in a map depends on its keys only (so
        does membership in a dict container; a tuple's compares what it holds)."""
        hit = self.objs.get(id(x))
        if hit is not None and hit[0] is x and hit[1] != _MAP:
            if hit[1] == _STATE or not isinstance(x, dict):
                self._all_of(hit)
        elif hit is None or hit[0] is not x:
            self.esc(x)
        return x

    def call(self, f: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``f(*args, **kwargs)``: an instrumented copy for spec code; the followed
        operations for the state's and its maps' own methods; anything else gets its
        arguments through :meth:`esc`."""
        kind = type(f)
        if kind is types.MethodType:
            owner = f.__self__
            hit = self._tracked(owner)
            if hit is not None:
                return self._method(hit, f, args, kwargs)
            fn = f.__func__
            if type(fn) is types.FunctionType and fn.__code__ in self.copies:
                return f(*args, **kwargs)  # instrumented already
            copy = self.variant(fn)
            if copy is not None:
                return copy(owner, *args, **kwargs)
        elif kind is types.FunctionType:
            if f.__code__ in self.copies:
                return f(*args, **kwargs)  # a function made inside a copy: instrumented
            if f is _put:
                return self._put(args, kwargs)
            copy = self.variant(f)
            if copy is not None:
                return copy(*args, **kwargs)
        elif kind is types.BuiltinFunctionType:  # (also a builtin's bound method)
            owner = f.__self__
            hit = self._tracked(owner) if owner is not None else None
            if hit is not None:
                return self._method(hit, f, args, kwargs)
            if f in _FRAME_CALLS:
                self.reads.append(EVERY)
            elif (f is builtins.len or f is builtins.isinstance) and args:
                # The size and the kind of the state and of its maps never change.
                for a in args[1:]:
                    self.esc(a)
                return f(*args, **kwargs)
        elif f is type and len(args) == 1 and not kwargs:
            return f(args[0])  # (the same class in every state)
        self.esc(f)  # (a bound method-wrapper of the state or a map, say)
        for a in args:
            self.esc(a)
        for v in kwargs.values():
            self.esc(v)
        return f(*args, **kwargs)

    def dict_made(self, d: dict[Any, Any]) -> dict[Any, Any]:
        """A dict display was evaluated (its keys escaped): a container of this
        evaluation's own, which may hold tracked values until it escapes."""
        self.objs[id(d)] = (d, _CONTAINER, None)
        return d

    def box(self, box: Any) -> None:
        """A function's ``*args`` tuple or ``**kwargs`` dict (made by the interpreter
        for this call): a container of this evaluation's own."""
        self.objs[id(box)] = (box, _CONTAINER, None)

    def setitem(self, value: Any, obj: Any, key: Any) -> None:
        """``obj[key] = value``: a dict this evaluation built and that has not escaped
        keeps ``value`` tracked; anywhere else the value escapes (a dict other code
        holds could be read later, unseen)."""
        self.esc(key)
        hit = self._tracked(obj)
        if hit is not None and hit[1] == _CONTAINER and type(obj) is dict:
            obj[key] = value
            return
        self.esc(obj)
        self.esc(value)
        obj[key] = value

    def splat(self, x: Any, double: bool = False) -> Any:
        """The operand of ``*x`` (``double``: ``**x``) in a call: its items reach the call
        one by one (each followed there).  ``*`` on a map yields its keys (the same in
        every state); ``**`` hands its entries over, and the state's values are read."""
        hit = self._tracked(x)
        if hit is not None and (hit[1] == _STATE or (hit[1] == _MAP and double)):
            self._all_of(hit)
        return x

    def _method(
        self, hit: tuple[Any, int, Any], f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A method of the state or of one of its maps, called."""
        obj, kind, info = hit
        name = getattr(f, "__name__", "")
        if kind == _CONTAINER:
            if name in ("get", "pop") and isinstance(obj, dict):
                for a in args[1:]:
                    self.esc(a)
                return f(*args, **kwargs)  # a value it holds, tracked as it is
            if name not in ("keys", "__len__", "__contains__"):
                self._all_of(hit)
        elif kind == _STATE:
            fn = getattr(f, "__func__", None)
            if name == "_replace" and is_namedtuple_replace(fn):
                return self._replace(hit, f, args, kwargs)
            if type(fn) is types.FunctionType:
                copy = self.variant(fn)
                if copy is not None:
                    return copy(obj, *args, **kwargs)
            self._all_of(hit)
        elif name in _KEY_METHODS:
            pass
        elif name == "get" and args:
            self._key(info, args[0])
            for a in args[1:]:
                self.esc(a)
        elif name == "set" and len(args) == 2 and not kwargs:
            self.esc(args[1])
            result = f(*args)
            if result is obj:
                # Kept as it was: the map compared the entry with the new value.
                self._key(info, args[0])
            else:
                self._derive(info, args[0], result)
            return result
        else:
            self._all_of(hit)
        for a in args:
            self.esc(a)
        for v in kwargs.values():
            self.esc(v)
        return f(*args, **kwargs)

    def _derive(self, pairs: Any, key: Any, result: Any) -> None:
        """``result`` is a tracked map with the entry for ``key`` written: tracked on
        if the key is strictly one of the layout's (else all it keeps counts as read,
        and the layout check will see another key set)."""
        out = []
        for var, written in pairs:
            try:
                slot = self.layout.keyslot[var].get(key)
            except TypeError:
                slot = None
            if slot is None:
                self._all_of((None, _MAP, ((var, written),)))
                continue
            own = self.layout.slotkey[slot]
            if own is not key and not strict_equal(own, key):
                self._all_of((None, _MAP, ((var, written),)))
                continue
            out.append((var, written | {slot}))
        if out:
            self.objs[id(result)] = (result, _MAP, tuple(out))

    def _put(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """:func:`checker.values.put` on a tracked map: it reads the entry (to keep the
        map when nothing changes) and writes it."""
        if len(args) == 3 and not kwargs:
            hit = self._tracked(args[0])
            if hit is not None and hit[1] == _MAP:
                self._key(hit[2], args[1])
                self.esc(args[2])
                result = _put(*args)
                if result is not args[0]:
                    self._derive(hit[2], args[1], result)
                return result
        for a in args:
            self.esc(a)
        for v in kwargs.values():
            self.esc(v)
        return _put(*args, **kwargs)

    def _replace(
        self, hit: tuple[Any, int, Any], f: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """The genuine NamedTuple ``_replace`` on a tracked state: the fields it does not
        name are the tracked state's."""
        prov = hit[2]
        fields = self.layout.fields
        for name, v in kwargs.items():
            i = fields.get(name)
            vh = self._tracked(v)
            if (
                vh is not None
                and vh[1] == _MAP
                and i is not None
                and any(var == i for var, _ in vh[2])
            ):
                continue  # the variable's own map, written back: followed by provenance
            self.esc(v)
        for a in args:
            self.esc(a)
        result = f(*args, **kwargs)
        named = {fields[n] for n in kwargs if n in fields}
        own = tuple(prov[i] and i not in named for i in range(self.nvars))
        self.objs[id(result)] = (result, _STATE, own)
        return result

    # -- what a successor is made of ---------------------------------------------------------
    def provenance(self, t: Any) -> tuple[bool, ...] | None:
        """Per field of successor ``t``, whether it is the input's own value (None: ``t``
        was not made by ``_replace`` from a tracked state)."""
        hit = self._tracked(t)
        if hit is None or hit[1] != _STATE:
            return None
        prov: tuple[bool, ...] = hit[2]
        return prov

    def written_entries(self, var: int, m: Any) -> frozenset[int] | None:
        """The slots of ``var``'s entries written in map ``m`` (the rest are the
        input's own), or None if ``m`` is not derived from the input's map of ``var``."""
        hit = self._tracked(m)
        if hit is None or hit[1] != _MAP:
            return None
        for v, written in hit[2]:
            if v == var:
                return written  # type: ignore[no-any-return]
        return None
