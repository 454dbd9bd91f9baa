"""Issue 41's wrong answers, each a regression: the fast engine sees the spec exactly as
the plain one does, and the value model separates what TLA+ separates.

Every spec here is a file (spec code as users write it, with source the fast engine
instruments), checked with the default engine, ``--no-cache`` and two workers; the
figures asserted are the ones a reader can count by hand from the spec.
"""

from __future__ import annotations

import enum
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, NamedTuple

import immutables
import pytest
from pyrsistent import (
    CheckedPMap,
    CheckedPSet,
    CheckedPVector,
    PRecord,
    field,
    pbag,
    pmap,
    pset,
    pvector,
)

from checker import Options, check_spec
from checker.authoring.loader import load_spec_class
from checker.explore.result import Result, Verdict
from checker.values import ModelValue, put
from checker.values.fingerprint import encode, fingerprint
from checker.values.kinds import StateValueError
from checker.values.strict import strict_equal

HEADER = """\
from typing import Any, NamedTuple

import immutables
from pyrsistent import PMap, pmap

from checker import Spec, action, invariant
from checker.values import put
"""


def _spec(tmp_path: Path, name: str, body: str) -> Any:
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return load_spec_class(str(path))


def _figures(r: Result) -> tuple[Any, ...]:
    length = r.trace.length if r.trace is not None else None
    return (r.verdict, r.violated, r.stats.distinct, r.stats.generated, r.stats.depth, length)


