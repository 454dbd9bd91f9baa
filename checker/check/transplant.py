"""Transplant a TLC counterexample into a Python spec: reproduced, or where it diverges.

A report's TLC run found a behaviour of the TLA+ model (:mod:`checker.traces.tlc_trace`
reads it).  Does the Python port have it too?  The spec is searched, breadth first,
for a behaviour that matches the counterexample state by state, as trace validation
matches a log (:class:`checker.check.validate.Validator`, whose mapping form this
shares): each TLC state is an event whose recorded values are its variables (the
mapping's names), each step may be only the spec's action of TLC's name (with TLC's
argument values, compared left to right: ``SendMsg(2)`` matches ``SendMsg(2, j)`` for
any ``j``), or any action where TLC names none the spec has (raft.tla prints every
step as ``Next``); the mapping's silent actions may come between two TLC steps.

Then either
- **reproduced**: the matching behaviour, checked to end in TLC's violation by
  :func:`checker.traces.replay.replay` (the invariant false in its last state, the
  deadlock, the action property broken by its last step, or, for a lasso, the cycle
  closed, fair under the spec's fairness and violating the temporal property); or
- **diverges**: the first TLC state no behaviour reaches, TLC's action into it, and
  per spec action that could have taken the step, what refused it: no state enables
  it (its guard is false), or the variables whose values differ, TLC's beside the
  spec's.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from checker.base.errors import ConfigError
from checker.check.validate import LogEvent, LogMapping, On, Validation, Validator, _Node
from checker.explore.result import Result, Stats, Verdict
from checker.explore.trace import Step, Trace, make_step
from checker.model import CompiledSpec
from checker.traces.itf import itf_from_json, record_types, trace_to_itf
from checker.traces.replay import ReplayOutcome, replay
from checker.traces.tla_values import Canon, agrees, canon, tla_text
from checker.traces.tlc_trace import TlcAction, TlcTrace
from checker.values.fingerprint import encode

__all__ = ["MAX_ENDINGS", "Transplant", "transplant"]

#: Most matching behaviours judged (each is replayed once).
MAX_ENDINGS = 200


@dataclass
class Transplant:
    """What became of a TLC counterexample in the spec."""

    reproduced: bool
    message: str
    #: The matching behaviour (reproduced, or as far as it went), with a Result to
    #: show and save it as a run's counterexample is.
    result: Result | None = None
    #: The TLC state (its number) no behaviour reaches, and TLC's action into it.
    state: int | None = None
    tlc_action: str | None = None
    details: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    states: int = 0
    seconds: float = 0.0
    incomplete: str | None = None


def _remap(
    c: Canon, values: Mapping[str, Canon], fields: Mapping[str, str], strings: bool
) -> Canon:
    """A recorded value with the mapping's model values and field names applied
    (``strings``: a JSON dump's strings may be model values too)."""
    tag = c[0]
    if tag == "m" or (strings and tag == "s"):
        return values.get(c[1], c)
    if tag in ("seq", "arr"):
        return (tag, tuple(_remap(x, values, fields, strings) for x in c[1]))
    if tag == "set":
        return (tag, frozenset(_remap(x, values, fields, strings) for x in c[1]))
    if tag == "fn":
        out = []
        for k, v in c[1]:
            key = ("s", fields.get(k[1], k[1])) if k[0] in ("s", "m") and k[1] in fields else k
            out.append((_remap(key, values, fields, strings), _remap(v, values, fields, strings)))
        return (tag, frozenset(out))
    return c


def _compare(recorded: Any, actual: Any) -> bool:
    return agrees(recorded, canon(actual))


def _render(recorded: Any, actual: Any) -> tuple[str, str]:
    return tla_text(recorded, 200), tla_text(canon(actual), 200)


class _TlcValidator(Validator):
    """The validator, speaking of TLC's states rather than log lines."""

    numbers: dict[int, int]

    def explain(self, frontier: list[_Node], ev: LogEvent, rule: On) -> Validation:
        """Per spec action that could take TLC's step: the nearest miss."""
        best: dict[str, tuple[int, list[str]]] = {}
        for node, _c, ai, params, t in self._candidates(frontier, ev, rule):
            label = "the state" if ai is None else self.model.label(ai, params)
            diff = self.disagreements(ev, rule, t, node.state, ai)
            family = "the state" if ai is None else self.model.action_names[ai]
            rows = [
                f"{k}: TLC has {r}, the spec gives {a}"
                for k, r, a in ((k, *_render(rec, act)) for k, rec, act in diff)
            ]
            if family not in best or len(rows) < best[family][0]:
                best[family] = (len(rows), [f"{label} differs in {len(rows)} variable(s)", *rows])
        details: list[str] = []
        for _n, rows in sorted(best.values(), key=lambda r: r[0])[:3]:
            details.extend([rows[0], *("  " + r for r in rows[1:4])])
        enabled = set(best)
        idle = [name for name in rule.actions if name not in enabled]
        if idle:
            details.append(
                f"{', '.join(idle)}: not enabled in any of the {len(frontier)} spec state(s) "
                "that match TLC's state before (the guard is false)"
                + (" with TLC's arguments" if rule.where is not None else "")
            )
        if not rule.actions:
            reason = "no initial state of the spec is TLC's first state"
        elif not enabled:
            reason = (
                "no spec action can take this step: "
                + " or ".join(rule.actions)
                + (" is" if len(rule.actions) == 1 else " are")
                + " not enabled"
            )
        else:
            reason = "every spec action that can take this step gives a different state"
        return Validation(False, 0, failed=ev, reason="\n".join([reason, *details]))

    def behaviour(self, node: _Node) -> tuple[Trace, list[int | None]]:
        """The matched behaviour, its steps labelled with TLC's state numbers."""
        chain: list[_Node] = []
        n: _Node | None = node
        while n is not None:
            chain.append(n)
            n = n.parent
        chain.reverse()
        steps = [Step(state=chain[0].state, action=None)]
        lines: list[int | None] = [None]
        for c in chain[1:]:
            for ai, params, t, line in c.steps:
                st = make_step(self.model, ai, params, t)
                steps.append(st)
                lines.append(line)
        return Trace(steps=tuple(steps), var_names=self.model.var_names), lines


def _rule(
    model: CompiledSpec, action: TlcAction | None, mapping: LogMapping | None
) -> tuple[On, str | None]:
    """The actions that may take TLC's step, and a note when TLC's name is not one."""
    if action is None:
        return On(), None
    args = action.args

    def where(params: dict[str, Any], instance: tuple[Any, ...]) -> bool:
        return all(agrees(a, canon(x)) for a, x in zip(params["args"], instance, strict=False))

    chosen = mapping.events.get(action.name) if mapping and action.name else None
    if chosen is not None:
        return dataclasses.replace(chosen, where=chosen.where or (where if args else None)), None
    if action.name in model.action_names:
        return On(actions=(action.name,), where=where if args else None), None
    note = (
        f"TLC's action {action.name or action.text} is no action of {model.name}: "
        "any of its actions may take that step"
    )
    return On(actions=tuple(model.action_names), where=where if args else None), note


def transplant(
    model: CompiledSpec,
    spec_cls: type,
    tlc: TlcTrace,
    mapping: LogMapping | None = None,
    prop: str | None = None,
    max_states: int | None = None,
    timeout: float | None = None,
) -> Transplant:
    """Search ``model`` for ``tlc``'s behaviour; see the module docstring."""
    t0 = time.perf_counter()
    model.initial_states()  # fixes the variable names
    names = model.var_names
    renames = dict(mapping.variables) if mapping else {}
    unknown = [
        v for v in tlc.variables if renames.get(v, v) is not None and renames.get(v, v) not in names
    ]
    if unknown:
        raise ConfigError(
            f"TLC's variable {unknown[0]!r} is not a variable of {model.name} (variables: "
            f"{', '.join(names)}); map it with variables={{{unknown[0]!r}: NAME or None}}"
        )
    values = {k: canon(v) for k, v in (mapping.values if mapping else {}).items()}
    fields = dict(mapping.fields) if mapping else {}
    lossy = tlc.fmt == "json"
    notes = list(tlc.notes)
    missing = [n for n in names if n not in {renames.get(v, v) for v in tlc.variables}]
    if missing:
        notes.append(f"not in TLC's counterexample, so any value: {', '.join(missing)}")
    events: list[LogEvent] = []
    rules: dict[str, On] = {}
    for i, (state, action) in enumerate(zip(tlc.states, tlc.actions, strict=True)):
        recorded: dict[str, Any] = {}
        for v, c in state.items():
            target = renames.get(v, v)
            if target is not None:
                recorded[target] = _remap(c, values, fields, lossy)
        rule, note = _rule(model, action, mapping)
        if note and note not in notes:
            notes.append(note)
        key = f"step {i}"
        rules[key] = rule
        params = (
            {"args": tuple(_remap(a, values, fields, lossy) for a in action.args)} if action else {}
        )
        events.append(
            LogEvent(tlc.numbers[i], key, params, recorded, compare=_compare, render=_render)
        )
    vmapping = LogMapping(
        events=rules,
        silent=mapping.silent if mapping else (),
        max_silent=mapping.max_silent if mapping else 0,
        silent_where=mapping.silent_where if mapping else None,
    )
    validator = _TlcValidator(model, vmapping, max_states=max_states, timeout=timeout)
    validator.keep_paths = bool(missing) or any(len(s) < len(tlc.variables) for s in tlc.states)
    out = validator.run(events)
    took = time.perf_counter() - t0
    if out.incomplete is not None:
        return Transplant(False, f"incomplete: {out.incomplete}", notes=notes,
                          states=out.states, seconds=took, incomplete=out.incomplete)  # fmt: skip
    if not out.ok:
        assert out.failed is not None
        index = events.index(out.failed)
        action = tlc.actions[index]
        header = action.text if action else "<Initial predicate>"
        reason, *details = out.reason.split("\n")
        where = "TLC's first state" if index == 0 else f"TLC's state {out.failed.line}"
        closing = tlc.loop is not None and index == len(tlc.states) - 1
        back = f" (the lasso closing back to state {out.failed.line})" if closing else ""
        return Transplant(
            False,
            f"diverges at {where}{back} {header}: {reason}",
            state=out.failed.line,
            tlc_action=header,
            details=details,
            notes=notes,
            states=out.states,
            seconds=took,
        )
    # Every behaviour that matched, until one ends in TLC's violation: where TLC
    # printed less than the whole state (-difftrace), several may match, and only
    # some close the lasso or break the property.
    outcome: ReplayOutcome | None = None
    judged: str | None = None
    trace: Trace | None = None
    for node in validator.frontier[:MAX_ENDINGS]:
        candidate, _ = validator.behaviour(node)
        if tlc.loop is not None:
            candidate = dataclasses.replace(candidate, loop=tlc.loop)
            if _enc(model, candidate.steps[tlc.loop].state) != _enc(
                model, candidate.steps[-1].state
            ):
                continue
        got, name = _judge(model, spec_cls, tlc, candidate, mapping, prop)
        if outcome is None or (got.ok and not outcome.ok):
            outcome, judged, trace = got, name, candidate
        if got.ok:
            break
    if outcome is None or trace is None:
        return Transplant(
            False,
            f"diverges at the lasso's end: the spec's behaviours match TLC's states, but none "
            f"returns to its state {(tlc.loop or 0) + 1} exactly (variables TLC does not "
            "print differ), so no cycle closes",
            notes=notes, states=out.states, seconds=took,
        )  # fmt: skip
    result = Result(
        spec=model.name,
        variant=model.spec.variant,
        verdict=Verdict.DEADLOCK if judged == "Deadlock" else Verdict.VIOLATION,
        stats=Stats(),
        constants=dict(model.spec.constant_values),
        symmetry=False,
        strategy="transplant",
        action_names=tuple(model.action_names),
        violated=None if judged == "Deadlock" else judged,
        trace=trace,
        liveness=tlc.loop is not None,
        action_property=judged in model.action_property_names,
    )
    took = time.perf_counter() - t0
    return Transplant(
        outcome.ok,
        outcome.message,
        result=result,
        details=list(outcome.details),
        notes=notes,
        states=out.states,
        seconds=took,
    )


def _enc(model: CompiledSpec, state: Any) -> tuple[Any, ...]:
    return tuple(encode(v) for v in model.variables(state))


def _judge(
    model: CompiledSpec,
    spec_cls: type,
    tlc: TlcTrace,
    trace: Trace,
    mapping: LogMapping | None,
    prop: str | None,
) -> tuple[ReplayOutcome, str | None]:
    """Does the matched behaviour end in TLC's violation?  Judged by replaying it as
    mcheck's own trace; where the file does not name the property (a dump), each of
    the spec's properties of the right kind is tried."""
    renamed = dict(mapping.properties) if mapping else {}
    wanted = prop or (renamed.get(tlc.violated, tlc.violated) if tlc.violated else None)
    if wanted is not None:
        candidates = [wanted]
    elif tlc.verdict == "deadlock":
        candidates = ["Deadlock"]
    elif tlc.loop is not None:
        candidates = [t.name for t in model.temporal]
    else:
        candidates = [*model.invariant_names, *model.action_property_names, "Deadlock"]
    if (tlc.verdict == "deadlock" and wanted is None) or tlc.verdict == "deadlock":
        candidates = ["Deadlock"]
    kinds = (
        list(model.invariant_names)
        + list(model.action_property_names)
        + [t.name for t in model.temporal]
        + ["Deadlock"]
    )
    if wanted is not None and wanted not in kinds:
        return (
            ReplayOutcome(
                False,
                f"the behaviour is the spec's, but TLC's property {wanted} is not a property of "
                f"{model.name} (name the spec's with --property, or map it: properties=...)",
            ),
            wanted,
        )
    meta = [{"action": "init"}] + [
        {"action": s.action, "action_name": s.action_name, "params": list(s.params)}
        for s in trace.steps[1:]
    ]
    first: ReplayOutcome | None = None
    for name in candidates:
        doc = trace_to_itf(
            [s.state for s in trace.steps],
            trace.var_names,
            model.variables,
            meta,
            {"spec": model.name, "variant": model.spec.variant, "property": name},
            loop=trace.loop,
        )
        outcome = replay(
            model, itf_from_json(doc, "the transplanted trace", record_types(spec_cls))
        )
        if outcome.ok:
            return outcome, name
        first = first or outcome
    if first is None:
        return ReplayOutcome(
            False, "the behaviour is the spec's, but it has no property to judge"
        ), None
    if wanted is None:
        return (
            ReplayOutcome(
                False,
                "the behaviour is the spec's, but none of its properties fails at its end "
                f"(tried {', '.join(candidates)})",
            ),
            None,
        )
    return first, wanted
