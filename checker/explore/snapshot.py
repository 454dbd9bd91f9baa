"""An exploration stopped where it can go on later (a checkpoint's content)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from checker.explore.result import Stats


@dataclass
class Snapshot:
    """An exploration stopped at a chunk boundary: what :mod:`checker.explore.engine`
    saves and restores (the file format is :mod:`checker.check.checkpoint`'s business,
    and the core never imports it)."""

    stats: Stats
    truncated: bool
    fps: array[int]
    parent: array[int]
    choice: array[int]
    #: (ordinal, state, depth) per queued state, in the order they are taken.
    frontier: list[tuple[int, Any, int]]
    identity: dict[str, Any] = field(default_factory=dict)
    #: What the command line was given, so ``mcheck resume`` can build the same spec.
    origin: dict[str, Any] = field(default_factory=dict)
    #: The state graph recorded so far (a liveness run: a
    #: :class:`checker.liveness.stategraph.GraphImage`), else None.
    graph: Any = None
