"""Canonical encodings and 64-bit fingerprints of state values.

Why not ``hash()``: ``str`` hashes are salted per process, so two runs (or two worker
processes) would disagree.  Why not ``pickle``: it memoises objects by identity, so
two equal values can pickle to different bytes.  Instead a value is first turned into
a canonical nested tuple of plain atoms (sets and maps sorted, model values renamed by
the symmetry permutation in force), whose ``repr`` is hashed with BLAKE2b to 64 bits.

A state's fingerprint combines the fingerprints of its variables (see
:mod:`checker.model`), so an action that changes one variable re-encodes only that one.
The combination uses the builtin tuple hash over ints, which is not salted.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping
from hashlib import blake2b
from typing import Any

from pyrsistent import PBag, PMap, PSet, PVector

from checker.values import ModelValue

Renaming = Mapping[ModelValue, ModelValue] | None
Encoder = Callable[[Any, Renaming], Any]

_MASK64 = (1 << 64) - 1


def _atom(v: Any, ren: Renaming) -> Any:
    return v


def _model_value(v: ModelValue, ren: Renaming) -> Any:
    return ren.get(v, v).token if ren else v.token


def _sorted(items: list[Any]) -> list[Any]:
    try:
        items.sort()
    except TypeError:
        # Mixed kinds in one set (ints beside None, say): order by text instead.
        items.sort(key=repr)
    return items


def _enc_inline(x: Any, ren: Renaming) -> Any:
    """encode() with the commonest cases (atoms, model values) handled without a call."""
    t = type(x)
    if t in _ATOMS:
        return x
    if t is ModelValue:
        return ren.get(x, x).token if ren else x.token
    enc = _ENCODERS.get(t)
    if enc is None:
        enc = _encoder_for(t)
    return enc(x, ren)


def _sequence(v: Any, ren: Renaming) -> Any:
    return tuple([_enc_inline(x, ren) for x in v])


def _set(v: Any, ren: Renaming) -> Any:
    return ("#set", *_sorted([_enc_inline(x, ren) for x in v]))


def _items(v: Any) -> Any:
    # pyrsistent's PMap.items() goes through two Python generators; reading its
    # buckets directly is about 4x faster, and this is the hottest loop of a run.
    buckets = getattr(v, "_buckets", None)
    if buckets is None:
        return v.items()
    out: list[tuple[Any, Any]] = []
    for b in buckets:
        if b:
            out.extend(b)
    return out


def _map(v: Any, ren: Renaming) -> Any:
    return (
        "#map",
        *_sorted([(_enc_inline(k, ren), _enc_inline(x, ren)) for k, x in _items(v)]),
    )


def _plain_map(v: Any, ren: Renaming) -> Any:
    return (
        "#map",
        *_sorted([(_enc_inline(k, ren), _enc_inline(x, ren)) for k, x in v.items()]),
    )


def _bag(v: Any, ren: Renaming) -> Any:
    return ("#bag", *_sorted([(_enc_inline(k, ren), n) for k, n in v.items()]))


def _enum(v: enum.Enum, ren: Renaming) -> Any:
    return f"{type(v).__name__}.{v.name}"


_ATOMS = frozenset({int, str, bool, type(None)})

_ENCODERS: dict[type, Encoder] = {
    int: _atom,
    str: _atom,
    bool: _atom,
    type(None): _atom,
    ModelValue: _model_value,
    tuple: _sequence,
    frozenset: _set,
}


class StateValueError(TypeError):
    """A state holds a value mcheck refuses: mutable, or of a kind states cannot hold."""


#: Mutable kinds a state must not hold, with the immutable kind to use instead.
_MUTABLE = {
    list: "a tuple or pyrsistent pvector",
    dict: "immutables.Map or pyrsistent pmap",
    set: "a frozenset or pyrsistent pset",
    bytearray: "bytes are not state values either: use a str",
}


def _encoder_for(t: type) -> Encoder:
    """Pick (and cache) the encoder for a type met for the first time; refuse mutable
    containers and values that are not TLA+-like state values, naming the fix."""
    enc: Encoder
    for kind, instead in _MUTABLE.items():
        if issubclass(t, kind):
            raise StateValueError(
                f"a {t.__name__}, which is mutable (an action could change it in place): "
                f"use {instead}"
            )
    if issubclass(t, float | complex | bytes):
        raise StateValueError(
            f"a {t.__name__}: states hold ints, strings, bools, None, model values and "
            "immutable containers of them (TLA+ has no reals; traces could not be saved)"
        )
    if dataclasses.is_dataclass(t):
        params = getattr(t, "__dataclass_params__", None)
        if params is not None and not params.frozen:
            raise StateValueError(
                f"a {t.__name__}, a dataclass that is not frozen (mutable): "
                "declare it @dataclass(frozen=True)"
            )
        names = tuple(f.name for f in dataclasses.fields(t))
        tag = t.__name__

        def enc(v: Any, ren: Renaming) -> Any:
            return (tag, *[_enc_inline(getattr(v, n), ren) for n in names])

    elif issubclass(t, enum.Enum):
        enc = _enum
    elif issubclass(t, PMap):
        enc = _map
    elif issubclass(t, Mapping) or (hasattr(t, "items") and hasattr(t, "set")):
        # immutables.Map and other mappings: their items() is fast already.
        enc = _plain_map
    elif issubclass(t, PBag):
        enc = _bag_encoder
    elif issubclass(t, PSet | frozenset):
        enc = _set
    elif issubclass(t, tuple) and hasattr(t, "_fields"):
        tag = t.__name__

        def enc(v: Any, ren: Renaming) -> Any:
            return (tag, *[_enc_inline(x, ren) for x in v])

    elif issubclass(t, PVector | tuple):
        enc = _sequence
    elif issubclass(t, int | str):
        enc = _atom
    else:
        raise StateValueError(
            f"a value of type {t.__name__}, which mcheck cannot fingerprint: use ints, "
            "strings, bools, None, model values, tuples, frozen dataclasses, enums, or "
            "immutable maps and sets (immutables.Map, pyrsistent pmap/pvector/pset/pbag)"
        )
    _ENCODERS[t] = enc
    return enc


def _bag_encoder(v: Any, ren: Renaming) -> Any:
    counts: dict[Any, int] = {}
    for x in v:
        counts[x] = counts.get(x, 0) + 1
    return _bag(counts, ren)


def encode(v: Any, ren: Renaming = None) -> Any:
    """Return the canonical encoding of ``v`` with model values renamed by ``ren``.

    Equal values (under the same renaming) always give equal encodings, whatever their
    construction history, hash salt or insertion order.
    """
    enc = _ENCODERS.get(type(v))
    if enc is None:
        enc = _encoder_for(type(v))
    return enc(v, ren)


def fingerprint(v: Any, ren: Renaming = None) -> int:
    """64-bit fingerprint of a value (after renaming): BLAKE2b of its canonical text."""
    text = repr(encode(v, ren)).encode()
    return int.from_bytes(blake2b(text, digest_size=8).digest(), "little")


def combine(fps: tuple[int, ...]) -> int:
    """Combine per-variable fingerprints into a state fingerprint (salt-free)."""
    return hash(fps) & _MASK64


def sort_key(v: Any) -> str:
    """A deterministic sort key for any state value (use it to order ``over_state``)."""
    return repr(encode(v))


def in_order(items: Iterable[Any], kind: Any = None) -> list[Any]:
    """``items`` (of type ``kind``, if given) in a fixed, salt-independent order: what
    an ``over_state`` domain must return (never iterate a set or map as it comes)."""
    if kind is not None:
        items = (x for x in items if isinstance(x, kind))
    return sorted(items, key=sort_key)


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of a fingerprint collision: n * (m - n) / 2^64."""
    if distinct <= 0:
        return 0.0
    return distinct * max(0, generated - distinct) / float(1 << 64)


