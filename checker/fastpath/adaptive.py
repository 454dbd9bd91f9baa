"""The fast engine where its caches pay, the plain expansion where they do not:
decided per run from what each costs, measured while running (issue 27).

The fast engine's caches (:mod:`checker.fastpath`) repay their bookkeeping only when
they hit often: on raft.tla they make a run several times faster, on a spec whose
actions rarely meet the same slot values twice they are a tax.  Which one a spec is
cannot be told from its text, so :class:`MeasuredExpansion` holds both expansions and
times them on the run itself.  The plain expansion starts, and the run's first
stored states (as many as the pilot would look at) decide the fast engine's layout
(:class:`Later`); the fast engine is then made and tried at once.  (Given a layout, a
restart's or a worker's, the fast engine starts and the first trial comes after 500
expanded states.)  At trials spaced out geometrically the two take turns on short
slices of the queue until each has expanded a window of states, or one is clearly
cheaper already.  The cheaper one
per generated state (successors, fingerprints and the invariants of new states, the
work the two do differently) carries on; a margin keeps it from flapping on noise.
Taking turns matters: the work per state drifts along a breadth-first run (sets of
messages grow level by level), so two windows one after the other compared the drift
as much as the expansions (2PC with timeouts kept the fast engine on such a
comparison and ran 18% slower than with the plain one).

Why this is sound: the two expansions compute the same successors, in the same order,
with the same fingerprints (the differential tests hold them to that), so the store,
the counts, the depths and the counterexample do not depend on which one expanded a
state.  Each handle stays with the expansion that made it: a state queued by one is
handed to the other through the state object (:meth:`state`, :meth:`handle_of`) when
the other expands it, so a switch needs no pass over the queue.  Which expansion ran
when depends on timing; nothing a run reports does, except which of the fast engine's
notes it gave (a note comes from states the fast engine saw).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from checker.explore.expansion import (
    Candidate,
    Event,
    ExpansionLike,
    ExpansionSettings,
    Key,
    NewState,
)
from checker.explore.kinds import SwitchPolicy
from checker.fastpath import pilot
from checker.fastpath.pilot import LayoutNotes

#: Expanded states before the first trial (the fast engine's caches fill first).
#: 500 is enough: raft.tla's fast engine costs 4.1 us per successor there against
#: the plain one's 15.6 (at 2,000: 4.2 against 15.1), and a run the plain
#: expansion serves better reaches it sooner (at 2,000, the fast engine's first
#: 3,200 states at twice the plain cost were 4% of a Go-Back-N run).
FIRST_TRIAL = 500
#: Each later trial comes after this many times as many expanded states.
SPACING = 4
#: States expanded in a window: long enough to average over a few chunks' variety.
WINDOW = 600
#: The other expansion takes over only when cheaper by this factor (noise, warm-up;
#: taking turns in a trial keeps the noise small: gossip's plain expansion, 15%
#: faster over whole runs, measured 7-12% cheaper in its trials).
MARGIN = 0.92
#: In a trial the two take turns every STEP states; it is given up once the other one
#: is this many times dearer: on raft.tla the plain expansion costs 5 to 10 times the
#: fast one per state.
STEP = 25
GIVE_UP = 1.5
#: A trial switches at once to an expansion found GIVE_UP times cheaper over this many
#: states of each (two turns: one turn is more easily misled by a collection).
EARLY = 2 * STEP

#: The fast engine's warm-up is cut short, and the trial given up, when two of its
#: turns running (after its first, which pays for cold caches or for being made)
#: each cost this many times the incumbent's last STEP states per successor: on
#: Go-Back-N it cost 5-9 times the plain expansion there (its whole trials were 5-12%
#: of the run, 300 of their 325 states the warm-up); where it wins after warming
#: (raft.tla's second trial) those turns cost 1-1.4 times the plain one's.
ABANDON = 3.0

#: After a switch, the next trial starts this many states later (see _end_trial).
CONFIRM_AFTER = 2 * WINDOW

#: With the "alternate" policy, the expansions take turns every this many states (a
#: small prime: every kind of handoff, on every small spec the tests generate).
ALTERNATE_EVERY = 7

#: The phases in which the clock is read: a trial's turns, the incumbent's STEP
#: states before a warm-up, the warm-up's turns.
MEASURED_PHASES = ("trial", "base", "warm")

#: Switching policies: by measured cost (the default), every window regardless of
#: cost (the differential tests: every handoff exercised), or never.
POLICIES = tuple(SwitchPolicy)


class MeasuredExpansion:
    """:class:`checker.explore.expansion.ExpansionLike` over two expansions, ``fast`` (handles
    are ints, or tuples whose first item is an int) and ``plain`` (handles are
    ``(state, values, terms)``): the cheaper one, by measurement, expands.

    A trial is, where the other one is the fast engine, ``STEP`` states of the plain
    expansion measured, then ``WINDOW // 2`` states of the fast engine (its caches
    warm again after a long rest), cut short where its turns cost ``ABANDON`` times
    the plain expansion's; then the two take turns every ``STEP`` states, each
    measured, until each has expanded ``WINDOW`` states (or one of them is clearly
    dearer already)."""

    def __init__(
        self,
        fast: Any,
        plain: Any,
        policy: str = "measured",
        # CPU time of this thread, not wall time: with workers the processes share
        # the cores, and a window in which a worker waited for the CPU made the
        # faster expansion look dearer (a 2-worker liveness run took 35 s or 80 s
        # depending on which expansion such a window picked).
        clock: Callable[[], float] = time.thread_time,
        later: Later | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown switching policy {policy!r}")
        self.fast = fast
        self.plain = plain
        self.policy = policy
        self.clock = clock
        self.current: Any = fast
        # Without a fast engine yet, the plain expansion starts and its first stored
        # states decide the fast engine's layout (see Later).
        self.later = later
        if fast is None:
            if later is None or policy != "measured":
                raise ValueError("a fast engine, or how to make one from the run's states")
            self.current = plain
        self.expanded = 0
        self.spent = 0.0  # in the measured stretch
        self.generated = 0
        # "run", then per trial: to the fast engine "base" (the plain expansion
        # measured) and "warm", then "trial"
        self.phase = "run"
        self.next_mark = FIRST_TRIAL if policy == "measured" else ALTERNATE_EVERY
        if policy == "fast":
            self.next_mark = 1 << 62
        self.trial_at = FIRST_TRIAL
        self.incumbent: Any = self.current  # the expansion in use when a trial began
        if fast is None:
            self.phase, self.next_mark = "pilot", 1 << 62  # (see _built)
        # Per trial: [seconds, successors, states] of the incumbent and of the other.
        self.mine = [0.0, 0, 0]
        self.theirs = [0.0, 0, 0]
        self.before = 0.0  # the incumbent's cost per successor in the last trial
        self.on_fast = self.current is fast  # self.current is self.fast
        self.timing = False  # whether the clock is read now (in measured windows)
        self.switches = 0
        self.cold = False  # the fast engine was just made (see _built)
        # The incumbent's cost per successor over the STEP states before a warm-up
        # (None: too few successors to tell), and the warm-up's turns so far and how
        # many of them in a row cost ABANDON times that.
        self.base: float | None = None
        self.warmed = 0
        self.over = 0

    # -- which expansion a handle belongs to -------------------------------------------
    def _owner(self, handle: Any) -> Any:
        if handle.__class__ is int or handle[0].__class__ is int:
            return self.fast
        return self.plain

    # -- the interface -------------------------------------------------------------------
    def layout(self, settings: ExpansionSettings) -> ExpansionSettings:
        """The settings a worker's expansion should use (the fast engine's layout;
        asked before the run, it is decided by a pilot of its own)."""
        if self.later is not None:
            self._built(self.later.make(None))
        if self.fast is None:  # (the fast engine cannot serve the model)
            return settings
        return self.fast.layout(settings)  # type: ignore[no-any-return]

    def initial(
        self, seen: Callable[[int], bool], store: Callable[[Key, int, Any], Any]
    ) -> tuple[list[NewState], Event | None]:
        """The initial states, by the current expansion."""
        later = self.later
        if later is not None:

            def noted(key: Key, fp: int, handle: Any) -> Any:
                out = store(key, fp, handle)
                later.notes.note(handle[1], handle[2])
                return out

            return self.current.initial(seen, noted)  # type: ignore[no-any-return]
        return self.current.initial(seen, store)  # type: ignore[no-any-return]

    def expand(self, ordinal: int, handle: Any) -> tuple[list[int], list[Candidate], Event | None]:
        """Successors of one state, by the current expansion; every so often the
        other one is tried on a window of states and kept if it is cheaper.

        Paid on every state of a run, so written out: the ownership test inline, and
        the clock read only inside a measured window."""
        current = self.current
        if (handle.__class__ is int or handle[0].__class__ is int) is not self.on_fast:
            handle = current.handle_of(self._other().state(handle))
        if self.timing:
            clock = self.clock
            t0 = clock()
            out = current.expand(ordinal, handle)
            self.spent += clock() - t0
            # (Per successor generated, its action: the plain expansion gives no
            # candidate for a successor already known, see screen.)
            self.generated += len(out[0])
        else:
            out = current.expand(ordinal, handle)
        self.expanded += 1
        if self.expanded >= self.next_mark:
            self._window_ends()
            self.on_fast = self.current is self.fast
            self.timing = self.phase in MEASURED_PHASES
        return out  # type: ignore[no-any-return]

    def check(self, key: Key, handle: Any, new: bool) -> Event | None:
        """The invariants on one generated state, by the expansion that made it
        (timed within a measured window: checking is work the two do differently)."""
        owner = self.fast if handle.__class__ is int or handle[0].__class__ is int else self.plain
        if new and self.later is not None:
            self._note(handle)
        if not self.timing:
            return owner.check(key, handle, new)  # type: ignore[no-any-return]
        t0 = self.clock()
        ev = owner.check(key, handle, new)
        self.spent += self.clock() - t0
        return ev  # type: ignore[no-any-return]

    def check_new(self, ordinal: int, cands: list[Candidate]) -> tuple[int, Event | None]:
        """The invariants on a state's new successors, by the expansion that made them
        (the one that expanded the state), timed as :meth:`check` is."""
        if not cands:
            return 0, None
        h = cands[0][3]
        owner = self.fast if h.__class__ is int or h[0].__class__ is int else self.plain
        if self.later is not None:
            for c in cands:
                if self.later is None:
                    break
                self._note(c[3])
        if not self.timing:
            return owner.check_new(ordinal, cands)  # type: ignore[no-any-return]
        t0 = self.clock()
        out = owner.check_new(ordinal, cands)
        self.spent += self.clock() - t0
        return out  # type: ignore[no-any-return]

    def state(self, handle: Any) -> Any:
        """The state a handle stands for."""
        return self._owner(handle).state(handle)

    def handle_of(self, state: Any) -> Any:
        """The current expansion's handle of a state object."""
        return self.current.handle_of(state)

    def fp_of(self, handle: Any) -> int:
        """The fingerprint of a handle's state."""
        return self._owner(handle).fp_of(handle)  # type: ignore[no-any-return]

    def lanes_of(self, handle: Any) -> tuple[int, ...]:
        """The fingerprint of a handle's state under each renaming."""
        return self._owner(handle).lanes_of(handle)  # type: ignore[no-any-return]

    def fingerprint_of(self, state: Any) -> int:
        """A state's fingerprint (the same by either expansion)."""
        return self.current.fingerprint_of(state)  # type: ignore[no-any-return]

    def screen(self, visited: Any) -> None:
        """Both expansions may leave out successors ``visited`` holds (see
        :meth:`checker.explore.expansion.Expansion.screen`)."""
        if self.fast is not None:
            self.fast.screen(visited)
        self.plain.screen(visited)

    # -- the fast engine made from the run's first states ------------------------------
    def _note(self, handle: Any) -> None:
        """A new state (a plain handle: state, values, terms) for the layout; with
        enough of them, the fast engine is made and tried at once."""
        later = self.later
        assert later is not None
        notes = later.notes
        notes.note(handle[1], handle[2])
        if notes.count >= later.states:
            self._built(later.make(later.notes.layout()))

    def _built(self, fast: Any) -> None:
        """The fast engine is made (None: it cannot serve this model, and the plain
        expansion runs on alone): a trial of it begins with the next state (its caches
        warm first, then the two take turns, as in every trial)."""
        self.later = None
        if fast is None:
            self.phase, self.next_mark = "plain", 1 << 62
            return
        self.fast = fast
        self.phase, self.next_mark = "run", self.expanded + 1
        self.trial_at = max(self.trial_at, self.expanded + 1)
        # Its first trial is biased against it: its caches are cold, and every state
        # it meets was queued by the plain expansion.  Losing that trial early puts
        # the next one off by the usual spacing, not its square: raft.tla (no
        # symmetry, MaxLogLen 0) lost its first trial at 1,700 states and ran plain,
        # at 4 times the cost, until the next at 33,000 (30.6 s against 25.5 s with
        # the fast engine from the start); with the next at 8,300 it switched there
        # (22.4 s).
        self.cold = True

    # -- the measurement -------------------------------------------------------------
    def _cost(self) -> float:
        cost = self.spent / max(1, self.generated)
        self.spent = 0.0
        self.generated = 0
        return cost

    def _other(self) -> Any:
        """The expansion not in use."""
        return self.plain if self.current is self.fast else self.fast

    def _window_ends(self) -> None:
        if self.policy == "alternate":
            self.current = self._other()
            self.switches += 1
            self.next_mark = self.expanded + ALTERNATE_EVERY
            return
        phase = self.phase
        if phase == "run":  # a trial begins, with the other expansion
            self.incumbent = self.current
            self.mine, self.theirs = [0.0, 0, 0], [0.0, 0, 0]
            self._cost()
            if self.current is self.plain:
                # The fast engine's caches first warm again; the plain expansion's
                # cost over STEP states first says what the warm-up is held to.
                self.phase, self.next_mark = "base", self.expanded + STEP
            else:
                self.current = self._other()
                self.phase, self.next_mark = "trial", self.expanded + STEP
        elif phase == "base":
            enough = self.generated >= STEP  # (states without successors tell nothing)
            cost = self._cost()
            self.base = cost if enough else None
            self.current = self.fast
            self.warmed = self.over = 0
            self.phase, self.next_mark = "warm", self.expanded + STEP
        elif phase == "warm":  # a turn of the warm-up ends
            cost = self._cost()
            self.warmed += 1
            # Its first turn pays for cold caches (or for the engine being made).
            over = self.warmed > 1 and self.base is not None and cost > ABANDON * self.base
            self.over = self.over + 1 if over else 0
            if self.over >= 2:
                self._end_trial(switch=False, spacing=SPACING if self.cold else SPACING * SPACING)
            elif self.warmed * STEP >= WINDOW // 2:
                self.phase, self.next_mark = "trial", self.expanded + STEP
            else:
                self.next_mark = self.expanded + STEP
        else:  # a slice of the trial ends: booked to the expansion that ran it
            book = self.mine if self.current is self.incumbent else self.theirs
            book[0] += self.spent
            book[1] += self.generated
            book[2] += STEP
            self._cost()
            mine = self.mine[0] / max(1, self.mine[1])
            theirs = self.theirs[0] / max(1, self.theirs[1])
            if self.mine[2] and self.theirs[2] and theirs > mine * GIVE_UP:
                # Clearly dearer already: the trial ends early, and the next is far off
                # (not so far after the first trial of a fast engine just made: see
                # _built).
                self._end_trial(switch=False, spacing=SPACING if self.cold else SPACING * SPACING)
            elif self.mine[2] >= EARLY and self.theirs[2] >= EARLY and mine > theirs * GIVE_UP:
                # Clearly cheaper already: the switch need not wait for full windows
                # (gossip's fast engine costs 2.8 times the plain one per state, and
                # its half of a full trial was 3% of the run).  A blip that misled it
                # is undone by the trial that confirms every switch.
                self._end_trial(switch=True, spacing=SPACING)
            elif self.theirs[2] >= WINDOW and self.mine[2] >= WINDOW:
                self._end_trial(switch=theirs < mine * MARGIN, spacing=SPACING)
            else:  # the other's turn
                self.current = self._other()
                self.next_mark = self.expanded + STEP
        self.before = self.mine[0] / max(1, self.mine[1])

    def _end_trial(self, switch: bool, spacing: int) -> None:
        self.cold = False
        self.spent = 0.0
        self.generated = 0
        if switch:
            self.switches += 1
            self.current = self._challenger()
            # A switch is put to the test again soon: one trial can mislead (a
            # collection, a stretch spent waiting for the CPU), and a wrong switch
            # would otherwise stand for SPACING times the states run so far (a
            # 2-worker run took 80 s instead of 35 s when a worker kept the plain
            # expansion from 46,000 states on).
            self.phase, self.next_mark = "run", self.expanded + CONFIRM_AFTER
            return
        self.current = self.incumbent
        self.trial_at = max(self.trial_at, self.expanded) * spacing
        self.phase, self.next_mark = "run", self.trial_at

    def _challenger(self) -> Any:
        """The expansion a trial tries against the incumbent."""
        return self.plain if self.incumbent is self.fast else self.fast


