"""Trace validation: is an implementation's log a behaviour of the spec?

The check is the one of Cirstea, Kuppe, Loillier and Merz (trace validation with
TLC, 2024): a breadth-first search over the spec states consistent with the log so
far.  Each log event advances the frontier through the actions its mapping allows
(after at most ``max_silent`` steps of the actions that may happen unlogged), keeping
only the successors whose values agree with what the event recorded (a *partial*
state: an implementation logs what it can see, not the whole model).  An event with
no action is an observation: the state (after silent steps) must agree with it.  The
log is a behaviour of the spec when the frontier never empties; otherwise the first
event no behaviour can match is reported, with the candidate states before it and
what disagreed.

Logs come in three forms (:func:`read_log`): NDJSON, one event a line (``{"event":
NAME, "params": {...}, "state": {...}}``); mcheck's own ITF traces (every state
full, the action named); and text logs of Ratis/Ozone servers, turned into events by
the regular expressions of :data:`RATIS_LOG_PATTERNS` (``--format ratis-log``).

A spec says how its events map to actions with a class attribute ``log_mapping`` (a
:class:`LogMapping`), or a module passed with ``--map`` defines ``MAPPING``.  Without
one, an event's name is an action's name and its ``state`` names variables.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.base.errors import ConfigError, EvaluationError, MCheckError
from checker.base.reading import TooLarge, read_bounded
from checker.base.signals import DeadlineReached, ignore_interrupts, stop_signals, watchdog
from checker.explore.trace import Step, Trace, make_step
from checker.model import CompiledSpec
from checker.values import ModelValue
from checker.values.fingerprint import StateFingerprinter
from checker.values.show import show

__all__ = [
    "MAX_LOG_BYTES",
    "RATIS_LOG_PATTERNS",
    "LogError",
    "LogEvent",
    "LogMapping",
    "On",
    "Validation",
    "Validator",
    "mapping_of",
    "read_itf_log",
    "read_log",
    "read_ndjson",
    "read_ratis_log",
]


class LogError(MCheckError):
    """A malformed log: the line and the reason (exit 2)."""


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One implementation event: its name, parameters, and the values it recorded."""

    line: int
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    #: Values already of the spec's own types (an ITF trace): a model value is
    #: compared as ``normalize`` (the trace reader's) makes it read back.
    normalize: Callable[[Any], Any] | None = None
    text: str = ""
    #: How a recorded value is compared with the spec's (recorded, spec's) -> bool,
    #: and both shown (recorded, spec's) -> (text, text), where the recorded values
    #: are not the log's plain JSON (a TLC counterexample's TLA+ values).
    compare: Callable[[Any, Any], bool] | None = None
    render: Callable[[Any, Any], tuple[str, str]] | None = None


#: Reads a recorded value from a state: a variable's name, or a function of
#: (spec, state) for a value the implementation logs but the model derives.
Getter = str | Callable[[Any, Any], Any]


@dataclass(frozen=True)
class On:
    """What one event name may be: the actions it may be (none: an observation of
    the current state), which of their instances (``where(params of the event, the
    action's parameters)``), and how the event's recorded values read from a state
    (``state``: recorded name -> variable or getter; unnamed values are variables);
    ``instances`` names the instances directly, from the event's parameters."""

    actions: tuple[str, ...] = ()
    where: Callable[[dict[str, Any], tuple[Any, ...]], bool] | None = None
    state: Mapping[str, Getter] = field(default_factory=dict)
    #: The instances the event names, bound from its parameters (as a TLA+ trace
    #: spec binds ``\E i \in {ev.index}``): ``instances(spec, params of the event)
    #: -> parameter tuples``.  Only those are evaluated (each must be one of the
    #: action's own instances), not every instance ``where`` would have to sift:
    #: an action over a wide range (a commit index up to MaxIndex) stays cheap.
    instances: Callable[[Any, dict[str, Any]], Any] | None = None
    #: Whether the mapping's silent actions may come before this event.  False where
    #: they could change nothing the event does not overwrite (a term adoption right
    #: before a logged one): the same behaviours, without examining each silent path.
    after_silent: bool = True
    #: The event's own comparison, for what a variable reader cannot say: a value
    #: the model derives from several variables, the message a step sent, the state
    #: before the step (a TLA+ trace spec's ``ValidatePreStates``).  ``check(spec,
    #: params of the event, state before, state after, action name or None)`` -> the
    #: disagreements, as (name, recorded, model's); "before" is the state before any
    #: silent step.
    check: (
        Callable[[Any, dict[str, Any], Any, Any, str | None], Iterable[tuple[str, Any, Any]]] | None
    ) = None


