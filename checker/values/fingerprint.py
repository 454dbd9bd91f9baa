"""Canonical encodings and 64-bit fingerprints of state values.

Why not ``hash()``: ``str`` hashes are salted per process, so two runs (or two worker
processes) would disagree.  Why not ``pickle``: it memoises objects by identity, so
two equal values can pickle to different bytes.  Instead a value's fingerprint is
computed from its kind and parts (:mod:`checker.values.hash64`: sets and maps as
commutative sums, model values renamed by the symmetry permutation in force), in C
where the value core is built (:mod:`checker.values.native`), else in Python: the
same numbers.  The canonical encoding (:func:`encode`, nested tuples of atoms) stays
for what needs an order or a key: sorting, symmetry's canonical form, checkpoints.

A state's fingerprint is the sum mod 2^64 of one *term* per variable: the value's
fingerprint mixed with the variable's position (:func:`variable_term`); a map's term
adds up one term per entry and a set's one per element, so an action that changes one
variable re-encodes only that one, and one entry of a map only that entry
(:class:`TermCalculator`, :class:`StateFingerprinter`).  Under symmetry every term is
a vector of one lane per renaming, and the state's fingerprint is the smallest lane
(:class:`Lanes`).

The calculator remembers the fingerprints of set elements and map entries, found by
hash and ``==``; a remembered one is used only for a strictly equal value
(:func:`checker.values.strict.strict_equal`): ``(True,)`` is not ``(1,)``, ``Pong(0, 0)`` is
not ``Ping(0, 0)``, though Python says they are equal.  For the same reason a set's or
map's term is updated from its predecessor's only when the members both share are the
very same (or strictly equal) values; otherwise it is computed afresh.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import immutables

from checker.values import hash64 as _h
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
from checker.values.strict import strict_equal

__all__ = ["StateValueError"]  # (re-exported: raised by every encoding)

Renaming = Mapping[ModelValue, ModelValue] | None
Encoder = Callable[[Any, Renaming], Any]

_MASK64 = (1 << 64) - 1

#: Bumped whenever an encoding or the hash changes: a checkpoint records it, and one
#: written with another version is not resumed (its visited set means other states).
#: 2: every kind tagged (issue 41): a tuple never spells a set, a record, a map or a
#: bag, a string never spells a model value or an enum member, and the map and set
#: kinds (Map, pmap; frozenset, pset) and tuple and pvector are told apart.
#: 3: a structural 64-bit hash (:mod:`checker.values.hash64`, issue 47) instead of
#: BLAKE2b of the encoding's text, the same in C and in Python.
FINGERPRINT_VERSION = 3

# The encoding: atoms (int, bool, str, None) stand for themselves; every other kind is
# a tuple whose first item is a bytes tag.  States never hold bytes (the value model
# refuses them), so no user value spells a tag, and a plain tuple is a tuple: the
# encoding is injective, and repr() of it (what is hashed) is too.
TAG_PVECTOR = b"#v"
TAG_RECORD = b"#r"
TAG_DATACLASS = b"#d"
TAG_ENUM = b"#e"
TAG_FROZENSET = b"#s"
TAG_PSET = b"#S"
TAG_MAP = b"#m"
TAG_PMAP = b"#M"
TAG_BAG = b"#b"


def _atom(v: Any, ren: Renaming) -> Any:
    return v


def _model_value(v: ModelValue, ren: Renaming) -> Any:
    return ren.get(v, v).token if ren else v.token


def _sorted(items: list[Any]) -> list[Any]:
    """Encodings in a canonical order: by value when they are all ints or all
    strings, else by their text (ordering mixed encodings by value could succeed or
    fail by the order they came in, and with it the order the sort produced)."""
    if items:
        t = type(items[0])
        if (t is int or t is str) and all(type(x) is t for x in items):
            items.sort()
            return items
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


def _pvector(v: Any, ren: Renaming) -> Any:
    return (TAG_PVECTOR, *[_enc_inline(x, ren) for x in v])


def _frozenset(v: Any, ren: Renaming) -> Any:
    return (TAG_FROZENSET, *_sorted([_enc_inline(x, ren) for x in v]))


def _pset(v: Any, ren: Renaming) -> Any:
    return (TAG_PSET, *_sorted([_enc_inline(x, ren) for x in v]))


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


def _pmap(v: Any, ren: Renaming) -> Any:
    return (
        TAG_PMAP,
        *_sorted([(_enc_inline(k, ren), _enc_inline(x, ren)) for k, x in _items(v)]),
    )


def _map(v: Any, ren: Renaming) -> Any:
    return (
        TAG_MAP,
        *_sorted([(_enc_inline(k, ren), _enc_inline(x, ren)) for k, x in v.items()]),
    )


def _bag(v: Any, ren: Renaming) -> Any:
    counts: dict[Any, int] = {}
    for x in v:
        counts[x] = counts.get(x, 0) + 1
    return (TAG_BAG, *_sorted([(_enc_inline(k, ren), n) for k, n in counts.items()]))


_ATOMS = frozenset({int, str, bool, type(None)})

_ENCODERS: dict[type, Encoder] = {
    int: _atom,
    str: _atom,
    bool: _atom,
    type(None): _atom,
    ModelValue: _model_value,
    tuple: _sequence,
    PVECTOR_TYPE: _pvector,
    frozenset: _frozenset,
    PSET_TYPE: _pset,
    immutables.Map: _map,
    PMAP_TYPE: _pmap,
    PBAG_TYPE: _bag,
}


def _encoder_for(t: type) -> Encoder:
    """Pick (and cache) the encoder for a type met for the first time; a type states
    cannot hold is refused by name (:func:`checker.values.kinds.kind_of`)."""
    kind = kind_of(t)
    enc: Encoder
    if kind is Kind.NAMEDTUPLE:
        rtag = qualified_name(t)

        def enc(v: Any, ren: Renaming) -> Any:
            return (TAG_RECORD, rtag, *[_enc_inline(x, ren) for x in v])

    elif kind is Kind.DATACLASS:
        dtag = qualified_name(t)
        names = record_fields(t)

        def enc(v: Any, ren: Renaming) -> Any:
            return (TAG_DATACLASS, dtag, *[_enc_inline(getattr(v, n), ren) for n in names])

    elif kind is Kind.ENUM:
        etag = qualified_name(t)

        def enc(v: Any, ren: Renaming) -> Any:
            return (TAG_ENUM, etag, v.name)

    else:  # (every other kind is in _ENCODERS from the start)
        raise AssertionError(f"no encoder for kind {kind.name}")
    _ENCODERS[t] = enc
    return enc


def encode(v: Any, ren: Renaming = None) -> Any:
    """Return the canonical encoding of ``v`` with model values renamed by ``ren``.

    Equal values (under the same renaming) always give equal encodings, whatever their
    construction history, hash salt or insertion order.
    """
    enc = _ENCODERS.get(type(v))
    if enc is None:
        enc = _encoder_for(type(v))
    return enc(v, ren)


def bad_value_message(
    spec: str, names: tuple[str, ...], vals: tuple[Any, ...], exc: StateValueError
) -> str:
    """The one-line refusal of a state holding a value states cannot hold, naming the
    first variable whose value is refused (every engine and mode says it alike)."""
    for i, v in enumerate(vals):
        try:
            encode(v)
        except StateValueError:
            name = names[i] if i < len(names) else "state"
            return f"{spec}: variable {name} holds {exc}"
    return f"{spec}: a state holds {exc}"


# The reference fingerprint (version 3, :mod:`checker.values.hash64`): one hasher per
# type, as the encoders above; :mod:`checker.values._native` computes the same numbers.
def _fp_inline(x: Any, ren: Renaming) -> int:
    t = type(x)
    if t is int:
        return _h.int_hash(x)
    if t is ModelValue:
        return ren.get(x, x).fp if ren else x.fp  # type: ignore[no-any-return]
    hasher = _HASHERS.get(t)
    if hasher is None:
        hasher = _hasher_for(t)
    return hasher(x, ren)


def _chain(h: int, items: Iterable[Any], ren: Renaming) -> int:
    n = 0
    for x in items:
        h = _h.step(h, _fp_inline(x, ren))
        n += 1
    return _h.step(h, n)


def _set_fp(start: int, members: Iterable[Any], ren: Renaming) -> int:
    total = n = 0
    for x in members:
        total += _h.set_term(_fp_inline(x, ren))
        n += 1
    return _h.close(start, total, n)


def _map_fp(start: int, items: Iterable[tuple[Any, Any]], ren: Renaming) -> int:
    total = n = 0
    for k, x in items:
        total += _h.map_term(_fp_inline(k, ren), _fp_inline(x, ren))
        n += 1
    return _h.close(start, total, n)


def _bag_fp(v: Any, ren: Renaming) -> int:
    total = n = 0
    for x, count in _items(v._counts):
        total += _h.bag_term(_fp_inline(x, ren), _h.int_hash(count))
        n += 1
    return _h.close(_h.S_BAG, total, n)


_HASHERS: dict[type, Callable[[Any, Renaming], int]] = {
    int: lambda v, ren: _h.int_hash(v),
    bool: lambda v, ren: _h.step(_h.S_BOOL, 1 if v else 0),
    str: lambda v, ren: _h.str_hash(v),
    type(None): lambda v, ren: _h.S_NONE,
    ModelValue: lambda v, ren: ren.get(v, v).fp if ren else v.fp,
    tuple: lambda v, ren: _chain(_h.S_TUPLE, v, ren),
    PVECTOR_TYPE: lambda v, ren: _chain(_h.S_PVECTOR, v, ren),
    frozenset: lambda v, ren: _set_fp(_h.S_FROZENSET, v, ren),
    PSET_TYPE: lambda v, ren: _set_fp(_h.S_PSET, [k for k, _ in _items(v._map)], ren),
    immutables.Map: lambda v, ren: _map_fp(_h.S_MAP, v.items(), ren),
    PMAP_TYPE: lambda v, ren: _map_fp(_h.S_PMAP, _items(v), ren),
    PBAG_TYPE: _bag_fp,
}


def _hasher_for(t: type) -> Callable[[Any, Renaming], int]:
    """The hasher of a type met for the first time (records and enums: per class,
    from the chain start :func:`checker.values.native.type_info` gives the C core
    too); a type states cannot hold is refused by name."""
    from checker.values.native import type_info

    kind, start, fields = type_info(t)
    hasher: Callable[[Any, Renaming], int]
    if kind == Kind.NAMEDTUPLE:

        def hasher(v: Any, ren: Renaming) -> int:
            return _chain(start, v, ren)

    elif kind == Kind.DATACLASS:
        names = fields or ()

        def hasher(v: Any, ren: Renaming) -> int:
            return _chain(start, [getattr(v, n) for n in names], ren)

    elif kind == Kind.ENUM:

        def hasher(v: Any, ren: Renaming) -> int:
            return _h.step(start, _h.str_hash(v.name))

    else:  # (every other kind is in _HASHERS from the start)
        raise AssertionError(f"no hasher for kind {Kind(kind).name}")
    _HASHERS[t] = hasher
    return hasher


def fingerprint_pure(v: Any, ren: Renaming = None) -> int:
    """64-bit fingerprint of a value (after renaming), computed in Python: the
    reference :mod:`checker.values._native` is tested against."""
    return _fp_inline(v, ren)


def _native_or_pure() -> tuple[Callable[[Any, Renaming], int], Any]:
    """The native fingerprint where the extension is built and MCHECK_PURE is not
    set, else the reference (with one warning when the extension is missing)."""
    from checker.values.native import NATIVE

    if NATIVE is None:
        return fingerprint_pure, None
    return NATIVE.fingerprint, NATIVE


_fingerprint, _NATIVE = _native_or_pure()

#: 64-bit fingerprint of a value (after renaming): :mod:`checker.values.hash64`'s
#: structural hash (:func:`fingerprint_pure`), in C where the extension is built.
fingerprint: Callable[..., int] = _fingerprint


def sort_key_pure(v: Any) -> str:
    """The text of a value's canonical encoding, computed in Python: the reference
    the C core's ``sort_key`` is tested against (and what it leaves to Python for
    pvectors, psets, pmaps, bags, dataclasses and enums)."""
    return repr(encode(v))


def _record_prefix(t: type) -> str:
    """The start of a NamedTuple's key, ``"(b'#r', 'module.Class'"``, up to its
    fields (the C core caches it per class)."""
    return repr((TAG_RECORD, qualified_name(t)))[:-1]


def native_sort_key(native: Any) -> Callable[[Any], str]:
    """The C core's sort key, told what it needs of this module: the same text,
    written without building the encoding (in_order sorts every over_state domain,
    and on PaxosCommit the keys took 4.5% of a run)."""
    native.key_setup(sort_key_pure, _record_prefix, repr(TAG_FROZENSET), repr(TAG_MAP))
    key: Callable[[Any], str] = native.sort_key
    return key


_SORT_KEY = native_sort_key(_NATIVE) if _NATIVE is not None else sort_key_pure


def sort_key(v: Any) -> str:
    """A deterministic sort key for any state value (use it to order ``over_state``):
    the text of its canonical encoding."""
    return _SORT_KEY(v)


def in_order(items: Iterable[Any], kind: Any = None) -> list[Any]:
    """``items`` (of type ``kind``, if given) in a fixed, salt-independent order: what
    an ``over_state`` domain must return (never iterate a set or map as it comes)."""
    if kind is not None:
        return sorted([x for x in items if isinstance(x, kind)], key=_SORT_KEY)
    return sorted(items, key=_SORT_KEY)


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of a fingerprint collision: n * (m - n) / 2^64."""
    if distinct <= 0:
        return 0.0
    return distinct * max(0, generated - distinct) / float(1 << 64)


