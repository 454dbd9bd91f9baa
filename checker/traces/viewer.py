"""``mcheck view TRACE``: step through a trace interactively in the terminal.

Built on rich (already a dependency) rather than Textual: the viewer is a small state
machine (:class:`Viewer`: a key in, a new view out) plus a render function, so it is
tested headlessly by feeding keys and reading the rendered text, and the terminal loop
around it is a dozen lines of raw key reading.

Keys: right/l/n/space next step, left/h/p previous, home/0 first, end/G last,
g jump to a step (type a number, Enter), f toggle changes-only / full state,
v filter variables (comma-separated names, Enter; empty clears), c jump to the next
change of a variable (name, Enter), ? help, q quit.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from checker.traces.timeline import ENV, TimelineData, step_changes
from checker.values.show import show

HELP = (
    "->/l/n next  <-/h/p back  0 first  G last  g jump  f full/changes  "
    "v vars  c next change  ? help  q quit"
)


@dataclass
class Viewer:
    """The viewer's state and its key handling (no I/O)."""

    data: TimelineData
    step: int = 0
    full: bool = False
    only: list[str] | None = None
    mode: str = "normal"  #: normal, or a prompt: jump, filter, change
    buffer: str = ""
    message: str = ""
    done: bool = False
    show_help: bool = False
    history: list[str] = field(default_factory=list)

    @property
    def last(self) -> int:
        """Index of the last state."""
        return len(self.data.states) - 1

    def handle(self, key: str) -> None:
        """Apply one key press."""
        self.history.append(key)
        if self.mode != "normal":
            self._prompt_key(key)
            return
        self.message = ""
        if key in ("right", "l", "n", " "):
            self.step = min(self.last, self.step + 1)
        elif key in ("left", "h", "p"):
            self.step = max(0, self.step - 1)
        elif key in ("home", "0"):
            self.step = 0
        elif key in ("end", "G"):
            self.step = self.last
        elif key == "f":
            self.full = not self.full
        elif key == "g":
            self.mode, self.buffer = "jump", ""
        elif key == "v":
            self.mode, self.buffer = "filter", ""
        elif key == "c":
            self.mode, self.buffer = "change", ""
        elif key == "?":
            self.show_help = not self.show_help
        elif key in ("q", "escape", "ctrl-c"):
            self.done = True
        else:
            self.message = f"unknown key {key!r}: ? for help"

    def _prompt_key(self, key: str) -> None:
        if key == "escape":
            self.mode, self.buffer = "normal", ""
            return
        if key == "backspace":
            self.buffer = self.buffer[:-1]
            return
        if key != "enter":
            if len(key) == 1:
                self.buffer += key
            return
        mode, text = self.mode, self.buffer.strip()
        self.mode, self.buffer = "normal", ""
        if mode == "jump":
            if text.isdigit() and 0 <= int(text) <= self.last:
                self.step = int(text)
            else:
                self.message = f"no step {text!r} (0..{self.last})"
        elif mode == "filter":
            names = [n.strip() for n in text.split(",") if n.strip()]
            unknown = [n for n in names if n not in self.data.var_names]
            if unknown:
                self.message = f"unknown variable {unknown[0]!r}"
            else:
                self.only = names or None
        elif mode == "change":
            if text not in self.data.var_names:
                self.message = f"unknown variable {text!r}"
                return
            for i in range(self.step + 1, self.last + 1):
                if self.data.states[i][text] != self.data.states[i - 1][text]:
                    self.step = i
                    return
            self.message = f"{text} does not change after step {self.step}"

    def render(self) -> RenderableType:
        """The screen for the current view."""
        d = self.data
        i = self.step
        action = d.actions[i] or "initial state"
        head = Text(f"{d.spec} ({d.variant})  step {i}/{self.last}: ", style="bold")
        head.append(action, style="bold cyan")
        if d.actors[i]:
            head.append(f" @{d.actors[i]}", style="dim")
        # The lasso goes back to the state after step d.loop: steps d.loop + 1 .. last
        # repeat; the state it returns to is where the loop starts, not a step in it.
        if d.loop is not None and i == d.loop:
            head.append("  [the loop comes back to this state]", style="yellow")
        elif d.loop is not None and i > d.loop:
            steps = f"steps {d.loop + 1} to {self.last}"
            head.append(f"  [in the loop: {steps} repeat]", style="yellow")
        parts: list[RenderableType] = [head]
        names = [n for n in d.var_names if self.only is None or n in self.only]
        if self.full or i == 0:
            table = Table(show_header=True, expand=True)
            table.add_column("variable", no_wrap=True)
            table.add_column("value", overflow="fold")
            for n in names:
                changed = i > 0 and d.states[i][n] != d.states[i - 1][n]
                table.add_row(
                    Text(n, style="bold green" if changed else ""),
                    Text(show(d.states[i][n]), style="green" if changed else ""),
                )
            parts.append(table)
        else:
            cells = step_changes(d, i, set(names))
            table = Table(show_header=True, expand=True)
            for lane in [*d.lanes, ENV]:
                table.add_column(lane, overflow="fold")
            table.add_row(*[Group(*cells[lane]) if cells[lane] else "" for lane in [*d.lanes, ENV]])
            parts.append(table)
        if i == self.last and d.property:
            parts.append(Text(f"X {d.property} is violated here", style="bold red"))
        status = "full state" if self.full else "changes only"
        if self.only:
            status += f"; variables: {', '.join(self.only)}"
        parts.append(Text(status, style="dim"))
        if self.mode != "normal":
            prompt = {"jump": "jump to step", "filter": "variables", "change": "next change of"}
            parts.append(Text(f"{prompt[self.mode]}: {self.buffer}_", style="bold yellow"))
        if self.message:
            parts.append(Text(self.message, style="yellow"))
        parts.append(Text(HELP if self.show_help else "? for help, q to quit", style="dim"))
        return Panel(Group(*parts), title="mcheck view")


