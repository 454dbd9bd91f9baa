"""The visited sets answer exactly as a Python set of the same fingerprints: the compact
one (FingerprintSet) and the one that numbers states for a recorded graph
(OrdinalStore), through the store interface the core uses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checker.explore.expansion as expansion
import checker.store.fingerprints as store
from bench.go_back_n_plain import explore
from checker import Options, check_spec
from checker.authoring.loader import load_spec_class
from checker.store.fingerprints import FingerprintSet, FingerprintStore, OrdinalStore

FP = st.integers(min_value=0, max_value=(1 << 64) - 1)


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(st.lists(FP, max_size=40), max_size=30),
    probes=st.lists(FP, max_size=40),
    block=st.sampled_from([1, 3, 16, 64]),
)
def test_fingerprint_set_is_a_set(batches: list[list[int]], probes: list[int], block: int) -> None:
    # Merge after a handful, so the sorted array, the recent set and merges all serve;
    # small blocks put candidates at every block edge and in the partial last block.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "RECENT_MIN", 4)
        mp.setattr(store, "BLOCK", block)
        _check(batches, probes)


def _check(batches: list[list[int]], probes: list[int]) -> None:
    fs = FingerprintSet()
    oracle: set[int] = set()
    for batch in batches:
        fs.settle()
        known = fs.known(batch)
        for fp, k in zip(batch, known, strict=True):
            # known() speaks for the sorted array; recent covers the rest.
            seen = k or fp in fs.recent
            assert seen == (fp in oracle)
            if not seen:  # as the explorer does: only new fingerprints are added
                fs.add(fp)
                oracle.add(fp)
        assert len(fs) == len(oracle)
    for fp in [*probes, 0, (1 << 64) - 1]:
        assert (fp in fs) == (fp in oracle)
    assert all(fp in fs for fp in oracle)
    # Neighbours of stored fingerprints, at and around the blocks' edges.
    near = [v + d for v in fs.frozen.tolist() for d in (-1, 1) if 0 <= v + d < 1 << 64]
    assert fs.known(near) == [v in oracle and v not in fs.recent for v in near]


@settings(max_examples=120, deadline=None)
@given(
    batches=st.lists(st.lists(st.integers(0, 60) | FP, max_size=40), max_size=30),
    kind=st.sampled_from(["set", "set in Python", "ordinals"]),
    block=st.sampled_from([1, 3, 16, 64]),
)
def test_a_batch_add_says_which_are_new(batches: list[list[int]], kind: str, block: int) -> None:
    """add_batch marks a batch visited in order and says, per candidate, whether it was
    new (not held before, nor earlier in the batch); the ordinal store numbers the new
    ones in that order.  The compact set answers so with its batch test in C (where
    the extension is built) and with the Python reference; small blocks put
    candidates at every block edge and in the partial last block."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "RECENT_MIN", 4)
        mp.setattr(store, "BLOCK", block)
        fs: FingerprintStore = FingerprintSet() if kind != "ordinals" else OrdinalStore()
        if kind == "set in Python":
            fs._native = None  # type: ignore[union-attr]
        oracle: dict[int, int] = {}
        for batch in batches:
            want = []
            for fp in batch:
                want.append(fp not in oracle)
                oracle.setdefault(fp, len(oracle))
            assert fs.add_batch(batch) == want
            assert len(fs) == len(oracle)
        for fp, n in oracle.items():
            assert fp in fs
            if isinstance(fs, OrdinalStore):
                assert fs.ordinal(fp) == n


@pytest.mark.parametrize("bad", [-1, -(1 << 40), 1 << 64, 1 << 90])
def test_the_c_batch_test_refuses_an_int_that_is_no_fingerprint(bad: int) -> None:
    """Outside [0, 2^64) an int is no fingerprint: the C batch test, which reads an
    int in range by its digits, still refuses one outside (as the checked conversion
    does), beside fingerprints at both ends of the range that it takes."""
    fs = FingerprintSet()
    if fs._native is None:
        pytest.skip("the C core is not built here")
    assert fs.add_batch([0, (1 << 64) - 1, 1 << 63]) == [True, True, True]
    with pytest.raises(OverflowError):
        fs.add_batch([5, bad])
    assert fs.add_batch([(1 << 64) - 1, 1 << 30, (1 << 30) - 1]) == [False, True, True]