def mix_pure(fp: int, position: int) -> int:
    """A variable's fingerprint made specific to its position in the state (so values
    swapped between two variables change the state's fingerprint): a SplitMix64
    finaliser over the value's fingerprint xor a per-position key."""
    z = (fp ^ (0x9E3779B97F4A7C15 * (position + 1))) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def entry_term_pure(position: int, key_fp: int, value_fp: int) -> int:
    """The term of one entry of a map-valued variable: a state's fingerprint adds up
    its maps' entries one by one, so an action that changes one server's entry changes
    one term (and the fast engine can track entries separately)."""
    return mix_pure((key_fp * 0x9E3779B97F4A7C15 + value_fp) & _MASK64, position)


def map_tag(position: int, kind: Kind = Kind.MAP) -> int:
    """The constant term of a map-valued variable (an empty map is not nothing), one
    per map kind (a Map and a pmap with the same entries are two values)."""
    salt = 0xA5A5A5A5A5A5A5A5 if kind is Kind.MAP else 0xC3C3C3C3C3C3C3C3
    return mix(salt, position + 4096)


def set_tag(position: int, kind: Kind = Kind.FROZENSET) -> int:
    """The constant term of a set-valued variable (an empty set is not nothing), one
    per set kind (a frozenset and a pset with the same members are two values)."""
    salt = 0x5A5A5A5A5A5A5A5A if kind is Kind.FROZENSET else 0x3C3C3C3C3C3C3C3C
    return mix(salt, position + 8192)