_ESCAPES = {
    "\x1b[C": "right",
    "\x1b[D": "left",
    "\x1b[H": "home",
    "\x1b[F": "end",
    "\x1b[1~": "home",
    "\x1b[4~": "end",
}


#: How long a lone Esc waits for the rest of an escape sequence (an arrow key's bytes
#: arrive together; a person pressing Esc then another key takes far longer).
ESC_WAIT = 0.05


def read_key(fd: int) -> str:
    """One key press from a terminal already in cbreak mode, with arrow keys named.

    A bare Esc is returned at once as ``escape``: the bytes of an escape sequence are
    read only while more are already waiting, so the next key is never swallowed."""
    import os
    import select

    ch = os.read(fd, 1).decode(errors="replace")
    if ch == "\x1b":
        seq = ch
        while len(seq) < 8 and select.select([fd], [], [], ESC_WAIT)[0]:
            seq += os.read(fd, 1).decode(errors="replace")
            if seq in _ESCAPES or (len(seq) > 2 and (seq[-1].isalpha() or seq[-1] == "~")):
                break
        if seq == ch:
            return "escape"
        return _ESCAPES.get(seq, seq)  # an unknown key: the viewer says so
    return {"\r": "enter", "\n": "enter", "\x7f": "backspace", "\x03": "ctrl-c"}.get(ch, ch)


def run_viewer(data: TimelineData, console: Console) -> None:
    """The interactive loop: draw, read a key, repeat until q.

    The terminal stays in cbreak mode for the whole session (switching per key loses
    keys typed while a screen is drawn).
    """
    import termios
    import tty

    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    viewer = Viewer(data)
    try:
        tty.setcbreak(fd)
        while not viewer.done:
            console.clear()
            console.print(viewer.render())
            viewer.handle(read_key(fd))
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
    console.clear()