@dataclass(frozen=True)
class LogMapping:
    """How a log's events map to a spec: per event name an :class:`On`; the actions
    that may happen between two events without being logged, and how many of them."""

    events: Mapping[str, On]
    silent: tuple[str, ...] = ()
    max_silent: int = 0
    #: Which silent instances may come before an event: ``silent_where(params of
    #: the event, the silent action's parameters)`` (None: any).  An implementation
    #: that logs per node changes its own node unlogged, not every node: without
    #: this, each silent instance of every node multiplies the candidate states.
    silent_where: Callable[[dict[str, Any], tuple[Any, ...]], bool] | None = None
    #: A recorded name -> the spec's variable (None: not modelled, ignored): for a
    #: log's state fields and a TLC counterexample's variables alike.
    variables: Mapping[str, str | None] = field(default_factory=dict)
    #: A recorded name (a TLA+ model value, a log's string) -> the spec's value.
    values: Mapping[str, Any] = field(default_factory=dict)
    #: A recorded record field -> the spec's field.
    fields: Mapping[str, str] = field(default_factory=dict)
    #: A recorded property name -> the spec's (a TLC invariant named otherwise).
    properties: Mapping[str, str] = field(default_factory=dict)
    #: The constants a log fixes, as a TLA+ trace spec's ``CONSTANT Server <-
    #: TraceServer`` does: ``constants(path, events)`` -> overrides (the servers the
    #: log names, a limit its configuration line gives).  The spec is made anew for
    #: each log.
    constants: Callable[[Path, list[LogEvent]], Mapping[str, Any]] | None = None
    #: The initial states the log's own opening gives, and the events left to
    #: match, as a trace spec's ``TraceInit`` and its reading of the log do:
    #: ``prepare(spec, events)`` -> (initial states, events).  Without it the spec's
    #: own initial states start every log.
    prepare: Callable[[Any, list[LogEvent]], tuple[list[Any], list[LogEvent]]] | None = None


# -- reading logs ---------------------------------------------------------------------

#: Ratis/Ozone log lines -> events: (pattern, event name).  A named group becomes a
#: parameter (integers as ints); lines that match no pattern are not events.  The
#: messages are Ratis's own (SnapshotInstallationHandler, GrpcLogAppender,
#: FollowerInfoImpl); a pattern matches anywhere in the line, so any log layout works.
RATIS_LOG_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"receive installSnapshot.*notify:\(t:(?P<term>-?\d+), i:(?P<first>-?\d+)\)"),
        "receiveInstallSnapshotNotification",
    ),
    (re.compile(r"StateMachine snapshotIndex is (?P<snapshotIndex>-?\d+)"), "snapshotIndex"),
    (
        re.compile(
            r"reply installSnapshot.*?\b(?P<result>ALREADY_INSTALLED|IN_PROGRESS|SUCCESS|"
            r"SNAPSHOT_INSTALLED|SNAPSHOT_UNAVAILABLE|NOT_LEADER|CONF_MISMATCH)\b"
        ),
        "replyInstallSnapshot",
    ),
    (
        re.compile(r"matchIndex: setUnconditionally (?P<old>-?\d+) -> (?P<new>-?\d+)"),
        "matchIndexSet",
    ),
    (
        re.compile(r"nextIndex: setUnconditionally (?P<old>-?\d+) -> (?P<new>-?\d+)"),
        "nextIndexSet",
    ),
    (
        re.compile(r"nextIndex: updateToMax old=(?P<old>-?\d+), new=(?P<new>-?\d+)"),
        "nextIndexSet",
    ),
]

#: Largest log read (bytes).
MAX_LOG_BYTES = 256 * 1024 * 1024