def element_term_pure(position: int, element_fp: int) -> int:
    """The term of one element of a set-valued variable: like a map's entries, a set's
    elements add up one by one, so adding a message to a large set changes one term."""
    return mix_pure(element_fp, position + 12288)


#: A variable's, an entry's and an element's term (the functions above), in C where the
#: value core is built: the same numbers.
mix: Callable[[int, int], int] = _NATIVE.mix if _NATIVE is not None else mix_pure
entry_term: Callable[[int, int, int], int] = (
    _NATIVE.entry_term if _NATIVE is not None else entry_term_pure
)
element_term: Callable[[int, int], int] = (
    _NATIVE.element_term if _NATIVE is not None else element_term_pure
)


def _fingerprints_pure(v: Any, rens: list[Renaming]) -> tuple[int, ...]:
    return tuple(fingerprint_pure(v, r) for r in rens)


#: A value's fingerprint under each of a list of renamings.
fingerprints: Callable[[Any, list[Renaming]], tuple[int, ...]] = (
    _NATIVE.fingerprints if _NATIVE is not None else _fingerprints_pure
)


def variable_term(position: int, value: Any, ren: Renaming = None) -> int:
    """A variable's term in its state's fingerprint (under renaming ``ren``): the
    position-mixed fingerprint of its value; for a map the sum of its entries' terms,
    for a set the sum of its elements' (the definition :class:`TermCalculator`
    computes incrementally)."""
    kind = kind_of(type(value))
    if kind is Kind.MAP or kind is Kind.PMAP:
        items = value.items() if kind is Kind.MAP else _items(value)
        total = map_tag(position, kind)
        for k, x in items:
            total += entry_term(position, fingerprint(k, ren), fingerprint(x, ren))
        return total & _MASK64
    if kind is Kind.FROZENSET or kind is Kind.PSET:
        total = set_tag(position, kind)
        for x in value:
            total += element_term(position, fingerprint(x, ren))
        return total & _MASK64
    return mix(fingerprint(value, ren), position)


