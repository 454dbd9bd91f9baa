"""checker.fastpath.adaptive: the cheaper expansion by measurement, with every handoff sound.

The switching itself is tested here with two stand-in expansions over the integers
and a clock that each expansion advances by its own cost per successor, so which one
wins is decided, not measured; that the real expansions agree through handoffs is
tests/test_differential.py's ("alternate") and tests/test_every_spec.py's."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import pytest

from checker import CompiledSpec, ConfigError, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.explore.expansion import ExpansionSettings
from checker.fastpath.adaptive import (
    CONFIRM_AFTER,
    EARLY,
    FIRST_TRIAL,
    GIVE_UP,
    MARGIN,
    SPACING,
    STEP,
    WINDOW,
    Later,
    MeasuredExpansion,
)


class Clock:
    """Time that passes only when an expansion says it works."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Stand:
    """An expansion of the states (n,) -> (2n,), (2n + 1,), by ``cost`` per
    successor: fast handles are the ints n, plain ones ``((n,), (), ())``."""

    def __init__(self, clock: Clock, cost: float, plain: bool) -> None:
        self.clock, self.cost, self.plain = clock, cost, plain
        self.expanded = 0

    def handle_of(self, state: tuple[int]) -> Any:
        return (state, (), ()) if self.plain else state[0]

    def state(self, handle: Any) -> tuple[int]:
        return handle[0] if self.plain else (handle,)  # type: ignore[no-any-return]

    def expand(self, ordinal: int, handle: Any) -> tuple[list[int], list[Any], None]:
        assert isinstance(handle, tuple) == self.plain  # only its own handles
        (n,) = self.state(handle)
        self.expanded += 1
        self.clock.now += 2 * self.cost
        kids = [self.handle_of((2 * n,)), self.handle_of((2 * n + 1,))]
        return [0, 0], [(k, 0, (), h, 0) for k, h in enumerate(kids)], None

    def check(self, key: Any, handle: Any, new: bool) -> None:
        return None

    def initial(self, seen: Any, store: Any) -> tuple[list[Any], None]:
        store((-1, 0), 1, self.handle_of((1,)))
        return [], None

    def layout(self, settings: ExpansionSettings) -> ExpansionSettings:
        return settings


def _run(fast_cost: float, plain_cost: float, states: int) -> tuple[MeasuredExpansion, list[int]]:
    clock = Clock()
    fast, plain = Stand(clock, fast_cost, False), Stand(clock, plain_cost, True)
    exp = MeasuredExpansion(fast, plain, "measured", clock)
    queue: deque[Any] = deque([exp.handle_of((1,))])
    seen: list[int] = []
    for _ in range(states):
        h = queue.popleft()
        seen.append(exp.state(h)[0])
        _, cands, _ = exp.expand(0, h)
        queue += [c[3] for c in cands]
    return exp, seen


#: States to the end of the first trial (both windows measured in full), and a run
#: that goes on past the trial that confirms a switch (the fast engine's warm-up,
#: then both windows) by a window.
TRIAL_END = FIRST_TRIAL + 2 * WINDOW
PAST_TRIAL = TRIAL_END + CONFIRM_AFTER + WINDOW // 2 + 3 * WINDOW


def test_the_plain_expansion_takes_over_where_it_is_cheaper() -> None:
    exp, seen = _run(fast_cost=1.0, plain_cost=0.5, states=PAST_TRIAL)
    assert exp.current is exp.plain and exp.switches == 1
    assert seen == list(range(1, PAST_TRIAL + 1))  # the same states, in BFS order
    assert exp.plain.expanded > TRIAL_END


def test_the_fast_engine_stays_where_the_plain_one_is_dearer_and_the_trial_is_short() -> None:
    exp, seen = _run(fast_cost=0.2, plain_cost=2.0, states=20 * FIRST_TRIAL)
    assert exp.current is exp.fast and exp.switches == 0
    assert seen == list(range(1, 20 * FIRST_TRIAL + 1))
    # Given up after one step of each trial (two trials in 40,000 states).
    assert exp.plain.expanded <= 2 * STEP


class Drift(Stand):
    """A stand-in whose work per state grows along the run (as a set of messages grows
    level by level), the same for both expansions."""

    def expand(self, ordinal: int, handle: Any) -> tuple[list[int], list[Any], None]:
        (n,) = self.state(handle)
        self.clock.now += 2 * self.cost * n / 500
        return super().expand(ordinal, handle)


