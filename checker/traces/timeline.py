"""Counterexamples drawn as timelines: one lane per server, what each step changed.

The same renderer serves ``mcheck run`` (a trace just found) and ``mcheck show``
(a trace read from an ITF file): both are first turned into :class:`TimelineData`,
plain dicts of variable values per state plus per-step metadata.

Per step, every change lands in a lane: a per-server map (``currentTerm[s1]``) in that
server's lane, a map of maps (``nextIndex[s1][s2]``) in the outer server's lane,
anything else in the environment lane.  Messages (a bag or set of records with a source
and a destination) are shown as sent in the sender's lane, as delivered in the
receiver's lane (when the receiver takes the step), as moved in the sender's lane when
a step takes it from one message variable to another (etcd/raft's ``Ready``, see
:mod:`checker.traces.network`), and as dropped or duplicated in the environment lane.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from checker.traces.network import NetEvent, network_events
from checker.values.show import (
    _DST,
    _SRC,
    _field,
    _fields,
    _name,
    brief_message,
    is_message,
    message_detail,
    set_delta,
    show,
)
from checker.values.strict import strict_equal

ENV = "env"


@dataclass
class TimelineData:
    """What a timeline shows: states as {variable: value}, step labels, lanes."""

    spec: str
    variant: str
    var_names: tuple[str, ...]
    states: list[dict[str, Any]]
    actions: list[str | None]  #: per state: the action that led to it (None first)
    actors: list[str | None]  #: per state: the lane that took the step
    lanes: list[str]
    property: str | None = None
    kind: str = "violation"  #: or "deadlock", or "step" (an action property)
    reads: list[str] = field(default_factory=list)  #: variables the property reads
    loop: int | None = None
    owners: dict[str, str] = field(default_factory=dict)  #: variable -> its lane


def brief(v: Any, width: int = 40) -> str:
    """A short text for a value: messages abbreviated, everything clipped."""
    if v is _ABSENT:
        return "(absent)"
    text = brief_message(v) if is_message(v) else show(v)
    return text if len(text) <= width else text[: width - 3] + "..."


def _message_counts(v: Any) -> dict[Any, int] | None:
    """A network variable as {message: copies}, or None if it is not one."""
    if isinstance(v, Mapping):
        if v and all(is_message(k) and isinstance(n, int) for k, n in v.items()):
            return dict(v)
        return {} if not v else None
    if isinstance(v, frozenset | set) or type(v).__name__ == "PSet":
        items = list(v)
        if items and all(is_message(x) for x in items):
            return dict.fromkeys(items, 1)
        return {} if not items else None
    return None


def step_changes(data: TimelineData, i: int, only: set[str] | None = None) -> dict[str, list[Text]]:
    """What state ``i`` changed, per lane (the lanes plus ``env``)."""
    lanes = set(data.lanes)
    cells: dict[str, list[Text]] = {lane: [] for lane in [*data.lanes, ENV]}
    old, new = data.states[i - 1], data.states[i]
    actor = data.actors[i]
    # Every message variable's change at once, so a message moved between two of them
    # reads as a move; drawn where the first of them comes in the variables' order.
    nets: dict[str, tuple[dict[Any, int], dict[Any, int]]] = {}
    for var in data.var_names:
        if (only is None or var in only) and not strict_equal(old[var], new[var]):
            ca, cb = _message_counts(old[var]), _message_counts(new[var])
            if ca is not None and cb is not None:
                nets[var] = (ca, cb)
    for var in data.var_names:
        if only is not None and var not in only:
            continue
        if var in nets:
            if var == next(iter(nets)):
                _message_cells(cells, network_events(nets, actor, lanes), lanes)
            continue
        a, b = old[var], new[var]
        if a is b or strict_equal(a, b):
            continue
        a, b = _as_lane_map(a, data.lanes), _as_lane_map(b, data.lanes)
        owner = data.owners.get(var)
        if isinstance(a, Mapping) and isinstance(b, Mapping) and _keyed_by_lanes(a, b, lanes):
            for k in sorted(set(a) | set(b), key=lambda x: _name(x)):
                x, y = a.get(k, _ABSENT), b.get(k, _ABSENT)
                if x is not _ABSENT and y is not _ABSENT and strict_equal(x, y):
                    continue
                # Owned by the environment (bookkeeping the properties read): drawn in
                # its lane, keyed, so the servers' lanes show the mechanism.
                lane, label = (ENV, f"{var}[{_name(k)}]") if owner == ENV else (_name(k), var)
                cells[lane].extend(_diff(label, x, y, lanes))
            continue
        cells[owner if owner in lanes else ENV].extend(_value_change(var, a, b))
    return cells


def _as_lane_map(v: Any, lanes: list[str]) -> Any:
    """A sequence with one entry per lane, when the lanes are the positions 0..n-1
    (processes numbered from 0), read as a map from lane to entry."""
    if (
        isinstance(v, tuple | list)
        and not hasattr(v, "_fields")
        and lanes
        and len(v) == len(lanes)
        and lanes == [str(i) for i in range(len(lanes))]
    ):
        return {str(i): x for i, x in enumerate(v)}
    return v


def _keyed_by_lanes(a: Mapping[Any, Any], b: Mapping[Any, Any], lanes: set[str]) -> bool:
    keys = set(a) | set(b)
    return bool(keys) and all(_name(k) in lanes for k in keys)


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT: Any = _Absent()


def _diff(path: str, x: Any, y: Any, lanes: set[str]) -> list[Text]:
    if isinstance(x, Mapping) and isinstance(y, Mapping) and _keyed_by_lanes(x, y, lanes):
        rows = []
        for k in sorted(set(x) | set(y), key=lambda v: _name(v)):
            a, b = x.get(k, _ABSENT), y.get(k, _ABSENT)
            # TLA+'s equality, not Python's: 1 -> TRUE is a change.
            if a is _ABSENT or b is _ABSENT or not strict_equal(a, b):
                rows.extend(_value_change(f"{path}[{_name(k)}]", a, b, 24))
        return rows
    return _value_change(path, x, y, 24)


#: Members of a set drawn per step, each way; the rest are counted.
SET_MEMBERS_SHOWN = 6


def _value_change(path: str, a: Any, b: Any, width: int = 40) -> list[Text]:
    """One value's change: ``path a->b``; for a record, each changed field
    (``path.field a->b``); for a set the members the step added (``path + x``) and
    removed (``path - y``), so a growing set shows what grew."""
    if a is not _ABSENT and b is not _ABSENT:
        ra, rb = _fields(a), _fields(b)
        if ra and rb and ra[0] == rb[0] and [n for n, _ in ra[1]] == [n for n, _ in rb[1]]:
            # A record of the same kind: the fields the step changed, each by name
            # (``constraintCounters.timeout 0->1``), not two clipped copies that differ
            # past the clip.
            rows = []
            for (name, x), (_, y) in zip(ra[1], rb[1], strict=True):
                if not strict_equal(x, y):
                    rows.extend(_value_change(f"{path}.{name}", x, y, width))
            if rows:
                return rows
        grown = _sequence_change(path, a, b, width)
        if grown is not None:
            return grown
    delta = None if a is _ABSENT or b is _ABSENT else set_delta(a, b)
    if delta is None:
        return [_change(path, brief(a, width), brief(b, width))]
    added, removed = delta
    rows = []
    for sign, members, style in (("-", removed, "red"), ("+", added, "green")):
        for x in members[:SET_MEMBERS_SHOWN]:
            rows.append(_member(path, sign, brief(x, max(width, 60)), style))
        if len(members) > SET_MEMBERS_SHOWN:
            more = f"and {len(members) - SET_MEMBERS_SHOWN} more"
            rows.append(_member(path, sign, more, "dim"))
    return rows


def _sequence_change(path: str, a: Any, b: Any, width: int) -> list[Text] | None:
    """A sequence that only grew at its end (``path ++ x``, a log appended to) or only
    lost a prefix (``path drops its first k``, a log compacted); None otherwise."""
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or _fields(a) or _fields(b):
        return None
    n, m = len(a), len(b)
    if m > n and all(strict_equal(x, y) for x, y in zip(a, b[:n], strict=True)):
        added = b[n:]
        rows = [
            _member(path, "++", brief(x, max(width, 60)), "green")
            for x in added[:SET_MEMBERS_SHOWN]
        ]
        if len(added) > SET_MEMBERS_SHOWN:
            rows.append(_member(path, "++", f"and {len(added) - SET_MEMBERS_SHOWN} more", "dim"))
        return rows
    if n > m and all(strict_equal(x, y) for x, y in zip(a[n - m :], b, strict=True)):
        t = Text()
        t.append(path, style="bold")
        t.append(f" drops its first {n - m}", style="red")
        return [t]
    return None


def _member(path: str, sign: str, text: str, style: str) -> Text:
    t = Text()
    t.append(path, style="bold")
    t.append(f" {sign} ")
    t.append(text, style=style)
    return t


def _change(path: str, before: str, after: str) -> Text:
    t = Text()
    t.append(path, style="bold")
    t.append(" ")
    t.append(before, style="red")
    t.append("->")
    t.append(after, style="green")
    return t


def _message_cells(cells: dict[str, list[Text]], events: list[NetEvent], lanes: set[str]) -> None:
    for e in events:
        src, dst = _name(_field(e.message, _SRC)), _name(_field(e.message, _DST))
        text = brief_message(e.message)
        if e.kind == "sent":
            # A send shows the contents (INCONSISTENCY next=1); later mentions of the
            # same message name it briefly.
            line = Text(f"sent {message_detail(e.message)}", style="cyan")
            cells[src if src in lanes else ENV].append(line)
        elif e.kind == "moved":
            line = Text(f"{text} moved from {e.source} to {e.target}", style="cyan")
            cells[src if src in lanes else ENV].append(line)
        elif e.kind == "duplicated":
            cells[ENV].append(Text(f"duplicated {text}", style="yellow"))
        elif e.kind == "received":
            cells[dst].append(Text(f"received {text}", style="magenta"))
        else:
            cells[ENV].append(Text(f"dropped {text}", style="yellow"))


def render_timeline(
    data: TimelineData,
    console: Console,
    full: bool = False,
    only_vars: list[str] | None = None,
    title: str | None = None,
) -> None:
    """Print the trace as a table: step, action, one column per lane, environment
    (``title``: the heading, by default the spec, variant and number of steps; ``full``:
    every variable of every state, TLC's way)."""
    only = set(only_vars) if only_vars else None
    names = [v for v in data.var_names if only is None or v in only]
    n = len(data.states) - 1
    if title is None:
        title = f"{data.spec} ({data.variant}): {n} step{'' if n == 1 else 's'}"
    console.print(Text(title + ":", style="bold"))
    # TLC numbers states from 1, the initial one included; the table numbers steps.
    console.print(Text("State 1: initial state" if full else "initial state:", style="bold cyan"))
    for var in names:
        console.print(Text(f"  {var} = {show(data.states[0][var])}"), overflow="fold")
    if full:
        _render_full(data, console, names)
    else:
        # A long trace is drawn BLOCK steps at a time, each block printed as soon as it
        # is worked out: a 300,000-step trace printed nothing for minutes and held
        # every step's cells (1.2 GB) before the first line.
        number_w = max(3, len(str(n)))
        for start in range(1, n + 1, BLOCK):
            _render_block(data, console, range(start, min(start + BLOCK, n + 1)), only, number_w)
    if data.loop is not None:
        console.print(
            Text(
                "loop: back in the "
                + ("initial state" if data.loop == 0 else f"state after step {data.loop}")
                + f"; steps {data.loop + 1} to {len(data.states) - 1} repeat forever"
                if data.loop < len(data.states) - 1
                else "loop: the last state stutters forever (no fair action is enabled)",
                style="bold yellow",
            )
        )
    if data.property:
        if data.kind == "step":
            what = f"{data.property} is violated by the last step"
        elif data.loop is not None:
            what = f"the lasso violates {data.property} (the behaviour that repeats forever)"
        elif data.kind == "deadlock":
            what = "deadlock in the initial state" if n == 0 else "deadlock in the last state"
        else:
            where = "the initial state" if n == 0 else "the last state"
            what = f"{data.property} is violated in {where}"
        console.print(Text(f"X {what}", style="bold red"))
        last = data.states[-1]
        for var in data.reads:
            if var in last:
                console.print(Text(f"  {var} = {show(last[var])}"), overflow="fold")


#: Steps per table of a long timeline (see :func:`render_timeline`).
BLOCK = 500


def _render_block(
    data: TimelineData,
    console: Console,
    block: range,
    only: set[str] | None,
    number_w: int,
) -> None:
    """Steps ``block`` of the timeline as one table (or stacked, when narrow)."""
    steps = []
    for i in block:
        label = Text(data.actions[i] or "?", style="bold")
        if data.actors[i]:
            label.append(f" @{data.actors[i]}", style="dim")
        steps.append((i, label, step_changes(data, i, only)))
    # Lanes where nothing happens in the block take no room.
    lanes = [ln for ln in [*data.lanes, ENV] if any(cells[ln] for _, _, cells in steps)]
    widths = {ln: _longest_word(t for _, _, cells in steps for t in cells[ln]) for ln in lanes}
    action_w = min(_longest_word(label for _, label, _ in steps), 30)
    # Each column at least as wide as its longest word, so no word is split; when
    # that cannot fit the terminal, one step per block, one line per change.
    need = number_w + action_w + sum(widths.values()) + 3 * (len(lanes) + 2) + 1
    if need <= console.width:
        _render_table(data, console, steps, lanes, widths, action_w, number_w)
    else:
        _render_stacked(data, console, steps, lanes, number_w)


def _longest_word(texts: Any) -> int:
    """The longest whitespace-separated word among ``texts`` (Text or str)."""
    return max(
        (len(w) for t in texts for w in (t.plain if isinstance(t, Text) else str(t)).split()),
        default=1,
    )


def _loop_marker(data: TimelineData, i: int) -> Text | None:
    if data.loop is not None and i == data.loop + 1:
        return Text("loop starts here: from this step it repeats", "bold yellow")
    return None


def _render_table(
    data: TimelineData,
    console: Console,
    steps: list[tuple[int, Text, dict[str, list[Text]]]],
    lanes: list[str],
    widths: dict[str, int],
    action_w: int,
    number_w: int = 3,
) -> None:
    # Explicit content widths: every column gets its longest word, and the room left
    # is shared out (lanes 3 parts, the action 2), so rich never has to split a word.
    cols = ["action", *lanes]
    base = {"action": action_w, **widths}
    share = {c: (2 if c == "action" else 3) for c in cols}
    used = number_w + sum(base.values()) + 3 * (len(cols) + 1) + 1
    spare = max(0, console.width - used)
    parts = sum(share.values())
    final = {c: base[c] + spare * share[c] // parts for c in cols}
    table = Table(show_lines=True, expand=False, padding=(0, 1))
    table.add_column("#", justify="right", no_wrap=True, width=number_w)
    table.add_column("action", overflow="fold", width=final["action"])
    for lane in lanes:
        table.add_column(lane, overflow="fold", width=final[lane])
    for i, label, cells in steps:
        marker = _loop_marker(data, i)
        if marker is not None:
            table.add_row("", marker)
        row: list[Any] = [str(i), label]
        for lane in lanes:
            row.append(Group(*cells[lane]) if cells[lane] else "")
        table.add_row(*row)
    console.print(table)


def _render_stacked(
    data: TimelineData,
    console: Console,
    steps: list[tuple[int, Text, dict[str, list[Text]]]],
    lanes: list[str],
    number_w: int = 3,
) -> None:
    """Too narrow for a column per lane: each step a heading, then ``lane: change``
    lines (wrapped at word boundaries, indented under the change)."""
    pad = max((len(ln) for ln in lanes), default=3)
    for i, label, cells in steps:
        marker = _loop_marker(data, i)
        if marker is not None:
            console.print(marker)
        head = Text(f"{i:>{number_w}} ", style="bold")
        head.append_text(label)
        console.print(head)
        for lane in lanes:
            for change in cells[lane]:
                line = Text(f"      {lane:<{pad}}  ", style="dim")
                line.append_text(change)
                console.print(line)


def _render_full(data: TimelineData, console: Console, names: list[str]) -> None:
    for i in range(1, len(data.states)):
        head = Text(f"State {i + 1}: {data.actions[i]}", style="bold cyan")
        if data.actors[i]:
            head.append(f" @{data.actors[i]}", style="dim")
        console.print(head)
        prev, cur = data.states[i - 1], data.states[i]
        for var in names:
            style = "green" if prev[var] != cur[var] else ""
            console.print(Text(f"  {var} = {show(cur[var])}", style=style), overflow="fold")