#: Bits per lane of a packed vector (one lane per renaming); a lane holds a sum of at
#: most 2^16 64-bit terms without overflowing into the next.
LANE_BITS = 80
_LANE_BYTES = LANE_BITS // 8


class Lanes:
    """Sums of per-renaming fingerprints packed into one big int, a lane per renaming.

    A state's fingerprint under renaming p is the sum (mod 2^64) over its variables of
    ``mix(fingerprint(value renamed by p), position)``.  Packing the per-renaming terms
    of a value into one int makes the whole vector of a state one big-int sum, updated
    incrementally like the plain sum, and the canonical (symmetry-reduced) fingerprint
    the minimum lane: exact, one fingerprint per orbit, at the cost of one addition
    and one unpacking per state instead of an encoding per renaming.
    """

    __slots__ = ("count", "packer", "unpack")

    def __init__(self, count: int) -> None:
        import struct

        self.count = count
        layout = struct.Struct("<" + "Q2x" * count)
        self.packer = layout.pack
        self.unpack = layout.unpack

    def pack(self, terms: list[int]) -> int:
        """One value's per-renaming terms (each < 2^64) as a packed vector.

        Through bytes, in C and linear in the lane count (shifting into a growing int
        is quadratic: 9! lanes took minutes)."""
        return int.from_bytes(self.packer(*terms), "little")

    def split(self, vector: int) -> tuple[int, ...]:
        """The lanes of a vector, each mod 2^64."""
        return self.unpack(vector.to_bytes(_LANE_BYTES * self.count, "little"))

    def reader(self, skip: int) -> tuple[Any, int]:
        """For vectors kept above ``skip`` bytes of other bits in one int: (an
        unpacker of the int's little-endian bytes into the lanes, how many bytes to
        write), so the smallest lane is ``min(unpack(x.to_bytes(n, "little")))``."""
        import struct

        layout = struct.Struct(f"<{skip}x" + "Q2x" * self.count)
        return layout.unpack, skip + _LANE_BYTES * self.count

    def minimum(self, vector: int) -> int:
        """The smallest lane, mod 2^64: the canonical fingerprint."""
        lanes: tuple[int, ...] = self.unpack(vector.to_bytes(_LANE_BYTES * self.count, "little"))
        return min(lanes)


