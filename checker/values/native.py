"""The C value core (:mod:`checker.values._native`), set up, or None.

The extension computes the fingerprint of :mod:`checker.values.hash64` and the strict
equality of :mod:`checker.values.strict` bit for bit as the Python code does, only
faster (issue 47).  It is used unless ``MCHECK_PURE=1`` is set or it was not built
(a machine without a C compiler installs the package all the same: the build marks
the extension optional); then the Python reference runs, after one warning.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any

import immutables

from checker.values import hash64
from checker.values.kinds import (
    PBAG_TYPE,
    PMAP_TYPE,
    PSET_TYPE,
    PVECTOR_TYPE,
    Kind,
    StateValueError,
    kind_of,
    qualified_name,
    record_fields,
)
from checker.values.modelvalue import ModelValue


def type_info(t: type) -> tuple[int, int, tuple[str, ...] | None]:
    """What the extension keeps of a type met for the first time: its kind, the start
    of its chain (records: kind and class name; enums: the class name) and, for a
    dataclass, its fields in order.  Refuses a type states cannot hold
    (:class:`StateValueError`, naming it)."""
    kind = kind_of(t)
    if kind is Kind.NAMEDTUPLE:
        return int(kind), hash64.record_seed(hash64.S_RECORD, qualified_name(t)), None
    if kind is Kind.DATACLASS:
        start = hash64.record_seed(hash64.S_DATACLASS, qualified_name(t))
        return int(kind), start, record_fields(t)
    if kind is Kind.ENUM:
        return int(kind), hash64.record_seed(hash64.S_ENUM, qualified_name(t)), None
    return int(kind), 0, None


def _seeds() -> dict[str, int]:
    names = ("INT", "BOOL", "STR", "NONE", "TUPLE", "PVECTOR", "FROZENSET", "PSET")
    return {n: getattr(hash64, f"S_{n}") for n in (*names, "MAP", "PMAP", "BAG")}


def load(force: bool = False) -> ModuleType | None:
    """The extension, set up, or None (``MCHECK_PURE=1``, or not built: one warning).
    ``force`` (tests comparing the two cores) ignores MCHECK_PURE and raises
    ImportError where it is not built."""
    if not force and os.environ.get("MCHECK_PURE", "") not in ("", "0"):
        return None
    try:
        # (by name: importing it from the package would import the package's
        # __init__, which imports strict, which imports this module)
        _native = importlib.import_module("checker.values._native")
    except ImportError as exc:
        if force:
            raise
        print(
            f"mcheck: warning: the C value core is not built ({exc}); running the "
            "Python one (the same results, slower)",
            file=sys.stderr,
        )
        return None
    native: Any = _native
    native.setup(
        ModelValue,
        immutables.Map,
        PMAP_TYPE,
        PSET_TYPE,
        PVECTOR_TYPE,
        PBAG_TYPE,
        StateValueError,
        type_info,
        hash64.int_hash,
        _seeds(),
    )
    # A build from other sources than this module's constants would fingerprint
    # differently from every checkpoint and worker: refuse it rather than mix.
    if any(native.seed(t) != hash64.seed(t) for t in range(1, 16)):
        raise ImportError("checker.values._native does not match checker.values.hash64")
    return native  # type: ignore[no-any-return]


#: The set-up extension, or None where the Python reference runs.
NATIVE: Any = load()
