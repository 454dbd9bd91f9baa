"""The records' ``_replace`` and ``__new__`` in C (checker/values/records.py,
RecordMethod in _native.c).

Each must return what namedtuple's own method returns (the same class, the very
objects given, not equal ones: ``True`` stays ``True`` where ``1`` was), raise what
it raises, leave to it what it does not do itself (a subclass's ``_make``), and be in
place exactly while a run checks: both engines see it, and the caller's classes are
their own again afterwards.
"""

from __future__ import annotations

import itertools
import pickle
from collections import namedtuple
from typing import Any, NamedTuple

import pytest

from checker import Options, Spec, action, check_spec, invariant
from checker.explore.result import Verdict
from checker.fastpath.reads import Layout, ReadLog
from checker.values.native import load
from checker.values.records import (
    NT_REPLACE_CODE,
    is_namedtuple_replace,
    native_records,
    record_types,
)
from checker.values.strict import strict_equal

NATIVE: Any = load(force=True)


class Rec(NamedTuple):
    """A record of four fields."""

    a: Any
    b: Any
    c: Any
    d: Any = "default"


class Other(NamedTuple):
    """A record with Rec's fields' names in another order."""

    d: Any
    c: Any
    b: Any
    a: Any


# typing.NamedTuple forbids defining _make or _replace in the class body; a class
# made by collections.namedtuple can still be given its own afterwards.
OwnMake = namedtuple("OwnMake", "x")
OwnMake._make = classmethod(lambda cls, it: tuple.__new__(cls, [v * 10 for v in it]))
OwnReplace = namedtuple("OwnReplace", "x")
OwnReplace._replace = lambda self, **kw: OwnReplace(-1)


class Sub(Rec):
    """A subclass of a record (its instances leave the C path for the original)."""

    @classmethod
    def _make(cls, iterable: Any) -> Sub:
        got = tuple.__new__(cls, iterable)
        Sub.made.append(got)
        return got

    made: list[Any] = []


VALUES = (0, 1, True, 1.0, "x", None, (1,), Rec(1, 2, 3, 4))


def _identical(x: Any, y: Any) -> bool:
    if type(x) is not type(y) or len(x) != len(y):
        return False
    return all(a is b for a, b in zip(x, y, strict=True))


def test_every_subset_of_fields_gives_what_the_original_gives() -> None:
    original = Rec.__dict__["_replace"]
    fast = NATIVE.record_method(Rec, Rec._fields, original, False)
    base = Rec(1, 2, 3, 4)
    count = 0
    for k in range(len(Rec._fields) + 1):
        for names in itertools.permutations(Rec._fields, k):
            for vals in itertools.product(VALUES[:3], repeat=k):
                kw = dict(zip(names, vals, strict=True))
                want = original(base, **kw)
                got = fast(base, **kw)
                assert _identical(got, want), (kw, got, want)
                count += 1
    assert count > 100
    # A name built at run time (not the interned identifier) is still the field.
    assert fast(base, **{"".join(["a"]): True}).a is True


def test_errors_are_the_originals() -> None:
    original = Rec.__dict__["_replace"]
    fast = NATIVE.record_method(Rec, Rec._fields, original, False)
    base = Rec(1, 2, 3)
    for call in (
        lambda f: f(base, e=1),
        lambda f: f(base, a=1, zz=2),
        lambda f: f(base, 5),
        lambda f: f(),
    ):
        with pytest.raises(Exception) as want:
            call(original)
        with pytest.raises(Exception) as got:
            call(fast)
        assert type(got.value) is type(want.value)
        assert str(got.value) == str(want.value)
    # Another record class's instance (called unbound): left to the original, which
    # takes Rec's field names with Other's _make.
    other = Other(1, 2, 3, 4)
    assert _identical(fast(other, a=True), original(other, a=True))


NEW_CALLS = [
    lambda: Rec(1, True, "x", None),
    lambda: Rec(1, 2, 3),  # d's default
    lambda: Rec(1, 2, c=3, d=4),
    lambda: Rec(a=1, b=2, c=3),
    lambda: Rec(1, 2, 3, 4, 5),
    lambda: Rec(1, 2),
    lambda: Rec(1, 2, 3, a=4),
    lambda: Rec(1, 2, 3, e=4),
    lambda: Rec.__new__(Rec, 1, 2, 3, 4),
    lambda: Rec.__new__(Sub, 1, 2, 3, 4),
    lambda: Sub(True, 2, 3, 4),
    lambda: Rec.__new__(tuple, 1, 2, 3, 4),
]


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as exc:
        return (type(exc), str(exc))


def test_new_gives_what_the_original_gives() -> None:
    want = [_outcome(c) for c in NEW_CALLS]
    with native_records([Rec]):
        assert type(Rec.__dict__["__new__"].__func__) is NATIVE.RecordMethod
        got = [_outcome(c) for c in NEW_CALLS]
    for w, g in zip(want, got, strict=True):
        if w[0] == "ok":
            assert g[0] == "ok" and _identical(g[1], w[1]), (g, w)
        else:
            assert g == w
    assert sum(w[0] == "ok" for w in want) == 8  # the calls that build a value
    with native_records([Rec]):  # pickling (workers, checkpoints) calls cls.__new__
        back = pickle.loads(pickle.dumps(Rec(1, True, "x", (2,))))
    assert type(back) is Rec and strict_equal(back, Rec(1, True, "x", (2,)))


