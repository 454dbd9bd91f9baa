"""A spec's NamedTuple records with ``_replace`` and ``__new__`` in C, for a run.

``collections.namedtuple`` writes both in Python.  ``_replace`` (a keyword dict,
``_make``, a ``map`` over the fields calling ``kwds.pop``, ``tuple.__new__``) takes
about 1.5 us a call, and nearly every action ends in one (``s._replace(msgs=...)``).
``__new__`` is a lambda that packs its arguments and calls ``tuple.__new__``; specs
build records by the million (a message is built to be looked up in a set).  On
PaxosCommit the two took about 11% of a run.  The C value core's ``record_method`` is
each of them in C (:c:type:`RecordMethod`): it returns an equal value of the same
class, built as ``tuple.__new__`` builds it from the very objects given, and hands
every case it does not do itself to the original (an instance of a subclass, a
keyword that names no field, a default to fill in, ...), so errors are the
original's too.

They are set on the spec's record classes only while a run is checked, then the
originals are put back (a library caller's classes are its own afterwards), so the
plain and the fast engine see the same classes in a run.  With ``MCHECK_PURE=1`` or
without the extension nothing changes.  A method is left alone unless it is the one
``namedtuple`` wrote (``_replace`` only with namedtuple's ``_make``, which it calls):
a class that defines its own keeps it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from checker.values.native import NATIVE


class _Probe(NamedTuple):
    x: int


#: The code of the ``_replace`` and ``_make`` every namedtuple class gets (one code
#: object each, shared by every class: nested functions' code is a constant).
NT_REPLACE_CODE = _Probe._replace.__code__
NT_MAKE_CODE = _Probe._make.__func__.__code__  # type: ignore[attr-defined]


def is_namedtuple_replace(fn: Any) -> bool:
    """Whether ``fn`` (a bound method's ``__func__``) is namedtuple's own ``_replace``,
    or the C one standing for it (what the fast engine's read tracking follows)."""
    if getattr(fn, "__code__", None) is NT_REPLACE_CODE:
        return True
    return (
        NATIVE is not None
        and type(fn) is NATIVE.RecordMethod
        and getattr(fn.__wrapped__, "__code__", None) is NT_REPLACE_CODE
    )


def _own_replace(cls: type) -> Any:
    """The namedtuple-written ``_replace`` in ``cls``'s own dict, if its ``_make`` is
    namedtuple's too; else None."""
    original = cls.__dict__.get("_replace")
    if getattr(original, "__code__", None) is not NT_REPLACE_CODE:
        return None
    make = getattr(getattr(cls, "_make", None), "__func__", None)
    if getattr(make, "__code__", None) is not NT_MAKE_CODE:
        return None
    return original


def _own_new(cls: type, fields: tuple[str, ...]) -> Any:
    """The namedtuple-written ``__new__`` in ``cls``'s own dict, else None: the lambda
    ``namedtuple`` compiles per class (``lambda _cls, a, b: _tuple_new(_cls, (a, b))``
    in a namespace of its own), recognised by that namespace and its arguments."""
    got = cls.__dict__.get("__new__")
    fn = getattr(got, "__func__", None) if isinstance(got, staticmethod) else None
    code = getattr(fn, "__code__", None)
    if code is None or code.co_filename != "<string>" or code.co_name != "<lambda>":
        return None
    names = getattr(fn, "__globals__", {})
    if names.get("_tuple_new") is not tuple.__new__:
        return None
    if names.get("__name__") != f"namedtuple_{cls.__name__}":
        return None
    if code.co_argcount != len(fields) + 1 or code.co_varnames[1 : len(fields) + 1] != fields:
        return None
    return fn


def _fields(cls: type) -> tuple[str, ...] | None:
    fields = cls.__dict__.get("_fields")
    if type(fields) is not tuple or not all(type(f) is str for f in fields):
        return None
    return fields


def _is_record(v: Any) -> bool:
    if not isinstance(v, type) or not issubclass(v, tuple):
        return False
    fields = _fields(v)
    return fields is not None and (_own_replace(v) is not None or _own_new(v, fields) is not None)


def record_types(model: Any) -> list[type]:
    """The namedtuple classes a model's spec module names (its state and message
    records), in name order; none for a model that is not a spec."""
    spec = getattr(model, "spec", None)
    module = sys.modules.get(type(spec).__module__) if spec is not None else None
    if module is None:
        return []
    found = {id(v): v for _, v in sorted(vars(module).items()) if _is_record(v)}
    return list(found.values())


@contextmanager
def native_records(classes: Iterable[type]) -> Iterator[None]:
    """Give each of ``classes`` the C ``_replace`` and ``__new__`` for the duration,
    then put its own back (nested uses leave a class to the outermost)."""
    patched: list[tuple[Any, str, Any]] = []
    if NATIVE is not None:
        for record in classes:
            cls: Any = record  # (a namedtuple class: it has _replace and __new__)
            fields = _fields(cls)
            if fields is None:
                continue
            replace = _own_replace(cls)
            if replace is not None:
                patched.append((cls, "_replace", cls.__dict__["_replace"]))
                cls._replace = NATIVE.record_method(cls, fields, replace, False)
            new = _own_new(cls, fields)
            if new is not None:
                patched.append((cls, "__new__", cls.__dict__["__new__"]))
                cls.__new__ = staticmethod(NATIVE.record_method(cls, fields, new, True))
    try:
        yield
    finally:
        for cls, name, original in reversed(patched):
            setattr(cls, name, original)
