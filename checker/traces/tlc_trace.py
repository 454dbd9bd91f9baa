"""TLC's counterexamples as users hold them, read into one form.

Read (:func:`read_tlc`): TLC's plain-text output as saved from a terminal or by
Specula (``spec/output/*.out``), with or without ``-difftrace`` and ``-tool`` (the
``@!@!@STARTMSG`` framing IDEs read); the files of ``-dumpTrace json`` and
``-dumpTrace tla`` / ``tlcplain``; and ITF (Apalache's and Quint's JSON traces).
Values are read as TLA+ (:mod:`checker.traces.tla_values`); no file is ever run as
code.  What each format loses is said in :attr:`TlcTrace.notes`.

The result is a list of states (variable -> canonical value; under ``-difftrace`` a
variable is carried forward from the state that last printed it, and is unknown
before), the action that led to each (its name and argument values, where the format
has them), the verdict TLC printed, and for a lasso the state its cycle returns to.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.base.errors import MCheckError
from checker.base.reading import TooLarge, read_bounded
from checker.traces.tla_values import (
    Canon,
    TlaValueError,
    _fn,
    from_json,
    parse_value,
    parse_values,
)

__all__ = ["FORMATS", "MAX_TLC_BYTES", "TlcAction", "TlcFileError", "TlcTrace", "read_tlc"]

#: Largest file read: a counterexample of a Specula-size spec is a few megabytes.
MAX_TLC_BYTES = 256 * 1024 * 1024

#: The formats :func:`read_tlc` reads (``auto`` decides by the content).
FORMATS = ("auto", "text", "json", "tla", "itf")


class TlcFileError(MCheckError):
    """A file that is not a TLC counterexample mcheck reads (exit 2)."""


@dataclass(frozen=True)
class TlcAction:
    """The step TLC took into a state: its action's name (None: TLC did not name it),
    its argument values, and the header as TLC printed it."""

    name: str | None
    args: tuple[Canon, ...] = ()
    text: str = ""


@dataclass
class TlcTrace:
    """A TLC counterexample."""

    #: "invariant", "action property", "deadlock", "temporal" or None (not in the file).
    verdict: str | None
    #: The violated property's name, where TLC gave one.
    violated: str | None
    states: list[dict[str, Canon]]
    #: Per state, the action into it (None for the first).
    actions: list[TlcAction | None]
    #: For a lasso: the index of the state its cycle returns to.  The last state is
    #: then that state again (TLC's ``Back to state K``), or, for ``Stuttering``, the
    #: last state stutters forever (``loop`` is its index).
    loop: int | None = None
    #: TLC's state numbers (1-based) of the states, for messages.
    numbers: list[int] = field(default_factory=list)
    fmt: str = "text"
    notes: list[str] = field(default_factory=list)

    @property
    def variables(self) -> list[str]:
        """Every variable the file names, in first-seen order."""
        seen: dict[str, None] = {}
        for s in self.states:
            seen.update(dict.fromkeys(s))
        return list(seen)


def _read(path: Path) -> str:
    try:
        data = read_bounded(path, MAX_TLC_BYTES)
    except TooLarge:
        raise TlcFileError(f"{path} is larger than {MAX_TLC_BYTES:,} bytes: not read") from None
    except FileNotFoundError:
        raise TlcFileError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise TlcFileError(f"{path} is a folder, not a TLC output") from None
    except OSError as exc:
        raise TlcFileError(f"{path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TlcFileError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_tlc(path: Path, fmt: str = "auto") -> TlcTrace:
    """Read a counterexample (see the module docstring); ``fmt`` one of :data:`FORMATS`."""
    if fmt not in FORMATS:
        raise TlcFileError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    text = _read(path)
    if fmt == "auto":
        fmt = _sniff(text)
    try:
        if fmt == "json":
            return _from_json_dump(text, path)
        if fmt == "itf":
            return _from_itf(text, path)
        if fmt == "tla":
            return _from_tla_dump(text, path)
        return _from_text(text, path)
    except TlaValueError as exc:
        raise TlcFileError(f"{path}: not a TLA+ value TLC prints: {exc}") from None
    except RecursionError:
        raise TlcFileError(f"{path} nests values too deeply") from None


def _sniff(text: str) -> str:
    head = text.lstrip()[:4096]
    if head.startswith("{"):
        return "itf" if '"states"' in text[:1_000_000] and '"vars"' in text else "json"
    if re.search(r"^-{2,}\s*MODULE\b", head, re.M) and (
        "CounterExample ==" in text or "Trace ==" in text
    ):
        return "tla"
    return "text"


# -- plain text, -difftrace and -tool -----------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MSG = re.compile(
    r"@!@!@STARTMSG (\d+):\d+ @!@!@\n(.*?)(?:@!@!@ENDMSG \1 @!@!@|(?=@!@!@STARTMSG)|\Z)", re.S
)
_VERDICTS = [
    (re.compile(r"Invariant (\S+) is violated by the initial state"), "invariant"),
    (re.compile(r"Invariant (\S+) is violated\."), "invariant"),
    (re.compile(r"Action property (.+?) is violated\."), "action property"),
    (re.compile(r"Deadlock reached\."), "deadlock"),
    (re.compile(r"Temporal property (\S+) was violated\."), "temporal"),
    (re.compile(r"Temporal properties were violated\."), "temporal"),
]
_STATE = re.compile(r"^State (\d+): (.*)$")
_BACK = re.compile(r"^Back to state (\d+): (.*)$")
_HEADER = re.compile(
    r"^<(?P<name>[^\s(>]+)(?:\((?P<args>.*)\))?"
    r"(?: line \d+, col \d+ to line \d+, col \d+ of module (?P<module>\S+))?>$"
)
_VAR = re.compile(r"^(?:/\\ )?([A-Za-z_][A-Za-z0-9_]*) = (.*)$")


def _untool(text: str) -> str:
    """``-tool`` output as the plain text TLC would print: states ``State N:``,
    back-to-state ``Back to state K:``, errors ``Error:``."""
    out: list[str] = []
    for m in _MSG.finditer(text):
        code, body = int(m.group(1)), m.group(2).rstrip("\n")
        if code == 2217 or code == 2218:
            out.append(re.sub(r"^(\d+): ", r"State \1: ", body, count=1))
        elif code == 2122:
            out.append(re.sub(r"^(\d+): Back to state: ", r"Back to state \1: ", body, count=1))
        elif code in (2104, 2107, 2110, 2112, 2114, 2116):
            out.append("Error: " + body)
        else:
            continue
        out.append("")
    return "\n".join(out)


def _action(header: str) -> TlcAction:
    m = _HEADER.match(header.strip())
    if m is None:
        raise TlcFileError(f"not a TLC state header: {header.strip()[:80]!r}")
    name = m.group("name")
    args = tuple(parse_values(m.group("args"))) if m.group("args") else ()
    if name == "Action":  # TLC could not name it (an unnamed disjunct)
        return TlcAction(None, (), header.strip())
    return TlcAction(name, args, header.strip())


def _from_text(text: str, path: Path) -> TlcTrace:
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    if "@!@!@STARTMSG" in text:
        text = _untool(text)
        fmt = "text (-tool)"
    else:
        fmt = "text"
    lines = text.split("\n")
    verdict = prop = None
    start = None
    for i, line in enumerate(lines):
        body = line[len("Error: ") :] if line.startswith("Error: ") else None
        if body is None:
            continue
        for pattern, kind in _VERDICTS:
            m = pattern.search(body)
            if m:
                verdict, prop = kind, (m.group(1) if m.groups() else None)
                start = i + 1
                break
        if verdict is not None:
            break
    if verdict is None or start is None:
        raise TlcFileError(
            f"{path} holds no TLC counterexample (no 'Error: Invariant ... is violated', "
            "'Deadlock reached' or 'Temporal properties were violated' line)"
        )
    states: list[dict[str, Canon]] = []
    actions: list[TlcAction | None] = []
    numbers: list[int] = []
    loop: int | None = None
    current: dict[str, str] | None = None
    var: str | None = None
    bodies: list[dict[str, str]] = []

    def open_state(number: int, action: TlcAction | None) -> dict[str, str]:
        numbers.append(number)
        actions.append(action)
        raw: dict[str, str] = {}
        bodies.append(raw)
        return raw

    init_body = "initial state" in (lines[start - 1] if start else "")
    if init_body:
        current = open_state(1, None)
    for line in lines[start:]:
        m = _STATE.match(line)
        if m:
            number, header = int(m.group(1)), m.group(2).strip()
            if header == "Stuttering":
                loop = len(bodies) - 1
                current = None
                break
            if header.startswith("<Initial predicate") or number == 1:
                action = None  # (a simulation names the first state's <Init line ...>)
            else:
                action = _action(header)
            if number != len(bodies) + 1:
                raise TlcFileError(f"{path}: state {number} follows state {len(bodies)}")
            current, var = open_state(number, action), None
            continue
        b = _BACK.match(line)
        if b:
            k = int(b.group(1))
            if not 1 <= k <= len(bodies):
                raise TlcFileError(f"{path}: 'Back to state {k}' names no state of the trace")
            loop = k - 1
            numbers.append(k)
            actions.append(_action(b.group(2)))
            bodies.append(dict(bodies[k - 1]))
            current = None
            break
        if current is None:
            ends = line.startswith(("Error:", "Finished", "The depth")) or re.match(
                r"^\d+ states", line
            )
            if bodies and ends:  # before the first state: TLC's "The behavior ..." line
                break
            continue
        if not line.strip():
            var = None
            if current:
                current = None if not line else current
            continue
        v = _VAR.match(line)
        if v and not line[0].isspace():
            var = v.group(1)
            current[var] = v.group(2)
        elif var is not None:
            current[var] += " " + line.strip()
        elif line.startswith(("Error:", "Finished", "The depth", '"CounterExample')):
            current = None
        else:
            current = None
    if not bodies:
        raise TlcFileError(f"{path}: the counterexample has no state (a truncated file?)")
    # -difftrace prints the variables a step changed: carry the others forward.
    carried: dict[str, Canon] = {}
    parsed: dict[str, dict[str, Canon]] = {}
    for raw in bodies:
        here = dict(carried)
        for name, value in raw.items():
            key = f"{name}={value}"
            got = parsed.get(key)
            if got is None:
                try:
                    got = {name: parse_value(value)}
                except TlaValueError as exc:
                    raise TlcFileError(
                        f"{path}: variable {name} (state {numbers[len(states)]}): "
                        f"not a TLA+ value TLC prints: {exc}"
                    ) from None
                parsed[key] = got
            here[name] = got[name]
        carried = here
        states.append(here)
    doubtful = _second_to_last_doubt(bodies, states) if loop is None else []
    trace = TlcTrace(verdict, prop, states, actions, loop, numbers, fmt)
    if doubtful:
        trace.notes.append(
            f"a -difftrace output ending in a state printed whole: TLC (its TLCTrace."
            f"printTrace) diffs state {len(states) - 1} against state {len(states) - 3}, "
            f"not {len(states) - 2}, so {', '.join(doubtful)} there is taken as unknown"
        )
    if states and len(states[0]) < len(trace.variables):
        trace.notes.append(
            "a -difftrace output: a variable is known from the first state that prints it "
            "(unchanged ones are carried forward)"
        )
    return trace


def _second_to_last_doubt(
    bodies: list[dict[str, str]], states: list[dict[str, Canon]]
) -> list[str]:
    """Drop, from the second-to-last state of a -difftrace output, the variables whose
    value it does not say for sure; return their names.

    When TLC prints an invariant's (or an action property's) counterexample it passes
    each state the one before it to diff against, except the state before the last:
    that one is diffed against the state two before it (``TLCTrace.printTrace`` does not
    move its ``lastState`` on after the prefix's last state, in tlaplus/tlaplus as of
    2026-12), and the last state is printed whole.  So a variable that state leaves
    out equals its value two states back under that TLC, one state back under a TLC
    that diffs correctly: where those differ, the file does not say which, and the variable is
    left unknown there (as before its first print), for the transplant to fill in
    from the spec.  Where they agree (and for a printed variable) nothing is lost.
    The last state printed whole is what marks that printing; a deadlock's trace
    ends so too, and loses no more than the doubt (a lasso's is not read so)."""
    if len(bodies) < 4:  # (one state per body: states is as long)
        return []
    every = set(states[-1])
    last_whole = set(bodies[-1]) == every
    diffs = any(set(b) != every for b in bodies[1:-1])
    if not (last_whole and diffs):
        return []
    two_back, one_back, here = states[-4], states[-3], states[-2]
    doubtful = [
        var
        for var in list(here)
        if var not in bodies[-2] and two_back.get(var) != one_back.get(var)
    ]
    for var in doubtful:
        del here[var]
    return doubtful


# -- -dumpTrace json / tla / tlcplain ------------------------------------------------


def _dump_parts(
    states: list[tuple[int, dict[str, Canon]]],
    edges: list[tuple[int, TlcAction, int]],
    path: Path,
) -> tuple[list[dict[str, Canon]], list[TlcAction | None], int | None, list[int]]:
    """States sorted by ordinal, the actions between them, and a lasso's closing edge
    (the unique edge whose target ordinal is not after its source)."""
    states.sort(key=lambda p: p[0])
    ordinals = [n for n, _ in states]
    if ordinals != list(range(1, len(states) + 1)):
        raise TlcFileError(f"{path}: the dump's states are not numbered 1..{len(states)}")
    out_states = [s for _, s in states]
    actions: list[TlcAction | None] = [None] * len(out_states)
    loop = None
    closing: TlcAction | None = None
    for i, a, j in edges:
        if j == i + 1:
            actions[j - 1] = a
        elif j <= i:
            loop, closing = j - 1, a
    numbers = list(ordinals)
    if loop is not None:
        assert closing is not None
        out_states.append(dict(out_states[loop]))
        actions.append(closing)
        numbers.append(loop + 1)
    return out_states, actions, loop, numbers


def _json_action(a: Any, path: Path) -> TlcAction:
    if not isinstance(a, dict) or not isinstance(a.get("name"), str):
        raise TlcFileError(f"{path}: an action of the dump has no name")
    context, params = a.get("context") or {}, a.get("parameters") or []
    if not isinstance(context, dict) or not isinstance(params, list):
        raise TlcFileError(f"{path}: an action's context is malformed")
    args = tuple(from_json(context[p]) for p in params if isinstance(p, str) and p in context)
    return TlcAction(a["name"], args, a["name"])


def _from_json_dump(text: str, path: Path) -> TlcTrace:
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise TlcFileError(f"{path} is not JSON ({exc})") from None
    ce = doc.get("counterexample") if isinstance(doc, dict) else None
    if not isinstance(ce, dict) or not isinstance(ce.get("state"), list):
        raise TlcFileError(f"{path} is not a TLC -dumpTrace json file (no 'counterexample')")
    states: list[tuple[int, dict[str, Canon]]] = []
    for item in ce["state"]:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)):
            raise TlcFileError(f"{path}: a state of the dump is not [ordinal, record]")
        if not isinstance(item[1], dict):
            raise TlcFileError(f"{path}: state {item[0]} is not an object of variables")
        states.append((item[0], {k: from_json(v) for k, v in item[1].items()}))
    edges = []
    for e in ce.get("action") or []:
        if not (isinstance(e, list) and len(e) == 3):
            raise TlcFileError(f"{path}: an action of the dump is not [from, action, to]")
        src, act, dst = e
        try:
            edges.append((int(src[0]), _json_action(act, path), int(dst[0])))
        except (TypeError, IndexError, ValueError):
            raise TlcFileError(f"{path}: an action's states are malformed") from None
    out, actions, loop, numbers = _dump_parts(states, edges, path)
    trace = TlcTrace(None, None, out, actions, loop, numbers, "json")
    trace.notes.append(
        "a -dumpTrace json file: sets and sequences are both arrays and model values are "
        "strings there, so each is compared as whichever the spec's value is; the violated "
        "property is not in the file"
    )
    return trace