_MISSING = object()
_PSET: type = PSET_TYPE
#: Atoms whose == is strict once their types are the same.
_STRICT_ATOMS = frozenset({int, str, bool, type(None)})

# How a variable's term is made, by the type of its value (found once per type from
# the value model's kind: an unsupported type is refused there, by name).
_SCALAR, _MAPPING, _SET_KIND = range(3)
_KIND: dict[type, int] = dict.fromkeys((int, str, bool, type(None), tuple), _SCALAR)
#: Per map or set type, its kind (for the variable's tag).
_TAG_KIND: dict[type, Kind] = {}


def _kind_of(t: type) -> int:
    kind = kind_of(t)
    if kind is Kind.MAP or kind is Kind.PMAP:
        k = _MAPPING
    elif kind is Kind.FROZENSET or kind is Kind.PSET:
        k = _SET_KIND
    else:
        k = _SCALAR
    _TAG_KIND[t] = kind
    _KIND[t] = k
    return k


#: Element and entry fingerprints a calculator remembers before starting afresh.
MEMO_SIZE = 1 << 18
#: Variable terms it remembers (fewer: a variable with a new value in nearly every
#: state, a growing message log, would otherwise keep a quarter-million of them alive;
#: the values that recur, ints and short records, are found again at once).
SCALAR_MEMO_SIZE = 1 << 16


