"""Random simulation (TLC's ``-simulate``): random behaviours of a model, checked as
they go, for state spaces too large to exhaust.

Each behaviour starts from a random initial state and takes a uniformly random
successor at each step, up to ``depth`` states.  Behaviour ``b`` of seed ``n`` draws
from ``random.Random(f"{n}:{b}")`` (a string seed is hashed with SHA-512, not with
Python's salted ``hash``), and a model's successors come in a fixed order, so a seed
gives the same behaviours in every process, and one behaviour can be replayed alone.

What is checked, in TLC's terms:

* every state a behaviour visits, and every successor chosen outside the state
  constraint (which ends the behaviour), against the selected invariants;
* a state with no successor at all is a deadlock (unless deadlock checking is off,
  when the behaviour ends there);
* temporal properties on the *lasso-shaped* behaviours: whenever a behaviour comes
  back to a state it visited, the loop it closed is a cycle, and whenever it is in a
  state where no fair action is enabled it may stutter there forever; a fair such
  lasso (the fairness rules of :mod:`checker.liveness.cycles`) on which a property fails is
  a counterexample.  A simulation never proves a property: finding nothing is
  "incomplete", exit 3.

A safety violation is then shortened: loops in it are cut, each state is joined to
the latest later state it reaches in one step, steps are dropped one at a time while
the same actions still lead to the same violation, and last a breadth-first search
over the action instances the behaviour took (any order, any number) finds the
shortest path to it they make (within a time budget and a bound on states).  The
result is shorter, not necessarily shortest: breadth-first ``mcheck run`` finds that.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from checker.authoring.kinds import FairnessKind, TemporalKind
from checker.base.errors import ConfigError, EvaluationError, SpecError
from checker.base.machine import check_process_count
from checker.base.signals import DeadlineReached, ignore_interrupts, stop_signals, watchdog
from checker.explore.result import Result, Stats, Verdict
from checker.explore.trace import Trace, replay_choices
from checker.model import Model, TemporalProperty
from checker.values.fingerprint import (
    StateFingerprinter,
    StateValueError,
    bad_value_message,
    encode,
)

#: TLC's default behaviour length for -simulate (-depth 100).
DEFAULT_DEPTH = 100
#: Seconds spent dropping steps from a violation, at most.
SHRINK_BUDGET = 10.0
#: The most states the reordering search of a shortening may store.
SHORTEST_STATES = 200_000


@dataclass
class SimulationOptions:
    """How to simulate: seed, behaviour length and count, limits, deadlock."""

    seed: int = 0
    #: States per behaviour at most (the initial state is 1, as depth is in a run).
    depth: int = DEFAULT_DEPTH
    #: Behaviours to generate (None: until the timeout or Ctrl-C).
    traces: int | None = None
    timeout: float | None = None
    deadlock: bool | None = None
    shrink: bool = True
    #: Swarm simulation: each behaviour draws its own subset of action families and
    #: weights for them (swarm testing), so an always-enabled action does not crowd
    #: out the rare sequences that need it absent.
    swarm: bool = False
    #: Coverage guidance: each step prefers a successor this behaviour has not
    #: visited, from the action family it has taken least (see ``_guided_choice``).
    guided: bool = False
    #: Processes walking behaviours (checker.simulate.workers); the same answer.
    workers: int = 1
    #: A dask.distributed scheduler address or ``local:N``: behaviours as tasks on
    #: that cluster (checker.simulate.cluster); the same answer.
    cluster: str | None = None
    progress: Callable[[SimulationStats], None] | None = None
    progress_every: float = 0.5

    def validate(self) -> None:
        """Refuse options that do not make sense."""
        if self.depth < 1:
            raise ConfigError("--depth must be at least 1")
        if self.traces is not None and self.traces < 1:
            raise ConfigError("--traces must be at least 1")
        if self.workers < 1:
            raise ConfigError("--workers must be at least 1")
        check_process_count("--workers", self.workers)
        if self.cluster is not None:
            from checker.explore.options import parse_cluster

            parse_cluster(self.cluster)
            if self.workers > 1:
                raise ConfigError(
                    "--cluster walks behaviours on the cluster's workers: drop --workers"
                )
        if self.timeout is not None and not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ConfigError("--timeout must be a positive number of seconds")


@dataclass
class SimulationStats:
    """What a simulation did."""

    seed: int
    behaviours: int = 0
    #: States checked against the invariants: those the behaviours visit, and the
    #: successors outside the state constraint (checked, never continued from).
    states: int = 0
    #: Successors computed (every successor of every visited state).
    generated: int = 0
    #: The longest behaviour, in states.
    deepest: int = 0
    seconds: float = 0.0
    action_generated: list[int] = field(default_factory=list)
    #: How often each action was the one taken.
    action_taken: list[int] = field(default_factory=list)
    #: The violating behaviour: its number (replay it with its seed) and its length
    #: (actions) before it was shortened.
    behaviour: int | None = None
    found_length: int | None = None
    #: Distinct states the behaviours visited (by fingerprint): how much of the space
    #: the walks have seen.
    distinct: int = 0
    #: With --swarm, the configuration of the violating behaviour: the action
    #: families it could take, with their weights.
    swarm: str | None = None

    @property
    def states_per_second(self) -> float:
        """Visited states per second."""
        return self.states / self.seconds if self.seconds > 0 else 0.0

    @property
    def behaviours_per_second(self) -> float:
        """Behaviours per second."""
        return self.behaviours / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``simulation`` object of ``--json``."""
        return {
            "seed": self.seed,
            "behaviours": self.behaviours,
            "states": self.states,
            "distinct": self.distinct,
            "generated": self.generated,
            "deepest": self.deepest,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second, 1),
            "behaviours_per_second": round(self.behaviours_per_second, 2),
            "violating_behaviour": self.behaviour,
            "found_length": self.found_length,
            "swarm_configuration": self.swarm,
        }