def _from_tla_dump(text: str, path: Path) -> TlcTrace:
    m = re.search(r"^\s*(CounterExample|Trace)\s*==\s*", text, re.M)
    if m is None:
        raise TlcFileError(f"{path} defines neither CounterExample nor Trace")
    body = text[m.end() :]
    end = re.search(r"^\s*={4,}\s*$", body, re.M)
    if end is None:
        raise TlcFileError(f"{path}: the module does not end ('====' missing: truncated?)")
    value = parse_value(body[: end.start()])
    if m.group(1) == "Trace":  # tlcplain: a sequence of records, no actions
        if value[0] != "seq":
            raise TlcFileError(f"{path}: Trace is not a sequence of states")
        states = [_record(s, path) for s in value[1]]
        trace = TlcTrace(None, None, states, [None] * len(states), None,
                         list(range(1, len(states) + 1)), "tlcplain")  # fmt: skip
        trace.notes.append("a tlcplain dump: no action names, no lasso")
        return trace
    rec = dict(value[1]) if value[0] == "fn" else {}
    raw_states, raw_actions = rec.get(("s", "state")), rec.get(("s", "action"))
    if raw_states is None or raw_states[0] != "set":
        raise TlcFileError(f"{path}: CounterExample has no set of states")
    pairs = []
    for item in raw_states[1]:
        if item[0] != "seq" or len(item[1]) != 2 or item[1][0][0] != "i":
            raise TlcFileError(f"{path}: a state is not <<ordinal, record>>")
        pairs.append((item[1][0][1], _record(item[1][1], path)))
    edges = []
    for item in raw_actions[1] if raw_actions and raw_actions[0] == "set" else ():
        if item[0] != "seq" or len(item[1]) != 3:
            raise TlcFileError(f"{path}: an action is not <<from, action, to>>")
        src, act, dst = item[1]
        edges.append((src[1][0][1], _tla_action(act, path), dst[1][0][1]))
    out, actions, loop, numbers = _dump_parts(pairs, edges, path)
    return TlcTrace(None, None, out, actions, loop, numbers, "tla")


