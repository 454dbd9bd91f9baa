"""What the explorer keeps per distinct state: its fingerprint, parent and choice.

TLC's design: the visited set holds only 64-bit fingerprints; per stored state the
trace table records the parent's ordinal and which successor of the parent the state
was.  A counterexample is rebuilt by replaying those choices through the model, and
each rebuilt state is checked against the fingerprint stored at its ordinal, so a
model whose successor order changes between calls is caught instead of printing a
wrong trace.
"""

from __future__ import annotations

from array import array


class TraceTable:
    """Per stored state, in ordinal order: fingerprint, parent ordinal, choice index."""

    __slots__ = ("choice", "fps", "parent")

    def __init__(self) -> None:
        self.fps = array("Q")  # the state's fingerprint
        self.parent = array("q")  # ordinal of the parent state, -1 for an initial state
        self.choice = array("I")  # index among the parent's successors (or the inits)

    def __len__(self) -> int:
        return len(self.parent)

    def record(self, fp: int, parent: int, choice: int) -> int:
        """Record a new state; return its ordinal."""
        self.fps.append(fp)
        self.parent.append(parent)
        self.choice.append(choice)
        return len(self.parent) - 1

    def path(self, ordinal: int) -> list[int]:
        """Ordinals from an initial state down to ``ordinal``."""
        out: list[int] = []
        while ordinal >= 0:
            out.append(ordinal)
            ordinal = self.parent[ordinal]
        out.reverse()
        return out

    def choices(self, ordinal: int) -> list[int]:
        """Successor choices from an initial state down to ``ordinal``."""
        return [self.choice[o] for o in self.path(ordinal)]


class VisitedSet:
    """The fingerprints of the stored states, optionally with their ordinals (the
    state graph needs the ordinal of a state seen before, safety only membership)."""

    __slots__ = ("index", "seen")

    def __init__(self, with_ordinals: bool = False) -> None:
        self.index: dict[int, int] | None = {} if with_ordinals else None
        self.seen: set[int] | None = None if with_ordinals else set()

    def __len__(self) -> int:
        return len(self.index) if self.index is not None else len(self.seen or ())

    def __contains__(self, fp: int) -> bool:
        if self.index is not None:
            return fp in self.index
        assert self.seen is not None
        return fp in self.seen

    def add(self, fp: int, ordinal: int) -> None:
        """Mark ``fp`` visited (as state ``ordinal``)."""
        if self.index is not None:
            self.index[fp] = ordinal
        else:
            assert self.seen is not None
            self.seen.add(fp)

    def ordinal(self, fp: int) -> int:
        """The ordinal of a visited fingerprint (only with ordinals), else -1."""
        assert self.index is not None
        return self.index.get(fp, -1)
