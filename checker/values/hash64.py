"""The 64-bit structural fingerprint of a state value, in Python: the reference.

Fingerprint version 3 (issue 47).  A value's fingerprint is computed from its kind
and parts directly, with no intermediate text: every kind starts from its own seed
(an int never hashes as a bool, a tuple never as a record, a frozenset never as a
pset), ordered containers chain their items' fingerprints through a SplitMix64
finaliser, and sets and maps add up one finalised term per element or entry (a
commutative sum: no sorting, and the same value whatever its insertion order or hash
salt).  Records and enum members mix in their class's qualified name, model values
their group and name, after the symmetry renaming in force.

:mod:`checker.values._native` (C, built by the package) computes the very same
numbers; this module is what it is tested against (``tests/test_native_values.py``,
``make soundness``) and what runs where the extension is absent or
``MCHECK_PURE=1``.  Because the two agree bit for bit, a checkpoint, a worker and a
cluster node may use either.

Like TLC's fingerprints, these are not collision-resistant against values crafted to
collide (the finaliser is invertible); the birthday estimate the run prints is for
the values a spec reaches.
"""

from __future__ import annotations

import struct

_MASK = (1 << 64) - 1
#: The golden-ratio increment of SplitMix64.
GOLDEN = 0x9E3779B97F4A7C15
#: Salts of the per-element terms of sets, maps and bags (each kind of sum its own).
SET_SALT = 0x243F6A8885A308D3
MAP_SALT = 0x13198A2E03707344
BAG_SALT = 0xA4093822299F31D0

#: Kind tags (what no two kinds share: the start of every value's chain).
T_INT, T_BOOL, T_STR, T_NONE, T_MODEL, T_ENUM = 1, 2, 3, 4, 5, 6
T_TUPLE, T_PVECTOR, T_RECORD, T_DATACLASS = 7, 8, 9, 10
T_FROZENSET, T_PSET, T_MAP, T_PMAP, T_BAG = 11, 12, 13, 14, 15


def fin(z: int) -> int:
    """The SplitMix64 finaliser (a bijection of 64-bit words)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def step(h: int, w: int) -> int:
    """One link of a chain: the running hash ``h`` absorbing the 64-bit word ``w``."""
    return fin(((h ^ w) + GOLDEN) & _MASK)


def seed(tag: int) -> int:
    """The start of a kind's chain."""
    return fin((tag * 0xD6E8FEB86659FD93) & _MASK)


S_INT, S_BOOL, S_STR, S_NONE, S_MODEL, S_ENUM = (seed(t) for t in range(1, 7))
S_TUPLE, S_PVECTOR, S_RECORD, S_DATACLASS = (seed(t) for t in range(7, 11))
S_FROZENSET, S_PSET, S_MAP, S_PMAP, S_BAG = (seed(t) for t in range(11, 16))


def str_hash(s: str) -> int:
    """A string: its UTF-8 bytes (lone surrogates passed through) as little-endian
    64-bit words, zero-padded, then its length in bytes."""
    b = s.encode("utf-8", "surrogatepass")
    n = len(b)
    pad = -n % 8
    h = S_STR
    for w in struct.unpack(f"<{(n + pad) // 8}Q", b + b"\0" * pad):
        h = step(h, w)
    return step(h, n)


def int_hash(v: int) -> int:
    """An int: its two's-complement 64-bit words, least significant first (one word
    for every int of 64 bits), then how many words."""
    if -(1 << 63) <= v < (1 << 63):
        return step(step(S_INT, v & _MASK), 1)
    n = (v.bit_length() + 64) // 64
    h = S_INT
    for w in struct.unpack(f"<{n}Q", v.to_bytes(8 * n, "little", signed=True)):
        h = step(h, w)
    return step(h, n)


def named_hash(start: int, qualified: str, name: str) -> int:
    """A model value (``start`` S_MODEL, its group and name) or an enum member
    (S_ENUM, its class's qualified name and member name)."""
    return step(step(start, str_hash(qualified)), str_hash(name))


def record_seed(start: int, qualified: str) -> int:
    """The start of a record's chain: its kind's seed and its class's name."""
    return step(start, str_hash(qualified))


def set_term(fp: int) -> int:
    """One element's term in a set's sum."""
    return fin(fp ^ SET_SALT)


def map_term(key_fp: int, value_fp: int) -> int:
    """One entry's term in a map's sum: a chain of key then value (``step(k, v)``
    alone would be symmetric in the two, and ``{0: 1, 1: 0}`` would collide with
    ``{0: 0, 1: 1}``)."""
    return step(step(MAP_SALT, key_fp), value_fp)


def bag_term(fp: int, count: int) -> int:
    """One distinct element's term in a bag's sum, with its multiplicity (a chain,
    as :func:`map_term`)."""
    return step(step(BAG_SALT, fp), count)


def close(start: int, total: int, size: int) -> int:
    """A set's, map's or bag's fingerprint from its kind's seed, its terms' sum and
    its size."""
    return step(step(start, total & _MASK), size)
