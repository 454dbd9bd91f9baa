"""The ``mcheck`` command line.

Exit codes follow TLC: 0 every property holds over the whole reachable space,
12 invariant violated, 13 temporal or action property violated, 11 deadlock, 3 incomplete (a
limit, Ctrl-C or SIGTERM came first: never a pass), 2 bad usage or bad input
(including spec code that raises).  Every command turns bad input into one line on
stderr, never a traceback; ``--debug`` shows the traceback of an internal error.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from checker.authoring.kinds import FairnessKind, Grouped
from checker.authoring.loader import available_specs, load_spec_class, spec_file
from checker.authoring.spec import Spec
from checker.base import signals as early_signals
from checker.base.errors import ConfigError, EvaluationError, MCheckError
from checker.base.invocation import command
from checker.base.machine import check_process_count
from checker.base.safefile import write_atomically
from checker.base.signals import ignore_interrupts, restore_term, shielded, term_as_interrupt
from checker.base.version import __version__
from checker.check.run import run as run_model
from checker.cli.exit_codes import epilog
from checker.cli.pipe import survive_closed_stdout
from checker.explore.kinds import Strategy
from checker.explore.options import BY_NAME, Form, Options, recorded
from checker.explore.result import ExitCode, Result, Stats, Verdict
from checker.model import CompiledSpec
from checker.simulate import simulate as simulate_model
from checker.simulate.core import DEFAULT_DEPTH, SimulationOptions, SimulationStats
from checker.traces.itf import read_itf, record_types
from checker.traces.presentation import Presentation
from checker.traces.render import render_trace
from checker.traces.replay import replay as replay_trace
from checker.traces.timeline import TimelineData, render_timeline
from checker.traces.tracefile import presentation_for, save_trace, timeline_of_itf, timeline_of_run
from checker.values.show import STYLE_VARIABLE, VALUE_STYLES, set_value_style, show

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str, code: int = ExitCode.BAD_INPUT) -> NoReturn:
    click.echo(f"mcheck: error: {_one_line(message)}", err=True)
    sys.exit(code)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def guarded(fn: F) -> F:
    """Every command: bad input is one line and exit 2; Ctrl-C, SIGTERM and memory
    exhaustion outside exploration are exit 3 ("incomplete"); other failures are an
    internal error (exit 255) whose traceback ``MCHECK_DEBUG=1`` shows."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # From here on the command handles interruptions (and saves what it must).
        early_signals.release()
        previous = term_as_interrupt()
        try:
            _refuse_empty(kwargs)
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            ignore_interrupts()
            click.echo("mcheck: interrupted before a verdict: incomplete", err=True)
            sys.exit(ExitCode.INCOMPLETE)
        except MemoryError:
            click.echo("mcheck: out of memory before a verdict: incomplete", err=True)
            sys.exit(ExitCode.INCOMPLETE)
        except MCheckError as exc:
            _fail(str(exc))
        except RecursionError:
            _fail("a value nests too deeply (recursion limit reached)")
        except Exception as exc:
            if os.environ.get("MCHECK_DEBUG"):
                raise
            _fail(
                f"internal error: {type(exc).__name__}: {exc} (set MCHECK_DEBUG=1 for the "
                "traceback)",
                255,
            )
        finally:
            restore_term(previous)

    return wrapper  # type: ignore[return-value]