def test_a_subclass_goes_through_its_own_make() -> None:
    with native_records([Rec]):
        assert type(Rec.__dict__["_replace"]) is NATIVE.RecordMethod
        Sub.made.clear()
        got = Sub(1, 2, 3, 4)._replace(b=True)
        assert type(got) is Sub and got.b is True
        assert Sub.made == [got]  # the original ran: it calls Sub._make
        assert type(Rec(1, 2, 3)._replace(a=0)) is Rec


def test_only_namedtuples_own_methods_are_replaced_and_all_come_back() -> None:
    classes = [Rec, Other, OwnMake, OwnReplace]
    before = {c: c.__dict__.get("_replace") for c in classes}
    with pytest.raises(RuntimeError), native_records(classes):
        assert type(Rec.__dict__["_replace"]) is NATIVE.RecordMethod
        assert type(Other.__dict__["_replace"]) is NATIVE.RecordMethod
        assert OwnMake.__dict__["_replace"] is before[OwnMake]
        assert type(OwnMake.__dict__["__new__"].__func__) is NATIVE.RecordMethod
        assert OwnMake(1)._replace(x=2) == (20,)  # its own _make still runs
        assert OwnReplace(1)._replace(x=2) == (-1,)
        assert Other(1, 2, 3, 4)._replace(a=9) == (1, 2, 3, 9)
        with native_records([Rec]):  # nested: the outer one restores
            assert type(Rec.__dict__["_replace"]) is NATIVE.RecordMethod
        assert type(Rec.__dict__["_replace"]) is NATIVE.RecordMethod
        raise RuntimeError("the run failed")
    assert {c: c.__dict__.get("_replace") for c in classes} == before
    assert Rec.__dict__["_replace"].__code__ is NT_REPLACE_CODE
    assert Rec.__dict__["__new__"].__func__.__code__.co_name == "<lambda>"


def test_the_replacement_reads_as_the_method_it_stands_for() -> None:
    with native_records([Rec]):
        bound = Rec(1, 2, 3)._replace
        assert bound.__name__ == "_replace"
        assert bound.__qualname__ == "Rec._replace"
        assert is_namedtuple_replace(bound.__func__)
        assert Rec._replace.__wrapped__.__code__ is NT_REPLACE_CODE
    assert is_namedtuple_replace(Rec(1, 2, 3)._replace.__func__)
    assert not is_namedtuple_replace(OwnReplace(1)._replace.__func__)


def test_the_fast_engines_read_log_follows_it() -> None:
    """The read log keeps the fields _replace does not name as the input's own: with
    the C _replace as with the original (else every field would count as read, and
    the fast engine would cache nothing)."""
    layout = Layout(
        fields={"a": 0, "b": 1, "c": 2, "d": 3},
        whole_slot=[0, 1, 2, 3],
        wide=frozenset(),
        keyslot={},
        slotkey={},
        slots_of={},
        state_type=Rec,
    )

    def step(s: Rec) -> Rec:
        return s._replace(a=s.a + 1)

    state = Rec(1, 2, 3, 4)
    with native_records([Rec]):
        log = ReadLog(layout)
        copy = log.entry(step)
        log.begin(state)
        t = copy(state)
    assert t == (2, 2, 3, 4)
    assert log.provenance(t) == (False, True, True, True)
    assert set(log.reads) == {0}


class Pair(NamedTuple):
    """Two counters."""

    x: int
    y: int


class Counting(Spec):
    """A grid whose actions note which _replace they met."""

    constants = {"N": 6}
    check_deadlock = False
    N: int
    met: set[type] = set()

    def init(self) -> list[Pair]:
        return [Pair(0, 0)]

    @action
    def IncX(self, s: Pair) -> Pair | None:
        Counting.met.add(type(Pair.__dict__["_replace"]))
        return s._replace(x=s.x + 1) if s.x < self.N else None

    @action
    def IncY(self, s: Pair) -> Pair | None:
        return s._replace(y=s.y + 1) if s.y < self.N else None

    @invariant
    def Small(self, s: Pair) -> bool:
        return s.x + s.y <= 2 * self.N


@pytest.mark.parametrize("engine", ["plain", "fast"])
def test_a_run_uses_it_and_gives_the_classes_back(engine: str) -> None:
    found = record_types(type("M", (), {"spec": Counting()})())
    assert Pair in found and Rec in found  # every record class the module names
    assert OwnMake in found and Counting not in found  # (OwnMake: for its __new__)
    Counting.met.clear()
    result = check_spec(Counting(), Options(cache=(engine == "fast")))
    assert result.verdict is Verdict.OK
    assert result.stats.distinct == 49
    assert Counting.met == {NATIVE.RecordMethod}
    assert Pair.__dict__["_replace"].__code__ is NT_REPLACE_CODE
