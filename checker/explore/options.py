"""Run options: what a check is asked to do, and the one table that says where each
option lives.

:class:`Options` is what :func:`checker.check.run` takes.  :data:`RUN_OPTIONS` says, per
option, its command-line flag, its key in a gate manifest, and whether a checkpoint
records it for ``mcheck resume`` (a resumed run continues with it) or takes it anew
from ``resume``'s own command line.  The command line, ``resume``, the gate and the
checkpoint's header all read this table, so an option added here reaches each of
them or is refused by each, never silently dropped by one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from checker.base.errors import ConfigError
from checker.base.machine import check_process_count
from checker.explore.kinds import Strategy
from checker.explore.result import Stats


class Form(StrEnum):
    """How an option is written on the command line (the CLI builds it from this)."""

    #: One of ``choices``.
    CHOICE = "choice"
    #: A flag that turns the option off (``--no-cache``: the field becomes False).
    OFF_FLAG = "off"
    #: ``--x/--no-x``, unset by default (None: the spec's own default).
    TOGGLE = "toggle"
    #: An integer of at least 1.
    COUNT = "count"
    #: A positive number of seconds.
    SECONDS = "seconds"
    #: Any text (checked by ``valid``).
    TEXT = "text"


@dataclass(frozen=True)
class RunOption:
    """One option of a run: where it is given and what values it takes."""

    #: The :class:`Options` field.
    name: str
    #: The flag of ``mcheck run`` (as the user types it; ``--x/--no-x`` for a toggle).
    flag: str
    #: What a valid value is, as an error says it ("a positive integer").
    what: str
    #: Whether a value is valid (None is always "not given" where the default is None).
    valid: Callable[[Any], bool]
    #: How the command line writes it, and its help there.
    form: Form
    help: str
    #: Its key in a gate manifest's check (None: not a gate setting).
    gate: str | None = None
    #: A checkpoint records it, and ``resume`` continues with the recorded value.
    recorded: bool = False
    #: It decides which states a run visits and in which order: part of a
    #: checkpoint's identity (a resume with another value is refused).
    identity: bool = False
    #: The values of a CHOICE; the shown placeholder of a value.
    choices: tuple[str, ...] = ()
    metavar: str | None = None


def _positive_int(v: Any) -> bool:
    return type(v) is int and v >= 1


def _seconds(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


_bool = lambda v: type(v) is bool  # noqa: E731

RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption(
        "strategy", "--strategy", "bfs or dfs", lambda v: v in {s.value for s in Strategy},
        Form.CHOICE, "Breadth-first (shortest counterexamples) or depth-first.",
        recorded=True, identity=True, choices=tuple(Strategy),
    ),
    RunOption(
        "symmetry", "--no-symmetry", "a boolean", _bool, Form.OFF_FLAG,
        "Do not reduce by the spec's symmetric sets.",
        gate="symmetry", recorded=True, identity=True,
    ),
    RunOption(
        "deadlock", "--deadlock/--no-deadlock", "a boolean", _optional(_bool), Form.TOGGLE,
        "Report states with no enabled action (default: on, unless the spec says otherwise).",
        recorded=True, identity=True,
    ),
    RunOption(
        "max_states", "--max-states", "a positive integer", _optional(_positive_int),
        Form.COUNT, "Stop after this many distinct states.", gate="max_states",
    ),
    RunOption(
        "max_depth", "--max-depth", "a positive integer", _optional(_positive_int), Form.COUNT,
        "Do not explore beyond this depth.", recorded=True, identity=True,
    ),
    RunOption(
        "timeout", "--timeout", "a positive number of seconds", _optional(_seconds),
        Form.SECONDS, "Seconds before stopping (the whole run, liveness included).",
        gate="timeout", metavar="SECONDS",
    ),
    RunOption(
        "workers", "--workers", "a positive integer", _positive_int, Form.COUNT,
        "Worker processes (breadth-first; same results as one).",
    ),
    RunOption(
        "cache", "--no-cache", "a boolean", _bool, Form.OFF_FLAG,
        "Run every action directly (no cached outcomes): slower, for cross-checking.",
        recorded=True,
    ),
    RunOption(
        "checkpoint_every", "--checkpoint-every", "a positive number of seconds", _seconds,
        Form.SECONDS, "Seconds between checkpoints.", metavar="SECONDS",
    ),
    RunOption(
        "cluster", "--cluster", "local:N or a scheduler address",
        _optional(lambda v: isinstance(v, str) and _cluster_ok(v)), Form.TEXT,
        "Explore on a dask.distributed cluster: a scheduler address (tcp://host:8786) "
        "or local:N (N worker processes on 127.0.0.1); same results as one process.",
        metavar="ADDRESS",
    ),
)  # fmt: skip
BY_NAME = {o.name: o for o in RUN_OPTIONS}


@dataclass
class Options:
    """How to explore: strategy, symmetry, deadlock checking, limits, workers."""

    strategy: Strategy = Strategy.BFS
    symmetry: bool = True
    #: None: the model's own default (a spec's ``check_deadlock``).
    deadlock: bool | None = None
    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None
    progress: Callable[[Stats], None] | None = None
    progress_every: float = 0.5
    workers: int = 1
    #: Use the fast engine's caches (checker.fastpath); False runs every action directly.
    cache: bool = True
    #: A folder to write checkpoints to (see checker.check.checkpoint), every
    #: ``checkpoint_every`` seconds and when the run stops at a chunk boundary.
    checkpoint: str | None = None
    checkpoint_every: float = 300.0
    #: Continue from the checkpoint in ``checkpoint`` instead of starting afresh.
    resume: bool = False
    #: Resume a checkpoint not signed with the user's key (checker.check.checkpointkey); the
    #: result then says it rests on that file.
    trust_checkpoint: bool = False
    #: What the command line was given (recorded in a checkpoint for ``mcheck resume``).
    origin: dict[str, Any] = field(default_factory=dict)
    #: A dask.distributed scheduler address, or ``local:N`` (see checker.distributed.cluster).
    cluster: str | None = None

    def __post_init__(self) -> None:
        # The API takes the strategy's name too ("dfs"); validate() refuses another.
        if isinstance(self.strategy, str) and self.strategy in {s.value for s in Strategy}:
            self.strategy = Strategy(self.strategy)

    def validate(self) -> None:
        """Refuse options that do not make sense, loudly (never ignore one)."""
        for opt in RUN_OPTIONS:
            value = getattr(self, opt.name)
            if opt.name == "cluster" and value is not None:
                parse_cluster(value)  # its own, more precise, message
            if not opt.valid(value):
                raise ConfigError(f"{opt.flag} must be {opt.what}, not {value!r}")
        check_process_count("--workers", self.workers)
        if self.workers > 1 and self.strategy != Strategy.BFS:
            raise ConfigError("--workers > 1 explores breadth-first only; drop --strategy dfs")
        if self.checkpoint is not None and self.workers > 1:
            raise ConfigError(
                "--checkpoint works with one process: the workers' frontiers are not "
                "gathered; drop --workers"
            )
        if self.cluster is not None:
            if self.workers > 1:
                raise ConfigError("--cluster explores on the cluster's workers: drop --workers")
            if self.strategy != Strategy.BFS:
                raise ConfigError("--cluster explores breadth-first only; drop --strategy dfs")
            if self.checkpoint is not None:
                raise ConfigError("--checkpoint works with one process: drop --cluster")
        if self.resume and self.checkpoint is None:
            raise ConfigError("resuming needs the checkpoint folder")
        if self.trust_checkpoint and not self.resume:
            raise ConfigError("--trust-checkpoint is for resume only")


def recorded(opts: Options) -> dict[str, Any]:
    """The options a checkpoint records for ``resume`` (see :data:`RUN_OPTIONS`)."""
    return {o.name: getattr(opts, o.name) for o in RUN_OPTIONS if o.recorded}


def check_recorded(values: Any) -> dict[str, Any] | str:
    """The recorded options read back from a file, or what is wrong with them."""
    if not isinstance(values, dict):
        return "'options' is not an object"
    for o in RUN_OPTIONS:
        if o.recorded and (o.name not in values or not o.valid(values[o.name])):
            return f"'options.{o.name}' is not {o.what}"
    return {o.name: values[o.name] for o in RUN_OPTIONS if o.recorded}


def identity_options(opts: Options, **effective: Any) -> dict[str, Any]:
    """The options that decide which states a run visits and in which order (a
    checkpoint's identity), as this run has them: ``effective`` gives values the run
    worked out (symmetry where the model has symmetric sets, the deadlock check the
    spec defaults to)."""
    return {o.name: effective.get(o.name, getattr(opts, o.name)) for o in RUN_OPTIONS if o.identity}


def gate_keys() -> dict[str, str]:
    """Gate manifest key -> option name, for the options a gate check may set."""
    return {o.gate: o.name for o in RUN_OPTIONS if o.gate is not None}


# -- --cluster ---------------------------------------------------------------------

#: A dask scheduler address: an optional protocol, a host name, IPv4 or [IPv6], a port.
_ADDRESS = re.compile(r"([a-z][a-z0-9+.-]*://)?([A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}")


def parse_cluster(address: str) -> tuple[str, int | None]:
    """``local:N`` -> ("local", N); a scheduler address -> (address, None).  Pure
    parsing: validating options never imports the cluster transport."""
    if address.startswith("local:"):
        count = address.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise ConfigError(f"--cluster local:N needs a worker count, got {address!r}")
        check_process_count("--cluster local:N with N =", int(count))
        return "local", int(count)
    if not address or address.startswith("local") or not _ADDRESS.fullmatch(address):
        raise ConfigError(
            "--cluster expects local:N or a scheduler address such as "
            f"tcp://10.0.0.1:8786, got {address!r}"
        )
    port = int(address.rsplit(":", 1)[1])
    if not 0 < port < 65536:
        raise ConfigError(f"--cluster: {port} is not a port number (1-65535)")
    return address, None


def _cluster_ok(address: str) -> bool:
    try:
        parse_cluster(address)
    except ConfigError:
        return False
    return True