def _record(c: Canon, path: Path) -> dict[str, Canon]:
    if c[0] == "seq" and not c[1]:
        return {}
    if c[0] != "fn" or not all(k[0] == "s" for k, _ in c[1]):
        raise TlcFileError(f"{path}: a state is not a record of variables")
    return {k[1]: v for k, v in c[1]}


def _tla_action(c: Canon, path: Path) -> TlcAction:
    rec = {k[1]: v for k, v in c[1]} if c[0] == "fn" else {}
    name = rec.get("name")
    if name is None or name[0] != "s":
        raise TlcFileError(f"{path}: an action has no name")
    args: tuple[Canon, ...] = ()
    params, context = rec.get("parameters"), rec.get("context")
    if params is not None and context is not None and context[0] == "fn":
        ctx = {k[1]: v for k, v in context[1]}
        args = tuple(ctx[p[1]] for p in params[1] if p[1] in ctx)
    return TlcAction(name[1], args, name[1])


# -- ITF ---------------------------------------------------------------------------


def _itf_value(v: Any, depth: int = 0) -> Canon:
    if depth > 100:
        raise TlaValueError("a value nests more deeply than any trace holds")
    d = depth + 1
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, list):
        return ("seq", tuple(_itf_value(x, d) for x in v))
    if isinstance(v, dict):
        if "#bigint" in v:
            try:
                return ("i", int(str(v["#bigint"])))
            except ValueError:
                raise TlaValueError(f"#bigint {str(v['#bigint'])[:40]!r} is no integer") from None
        if "#tup" in v:
            return ("seq", tuple(_itf_value(x, d) for x in v["#tup"]))
        if "#set" in v:
            return ("set", frozenset(_itf_value(x, d) for x in v["#set"]))
        if "#map" in v:
            return _fn([(_itf_value(k, d), _itf_value(x, d)) for k, x in v["#map"]])
        if "#unserializable" in v:
            raise TlaValueError("an #unserializable value")
        if "tag" in v and "value" in v and len(v) == 2:  # a Quint variant
            return _fn(
                [
                    (("s", "tag"), _itf_value(v["tag"], d)),
                    (("s", "value"), _itf_value(v["value"], d)),
                ]
            )
        return _fn([(("s", k), _itf_value(x, d)) for k, x in v.items() if not k.startswith("#")])
    raise TlaValueError(f"a JSON {type(v).__name__} is no ITF value")