def _refuse_empty(values: dict[str, Any]) -> None:
    """An option or argument given as '' is a mistake (an unset shell variable), not
    a request for its default: ``--trace-out ''`` wrote to the default file, ``--junit
    ''`` wrote no report, both silently."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    for param in ctx.command.params:
        value = values.get(param.name or "")
        given = value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, str) and not v.strip() for v in given):
            if isinstance(param, click.Option):
                raise ConfigError(
                    f"{param.opts[0]} is empty: give a value, or leave the option out for "
                    "its default"
                )
            raise ConfigError(f"{param.human_readable_name} is empty: give one")


def _parse_consts(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--const expects NAME=VALUE, got {pair!r}")
        out[name.strip()] = value
    return out


def build_spec(
    target: str, variant: str | None, consts: tuple[str, ...], story: bool = False
) -> Spec:
    """Load the spec ``target`` and instantiate it with a variant and constant
    overrides; with ``story``, the variant's story (:class:`checker.Story`) sets the
    constants the overrides leave out (run, resume and simulate)."""
    cls = load_spec_class(target)
    given: dict[str, Any] = dict(_parse_consts(consts))
    told = cls.story_for(variant) if story else None
    if told is not None:
        given = {**told.constants, **given}
    return cls(variant=variant, **given)


def story_properties(instance: Spec, properties: tuple[str, ...]) -> tuple[list[str], str]:
    """The properties a checking command selects (``--invariant``, else the variant's
    story's) and a line saying what the story chose, empty when it chose nothing."""
    told = type(instance).story_for(instance.variant)
    if told is None or properties:
        return list(properties), ""
    line = (
        f"the report's story ({_story_text(told)}); "
        "--invariant all checks every property, --const overrides a constant"
    )
    return list(told.check), line


#: Seconds between progress lines on stderr when it is not a terminal (CI logs), as
#: TLC reports its progress once a minute; ``MCHECK_PROGRESS_EVERY`` sets another
#: interval (a script that waits for a run to be under way reads the first line).
LOG_PROGRESS_EVERY = 60.0


def _log_every() -> float:
    raw = os.environ.get("MCHECK_PROGRESS_EVERY")
    if raw is None:
        return LOG_PROGRESS_EVERY
    try:
        every = float(raw)
    except ValueError:
        every = math.nan
    if not (math.isfinite(every) and every > 0):
        raise ConfigError(
            f"MCHECK_PROGRESS_EVERY must be a positive number of seconds, not {raw!r}"
        )
    return every


class _Progress:
    """A live status line on a terminal, shown once a run has lasted a couple of
    seconds; elsewhere (CI, a pipe) a plain line on stderr every minute."""

    def __init__(self, console: Console, enabled: bool, log: bool = False) -> None:
        self.console = console
        self.enabled = enabled
        self.log = log and not enabled
        self.start = time.perf_counter()
        self.every = _log_every()
        # A terminal's status line waits 2 s (a short run shows none); logs keep
        # their interval.
        self.quiet = min(2.0, self.every) if self.log else 2.0
        self.next_log = self.start + self.every
        self.live: Live | None = None

    def __call__(self, stats: Stats) -> None:
        now = time.perf_counter()
        # The run's own clock: a resumed run goes on from its checkpoint's time.
        clock = stats.seconds if stats.seconds > 0 else now - self.start
        self._show(
            f"distinct {stats.distinct:,}  generated {stats.generated:,}  "
            f"depth {stats.depth}  queue {stats.queue:,}  "
            f"{stats.distinct / max(clock, 1e-9):,.0f} distinct/s  {clock:,.0f}s"
        )

    def simulation(self, stats: SimulationStats) -> None:
        """The progress line of ``mcheck simulate``."""
        self._show(
            f"behaviours {stats.behaviours:,}  states {stats.states:,}  "
            f"deepest {stats.deepest}  {stats.states_per_second:,.0f} states/s  "
            f"{stats.seconds:,.0f}s"
        )

    def _show(self, line: str) -> None:
        if not self.enabled and not self.log:
            return
        now = time.perf_counter()
        if now - self.start < self.quiet:
            return
        if self.log:
            if now >= self.next_log:
                self.next_log = now + self.every
                click.echo(f"progress: {line}", err=True)
            return
        text = Text(line, style="cyan")
        if self.live is None:
            self.live = Live(text, console=self.console, transient=True, auto_refresh=False)
            self.live.start()
        self.live.update(text, refresh=True)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()


if TYPE_CHECKING:
    _FloatParam = click.ParamType[float]
else:  # click before 8.2 has no generic ParamType
    _FloatParam = click.ParamType


class _Seconds(_FloatParam):
    """A positive, finite number of seconds (click's FloatRange lets NaN through: every
    comparison with it is false)."""

    name = "seconds"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not (math.isfinite(seconds) and 0 < seconds <= 1e9):
            self.fail(f"{value!r} is not a positive, finite number of seconds", param, ctx)
        return seconds


#: Every option that takes seconds (--timeout, --checkpoint-every).
SECONDS = _Seconds()


#: ``--const NAME=VALUE`` (repeatable), shared by every command that builds a spec.
CONST_OPTION = click.option(
    "--const",
    "consts",
    multiple=True,
    metavar="NAME=VALUE",
    help="Override a constant (repeatable: --const N=3 --const MaxTerm=2).",
)


def table_option(name: str, help: str | None = None) -> Callable[[F], F]:
    """The command-line option of run option ``name``, as the options table
    (checker.explore.options.RUN_OPTIONS) writes it: its flag, its form, its default
    (Options') and its help (``help`` to say it another way for one command).  The
    command receives the value under the option's own name."""
    o = BY_NAME[name]
    default = getattr(Options(), name)
    text = help or o.help
    if o.form is Form.CHOICE:
        return click.option(
            o.flag, name, type=click.Choice(list(map(str, o.choices))),
            default=str(default), show_default=True, help=text,
        )  # fmt: skip
    if o.form is Form.OFF_FLAG:
        return click.option(o.flag, name, flag_value=False, default=True, help=text)
    if o.form is Form.TOGGLE:
        return click.option(o.flag, name, default=None, help=text)
    kind: Any = {Form.COUNT: click.IntRange(min=1), Form.SECONDS: SECONDS, Form.TEXT: None}[o.form]
    shown = default is not None
    return click.option(
        o.flag, name, type=kind, default=default, show_default=shown, metavar=o.metavar,
        help=text,
    )  # fmt: skip


CHECKPOINT_EVERY_OPTION = table_option("checkpoint_every")


_OUTPUT_OPTIONS = (
    click.option(
        "--trace-out",
        type=click.Path(dir_okay=False),
        help="Where to save a counterexample "
        "(default traces/<spec>-<variant>-<property>.itf.json).",
    ),
    click.option(
        "--picture",
        type=click.Path(dir_okay=False),
        help="Also draw a counterexample to FILE: HTML (self-contained), or Mermaid for .mmd.",
    ),
    click.option("--no-color", is_flag=True, help="Plain text output."),
    click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line."),
)


def _output_options(fn: F) -> F:
    """--trace-out, --picture, --no-color and --json: how run and resume report."""
    for option in reversed(_OUTPUT_OPTIONS):
        fn = option(fn)
    return fn


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcheck")
@click.option(
    "--values",
    "value_form",
    type=click.Choice(VALUE_STYLES),
    envvar=STYLE_VARIABLE,
    default="tla",
    show_default=True,
    help="How values are written in every output: TLA+'s form as TLC prints it "
    "(\"white\", [pos |-> 0], <<1, 2>>) or Python's ('white', Token(pos=0), (1, 2)). "
    "Before the command: mcheck --values python run SPEC.",
)
def main(value_form: str) -> None:
    """mcheck: explicit-state model checking of Raft-style protocol specs."""
    survive_closed_stdout()  # `mcheck run X | head -1` exits with the run's code
    set_value_style(value_form)  # for this process and every worker it starts


def _header(result_spec: str, variant: str, constants: dict[str, Any], how: str) -> Text:
    consts = "".join(f"; {k}={show(v)}" if i == 0 else f", {k}={show(v)}"
                     for i, (k, v) in enumerate(constants.items()))  # fmt: skip
    return Text(f"mcheck {result_spec} (variant {variant}{consts}; {how})")


@main.command(epilog=epilog("run"))
@click.argument("spec")
@click.option("--variant", help="Which variant of the spec to check (default: the spec's).")
@CONST_OPTION
@table_option("strategy")
@table_option("symmetry")
@table_option("deadlock")
@table_option("max_states")
@table_option("max_depth")
@table_option("timeout")
@click.option(
    "--property",
    "--invariant",
    "properties",
    multiple=True,
    help="Check only this invariant, action property or temporal property (repeatable; "
    "default: the variant's story if the spec tells one, else all; 'all' checks every one, "
    "'none' none and explores the whole space). --invariant is an alias.",
)
@table_option("workers")
@table_option("cluster")
@table_option("cache")
@click.option(
    "--checkpoint",
    "checkpoint_dir",
    type=click.Path(file_okay=False),
    help="Save a checkpoint to this folder periodically and when stopped (Ctrl-C, "
    "--timeout); continue it with mcheck resume FOLDER.",
)
@CHECKPOINT_EVERY_OPTION
@_output_options
@guarded
def run(
    spec: str,
    variant: str | None,
    consts: tuple[str, ...],
    strategy: str,
    symmetry: bool,
    deadlock: bool | None,
    max_states: int | None,
    max_depth: int | None,
    timeout: float | None,
    properties: tuple[str, ...],
    workers: int,
    cluster: str | None,
    cache: bool,
    checkpoint_dir: str | None,
    checkpoint_every: float,
    trace_out: str | None,
    picture: str | None,
    no_color: bool,
    as_json: bool,
) -> None:
    """Check every reachable state of SPEC (a name under specs/, or a .py file)."""
    console = _console(no_color)
    instance = build_spec(spec, variant, consts, story=True)
    chosen, story = story_properties(instance, properties)
    model = CompiledSpec(instance, properties=chosen, symmetry=symmetry)
    opts = Options(
        strategy=Strategy(strategy),
        symmetry=symmetry,
        deadlock=deadlock,
        max_states=max_states,
        max_depth=max_depth,
        timeout=timeout,
        workers=workers,
        cluster=cluster,
        cache=cache,
        checkpoint=checkpoint_dir,
        checkpoint_every=checkpoint_every,
    )
    opts.origin = {
        # A spec file is recorded by its absolute path: resume may run elsewhere.
        "spec": _origin_spec(spec),
        "variant": instance.variant,
        "consts": list(consts),
        # What was checked, the story's choice included: resume checks the same.
        "properties": chosen,
        # The options resume continues with (checker.explore.options.RUN_OPTIONS says which).
        "options": recorded(opts),
    }
    _run_and_report(console, spec, instance, model, opts, "", trace_out, picture, as_json, story)


@main.command(epilog=epilog("resume"))
@click.argument("folder", type=click.Path(file_okay=False))
@click.option(
    "--spec",
    "spec_arg",
    metavar="SPEC",
    help="The spec to resume with (a name or a .py file): needed when the checkpoint "
    "is of a spec file outside FOLDER.",
)
@click.option("--variant", help="Must be the checkpoint's variant (default: it is).")
@click.option(
    "--const",
    "consts",
    multiple=True,
    metavar="NAME=VALUE",
    help="Must equal the checkpoint's constant (default: it does; another value is refused).",
)
@table_option("max_states")
@table_option("timeout", help="Seconds before stopping again (a checkpoint is saved then).")
@CHECKPOINT_EVERY_OPTION
@click.option(
    "--trust-checkpoint",
    "trust",
    is_flag=True,
    help="Resume a checkpoint not signed with your key (one from elsewhere); the result "
    "then says it rests on that file.",
)
@_output_options
@guarded
def resume(
    folder: str,
    spec_arg: str | None,
    variant: str | None,
    consts: tuple[str, ...],
    max_states: int | None,
    timeout: float | None,
    checkpoint_every: float,
    trust: bool,
    trace_out: str | None,
    picture: str | None,
    no_color: bool,
    as_json: bool,
) -> None:
    """Continue the run whose checkpoint is in FOLDER (written by mcheck run
    --checkpoint): the same spec, variant, constants and options, to the figures an
    uninterrupted run ends with.  A spec, variant, constant or fingerprint function
    that changed since is refused.  A spec file is imported only when you name it
    with --spec or FOLDER holds it.  A checkpoint not signed with your key (see
    MCHECK_CHECKPOINT_KEY) is refused unless --trust-checkpoint."""
    from checker.check import checkpoint

    # A damaged or unsigned file is refused before any spec is imported for it.
    checkpoint.authenticate(folder, trusted=trust)
    origin = checkpoint.check_origin(folder, checkpoint.read_header(folder, whole=True)["origin"])
    spec = spec_arg or _spec_to_resume(folder, origin["spec"])
    where = spec_file(spec)
    # Say what will be imported before importing it: spec code runs on import (on
    # stdout: stderr keeps one line for an error, and --json its last line).
    click.echo(f"mcheck: resuming {folder} with the spec in {where or spec}")
    given = list(origin["consts"])
    # Constants given again must agree with the recorded ones (the identity check says
    # which differs); constants not given are the checkpoint's.
    instance = build_spec(spec, variant or origin["variant"], (*given, *consts), story=True)
    kept = origin["options"]
    model = CompiledSpec(instance, properties=list(origin["properties"]), symmetry=kept["symmetry"])
    opts = Options(
        **kept,
        max_states=max_states,
        timeout=timeout,
        checkpoint=folder,
        checkpoint_every=checkpoint_every,
        resume=True,
        trust_checkpoint=trust,
        origin={**origin, "spec": origin["spec"] if spec_arg is None else _origin_spec(spec)},
    )
    console = _console(no_color)
    _run_and_report(console, spec, instance, model, opts, "resumed, ", trace_out, picture, as_json)


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(:[A-Za-z_][A-Za-z0-9_]*)?")


def _spec_to_resume(folder: str, recorded: str) -> str:
    """The spec a checkpoint names, if ``resume`` may import it without being told: a
    plain spec name (found as ``mcheck run NAME`` finds it: the project's specs folder,
    then the shipped specs) or a ``.py`` file inside the checkpoint's folder.  Any
    other path or module could be any code on the machine: the user must name it."""
    if _PLAIN_NAME.fullmatch(recorded):
        return recorded
    if recorded.endswith(".py"):
        path = Path(recorded)
        if path.is_absolute() and path.resolve().parent == Path(folder).resolve():
            return str(path.resolve())
    shown = _one_line(repr(recorded)[:200])
    raise ConfigError(
        f"{folder}: the checkpoint is of the spec {shown}, outside {folder}: resume imports "
        f"a spec file only when you name it ({command()} resume {folder} --spec FILE)"
    )


def _origin_spec(spec: str) -> str:
    """How a run records its spec for ``resume``: a file by its absolute path."""
    return str(Path(spec).resolve()) if spec.endswith(".py") else spec


@main.command(epilog=epilog("simulate"))
@click.argument("spec")
@click.option("--variant", help="Which variant of the spec (default: the spec's).")
@CONST_OPTION
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=DEFAULT_DEPTH,
    show_default=True,
    help="States per behaviour at most (the initial state counts 1).",
)
@click.option(
    "--traces",
    type=click.IntRange(min=1),
    help="Behaviours to generate (default: until --timeout or Ctrl-C).",
)
@click.option(
    "--timeout",
    type=SECONDS,
    help="Seconds before stopping.",
)
@click.option(
    "--property",
    "--invariant",
    "properties",
    multiple=True,
    help="Check only this invariant or temporal property (repeatable; default: the "
    "variant's story if the spec tells one, else all; 'all' checks every one).",
)
@click.option(
    "--deadlock/--no-deadlock",
    "deadlock",
    default=None,
    help="Report states with no enabled action (default: on, unless the spec says otherwise).",
)
@click.option(
    "--no-shorten", is_flag=True, help="Report the violating behaviour as found, not shortened."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes walking behaviours (the same answer as one: the violation of the "
    "lowest-numbered violating behaviour).",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Walk behaviours as tasks on a dask.distributed cluster (a scheduler address, "
    "or local:N for N local processes); the same answer as one process.",
)
@click.option(
    "--swarm/--no-swarm",
    default=True,
    show_default=True,
    help="Swarm simulation: each behaviour takes only a random subset of the actions, "
    "with random weights (so always-enabled actions do not crowd out rare sequences).",
)
@click.option(
    "--guided/--no-guided",
    default=True,
    show_default=True,
    help="Coverage guidance: each step prefers a state the behaviour has not visited, "
    "from the action it has taken least (with --swarm: weighted by the swarm's weights). "
    "--no-swarm --no-guided is TLC's -simulate walk.",
)
@_output_options
@guarded
def simulate(
    spec: str,
    variant: str | None,
    consts: tuple[str, ...],
    seed: int,
    depth: int,
    traces: int | None,
    timeout: float | None,
    properties: tuple[str, ...],
    deadlock: bool | None,
    no_shorten: bool,
    workers: int,
    cluster: str | None,
    swarm: bool,
    guided: bool,
    trace_out: str | None,
    picture: str | None,
    no_color: bool,
    as_json: bool,
) -> None:
    """Random behaviours of SPEC (TLC's -simulate), for state spaces too large to
    exhaust: invariants on every state, temporal properties on behaviours that loop.
    Deterministic for a seed; a violation is shortened, a clean simulation is
    incomplete (exit 3): it proves nothing."""
    instance = build_spec(spec, variant, consts, story=True)
    chosen, story = story_properties(instance, properties)
    model = CompiledSpec(instance, properties=chosen, symmetry=False)
    opts = SimulationOptions(
        seed=seed,
        depth=depth,
        traces=traces,
        timeout=timeout,
        deadlock=deadlock,
        shrink=not no_shorten,
        swarm=swarm,
        guided=guided,
        workers=workers,
        cluster=cluster,
    )
    opts.validate()
    _check_and_report(
        _console(no_color),
        spec,
        instance,
        model,
        lambda progress: simulate_model(model, replace(opts, progress=progress.simulation)),
        f"simulate{' --swarm' if swarm else ''}{' --guided' if guided else ''}, seed {seed}, "
        f"depth {depth}"
        + (f", {workers} workers" if workers > 1 else "")
        + (f", cluster {cluster}" if cluster else ""),
        trace_out,
        picture,
        as_json,
        story,
    )


@main.command(name="validate", epilog=epilog("validate"))
@click.argument("spec")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="LOG...")
@click.option("--variant", help="Which variant of the spec (default: the spec's).")
@CONST_OPTION
@click.option(
    "--map",
    "mapping",
    metavar="MODULE",
    help="A module (.py file or name) whose MAPPING maps the log's events to actions "
    "(default: the spec's log_mapping, else event name = action name).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "ndjson", "itf", "ratis-log"]),
    default="auto",
    show_default=True,
    help="NDJSON events, an mcheck ITF trace, or a Ratis/Ozone text log (auto: by name).",
)
@click.option(
    "--tag",
    default="trace",
    show_default=True,
    help='In an NDJSON log in Specula\'s envelope: the "tag" of the lines that are events.',
)
@click.option(
    "--coverage",
    is_flag=True,
    help="Also say which of the spec's actions and which mapped event names the logs "
    "exercised, and which never.",
)
@click.option("--max-states", type=click.IntRange(min=1), help="Stop after examining this many.")
@click.option(
    "--timeout",
    type=SECONDS,
    help="Seconds before stopping (each log).",
)
@click.option(
    "--last",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Show the last N steps of the matching behaviour (0: every step).",
)
@click.option("--no-color", is_flag=True, help="Plain text output.")
@guarded
def validate_cmd(
    spec: str,
    logs: tuple[str, ...],
    variant: str | None,
    consts: tuple[str, ...],
    mapping: str | None,
    fmt: str,
    tag: str,
    coverage: bool,
    max_states: int | None,
    timeout: float | None,
    last: int,
    no_color: bool,
) -> None:
    """Is each LOG (an implementation's events) a behaviour of SPEC?  Exit 0 with the
    matching behaviour aligned with the log's lines, 1 naming the first event no
    behaviour matches (and what disagreed), 2 for a malformed log, 3 if a limit or
    Ctrl-C came first (of several logs: the worst of these)."""
    from checker.check.validate import mapping_of

    instance = build_spec(spec, variant, consts)
    model = CompiledSpec(instance, properties=["none"], symmetry=False)
    console = _console(no_color)
    console.print(_header(model.name, instance.variant, instance.constant_values, "validate"))
    taken: set[str] = set()
    named: set[str] = set()
    codes: list[int] = []
    for log in logs:
        code, actions, events = _validate_one(
            console,
            model,
            instance,
            Path(log),
            fmt,
            tag,
            mapping,
            max_states,
            timeout,
            last,
            consts,
        )
        codes.append(code)
        taken |= actions
        named |= events
    if coverage:
        rules = mapping_of(type(instance), mapping)
        mapped = set(rules.events) if rules is not None else set(model.action_names)
        never_taken = [a for a in model.action_names if a not in taken]
        never_seen = sorted(mapped - named)
        console.print(
            Text(
                f"coverage over {len(logs)} log{'' if len(logs) == 1 else 's'}: actions taken: "
                f"{', '.join(a for a in model.action_names if a in taken) or 'none'}; "
                f"never taken: {', '.join(never_taken) or 'none'}; events seen: "
                f"{', '.join(sorted(named)) or 'none'}; mapped events never seen: "
                f"{', '.join(never_seen) or 'none'}",
                style="bold",
            ),
            soft_wrap=True,
        )
    # A log that is no behaviour is the answer; an incomplete one is not a pass.
    worst = max(codes, key=lambda c: (c == 1, c == ExitCode.INCOMPLETE, c))
    sys.exit(worst)


def _validate_one(
    console: Console,
    model: CompiledSpec,
    instance: Spec,
    path: Path,
    fmt: str,
    tag: str,
    mapping: str | None,
    max_states: int | None,
    timeout: float | None,
    last: int,
    consts: tuple[str, ...] = (),
) -> tuple[int, set[str], set[str]]:
    """Validate one log; print the verdict; return its exit code, the spec actions its
    (partly) matching behaviour took and the event names it holds."""
    from checker.check.validate import LogError, Validator, mapping_of, read_log

    log = str(path)
    _say_memory_needed(path)
    try:
        events = read_log(path, fmt, type(instance), tag)
        # An ITF trace names actions and full states: the spec's log mapping is for logs.
        is_itf = fmt == "itf" or (fmt == "auto" and path.name.endswith(".itf.json"))
        rules = None if is_itf and mapping is None else mapping_of(type(instance), mapping)
        if rules is not None and rules.constants is not None:
            # The log fixes some constants (its servers, a limit its configuration
            # line gives); the command line's own --const still win.
            fixed = dict(rules.constants(path, events))
            instance = type(instance)(
                variant=instance.variant, **{**fixed, **_parse_consts(consts)}
            )
            model = CompiledSpec(instance, properties=["none"], symmetry=False)
            shown = ", ".join(f"{k}={show(v)}" for k, v in fixed.items())
            console.print(Text(f"{log}: constants from the log: {shown}"), soft_wrap=True)
        validator = Validator(model, rules, max_states=max_states, timeout=timeout)
        outcome = validator.run(events)
    except LogError as exc:
        _fail(f"malformed log: {exc}")
    names = {ev.name for ev in events}
    taken: set[str] = set()
    if validator.frontier:
        partial, _ = validator.behaviour(validator.frontier[0])
        taken = {st.action_name for st in partial.steps[1:] if st.action_name}
    if outcome.incomplete is not None:
        console.print(
            Text(
                f"INCOMPLETE ({outcome.incomplete}): {outcome.events} of {len(events)} events "
                f"of {log} matched so far, {outcome.states:,} states examined; not a verdict.",
                style="bold yellow",
            ),
            soft_wrap=True,
        )
        return ExitCode.INCOMPLETE, taken, names
    if outcome.ok:
        assert outcome.trace is not None
        render_trace(outcome.trace, console, title=f"behaviour matching {log}:", last=last or None)
        console.print(
            Text(
                f"OK: all {len(events)} events of {log} are a behaviour of {model.name} "
                f"({instance.variant}); {outcome.states:,} states examined.",
                style="bold green",
            ),
            soft_wrap=True,
        )
        return 0, taken, names
    ev = outcome.failed
    assert ev is not None
    # By line: a mapping's ``prepare`` may have rewritten the events it matched.
    reached = [e.line for e in events if e.line < ev.line]
    console.print(
        Text(
            f"NOT A BEHAVIOUR: line {ev.line} ({ev.name}"
            + (f" {ev.params}" if ev.params else "")
            + f") matches no behaviour of {model.name} ({instance.variant}) after "
            f"{outcome.events} matched event{'' if outcome.events == 1 else 's'}"
            + (f" (the furthest line reached: {reached[-1]})" if reached else "")
            + f": {outcome.reason}.",
            style="bold red",
        ),
        soft_wrap=True,
    )
    if ev.text:
        console.print(Text(f"  line {ev.line}: {ev.text}"), soft_wrap=True)
    for row in outcome.details:
        console.print(Text(f"  {row}"), soft_wrap=True)
    for i, cand in enumerate(outcome.candidates, start=1):
        console.print(Text(f"  candidate state {i}: {show(cand)}"), soft_wrap=True)
    return 1, taken, names


def _run_and_report(
    console: Console,
    spec: str,
    instance: Spec,
    model: CompiledSpec,
    opts: Options,
    prefix: str,
    trace_out: str | None,
    picture: str | None,
    as_json: bool,
    story: str = "",
) -> None:
    """An exhaustive run (run, resume) reported by :func:`_check_and_report`."""
    # Temporal properties are checked under symmetry without a checkpoint (the
    # quotient graph, unfolded: checker.liveness.quotient); the run's warnings say when a
    # property keeps them from it.
    reduced = model.symmetric and (not model.temporal or opts.checkpoint is None)
    how = prefix + opts.strategy + (", symmetry" if reduced else "")
    if opts.cluster is not None:  # the levels are explored on the cluster's workers
        how += f", cluster {opts.cluster}"
    elif opts.workers > 1:
        how += f", {opts.workers} workers"
    _check_and_report(
        console,
        spec,
        instance,
        model,
        lambda progress: run_model(model, replace(opts, progress=progress)),
        how,
        trace_out,
        picture,
        as_json,
        story,
    )


def _check_and_report(
    console: Console,
    spec: str,
    instance: Spec,
    model: CompiledSpec,
    check: Callable[[_Progress], Result],
    how: str,
    trace_out: str | None,
    picture: str | None,
    as_json: bool,
    story: str = "",
) -> None:
    """Run a check and report it (and save its trace): the body of run, resume and
    simulate; ``story`` says what the variant's story chose (a line under the header)."""
    presentation = presentation_for(model)
    progress = _Progress(console, enabled=console.is_terminal and not as_json, log=True)
    if not as_json:
        console.print(_header(model.name, instance.variant, instance.constant_values, how))
        if story:
            console.print(Text(story))
    try:
        result = check(progress)
        if result.verdict is Verdict.INCOMPLETE:
            # The command is reporting a stopped run: a second Ctrl-C must not cut it.
            ignore_interrupts()
    except EvaluationError as exc:
        _report_evaluation_error(exc)
        sys.exit(ExitCode.BAD_INPUT)
    finally:
        progress.stop()
    if result.verdict is Verdict.ERROR:
        _report_result_error(result)
        sys.exit(result.exit_code)
    saved: Path | None = None
    if result.trace is not None:
        # Made again now that the run has fixed the model's variable names: the one
        # made before the run cannot say which variables the property reads.
        presentation = presentation_for(model)
        with shielded():
            try:
                saved = save_trace(
                    result,
                    model,
                    Path(trace_out) if trace_out else None,
                    source=spec,
                    presentation=presentation,
                )
            except (OSError, TypeError, ValueError) as exc:
                click.echo(f"mcheck: warning: could not save the trace: {exc}", err=True)
            if picture:
                try:
                    drawn = timeline_of_run(result, model, presentation)
                    kind = "mermaid" if picture.endswith(".mmd") else "html"
                    _write_picture(Path(picture), drawn, kind)
                except OSError as exc:
                    click.echo(f"mcheck: warning: could not write the picture: {exc}", err=True)
    if as_json:
        data = result.to_json()
        data["trace_file"] = str(saved) if saved else None
        click.echo(json.dumps(data, sort_keys=True))
    else:
        for w in result.warnings:
            console.print(Text(f"note: {w}", style="yellow"), soft_wrap=True)
        _report(console, result, model, presentation, saved)
    sys.exit(result.exit_code)


def _kind_of_property(result: Result, model: CompiledSpec) -> str:
    if result.liveness:
        return "Temporal property"
    if result.violated in model.action_property_names:
        return "Action property"
    return "Invariant"


def _report(
    console: Console,
    result: Result,
    model: CompiledSpec,
    presentation: Presentation,
    saved: Path | None,
) -> None:
    s = result.stats
    head = {
        Verdict.OK: ("No property violated: every reachable state checked.", "bold green"),
        Verdict.VIOLATION: (
            f"{_kind_of_property(result, model)} {result.violated} is violated"
            + (" by the last step." if result.violated in model.action_property_names else "."),
            "bold red",
        ),
        Verdict.DEADLOCK: ("Deadlock reached: a state with no enabled action.", "bold red"),
        Verdict.INCOMPLETE: (
            f"INCOMPLETE ({result.reason}): no violation found so far, but this is not a pass.",
            "bold yellow",
        ),
    }[result.verdict]
    # One statement of the verdict, first (as TLC's "Error: Invariant X is violated."),
    # then the behaviour under one title.
    console.print(Text(head[0], style=head[1]))
    if result.trace is not None:
        what = "counterexample" if result.verdict is Verdict.VIOLATION else "trace"
        n = result.trace.length
        title = f"{what}, {n} action{'' if n == 1 else 's'}" + (
            " (a lasso)" if result.trace.loop is not None else ""
        )
        render_timeline(timeline_of_run(result, model, presentation), console, title=title)
    if saved is not None:
        # Never wrapped: the command is for copying, and a long path broke it in two.
        console.print(Text(f"trace saved to {saved} ({command()} show {saved})"), soft_wrap=True)
    if result.simulation is not None:
        _report_simulation(console, result, result.simulation)
        return
    rows = [
        ("distinct states", f"{s.distinct:,}"),
        ("states generated", f"{s.generated:,}"),
        ("depth", str(s.depth)),
        ("queue peak", f"{s.queue_peak:,}"),
    ]
    if result.graph is not None:
        rows.append(("liveness graph", f"{result.graph[0]:,} states, {result.graph[1]:,} edges"))
    rows += [
        ("seconds", seconds_text(s.seconds)),
        ("distinct states/s", f"{s.states_per_second:,.0f}"),
        ("collision probability", f"{result.collision_probability:.1e}"),
    ]
    _figures(console, rows, ("generated", "distinct"), result.action_names, s.action_generated,
             s.action_distinct)  # fmt: skip
    if result.verdict in (Verdict.OK, Verdict.INCOMPLETE):
        for unfired in result.unfired_actions:
            console.print(Text(f"warning: action {unfired} never fired", style="yellow"))


def seconds_text(seconds: float) -> str:
    """Seconds as a figure beside a rate: never ``0.00`` (a rate of thousands per
    second beside zero seconds reads as a mistake)."""
    if seconds >= 1:
        return f"{seconds:.2f}"
    return f"{seconds:.2g}" if seconds > 0 else "0"


def _report_simulation(console: Console, result: Result, sim: SimulationStats) -> None:
    rows = [
        ("seed", str(sim.seed)),
        ("behaviours", f"{sim.behaviours:,}"),
        ("states checked", f"{sim.states:,}"),
        ("distinct states visited", f"{sim.distinct:,}"),
        ("states generated", f"{sim.generated:,}"),
        ("deepest behaviour", f"{sim.deepest} states"),
    ]
    if sim.behaviour is not None:
        rows.append(("violating behaviour", f"#{sim.behaviour} ({sim.found_length} actions)"))
    if sim.swarm is not None:
        rows.append(("its swarm configuration", sim.swarm))
    rows += [
        ("seconds", seconds_text(sim.seconds)),
        ("states/s", f"{sim.states_per_second:,.0f}"),
        ("behaviours/s", f"{sim.behaviours_per_second:,.1f}"),
    ]
    _figures(console, rows, ("enabled", "taken"), result.action_names, sim.action_generated,
             sim.action_taken)  # fmt: skip
    for n, g in zip(result.action_names, sim.action_generated, strict=True):
        if g == 0:
            console.print(Text(f"warning: action {n} was never enabled", style="yellow"))


def _figures(
    console: Console,
    rows: list[tuple[str, str]],
    headings: tuple[str, str],
    names: tuple[str, ...],
    first: list[int],
    second: list[int],
) -> None:
    """A run's figures, then its per-action coverage (two counts per action)."""
    table = Table(show_header=False, box=None, padding=(0, 2))
    for row in rows:
        table.add_row(*row)
    console.print(table)
    cov = Table(title="actions", title_justify="left", box=None, padding=(0, 2))
    cov.add_column("action")
    cov.add_column(headings[0], justify="right")
    cov.add_column(headings[1], justify="right")
    for n, a, b in zip(names, first, second, strict=True):
        cov.add_row(Text(n), f"{a:,}", f"{b:,}")
    console.print(cov)


def _report_evaluation_error(exc: EvaluationError) -> None:
    err = Console(stderr=True, highlight=False)
    err.print(Text(f"mcheck: error: {_one_line(str(exc))}"))
    if exc.state is not None:
        err.print(Text(f"  in state: {show(exc.state)}"))
    if exc.trace is not None:
        render_trace(exc.trace, err, title=f"trace that reached it ({exc.trace.length} actions):")


def _report_result_error(result: Result) -> None:
    err = Console(stderr=True, highlight=False)
    err.print(Text(f"mcheck: error: {_one_line(result.reason or 'spec error')}"))
    if result.trace is not None:
        last = result.trace.steps[-1].state
        err.print(Text(f"  in state: {show(last)}"))
        render_trace(
            result.trace, err, title=f"trace that reached it ({result.trace.length} actions):"
        )


#: Columns for output that is not a terminal (a pipe, a CI log, a file): rich's 80
#: would fold a timeline that any log viewer shows wider.  COLUMNS still wins.
PIPED_WIDTH = 120


def _console(no_color: bool, width: int | None = None) -> Console:
    """The console of a command that draws: the terminal's width, ``--width``, or
    PIPED_WIDTH when output goes elsewhere and COLUMNS is not set."""
    console = Console(highlight=False, no_color=no_color or None, width=width)
    if width is None and not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, no_color=no_color or None, width=PIPED_WIDTH)
    return console


