"""The ``mcheck`` command line: ``run`` a spec, ``list`` the shipped specs.

Exit codes follow TLC: 0 all invariants hold over the whole reachable space,
12 invariant violated, 11 deadlock, 3 incomplete (a limit was hit first), 2 bad usage
or bad input (including spec code that raises).
"""

from __future__ import annotations

import json
import sys
import time
from typing import NoReturn

import click
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from checker import __version__
from checker.errors import ConfigError, EvaluationError, MCheckError
from checker.explore import Options, check
from checker.loader import available_specs, load_spec_class
from checker.model import CompiledSpec
from checker.render import render_trace, show
from checker.result import ExitCode, Result, Stats, Verdict
from checker.spec import Spec


def _fail(message: str, code: int = ExitCode.BAD_INPUT) -> NoReturn:
    click.echo(f"mcheck: error: {message}", err=True)
    sys.exit(code)


def _parse_consts(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--const expects NAME=VALUE, got {pair!r}")
        out[name.strip()] = value
    return out


def build_spec(target: str, variant: str | None, consts: tuple[str, ...]) -> Spec:
    """Load the spec ``target`` and instantiate it with a variant and constant overrides."""
    cls = load_spec_class(target)
    return cls(variant=variant, **_parse_consts(consts))


class _Progress:
    """A live status line, shown only once a run has lasted a couple of seconds."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled
        self.start = time.perf_counter()
        self.live: Live | None = None

    def __call__(self, stats: Stats) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        if elapsed < 2.0:
            return
        text = Text(
            f"distinct {stats.distinct:,}  generated {stats.generated:,}  "
            f"depth {stats.depth}  queue {stats.queue:,}  "
            f"{stats.distinct / elapsed:,.0f} distinct/s  {elapsed:,.0f}s",
            style="cyan",
        )
        if self.live is None:
            self.live = Live(text, console=self.console, transient=True, auto_refresh=False)
            self.live.start()
        self.live.update(text, refresh=True)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcheck")
def main() -> None:
    """mcheck: explicit-state model checking of Raft-style protocol specs."""


@main.command()
@click.argument("spec")
@click.option("--variant", help="Which variant of the spec to check (default: the spec's).")
@click.option("--const", "consts", multiple=True, metavar="NAME=VALUE", help="Override a constant.")
@click.option("--strategy", type=click.Choice(["bfs", "dfs"]), default="bfs", show_default=True)
@click.option("--no-symmetry", is_flag=True, help="Do not reduce by the spec's symmetric sets.")
@click.option("--no-deadlock", is_flag=True, help="Do not report states with no enabled action.")
@click.option(
    "--max-states", type=click.IntRange(min=1), help="Stop after this many distinct states."
)
@click.option("--max-depth", type=click.IntRange(min=1), help="Do not explore beyond this depth.")
@click.option(
    "--timeout", type=click.FloatRange(min=0.0, min_open=True), help="Seconds before stopping."
)
@click.option(
    "--invariant", "invariants", multiple=True, help="Check only this invariant (repeatable)."
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes (breadth-first; same results as one).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--debug", is_flag=True, hidden=True, help="Show tracebacks of internal errors.")
def run(
    spec: str,
    variant: str | None,
    consts: tuple[str, ...],
    strategy: str,
    no_symmetry: bool,
    no_deadlock: bool,
    max_states: int | None,
    max_depth: int | None,
    timeout: float | None,
    invariants: tuple[str, ...],
    workers: int,
    as_json: bool,
    debug: bool,
) -> None:
    """Check every reachable state of SPEC (a name under specs/, or a .py file)."""
    console = Console(highlight=False)
    try:
        instance = build_spec(spec, variant, consts)
        model = CompiledSpec(instance, invariants=list(invariants), symmetry=not no_symmetry)
        progress = _Progress(console, enabled=console.is_terminal and not as_json)
        opts = Options(
            strategy=strategy,
            symmetry=not no_symmetry,
            deadlock=not no_deadlock,
            max_states=max_states,
            max_depth=max_depth,
            timeout=timeout,
            progress=progress,
            workers=workers,
        )
        try:
            result = check(
                model, opts, variant=instance.variant, constants=instance.constant_values
            )
        finally:
            progress.stop()
    except EvaluationError as exc:
        _report_evaluation_error(console, exc)
        sys.exit(ExitCode.BAD_INPUT)
    except MCheckError as exc:
        _fail(str(exc))
    except Exception as exc:
        if debug:
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug)", 255)

    if result.verdict is Verdict.ERROR:
        _report_result_error(console, result)
        sys.exit(result.exit_code)
    if as_json:
        click.echo(json.dumps(result.to_json(), sort_keys=True))
    else:
        _report(console, result, model)
    sys.exit(result.exit_code)


def _report(console: Console, result: Result, model: CompiledSpec) -> None:
    s = result.stats
    head = {
        Verdict.OK: ("No invariant violated: every reachable state checked.", "bold green"),
        Verdict.VIOLATION: (f"Invariant {result.violated} is violated.", "bold red"),
        Verdict.DEADLOCK: ("Deadlock reached: a state with no enabled action.", "bold red"),
        Verdict.INCOMPLETE: (
            f"INCOMPLETE ({result.reason}): no violation found so far, but this is not a pass.",
            "bold yellow",
        ),
    }[result.verdict]
    console.print(
        f"mcheck {result.spec} (variant {result.variant}; "
        f"{', '.join(f'{k}={show(v)}' for k, v in result.constants.items())}; "
        f"{result.strategy}{', symmetry' if result.symmetry else ''})"
    )
    if result.trace is not None:
        what = "counterexample" if result.verdict is Verdict.VIOLATION else "trace"
        render_trace(result.trace, console, title=f"{what}, {result.trace.length} actions:")
    console.print(Text(head[0], style=head[1]))
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_row("distinct states", f"{s.distinct:,}")
    table.add_row("states generated", f"{s.generated:,}")
    table.add_row("depth", str(s.depth))
    table.add_row("queue peak", f"{s.queue_peak:,}")
    table.add_row("seconds", f"{s.seconds:.2f}")
    table.add_row("distinct states/s", f"{s.states_per_second:,.0f}")
    table.add_row("collision probability", f"{result.collision_probability:.1e}")
    console.print(table)
    cov = Table(title="actions", title_justify="left", box=None, padding=(0, 2))
    cov.add_column("action")
    cov.add_column("generated", justify="right")
    cov.add_column("distinct", justify="right")
    for n, g, d in zip(result.action_names, s.action_generated, s.action_distinct, strict=True):
        cov.add_row(n, f"{g:,}", f"{d:,}")
    console.print(cov)
    for n in result.unfired_actions:
        if result.verdict in (Verdict.OK, Verdict.INCOMPLETE):
            console.print(Text(f"warning: action {n} never fired", style="yellow"))


def _report_evaluation_error(console: Console, exc: EvaluationError) -> None:
    err = Console(stderr=True, highlight=False)
    err.print(f"mcheck: error: {exc}", markup=False)
    if exc.state is not None:
        err.print(f"  in state: {show(exc.state)}", markup=False)
    if exc.trace is not None:
        render_trace(exc.trace, err, title=f"trace that reached it ({exc.trace.length} actions):")


def _report_result_error(console: Console, result: Result) -> None:
    err = Console(stderr=True, highlight=False)
    err.print(f"mcheck: error: {result.reason}", markup=False)
    if result.trace is not None:
        last = result.trace.steps[-1].state
        err.print(f"  in state: {show(last)}", markup=False)
        render_trace(
            result.trace, err, title=f"trace that reached it ({result.trace.length} actions):"
        )


@main.command(name="list")
def list_specs() -> None:
    """List the shipped specs with their variants, invariants and constants."""
    console = Console(highlight=False)
    table = Table(title="specs")
    for col in ("spec", "variants (default first)", "invariants", "actions", "constants"):
        table.add_column(col, overflow="fold")
    for name in available_specs():
        try:
            cls = load_spec_class(name)
        except MCheckError as exc:
            table.add_row(name, "", "", "", f"(does not load: {exc})")
            continue
        default = cls.default_variant or (cls.variants[0] if cls.variants else "")
        variants = [default] + [v for v in cls.variants if v != default]
        table.add_row(
            name,
            ", ".join(variants),
            ", ".join(cls.invariant_names()),
            ", ".join(cls.action_names()),
            ", ".join(f"{k}={show(v)}" for k, v in cls.constants.items()),
        )
    console.print(table)