class TermCalculator:
    """Variable terms (see :func:`variable_term`) under a list of renamings: one int, or
    a packed :class:`Lanes` vector of one term per renaming.

    The fingerprints of set elements and map entries are remembered (a message in a
    large set is encoded once, not once per state that holds it), and the term of a
    collection is updated from its predecessor's by what changed: a set that gains one
    message costs a C-level set difference and one element term, not an encoding of
    the whole set.  Remembered values are keyed by type and value, so records of
    different classes that compare equal as tuples keep their own fingerprints.
    """

    __slots__ = ("lanes", "memo", "rens", "scalars")

    def __init__(self, renamings: list[dict[ModelValue, ModelValue]]) -> None:
        self.rens: list[Renaming] = [r or None for r in renamings] or [None]
        self.lanes = Lanes(len(self.rens)) if len(self.rens) > 1 else None
        self.memo: dict[Any, tuple[Any, tuple[int, ...]]] = {}
        # Terms of variables that hold no collection, by (position, type, value):
        # the same ints, tuples and records recur in state after state.
        self.scalars: dict[Any, tuple[Any, int]] = {}

    def scalar_term(self, position: int, value: Any) -> int:
        """The term of a variable holding ``value``, not a set or map (remembered,
        and trusted only for a strictly equal value, as :meth:`fps` is)."""
        if _NATIVE is not None:
            # In C a value is fingerprinted faster than a memo finds it (a Python
            # hash, an == and a strict comparison): nothing is remembered.
            return self._scalar(position, value)
        t = type(value)
        key = (position, t, value)
        try:
            got = self.scalars.get(key)
        except TypeError:  # unhashable (refused by the encoding) or == refused
            return self._scalar(position, value)
        if got is not None:
            rep = got[0]
            if rep is value or t in _STRICT_ATOMS or strict_equal(rep, value):
                return got[1]
            return self._scalar(position, value)  # equal in Python, another value
        term = self._scalar(position, value)
        if len(self.scalars) >= SCALAR_MEMO_SIZE:
            self.scalars.clear()
        self.scalars[key] = (value, term)
        return term

    def _scalar(self, position: int, value: Any) -> int:
        if self.lanes is None:
            return mix(fingerprint(value), position)
        if _NATIVE is not None:
            return _NATIVE.lanes_scalar(position, value, self.rens)  # type: ignore[no-any-return]
        return self._pack([mix(fingerprint(value, r), position) for r in self.rens])

    def fps(self, x: Any) -> tuple[int, ...]:
        """The fingerprint of a (hashable) value under each renaming, remembered.

        The memo is found by hash and ``==`` and trusted only for a strictly equal
        value (:func:`checker.values.strict.strict_equal`): ``(True,)`` must not get the
        fingerprint remembered for ``(1,)``, nor ``Pong(0, 0)`` that of ``Ping(0, 0)``."""
        if _NATIVE is not None:
            return fingerprints(x, self.rens)  # (faster than the memo: see scalar_term)
        key = (type(x), x)  # (never compares values of two types: pbag's == raises)
        try:
            got = self.memo.get(key)
        except TypeError:  # == refused inside (a pbag beside another kind): not kept
            return fingerprints(x, self.rens)
        if got is not None:
            rep, fps = got
            if rep is x:
                return fps
            if strict_equal(rep, x):
                # The newest equal object stands for the value from now on: values
                # built from it share its parts, and compare at once where they do.
                self.memo[key] = (x, fps)
                return fps
            # Equal in Python, another value: computed, and not remembered.
            return fingerprints(x, self.rens)
        fps = fingerprints(x, self.rens)
        if len(self.memo) >= MEMO_SIZE:
            self.memo.clear()
        with contextlib.suppress(TypeError):
            self.memo[key] = (x, fps)
        return fps

    def _pack(self, terms: list[int]) -> int:
        if self.lanes is None:
            return terms[0] & _MASK64
        return self.lanes.pack([t & _MASK64 for t in terms])

    def term(self, position: int, value: Any) -> int:
        """A variable's term, computed from its value alone."""
        t = type(value)
        kind = _KIND.get(t)
        if kind is None:
            kind = _kind_of(t)
        if kind == _SCALAR:
            return self.scalar_term(position, value)
        n = len(self.rens)
        if _NATIVE is not None and self.lanes is not None:
            # Every lane at once in C: the kind's tag, plus each entry's or member's term.
            tags = self._pack(
                [(map_tag if kind == _MAPPING else set_tag)(position, _TAG_KIND[t])] * n
            )
            if kind == _MAPPING:
                pairs = list(value.items()) if t is not PMAP_TYPE else _items(value)
                return self._adjust(tags, position, None, None, pairs, [])
            return self._adjust(tags, position, value, (), None, None)
        if kind == _MAPPING:
            items = value.items() if t is not PMAP_TYPE else _items(value)
            totals = [map_tag(position, _TAG_KIND[t])] * n
            for k, x in items:
                kf = self.fps(k)
                xf = self.fps(x)
                for r in range(n):
                    totals[r] += entry_term(position, kf[r], xf[r])
            return self._pack(totals)
        totals = [set_tag(position, _TAG_KIND[t])] * n
        for x in value:
            xf = self.fps(x)
            for r in range(n):
                totals[r] += element_term(position, xf[r])
        return self._pack(totals)

    def update(self, position: int, new: Any, old: Any, old_term: int) -> int:
        """The term of ``new`` from that of ``old`` (the same variable in the parent
        state): for two sets or two maps, adjusted by the elements or entries that
        differ; otherwise computed afresh.  Where comparing the two raises (a pbag
        beside another kind of value refuses ==), afresh."""
        kind = _KIND.get(type(new))
        if kind == _SCALAR:  # (the commonest case first: ints, tuples, records)
            return self.scalar_term(position, new)
        try:
            return self._update(position, new, old, old_term)
        except TypeError:
            return self.term(position, new)

    def _update(self, position: int, new: Any, old: Any, old_term: int) -> int:
        """The term of ``new`` from that of ``old`` (the same variable in the parent
        state): for two sets or two maps, adjusted by the elements or entries that
        differ; otherwise computed afresh."""
        given = new  # (for a term afresh: of the value's own kind, not of the copy below)
        if type(new) is _PSET and type(old) is _PSET:
            # A pset's members, read from its map's buckets (in C, not through
            # pyrsistent's generators), differ from the parent's as frozensets do.
            new = frozenset([k for k, _ in _items(new._map)])  # type: ignore[attr-defined]
            old = frozenset([k for k, _ in _items(old._map)])
        if type(new) is frozenset and type(old) is frozenset:
            if _NATIVE is not None and self.lanes is None:
                # In C, by the members that are not the parent's very objects (no ==,
                # no set differences: a set an action added to pays for one member).
                term = _NATIVE.set_update(position, new, old, old_term)
                if term is not None:
                    return term  # type: ignore[no-any-return]
            added: Any = new - old
            removed: Any = old - new
            # Set difference pairs elements by ==: exact only when the elements both
            # sets keep are the very same (or strictly equal) values.
            if not _same_members(new - added if added else new, old - removed if removed else old):
                return self.term(position, given)
            return self._adjust(old_term, position, added, removed, None, None)
        if type(new) is type(old) and _KIND.get(type(new)) == _MAPPING:
            if _NATIVE is not None and self.lanes is None:
                # In C when the keys are the very same objects in the same order (an
                # action changed some values): the common case, without a lookup.
                term = _NATIVE.map_update(position, new, old, old_term)
                if term is not None:
                    return term  # type: ignore[no-any-return]
            if len(old) > 2 * len(new) + 8:
                return self.term(position, new)
            plus = []
            minus = []
            kept = []
            get = old.get
            for k, x in new.items():
                y = get(k, _MISSING)
                if y is not _MISSING:
                    kept.append(k)
                # (!= in C first: only values == in Python need the strict look)
                if y is not x and (y is _MISSING or y != x or not strict_equal(y, x)):
                    plus.append((k, x))
                    if y is not _MISSING:
                        minus.append((k, y))
            if not _same_members(kept, old.keys()):
                # A key found by == is another value (True where 1 was): afresh.
                return self.term(position, new)
            if len(new) - (len(plus) - len(minus)) != len(old):
                for k, y in old.items():
                    if k not in new:
                        minus.append((k, y))
            return self._adjust(old_term, position, None, None, plus, minus)
        return self.term(position, new)

    def _adjust(
        self,
        old_term: int,
        position: int,
        added: Any,
        removed: Any,
        plus: list[tuple[Any, Any]] | None,
        minus: list[tuple[Any, Any]] | None,
    ) -> int:
        lanes = self.lanes
        if lanes is None:  # one renaming: plain ints, no per-lane loop
            fps = self.fps
            total = old_term
            if added is not None:
                for x in added:
                    total += element_term(position, fps(x)[0])
                for x in removed:
                    total -= element_term(position, fps(x)[0])
                return total & _MASK64
            assert plus is not None and minus is not None
            for k, x in plus:
                total += entry_term(position, fps(k)[0], fps(x)[0])
            for k, x in minus:
                total -= entry_term(position, fps(k)[0], fps(x)[0])
            return total & _MASK64
        if _NATIVE is not None:
            return _NATIVE.lanes_adjust(  # type: ignore[no-any-return]
                position, old_term, self.rens, added, removed, plus, minus
            )
        n = len(self.rens)
        totals: list[int] = list(lanes.split(old_term))
        if added is not None:
            for x in added:
                xf = self.fps(x)
                for r in range(n):
                    totals[r] += element_term(position, xf[r])
            for x in removed:
                xf = self.fps(x)
                for r in range(n):
                    totals[r] -= element_term(position, xf[r])
        else:
            assert plus is not None and minus is not None
            for sign, pairs in ((1, plus), (-1, minus)):
                for k, x in pairs:
                    kf = self.fps(k)
                    xf = self.fps(x)
                    for r in range(n):
                        totals[r] += sign * entry_term(position, kf[r], xf[r])
        return self._pack(totals)