@main.command(name="list")
@click.argument("target", required=False, metavar="[SPEC]")
@guarded
def list_specs(target: str | None) -> None:
    """List the shipped specs (or one spec: a name, module or .py file) with their
    variants, properties, actions, constants and symmetry."""
    console = Console(highlight=False)
    for name in [target] if target else available_specs():
        try:
            cls = load_spec_class(name)
        except MCheckError as exc:
            if target:
                raise
            console.print(Text(f"{name}: does not load: {exc}", style="red"), soft_wrap=True)
            continue
        default = cls.default_variant or (cls.variants[0] if cls.variants else "")
        variants = [default] + [v for v in cls.variants if v != default]
        console.print(Text(cls.spec_name(), style="bold cyan"))
        temporal = {d.name: d.kind for d in cls._temporals}
        rows = [
            ("variants", ", ".join(variants) + " (first is the default)"),
            ("invariants", ", ".join(cls.invariant_names()) or "none"),
            (
                "action properties ([][A]_vars)",
                ", ".join(cls.action_property_names()) or "none",
            ),
            (
                "temporal properties",
                ", ".join(f"{n} ({_KIND_TEXT[k]})" for n, k in temporal.items()) or "none",
            ),
            ("actions", ", ".join(cls.action_names())),
            ("constants", ", ".join(f"{k}={show(v)}" for k, v in cls.constants.items())),
            ("symmetry", _symmetry_text(cls, variants)),
            ("fairness", _fairness_text(cls.fairness)),
        ]
        rows += [(f"story of {v}", _story_text(cls.stories[v])) for v in cls.stories]
        for label, text in rows:
            console.print(Text(f"  {label}: {text}"), soft_wrap=True)


