"""Counterexamples as pictures: a Mermaid sequence diagram, or one self-contained HTML
file with an SVG drawing of it.

Both are made from the same :class:`~checker.traces.timeline.TimelineData` as the terminal
timeline: a lifeline per lane, an arrow from each message's send to its receipt
(dropped and duplicated copies marked, messages still in flight at the end drawn to
the bottom), each step's other changes as notes in the lane that made them, the loop
of a lasso bracketed, and the broken property with the values it reads at the end.

The HTML needs no network and no script: open it in any browser, or paste it into a
report.  Every text from the trace is escaped (a trace is data from elsewhere).
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass, field
from typing import Any

from checker.traces.network import network_events
from checker.traces.timeline import ENV, TimelineData, _message_counts, step_changes
from checker.values.show import _DST, _SRC, _field, _name, brief_message, message_detail, show


@dataclass
class Arrow:
    """One copy of a message: sent at step ``sent``, then received, dropped, or
    still in flight (``end`` None) at the end of the trace."""

    src: str
    dst: str
    label: str
    sent: int
    end: int | None = None
    how: str = "in flight"  #: received, dropped, or in flight


@dataclass
class Picture:
    """What a picture shows, lane by lane and step by step."""

    title: str
    lanes: list[str]
    actions: list[str]  #: per step (index 0 unused)
    notes: list[dict[str, list[str]]]  #: per step: lane -> changes other than messages
    arrows: list[Arrow] = field(default_factory=list)
    duplicates: list[tuple[int, str]] = field(default_factory=list)
    loop: int | None = None
    verdict: str | None = None
    values: list[str] = field(default_factory=list)


def _network_vars(data: TimelineData) -> set[str]:
    """Variables that hold messages (a bag or set of records with a route)."""
    out = set()
    for var in data.var_names:
        counts = [_message_counts(s[var]) for s in data.states if var in s]
        if counts and all(c is not None for c in counts) and any(counts):
            out.add(var)
    return out


def picture_of(data: TimelineData) -> Picture:
    """Lay the trace out: notes per lane and step, message arrows paired send to
    receipt (the oldest unmatched copy of an equal message goes first)."""
    nets = _network_vars(data)
    others = {v for v in data.var_names if v not in nets}
    n = len(data.states) - 1
    notes: list[dict[str, list[str]]] = [{}]
    arrows: list[Arrow] = []
    duplicates: list[tuple[int, str]] = []
    open_copies: dict[Any, list[Arrow]] = {}
    lanes_seen: set[str] = set()
    known = set(data.lanes)
    for i in range(1, n + 1):
        cells = step_changes(data, i, only=others)
        step_notes = {lane: [t.plain for t in ts] for lane, ts in cells.items() if ts}
        notes.append(step_notes)
        lanes_seen.update(step_notes)
        changes = {
            var: (
                _message_counts(data.states[i - 1][var]) or {},
                _message_counts(data.states[i][var]) or {},
            )
            for var in nets
        }
        for e in network_events(changes, data.actors[i], data.lanes):
            m = e.message
            src, dst = _name(_field(m, _SRC)), _name(_field(m, _DST))
            src = src if src in known else ENV
            dst = dst if dst in known else ENV
            if e.kind == "sent":
                a = Arrow(src, dst, message_detail(m, 48), i)
                arrows.append(a)
                open_copies.setdefault(m, []).append(a)
                lanes_seen.update((src, dst))
            elif e.kind == "duplicated":
                duplicates.append((i, brief_message(m)))
                lanes_seen.add(ENV)
            elif e.kind == "moved":
                # Still on its way (etcd's Ready hands a reply to the network): the
                # arrow runs on to the receipt; the move is a note of the step.
                line = f"{brief_message(m)} moved from {e.source} to {e.target}"
                step_notes.setdefault(src, []).append(line)
                lanes_seen.add(src)
            else:
                pending = open_copies.get(m) or []
                if pending:
                    a = pending.pop(0)
                    a.end = i
                    a.how = e.kind
    lanes = [ln for ln in [*data.lanes, ENV] if ln in lanes_seen]
    actions = [""] + [
        (data.actions[i] or "?") + (f" @{data.actors[i]}" if data.actors[i] else "")
        for i in range(1, n + 1)
    ]
    verdict = None
    values: list[str] = []
    if data.property:
        verdict = (
            "deadlock in the last state"
            if data.kind == "deadlock"
            else f"{data.property} is violated"
            + (" by the last step" if data.kind == "step" else "")
            + (" (a lasso: the loop repeats forever)" if data.loop is not None else "")
        )
        last = data.states[-1]
        values = [f"{v} = {show(last[v])}" for v in data.reads if v in last]
    title = f"{data.spec} ({data.variant}): {n} steps"
    return Picture(title, lanes, actions, notes, arrows, duplicates, data.loop, verdict, values)


# -- Mermaid -------------------------------------------------------------------------
def _mm(text: str) -> str:
    """Text safe inside a Mermaid message or note (no line breaks, no separators, no
    directives)."""
    return (
        " ".join(text.split())
        .replace(";", ",")
        .replace("#", "no.")
        .replace("->", "\u2192")  # an arrow, not Mermaid's arrow syntax
        .replace("<", "\u2039")  # angle quotes: Mermaid reads < and > as markup
        .replace(">", "\u203a")
        # Mermaid reads %%{...}%% anywhere in the text as a directive (%%{init}%% can
        # restyle the diagram or load a theme): a full-width percent sign instead.
        .replace("%", "\uff05")
    )


def mermaid(data: TimelineData) -> str:
    """A Mermaid ``sequenceDiagram`` (GitHub, GitLab and Jira render it): a message
    is drawn as an arrow when it is received (or dropped), naming the step that sent
    it; each step's other changes are a note over its lane."""
    p = picture_of(data)
    ids = {lane: f"P{k}" for k, lane in enumerate(p.lanes)}
    out = ["sequenceDiagram", f"    title {_mm(p.title)}"]
    out += [f"    participant {ids[lane]} as {_mm(lane)}" for lane in p.lanes]
    by_end: dict[int, list[Arrow]] = {}
    for a in p.arrows:
        by_end.setdefault(a.end if a.end is not None else len(p.actions), []).append(a)
    n = len(p.actions) - 1
    for i in range(1, n + 1):
        if p.loop is not None and i == p.loop + 1:
            out.append("    loop repeats forever")
        first, last = ids[p.lanes[0]], ids[p.lanes[-1]]
        over = first if first == last else f"{first},{last}"
        out.append(f"    Note over {over}: step {i}: {_mm(p.actions[i])}")
        for a in by_end.get(i, []):
            if a.how == "received":
                out.append(
                    f"    {ids[a.src]}->>{ids[a.dst]}: {_mm(a.label)} (sent at step {a.sent})"
                )
            else:
                out.append(
                    f"    {ids[a.src]}-x{ids[a.dst]}: {_mm(a.label)} "
                    f"(sent at step {a.sent}, dropped)"
                )
        for step, text in p.duplicates:
            if step == i and ENV in ids:
                out.append(f"    Note over {ids[ENV]}: duplicated {_mm(text)}")
        for lane, lines in p.notes[i].items():
            if lines and lane in ids:
                out.append(f"    Note over {ids[lane]}: {_mm('; '.join(lines))}")
        if p.loop is not None and i == n:
            out.append("    end")
    for a in by_end.get(len(p.actions), []):
        out.append(
            f"    {ids[a.src]}-){ids[a.dst]}: {_mm(a.label)} (sent at step {a.sent}, in flight)"
        )
    if p.verdict and p.lanes:
        at = ids[p.lanes[-1]]
        out.append(f"    Note over {at}: {_mm(p.verdict)}")
        out += [f"    Note over {at}: {_mm(v)}" for v in p.values]
    return "\n".join(out) + "\n"


