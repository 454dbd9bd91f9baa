"""``[f EXCEPT ![k] = v]``: a map with one entry written, the value model's way."""

from __future__ import annotations

from typing import Any

from checker.values.strict import strict_equal


def put(mapping: Any, key: Any, value: Any) -> Any:
    """``mapping.set(key, value)`` (TLA+'s ``[f EXCEPT ![key] = value]``), but
    ``mapping`` itself when nothing would change.

    pyrsistent builds a new map on every ``set``; returning the same object for a no-op
    update is cheaper and lets the explorer see that the variable did not change, so
    its fingerprint is reused instead of recomputed.  "Nothing would change" is decided
    by the value model's equality (:func:`checker.values.strict.strict_equal`), never by
    Python's ``==``: writing ``True`` over ``1``, or ``Pong(0, 0)`` over ``Ping(0, 0)``,
    is a change.  The key is looked up as the map looks it up (by ``==``), so writing
    under key ``True`` in a map keyed ``1`` replaces that entry's value only, as
    ``set`` does.
    """
    old = mapping.get(key, _ABSENT)
    if old is value:
        return mapping
    if old is not _ABSENT and old == value and strict_equal(old, value):
        return mapping
    return mapping.set(key, value)


_ABSENT: Any = object()