def _every_engine(cls: Any, **opts: Any) -> Result:
    """The default engine, the fast engine from the first state (the default one
    makes it after 3,000 states), --no-cache and two workers agree; the default's
    result."""
    runs = [
        check_spec(cls(), Options(**opts)),
        check_spec(cls(), Options(cache=False, **opts)),
        check_spec(cls(), Options(workers=2, **opts)),
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MCHECK_ENGINE_SWITCH", "fast")
        runs.append(check_spec(cls(), Options(**opts)))
    assert len({_figures(r) for r in runs}) == 1
    return runs[0]


# A counter runs to 3,000 first: the fast engine's caches have long warmed (run alone
# from the first state; the default engine makes it about then), when the probe's
# moment comes.
COUNTER = """
class S(NamedTuple):
    n: int
    m: Any
    hit: bool


class Probe(Spec):
    check_deadlock = False

    def init(self):
        return [S(0, {init}, False)]

    @action
    def Count(self, s):
        return s._replace(n=s.n + 1) if s.n < 3000 else None

    @action
    def Probe(self, s):
        if {test} and s.n == 2999:
            return s._replace(hit=True)
        return None

    @invariant
    def NeverHit(self, s):
        return not s.hit
"""


def test_a_fixed_key_map_is_the_real_map_to_isinstance(tmp_path: Path) -> None:
    """The map was handed to spec code as a stand-in: isinstance(s.m, PMap) was False
    on it, Probe's first evaluation was cached as disabled with nothing read, and the
    violation was missed."""
    body = COUNTER.format(init="pmap({0: 0, 1: 0})", test="isinstance(s.m, PMap)")
    result = _every_engine(_spec(tmp_path, "standin", body))
    assert (result.verdict, result.violated) == (Verdict.VIOLATION, "NeverHit")
    assert result.stats.distinct == 3002


def test_the_state_is_of_its_own_class_to_type(tmp_path: Path) -> None:
    body = COUNTER.format(init="0", test="type(s) is S")
    result = _every_engine(_spec(tmp_path, "typeis", body))
    assert (result.verdict, result.violated, result.stats.distinct) == (
        Verdict.VIOLATION,
        "NeverHit",
        3002,
    )


def test_a_map_that_changes_kind_keeps_its_kind(tmp_path: Path) -> None:
    """m starts as an immutables.Map and becomes a pmap at n = 2500: the fast engine
    rebuilt it as a Map, and the fingerprint did not tell the two apart, so the pmap
    states were taken for seen ones (even with --no-cache)."""
    body = COUNTER.format(
        init="immutables.Map({0: 0, 1: 0})", test="type(s.m) is type(pmap())"
    ) + textwrap.dedent(
        """
        @action
        def ToPmap(self, s):
            if s.n == 2500 and type(s.m) is immutables.Map:
                return s._replace(m=pmap({0: 0, 1: 0}))
            return None
        """
    ).replace("\n", "\n    ")
    result = _every_engine(_spec(tmp_path, "kind", body))
    assert (result.verdict, result.violated) == (Verdict.VIOLATION, "NeverHit")
    # 3,001 counter states with a Map, and from n = 2500 the 500 with a pmap, plus the
    # hit: two values of m where the old engines saw one.
    assert result.stats.distinct == 3001 + 501 + 1


def test_an_alias_a_helper_and_a_value_passed_on_are_followed(tmp_path: Path) -> None:
    """Reads through a local alias of a map, a helper method, a module function and a
    value handed to a builtin are all seen: the cached outcome of Probe is keyed on
    the entry it reads, which a late step changes."""
    body = """
    class S(NamedTuple):
        n: int
        m: Any
        hit: bool


    def entry_of(m, k):
        return m[k]


    class Alias(Spec):
        check_deadlock = False

        def init(self):
            return [S(0, immutables.Map({0: 0, 1: 0}), False)]

        def _probe_value(self, s):
            alias = s.m
            return entry_of(alias, 1)

        @action
        def Count(self, s):
            return s._replace(n=s.n + 1) if s.n < 3000 else None

        @action
        def Late(self, s):
            if s.n == 2000 and s.m[1] == 0:
                return s._replace(m=put(s.m, 1, 7))
            return None

        @action
        def Probe(self, s):
            if max([self._probe_value(s), 0]) == 7 and s.n == 2999:
                return s._replace(hit=True)
            return None

        @invariant
        def NeverHit(self, s):
            return not s.hit
    """
    result = _every_engine(_spec(tmp_path, "alias", body))
    assert (result.verdict, result.violated) == (Verdict.VIOLATION, "NeverHit")


def test_put_writes_true_over_one_and_pong_over_ping() -> None:
    class Ping(NamedTuple):
        a: int
        b: int

    class Pong(NamedTuple):
        a: int
        b: int

    m = immutables.Map({0: 1, 1: Ping(0, 0)})
    assert put(m, 0, True)[0] is True
    assert type(put(m, 1, Pong(0, 0))[1]) is Pong
    assert put(m, 0, 1) is m  # the same value: nothing changes


class Hue(enum.Enum):
    RED = 1


class _R(PRecord):
    x = field()


class _CM(CheckedPMap):  # type: ignore[misc]
    pass


class _CS(CheckedPSet):  # type: ignore[misc]
    pass


class _CV(CheckedPVector):  # type: ignore[misc]
    pass


class _FS(frozenset):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (_R(x=True), _R(x=1)),
        (_CM({0: True}), _CM({0: 1})),
        (_CS([True]), _CS([1])),
        (_CV([True]), _CV([1])),
        (_FS({True}), _FS({1})),
    ],
    ids=["PRecord", "CheckedPMap", "CheckedPSet", "CheckedPVector", "frozenset subclass"],
)
def test_kinds_outside_the_value_model_are_refused_not_compared_by_eq(a: Any, b: Any) -> None:
    """strict_equal fell back to == for kinds it did not list (True == 1 inside)."""
    with pytest.raises(StateValueError, match="not one of the kinds states hold"):
        strict_equal(a, b)
    with pytest.raises(StateValueError):
        encode(a)