# -- HTML with an SVG drawing ----------------------------------------------------------
_LEFT = 250  #: the step and action column
_LANE = 250  #: one lane's column
_LINE = 15  #: a text line
_WRAP = 30  #: characters per note line in a lane (notes sit right of the lifeline)
_HEAD = 70  #: title and lane names


def _wrap(text: str, width: int = _WRAP) -> list[str]:
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def html_page(data: TimelineData) -> str:
    """One self-contained HTML file (inline SVG and CSS, no script, no network)."""
    p = picture_of(data)
    n = len(p.actions) - 1
    col = {lane: _LEFT + k * _LANE + 30 for k, lane in enumerate(p.lanes)}
    width = _LEFT + _LANE * max(1, len(p.lanes)) + 20
    # Row heights: the tallest lane's notes, the action label, room for arrow labels.
    sent_at: dict[int, int] = {}
    for a in p.arrows:
        sent_at[a.sent] = sent_at.get(a.sent, 0) + 1
    rows: list[tuple[int, int]] = []  # (top, height) per step
    y = _HEAD + 20
    for i in range(1, n + 1):
        lines = max(
            [len(_wrap(p.actions[i], 30))]
            + [sum(len(_wrap(t)) for t in p.notes[i].get(lane, [])) for lane in p.lanes]
        )
        h = max(40, lines * _LINE + 16 + 14 * sent_at.get(i, 0))
        rows.append((y, h))
        y += h
    bottom = y
    foot = [p.verdict] if p.verdict else []
    foot += p.values
    foot_lines = sum(len(_wrap(t, 110)) for t in foot)
    height = bottom + 40 + foot_lines * _LINE + 20
    e = html.escape
    svg: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">',
        "<defs>"
        '<marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#1f5fa8"/></marker>'
        "</defs>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="12" y="24" font-size="16" font-weight="bold">{e(p.title)}</text>',
    ]
    for lane, x in col.items():
        svg.append(
            f'<rect class="lane" x="{x - 28}" y="{_HEAD - 22}" width="{_LANE - 20}" height="26" '
            f'rx="4" '
            f'fill="#e8eef7" stroke="#1f5fa8"/>'
            f'<text x="{x - 20}" y="{_HEAD - 4}" font-weight="bold">'
            f"{e(lane)}</text>"
            f'<line x1="{x}" y1="{_HEAD + 4}" x2="{x}" y2="{bottom}" stroke="#9aa8bb" '
            f'stroke-dasharray="4 4"/>'
        )
    for i in range(1, n + 1):
        top, h = rows[i - 1]
        shade = "#f7f7f7" if i % 2 else "#ffffff"
        if p.loop is not None and i > p.loop:
            shade = "#fff7e0" if i % 2 else "#fffbef"
        svg.append(f'<rect x="0" y="{top}" width="{width}" height="{h}" fill="{shade}"/>')
        svg.append(f'<text x="12" y="{top + 16}" font-weight="bold">{i}</text>')
        for k, line in enumerate(_wrap(p.actions[i], 30)):
            svg.append(f'<text x="36" y="{top + 16 + k * _LINE}">{e(line)}</text>')
        for lane, texts in p.notes[i].items():
            if lane not in col:
                continue
            ly = top + 16
            for t in texts:
                for line in _wrap(t):
                    svg.append(
                        f'<text x="{col[lane] + 8}" y="{ly}" fill="#5a3d00">{e(line)}</text>'
                    )
                    ly += _LINE
    # Lifelines and notes are drawn; arrows go on top.  An arrow is routed around the
    # notes: across its sending row in the band kept below that row's notes, then
    # down a gutter just left of the receiver's lifeline (a lane's notes sit right of
    # its lifeline and end well before the next one), then into the lifeline.
    offset: dict[int, int] = {}
    gutters: dict[str, int] = {}
    for a in p.arrows:
        top, h = rows[a.sent - 1]
        k = offset.get(a.sent, 0)
        offset[a.sent] = k + 1
        y1 = top + h - 10 - 14 * k
        if a.end is not None:
            et, eh = rows[a.end - 1]
            y2 = et + eh // 2
        else:
            y2 = bottom - 4
        x1, x2 = col[a.src], col[a.dst]
        if x1 == x2:
            x2 = x1 + 40
        g = gutters.get(a.dst, 0)
        gutters[a.dst] = (g + 1) % 3
        gx = x2 - 6 - 4 * g
        color = {"received": "#1f5fa8", "dropped": "#b3261e"}.get(a.how, "#7a7a7a")
        dash = ' stroke-dasharray="6 3"' if a.how != "received" else ""
        marker = ' marker-end="url(#head)"' if a.how == "received" else ""
        svg.append(
            f'<polyline class="msg" points="{x1},{y1} {gx},{y1} {gx},{y2} {x2},{y2}" '
            f'fill="none" stroke="{color}" stroke-width="1.5"{dash}{marker}/>'
        )
        label = a.label + ("" if a.how == "received" else f" ({a.how})")
        lx = min(x1, x2) + 6
        svg.append(f'<text x="{lx}" y="{y1 - 3}" fill="{color}" font-size="11">{e(label)}</text>')
        if a.how == "dropped":
            svg.append(
                f'<text x="{x2}" y="{y2 + 4}" fill="#b3261e" font-weight="bold" '
                f'text-anchor="middle">X</text>'
            )
    for step, text in p.duplicates:
        top, _ = rows[step - 1]
        x = col.get(ENV, _LEFT + 10)
        svg.append(f'<text x="{x - 60}" y="{top + 30}" fill="#8a6d00">duplicated {e(text)}</text>')
    if p.loop is not None and p.loop < n:
        top = rows[p.loop][0]
        svg.append(
            f'<path d="M6,{top + 2} L2,{top + 2} L2,{bottom - 2} L6,{bottom - 2}" fill="none" '
            f'stroke="#c77700" stroke-width="2"/>'
            f'<text x="8" y="{bottom + 16}" fill="#c77700" font-weight="bold">'
            f"loop: steps {p.loop + 1}-{n} repeat forever</text>"
        )
    fy = bottom + (40 if p.loop is not None else 30)
    for k, t in enumerate(foot):
        for line in _wrap(t, 110):
            weight = ' font-weight="bold" fill="#b3261e"' if k == 0 else ""
            svg.append(f'<text x="12" y="{fy}"{weight}>{e(line)}</text>')
            fy += _LINE
    svg.append("</svg>")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8"/>'
        f"<title>{e(p.title)}</title>"
        "<style>body{margin:16px;background:#fff;color:#111}</style>"
        "</head><body>\n" + "\n".join(svg) + "\n</body></html>\n"
    )