def test_the_trial_compares_the_expansions_not_the_drift_of_the_run() -> None:
    """The plain expansion is 0.8 times the fast one's cost on the same states; the
    work per state grows along the run.  Measured one after the other, the later
    window looked dearer and the fast engine stayed; taking turns, the plain one is
    found cheaper."""
    clock = Clock()
    fast, plain = Drift(clock, 1.0, False), Drift(clock, 0.8, True)
    exp = MeasuredExpansion(fast, plain, "measured", clock)
    queue: deque[Any] = deque([exp.handle_of((1,))])
    for _ in range(PAST_TRIAL):
        _, cands, _ = exp.expand(0, queue.popleft())
        queue += [c[3] for c in cands]
    assert exp.current is exp.plain and exp.switches == 1


def test_a_clearly_cheaper_expansion_takes_over_without_waiting_for_full_windows() -> None:
    """GIVE_UP times cheaper over EARLY states of each: the switch comes then; less
    clearly cheaper, the trial goes on to its full windows."""
    states = FIRST_TRIAL + 2 * EARLY
    exp, _ = _run(fast_cost=1.0, plain_cost=1.0 / (GIVE_UP + 0.2), states=states)
    assert exp.current is exp.plain and exp.switches == 1
    assert exp.fast.expanded == FIRST_TRIAL + EARLY
    exp, _ = _run(fast_cost=1.0, plain_cost=1.0 / (GIVE_UP - 0.2), states=states)
    assert exp.switches == 0 and exp.phase == "trial"


def test_a_close_call_keeps_the_expansion_in_use() -> None:
    """Cheaper by less than the margin (MARGIN): no switch."""
    exp, _ = _run(fast_cost=1.0, plain_cost=MARGIN + 0.03, states=PAST_TRIAL)
    assert exp.current is exp.fast and exp.switches == 0
    exp, _ = _run(fast_cost=1.0, plain_cost=MARGIN - 0.03, states=PAST_TRIAL)
    assert exp.current is exp.plain


def test_an_unknown_policy_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCHECK_ENGINE_SWITCH", "sometimes")
    with pytest.raises(ConfigError, match="MCHECK_ENGINE_SWITCH='sometimes' is not one of"):
        check(_go_back_n(), Options())


def _go_back_n() -> CompiledSpec:
    cls = load_spec_class(str(Path(__file__).resolve().parents[1] / "bench" / "go_back_n.py"))
    return CompiledSpec(cls(Messages=4, Window=2, Capacity=3))