@pytest.mark.parametrize(
    ("plain", "tagged"),
    [
        (("#bag", (1, 2)), pbag([1, 1])),
        ("Hue.RED", Hue.RED),
        ("@Server:s1", ModelValue("s1", "Server", 0)),
        (immutables.Map({0: ("#map", (1, 2))}), immutables.Map({0: pmap({1: 2})})),
        (("#set", 1), frozenset({1})),
        ((1,), pvector([1])),
        (frozenset({1}), pset([1])),
        (immutables.Map({1: 2}), pmap({1: 2})),
    ],
    ids=["bag", "enum", "model value", "map in map", "set", "pvector", "pset", "pmap"],
)
def test_no_user_value_spells_another_kind(plain: Any, tagged: Any) -> None:
    """The canonical encoding wrote records, enums, model values, sets, maps and bags
    as tuples or strings with a bare tag: a plain value spelling the tag was the same
    state."""
    assert encode(plain) != encode(tagged)
    assert fingerprint(plain) != fingerprint(tagged)
    assert not strict_equal(plain, tagged)


def test_the_tags_are_bytes_which_no_state_holds() -> None:
    """Every tag is bytes, and bytes are refused: no value spells a model value's or
    a set's encoding."""
    token = encode(ModelValue("s1", "Server", 0))
    with pytest.raises(StateValueError, match="bytes"):
        encode(token)
    with pytest.raises(StateValueError, match="bytes"):
        encode(encode(frozenset({1})))


def test_two_values_a_tuple_could_spell_are_two_states(tmp_path: Path) -> None:
    """Where the encoding merged a tuple with a bag, every engine counted one state."""
    body = """
    from pyrsistent import pbag

    class V(NamedTuple):
        v: Any


    class Two(Spec):
        check_deadlock = False

        def init(self):
            return [V(("#bag", (1, 2)))]

        @action
        def ToBag(self, s):
            return V(pbag([1, 1])) if type(s.v) is tuple else None
    """
    result = _every_engine(_spec(tmp_path, "two", body))
    assert result.verdict is Verdict.OK and result.stats.distinct == 2


