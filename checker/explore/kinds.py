"""The kinds a run deals in: its search strategy, what stops it, and how the fast
engine and the plain expansion share it (strings equal to their values, as the command
line, checkpoints and the environment spell them)."""

from __future__ import annotations

from enum import StrEnum


class Strategy(StrEnum):
    """Breadth-first (shortest counterexamples) or depth-first search."""

    BFS = "bfs"
    DFS = "dfs"


class EventKind(StrEnum):
    """What stops an exploration at a state."""

    VIOLATION = "violation"
    DEADLOCK = "deadlock"
    ERROR = "error"


class SwitchPolicy(StrEnum):
    """How the fast engine and the plain expansion share a run (MCHECK_ENGINE_SWITCH)."""

    #: Whichever is measured cheaper on the run itself (the default).
    MEASURED = "measured"
    #: Take turns every few states, whatever the cost (tests: every handoff).
    ALTERNATE = "alternate"
    #: The fast engine throughout.
    FAST = "fast"
