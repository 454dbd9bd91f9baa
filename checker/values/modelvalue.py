"""Model values: the interchangeable atoms of a spec (TLC's model values).

A symmetric set such as the servers ``{s1, s2, s3}`` is a tuple of :class:`ModelValue`.
Model values compare only with model values of the same set, order by their position
in it, and print as their name.  Symmetry reduction renames them (``s1 -> s2``), which
is why a spec must never look inside one: it is only ever compared, stored and printed.
"""

from __future__ import annotations

from typing import Any, ClassVar

from checker.values.hash64 import S_MODEL, named_hash


class ModelValue:
    """One named atom of a symmetric set, e.g. server ``s2`` of ``Server``.

    Instances are interned per (group, name), so ``ModelValue("s1", "Server", 0)`` is
    the same object wherever it is built; equality is identity, which keeps
    comparisons cheap.  Two specs may both call their servers ``s1`` in different
    groups.
    """

    __slots__ = ("__weakref__", "fp", "group", "index", "name", "token")
    _interned: ClassVar[dict[tuple[str, str], ModelValue]] = {}

    name: str
    group: str
    index: int
    #: How the value appears in canonical encodings: ``(b"@", group, name)``, builtin
    #: atoms whose repr is computed in C, tagged with bytes (which no state value is)
    #: so that no string or tuple a spec holds spells a model value.
    token: tuple[bytes, str, str]
    #: Its fingerprint (:mod:`checker.values.hash64`: group and name), computed once.
    fp: int

    def __new__(cls, name: str, group: str = "", index: int = 0) -> ModelValue:
        known = cls._interned.get((group, name))
        if known is not None:
            if known.index != index:
                raise ValueError(
                    f"model value {name!r} of {group!r} is already at position {known.index}"
                )
            return known
        self = object.__new__(cls)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "token", (b"@", group, name))
        object.__setattr__(self, "fp", named_hash(S_MODEL, group, name))
        cls._interned[(group, name)] = self
        return self

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("ModelValue is immutable")

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        # Unpickling (worker processes) must land on the interned instance.
        return (ModelValue, (self.name, self.group, self.index))

    # Interning makes equality identity, so the C-level identity hash and equality of
    # ``object`` are exact, and far cheaper than Python-level methods on the hot path
    # (every pmap lookup keyed by a server hashes one).  Fingerprints never use hash().
    __hash__ = object.__hash__
    __eq__ = object.__eq__

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ModelValue):
            return NotImplemented
        return (self.group, self.index) < (other.group, other.index)

    def __le__(self, other: object) -> bool:
        if not isinstance(other, ModelValue):
            return NotImplemented
        return (self.group, self.index) <= (other.group, other.index)

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, ModelValue):
            return NotImplemented
        return (self.group, self.index) > (other.group, other.index)

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, ModelValue):
            return NotImplemented
        return (self.group, self.index) >= (other.group, other.index)


def model_values(prefix: str, count: int, group: str | None = None) -> tuple[ModelValue, ...]:
    """Return ``count`` model values named ``prefix1 .. prefixN`` (``s1, s2, s3``).

    ``group`` names the set they belong to (defaults to the prefix); values of one
    group order by position, values of different groups do not compare.
    """
    if count < 0:
        raise ValueError("a set of model values cannot have a negative size")
    g = group if group is not None else prefix
    return tuple(ModelValue(f"{prefix}{i}", g, i - 1) for i in range(1, count + 1))


def named_values(names: list[str] | tuple[str, ...], group: str) -> tuple[ModelValue, ...]:
    """Return model values with the given names, in the given order, as one group."""
    return tuple(ModelValue(n, group, i) for i, n in enumerate(names))
