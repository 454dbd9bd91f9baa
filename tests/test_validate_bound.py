"""Trace validation that evaluates only what an event names: instances bound from
the log (``On.instances``) give the same verdicts, the same states examined and the
same matched behaviour as sifting every instance with ``where``, on random runs of the
pysyncobj spec (and on tampered ones); a bound instance is one of the action's own,
strictly (``True`` is not ``1``)."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import CompiledSpec, Spec, action
from checker.authoring.loader import load_spec_class
from checker.check.validate import LogError, LogEvent, LogMapping, On, Validator

BOUNDS = {"MaxTerm": 6, "MaxIndex": 6, "MaxRestarts": 2}


def _named(ev: dict[str, Any], p: tuple[Any, ...]) -> bool:
    return bool(p[0].name == ev["node"])


#: The pysyncobj spec's mapping written the other way: every instance sifted by where.
SIFTED = LogMapping(
    events={
        "Timeout": On(actions=("Timeout",), where=_named),
        "UpdateTerm": On(
            actions=("UpdateTerm",),
            where=lambda ev, p: _named(ev, p) and p[1] == ev["term"],
            after_silent=False,
        ),
        "Vote": On(
            actions=("Vote",), where=lambda ev, p: _named(ev, p) and p[1].name == ev["candidate"]
        ),
        "BecomeLeader": On(actions=("BecomeLeader",), where=_named),
        "BecomeFollower": On(actions=("BecomeFollower",), where=_named),
        "StepDown": On(actions=("StepDown",), where=_named),
        "AdvanceCommit": On(
            actions=("AdvanceCommit",), where=lambda ev, p: _named(ev, p) and p[1] == ev["index"]
        ),
        "Restart": On(actions=("Restart",), where=_named, after_silent=False),
    },
    silent=("UpdateTerm",),
    max_silent=1,
    silent_where=lambda ev, p: bool(p[0].name == ev.get("node")),
)


def _event(line: int, name: str, params: tuple[Any, ...], after: Any) -> LogEvent:
    """What the harness (tests/pysyncobj_harness.py) logs for one step."""
    n = params[0]
    k = n.name
    got: dict[str, Any] = {"node": k}
    state: dict[str, Any] = {}
    if name == "UpdateTerm":
        got["term"] = params[1]
        state = {f"term[{k}]": after.term[n]}
    elif name == "Vote":
        got["candidate"] = params[1].name
        state = {f"votedFor[{k}]": params[1].name}
    elif name == "AdvanceCommit":
        got["index"] = params[1]
        state = {f"commitIndex[{k}]": after.commitIndex[n]}
    elif name in ("Timeout", "Restart"):
        voted = after.votedFor[n]
        state = {f"term[{k}]": after.term[n], f"role[{k}]": after.role[n]}
        state[f"votedFor[{k}]"] = voted.name if voted is not None else None
    else:
        state = {f"role[{k}]": after.role[n]}
    return LogEvent(line, name, got, state)


def _random_log(model: CompiledSpec, seed: int, steps: int) -> list[LogEvent]:
    """A random run of the spec as the harness would log it, with some term
    adoptions left unlogged: at most one in a row (the mapping's max_silent), and
    only right before a logged step of the same node (its silent_where)."""
    rng = random.Random(seed)
    state = model.initial_states()[0]
    events: list[LogEvent] = []
    names = model.action_names
    for _ in range(steps):
        succ = model.successors(state)
        if not succ:
            break
        ai, params, after = succ[rng.randrange(len(succ))]
        if names[ai] == "UpdateTerm" and rng.random() < 0.3:
            then = [c for c in model.successors(after) if c[1][0] is params[0]]
            if then:  # unlogged, then a logged step of the same node
                ai, params, after = then[rng.randrange(len(then))]
        state = after
        events.append(_event(len(events) + 1, names[ai], params, state))
    return events


def _run_log(seed: int, steps: int, tamper: bool) -> tuple[Any, CompiledSpec, list[LogEvent]]:
    """The spec, its model and a random run's log; with ``tamper``, one event's
    parameter changed (usually no behaviour matches any more)."""
    cls = load_spec_class("pysyncobj_raft")
    model = CompiledSpec(cls(**BOUNDS), properties=["none"], symmetry=False)
    events = _random_log(model, seed, steps)
    if tamper and events:
        i = random.Random(seed).randrange(len(events))
        ev = events[i]
        params = dict(ev.params)
        if "index" in params:
            params["index"] += 1
        elif "term" in params:
            params["term"] += 1
        else:
            params["node"] = {"a": "b", "b": "c", "c": "a"}[params["node"]]
        events[i] = LogEvent(ev.line, ev.name, params, ev.state)
    return cls, model, events


def _outcome(model: CompiledSpec, mapping: LogMapping, events: list[LogEvent]) -> Any:
    out = Validator(model, mapping).run(events)
    labels = out.trace.labels() if out.trace is not None else None
    return out.ok, out.events, out.states, out.reason, out.failed, labels


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 40), tamper=st.booleans())
def test_bound_instances_agree_with_sifted_ones(seed: int, steps: int, tamper: bool) -> None:
    cls, model, events = _run_log(seed, steps, tamper)
    bound = _outcome(model, cls.log_mapping, events)
    sifted = _outcome(model, SIFTED, events)
    assert bound == sifted
    if not tamper:
        assert bound[0], bound[3]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 40), tamper=st.booleans())
def test_no_silent_step_before_a_term_adoption_or_restart_loses_nothing(
    seed: int, steps: int, tamper: bool
) -> None:
    """The spec's mapping tries no silent step before a logged UpdateTerm or Restart
    (either overwrites what a silent term adoption changes): the verdict is the one
    trying them gives, on random runs and tampered ones."""
    cls, model, events = _run_log(seed, steps, tamper)
    m = cls.log_mapping
    everywhere = LogMapping(
        events={k: dataclasses.replace(v, after_silent=True) for k, v in m.events.items()},
        silent=m.silent,
        max_silent=m.max_silent,
        silent_where=m.silent_where,
    )
    tight = Validator(model, m).run(events)
    loose = Validator(model, everywhere).run(events)
    assert (tight.ok, tight.events, tight.failed) == (loose.ok, loose.events, loose.failed)
    assert tight.states <= loose.states


class _S(NamedTuple):
    last: Any


class _Values(Spec):
    """One action over values that are equal in Python and not in TLA+."""

    name = "values"
    constants: dict[str, Any] = {}

    def init(self) -> list[_S]:
        return [_S(None)]

    @action(over=(lambda self: [1, True, 2, (1, 2)],))
    def Put(self, s: _S, v: Any) -> _S:
        return _S(v)


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        ([(True,)], [True]),
        ([(1,)], [1]),
        ([(2,), (1,)], [1, 2]),  # in the family's order, not the log's
        ([(3,)], []),
        ([([1],)], []),  # unhashable: no instance is one
        ([((1, 2),)], [(1, 2)]),
    ],
)
def test_a_bound_instance_is_one_of_the_actions_own_strictly(
    bound: list[tuple[Any, ...]], expected: list[Any]
) -> None:
    model = CompiledSpec(_Values(), properties=["none"])
    s0 = model.initial_states()[0]
    got = model.successors_among(s0, [0], bound=bound)
    assert [p[0] for _, p, _ in got] == expected
    assert [type(p[0]) for _, p, _ in got] == [type(v) for v in expected]
    assert [t.last for _, _, t in got] == expected


def test_a_mapping_that_binds_badly_is_one_line() -> None:
    cls = load_spec_class("pysyncobj_raft")
    model = CompiledSpec(cls(**BOUNDS), properties=["none"], symmetry=False)
    missing = [LogEvent(3, "Timeout", {"who": "a"}, {})]
    with pytest.raises(LogError, match="line 3: event 'Timeout' has no parameter 'node'"):
        Validator(model, cls.log_mapping).run(missing)
    odd = LogMapping(events={"Timeout": On(actions=("Timeout",), instances=lambda sp, ev: ["a"])})
    with pytest.raises(LogError, match="not a tuple of the action's parameters"):
        Validator(model, odd).run([LogEvent(4, "Timeout", {}, {})])


def test_silent_steps_only_where_the_mapping_allows_them() -> None:
    model = CompiledSpec(load_spec_class("die_hard")(), properties=["none"])
    # The small jug is emptied after unlogged fills: allowed only where the event
    # says so (silent_where reads the event's parameters).
    mapping = LogMapping(
        events={"empty": On(actions=("EmptySmall",), state={"small": "small"})},
        silent=("FillBig", "BigToSmall"),
        max_silent=2,
        silent_where=lambda ev, p: bool(ev.get("unlogged")),
    )
    ok = [LogEvent(7, "empty", {"unlogged": True}, {"small": 0})]
    assert Validator(model, mapping).run(ok).ok
    out = Validator(model, mapping).run([LogEvent(7, "empty", {}, {"small": 0})])
    assert not out.ok and "no candidate state enables EmptySmall" in out.reason


def test_a_long_behaviour_is_shown_from_its_end() -> None:
    from rich.console import Console

    from checker.traces.render import render_trace

    model = CompiledSpec(load_spec_class("die_hard")(), properties=["none"])
    log = [
        LogEvent(1, "FillBig", {}, {"big": 5}),
        LogEvent(2, "BigToSmall", {}, {"big": 2}),
        LogEvent(3, "EmptySmall", {}, {"small": 0}),
    ]
    out = Validator(model, None).run(log)
    assert out.ok and out.trace is not None
    console = Console(record=True, width=100)
    render_trace(out.trace, console, last=1)
    text = console.export_text()
    assert "(2 earlier steps not shown)" in text
    assert "State 3: BigToSmall  [log line 2]" in text and "big = 2" in text
    assert "State 4: EmptySmall  [log line 3]" in text and "FillBig" not in text
    console = Console(record=True, width=100)
    render_trace(out.trace, console)
    assert "FillBig" in console.export_text()


def test_the_bench_log_of_a_real_run_validates() -> None:
    """bench/data's 12,055 events of a real pysyncobj run are a behaviour of the spec
    (and stay one: the bench times this; here only the verdict counts)."""
    import gzip

    from bench.validation import LOG, bounds

    lines = gzip.decompress(LOG.read_bytes()).decode().splitlines()
    cls = load_spec_class("pysyncobj_raft")
    model = CompiledSpec(cls(**bounds(lines)), properties=["none"], symmetry=False)
    events = []
    for n, line in enumerate(lines, start=1):
        obj = json.loads(line)
        events.append(LogEvent(n, obj["event"], obj.get("params", {}), obj.get("state", {})))
    out = Validator(model, cls.log_mapping).run(events)
    assert out.ok, (out.failed, out.reason)
    assert out.events == len(lines) == 12055