@settings(max_examples=60, deadline=None)
@given(
    levels=st.lists(st.lists(FP, max_size=40), max_size=20),
    recent=st.lists(FP, max_size=10),
    probes=st.lists(FP, max_size=40),
)
def test_array_operations_agree_with_a_set(
    levels: list[list[int]], recent: list[int], probes: list[int]
) -> None:
    # What a distributed partition does: a level's new fingerprints merged at once,
    # membership asked for a whole array (also with some in the recent set).
    import numpy as np

    fs = FingerprintSet()
    oracle: set[int] = set()
    for level in levels:
        batch = np.array(level, dtype=np.uint64)
        hits = fs.contains(batch).tolist()
        assert hits == [fp in oracle for fp in level]
        new = np.unique(batch[~np.array(hits, dtype=bool)]) if level else batch
        fs.merge(new)
        oracle.update(new.tolist())
    for fp in recent:
        if fp not in oracle:
            fs.add(fp)
            oracle.add(fp)
    ask = [*probes, *recent[:3], 0, (1 << 64) - 1]
    assert fs.contains(np.array(ask, dtype=np.uint64)).tolist() == [fp in oracle for fp in ask]
    assert bool((fs.frozen[1:] > fs.frozen[:-1]).all()) and len(fs) == len(oracle)


@settings(max_examples=120, deadline=None)
@given(
    rounds=st.lists(
        st.lists(st.lists(st.none() | st.integers(0, 60) | FP, max_size=12), max_size=6),
        max_size=12,
    ),
    kind=st.sampled_from(["set", "set in Python", "ordinals"]),
    block=st.sampled_from([1, 3, 64]),
)
def test_a_group_add_picks_each_groups_new_items(
    rounds: list[list[list[int | None]]], kind: str, block: int
) -> None:
    """add_groups (the explorer's candidates, grouped by parent, the fingerprint at
    index 4, None outside the constraint) marks every fingerprint visited in order
    and returns, per group, exactly the items whose fingerprint was new: the very
    item objects, in order, None ones passed over; for the compact set in C and in
    Python, and for the ordinal store, whose new ones take the next ordinals."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "RECENT_MIN", 4)
        mp.setattr(store, "BLOCK", block)
        fs: FingerprintStore = FingerprintSet() if kind != "ordinals" else OrdinalStore()
        if kind == "set in Python":
            fs._native = None  # type: ignore[union-attr]
        oracle: dict[int, int] = {}
        for groups in rounds:
            items = [[(j, "a", (), object(), fp) for j, fp in enumerate(g)] for g in groups]
            want = []
            for group in items:
                fresh = []
                for item in group:
                    fp = item[4]
                    if fp is not None and fp not in oracle:
                        oracle[fp] = len(oracle)
                        fresh.append(item)
                want.append(fresh)
            got = fs.add_groups(items, 4)
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                assert len(g) == len(w) and all(a is b for a, b in zip(g, w, strict=True))
            assert len(fs) == len(oracle)
        if isinstance(fs, OrdinalStore):
            assert all(fs.ordinal(fp) == n for fp, n in oracle.items())


def test_the_batch_test_runs_in_c_where_the_extension_is_built() -> None:
    """The test above covers the C batch test only if the store uses it."""
    from checker.values.native import NATIVE

    if NATIVE is None:
        pytest.skip("the C core is not built here (or MCHECK_PURE=1)")
    assert FingerprintSet()._native is NATIVE


def test_merges_keep_the_array_sorted_and_small() -> None:
    fs = FingerprintSet()
    values = [(i * 0x9E3779B97F4A7C15) & ((1 << 64) - 1) for i in range(3 * store.RECENT_MIN)]
    for v in values:
        fs.add(v)
        fs.settle()
    assert len(fs) == len(values)
    assert len(fs.recent) <= max(store.RECENT_MIN, len(fs.frozen) // 8)
    arr = fs.frozen
    assert bool((arr[1:] > arr[:-1]).all())
    assert fs.known(values[:100]) == [v in set(arr.tolist()) for v in values[:100]]


def test_trace_table_extend_equals_records() -> None:
    import numpy as np

    from checker.store.fingerprints import TraceTable

    rows = [(2**64 - 1, -1, 0), (5, 0, 3), (2**63, 1, 2**32 - 1)]
    one, many = TraceTable(), TraceTable()
    for fp, parent, choice in rows:
        one.record(fp, parent, choice)
    many.record(*rows[0])
    fps, parents, choices = (np.array([r[i] for r in rows[1:]]) for i in range(3))
    many.extend(fps.astype(np.uint64), parents, choices)
    assert (one.fps, one.parent, one.choice) == (many.fps, many.parent, many.choice)


@pytest.mark.parametrize("batch", [1, 5, store.BATCH])
def test_the_explorer_asks_the_store_a_batch_at_a_time(
    monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """The explorer expands as many states per search as the store asks for
    (FingerprintStore.batch), and the run's figures do not depend on how many."""
    asked: list[int] = []
    add_groups = FingerprintSet.add_groups

    def spy(self: FingerprintSet, groups: list[list[object]], pos: int) -> list[list[object]]:
        asked.append(len(groups))
        return add_groups(self, groups, pos)

    monkeypatch.setattr(FingerprintSet, "add_groups", spy)
    monkeypatch.setattr(store, "BATCH", batch)
    monkeypatch.setattr(store, "NUMPY_BATCH", batch)
    consts = {"Messages": "3", "Window": "2"}
    spec = load_spec_class(str(Path(__file__).parent.parent / "bench" / "go_back_n.py"))
    got = check_spec(spec(**consts), Options(deadlock=False))
    # (the same model by hand, tuples in a set: the independent figures)
    assert (got.stats.distinct, got.stats.generated) == explore(consts)
    assert max(asked) == batch and len(asked) >= got.stats.distinct // batch


