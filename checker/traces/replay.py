"""Replay a saved trace against a spec: is it a real behaviour of this variant?

Each recorded step must be an enabled action instance (same action, same parameters)
whose next state equals the recorded one, and the last state must still violate the
recorded property.  States are compared by their canonical encodings, so the flavour
of immutable container a file was read into does not matter.

Replaying a ``bug`` variant's trace against the ``fix`` variant names the first step
the fix blocks: that is how a patch is shown to close a bug.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checker.authoring.kinds import FairnessKind, TemporalKind
from checker.model import CompiledSpec, label_of
from checker.traces.itf import ItfTrace
from checker.values.fingerprint import encode
from checker.values.show import show


@dataclass
class ReplayOutcome:
    """The verdict of a replay, with the first divergence if any."""

    ok: bool
    message: str
    step: int | None = None  #: index of the first state that diverges
    details: list[str] = field(default_factory=list)
    #: After a divergence: what happens when the same actions are taken anyway.
    by_actions: str | None = None
    #: After a divergence: the first step at which a variable the property reads
    #: differs, i.e. where the variant changes the outcome rather than bookkeeping.
    decisive_step: int | None = None
    decisive: str | None = None


def _enc_vars(model: CompiledSpec, trace: ItfTrace, state: Any) -> dict[str, Any]:
    # The spec's state in the file's read form: a replay never trusts the file's type
    # names (reading a trace imports nothing), it compares values in one plain form.
    return {
        n: encode(trace.normalize(v))
        for n, v in zip(model.var_names, model.variables(state), strict=True)
    }


def _enc_recorded(recorded: dict[str, Any]) -> dict[str, Any]:
    return {n: encode(v) for n, v in recorded.items()}


def _differences(
    model: CompiledSpec, trace: ItfTrace, produced: Any, recorded: dict[str, Any]
) -> list[str]:
    rows = []
    got = dict(zip(model.var_names, model.variables(produced), strict=True))
    for name in model.var_names:
        if encode(trace.normalize(got[name])) != encode(recorded.get(name)):
            rows.append(
                f"{name}: trace has {show(recorded.get(name))}, spec gives {show(got[name])}"
            )
    return rows


def replay(model: CompiledSpec, trace: ItfTrace) -> ReplayOutcome:
    """Re-execute ``trace`` on ``model``; see the module docstring."""
    variant = model.spec.variant
    inits = model.initial_states()  # also fixes the model's variable names
    if tuple(trace.var_names) != tuple(model.var_names):
        return ReplayOutcome(
            False,
            f"the trace's variables {list(trace.var_names)} are not the spec's "
            f"{list(model.var_names)}",
            0,
        )
    want0 = _enc_recorded(trace.states[0])
    current = None
    for init in inits:
        if _enc_vars(model, trace, init) == want0:
            current = init
            break
    if current is None:
        return ReplayOutcome(
            False, f"step 0: the first state is not an initial state of variant {variant}", 0
        )
    # The spec's own state objects along the trace: predicates need the spec's types,
    # not the generic containers a file is read back into.
    produced = [current]
    for i in range(1, len(trace.states)):
        label, matches = _take(model, trace, current, trace.steps[i])
        want = _enc_recorded(trace.states[i])
        if not matches:
            return ReplayOutcome(
                False,
                f"step {i}: {label} is not enabled in variant {variant} "
                f"(the first step this variant blocks)",
                i,
            )
        same = [t for t in matches if _enc_vars(model, trace, t) == want]
        if not same:
            followed, states = _follow_actions(model, trace, [*produced, matches[0]])
            at, decisive = _decisive_step(model, trace, states, i)
            return ReplayOutcome(
                False,
                f"step {i}: {label} produces a different state in variant {variant}",
                i,
                _differences(model, trace, matches[0], trace.states[i]),
                by_actions=followed,
                decisive_step=at,
                decisive=decisive,
            )
        current = same[0]
        produced.append(current)
    return _judge_end(model, trace, produced)


def _judge_end(model: CompiledSpec, trace: ItfTrace, produced: list[Any]) -> ReplayOutcome:
    """Does the behaviour ``produced`` (the spec's states) end in the trace's property?"""
    variant = model.spec.variant
    current = produced[-1]
    prop = trace.meta.get("property")
    if prop == "Deadlock":
        if model.successors(current):
            return ReplayOutcome(
                False,
                f"the trace replays, but its last state is not a deadlock in variant {variant}",
                len(trace.states) - 1,
            )
        return ReplayOutcome(
            True, f"the trace is a real behaviour of variant {variant} and ends in a deadlock"
        )
    if prop and prop in type(model.spec).temporal_names():
        return _judge_lasso(model, trace, prop, produced)
    step = model.action_property_predicate(prop) if prop else None
    if step is not None:
        # [][A]_vars: the last step breaks it (a stuttering step never does).
        broken = len(produced) > 1 and model.violated_action_property(
            produced[-2], produced[-1], only=prop
        )
        if not broken:
            return ReplayOutcome(
                False,
                f"the trace replays, but its last step satisfies {prop} in variant {variant}",
                len(trace.states) - 1,
            )
        return ReplayOutcome(
            True,
            f"the trace is a real behaviour of variant {variant} and its last step breaks "
            f"{prop} ({len(trace.states) - 1} steps)",
        )
    if prop:
        predicate = model.invariant_predicate(prop)
        if predicate is None:
            return ReplayOutcome(
                False, f"the trace's property {prop!r} is not an invariant of this spec"
            )
        if predicate(current):
            return ReplayOutcome(
                False,
                f"the trace replays, but {prop} holds in its last state in variant {variant}",
                len(trace.states) - 1,
            )
        return ReplayOutcome(
            True,
            f"the trace is a real behaviour of variant {variant} and ends in a violation "
            f"of {prop} ({len(trace.states) - 1} steps)",
        )
    return ReplayOutcome(True, f"the trace is a real behaviour of variant {variant}")


def _follow_actions(
    model: CompiledSpec, trace: ItfTrace, produced: list[Any]
) -> tuple[str, list[Any]]:
    """Take the trace's remaining actions from the spec's own states after a divergence
    (``produced`` ends at the diverging step): does the variant block one of them, and
    does the property still fail at the end?  Also returns the states taken."""
    variant = model.spec.variant
    states = list(produced)
    for i in range(len(states), len(trace.states)):
        label, nxt = _take(model, trace, states[-1], trace.steps[i])
        if not nxt:
            return f"taking the same actions, variant {variant} blocks step {i}: {label}", states
        states.append(nxt[0])
    end = _judge_end(model, trace, states)
    n = len(trace.states) - 1
    if end.ok:
        return (
            f"taking the same {n} actions in variant {variant} still ends in the violation",
            states,
        )
    prop = trace.meta.get("property")
    return f"taking the same {n} actions in variant {variant}, {prop} holds at the end", states


def _decisive_step(
    model: CompiledSpec, trace: ItfTrace, states: list[Any], first: int
) -> tuple[int | None, str | None]:
    """The first step from ``first`` on at which a variable the trace's property reads
    (``#meta.property_reads``) differs between the variant's states and the recorded
    ones: where the variant changes the outcome, not a bookkeeping variable."""
    reads = [r for r in trace.meta.get("property_reads") or [] if r in model.var_names]
    if not reads:
        return None, None
    for i in range(first, len(states)):
        got = dict(zip(model.var_names, model.variables(states[i]), strict=True))
        differ = [
            r for r in reads if encode(trace.normalize(got[r])) != encode(trace.states[i].get(r))
        ]
        if differ:
            label = trace.steps[i].get("action") or trace.steps[i].get("action_name")
            return i, (
                f"the first step whose outcome the property reads is step {i}: {label} "
                f"({', '.join(differ)} differ)"
            )
    return None, None


def _unfair_cycle(model: CompiledSpec, trace: ItfTrace, states: list[Any], loop: int) -> str | None:
    """Why the lasso's cycle (``states[loop:]``, whose last state is the loop state;
    none taken at all: stuttering there forever) is not fair, or None if it is: a
    weakly fair action enabled in every state of the cycle and never taken on it, or
    a strongly fair one enabled in some state of it and never taken (TLA+'s WF and
    SF, as :mod:`checker.liveness.cycles` searches for fair cycles)."""
    last = len(states) - 1
    cycle = states[loop:last] if last > loop else [states[loop]]
    taken: set[Any] = set()
    for i in range(loop + 1, last + 1):
        for ai, params in _instances(model, trace, states[i - 1], trace.steps[i]):
            taken.update(key for key, _ in model.fairness(ai, params))
    enabled: list[dict[Any, str]] = []
    for s in cycle:
        here: dict[Any, str] = {}
        for ai, params, _ in model.successors(s):
            for key, kind in model.fairness(ai, params):
                here[key] = kind
        enabled.append(here)
    keys: dict[Any, str] = {}
    for here in enabled:
        keys.update(here)
    for key, kind in keys.items():
        if key in taken:
            continue
        always = all(key in here for here in enabled)
        if kind == FairnessKind.WEAK and always:
            how = "enabled in every state of the cycle and never taken (weak fairness)"
        elif kind == FairnessKind.STRONG:
            how = "enabled on the cycle and never taken (strong fairness)"
        else:
            continue
        return f"{_fair_name(model, key)} is {how}"
    return None


def _fair_name(model: CompiledSpec, key: Any) -> str:
    """A fairness constraint's key as the user wrote it: an instance or a group."""
    if isinstance(key, tuple) and key and key[0] == "group":
        acts = " \\/ ".join(key[1])
        return f"{acts} for {show(key[3])}" if len(key) > 2 else acts
    ai, params = key
    return label_of(model.action_names[ai], params)


def _instances(
    model: CompiledSpec, trace: ItfTrace, state: Any, meta: dict[str, Any]
) -> list[tuple[int, tuple[Any, ...]]]:
    """The action instances (family, parameters) the recorded step names, in ``state``."""
    name = meta.get("action_name")
    wanted = encode(tuple(meta.get("params") or ()))
    return [
        (ai, p)
        for ai, p, _ in model.successors(state)
        if model.action_names[ai] == name and encode(trace.normalize(p)) == wanted
    ]


def _take(
    model: CompiledSpec, trace: ItfTrace, state: Any, meta: dict[str, Any]
) -> tuple[str, list[Any]]:
    """The recorded step's label and the states its action instance leads to."""
    name = meta.get("action_name")
    params = tuple(meta.get("params") or ())
    label = meta.get("action") or label_of(str(name), params)
    wanted = encode(params)
    nxt = [
        t
        for ai, p, t in model.successors(state)
        if model.action_names[ai] == name and encode(trace.normalize(p)) == wanted
    ]
    return label, nxt


def _judge_lasso(
    model: CompiledSpec, trace: ItfTrace, prop: str, states: list[Any]
) -> ReplayOutcome:
    """A lasso must close (its last state is the loop state) and break the property:
    <>P: P never holds; []<>P: P never holds on the cycle; P ~> Q: some state has P
    and not Q, and Q never holds from there on (the cycle included)."""
    variant = model.spec.variant
    loop = trace.loop
    last = len(trace.states) - 1
    if loop is None or not 0 <= loop <= last:
        return ReplayOutcome(False, f"the trace of {prop} is not a lasso (no valid 'loop')")
    if _enc_recorded(trace.states[loop]) != _enc_recorded(trace.states[last]):
        return ReplayOutcome(
            False, f"the lasso does not close: the last state is not state {loop}", last
        )
    tprop = next((t for t in model.temporal if t.name == prop), None)
    if tprop is None:
        return ReplayOutcome(False, f"the trace's property {prop!r} is not checked here")
    unfair = _unfair_cycle(model, trace, states, loop)
    if unfair is not None:
        return ReplayOutcome(
            False,
            f"the lasso replays, but it is not a fair behaviour of variant {variant}: "
            f"{unfair}, so it is no counterexample to {prop} (the spec's fairness rules it out)",
            loop,
        )
    for i, (_params, predicate, premise) in enumerate(tprop.instances):
        cond = tprop.start(i)
        if cond is not None and not cond(states[0]):
            continue  # this instance is checked only from initial states where it holds
        q = [predicate(s) for s in states]
        if tprop.kind == TemporalKind.EVENTUALLY:
            broken = not any(q)
        elif tprop.kind == TemporalKind.ALWAYS_EVENTUALLY:
            broken = not any(q[loop:])
        elif tprop.kind == TemporalKind.EVENTUALLY_ALWAYS:
            broken = not all(q[loop:])
        else:
            assert premise is not None
            p = [premise(s) for s in states]
            start = next((k for k in range(last + 1) if p[k] and not q[k]), None)
            broken = start is not None and not any(q[min(start, loop) :])
        if broken:
            return ReplayOutcome(
                True,
                f"the lasso is a real behaviour of variant {variant} and violates {prop} "
                f"(cycle from state {loop})",
            )
    return ReplayOutcome(False, f"the lasso replays, but {prop} holds on it in variant {variant}")