def _story_text(story: Any) -> str:
    """A variant's story as ``mcheck list`` shows it: what it is, what it sets."""
    chose = [f"{k}={show(v)}" for k, v in story.constants.items()] + list(story.check)
    return (f"{story.about}: " if story.about else "") + (", ".join(chose) or "nothing")


def _fairness_text(fairness: Any) -> str:
    """Each fairness entry in TLA+ words: per instance, or a family as one action."""
    parts = []
    for key, how in fairness.items():
        if isinstance(how, Grouped):
            acts = " \\/ ".join(key) if isinstance(key, tuple) else key
            op = FairnessKind(how.kind).operator
            parts.append(f"{op}({acts}) as one action for each value its instances group by")
            continue
        kind, only = (how[0], " (some instances)") if isinstance(how, tuple) else (how, "")
        op = FairnessKind(kind).operator
        if isinstance(key, tuple):
            acts = " \\/ ".join(key)
            parts.append(f"{op}({acts}) as one action, any instance{only}")
        else:
            parts.append(f"{op}({key}) for each instance on its own{only}")
    return "; ".join(parts) or "none"


def _symmetry_text(cls: Any, variants: list[str]) -> str:
    """The symmetric sets; per variant when a property gives them."""

    def names(variant: str | None) -> str:
        return ", ".join(cls(variant=variant).symmetry_names) or "none"

    if not isinstance(inspect.getattr_static(cls, "symmetry"), property):
        return ", ".join(cls.symmetry) or "none"
    per = {v: names(v) for v in variants} if variants else {"default": names(None)}
    if len(set(per.values())) == 1:
        return next(iter(per.values()))
    return "; ".join(f"{n} ({v})" for v, n in per.items())