def _from_itf(text: str, path: Path) -> TlcTrace:
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise TlcFileError(f"{path} is not JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("states"), list) or not doc["states"]:
        raise TlcFileError(f"{path} is not an ITF trace (no 'states')")
    names = doc.get("vars")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TlcFileError(f"{path}: 'vars' is not a list of names")
    states, actions = [], []
    for i, raw in enumerate(doc["states"]):
        if not isinstance(raw, dict):
            raise TlcFileError(f"{path}: state {i} is not an object")
        states.append({n: _itf_value(raw[n]) for n in names if n in raw})
        smeta: dict[str, Any] = raw["#meta"] if isinstance(raw.get("#meta"), dict) else {}
        taken = raw.get("mbt::actionTaken", smeta.get("action_name"))
        actions.append(
            None if i == 0 or not isinstance(taken, str) else TlcAction(taken, (), taken)
        )
    loop = doc.get("loop")
    if loop is not None and (not isinstance(loop, int) or not 0 <= loop < len(states)):
        raise TlcFileError(f"{path}: 'loop' names no state")
    meta: dict[str, Any] = doc["#meta"] if isinstance(doc.get("#meta"), dict) else {}
    own = str(meta.get("tool", "")).startswith("mcheck")  # mcheck's last state repeats it
    if loop is not None and not own:  # ITF: the trace goes on from state `loop` after the last
        states.append(dict(states[loop]))
        actions.append(TlcAction(None, (), "(back to the loop state)"))
    numbers = list(range(1, len(states) + 1))
    if loop is not None:
        numbers[-1] = loop + 1
    prop = meta.get("property") if isinstance(meta.get("property"), str) else None
    return TlcTrace(None, prop, states, actions, loop, numbers, "itf")