@pytest.mark.parametrize("policy", ["measured", "alternate"])
def test_a_run_past_several_trials_counts_the_same(
    policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """22,456 states: past the measured policy's first trials (a handoff each way at
    least where the plain expansion is tried), every 7 states with "alternate"."""
    monkeypatch.setenv("MCHECK_ENGINE_SWITCH", policy)
    got = check(_go_back_n(), Options(deadlock=False))
    plain = check(_go_back_n(), Options(deadlock=False, cache=False))
    figures = [
        (r.verdict, r.stats.distinct, r.stats.generated, r.stats.depth) for r in (got, plain)
    ]
    assert figures[0] == figures[1]
    assert got.stats.distinct == 22456 and got.stats.distinct > 4 * FIRST_TRIAL


class Blip(Stand):
    """The fast stand-in, dear for one stretch of the run only (a collection, a
    stretch spent waiting for the CPU) that falls on the first trial's measured
    window: the states numbered in ``dear`` (state n is the run's n-th expanded, the
    queue being breadth-first), whichever expansion takes its turn there."""

    def __init__(self, clock: Clock, cost: float, dear: range) -> None:
        super().__init__(clock, cost, False)
        self.dear = dear

    def expand(self, ordinal: int, handle: Any) -> tuple[list[int], list[Any], None]:
        out = super().expand(ordinal, handle)
        if self.state(handle)[0] in self.dear:
            self.clock.now += 40 * self.cost
        return out


def test_a_switch_on_a_blip_is_undone_soon() -> None:
    """One misleading trial (the fast engine dear on every turn it took) made the
    plain expansion take over; a trial soon after the switch (not SPACING times the
    states run later) brings the fast one back."""
    clock = Clock()
    fast = Blip(clock, 0.2, range(FIRST_TRIAL, FIRST_TRIAL + WINDOW))
    plain = Stand(clock, 1.0, True)
    exp = MeasuredExpansion(fast, plain, "measured", clock)
    queue: deque[Any] = deque([exp.handle_of((1,))])
    for _ in range(2 * PAST_TRIAL):
        _, cands, _ = exp.expand(0, queue.popleft())
        queue += [c[3] for c in cands]
    assert exp.switches == 2 and exp.current is exp.fast
    # Its window in each trial (give or take a turn) and the stretch between them;
    # never again after.
    assert exp.plain.expanded <= 2 * (WINDOW + STEP) + CONFIRM_AFTER


def _run_later(
    fast_cost: float, plain_cost: float, states: int, made: list[Any], serves: bool = True
) -> tuple[MeasuredExpansion, list[int]]:
    """As _run, without a fast engine at first: it is made (``made`` records the
    layout it was made with) once the run has stored NOTED states."""
    clock = Clock()
    plain = Stand(clock, plain_cost, True)

    def make(layout: Any) -> Any:
        made.append(layout)
        return Stand(clock, fast_cost, False) if serves else None

    later = Later(0, make)
    later.states = NOTED
    exp = MeasuredExpansion(None, plain, "measured", clock, later=later)
    queue: deque[Any] = deque()
    exp.initial(lambda fp: False, lambda key, fp, h: queue.append(h))
    seen: list[int] = []
    for o in range(states):
        h = queue.popleft()
        seen.append(exp.state(h)[0])
        _, cands, _ = exp.expand(o, h)
        for c in cands:  # (every successor is new: the states form a binary tree)
            exp.check((o, c[0]), c[3], True)
            queue.append(c[3])
    return exp, seen


#: Stored states (the stand-in's are all new) after which the fast engine is made.
NOTED = 200


def test_the_fast_engine_is_made_from_the_run_s_first_states_and_tried_at_once() -> None:
    """The plain expansion runs alone until the run has stored NOTED states, whose
    values make the fast engine's layout; a trial begins at once (the fast engine's
    caches warm first) and the cheaper fast engine takes over."""
    made: list[Any] = []
    exp, seen = _run_later(fast_cost=0.2, plain_cost=1.0, states=PAST_TRIAL, made=made)
    assert made == [(set(), {})]  # one engine, from the noted states' layout
    assert seen == list(range(1, PAST_TRIAL + 1))  # the same states, in BFS order
    assert exp.current is exp.fast and exp.switches == 1
    # NOTED stored states: the root and the children of the first NOTED / 2 states;
    # one more state, then the trial: the plain expansion's STEP states measured
    # before the warm-up, its EARLY states in turns, and one turn of the trial that
    # confirms the switch.
    built_at = NOTED // 2
    assert exp.plain.expanded == built_at + 1 + STEP + EARLY + STEP


def test_a_fast_engine_made_late_and_dearer_runs_no_more_than_its_trial() -> None:
    made: list[Any] = []
    exp, _ = _run_later(fast_cost=2.0, plain_cost=0.2, states=PAST_TRIAL, made=made)
    assert len(made) == 1 and exp.current is exp.plain and exp.switches == 0
    # Three turns of its warm-up (the first one's cost aside, two in a row cost
    # ABANDON times the plain expansion's), in its first trial and in the next
    # (SPACING times later: a first trial is biased against it); the one after is
    # far off.
    assert exp.fast.expanded == 2 * 3 * STEP


def test_where_the_fast_engine_cannot_serve_the_plain_expansion_runs_on() -> None:
    made: list[Any] = []
    exp, seen = _run_later(1.0, 1.0, states=4 * NOTED, made=made, serves=False)
    assert len(made) == 1 and exp.fast is None and exp.current is exp.plain
    assert seen == list(range(1, 4 * NOTED + 1))
    assert exp.layout(ExpansionSettings()) == ExpansionSettings()


def test_a_layout_asked_before_the_run_comes_from_a_pilot_of_its_own() -> None:
    """Workers need the layout before the run: the fast engine is made then, by its
    own pilot (``make(None)``)."""
    made: list[Any] = []
    clock = Clock()
    later = Later(0, lambda layout: made.append(layout) or Stand(clock, 1.0, False))
    exp = MeasuredExpansion(None, Stand(clock, 1.0, True), "measured", clock, later=later)
    assert exp.layout(ExpansionSettings()) == ExpansionSettings()
    assert made == [None] and exp.fast is not None


def test_the_run_s_first_states_give_the_pilot_s_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """On real specs, the layout the default engine makes its fast engine with (from
    the run's first stored states) is the one the pilot finds by its own
    breadth-first look: gossip's maps of fixed keys, Go-Back-N's (neither wide nor
    fixed-key variables)."""
    import checker.fastpath.adaptive as adaptive
    from checker.fastpath.pilot import pilot

    for path, consts in [
        ("gossip.py", {"Keys": 4}),
        ("go_back_n.py", {"Messages": 4, "Window": 2, "Capacity": 3}),
    ]:
        cls = load_spec_class(str(Path(__file__).resolve().parents[1] / "bench" / path))
        layouts: list[Any] = []
        real = adaptive.Later.__init__

        def spy(
            self: Any, nvars: int, make: Any, real: Any = real, layouts: list[Any] = layouts
        ) -> None:
            real(self, nvars, lambda layout: layouts.append(layout) or make(layout))

        with monkeypatch.context() as m:
            m.setattr(adaptive.Later, "__init__", spy)
            check(CompiledSpec(cls(**consts)), Options(deadlock=False))
        assert layouts == [pilot(CompiledSpec(cls(**consts)))]
        if path == "gossip.py":
            assert layouts[0][1]  # (a layout, not the trivial one)


class Cold(Stand):
    """A fast stand-in dear for its own first ``warm`` expansions (cold caches)."""

    def __init__(self, clock: Clock, cost: float, warm: int) -> None:
        super().__init__(clock, cost, False)
        self.warm = warm

    def expand(self, ordinal: int, handle: Any) -> tuple[list[int], list[Any], None]:
        if self.expanded < self.warm:
            self.clock.now += 40 * self.cost
        return super().expand(ordinal, handle)


def _run_cold(warm: int, states: int) -> tuple[MeasuredExpansion, int | None]:
    """A run whose fast engine, made from its first NOTED states, costs a fifth of
    the plain expansion's, except for its first ``warm`` states (Cold); the run
    and the state after which the switch came (None: none did)."""
    clock = Clock()
    plain = Stand(clock, 1.0, True)
    later = Later(0, lambda layout: Cold(clock, 0.2, warm))
    later.states = NOTED
    exp = MeasuredExpansion(None, plain, "measured", clock, later=later)
    queue: deque[Any] = deque()
    exp.initial(lambda fp: False, lambda key, fp, h: queue.append(h))
    switched_at = None
    for o in range(states):
        _, cands, _ = exp.expand(o, queue.popleft())
        for c in cands:
            exp.check((o, c[0]), c[3], True)
            queue.append(c[3])
        if switched_at is None and exp.switches:
            switched_at = exp.expanded
    return exp, switched_at


def test_a_warm_up_dear_in_its_first_two_turns_goes_on() -> None:
    """The warm-up's first turn pays for cold caches (or for the engine being made):
    however dear, it does not count, and one more dear turn alone does not cut the
    warm-up short; the cheaper fast engine takes over in its first trial."""
    exp, _ = _run_cold(2 * STEP, NOTED + WINDOW)
    assert exp.current is exp.fast and exp.switches == 1
    assert exp.fast.expanded >= WINDOW // 2 + EARLY


def test_a_fast_engine_that_loses_its_first_trial_cold_is_tried_again_soon() -> None:
    """The fast engine just made loses its first trial (dear while cold); the next
    trial comes SPACING times the states later, not SPACING squared, and it takes
    over then."""
    exp, switched_at = _run_cold(3 * STEP, 8 * NOTED * SPACING)
    assert exp.current is exp.fast and exp.switches == 1
    # The first trial begins after NOTED // 2 + 1 states: the plain expansion's STEP
    # states, then the warm-up, given up after three turns (cold for all three,
    # the last two cost ABANDON times the plain expansion's); the next begins SPACING
    # times later (trials are never before FIRST_TRIAL) and switches after STEP
    # states of the plain expansion, the warm-up and two turns of each.
    first_end = NOTED // 2 + 1 + STEP + 3 * STEP
    assert switched_at == max(FIRST_TRIAL, first_end) * SPACING + STEP + WINDOW // 2 + 2 * EARLY
