"""The distinct values of each slot, numbered as met, found type-strictly.

A slot is a variable, or one entry of a map whose keys are the same in every state.
Its values are numbered as they are met; a packed state holds one number per slot.
A value is found by hash and ``==`` (in C) and accepted only when it is strictly the
same value (:func:`checker.values.strict.strict_equal`), on every lookup: ``True`` never
takes the number of ``1``, nor ``Pong(0, 0)`` that of ``Ping(0, 0)``.  Values that
Python calls equal but are not get numbers of their own (kept in ``aliases``).
"""

from __future__ import annotations

from typing import Any

from checker.values.strict import strict_equal

#: Bits per slot number in a packed state (a million values per slot).
WIDTH = 20
NUM = (1 << WIDTH) - 1


class SlotTable:
    """The distinct values of one slot, numbered as met, with their terms."""

    __slots__ = ("aliases", "apart", "index", "key", "name", "packed", "terms", "values", "var")

    def __init__(self, var: int, name: str, key: Any = None) -> None:
        self.var = var
        self.key = key
        self.name = name
        #: (type, value) -> the number of the first value met that is == to it.
        self.index: dict[tuple[type, Any], int] = {}
        #: (type, value) -> numbers of later values == to it but not strictly equal.
        self.aliases: dict[tuple[type, Any], list[int]] = {}
        #: Numbers of values that cannot be compared by == with others met.
        self.apart: list[int] = []
        self.values: list[Any] = []
        self.terms: list[int] = []
        #: Per value, its whole share of a handle: its term above the slot numbers
        #: plus its number in the slot's place (writing value n over old is then
        #: one addition of ``packed[n] - packed[old]``).
        self.packed: list[int] = []

    def find(self, value: Any) -> int | None:
        """The number of ``value`` if it was met (strictly), else None."""
        # Keyed by (type, value): values of two types are never compared (pyrsistent's
        # pbag raises on ==), and the top level is type-strict at C speed.
        key = (type(value), value)
        try:
            n = self.index.get(key)
        except TypeError:
            # Comparing raised (pyrsistent's pbag inside a map refuses == with other
            # kinds): such values are kept apart, found by a scan.
            return self._scan(value)
        if n is None:
            return None
        rep = self.values[n]
        if rep is value or strict_equal(rep, value):
            return n
        for m in self.aliases.get(key, ()):
            if strict_equal(self.values[m], value):
                return m
        return None

    def _scan(self, value: Any) -> int | None:
        for m in self.apart:
            if strict_equal(self.values[m], value):
                return m
        return None

    def add(self, value: Any, term: int, packed: int) -> int:
        """Number a value that :meth:`find` did not find."""
        n = len(self.values)
        key = (type(value), value)
        try:
            if key in self.index:
                self.aliases.setdefault(key, []).append(n)
            else:
                self.index[key] = n
        except TypeError:
            self.apart.append(n)
        self.values.append(value)
        self.terms.append(term)
        self.packed.append(packed)
        return n