def _read_text(path: Path) -> str:
    try:
        return read_bounded(path, MAX_LOG_BYTES).decode("utf-8")
    except TooLarge:
        raise LogError(f"{path} is larger than {MAX_LOG_BYTES:,} bytes") from None
    except FileNotFoundError:
        raise LogError(f"log file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise LogError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise LogError(f"{path}: {exc.strerror or exc}") from None


def read_ndjson(path: Path, tag: str = "trace") -> list[LogEvent]:
    """Events from an NDJSON log (blank lines and ``#`` comments skipped), in either
    form: mcheck's flat one (``{"event": NAME, "params": {...}, "state": {...}}``), or
    Specula's envelope (``{"tag": "trace", "ts": ..., "event": {"name": NAME, "nid":
    ..., "state": {...}, "msg": {...}}}``), in which only lines with the tag ``tag``
    are events (a ``"tag": "config"`` line and lines without the tag are skipped, as
    Specula's harnesses document) and every field of the event but ``name`` and
    ``state`` is a parameter (``nid``, ``msg``, ...)."""
    events: list[LogEvent] = []
    # Each line is made an event as it is read, so a large log is not held twice
    # over.  The log is in the envelope form if any line has a "tag": then the lines
    # read as flat events so far are dropped, and so is any complaint about them.
    enveloped = False
    flat_error: str | None = None
    for n, raw in enumerate(_read_text(path).splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LogError(f"{path}:{n}: not JSON ({exc.msg} at column {exc.colno})") from None
        except (ValueError, RecursionError) as exc:
            # An integer of thousands of digits, or nesting deeper than any event.
            raise LogError(f"{path}:{n}: not a loggable value ({exc})") from None
        if not isinstance(obj, dict):
            raise LogError(f"{path}:{n}: an event must be a JSON object")
        if not enveloped and "tag" in obj:
            enveloped, flat_error = True, None
            events.clear()
        if enveloped:
            if obj.get("tag") == tag:
                events.append(_enveloped(path, n, text, obj))
        elif flat_error is None:
            flat = _flat(n, text, obj)
            if isinstance(flat, str):
                flat_error = f"{path}:{n}: {flat}"
            else:
                events.append(flat)
    if flat_error is not None:
        raise LogError(flat_error)
    return events


def _flat(n: int, text: str, obj: dict[str, Any]) -> LogEvent | str:
    """One event of mcheck's flat form, or what is wrong with it."""
    name = obj.get("event")
    if not isinstance(name, str) or not name:
        return 'the event has no "event" name'
    params, state = obj.get("params", {}), obj.get("state", {})
    if not isinstance(params, dict) or not isinstance(state, dict):
        return '"params" and "state" must be objects'
    unknown = set(obj) - {"event", "params", "state", "time", "node"}
    if unknown:
        return f"unknown field {sorted(unknown)[0]!r}"
    return LogEvent(n, name, params, state, text=text)


def _enveloped(path: Path, n: int, text: str, obj: dict[str, Any]) -> LogEvent:
    """One event of Specula's envelope (see :func:`read_ndjson`)."""
    event = obj.get("event")
    if not isinstance(event, dict):
        raise LogError(f'{path}:{n}: a "{obj.get("tag")}" line has no "event" object')
    name = event.get("name")
    if not isinstance(name, str) or not name:
        raise LogError(f'{path}:{n}: the event has no "name"')
    state = event.get("state", {})
    if not isinstance(state, dict):
        raise LogError(f'{path}:{n}: the event\'s "state" must be an object')
    params = {k: v for k, v in event.items() if k not in ("name", "state")}
    return LogEvent(n, name, params, state, text=text)


def read_ratis_log(path: Path) -> list[LogEvent]:
    """Events from a Ratis/Ozone text log (see :data:`RATIS_LOG_PATTERNS`)."""
    events: list[LogEvent] = []
    for n, raw in enumerate(_read_text(path).splitlines(), start=1):
        for pattern, name in RATIS_LOG_PATTERNS:
            m = pattern.search(raw)
            if m is None:
                continue
            params = {
                k: int(v) if re.fullmatch(r"-?\d{1,30}", v) else v for k, v in m.groupdict().items()
            }
            events.append(LogEvent(n, name, params, text=raw.strip()))
            break
    if not events:
        raise LogError(f"{path}: no line is a Ratis event mcheck knows (see RATIS_LOG_PATTERNS)")
    return events


def read_itf_log(path: Path, spec_cls: type) -> list[LogEvent]:
    """Events from an ITF trace: each step's action, and every variable after it."""
    from checker.traces.itf import TraceFileError, read_itf, record_types

    try:
        trace = read_itf(path, types=record_types(spec_cls))
    except TraceFileError as exc:
        raise LogError(str(exc)) from None
    norm = trace.normalize
    events = [LogEvent(1, "init", state=dict(trace.states[0]), normalize=norm)]
    for i, (st, meta) in enumerate(zip(trace.states[1:], trace.steps[1:], strict=True), start=2):
        name = meta.get("action_name") or str(meta.get("action", "")).split("(")[0]
        events.append(LogEvent(i, str(name), state=dict(st), normalize=norm))
    return events


def read_log(path: Path, fmt: str, spec_cls: type, tag: str = "trace") -> list[LogEvent]:
    """A log as events: ``fmt`` is ndjson, itf, ratis-log or auto (by the name); an
    NDJSON log in Specula's envelope keeps the lines tagged ``tag``.  A log with no
    event is refused: it would match every spec, and say nothing."""
    if fmt == "auto":
        fmt = "itf" if path.name.endswith(".itf.json") else "ndjson"
        if path.suffix == ".log":
            fmt = "ratis-log"
    if fmt == "ndjson":
        events = read_ndjson(path, tag)
    elif fmt == "itf":
        events = read_itf_log(path, spec_cls)
    elif fmt == "ratis-log":
        events = read_ratis_log(path)
    else:
        raise ConfigError(f"unknown log format {fmt!r} (ndjson, itf, ratis-log)")
    if not events:
        raise LogError(f"{path} holds no event: an empty log is no evidence of anything")
    return events


# -- comparing recorded values with the model's ---------------------------------------


def _plain(v: Any) -> Any:
    """A spec value in the plain form a JSON log writes it in."""
    if isinstance(v, ModelValue):
        return v.name
    if hasattr(v, "_fields"):
        return {k: _plain(x) for k, x in zip(v._fields, v, strict=True)}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, Mapping) or hasattr(v, "items"):
        return {str(_plain(k)): _plain(x) for k, x in v.items()}
    if isinstance(v, frozenset | set) or type(v).__name__ in ("PSet", "PBag"):
        return sorted((_plain(x) for x in v), key=repr)
    if isinstance(v, tuple | list) or type(v).__name__ == "PVector":
        return [_plain(x) for x in v]
    if hasattr(v, "name") and hasattr(v, "value") and type(v).__module__ != "builtins":
        return v.name  # an Enum member
    return v


def _agrees(recorded: Any, actual: Any) -> bool:
    plain = _plain(actual)
    if isinstance(plain, list) and isinstance(recorded, list) and _is_set(actual):
        return sorted(recorded, key=repr) == plain
    return bool(recorded == plain)


def _is_set(v: Any) -> bool:
    return isinstance(v, frozenset | set) or type(v).__name__ in ("PSet", "PBag")


# -- the search -----------------------------------------------------------------------


@dataclass(slots=True)
class _Node:
    state: Any
    parent: _Node | None
    #: Steps taken from the parent: (action index, params, state, log line or None).
    steps: tuple[tuple[int, tuple[Any, ...], Any, int | None], ...]
    #: Observations matched here: log lines.
    seen: tuple[int, ...] = ()
    #: The state's fingerprint and its variables' terms (a successor's fingerprint
    #: is computed from them by what changed, as the explorer does).
    fp: int = 0
    terms: tuple[int, ...] = ()


@dataclass
class Validation:
    """The verdict on a log."""

    ok: bool
    events: int
    #: The matching behaviour (steps labelled with their log lines), when ok.
    trace: Trace | None = None
    #: The first event no behaviour matches, and why.
    failed: LogEvent | None = None
    reason: str = ""
    candidates: list[Any] = field(default_factory=list)
    states: int = 0
    seconds: float = 0.0
    incomplete: str | None = None
    #: The log line of each trace step (None: a silent step, or the initial state).
    lines: list[int | None] = field(default_factory=list)
    #: After a mismatch: per candidate behaviour, each action the event may be and
    #: what refused it.
    details: list[str] = field(default_factory=list)


class Validator:
    """Breadth-first trace validation of ``events`` against ``model``."""

    def __init__(
        self,
        model: CompiledSpec,
        mapping: LogMapping | None,
        max_states: int | None = None,
        timeout: float | None = None,
    ) -> None:
        self.model = model
        self.mapping = mapping
        self.max_states = max_states
        self.timeout = timeout
        self.index = {n: i for i, n in enumerate(model.action_names)}
        # The model knows its variables once it has made its initial states: the
        # fingerprinter is made then (an incremental fingerprint walks them).
        self._fpr: StateFingerprinter | None = None
        self.silent = self._actions(mapping.silent if mapping else (), "silent")
        self.max_silent = mapping.max_silent if mapping else 0
        self.states = 0
        #: After a log every event of which matched: the states consistent with it.
        self.frontier: list[_Node] = []
        #: Keep every path to a state, not one (see :meth:`advance`).
        self.keep_paths = False

    def _actions(self, names: tuple[str, ...], where: str) -> set[int]:
        unknown = [n for n in names if n not in self.index]
        if unknown:
            raise ConfigError(
                f"the log mapping's {where} names unknown action {unknown[0]!r} "
                f"(known: {', '.join(self.model.action_names)})"
            )
        return {self.index[n] for n in names}

    def rule(self, ev: LogEvent) -> On:
        """The mapping's rule for an event (default: the action of that name)."""
        if self.mapping is not None:
            got = self.mapping.events.get(ev.name)
            if got is None:
                known = ", ".join(sorted(self.mapping.events)) or "none"
                raise LogError(f"line {ev.line}: unknown event {ev.name!r} (mapped: {known})")
            self._actions(got.actions, f"event {ev.name}")
            return got
        if ev.name == "init":
            return On()
        if ev.name not in self.index:
            raise LogError(
                f"line {ev.line}: event {ev.name!r} is not an action of {self.model.name} "
                "(give --map to map event names to actions)"
            )
        return On(actions=(ev.name,))

    @property
    def fpr(self) -> StateFingerprinter:
        """The fingerprinter, for the model's variables (no symmetry: the log names
        real nodes)."""
        if self._fpr is None:
            self.model.initial_states()
            self._fpr = StateFingerprinter(len(self.model.var_names), [{}])
        return self._fpr

    def _root(self, state: Any) -> _Node:
        fp, terms = self.fpr.initial(self.model.variables(state))
        return _Node(state, None, (), fp=fp, terms=terms)

    def _fp_after(self, parent: _Node, state: Any) -> tuple[int, tuple[int, ...]]:
        """A successor's fingerprint and terms from its parent's (what changed only)."""
        variables = self.model.variables
        return self.fpr.child(variables(state), variables(parent.state), parent.terms)

    def readers(self, ev: LogEvent, rule: On) -> list[tuple[str, Any, int, str | None, Getter]]:
        """How each value ``ev`` recorded reads from a state, worked out once per
        event: (name, recorded value, variable position or -1, key within the
        variable or None, getter)."""
        values = dict(ev.state)
        if rule.state:
            values.update({k: v for k, v in ev.params.items() if k in rule.state})
        names = self.model.var_names
        out: list[tuple[str, Any, int, str | None, Getter]] = []
        for key, recorded in values.items():
            getter: Getter = rule.state.get(key, key)
            if isinstance(getter, str) and "{" in getter:
                # "currentTerm[{nid}]": the event's own node, named by its parameter.
                try:
                    getter = getter.format_map(ev.params)
                except (KeyError, IndexError, ValueError) as exc:
                    raise LogError(
                        f"line {ev.line}: {key!r} reads {getter!r}, but the event has no "
                        f"parameter {exc}"
                    ) from None
            if not isinstance(getter, str):
                out.append((key, recorded, -1, None, getter))
                continue
            # "term[a]": variable term, at the key named a (a node's own value).
            m = _INDEXED.fullmatch(getter)
            var, at = (m.group(1), m.group(2)) if m else (getter, None)
            if var not in names:
                raise LogError(
                    f"line {ev.line}: {key!r} is not a variable of {self.model.name} "
                    f"(variables: {', '.join(names)})"
                )
            out.append((key, recorded, names.index(var), at, getter))
        return out

    def disagreements(
        self, ev: LogEvent, rule: On, state: Any, before: Any = None, ai: int | None = None
    ) -> list[tuple[str, Any, Any]]:
        """(name, recorded, model's) for each recorded value the state disagrees with
        (``before``, the state the event started from, and the action ``ai`` that
        made ``state``: for the rule's ``check``)."""
        return self._disagreements(ev, self.readers(ev, rule), state, rule, before, ai)

    def _disagreements(
        self,
        ev: LogEvent,
        readers: list[tuple[str, Any, int, str | None, Getter]],
        state: Any,
        rule: On | None = None,
        before: Any = None,
        ai: int | None = None,
    ) -> list[tuple[str, Any, Any]]:
        out: list[tuple[str, Any, Any]] = []
        if rule is not None and rule.check is not None:
            # Mapping code, like ``where`` and ``instances``: a field the event lacks
            # is the log's fault, anything else the mapping's, both one line.
            name = None if ai is None else self.model.action_names[ai]
            out.extend(
                _mapping_call(ev, rule.check, self.model.spec, ev.params, before, state, name)
            )
            if out:
                return out
        values = self.model.variables(state)
        for key, recorded, position, at, getter in readers:
            if position >= 0:
                actual = values[position]
                if at is not None:
                    actual = _at(actual, at, ev.line, key)
            else:
                assert not isinstance(getter, str)
                try:
                    actual = getter(self.model.spec, state)
                except Exception as exc:
                    raise EvaluationError(
                        f"log mapping for {key} (log line {ev.line})", exc, state
                    ) from exc
            if ev.compare is not None:
                same = ev.compare(recorded, actual)
            elif ev.normalize is not None:
                same = bool(recorded == ev.normalize(actual))
            else:
                same = _agrees(recorded, actual)
            if not same:
                out.append((key, recorded, actual))
        return out

    def _count(self, n: int = 1) -> None:
        self.states += n
        if self.max_states is not None and self.states > self.max_states:
            raise _Limit(f"max-states {self.max_states} reached")

    def run(self, events: list[LogEvent]) -> Validation:
        """Validate the log; Ctrl-C, --timeout and --max-states give incomplete."""
        t0 = time.perf_counter()
        deadline = t0 + self.timeout if self.timeout else None
        frontier: list[_Node] = []
        seen: set[int] = set()
        starts: Iterable[Any] = ()
        if self.mapping is not None and self.mapping.prepare is not None:
            prepare = self.mapping.prepare
            first = events[0] if events else LogEvent(1, "")
            starts, events = _mapping_call(first, prepare, self.model.spec, events)
            if not events:
                raise LogError("the log holds no event past its opening: it is no evidence")
        else:
            starts = self.model.initial_states()
        for s in starts:
            root = self._root(s)
            if root.fp not in seen:
                seen.add(root.fp)
                frontier.append(root)
        done = 0
        # Released on running out of memory, so the report can still be made.
        reserve: bytearray | None = bytearray(8 << 20)
        try:
            with stop_signals(), watchdog(deadline):
                for ev in events:
                    if deadline is not None and time.perf_counter() >= deadline:
                        raise _Limit(f"timeout {self.timeout}s reached")
                    rule = self.rule(ev)
                    nxt = self.advance(frontier, ev, rule)
                    if not nxt:
                        out = self.explain(frontier, ev, rule)
                        out.events, out.states = done, self.states
                        out.seconds = time.perf_counter() - t0
                        return out
                    frontier = nxt
                    done += 1
                    # Nodes behind the frontier are kept only for the behaviour: their
                    # variables' terms (for successors' fingerprints) can go.
                    for n in nxt:
                        p = n.parent
                        while p is not None and p.terms:
                            p.terms = ()
                            p = p.parent
        except _Limit as exc:
            return self._incomplete(done, str(exc), t0)
        except DeadlineReached:
            return self._incomplete(done, f"timeout {self.timeout}s reached", t0)
        except KeyboardInterrupt:
            ignore_interrupts()
            return self._incomplete(done, "interrupted", t0)
        except MemoryError:
            reserve = None
            frontier = []
            return self._incomplete(done, f"out of memory after {done:,} events", t0)
        del reserve
        self.frontier = frontier
        trace, lines = self.behaviour(frontier[0])
        return Validation(
            True,
            done,
            trace=trace,
            states=self.states,
            seconds=time.perf_counter() - t0,
            lines=lines,
        )

    def _incomplete(self, done: int, why: str, t0: float) -> Validation:
        return Validation(
            False, done, states=self.states, seconds=time.perf_counter() - t0, incomplete=why
        )

    def _silent_closure(self, node: _Node, ev: LogEvent) -> list[_Node]:
        """The node and the nodes up to max_silent silent steps from it (those the
        mapping's ``silent_where`` allows before ``ev``)."""
        out, level = [node], [node]
        seen = {node.fp}
        accept = None
        only = self.mapping.silent_where if self.mapping is not None else None
        if only is not None:
            accept = lambda _ai, params: bool(_mapping_call(ev, only, ev.params, params))  # noqa: E731
        for _ in range(self.max_silent):
            nxt: list[_Node] = []
            for n in level:
                for ai, params, t in self.model.successors_among(n.state, self.silent, accept):
                    if not self.model.within(t):
                        continue
                    f, terms = self._fp_after(n, t)
                    if f in seen:
                        continue
                    seen.add(f)
                    self._count()
                    nxt.append(_Node(t, n, ((ai, params, t, None),), fp=f, terms=terms))
            out += nxt
            level = nxt
        return out

    def _candidates(
        self, frontier: list[_Node], ev: LogEvent, rule: On
    ) -> Iterator[tuple[_Node, _Node, int | None, tuple[Any, ...], Any]]:
        """(frontier node, node, action, params, state after) for every way ``ev`` may
        happen from the
        frontier (after silent steps): an allowed action instance the event's ``where``
        accepts, or, for an observation, the node's own state (action None)."""
        allowed = {self.index[a] for a in rule.actions}
        # The event's ``where`` picks instances before they run: an action over a
        # wide range (a commit index up to MaxIndex) evaluates the one it logged.
        accept = None
        if rule.where is not None:
            accept = lambda _ai, params: self._where(rule, ev, params)  # noqa: E731
        bound = self._bound(rule, ev) if allowed else None
        successors = self.model.successors_among
        for node in frontier:
            for c in self._silent_closure(node, ev) if rule.after_silent else [node]:
                if not allowed:  # an observation of the current state
                    yield node, c, None, (), c.state
                    continue
                for ai, params, t in successors(c.state, allowed, accept, bound):
                    yield node, c, ai, params, t

    def _bound(self, rule: On, ev: LogEvent) -> list[tuple[Any, ...]] | None:
        """The instances the rule binds from the event's parameters (None: every
        instance, sifted by ``where``)."""
        if rule.instances is None:
            return None
        make, spec = rule.instances, self.model.spec
        got: list[Any] = _mapping_call(ev, lambda params: list(make(spec, params)), ev.params)
        for p in got:
            if not isinstance(p, tuple):
                raise LogError(
                    f"line {ev.line}: the mapping of event {ev.name!r} gave {p!r} as an "
                    "instance, not a tuple of the action's parameters"
                )
        return got

    @staticmethod
    def _where(rule: On, ev: LogEvent, params: tuple[Any, ...]) -> bool:
        """The mapping's ``where`` on an event."""
        assert rule.where is not None
        return bool(_mapping_call(ev, rule.where, ev.params, params))

    def advance(self, frontier: list[_Node], ev: LogEvent, rule: On) -> list[_Node]:
        """The nodes consistent with the log after ``ev``."""
        out: list[_Node] = []
        seen: set[Any] = set()
        readers: list[tuple[str, Any, int, str | None, Getter]] | None = None
        for node, c, ai, params, t in self._candidates(frontier, ev, rule):
            self._count()
            if readers is None:
                readers = self.readers(ev, rule)
            if self._disagreements(ev, readers, t, rule, node.state, ai):
                continue
            if ai is None:
                f, terms = c.fp, c.terms
            else:
                f, terms = self._fp_after(c, t)
            # One node per state, unless the paths matter: a counterexample that
            # printed only part of each state can be matched by several paths to
            # one state, of which only some end in its violation.
            key = (id(c), f) if self.keep_paths else f
            if key in seen:
                continue
            seen.add(key)
            if ai is None:
                out.append(_Node(t, c, (), (ev.line,), fp=f, terms=terms))
            else:
                out.append(_Node(t, c, ((ai, params, t, ev.line),), fp=f, terms=terms))
        return out

    def explain(self, frontier: list[_Node], ev: LogEvent, rule: On) -> Validation:
        """Why no behaviour matches ``ev``: the nearest miss among the candidates."""
        allowed = bool(rule.actions)
        best: tuple[int, str] | None = None
        enabled = False
        for node, _c, ai, params, t in self._candidates(frontier, ev, rule):
            enabled = True
            what = "the state" if ai is None else self.model.label(ai, params)
            best = _nearer(best, self.disagreements(ev, rule, t, node.state, ai), what)
        if allowed and not enabled:
            names = " or ".join(rule.actions)
            reason = (
                f"no candidate state enables {names}"
                + (
                    " with the logged parameters"
                    if rule.where is not None or rule.instances is not None
                    else ""
                )
                + f" (its guard is false in all {len(frontier)} candidate states"
                + (f", also after up to {self.max_silent} silent steps" if self.max_silent else "")
                + ")"
            )
        else:
            assert best is not None
            reason = best[1]
        self.frontier = frontier
        return Validation(
            False,
            0,
            failed=ev,
            reason=reason,
            candidates=[n.state for n in frontier[:3]],
            details=self._per_candidate(frontier[:3], ev, rule),
        )

    def _per_candidate(self, nodes: list[_Node], ev: LogEvent, rule: On) -> list[str]:
        """For each candidate behaviour (the state it reached), each action the event
        may be and what refused it: its guard, or the recorded fields that differ."""
        out: list[str] = []
        for k, node in enumerate(nodes, start=1):
            misses: dict[str, tuple[int, str]] = {}
            for _n, _c, ai, params, t in self._candidates([node], ev, rule):
                family = "the state" if ai is None else self.model.action_names[ai]
                what = "the state" if ai is None else self.model.label(ai, params)
                diff = self.disagreements(ev, rule, t, node.state, ai)
                text = f"{what}: " + (
                    ", ".join(
                        f"{key} is {show(actual)} where the log says {show(rec)}"
                        for key, rec, actual in diff[:3]
                    )
                    or "agrees, yet no behaviour continues"
                )
                if family not in misses or len(diff) < misses[family][0]:
                    misses[family] = (len(diff), text)
            rows = [text for _n, text in misses.values()]
            rows += [
                f"{name}: not enabled (its guard is false"
                + (" for the logged parameters" if rule.where or rule.instances else "")
                + ")"
                for name in rule.actions
                if name not in misses
            ]
            seen = [line for line in self._lines(node) if line is not None]
            since = f"after line {seen[-1]}" if seen else "from an initial state"
            out.extend(f"candidate {k} ({since}): {row}" for row in rows)
        return out

    @staticmethod
    def _lines(node: _Node) -> list[int | None]:
        """The log lines a candidate behaviour has matched, oldest first."""
        lines: list[int | None] = []
        n: _Node | None = node
        while n is not None:
            lines[:0] = [*n.seen, *(line for *_x, line in n.steps)]
            n = n.parent
        return lines

    def behaviour(self, node: _Node) -> tuple[Trace, list[int | None]]:
        """The matched behaviour from an initial state to ``node``, as a trace whose
        steps name their log lines."""
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
                label = f"{st.action}  [log line {line}]" if line else f"{st.action}  [silent]"
                steps.append(dataclasses.replace(st, action=label))
                lines.append(line)
        return Trace(steps=tuple(steps), var_names=self.model.var_names), lines


_INDEXED = re.compile(r"(\w+)\[([^\]]+)\]")


def _at(value: Any, name: str, line: int, key: str) -> Any:
    """``value[k]`` for the key ``k`` written ``name`` (a model value's name, a number,
    a string)."""
    if hasattr(value, "items"):
        for k, v in value.items():
            if str(_plain(k)) == name:
                return v
    elif isinstance(value, tuple | list) and name.lstrip("-").isdigit():
        i = int(name)
        if -len(value) <= i < len(value):
            return value[i]
    raise LogError(f"line {line}: {key!r}: no {name!r} in the variable")


def _mapping_call(ev: LogEvent, fn: Callable[..., Any], *args: Any) -> Any:
    """Call a function of the log mapping on an event: a parameter the event lacks is
    the log's fault (its line), anything else the mapping's; both are one line."""
    try:
        return fn(*args)
    except LogError:
        raise  # the mapping's own one-line verdict on the log
    except KeyError as exc:
        raise LogError(
            f"line {ev.line}: event {ev.name!r} has no parameter {exc}, which the mapping reads"
        ) from None
    except MemoryError:
        raise
    except Exception as exc:
        raise LogError(
            f"line {ev.line}: the mapping of event {ev.name!r} raised {type(exc).__name__}: {exc}"
        ) from None


class _Limit(Exception):
    """A limit stopped the validation."""


def _nearer(
    best: tuple[int, str] | None, diff: list[tuple[str, Any, Any]], what: str
) -> tuple[int, str]:
    if not diff:
        return best or (0, f"{what} agrees, yet no behaviour continues")
    text = f"{what} gives " + ", ".join(
        f"{k} = {show(actual)} where the log says {show(rec)}" for k, rec, actual in diff[:3]
    )
    if best is None or len(diff) < best[0]:
        return (len(diff), text)
    return best


def mapping_of(
    spec_cls: type, module_path: str | None, attribute: str = "log_mapping"
) -> LogMapping | None:
    """The log mapping: ``MAPPING`` of the module at ``module_path`` (a .py file or a
    module name), else the spec's ``attribute`` (``log_mapping`` for logs,
    ``tla_mapping`` for TLC's counterexamples), else None (the default)."""
    if module_path is not None:
        from checker.authoring.loader import load_module

        module = load_module(module_path)
        got = getattr(module, "MAPPING", None)
        if not isinstance(got, LogMapping):
            raise ConfigError(
                f"{module_path} defines no MAPPING (a checker.check.validate.LogMapping)"
            )
        return got
    got = getattr(spec_cls, attribute, None)
    if got is not None and not isinstance(got, LogMapping):
        raise ConfigError(
            f"{spec_cls.__name__}.{attribute} is not a checker.check.validate.LogMapping"
        )
    return got
