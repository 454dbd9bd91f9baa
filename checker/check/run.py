"""``run(model, options)``: the one place that checks a model, safety then liveness.

The CLI, the gate, the bench and :func:`checker.check_spec` all call :func:`run` and
nothing else, so they share one set of defaults and one meaning of every option.

* Only invariants selected: one exploration (with symmetry when the model has it),
  invariants checked on every generated state.
* Temporal properties selected: one exploration that records the state graph while
  it checks the invariants, then the fair-cycle search on that graph.  Under
  symmetry (no checkpoint, properties whose instances rename into each other) the
  exploration is the reduced one and records the renaming on each edge;
  the graph is unfolded into the unreduced one (:mod:`checker.liveness.quotient`) before the
  search, so the answer is the unreduced graph's.  Otherwise the graph is explored
  without the reduction (after the invariants were checked with it) and the run says
  why.

Limits and interruptions apply to the whole run: a run that hit one is incomplete,
never a pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from checker.base.errors import ConfigError
from checker.base.invocation import command
from checker.base.safefile import WriteFailed
from checker.base.signals import DeadlineReached, kept_handlers, watchdog
from checker.check import checkpoint
from checker.check.assemble import explore
from checker.check.symmetry import check_symmetry, temporal_symmetry_problem
from checker.explore.collector import paced_collector
from checker.explore.engine import Outcome, SaveFailed
from checker.explore.options import Options
from checker.explore.result import Result, Stats, Verdict
from checker.explore.snapshot import Snapshot
from checker.explore.trace import Trace, replay_choices
from checker.liveness.cycles import Lasso, check_property
from checker.liveness.quotient import QuotientRecorder, Unfolded, unfold, unfolded_trace
from checker.liveness.stategraph import GraphRecorder, StateGraph
from checker.model import CompiledSpec, Model
from checker.store.fingerprints import TraceTable
from checker.values.fingerprint import StateFingerprinter, collision_probability
from checker.values.records import native_records, record_types


def run(model: Model, options: Options | None = None) -> Result:
    """Check ``model``: its invariants on every reachable state, then its temporal
    properties on the reachable state graph."""
    # An interrupted check ignores further Ctrl-C/SIGTERM while it builds its report;
    # the caller's handlers come back afterwards, so a library caller (a test session,
    # a notebook, a script running several checks) can still be interrupted.
    with kept_handlers(), paced_collector(), native_records(record_types(model)):
        folder = options.checkpoint if options is not None else None
        if folder is None:
            return _run(model, options)
        with checkpoint.folder_lock(folder):
            return _run(model, options)


def _run(model: Model, options: Options | None) -> Result:
    opts = options or Options()
    opts.validate()
    warnings: list[str] = []
    liveness = bool(model.temporal)
    symmetric = opts.symmetry and len(model.renamings) > 1
    deadlock = model.check_deadlock if opts.deadlock is None else opts.deadlock
    t0 = time.perf_counter()
    deadline = t0 + opts.timeout if opts.timeout else None
    # Temporal properties under symmetry: one exploration of the quotient graph, with
    # a renaming on each edge, unfolded into the real graph (checker.liveness.quotient);
    # without a checkpoint, for properties whose instances rename into each other.
    # Otherwise the graph is explored again without the reduction.
    refusal = _quotient_refusal(model, opts, deadline) if liveness and symmetric else None
    quotient = liveness and symmetric and refusal is None
    if refusal is not None:
        warnings.append(
            f"temporal properties are checked without symmetry reduction ({refusal}): "
            "their graph is explored unreduced"
        )
    # Safety: with symmetry when the model has it.  When temporal properties are
    # checked without a reduction anyway (no symmetry, or no invariant to check with
    # it), one exploration records the graph and checks the invariants together.
    graph_now = quotient or (liveness and (not symmetric or not model.invariant_names))
    if liveness and symmetric and opts.checkpoint is not None and not graph_now:
        # One exploration is what a checkpoint continues: the invariants are checked
        # in the unreduced one that records the graph.
        graph_now = True
        warnings.append(
            "with --checkpoint, the invariants are checked in the liveness graph's "
            "exploration, without symmetry reduction"
        )
    if graph_now and not quotient:
        symmetric = False
    renamings = model.renamings if symmetric else [{}]
    outcome: Outcome | None = None
    recorder: GraphRecorder | None = None
    resumed: Snapshot | None = None
    try:
        # Set-up counts against --timeout too: 9! renamings take long before any
        # state, and a checkpoint from elsewhere may take long to read.
        with watchdog(deadline):
            checkpointer, resumed = _checkpointing(
                model, opts, liveness, symmetric, deadlock, warnings
            )
            if opts.symmetry and len(model.renamings) > 1:
                check_symmetry(model, deadline=deadline)
            outcome, recorder = explore(
                model,
                opts,
                renamings,
                deadlock,
                warnings,
                record=_recorder(model, renamings, graph_now, quotient),
                checkpointer=checkpointer,
                resumed=resumed,
                deadline=deadline,
            )
    except DeadlineReached:
        if outcome is None:
            n = len(model.action_names)
            stats = Stats(action_generated=[0] * n, action_distinct=[0] * n)
            if resumed is not None:
                # Stopped before going on: the figures are still the checkpoint's.
                stats = replace(
                    resumed.stats,
                    action_generated=list(resumed.stats.action_generated),
                    action_distinct=list(resumed.stats.action_distinct),
                )
            reading = opts.resume and resumed is None
            reason = f"timeout {opts.timeout}s reached while " + (
                "reading the checkpoint" if reading else "setting up"
            )
            outcome = Outcome(Verdict.INCOMPLETE, stats, TraceTable(), reason=reason)
            if opts.resume:
                outcome.warnings.append(
                    f"the checkpoint in {opts.checkpoint} is unchanged: continue with "
                    f"{command()} resume {opts.checkpoint}"
                )
    if resumed is not None:
        t0 -= resumed.stats.seconds
    trace = _counterexample(model, outcome, renamings)
    result = _result(model, opts, outcome, symmetric, trace, warnings)
    if liveness and result.verdict is Verdict.OK:
        if recorder is None:
            # Liveness needs the unreduced graph: a second exploration, which need not
            # check again what the first one proved (invariants, deadlock).
            remaining = None if deadline is None else deadline - time.perf_counter()
            if remaining is not None and remaining <= 0:
                return replace(
                    result, verdict=Verdict.INCOMPLETE, reason=f"timeout {opts.timeout}s reached"
                )
            graph_opts = replace(opts, timeout=remaining, deadlock=False)
            unchecked = model.without_invariants() if isinstance(model, CompiledSpec) else model
            graph_outcome, recorder = explore(
                unchecked,
                graph_opts,
                [{}],
                False,
                result.warnings,
                record=lambda: GraphRecorder(unchecked),
                deadline=deadline,
            )
            if graph_outcome.verdict is not Verdict.OK:
                reason = f"{graph_outcome.reason} while building the liveness graph"
                return replace(
                    result,
                    interrupted=graph_outcome.interrupted,
                    verdict=Verdict.INCOMPLETE if graph_outcome.error is None else Verdict.ERROR,
                    reason=reason if graph_outcome.error is None else graph_outcome.reason,
                    error=graph_outcome.error,
                    trace=_counterexample(model, graph_outcome, [{}]),
                    graph=(graph_outcome.stats.distinct, 0),
                )
            outcome = graph_outcome
        assert recorder is not None
        if isinstance(recorder, QuotientRecorder):
            result = _quotient_liveness(model, opts, recorder, outcome, result, deadline)
        else:
            result = _liveness(model, opts, recorder.graph, outcome, result, deadline)
    result.stats.seconds = time.perf_counter() - t0
    return result


#: The warning of a run resumed from a checkpoint mcheck cannot vouch for.
UNAUTHENTICATED = (
    "resumed from {folder}, a checkpoint not signed with your key (--trust-checkpoint): "
    "its figures, and so this verdict, rest on that file"
)


def _checkpointing(
    model: Model,
    opts: Options,
    liveness: bool,
    symmetric: bool,
    deadlock: bool,
    warnings: list[str],
) -> tuple[Callable[[Snapshot], str] | None, Snapshot | None]:
    """The checkpoint writer a run with ``--checkpoint`` uses, and the snapshot it
    resumes from (signed with the user's key unless trusted, its identity checked
    against this run's)."""
    if opts.checkpoint is None:
        return None, None
    folder = Path(opts.checkpoint)
    identity = checkpoint.identity_of(model, symmetric, opts.strategy, deadlock, opts)
    # The record types a frontier may hold: the loaded spec's (never the file's say).
    types = checkpoint.state_types(model)
    resumed: Snapshot | None = None
    if opts.resume:
        if not checkpoint.authenticate(folder, opts.trust_checkpoint):
            warnings.append(UNAUTHENTICATED.format(folder=folder))
        checkpoint.check_identity(checkpoint.read_header(folder)["identity"], identity, folder)
        resumed = checkpoint.read(folder, types)
    elif checkpoint.exists(folder):
        raise ConfigError(
            f"{folder} already holds a checkpoint: continue it with {command()} resume {folder}, "
            "or choose another folder"
        )
    origin = dict(opts.origin)

    def save(snap: Snapshot) -> str:
        snap.identity = identity
        snap.origin = origin
        try:
            path = checkpoint.write(folder, snap, types)
        except WriteFailed as exc:
            kept = (
                f"; the previous checkpoint in {folder} stays (continue with {command()} "
                f"resume {folder})"
                if checkpoint.exists(folder)
                else ""
            )
            raise SaveFailed(f"the checkpoint could not be saved ({exc}){kept}") from None
        return (
            f"checkpoint of {snap.stats.distinct:,} states saved to {path}: continue with "
            f"{command()} resume {folder}"
        )

    return save, resumed


def _recorder(
    model: Model, renamings: list[dict[Any, Any]], graph: bool, quotient: bool
) -> Callable[[], GraphRecorder | None]:
    """What records the state graph of each attempt of an exploration: the quotient
    graph (liveness under symmetry), the plain one, or none."""
    if quotient:
        return lambda: QuotientRecorder(model, renamings)
    if graph:
        return lambda: GraphRecorder(model)
    return lambda: None


def _fingerprint_fn(model: Model, renamings: list[dict[Any, Any]]) -> Any:
    inits = model.initial_states()
    fpr = StateFingerprinter(len(model.variables(inits[0])), renamings)
    return lambda state: fpr.initial(model.variables(state))[0]


def _counterexample(
    model: Model, outcome: Outcome, renamings: list[dict[Any, Any]]
) -> Trace | None:
    """The trace to the outcome's state, rebuilt by replay and checked state by state."""
    if outcome.ordinal < 0 and outcome.extra is None:
        return None
    table = outcome.table
    path = table.path(outcome.ordinal) if outcome.ordinal >= 0 else []
    choices = [table.choice[o] for o in path]
    expected: list[int | None] = [table.fps[o] for o in path]
    if outcome.extra is not None:
        choices.append(outcome.extra)
        expected.append(None)
    trace = replay_choices(model, choices, expected, _fingerprint_fn(model, renamings))
    if outcome.error is not None:
        outcome.error.trace = trace
        outcome.error.state = trace.steps[-1].state
    return trace


def _result(
    model: Model,
    opts: Options,
    outcome: Outcome,
    symmetric: bool,
    trace: Trace | None,
    warnings: list[str],
) -> Result:
    stats = outcome.stats
    if outcome.verdict is Verdict.OK and stats.distinct == 0:
        outcome.verdict = Verdict.INCOMPLETE
        outcome.reason = "no initial state satisfies the constraint: nothing was explored"
    return Result(
        spec=model.name,
        variant=str(getattr(model, "variant", "")),
        verdict=outcome.verdict,
        stats=stats,
        constants=dict(getattr(model, "constants", {})),
        symmetry=symmetric,
        strategy=opts.strategy,
        action_names=model.action_names,
        violated=outcome.prop,
        trace=trace,
        reason=outcome.reason,
        action_property=outcome.prop in getattr(model, "action_property_names", ()),
        collision_probability=collision_probability(stats.distinct, stats.generated),
        warnings=list(warnings) + outcome.warnings,
        error=outcome.error,
        interrupted=outcome.interrupted,
    )


def _quotient_refusal(model: Model, opts: Options, deadline: float | None) -> str | None:
    """Why temporal properties cannot be checked on the symmetry-reduced graph in
    this run (None: they can): the mode, or properties or steps that do not commute
    with the renamings on the sampled states (checker.model.renamings)."""
    if opts.checkpoint is not None:
        return "a symmetry-reduced liveness graph is not checkpointed"
    return temporal_symmetry_problem(model, deadline)


def _quotient_liveness(
    model: Model,
    opts: Options,
    recorder: QuotientRecorder,
    outcome: Outcome,
    result: Result,
    deadline: float | None,
) -> Result:
    """The fair-cycle search on the real graph unfolded from the quotient one (the
    unfolding is part of the liveness check: the same limits and interruptions)."""
    fingerprint = _fingerprint_fn(model, [{}])
    real_inits = [fingerprint(s) for s in model.initial_states() if model.within(s)]
    unfolded: list[Unfolded] = []

    def graph() -> StateGraph:
        unfolded.append(unfold(recorder, model, real_inits))
        return unfolded[0].graph

    def trace_of(lasso: Lasso) -> Trace:
        path = lasso.prefix + lasso.cycle
        return unfolded_trace(model, unfolded[0], path, fingerprint, len(lasso.prefix) - 1)

    return _liveness(model, opts, graph, outcome, result, deadline, trace_of)


def _liveness(
    model: Model,
    opts: Options,
    graph: StateGraph | Callable[[], StateGraph],
    outcome: Outcome,
    result: Result,
    deadline: float | None,
    trace_of: Callable[[Lasso], Trace] | None = None,
) -> Result:
    """The fair-cycle search on the explored graph (or on the graph ``graph()``
    builds, within the same limits), for each temporal property."""
    timed_out = replace(
        result,
        verdict=Verdict.INCOMPLETE,
        reason=f"timeout {opts.timeout}s reached during the liveness check",
    )
    try:
        found: tuple[Any, Lasso] | None = None
        # The watchdog covers the cycle search only: the lasso's trace is rebuilt after.
        with watchdog(deadline):
            g = graph if isinstance(graph, StateGraph) else graph()
            result = replace(result, graph=(g.size, g.edges))
            timed_out = replace(timed_out, graph=result.graph)
            for prop in model.temporal:
                if deadline is not None and time.perf_counter() >= deadline:
                    return timed_out
                lasso = check_property(g, prop)
                if lasso is not None:
                    found = (prop, lasso)
                    break
        if found is None:
            return result
        prop, lasso = found
        warnings = list(result.warnings)
        if lasso.touches_cut:
            warnings.append(
                f"the cycle violating {prop.name} touches states whose successors the "
                "state constraint cut off: it may be an artefact of the bound"
            )
        return replace(
            result,
            verdict=Verdict.VIOLATION,
            violated=prop.name,
            trace=trace_of(lasso) if trace_of is not None else lasso_trace(model, outcome, lasso),
            liveness=True,
            warnings=warnings,
        )
    except DeadlineReached:
        return timed_out
    except KeyboardInterrupt:
        return replace(
            result,
            verdict=Verdict.INCOMPLETE,
            reason="interrupted during the liveness check",
            interrupted=True,
        )
    except MemoryError:
        return replace(
            result, verdict=Verdict.INCOMPLETE, reason="out of memory during the liveness check"
        )


def lasso_trace(model: Model, outcome: Outcome, lasso: Lasso) -> Trace:
    """The lasso as a Trace whose ``loop`` is the index of the state the cycle returns
    to; the last state listed is that state again (the cycle's closing step)."""
    table = outcome.table
    path = lasso.prefix + lasso.cycle
    first = path[0][0]
    choices = [table.choice[first]]
    expected: list[int | None] = [table.fps[first]]
    for v, _iid, k in path[1:]:
        assert k is not None
        choices.append(k)
        expected.append(table.fps[v])
    return replay_choices(
        model, choices, expected, _fingerprint_fn(model, [{}]), loop=len(lasso.prefix) - 1
    )