class StateFingerprinter:
    """Fingerprints whole states, incrementally and under symmetry.

    A state is seen as a tuple of variable values.  For each renaming ``p`` (identity
    first) and variable ``i`` it keeps ``fps[p * V + i]``, the fingerprint of variable
    ``i`` renamed by ``p``.  A successor usually shares most variable objects with its
    parent (pyrsistent's structural sharing), and only the variables that are not the
    very same object are re-encoded.  The state's fingerprint is the combination for
    the identity, or with symmetry the minimum over all renamings: the same for every
    state of an orbit, so the store holds one fingerprint per orbit.
    """

    __slots__ = ("nperms", "nvars", "renamings")

    def __init__(self, nvars: int, renamings: list[dict[ModelValue, ModelValue]]) -> None:
        self.nvars = nvars
        self.renamings: list[Renaming] = [r or None for r in renamings] or [None]
        self.nperms = len(self.renamings)

    def initial(self, vals: tuple[Any, ...]) -> tuple[int, tuple[int, ...]]:
        """Fingerprint of a state with no parent: every variable is encoded."""
        fps = [fingerprint(v, ren) for ren in self.renamings for v in vals]
        return self._combine(fps), tuple(fps)

    def child(
        self, vals: tuple[Any, ...], pvals: tuple[Any, ...], pfps: tuple[int, ...]
    ) -> tuple[int, tuple[int, ...]]:
        """Fingerprint of a successor, re-encoding only the variables that changed."""
        fps = list(pfps)
        nv = self.nvars
        for i in range(nv):
            v = vals[i]
            if v is not pvals[i]:
                k = i
                for ren in self.renamings:
                    fps[k] = fingerprint(v, ren)
                    k += nv
        return self._combine(fps), tuple(fps)

    def _combine(self, fps: list[int]) -> int:
        nv = self.nvars
        if self.nperms == 1:
            return hash(tuple(fps)) & _MASK64
        return min(hash(tuple(fps[k : k + nv])) & _MASK64 for k in range(0, len(fps), nv))
