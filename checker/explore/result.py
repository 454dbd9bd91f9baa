"""Outcomes of a run: verdicts, TLC-compatible exit codes and statistics."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from checker.base.errors import EvaluationError
from checker.explore.trace import Trace

__all__ = [
    "ExitCode",
    "Result",
    "Stats",
    "Verdict",
]


class Verdict(enum.Enum):
    """What a run established."""

    OK = "ok"  #: every property holds over the whole reachable space
    VIOLATION = "violation"  #: an invariant is violated (trace attached)
    DEADLOCK = "deadlock"  #: a reachable state has no enabled action
    INCOMPLETE = "incomplete"  #: a limit was hit first: never a pass
    ERROR = "error"  #: spec code raised during the run


class ExitCode(enum.IntEnum):
    """Exit codes, following TLC's so scripts written for TLC keep working."""

    OK = 0
    BAD_INPUT = 2
    INCOMPLETE = 3
    DEADLOCK = 11
    SAFETY = 12
    LIVENESS = 13


@dataclass
class Stats:
    """Counters of one run (TLC's end-of-run report plus coverage)."""

    distinct: int = 0
    generated: int = 0
    depth: int = 0
    queue_peak: int = 0
    queue: int = 0
    seconds: float = 0.0
    action_generated: list[int] = field(default_factory=list)
    action_distinct: list[int] = field(default_factory=list)

    @property
    def states_per_second(self) -> float:
        """Distinct states per second of wall time."""
        return self.distinct / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Result:
    """Everything a run found out."""

    spec: str
    variant: str
    verdict: Verdict
    stats: Stats
    constants: dict[str, Any]
    symmetry: bool
    strategy: str
    action_names: tuple[str, ...]
    violated: str | None = None  #: the violated property
    trace: Trace | None = None
    reason: str | None = None  #: why incomplete, or the error message
    collision_probability: float = 0.0
    liveness: bool = False  #: the violated property is temporal (lasso trace)
    #: The violated property is an action property ([][A]_v): TLC exits 13 for it,
    #: as for a temporal one, though its counterexample is a finite trace.
    action_property: bool = False
    warnings: list[str] = field(default_factory=list)
    #: (states, edges) of the full state graph, when temporal properties were checked
    graph: tuple[int, int] | None = None
    #: The spec error behind an ERROR verdict (its trace attached).
    error: EvaluationError | None = None
    #: The run stopped because the user (Ctrl-C, SIGTERM) asked it to.
    interrupted: bool = False
    #: A random simulation's figures (checker.simulate.core.SimulationStats), else None.
    simulation: Any = None

    @property
    def exit_code(self) -> ExitCode:
        """The TLC-compatible exit code for this outcome."""
        return {
            Verdict.OK: ExitCode.OK,
            Verdict.VIOLATION: (
                ExitCode.LIVENESS if self.liveness or self.action_property else ExitCode.SAFETY
            ),
            Verdict.DEADLOCK: ExitCode.DEADLOCK,
            Verdict.INCOMPLETE: ExitCode.INCOMPLETE,
            Verdict.ERROR: ExitCode.BAD_INPUT,
        }[self.verdict]

    @property
    def unfired_actions(self) -> list[str]:
        """Actions that never produced a successor (TLC coverage warning)."""
        return [
            n for n, c in zip(self.action_names, self.stats.action_generated, strict=True) if c == 0
        ]

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object."""
        s = self.stats
        return {
            "spec": self.spec,
            "variant": self.variant,
            "result": self.verdict.value,
            "property": self.violated,
            "trace_length": self.trace.length if self.trace is not None else None,
            "loop_start": self.trace.loop if self.trace is not None else None,
            "warnings": list(self.warnings),
            "liveness_graph": (
                {"states": self.graph[0], "edges": self.graph[1]} if self.graph else None
            ),
            "distinct_states": s.distinct,
            "states_generated": s.generated,
            "depth": s.depth,
            "queue_peak": s.queue_peak,
            "seconds": round(s.seconds, 3),
            "states_per_second": round(s.states_per_second, 1),
            "constants": {k: _json_value(v) for k, v in self.constants.items()},
            "symmetry": self.symmetry,
            "strategy": self.strategy,
            "reason": self.reason,
            "collision_probability": self.collision_probability,
            "actions": {
                n: {"generated": g, "distinct": d}
                for n, g, d in zip(
                    self.action_names, s.action_generated, s.action_distinct, strict=True
                )
            },
            "trace": self.trace.labels() if self.trace is not None else None,
            "simulation": self.simulation.to_json() if self.simulation is not None else None,
        }


def _json_value(v: Any) -> Any:
    if isinstance(v, bool | int | str | float) or v is None:
        return v
    if isinstance(v, tuple | list | frozenset | set):
        return [_json_value(x) for x in v]
    return repr(v)