_KIND_TEXT = {
    "eventually": "<>P",
    "always_eventually": "[]<>P",
    "eventually_always": "<>[]P",
    "leads_to": "P ~> Q",
}


@main.command(name="show", epilog=epilog("show"))
@click.argument("trace_file", metavar="TRACE")
@click.option("--full", is_flag=True, help="Print whole states, not only changes.")
@click.option("--vars", "var_list", help="Only these variables (comma-separated).")
@click.option("--no-color", is_flag=True, help="Plain text.")
@click.option(
    "--width", type=click.IntRange(min=40, max=1000), help="Columns (default: the terminal's)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "mermaid", "html"]),
    default="text",
    show_default=True,
    help="A terminal timeline, a Mermaid sequence diagram, or one self-contained HTML page.",
)
@click.option(
    "--out", type=click.Path(dir_okay=False), help="Write the mermaid/html picture to FILE."
)
@guarded
def show_trace(
    trace_file: str,
    full: bool,
    var_list: str | None,
    no_color: bool,
    width: int | None,
    fmt: str,
    out: str | None,
) -> None:
    """Draw a saved trace: a timeline (one lane per server, what each step changed),
    or a picture of it as a Mermaid sequence diagram or an HTML page."""
    trace = read_itf(Path(trace_file))
    only = _var_filter(var_list, trace.var_names)
    data = timeline_of_itf(trace)
    if fmt != "text":
        if out:
            _write_picture(Path(out), data, fmt)
        else:
            click.echo(_picture_text(data, fmt), nl=False)
        return
    console = _console(no_color, width)
    render_timeline(data, console, full=full, only_vars=only)


