"""The ``mcheck`` command line: ``run`` a spec, ``list`` the shipped specs.

Exit codes follow TLC: 0 all invariants hold over the whole reachable space,
12 invariant violated, 11 deadlock, 3 incomplete (a limit was hit first), 2 bad usage
or bad input (including spec code that raises).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from checker import __version__
from checker.errors import ConfigError, EvaluationError, MCheckError
from checker.explore import Options, check
from checker.gate import (
    github_annotations,
    junit_xml,
    load_manifest,
    markdown_summary,
    run_all,
    select,
    update_manifest,
)
from checker.graph import state_graph, write_graph
from checker.itf import read_itf, record_types
from checker.liveness import liveness_result, split_properties
from checker.loader import available_specs, load_spec_class
from checker.model import CompiledSpec
from checker.pretty import show
from checker.render import render_trace
from checker.replay import replay as replay_trace
from checker.result import ExitCode, Result, Stats, Verdict
from checker.spec import Spec
from checker.timeline import render_timeline
from checker.tracefile import save_trace, timeline_of_itf, timeline_of_run
from checker.viewer import run_viewer


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


#: ``--const NAME=VALUE`` (repeatable), shared by every command that builds a spec.
CONST_OPTION = click.option(
    "--const", "consts", multiple=True, metavar="NAME=VALUE", help="Override a constant."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcheck")
def main() -> None:
    """mcheck: explicit-state model checking of Raft-style protocol specs."""


@main.command()
@click.argument("spec")
@click.option("--variant", help="Which variant of the spec to check (default: the spec's).")
@CONST_OPTION
@click.option("--strategy", type=click.Choice(["bfs", "dfs"]), default="bfs", show_default=True)
@click.option("--no-symmetry", is_flag=True, help="Do not reduce by the spec's symmetric sets.")
@click.option(
    "--deadlock/--no-deadlock",
    "deadlock",
    default=None,
    help="Report states with no enabled action (default: on, unless the spec says otherwise).",
)
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
    "--property",
    "properties",
    multiple=True,
    help="Check only this invariant or temporal property (repeatable; default: all).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes (breadth-first; same results as one).",
)
@click.option(
    "--trace-out",
    type=click.Path(dir_okay=False),
    help="Where to save a counterexample (default traces/<spec>-<variant>-<property>.itf.json).",
)
@click.option("--no-color", is_flag=True, help="Plain text output.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
@click.option("--debug", is_flag=True, hidden=True, help="Show tracebacks of internal errors.")
def run(
    spec: str,
    variant: str | None,
    consts: tuple[str, ...],
    strategy: str,
    no_symmetry: bool,
    deadlock: bool | None,
    max_states: int | None,
    max_depth: int | None,
    timeout: float | None,
    invariants: tuple[str, ...],
    properties: tuple[str, ...],
    workers: int,
    trace_out: str | None,
    no_color: bool,
    as_json: bool,
    debug: bool,
) -> None:
    """Check every reachable state of SPEC (a name under specs/, or a .py file)."""
    console = Console(highlight=False, no_color=no_color or None)
    try:
        instance = build_spec(spec, variant, consts)
        inv_names, temp_names = split_properties(type(instance), invariants + properties)
        model = CompiledSpec(instance, invariants=inv_names, symmetry=not no_symmetry)
        progress = _Progress(console, enabled=console.is_terminal and not as_json)
        opts = Options(
            strategy=strategy,
            symmetry=not no_symmetry,
            deadlock=type(instance).check_deadlock if deadlock is None else deadlock,
            max_states=max_states,
            max_depth=max_depth,
            timeout=timeout,
            progress=progress,
            workers=workers,
        )
        try:
            if inv_names is not None and not inv_names:
                result = None  # only temporal properties were asked for
            else:
                result = check(
                    model, opts, variant=instance.variant, constants=instance.constant_values
                )
        finally:
            progress.stop()
        if temp_names and (result is None or result.verdict is Verdict.OK):
            result = liveness_result(model, temp_names, max_states, result)
            if not as_json:
                for w in result.warnings:
                    console.print(Text(f"note: {w}", style="yellow"), soft_wrap=True)
        assert result is not None
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
    saved: Path | None = None
    if result.trace is not None:
        try:
            saved = save_trace(result, model, Path(trace_out) if trace_out else None, source=spec)
        except OSError as exc:
            click.echo(f"mcheck: warning: could not save the trace: {exc}", err=True)
    if as_json:
        data = result.to_json()
        data["trace_file"] = str(saved) if saved else None
        click.echo(json.dumps(data, sort_keys=True))
    else:
        _report(console, result, model, saved)
    sys.exit(result.exit_code)


def _report(console: Console, result: Result, model: CompiledSpec, saved: Path | None) -> None:
    s = result.stats
    head = {
        Verdict.OK: ("No property violated: every reachable state checked.", "bold green"),
        Verdict.VIOLATION: (
            f"{'Temporal property' if result.liveness else 'Invariant'} {result.violated} "
            "is violated.",
            "bold red",
        ),
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
        console.print(Text(f"{what}, {result.trace.length} actions:", style="bold"))
        render_timeline(timeline_of_run(result, model), console)
    console.print(Text(head[0], style=head[1]))
    if saved is not None:
        console.print(f"trace saved to {saved} (mcheck show {saved})")
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
    for name in available_specs():
        try:
            cls = load_spec_class(name)
        except MCheckError as exc:
            console.print(Text(f"{name}: does not load: {exc}", style="red"), soft_wrap=True)
            continue
        default = cls.default_variant or (cls.variants[0] if cls.variants else "")
        variants = [default] + [v for v in cls.variants if v != default]
        console.print(Text(name, style="bold cyan"))
        rows = [
            ("variants", ", ".join(variants) + " (first is the default)"),
            ("invariants", ", ".join(cls.invariant_names())),
            ("actions", ", ".join(cls.action_names())),
            ("constants", ", ".join(f"{k}={show(v)}" for k, v in cls.constants.items())),
        ]
        for label, text in rows:
            console.print(Text(f"  {label}: {text}"), soft_wrap=True)


@main.command(name="show")
@click.argument("trace_file", metavar="TRACE")
@click.option("--full", is_flag=True, help="Print whole states, not only changes.")
@click.option("--vars", "var_list", help="Only these variables (comma-separated).")
@click.option("--no-color", is_flag=True, help="Plain text.")
@click.option("--width", type=click.IntRange(min=40), help="Columns (default: the terminal's).")
def show_trace(
    trace_file: str, full: bool, var_list: str | None, no_color: bool, width: int | None
) -> None:
    """Draw a saved trace as a timeline: one lane per server, what each step changed."""
    console = Console(highlight=False, no_color=no_color or None, width=width)
    try:
        trace = read_itf(Path(trace_file))
        only = _var_filter(var_list, trace.var_names)
    except MCheckError as exc:
        _fail(str(exc))
    render_timeline(timeline_of_itf(trace), console, full=full, only_vars=only)


def _var_filter(var_list: str | None, names: tuple[str, ...]) -> list[str] | None:
    if not var_list:
        return None
    wanted = [v.strip() for v in var_list.split(",") if v.strip()]
    unknown = [v for v in wanted if v not in names]
    if unknown:
        raise ConfigError(f"unknown variable {unknown[0]!r} (known: {', '.join(names)})")
    return wanted


@main.command(name="replay")
@click.argument("spec")
@click.argument("trace_file", metavar="TRACE")
@click.option("--variant", help="Variant to replay against (default: the trace's).")
@CONST_OPTION
def replay_cmd(spec: str, trace_file: str, variant: str | None, consts: tuple[str, ...]) -> None:
    """Re-execute TRACE against SPEC: exit 0 if it is a real behaviour ending in its
    violation, 1 with the first diverging step otherwise."""
    try:
        cls = load_spec_class(spec)
        # Only the named spec's own record types are rebuilt (a trace file is data
        # from elsewhere: its type names are never imported).
        trace = read_itf(Path(trace_file), types=record_types(cls))
        traced_spec = trace.meta.get("spec")
        if traced_spec and traced_spec != cls.spec_name():
            raise ConfigError(
                f"{trace_file} is a trace of spec {traced_spec!r}, not {cls.spec_name()!r}"
            )
        chosen = variant or trace.meta.get("variant")
        if chosen not in cls.variants:
            chosen = variant  # unknown recorded variant: let the spec decide/complain
        overrides = _trace_constants(trace.meta.get("constants") or {}, cls.constants)
        overrides.update(_parse_consts(consts))
        instance = cls(variant=chosen, **overrides)
        model = CompiledSpec(instance, symmetry=False)
        outcome = replay_trace(model, trace)
    except EvaluationError as exc:
        _fail(str(exc))
    except MCheckError as exc:
        _fail(str(exc))
    console = Console(highlight=False)
    style = "bold green" if outcome.ok else "bold red"
    head = Text(("OK: " if outcome.ok else "DIVERGES: ") + outcome.message, style=style)
    console.print(head, soft_wrap=True)
    for line in outcome.details:
        console.print(Text("  " + line), soft_wrap=True)
    if outcome.by_actions:
        console.print(Text(outcome.by_actions, style="bold"), soft_wrap=True)
    sys.exit(0 if outcome.ok else 1)


def _trace_constants(recorded: dict[str, Any], defaults: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in recorded.items():
        if name not in defaults:
            continue
        if isinstance(value, list):
            out[name] = ",".join(str(v) for v in value)
        elif isinstance(value, bool | int | str):
            out[name] = value if not isinstance(defaults[name], str) else str(value)
    return out


@main.command(name="graph")
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
def graph_cmd(
    spec: str, variant: str | None, consts: tuple[str, ...], out: str, max_nodes: int
) -> None:
    """Write the reachable state graph of a small model as GraphML or DOT."""
    try:
        instance = build_spec(spec, variant, consts)
        model = CompiledSpec(instance, symmetry=False)
        g = state_graph(model, max_nodes=max_nodes)
        write_graph(g, Path(out))
    except MCheckError as exc:
        _fail(str(exc))
    click.echo(f"wrote {g.number_of_nodes()} states and {g.number_of_edges()} edges to {out}")


@main.command(name="view")
@click.argument("trace_file", metavar="TRACE")
def view_cmd(trace_file: str) -> None:
    """Step through a saved trace interactively (arrows, g jump, f full, v vars, q quit)."""
    try:
        trace = read_itf(Path(trace_file))
    except MCheckError as exc:
        _fail(str(exc))
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        _fail("mcheck view needs an interactive terminal; use mcheck show for plain output")
    run_viewer(timeline_of_itf(trace), Console(highlight=False))


@main.command(name="gate")
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
def gate_cmd(
    manifest: str, only: tuple[str, ...], junit: str | None, update: bool, jobs: int | None
) -> None:
    """Run every check of MANIFEST (default pyproject.toml) against its expected
    outcome: exit 0 when all match, 1 on a mismatch, 2 on a bad manifest."""
    plain = Console(highlight=False)
    # CI logs are not terminals: give the summary table room instead of 80 columns.
    console = plain if plain.is_terminal else Console(highlight=False, width=140)
    path = Path(manifest)
    try:
        checks = select(load_manifest(path), list(only))
    except MCheckError as exc:
        _fail(str(exc))
    if not checks:
        _fail(f"no check matches {', '.join(only)}")
    outcomes = run_all(checks, jobs)
    table = Table(title=f"mcheck gate: {path}")
    for col in ("check", "expected", "got", "trace", "distinct states", "seconds", ""):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        table.add_row(
            o.check.name,
            o.check.describe_expectation(),
            o.got(),
            "" if o.trace_length is None else str(o.trace_length),
            f"{o.distinct:,}",
            f"{o.seconds:.1f}",
            Text("pass", style="green") if o.passed else Text("FAIL", style="bold red"),
        )
    console.print(table)
    failed = [o for o in outcomes if not o.passed]
    for o in failed:
        console.print(
            Text(f"FAIL {o.check.name}: " + "; ".join(o.problems), style="bold red"), soft_wrap=True
        )
        if o.trace_text and (o.check.expect == "holds" or o.trace_length != o.check.trace_length):
            console.print(o.trace_text, markup=False, highlight=False)
    if junit:
        Path(junit).write_text(junit_xml(outcomes))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github_annotations(outcomes):
            click.echo(line)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a") as fh:
                fh.write("## mcheck gate\n\n" + markdown_summary(outcomes))
    if update:
        changes = update_manifest(path, outcomes)
        for line in changes:
            console.print(f"updated {line}")
        if not changes:
            console.print("nothing to update")
        failed = [
            o
            for o in failed
            if any(p.startswith(("expected", "incomplete", "error")) for p in o.problems)
        ]
    console.print(
        f"{len(outcomes) - len(failed)} passed, {len(failed)} failed",
        style="bold green" if not failed else "bold red",
    )
    sys.exit(1 if failed else 0)