class Later:
    """How to make the fast engine once the run has stored its first states: they
    are noted (:class:`LayoutNotes`, what the pilot would note) and ``make`` builds the
    engine with the layout they give (None: by a pilot of its own), or gives None
    where the engine cannot serve the model.

    Why: the pilot explored its own first few thousand states before the run (gossip:
    0.05-0.1 s of a 1.3 s run), and the fast engine then ran the run's start while
    its caches were cold, 3-5 times the plain expansion's cost per state there.  A
    run whose states the plain expansion serves better (gossip, Go-Back-N) paid
    both; one the fast engine serves better pays a few thousand states at the plain
    expansion's cost."""

    __slots__ = ("make", "notes", "states")

    def __init__(
        self, nvars: int, make: Callable[[tuple[set[int], dict[int, Any]] | None], Any]
    ) -> None:
        self.notes = LayoutNotes(nvars)
        self.make = make
        #: Distinct states noted before the engine is made: as many as the pilot's.
        self.states = pilot.PILOT_STATES


def measured(fast: Any, plain: Any, settings: ExpansionSettings) -> ExpansionLike:
    """Both expansions behind one, switching by ``settings.switching``."""
    return MeasuredExpansion(fast, plain, settings.switching)


def measured_later(later: Later, plain: Any) -> ExpansionLike:
    """The plain expansion first; the fast engine made from the run's first states,
    then both behind one, switching by measured cost."""
    return MeasuredExpansion(None, plain, SwitchPolicy.MEASURED, later=later)