#: Memory a validation takes per byte of log, about (500,000 events of die_hard, a
#: 28 MB log: 767 MB at its peak): the events, then one node per matched state.
VALIDATE_BYTES_PER_LOG_BYTE = 28


def _say_memory_needed(path: Path) -> None:
    """Before a long validation, say so if the log looks too large for the memory left
    (it then ends incomplete, exit 3, when memory runs out)."""
    from checker.base.machine import memory_available

    try:
        size = path.stat().st_size
    except OSError:
        return  # read_log says why, in one line
    from checker.check.validate import MAX_LOG_BYTES

    if size > MAX_LOG_BYTES:
        return  # refused by its size, in one line, before anything is read
    need = size * VALIDATE_BYTES_PER_LOG_BYTE
    have = memory_available()
    if have is not None and need > have:
        click.echo(
            f"warning: {path} ({size / 2**20:,.0f} MB) may need about {need / 2**30:.1f} GB "
            f"to validate; {have / 2**30:.1f} GB is available, so it may end incomplete",
            err=True,
        )


def _picture_text(data: TimelineData, fmt: str) -> str:
    from checker.traces.picture import html_page, mermaid

    return mermaid(data) if fmt == "mermaid" else html_page(data)


def _write_picture(path: Path, data: TimelineData, fmt: str) -> None:
    """Write a picture of the trace; say where (a file the user asked for)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, _picture_text(data, fmt))
    click.echo(f"picture: {path}", err=True)


def _var_filter(var_list: str | None, names: tuple[str, ...]) -> list[str] | None:
    if not var_list:
        return None
    wanted = [v.strip() for v in var_list.split(",") if v.strip()]
    unknown = [v for v in wanted if v not in names]
    if unknown:
        raise ConfigError(f"unknown variable {unknown[0]!r} (known: {', '.join(names)})")
    return wanted


@main.command(name="replay", epilog=epilog("replay"))
@click.argument("args", nargs=-1, required=True, metavar="[SPEC] TRACE | SPEC --from-tlc FILE")
@click.option("--variant", help="Variant to replay against (default: the trace's).")
@CONST_OPTION
@click.option(
    "--from-tlc",
    "from_tlc",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Transplant TLC's counterexample in FILE (its output, -difftrace or -tool; a "
    "-dumpTrace json or tla file; ITF) into SPEC: exit 0 reproduced, 1 diverges.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "text", "json", "tla", "itf"]),
    default="auto",
    show_default=True,
    help="With --from-tlc: the file's format (auto: by its content).",
)
@click.option(
    "--map",
    "mapping",
    metavar="MODULE",
    help="With --from-tlc: a module whose MAPPING (a LogMapping, as validate's) maps "
    "TLC's variables, model values, fields and actions to the spec's (default: the "
    "spec's tla_mapping, else the same names).",
)
@click.option(
    "--property",
    "prop",
    metavar="NAME",
    help="With --from-tlc: the spec's property TLC's trace violates (default: the one "
    "TLC names, or, for a dump, whichever of the spec's fails at its end).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="With --from-tlc: where to save the reproduced trace as ITF "
    "(default: traces/<spec>-<variant>-<property>.itf.json).",
)
@click.option("--max-states", type=click.IntRange(min=1), help="Stop after examining this many.")
@click.option("--timeout", type=SECONDS, help="Seconds before stopping.")
@guarded
def replay_cmd(
    args: tuple[str, ...],
    variant: str | None,
    consts: tuple[str, ...],
    from_tlc: str | None,
    fmt: str,
    mapping: str | None,
    prop: str | None,
    out: str | None,
    max_states: int | None,
    timeout: float | None,
) -> None:
    """Re-execute TRACE against SPEC (default: the shipped spec the trace names): exit 0
    if it is a real behaviour ending in its violation, 1 with the first diverging step.
    With --from-tlc FILE: does SPEC have the behaviour of TLC's counterexample?"""
    if from_tlc is not None:
        if len(args) != 1:
            raise ConfigError("replay --from-tlc FILE takes one SPEC")
        _transplant(args[0], Path(from_tlc), variant, consts, fmt, mapping, prop, out,
                    max_states, timeout)  # fmt: skip
        return
    tlc_only = {"--format": fmt != "auto", "--map": mapping, "--property": prop, "--out": out,
                "--max-states": max_states, "--timeout": timeout}  # fmt: skip
    given = [k for k, v in tlc_only.items() if v]
    if given:
        raise ConfigError(f"{given[0]} is an option of replay --from-tlc only")
    if len(args) > 2:
        raise ConfigError("replay takes [SPEC] TRACE")
    trace_file = args[-1]
    spec = args[0] if len(args) == 2 else _recorded_spec(Path(trace_file))
    cls = load_spec_class(spec)
    # Only the named spec's own record types are rebuilt (a trace file is data from
    # elsewhere: its type names are never imported).
    trace = read_itf(Path(trace_file), types=record_types(cls))
    traced_spec = trace.meta.get("spec")
    if traced_spec and traced_spec != cls.spec_name():
        raise ConfigError(
            f"{trace_file} is a trace of spec {traced_spec!r}, not {cls.spec_name()!r}"
        )
    recorded = trace.meta.get("variant")
    chosen = variant or (recorded if isinstance(recorded, str) else None)
    if chosen not in cls.variants:
        chosen = variant  # unknown recorded variant: let the spec decide/complain
    overrides = _trace_constants(trace.meta.get("constants") or {}, cls.constants)
    overrides.update(_parse_consts(consts))
    instance = cls(variant=chosen, **overrides)
    model = CompiledSpec(instance, symmetry=False)
    try:
        outcome = replay_trace(model, trace)
    except EvaluationError as exc:
        raise ConfigError(str(exc)) from None
    console = _console(False)
    style = "bold green" if outcome.ok else "bold red"
    head = Text(("OK: " if outcome.ok else "DIVERGES: ") + outcome.message, style=style)
    console.print(head, soft_wrap=True)
    for line in outcome.details:
        console.print(Text("  " + line), soft_wrap=True)
    if outcome.by_actions:
        console.print(Text(outcome.by_actions, style="bold"), soft_wrap=True)
    if outcome.decisive and outcome.decisive_step != outcome.step:
        console.print(Text(outcome.decisive, style="bold"), soft_wrap=True)
    sys.exit(0 if outcome.ok else 1)