def test_a_state_of_a_subclass_is_refused_by_name(tmp_path: Path) -> None:
    body = """
    class S(NamedTuple):
        n: int


    class Sub(S):
        pass


    class Subclassing(Spec):
        def init(self):
            return [S(0)]

        @action
        def Step(self, s):
            return Sub(1) if s.n == 0 else None
    """
    path = tmp_path / "subclassing.py"
    path.write_text(HEADER + textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, "-m", "checker", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Sub" in done.stderr and "Traceback" not in done.stderr


COUNTER_WITH_HELPER = """\
from checker import Spec, action, invariant
from limits import LIMIT


class Counter{tag}(Spec):
    def init(self):
        return [0]

    @action
    def Inc(self, s):
        return s + 1 if s < LIMIT else None

    @invariant
    def BelowTen(self, s):
        return s < 10
"""

TWO_SPECS_MANIFEST = """\
[[tool.mcheck.gate.check]]
name = "a deadlocks at its own limit"
spec = "a/counter.py"
expect = "deadlock"

[[tool.mcheck.gate.check]]
name = "b violates"
spec = "b/counter.py"
expect = "violates BelowTen"
trace_length = 10
"""


def _two_projects(root: Path) -> None:
    """Two spec files of the same name in two folders, each beside its own
    ``limits.py`` (the README's pattern): a counts to 3, b to 20."""
    for tag, limit in (("a", 3), ("b", 20)):
        (root / tag).mkdir()
        (root / tag / "counter.py").write_text(COUNTER_WITH_HELPER.format(tag=tag.upper()))
        (root / tag / "limits.py").write_text(f"LIMIT = {limit}\n")
    (root / "pyproject.toml").write_text(TWO_SPECS_MANIFEST)


@pytest.mark.parametrize(
    "args",
    [
        ["gate", "--jobs", "1"],
        ["gate", "--jobs", "2"],
        ["gate", "--only", "a*", "--only", "b*", "--jobs", "1"],
    ],
    ids=["jobs 1", "jobs 2", "only"],
)
def test_each_spec_file_imports_its_own_helpers_in_the_gate(
    tmp_path: Path, args: list[str]
) -> None:
    """The first spec's limits.py stayed in sys.modules and the second ran with it: the
    gate passed 'holds' for a spec mcheck run finds violated in 10 steps."""
    _two_projects(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "checker", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_each_spec_file_imports_its_own_helpers_in_the_pytest_plugin(tmp_path: Path) -> None:
    _two_projects(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--mcheck-gate"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout


def test_each_spec_file_imports_its_own_helpers_through_the_api(tmp_path: Path) -> None:
    """One process loads both, in both orders, several times: each run is the spec's
    own, as a fresh process gives it."""
    _two_projects(tmp_path)
    for order in (("a", "b", "a"), ("b", "a", "b")):
        for tag in order:
            cls = load_spec_class(str(tmp_path / tag / "counter.py"))
            result = check_spec(cls())
            if tag == "a":
                assert result.verdict is Verdict.DEADLOCK and result.stats.distinct == 4
            else:
                assert result.verdict is Verdict.VIOLATION and result.trace is not None
                assert result.trace.length == 10


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_refused_value_late_in_a_run_is_the_same_error_with_workers(
    tmp_path: Path, workers: str
) -> None:
    """With two workers a float reached late ended the run 'incomplete' (exit 3) where
    one process refuses it in one line (exit 2)."""
    body = """
    class S(NamedTuple):
        n: int
        x: Any


    class Floaty(Spec):
        check_deadlock = False

        def init(self):
            return [S(0, 0)]

        @action
        def Count(self, s):
            return s._replace(n=s.n + 1) if s.n < 3000 else None

        @action
        def Float(self, s):
            return s._replace(x=-0.0) if s.n == 2500 else None
    """
    path = tmp_path / "floaty.py"
    path.write_text(HEADER + textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, "-m", "checker", "run", str(path), "--workers", workers],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "variable x holds a float" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_value_model_table_is_the_one_documented_and_shown() -> None:
    """docs/engine.md's table is KIND_TABLE; each row's kind is what kind_of says of
    its example value, and 'shown as' is what mcheck shows."""
    from checker.values.kinds import KIND_TABLE, Kind, kind_of
    from checker.values.show import show

    docs = (Path(__file__).parent.parent / "docs" / "engine.md").read_text()
    for row in KIND_TABLE:
        # A pipe inside a table cell is escaped, or Markdown splits the cell there.
        cells = (cell.replace("|", "\\|") for cell in row)
        assert "| " + " | ".join(cells) + " |" in docs, row[0]

    class Entry(NamedTuple):
        term: int
        value: Any

    from tests.soundness.values import Point, Role

    s1 = ModelValue("s1", "Server", 0)
    examples = {
        "int": (3, Kind.INT),
        "bool": (True, Kind.BOOL),
        "str": ("a", Kind.STR),
        "None": (None, Kind.NONE),
        "model value": (s1, Kind.MODEL_VALUE),
        "enum member": (Role.LEADER, Kind.ENUM),
        "tuple": ((1, 2), Kind.TUPLE),
        "pvector": (pvector([1]), Kind.PVECTOR),
        "NamedTuple record": (Entry(1, s1), Kind.NAMEDTUPLE),
        "frozen dataclass record": (Point(0, 0), Kind.DATACLASS),
        "frozenset": (frozenset({1}), Kind.FROZENSET),
        "pset": (pset([1]), Kind.PSET),
        "immutables.Map": (immutables.Map({s1: 0}), Kind.MAP),
        "pmap": (pmap({1: 0}), Kind.PMAP),
        "pbag": (pbag([1, 1]), Kind.PBAG),
    }
    assert [r[0] for r in KIND_TABLE] == list(examples)
    assert {k for _, k in examples.values()} == set(Kind)
    for row in KIND_TABLE:
        value, kind = examples[row[0]]
        assert kind_of(type(value)) is kind
        shown = row[4].strip("`").split("...")[0].rstrip(", ")
        assert show(value).startswith(shown), (row[0], show(value))