def _same_members(a: Any, b: Any) -> bool:
    """Whether every member of ``a`` (each ``==`` to a member of ``b``: the caller
    passes the members the two share by ``==``) is strictly the same value as its
    partner: true at C speed when they are the very same objects (structural sharing:
    the usual case); otherwise the members that differ in identity are paired up by
    type and value and compared strictly."""
    ids_b = set(map(id, b))
    if ids_b.issuperset(map(id, a)):
        return True
    odd_b = {(type(y), y): y for y in b}
    for x in a:
        if id(x) in ids_b:
            continue
        y = odd_b.get((type(x), x), _MISSING)
        if y is _MISSING or not strict_equal(x, y):
            return False  # its partner by == is of another type, or differs inside
    return True


class StateFingerprinter:
    """Fingerprints whole states, incrementally and under symmetry.

    A state's fingerprint is the sum mod 2^64 of its variables' terms; under symmetry,
    the minimum over every renaming of that sum (the same for every state of an orbit,
    so the store holds one fingerprint per orbit).  Per variable it keeps that
    variable's term (a packed :class:`Lanes` vector under symmetry); a successor
    re-encodes only the variables that are not the very same object as the parent's
    (structural sharing makes most of them so), and a set or map only by what changed.
    """

    __slots__ = ("c_child", "calc", "in_c", "lanes", "nvars", "renamings")

    def __init__(self, nvars: int, renamings: list[dict[ModelValue, ModelValue]]) -> None:
        self.nvars = nvars
        self.calc = TermCalculator(renamings)
        self.renamings = self.calc.rens
        self.lanes = self.calc.lanes
        # Without renamings the C core runs the whole per-variable loop of
        # :meth:`child` (the sets, and maps whose keys changed, call back into
        # ``calc.update``): the same terms, without a Python call per variable.
        self.in_c = _NATIVE is not None and self.lanes is None
        #: ``child`` in C, called as ``c_child(vals, pvals, pterms, calc.update)``, or
        #: None: the expansion's per-successor loop calls it without this class's
        #: Python method around it.
        self.c_child = _NATIVE.child_terms if self.in_c else None

    def term(self, position: int, value: Any) -> int:
        """One variable's term (see :func:`variable_term`), or the packed vector of
        its terms under every renaming."""
        return self.calc.term(position, value)

    def finish(self, total: int) -> int:
        """The state's fingerprint from the sum of its terms."""
        if self.lanes is None:
            return total & _MASK64
        return self.lanes.minimum(total)

    def initial(self, vals: tuple[Any, ...]) -> tuple[int, tuple[int, ...]]:
        """Fingerprint of a state with no parent: every variable is encoded."""
        terms = tuple(self.calc.term(i, v) for i, v in enumerate(vals))
        return self.finish(sum(terms)), terms

    def child(
        self, vals: tuple[Any, ...], pvals: tuple[Any, ...], pterms: tuple[int, ...]
    ) -> tuple[int, tuple[int, ...]]:
        """Fingerprint of a successor, re-encoding only the variables that changed."""
        if self.in_c:
            return _NATIVE.child_terms(vals, pvals, pterms, self.calc.update)  # type: ignore[no-any-return]
        terms = list(pterms)
        update = self.calc.update
        for i in range(self.nvars):
            v = vals[i]
            if v is not pvals[i]:
                terms[i] = update(i, v, pvals[i], pterms[i])
        return self.finish(sum(terms)), tuple(terms)