@dataclass
class _Found:
    """A violation in one behaviour: the choices that reach it."""

    verdict: Verdict
    choices: list[int]
    prop: str | None = None
    loop: int | None = None
    liveness: bool = False
    error: EvaluationError | None = None


class _Behaviour:
    """One behaviour as it is drawn: states, choices, and what the temporal check
    needs per state (fingerprint, enabled fairness keys, predicate values)."""

    def __init__(self) -> None:
        self.states: list[Any] = []
        self.choices: list[int] = []
        self.fps: list[int] = []
        self.first: dict[int, int] = {}
        self.enabled: list[set[Any]] = []
        self.taken: list[set[Any]] = []  # fairness keys of the step into state i+1


@dataclass
class _Coverage:
    """What one behaviour has covered so far, for --guided: the fingerprints it
    visited and how often it took each action family."""

    seen: set[int] = field(default_factory=set)
    taken: dict[int, int] = field(default_factory=dict)


#: The weights a swarm configuration gives the families it keeps.
SWARM_WEIGHTS = (1, 2, 4, 8)


def swarm_configuration(seed: int, b: int, families: int) -> dict[int, int]:
    """Behaviour ``b``'s swarm configuration: each action family kept with
    probability 1/2 (at least one), each kept family a weight from SWARM_WEIGHTS.
    From a stream of its own, so the behaviour's other draws are the plain walk's."""
    rng = random.Random(f"{seed}:{b}:swarm")
    kept = {ai: rng.choice(SWARM_WEIGHTS) for ai in range(families) if rng.random() < 0.5}
    if not kept:
        kept = {rng.randrange(families): 1}
    return kept


def _choose(rng: random.Random, succ: list[Any], weights: dict[int, int] | None = None) -> int:
    """The index of a random successor, as TLC draws one: a random action among
    those enabled, then a random successor of it (a family with thousands of
    instances, message drops say, does not crowd out a rare one).  With swarm
    ``weights``, only the families they name, each as likely as its weight; -1 when
    none of them is enabled."""
    families: list[int] = []
    starts: dict[int, int] = {}
    for k, (ai, _, _) in enumerate(succ):
        if ai not in starts and (weights is None or ai in weights):
            starts[ai] = k
            families.append(ai)
    if not families:
        return -1
    if weights is None:
        ai = families[rng.randrange(len(families))]
    else:
        ai = rng.choices(families, [weights[f] for f in families])[0]
    first = starts[ai]
    last = first
    # Successors come grouped by action family, in family order.
    while last + 1 < len(succ) and succ[last + 1][0] == ai:
        last += 1
    return first + rng.randrange(last - first + 1)