def _transplant(
    spec: str,
    path: Path,
    variant: str | None,
    consts: tuple[str, ...],
    fmt: str,
    mapping: str | None,
    prop: str | None,
    out: str | None,
    max_states: int | None,
    timeout: float | None,
) -> None:
    """``replay SPEC --from-tlc FILE``: see :mod:`checker.check.transplant`."""
    from checker.check.transplant import transplant
    from checker.check.validate import LogError, mapping_of
    from checker.traces.tlc_trace import read_tlc

    instance = build_spec(spec, variant, consts)
    cls = type(instance)
    tlc = read_tlc(path, fmt)
    rules = mapping_of(cls, mapping, attribute="tla_mapping")
    model = CompiledSpec(instance, symmetry=False)
    try:
        done = transplant(model, cls, tlc, rules, prop, max_states, timeout)
    except LogError as exc:
        raise ConfigError(str(exc)) from None
    except EvaluationError as exc:
        raise ConfigError(str(exc)) from None
    console = _console(False)
    console.print(_header(model.name, instance.variant, instance.constant_values, "replay"))
    what = {None: "a behaviour", "invariant": "invariant", "action property": "action property",
            "deadlock": "deadlock", "temporal": "temporal property"}[tlc.verdict]  # fmt: skip
    console.print(
        Text(
            f"TLC's counterexample {path} ({tlc.fmt}): {len(tlc.states)} states"
            + (f", lasso back to state {tlc.loop + 1}" if tlc.loop is not None else "")
            + (f"; TLC: {what} {tlc.violated or ''}".rstrip() if tlc.verdict else ""),
        ),
        soft_wrap=True,
    )
    for note in done.notes:
        console.print(Text(f"  note: {note}", style="dim"), soft_wrap=True)
    if done.incomplete is not None:
        console.print(
            Text(f"INCOMPLETE ({done.incomplete}): {done.states:,} states examined; not a verdict.",
                 style="bold yellow"))  # fmt: skip
        sys.exit(ExitCode.INCOMPLETE)
    if done.result is not None and done.result.trace is not None:
        render_timeline(timeline_of_run(done.result, model, presentation_for(model)), console)
    figures = f"{done.states:,} spec states examined in {done.seconds:.2f} s"
    if done.reproduced:
        assert done.result is not None
        target = save_trace(done.result, model, Path(out) if out else None, source=spec)
        console.print(Text(f"REPRODUCED: {done.message}; {figures}.", style="bold green"),
                      soft_wrap=True)  # fmt: skip
        console.print(Text(f"trace saved to {target} ({command()} show {target})"), soft_wrap=True)
        sys.exit(0)
    head = done.message if done.message.startswith("diverges") else f"diverges: {done.message}"
    console.print(Text(f"{head[0].upper()}{head[1:]}; {figures}.", style="bold red"),
                  soft_wrap=True)  # fmt: skip
    for line in done.details:
        console.print(Text("  " + line), soft_wrap=True)
    sys.exit(1)


