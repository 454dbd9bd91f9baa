"""Model values: the interchangeable atoms of a spec (TLC's model values).

A symmetric set such as the servers ``{s1, s2, s3}`` is a tuple of :class:`ModelValue`.
Model values compare only with model values of the same set, order by their position
in it, and print as their name.  Symmetry reduction renames them (``s1 -> s2``), which
is why a spec must never look inside one: it is only ever compared, stored and printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


class ModelValue:
    """One named atom of a symmetric set, e.g. server ``s2`` of ``Server``.

    Instances are interned per (group, name), so ``ModelValue("s1", "Server", 0)`` is
    the same object wherever it is built; equality is identity, which keeps
    comparisons cheap.  Two specs may both call their servers ``s1`` in different
    groups.
    """

    __slots__ = ("__weakref__", "group", "index", "name", "token")
    _interned: ClassVar[dict[tuple[str, str], ModelValue]] = {}

    name: str
    group: str
    index: int
    #: How the value appears in canonical encodings: ``(b"@", group, name)``, builtin
    #: atoms whose repr is computed in C, tagged with bytes (which no state value is)
    #: so that no string or tuple a spec holds spells a model value.
    token: tuple[bytes, str, str]

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


def put(mapping: Any, key: Any, value: Any) -> Any:
    """``mapping.set(key, value)`` (TLA+'s ``[f EXCEPT ![key] = value]``), but
    ``mapping`` itself when nothing would change.

    pyrsistent builds a new map on every ``set``; returning the same object for a no-op
    update is cheaper and lets the explorer see that the variable did not change, so
    its fingerprint is reused instead of recomputed.  "Nothing would change" is decided
    by the value model's equality (:func:`checker.strict.strict_equal`), never by
    Python's ``==``: writing ``True`` over ``1``, or ``Pong(0, 0)`` over ``Ping(0, 0)``,
    is a change.  The key is looked up as the map looks it up (by ``==``), so writing
    under key ``True`` in a map keyed ``1`` replaces that entry's value only, as
    ``set`` does.
    """
    old = mapping.get(key, _ABSENT)
    if old is value:
        return mapping
    if old is not _ABSENT and old == value:
        from checker.strict import strict_equal  # (strict imports this module)

        if strict_equal(old, value):
            return mapping
    return mapping.set(key, value)


_ABSENT: Any = object()


@dataclass(frozen=True)
class Record:
    """A record read from a trace file: its type's name (the ITF tag) and its fields.

    Reading a trace never imports or calls anything the file names (a trace is data
    from elsewhere: a CI artifact, an attachment), so records come back as this plain
    value, drawn as ``Tag(field=value, ...)``.  Fields read as attributes, so timelines
    recognise messages in them as they do in the spec's own record types.
    """

    tag: str
    fields: Any  #: field name -> value (an immutables.Map)
    #: the fields in the file's order (a Map iterates in hash order); not compared
    _order: tuple[str, ...] = field(default=(), compare=False, hash=False)

    def __getattr__(self, name: str) -> Any:
        # Only called for names that are not real attributes: the record's fields.
        fields = object.__getattribute__(self, "fields")
        try:
            return fields[name]
        except KeyError:
            raise AttributeError(name) from None