def simulate_here(model: Model, opts: SimulationOptions) -> Result:
    """Random behaviours in this process (see :func:`checker.simulate.simulate`)."""
    return Simulator(model, opts).run()


class Simulator:
    def __init__(self, model: Model, opts: SimulationOptions) -> None:
        self.model = model
        self.opts = opts
        self.deadlock = model.check_deadlock if opts.deadlock is None else opts.deadlock
        n = len(model.action_names)
        self.stats = SimulationStats(seed=opts.seed, action_generated=[0] * n, action_taken=[0] * n)
        inits = model.initial_states()
        self.fpr = StateFingerprinter(len(model.variables(inits[0])), [{}])
        self.temporal = model.temporal
        #: Action properties to check on each step the walk takes.
        self.steps = bool(getattr(model, "action_property_names", ()))
        self.fair_cache: dict[tuple[int, tuple[Any, ...]], list[tuple[Any, str]]] = {}
        self.kinds: dict[Any, str] = {}
        self.memo: dict[tuple[str, int, str, int], bool] = {}
        self.visited: set[int] = set()
        #: Fingerprints first visited since the last look (kept only with --workers,
        #: which merges them).
        self.fresh: list[int] | None = None
        self.config: dict[int, int] = {}  #: the swarm configuration being walked

    def fp(self, state: Any) -> int:
        """A state's fingerprint (its variable named if it holds a refused value)."""
        return self._fingerprint(self.model.variables(state), None)[0]

    # -- the loop ------------------------------------------------------------------
    def run(self) -> Result:
        opts, stats = self.opts, self.stats
        t0 = time.perf_counter()
        deadline = t0 + opts.timeout if opts.timeout else None
        next_progress = t0 + opts.progress_every
        found: _Found | None = None
        reason: str | None = None
        interrupted = False
        try:
            with stop_signals(), watchdog(deadline):
                b = 0
                while opts.traces is None or b < opts.traces:
                    now = time.perf_counter()
                    if deadline is not None and now >= deadline:
                        reason = f"timeout {opts.timeout}s reached"
                        break
                    if opts.progress is not None and now >= next_progress:
                        next_progress = now + opts.progress_every
                        stats.seconds = now - t0
                        opts.progress(stats)
                    found = self.behaviour(b)
                    stats.behaviours += 1
                    if found is not None:
                        self.found_in(b)
                        break
                    b += 1
        except DeadlineReached:
            reason = f"timeout {opts.timeout}s reached"
        except KeyboardInterrupt:
            ignore_interrupts()
            reason, interrupted = "interrupted", True
        stats.seconds = time.perf_counter() - t0
        return self.conclude(found, reason, interrupted)

    def found_in(self, b: int) -> None:
        """Record that behaviour ``b`` (just walked) met the violation."""
        self.stats.behaviour = b
        if self.opts.swarm:
            self.stats.swarm = ", ".join(
                f"{self.model.action_names[ai]} x{w}" for ai, w in sorted(self.config.items())
            )

    def conclude(self, found: _Found | None, reason: str | None, interrupted: bool) -> Result:
        """The result of the hunt: the violation shortened and replayed, or why none."""
        opts, stats = self.opts, self.stats
        trace: Trace | None = None
        if found is not None:
            stats.found_length = len(found.choices) - 1
            if found.verdict is not Verdict.ERROR and not found.liveness and opts.shrink:
                found.choices = self.shorten(found, t0=time.perf_counter())
            trace = replay_choices(self.model, found.choices, loop=found.loop)
            if found.error is not None:
                found.error.trace = trace
                found.error.state = trace.steps[-1].state
            verdict = found.verdict
        else:
            verdict = Verdict.INCOMPLETE
            if reason is None:
                reason = f"{stats.behaviours:,} random behaviours, no violation (not exhaustive)"
        return self.result(verdict, found, trace, reason, interrupted)

    def result(
        self,
        verdict: Verdict,
        found: _Found | None,
        trace: Trace | None,
        reason: str | None,
        interrupted: bool,
    ) -> Result:
        model, stats = self.model, self.stats
        warnings = []
        if found is not None and trace is not None and stats.found_length != trace.length:
            warnings.append(
                f"the behaviour found had {stats.found_length} actions, shortened to "
                f"{trace.length}: not necessarily the shortest (mcheck run finds that)"
            )
        return Result(
            spec=model.name,
            variant=str(getattr(model, "variant", "")),
            verdict=verdict,
            stats=Stats(
                distinct=stats.distinct,
                generated=stats.generated,
                depth=stats.deepest,
                seconds=stats.seconds,
                action_generated=list(stats.action_generated),
                action_distinct=list(stats.action_taken),
            ),
            constants=dict(getattr(model, "constants", {})),
            symmetry=False,
            strategy="simulate",
            action_names=model.action_names,
            violated=found.prop if found is not None else None,
            trace=trace,
            reason=(str(found.error) if found is not None and found.error else reason),
            liveness=found.liveness if found is not None else False,
            action_property=found is not None
            and found.prop in getattr(model, "action_property_names", ()),
            warnings=warnings,
            error=found.error if found is not None else None,
            interrupted=interrupted,
            simulation=stats,
        )

    def behaviour(self, b: int) -> _Found | None:
        """Draw behaviour ``b``; the violation it meets, if any."""
        model, stats = self.model, self.stats
        rng = random.Random(f"{self.opts.seed}:{b}")
        weights = None
        if self.opts.swarm:
            weights = swarm_configuration(self.opts.seed, b, len(model.action_names))
            self.config = weights
        inits = model.initial_states()
        k = rng.randrange(len(inits))
        state = inits[k]
        beh = _Behaviour()
        mine = _Coverage()
        self.memo = {}
        choices = [k]
        stats.states += 1
        fp, seen = self.visit(state, None)
        mine.seen.add(fp)
        bad = self.check(state, choices)
        if bad is not None:
            return bad
        try:
            inside = model.within(state)
        except EvaluationError as exc:
            return _Found(Verdict.ERROR, choices, error=exc)
        if not inside:
            return None
        length = 1
        while True:
            stats.deepest = max(stats.deepest, length)
            try:
                succ = model.successors(state)
            except EvaluationError as exc:
                return _Found(Verdict.ERROR, list(choices), error=exc)
            stats.generated += len(succ)
            for ai, _, _ in succ:
                stats.action_generated[ai] += 1
            if not succ and self.deadlock:
                return _Found(Verdict.DEADLOCK, list(choices))
            if self.temporal:
                found = self.note_state(beh, state, fp, succ, choices)
                if found is not None:
                    return found
            if not succ:
                return None
            if length >= self.opts.depth:
                return None
            # Successors outside the constraint are checked, as a run checks them,
            # but not continued from: the behaviour goes on inside the model.
            kept: list[int] = []
            for k, (_, _, t) in enumerate(succ):
                try:
                    ok = model.within(t)
                except EvaluationError as exc:
                    return _Found(Verdict.ERROR, [*choices, k], error=exc)
                if ok:
                    kept.append(k)
                    continue
                stats.states += 1
                bad = self.check(t, [*choices, k], before=state)
                if bad is not None:
                    return bad
            if not kept:
                return None
            if self.opts.guided:
                pick = self._guided_choice(rng, [succ[i] for i in kept], weights, seen, mine)
            else:
                pick = _choose(rng, [succ[i] for i in kept], weights)
            if pick < 0:
                # No family of this swarm configuration is enabled: any enabled one
                # (ending here would waste the prefix the configuration built).
                pick = _choose(rng, [succ[i] for i in kept])
            k = kept[pick]
            ai, params, nxt = succ[k]
            stats.action_taken[ai] += 1
            mine.taken[ai] = mine.taken.get(ai, 0) + 1
            choices.append(k)
            stats.states += 1
            bad = self.check(nxt, choices, before=state)
            if bad is not None:
                return bad
            if self.temporal:
                try:
                    fair = set() if nxt == state else {key for key, _ in self.fairness(ai, params)}
                except EvaluationError as exc:
                    return _Found(Verdict.ERROR, list(choices), error=exc)
                beh.taken.append(fair)
            fp, seen = self.visit(nxt, seen)
            mine.seen.add(fp)
            state = nxt
            length += 1

    def _guided_choice(
        self,
        rng: random.Random,
        succ: list[Any],
        weights: dict[int, int] | None,
        parent: tuple[tuple[Any, ...], tuple[int, ...]],
        mine: _Coverage,
    ) -> int:
        """Coverage guidance, within one behaviour (so workers and a cluster give the
        same answer as one process): among the successors of the swarm's families (-1
        when none is enabled), only those this behaviour has not visited (all of them
        when none is new), then a family drawn with weight (its swarm weight, or 1) /
        (1 + times this behaviour took it), then a random instance.  Each candidate is
        fingerprinted for it, incrementally from its parent."""
        allowed = [k for k, (ai, _, _) in enumerate(succ) if weights is None or ai in weights]
        if not allowed:
            return -1
        novel = [
            k
            for k in allowed
            if self._fingerprint(self.model.variables(succ[k][2]), parent)[0] not in mine.seen
        ]
        by_family: dict[int, list[int]] = {}
        for k in novel or allowed:
            by_family.setdefault(succ[k][0], []).append(k)
        families = list(by_family)
        base = [1 if weights is None else weights[f] for f in families]
        score = [b / (1 + mine.taken.get(f, 0)) for b, f in zip(base, families, strict=True)]
        ai = rng.choices(families, score)[0]
        options = by_family[ai]
        return options[rng.randrange(len(options))]

    def _fingerprint(
        self, vals: tuple[Any, ...], parent: tuple[tuple[Any, ...], tuple[int, ...]] | None
    ) -> tuple[int, tuple[int, ...]]:
        """(fingerprint, terms) of a state's variables, from its parent's where given;
        a value states cannot hold is the spec's error, its variable named."""
        try:
            if parent is None:
                return self.fpr.initial(vals)
            return self.fpr.child(vals, parent[0], parent[1])
        except StateValueError as exc:
            raise SpecError(
                bad_value_message(self.model.name, self.model.var_names, vals, exc)
            ) from None

    def visit(
        self, state: Any, parent: tuple[tuple[Any, ...], tuple[int, ...]] | None
    ) -> tuple[int, tuple[tuple[Any, ...], tuple[int, ...]]]:
        """Count ``state`` among the distinct states visited: its fingerprint, and its
        (variables, terms), from which the next state's fingerprint is computed by what
        changed (``parent``: the previous state's)."""
        vals = self.model.variables(state)
        fp, terms = self._fingerprint(vals, parent)
        if fp not in self.visited:
            self.visited.add(fp)
            if self.fresh is not None:
                self.fresh.append(fp)
            self.stats.distinct += 1
        return fp, (vals, terms)

    def check(self, state: Any, choices: list[int], before: Any = None) -> _Found | None:
        """The invariants on ``state``, then the action properties on the step from
        ``before`` (when given) to it."""
        try:
            bad = self.model.violated_invariant(state)
            if bad is None and before is not None and self.steps:
                bad = self.model.violated_action_property(before, state)
        except EvaluationError as exc:
            return _Found(Verdict.ERROR, list(choices), error=exc)
        if bad is not None:
            return _Found(Verdict.VIOLATION, list(choices), prop=bad)
        return None

    # -- temporal properties on lassos ---------------------------------------------
    def fairness(self, ai: int, params: tuple[Any, ...]) -> list[tuple[Any, str]]:
        key = (ai, params)
        got = self.fair_cache.get(key)
        if got is None:
            got = self.model.fairness(ai, params)
            self.fair_cache[key] = got
            for k, how in got:
                self.kinds[k] = how
        return got

    def note_state(
        self, beh: _Behaviour, state: Any, fp: int, succ: list[Any], choices: list[int]
    ) -> _Found | None:
        """Record the state just reached (``fp``: its fingerprint); check the lasso it
        closes, and the lasso of stuttering in it forever when no fair action is
        enabled there."""
        try:
            enabled: set[Any] = set()
            for ai, params, nxt in succ:
                fair = self.fairness(ai, params)
                if fair and nxt != state:
                    enabled.update(k for k, _ in fair)
        except EvaluationError as exc:
            return _Found(Verdict.ERROR, list(choices), error=exc)
        i = len(beh.states)
        beh.states.append(state)
        beh.fps.append(fp)
        beh.enabled.append(enabled)
        loop = beh.first.get(fp)
        if loop is None:
            beh.first[fp] = i
        else:
            # The behaviour came back to state `loop`: states loop..i-1 are a cycle.
            beh.states.pop()
            beh.fps.pop()
            beh.enabled.pop()
            found = self.lasso(beh, loop, i, choices)
            beh.states.append(state)
            beh.fps.append(fp)
            beh.enabled.append(enabled)
            if found is not None:
                return found
        if not enabled:
            return self.lasso(beh, i, i + 1, choices, stutter=True)
        return None

    def lasso(
        self, beh: _Behaviour, loop: int, end: int, choices: list[int], stutter: bool = False
    ) -> _Found | None:
        """The lasso of states 0..end-1 returning to ``loop`` (end == loop + 1 with
        ``stutter``: staying in ``loop`` forever), if it is fair and fails a property."""
        cycle = range(loop, end)
        if not stutter:
            taken: set[Any] = set()
            for j in range(loop, end):
                taken |= beh.taken[j]
            for key, how in self.kinds.items():
                if key in taken:
                    continue
                on = [key in beh.enabled[j] for j in cycle]
                if (how == FairnessKind.WEAK and all(on)) or (
                    how == FairnessKind.STRONG and any(on)
                ):
                    return None  # the cycle is unfair to this action
        try:
            for prop in self.temporal:
                if self.fails(prop, beh, loop, end):
                    # The trace returns to `loop`: its last state is that state again.
                    return _Found(
                        Verdict.VIOLATION,
                        list(choices),
                        prop=prop.name,
                        loop=loop,
                        liveness=True,
                    )
        except EvaluationError as exc:
            return _Found(Verdict.ERROR, list(choices), error=exc)
        return None

    def fails(self, prop: TemporalProperty, beh: _Behaviour, loop: int, end: int) -> bool:
        """Whether ``prop`` fails on the lasso (prefix 0..loop-1, cycle loop..end-1,
        the cycle repeated forever)."""
        for idx, (_, pred, premise) in enumerate(prop.instances):
            start = prop.start(idx)
            if start is not None and not self.value(prop, idx, beh, 0, start, kind="start"):
                continue  # checked only on behaviours that start where it holds
            q = [self.value(prop, idx, beh, j, pred) for j in range(end)]
            in_cycle = any(q[loop:end])
            if prop.kind == TemporalKind.EVENTUALLY and not any(q):
                return True
            if prop.kind == TemporalKind.ALWAYS_EVENTUALLY and not in_cycle:
                return True
            if prop.kind == TemporalKind.EVENTUALLY_ALWAYS and not all(q[loop:end]):
                return True
            if prop.kind == TemporalKind.LEADS_TO and premise is not None and not in_cycle:
                # Q never holds on the cycle: P at a position with no Q from there on.
                later_q = False
                for j in range(end - 1, -1, -1):
                    later_q = later_q or q[j]
                    if not later_q and self.value(prop, idx, beh, j, premise, kind="premise"):
                        return True
        return False

    def value(
        self,
        prop: TemporalProperty,
        idx: int,
        beh: _Behaviour,
        j: int,
        pred: Callable[[Any], bool],
        kind: str = "q",
    ) -> bool:
        """A property instance's predicate (or its premise, or its initial-state
        condition) in state ``j``, memoised per behaviour by fingerprint."""
        key = (prop.name, idx, kind, beh.fps[j])
        got = self.memo.get(key)
        if got is None:
            state = beh.states[j]
            try:
                got = bool(pred(state))
            except (EvaluationError, MemoryError):
                raise
            except Exception as exc:
                raise EvaluationError(f"temporal property {prop.name}", exc, state) from exc
            self.memo[key] = got
        return got

    # -- shortening -----------------------------------------------------------------
    def shorten(self, found: _Found, t0: float) -> list[int]:
        """A shorter behaviour to the same kind of violation (see the module text)."""
        model = self.model
        states = replay_choices(model, found.choices).states()
        fps = [self.fp(s) for s in states]
        # 1. Cut loops and join each state to the latest later state it reaches in one
        #    step: the path keeps its last state, so the violation stays.
        path = [(found.choices[0], states[0], fps[0])]
        i = 0
        while i < len(states) - 1:
            succ = model.successors(states[i])
            index: dict[int, int] = {}
            for k, (_, _, t) in enumerate(succ):
                index.setdefault(self.fp(t), k)
            j = max(j for j in range(i + 1, len(states)) if fps[j] in index or j == i + 1)
            k = index[fps[j]] if fps[j] in index else found.choices[i + 1]
            path.append((k, states[j], fps[j]))
            i = j
        choices = [c for c, _, _ in path]
        if found.verdict is not Verdict.VIOLATION:
            return choices
        # 2. Drop steps one at a time while the same actions, replayed by name and
        #    parameters, still reach the same invariant's violation.
        labels = self.labels(choices)
        deadline = t0 + SHRINK_BUDGET
        improved = True
        while improved and time.perf_counter() < deadline:
            improved = False
            for drop in range(len(labels) - 1, -1, -1):
                if time.perf_counter() >= deadline:
                    break
                trial = labels[:drop] + labels[drop + 1 :]
                got = self.replay_labels(choices[0], trial, found.prop)
                if got is not None:
                    choices, labels, improved = got, self.labels(got), True
                    break
        # 3. Reorder as well as drop: breadth-first over the action instances the
        #    behaviour took, in any order and number, from its initial state: the
        #    shortest such path to the same violation (bounded: the budget's time and
        #    SHORTEST_STATES states, else the path of step 2 stands).
        shorter = self.shortest_over(choices[0], labels, found.prop, deadline)
        return shorter if shorter is not None else choices

    def shortest_over(
        self,
        init: int,
        labels: list[tuple[int, tuple[Any, ...]]],
        prop: str | None,
        deadline: float,
    ) -> list[int] | None:
        """Choices of a path from initial state ``init`` shorter than ``labels`` that
        takes only ``labels``' action instances and whose first violation is
        ``prop``'s, the shortest there is (None: none, or the bounds came first).
        Instances are told apart as TLA+ values are (``1`` is not ``TRUE``)."""
        model = self.model
        allowed = {(ai, repr(encode(params))) for ai, params in labels}
        start = model.initial_states()[init]
        parent: dict[int, tuple[int, int] | None] = {self.fp(start): None}
        frontier = [start]
        try:
            for _depth in range(len(labels) - 1):
                nxt_frontier = []
                for state in frontier:
                    if time.perf_counter() >= deadline or len(parent) > SHORTEST_STATES:
                        return None
                    here = self.fp(state)
                    for k, (ai, params, nxt) in enumerate(model.successors(state)):
                        if (ai, repr(encode(params))) not in allowed:
                            continue
                        if self.steps:
                            broken = model.violated_action_property(state, nxt)
                            if broken is not None:
                                if broken == prop:
                                    return [*self._path(parent, here, init), k]
                                continue
                        fp = self.fp(nxt)
                        if fp in parent:
                            continue
                        parent[fp] = (here, k)
                        bad = model.violated_invariant(nxt)
                        if bad is not None:
                            if bad == prop:
                                return self._path(parent, fp, init)
                            continue
                        if model.within(nxt):
                            nxt_frontier.append(nxt)
                frontier = nxt_frontier
        except EvaluationError:
            return None
        return None

    @staticmethod
    def _path(parent: dict[int, tuple[int, int] | None], fp: int, init: int) -> list[int]:
        """The choices from the initial state to the state ``fp`` (parent pointers)."""
        ks: list[int] = []
        link = parent[fp]
        while link is not None:
            fp, k = link
            ks.append(k)
            link = parent[fp]
        return [init, *reversed(ks)]

    def labels(self, choices: list[int]) -> list[tuple[int, tuple[Any, ...]]]:
        trace = replay_choices(self.model, choices)
        return [(s.action_index or 0, s.params) for s in trace.steps[1:]]

    def replay_labels(
        self, init: int, labels: list[tuple[int, tuple[Any, ...]]], prop: str | None
    ) -> list[int] | None:
        """Choices taking ``labels`` from initial state ``init``, if each is enabled in
        turn and the first violation on the way is ``prop``'s."""
        model = self.model
        state = model.initial_states()[init]
        choices = [init]
        try:
            for want in labels:
                bad = model.violated_invariant(state)
                if bad is not None:
                    return choices if bad == prop else None
                if not model.within(state):
                    return None
                for k, (ai, params, nxt) in enumerate(model.successors(state)):
                    if (ai, params) == want:
                        choices.append(k)
                        if self.steps:
                            broken = model.violated_action_property(state, nxt)
                            if broken is not None:
                                return choices if broken == prop else None
                        state = nxt
                        break
                else:
                    return None
            return choices if model.violated_invariant(state) == prop else None
        except EvaluationError:
            return None