def _recorded_spec(path: Path) -> str:
    """The shipped spec a trace names (a trace of a spec file needs the file named)."""
    trace = read_itf(path)
    source = trace.meta.get("source")
    name = trace.meta.get("spec")
    if isinstance(source, str) and source.endswith(".py"):
        raise ConfigError(
            f"{path} is a trace of the spec file {source}: name it, as in "
            f"mcheck replay {source} {path}"
        )
    if not isinstance(name, str) or name not in available_specs():
        raise ConfigError(f"{path} does not name a shipped spec: give SPEC before TRACE")
    return name


def _trace_constants(recorded: Any, defaults: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(recorded, dict):
        raise ConfigError("the trace's '#meta.constants' is not an object")
    for name, value in recorded.items():
        if name not in defaults:
            continue
        if isinstance(value, list):
            out[name] = ",".join(str(v) for v in value)
        elif isinstance(value, bool | int | str):
            out[name] = value if not isinstance(defaults[name], str) else str(value)
    return out


@main.command(name="graph", epilog=epilog("graph"))
@click.argument("spec")
@click.option("--variant", help="Which variant of the spec.")
@CONST_OPTION
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False),
    help="Output file: .graphml or .dot.",
)
@click.option(
    "--max-nodes",
    type=click.IntRange(min=1),
    default=5000,
    show_default=True,
    help="Refuse graphs with more states than this.",
)
@guarded
def graph_cmd(
    spec: str, variant: str | None, consts: tuple[str, ...], out: str, max_nodes: int
) -> None:
    """Write the reachable state graph of a small model as GraphML or DOT: every
    reachable state (no property is checked, so nothing stops it early, unlike run)."""
    from checker.check.graph import GraphIncomplete, state_graph, write_graph

    instance = build_spec(spec, variant, consts)
    model = CompiledSpec(instance, properties=["none"], symmetry=False)
    labels = CompiledSpec(instance, symmetry=False)
    console = _console(False)
    progress = _Progress(console, enabled=console.is_terminal, log=True)
    try:
        g = state_graph(
            model, max_nodes=max_nodes, violates=labels.violated_invariant, progress=progress
        )
    except GraphIncomplete as exc:
        click.echo(f"mcheck: incomplete: {exc}: no graph written", err=True)
        sys.exit(ExitCode.INCOMPLETE)
    finally:
        progress.stop()
    with shielded():
        write_graph(g, Path(out))
    click.echo(f"wrote {g.number_of_nodes()} states and {g.number_of_edges()} edges to {out}")


@main.command(name="view", epilog=epilog("view"))
@click.argument("trace_file", metavar="TRACE")
@guarded
def view_cmd(trace_file: str) -> None:
    """Step through a saved trace interactively.

    \b
    Keys:
      right, l, n, space   next step
      left, h, p           previous step
      home, 0              first state
      end, G               last state
      g NUMBER Enter       jump to a step
      f                    whole states / changes only
      v NAMES Enter        only these variables (comma-separated; empty: all)
      c NAME Enter         next step that changes variable NAME
      Esc                  leave a prompt (g, v, c); in the view, quit
      ?                    help line
      q, Ctrl-C            quit
    """
    from checker.traces.viewer import run_viewer

    trace = read_itf(Path(trace_file))
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        _fail("mcheck view needs an interactive terminal; use mcheck show for plain output")
    run_viewer(timeline_of_itf(trace), Console(highlight=False))


@main.command(name="gate", epilog=epilog("gate"))
@click.argument("manifest", required=False, default="pyproject.toml")
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="PATTERN",
    help="Run only checks whose name or spec matches (glob; repeatable).",
)
@click.option("--junit", type=click.Path(dir_okay=False), help="Write a JUnit XML report.")
@click.option(
    "--update",
    is_flag=True,
    help="Rewrite recorded trace lengths and state counts after a deliberate change.",
)
@click.option("--jobs", type=click.IntRange(min=1), help="Parallel processes (default: cores).")
@click.option(
    "--traces",
    type=click.Path(file_okay=False),
    help="Folder for the counterexamples found (default: traces/ beside MANIFEST).",
)
@guarded
def gate_cmd(
    manifest: str,
    only: tuple[str, ...],
    junit: str | None,
    update: bool,
    jobs: int | None,
    traces: str | None,
) -> None:
    """Run every check of MANIFEST (default pyproject.toml) against its expected
    outcome; when interrupted, the checks finished so far are reported.  Every
    counterexample found is saved as an ITF file under traces/ (or --traces)."""
    from checker.cli.gate import run_gate

    if jobs is not None:
        check_process_count("--jobs", jobs)
    folder = Path(traces) if traces else None
    sys.exit(run_gate(Path(manifest), list(only), junit, update, jobs, folder))