def test_the_explorer_hands_the_store_only_successors_it_does_not_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the store's view (Expansion.screen), a known successor never reaches the
    store: every candidate it is asked about is new to it or a duplicate within the
    batch, far fewer than the successors, and the run's figures are the hand-made
    twin's.  Without the view, most candidates are known ones (the test is not idle)."""
    consts = {"Messages": "3", "Window": "2"}
    spec = load_spec_class(str(Path(__file__).parent.parent / "bench" / "go_back_n.py"))
    add_groups = FingerprintSet.add_groups
    # (the first expansions run the Python loop, which checks the actions for
    # mutation: from the first one on the C loop runs here)
    monkeypatch.setattr(expansion, "MUTATION_CHECKS", 0)

    def run() -> tuple[int, int, int]:
        asked = held = 0

        def spy(self: FingerprintSet, groups: list[list[object]], pos: int) -> list[list[object]]:
            nonlocal asked, held
            self.settle()  # (what add_groups does first: the same answers after it)
            fps = [item[pos] for g in groups for item in g if item[pos] is not None]  # type: ignore[index]
            asked += len(fps)
            held += sum(1 for fp in fps if fp in self)
            return add_groups(self, groups, pos)

        with monkeypatch.context() as m:
            m.setattr(FingerprintSet, "add_groups", spy)
            got = check_spec(spec(**consts), Options(deadlock=False, cache=False))
        assert (got.stats.distinct, got.stats.generated) == explore(consts)
        return asked, held, got.stats.generated

    asked, held, generated = run()
    if store.NATIVE is None:  # (the numpy path has no view: nothing is left out)
        assert FingerprintSet().view() is None
        return
    assert held == 0
    assert asked < generated / 3
    monkeypatch.setattr(FingerprintSet, "view", lambda self: None)
    asked_all, held_all, _ = run()
    assert held_all > asked_all / 2


def test_the_view_is_made_again_only_when_the_set_is_rearranged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The C view (its buffers taken once) serves batch after batch while only the
    recent set grows, and is made again when a merge or a load replaces the arrays and
    the recent set: a view kept past them would read arrays the set no longer holds."""
    monkeypatch.setattr(store, "RECENT_MIN", 4)
    fs = FingerprintSet()
    if fs._native is None:
        pytest.skip("the C core is not built here")
    fs.add_batch([1, 2, 3])
    first = fs.view()
    fs.add_batch([4])  # 4 recent: a merge is due at the next settle
    assert fs.view() is not first  # (merged: recent is a new set)
    again = fs.view()
    assert again is fs.view() and again.recent is fs.recent
    fs.add_batch([9])  # (recent grows in place: the same view sees it)
    assert fs.view() is again
    fs.load(np.array([7, 8], dtype=np.uint64))
    assert fs.view() is not again and fs.view().recent is fs.recent


@settings(max_examples=80, deadline=None)
@given(
    adds=st.lists(st.integers(0, 3000) | FP | st.sampled_from([0, (1 << 64) - 1]), max_size=3000),
    probes=st.lists(FP | st.integers(-5, 3000), max_size=60),
)
def test_the_c_table_of_recent_fingerprints_is_a_set(adds: list[int], probes: list[int]) -> None:
    """FpSet (FingerprintSet's recent fingerprints in C) answers as a Python set of the
    same ints: whether each add was new, membership (0, 2^64 - 1, numbers that are
    no fingerprint), its size, its members; past its first 1,024 slots it grows."""
    if store.NATIVE is None:
        pytest.skip("the C core is not built here")
    table, oracle = store.NATIVE.FpSet(), set()
    for fp in adds:
        assert table.add(fp) is (fp not in oracle)
        oracle.add(fp)
    assert len(table) == len(oracle)
    for fp in probes + adds[:50] + [-1, 1 << 64, "7"]:
        assert (fp in table) is (fp in oracle)
    assert sorted(np.frombuffer(table.members(), dtype=np.uint64).tolist()) == sorted(oracle)
    with pytest.raises(OverflowError):
        table.add(1 << 64)


def test_a_store_s_recent_fingerprints_live_in_the_c_table() -> None:
    """Where the extension is built, the recent fingerprints are kept in its table (the
    C searches read nothing else), and after a merge too; the Python reference keeps
    a Python set."""
    fs = FingerprintSet()
    if fs._native is None:
        assert isinstance(fs.recent, set)
        return
    assert type(fs.recent) is store.NATIVE.FpSet
    fs.add_batch(list(range(1, store.RECENT_MIN + 1)))
    fs.settle()
    assert len(fs.frozen) == store.RECENT_MIN and type(fs.recent) is store.NATIVE.FpSet
