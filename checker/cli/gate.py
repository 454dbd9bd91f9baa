"""``mcheck gate``: check every spec and variant against its expected outcome.

The manifest lists checks, in ``pyproject.toml`` under ``[[tool.mcheck.gate.check]]``
or in a TOML file of its own under ``[[check]]``::

    [[tool.mcheck.gate.check]]
    name = "hdds-16932 bug"                    # defaults to spec:variant
    spec = "scm_install_snapshot_leader_change"
    variant = "bug"
    constants = { MAX_ELECTIONS = 2 }          # optional
    invariants = ["NoStuckInstallInProgress"]  # optional (default: all)
    expect = "violates NoStuckInstallInProgress"   # or "holds", or "deadlock"
    trace_length = 6                           # optional: the exact shortest trace
    distinct_states = 169                      # optional: the exact state count
    states_generated = 640                     # optional: e.g. TLC's published figures
    depth = 12                                 #   (never rewritten by --update)
    symmetry = true                            # optional (default true)
    max_states = 1000000                       # optional limits; hitting one fails
    timeout = 300

A check passes only when the outcome matches: ``holds`` needs an exhaustive run (a
limit hit is a failure, never a pass), ``violates P`` needs P violated, and the
recorded trace length and state count, when given, must match exactly.
"""

from __future__ import annotations

import contextlib
import fnmatch
import inspect
import io
import os
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from checker.authoring.loader import load_spec_class
from checker.base.errors import ConfigError, MCheckError
from checker.base.reading import TooLarge, read_bounded
from checker.base.safefile import check_writable, write_atomically
from checker.base.signals import ignore_interrupts, say_ready
from checker.check.run import run
from checker.cli.pool import CheckPool
from checker.explore.options import BY_NAME, Options, gate_keys
from checker.explore.result import Verdict
from checker.model import CompiledSpec
from checker.traces.timeline import render_timeline
from checker.traces.tracefile import safe_name, save_trace, timeline_of_run

_KEYS = {
    "name",
    "spec",
    "variant",
    "constants",
    "invariants",
    "expect",
    "trace_length",
    "distinct_states",
    "states_generated",
    "depth",
    "symmetry",
    "max_states",
    "timeout",
}


@dataclass
class GateCheck:
    """One manifest entry."""

    name: str
    spec: str
    variant: str | None
    constants: dict[str, Any]
    invariants: list[str]
    expect: str
    trace_length: int | None = None
    distinct_states: int | None = None
    states_generated: int | None = None
    depth: int | None = None
    symmetry: bool = True
    max_states: int | None = None
    timeout: float | None = None
    #: Where the gate saves this check's counterexample (set by the gate, not the file).
    trace_path: str | None = None

    @property
    def expected_property(self) -> str | None:
        """P for ``violates P``."""
        return self.expect.split(None, 1)[1] if self.expect.startswith("violates ") else None

    def describe_expectation(self) -> str:
        """``violates P (6 steps)`` / ``holds (6,682 states)``."""
        text = self.expect
        extra = []
        if self.trace_length is not None:
            extra.append(f"{self.trace_length} steps")
        if self.distinct_states is not None:
            extra.append(f"{self.distinct_states:,} states")
        if self.states_generated is not None:
            extra.append(f"{self.states_generated:,} generated")
        if self.depth is not None:
            extra.append(f"depth {self.depth}")
        return text + (f" ({', '.join(extra)})" if extra else "")


@dataclass
class GateOutcome:
    """What running one check produced, and whether it matched."""

    check: GateCheck
    verdict: str
    violated: str | None
    trace_length: int | None
    distinct: int
    seconds: float
    reason: str | None = None
    trace_text: str | None = None
    problems: list[str] = field(default_factory=list)
    generated: int = 0
    depth: int = 0
    trace_file: str | None = None  #: the ITF file the counterexample was saved to
    #: The gate was interrupted while this check ran ("interrupted") or before it
    #: started ("not started"); None: it ran to its end.
    stopped: str | None = None

    @property
    def passed(self) -> bool:
        """True when the outcome matches the expectation."""
        return not self.problems and self.stopped is None

    @property
    def failed(self) -> bool:
        """True when the check ran to its end and did not match (an interrupted or
        unstarted check is neither passed nor failed)."""
        return bool(self.problems) and self.stopped is None

    def got(self) -> str:
        """The outcome in the manifest's words."""
        if self.verdict == "violation":
            return f"violates {self.violated}"
        if self.verdict == "ok":
            return "holds"
        if self.verdict == "incomplete":
            return f"incomplete ({self.reason})"
        return self.verdict


#: The largest manifest read (a pyproject.toml of thousands of checks is far smaller).
MAX_MANIFEST_BYTES = 16 * 1024 * 1024


def load_manifest(path: Path) -> list[GateCheck]:
    """Read and validate a manifest (a pyproject.toml or a gate file)."""
    try:
        data = tomllib.loads(read_bounded(path, MAX_MANIFEST_BYTES).decode("utf-8"))
    except TooLarge:
        raise ConfigError(
            f"{path} is larger than a manifest mcheck reads ({MAX_MANIFEST_BYTES:,} bytes)"
        ) from None
    except FileNotFoundError:
        raise ConfigError(f"manifest not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not a text (UTF-8) file") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the manifest {path}: {exc.strerror or exc}") from None
    entries = _table(_table(_table(data, "tool"), "mcheck"), "gate").get("check")
    if entries is None:
        entries = data.get("check")
    if not entries:
        raise ConfigError(f"{path} lists no checks ([[tool.mcheck.gate.check]] or [[check]])")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: checks must be tables ([[tool.mcheck.gate.check]])")
    checks = []
    seen: set[str] = set()
    for n, raw in enumerate(entries, start=1):
        unknown = set(raw) - _KEYS
        if unknown:
            raise ConfigError(f"check {n} in {path}: unknown key {sorted(unknown)[0]!r}")
        if "spec" not in raw or "expect" not in raw:
            raise ConfigError(f"check {n} in {path}: 'spec' and 'expect' are required")
        _check_types(raw, f"check {n} in {path}")
        name = raw.get("name") or f"{raw['spec']}:{raw.get('variant', 'default')}"
        if name in seen:
            raise ConfigError(f"check {name!r} appears twice in {path}")
        seen.add(name)
        c = GateCheck(
            name=name,
            spec=_resolve_spec(str(raw["spec"]), path),
            variant=raw.get("variant"),
            constants=dict(raw.get("constants", {})),
            invariants=list(raw.get("invariants", [])),
            expect=str(raw["expect"]).strip(),
            trace_length=raw.get("trace_length"),
            distinct_states=raw.get("distinct_states"),
            states_generated=raw.get("states_generated"),
            depth=raw.get("depth"),
            symmetry=bool(raw.get("symmetry", True)),
            max_states=raw.get("max_states"),
            timeout=raw.get("timeout"),
        )
        _validate(c)
        checks.append(c)
    return checks


def _resolve_spec(spec: str, manifest: Path) -> str:
    """A spec given as a file path is relative to the manifest's folder, not to the
    folder the gate runs in; a spec name stays a name."""
    if not (spec.endswith(".py") or "/" in spec or os.sep in spec):
        return spec
    p = Path(spec).expanduser()
    return str(p if p.is_absolute() else manifest.resolve().parent / p)


def trace_file_name(name: str) -> str:
    """``gate-HDDS-16932-bug.itf.json``: a check's trace file, from its name (safe
    characters only, so a name cannot point outside the folder)."""
    return f"gate-{safe_name(name.strip(), fill='-', limit=100)}.itf.json"


def _table(data: Any, key: str) -> dict[str, Any]:
    """``data[key]`` when it is a table, else an empty one (a manifest of the wrong
    shape then says it lists no checks)."""
    got = data.get(key, {}) if isinstance(data, dict) else {}
    return got if isinstance(got, dict) else {}


#: The TOML type each manifest key must have: a quoted "false" is a string (which
#: Python would read as true) and a quoted "6" a string that never equals 6.
_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "spec": (str,),
    "variant": (str,),
    "constants": (dict,),
    "invariants": (list,),
    "expect": (str,),
    "trace_length": (int,),
    "distinct_states": (int,),
    "states_generated": (int,),
    "depth": (int,),
    "symmetry": (bool,),
    "max_states": (int,),
    "timeout": (int, float),
}
_TYPE_NAMES = {
    str: "a string",
    dict: "a table",
    list: "a list",
    int: "an integer",
    bool: "true or false",
    float: "a number",
}


def _check_types(raw: dict[str, Any], where: str) -> None:
    """Each key of a check has its TOML type (booleans are not integers here)."""
    for key, value in raw.items():
        want = _TYPES.get(key)
        if want is None:
            continue
        ok = isinstance(value, want) and not (isinstance(value, bool) and bool not in want)
        if not ok:
            names = " or ".join(_TYPE_NAMES[t] for t in want)
            raise ConfigError(f"{where}: {key} must be {names}, not {value!r}")
    for key, name in gate_keys().items():
        option = BY_NAME[name]
        if key in raw and not option.valid(raw[key]):
            raise ConfigError(f"{where}: {key} must be {option.what}, not {raw[key]!r}")
    if "invariants" in raw and not all(isinstance(p, str) for p in raw["invariants"]):
        raise ConfigError(f"{where}: invariants must be a list of property names")
    for key, value in raw.get("constants", {}).items():
        if not isinstance(value, str | int | bool):
            raise ConfigError(f"{where}: constant {key} must be a string, integer or boolean")


def _validate(c: GateCheck) -> None:
    """Unknown spec, variant, constant or property: a ConfigError naming the check."""
    if c.expect not in ("holds", "deadlock") and not c.expect.startswith("violates "):
        raise ConfigError(
            f"check {c.name!r}: expect must be 'holds', 'deadlock' or 'violates PROPERTY'"
        )
    try:
        cls = load_spec_class(c.spec)
        spec = cls(variant=c.variant, **c.constants)
        CompiledSpec(spec, properties=c.invariants)
    except MCheckError as exc:
        raise ConfigError(f"check {c.name!r}: {exc}") from None
    prop = c.expected_property
    known = cls.invariant_names() + cls.action_property_names() + cls.temporal_names()
    if prop is not None and prop not in known:
        raise ConfigError(f"check {c.name!r}: {c.spec} has no property {prop!r}")
    if prop is not None and c.invariants and prop not in c.invariants:
        raise ConfigError(f"check {c.name!r}: expects {prop!r} but does not check it")


def run_check(c: GateCheck) -> GateOutcome:
    """Run one check (in a worker process) and compare with its expectation."""
    cls = load_spec_class(c.spec)
    spec = cls(variant=c.variant, **c.constants)
    model = CompiledSpec(spec, properties=c.invariants, symmetry=c.symmetry)
    # The run options a check sets are those of checker.explore.options.RUN_OPTIONS with a
    # gate key (symmetry, max_states, timeout); a deadlock expectation turns it on.
    opts = Options(
        deadlock=True if c.expect == "deadlock" else None,
        **{name: getattr(c, key) for key, name in gate_keys().items()},
    )
    t0 = time.perf_counter()
    result = run(model, opts)
    seconds = time.perf_counter() - t0
    if result.interrupted:
        raise KeyboardInterrupt
    trace_text = None
    trace_file = None
    if result.trace is not None:
        buf = io.StringIO()
        render_timeline(
            timeline_of_run(result, model), Console(file=buf, width=120, color_system=None)
        )
        trace_text = buf.getvalue()
        if c.trace_path is not None:
            try:
                trace_file = str(save_trace(result, model, Path(c.trace_path), source=c.spec))
            except OSError as exc:
                trace_text += f"\n(could not save the trace to {c.trace_path}: {exc})"
    out = GateOutcome(
        check=c,
        verdict=result.verdict.value,
        violated=result.violated,
        trace_length=result.trace.length if result.trace is not None else None,
        distinct=result.stats.distinct,
        seconds=seconds,
        reason=result.reason,
        trace_text=trace_text,
        generated=result.stats.generated,
        depth=result.stats.depth,
        trace_file=trace_file,
    )
    out.problems = compare(c, out)
    return out


def compare(c: GateCheck, out: GateOutcome) -> list[str]:
    """Why ``out`` does not match ``c`` (empty when it does)."""
    problems = []
    if out.verdict == Verdict.INCOMPLETE.value:
        return [f"incomplete ({out.reason}): a run that hit a limit is never a pass"]
    if out.verdict == Verdict.ERROR.value:
        return [f"error: {out.reason}"]
    if c.expect == "holds" and out.verdict != "ok":
        problems.append(f"expected to hold, but {out.got()} (unexpected counterexample)")
    elif c.expect == "deadlock" and out.verdict != "deadlock":
        problems.append(f"expected a deadlock, got {out.got()}")
    elif c.expected_property is not None:
        if out.verdict != "violation":
            problems.append(f"expected {c.expect}, but it {out.got()} (unexpected pass)")
        elif out.violated != c.expected_property:
            problems.append(f"expected {c.expect}, got {out.got()}")
    if not problems:
        if c.trace_length is not None and out.trace_length != c.trace_length:
            problems.append(
                f"trace length {out.trace_length}, recorded {c.trace_length} "
                "(the counterexample changed)"
            )
        if c.distinct_states is not None and out.distinct != c.distinct_states:
            problems.append(f"{out.distinct:,} distinct states, recorded {c.distinct_states:,}")
        if c.states_generated is not None and out.generated != c.states_generated:
            problems.append(f"{out.generated:,} states generated, recorded {c.states_generated:,}")
        if c.depth is not None and out.depth != c.depth:
            problems.append(f"depth {out.depth}, recorded {c.depth}")
    return problems


def select(checks: list[GateCheck], patterns: list[str]) -> list[GateCheck]:
    """Checks whose name or spec matches one of the glob patterns (all if none)."""
    if not patterns:
        return checks
    return [
        c
        for c in checks
        if any(fnmatch.fnmatch(c.name, p) or fnmatch.fnmatch(c.spec, p) for p in patterns)
    ]


def _not_run(c: GateCheck, why: str, stopped: str | None = None) -> GateOutcome:
    out = GateOutcome(c, "incomplete", None, None, 0, 0.0, reason=why, stopped=stopped)
    out.problems = compare(c, out)
    return out


def run_all(checks: list[GateCheck], jobs: int | None = None) -> tuple[list[GateOutcome], bool]:
    """Run the checks, in parallel processes when there is more than one core.

    Returns the outcomes in manifest order and whether the run was interrupted
    (Ctrl-C, SIGTERM): the checks finished by then keep their outcomes, the one(s)
    running are "interrupted", the others "not started".
    """
    workers = max(1, min(jobs or os.cpu_count() or 1, len(checks)))
    done: dict[int, GateOutcome] = {}
    running: list[int] = []
    interrupted = False
    if workers == 1:
        try:
            for i, c in enumerate(checks):
                running = [i]
                done[i] = run_check(c)
            running = []
        except KeyboardInterrupt:
            interrupted = True
    else:
        pool = CheckPool(workers, run_check)
        # The biggest checks first (by the states the manifest records): the gate ends
        # when its longest check does, so that one must not start last (PaxosCommit,
        # most of a CI gate, started after 60 others).
        order = sorted(range(len(checks)), key=lambda i: -_expected_work(checks[i]))
        try:
            for kind, i, value in pool.map([(i, checks[i]) for i in order]):
                if kind == "ok":
                    done[i] = value
                elif kind == "error":  # a check whose process died or raised
                    done[i] = _not_run(checks[i], value)
                if i in done:
                    mark = "pass" if done[i].passed else "FAIL"
                    say_ready(
                        f"gate check {len(done)} of {len(checks)} done: {checks[i].name}: {mark}"
                    )
        except KeyboardInterrupt:
            interrupted = True
            running = pool.running()
            pool.kill()  # (idempotent: the pool kills its workers on the way out too)
    if interrupted:
        # The report of what finished must be written whatever comes next.
        ignore_interrupts()
    outcomes = []
    for i, c in enumerate(checks):
        if i in done:
            outcomes.append(done[i])
        elif i in running:
            outcomes.append(_not_run(c, "interrupted while it ran", "interrupted"))
        else:
            outcomes.append(
                _not_run(c, "the gate was interrupted before it started", "not started")
            )
    return outcomes, interrupted


def _expected_work(c: GateCheck) -> int:
    """How big a check is, as far as its manifest entry tells (unknown: small)."""
    return c.states_generated or c.distinct_states or c.max_states or 0


def run_gate(
    path: Path,
    only: list[str],
    junit: str | None,
    update: bool,
    jobs: int | None,
    traces: Path | None = None,
) -> int:
    """``mcheck gate``: run, print the summary, write the reports; return the exit code.

    Every counterexample found is saved as ITF under ``traces`` (default: ``traces/``
    beside the manifest), so CI can keep the evidence."""
    plain = Console(highlight=False)
    # CI logs are not terminals: give the summary table room instead of 80 columns.
    console = plain if plain.is_terminal else Console(highlight=False, width=140)
    checks = select(load_manifest(path), only)
    if not checks:
        raise ConfigError(f"no check matches {', '.join(only)}")
    if junit:
        check_writable(junit, "the JUnit report")
    if update:
        # Checked before the checks run, not found out after every one has.
        check_writable(path, "the manifest")
    folder = traces if traces is not None else path.resolve().parent / "traces"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the traces folder {folder}: {exc}") from None
    for c in checks:
        c.trace_path = str(folder / trace_file_name(c.name))
    outcomes, interrupted = run_all(checks, jobs)
    table = Table(title=Text(f"mcheck gate: {path}"))
    for col in ("check", "expected", "got", "trace", "distinct states", "seconds", ""):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        table.add_row(
            Text(o.check.name),
            Text(o.check.describe_expectation()),
            Text(o.got()),
            "" if o.trace_length is None else str(o.trace_length),
            f"{o.distinct:,}",
            f"{o.seconds:.1f}",
            _mark(o),
        )
    console.print(table)
    saved = [o.trace_file for o in outcomes if o.trace_file]
    if saved:
        console.print(
            Text(f"{len(saved)} counterexample(s) saved under {_shown(folder)}"), soft_wrap=True
        )
    failed = [o for o in outcomes if o.failed]
    for o in failed:
        console.print(
            Text(f"FAIL {_printable(o.check.name)}: " + "; ".join(o.problems), style="bold red"),
            soft_wrap=True,
        )
        if o.trace_text and (o.check.expect == "holds" or o.trace_length != o.check.trace_length):
            console.print(o.trace_text, markup=False, highlight=False)
    if junit:
        try:
            _write_atomically(Path(junit), junit_xml(outcomes, str(path)))
        except OSError as exc:
            why = exc.strerror or exc
            raise ConfigError(f"cannot write the JUnit report {junit}: {why}") from None
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github_annotations(outcomes):
            print(line)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a") as fh:
                fh.write("## mcheck gate\n\n" + markdown_summary(outcomes))
    if update and not interrupted:
        changes = update_manifest(path, outcomes)
        for line in changes:
            console.print(Text(f"updated {line}"))
        if not changes:
            console.print("nothing to update")
        failed = [
            o
            for o in failed
            if any(p.startswith(("expected", "incomplete", "error")) for p in o.problems)
        ]
    passed = sum(o.passed for o in outcomes)
    stopped = len(outcomes) - passed - len(failed)
    console.print(
        f"{passed} passed, {len(failed)} failed"
        + (
            f", {stopped} interrupted or not started (the gate was interrupted: incomplete)"
            if interrupted
            else ""
        ),
        style="bold green" if not failed and not interrupted else "bold red",
    )
    if interrupted:
        return 3
    return 1 if failed else 0


def _mark(o: GateOutcome) -> Text:
    """The last column of a check's row."""
    if o.stopped is not None:
        return Text(o.stopped, style="yellow")
    return Text("pass", style="green") if o.passed else Text("FAIL", style="bold red")


def _write_atomically(target: Path, text: str) -> None:
    """Write beside ``target``, then rename over it: an interrupted write leaves the
    previous report (or none), never half of one."""
    write_atomically(target, text)


def _shown(p: Path | str) -> str:
    """A path as a user would type it: relative to the current folder when inside it."""
    try:
        return os.path.relpath(p)
    except ValueError:
        return str(p)


def _printable(text: str) -> str:
    """A name for a CI log line: control characters (a newline that would start a
    workflow command) escaped."""
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


def invariant_location(spec: str, prop: str | None) -> tuple[str, int]:
    """File and line of a spec's invariant or temporal property (for CI annotations):
    the line of its ``def``, below any decorator."""
    cls = load_spec_class(spec)
    file = inspect.getsourcefile(cls) or spec
    line = 1
    predicates = {d.name: d.predicate for d in cls._invariants}
    predicates.update({d.name: d.predicate for d in cls._temporals})
    predicate = predicates.get(prop) if prop else None
    if predicate is not None:
        with contextlib.suppress(OSError, TypeError):
            source, first = inspect.getsourcelines(predicate)
            defs = [i for i, text in enumerate(source) if text.lstrip().startswith("def ")]
            line = first + (defs[0] if defs else 0)
    # The file itself, not a link to it (mcheck_shipped/specs is the specs/ folder):
    # an annotation must name the path the repository has.
    return _shown(os.path.realpath(file)), line


def junit_xml(outcomes: list[GateOutcome], manifest: str | None = None) -> str:
    """A JUnit XML report in the common junit-10 layout CI reporters read: a
    ``<testsuites>`` root, one suite, one testcase per check; properties at suite
    level (a testcase may not carry them); a check whose spec raised is an
    ``<error>``, any other mismatch (incomplete included) a ``<failure>``; each case's
    expectation, outcome and figures in its ``<system-out>``, with the trace."""
    import socket
    import xml.etree.ElementTree as ET
    from datetime import UTC, datetime

    from checker.base.version import __version__

    errors = sum(1 for o in outcomes if o.failed and o.verdict == "error")
    failures = sum(1 for o in outcomes if o.failed) - errors
    skipped = sum(1 for o in outcomes if o.stopped is not None)
    total = f"{sum(o.seconds for o in outcomes):.3f}"
    counts = {"tests": str(len(outcomes)), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", {"name": "mcheck gate", "time": total, **counts})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": "mcheck.gate",
            **counts,
            "skipped": str(skipped),
            "time": total,
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
            "hostname": socket.gethostname() or "localhost",
        },
    )
    props = ET.SubElement(suite, "properties")
    for k, v in (("mcheck", __version__), ("manifest", manifest or "")):
        ET.SubElement(props, "property", name=k, value=v)
    for o in outcomes:
        case = ET.SubElement(
            suite, "testcase", classname=o.check.spec, name=o.check.name, time=f"{o.seconds:.3f}"
        )
        if o.stopped is not None:
            ET.SubElement(case, "skipped", message=f"{o.stopped}: {o.reason}")
        elif not o.passed:
            kind = "error" if o.verdict == "error" else "failure"
            el = ET.SubElement(case, kind, message="; ".join(o.problems))
            el.set(
                "type",
                {"error": "SpecError", "incomplete": "Incomplete"}.get(o.verdict, "Mismatch"),
            )
            el.text = o.trace_text or o.got()
        lines = [
            f"expected: {o.check.describe_expectation()}",
            f"got: {o.got()}",
            f"distinct states: {o.distinct}",
            f"trace length: {o.trace_length if o.trace_length is not None else '-'}",
        ]
        if o.trace_file:
            lines.append(f"trace file: {_shown(o.trace_file)}")
        ET.SubElement(case, "system-out").text = "\n".join(lines)
    return _XML_INVALID.sub(
        lambda m: f"\\x{ord(m.group()):02x}",
        ET.tostring(root, encoding="unicode", xml_declaration=True),
    )


#: Characters XML 1.0 cannot hold at all, even escaped (ElementTree writes them raw,
#: which makes the report unreadable to every JUnit consumer): shown as ``\xNN``.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(outcomes: list[GateOutcome]) -> list[str]:
    """``::error file=...,line=...`` lines for the failing checks."""
    lines = []
    for o in outcomes:
        if not o.failed:
            continue
        prop = o.violated or o.check.expected_property
        file, line = invariant_location(o.check.spec, prop)
        title = _escape_prop(f"mcheck gate: {o.check.name}")
        lines.append(
            f"::error file={_escape_prop(file)},line={line},title={title}::"
            + _escape_data("; ".join(o.problems))
        )
    return lines


def markdown_summary(outcomes: list[GateOutcome]) -> str:
    """The summary table as GitHub-flavoured Markdown (for $GITHUB_STEP_SUMMARY)."""
    rows = [
        "| check | expected | got | trace | distinct states | seconds | | trace file |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for o in outcomes:
        mark = o.stopped or ("pass" if o.passed else "**FAIL**")
        file = f"`{_cell(_shown(o.trace_file))}`" if o.trace_file else ""
        rows.append(
            f"| {_cell(o.check.name)} | {_cell(o.check.describe_expectation())} | "
            f"{_cell(o.got())} | "
            f"{o.trace_length if o.trace_length is not None else ''} | {o.distinct:,} | "
            f"{o.seconds:.1f} | {mark} | {file} |"
        )
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    """Text for one Markdown table cell: on one line (control characters escaped),
    its bars and backticks escaped, no HTML."""
    out = _printable(text).replace("\\", "\\\\")
    for ch in "|`<>*_[]":
        out = out.replace(ch, "\\" + ch)
    return out


def update_manifest(path: Path, outcomes: list[GateOutcome]) -> list[str]:
    """Rewrite recorded trace lengths and state counts in place; return what changed.

    Only checks whose outcome kind still matches are updated (a flipped verdict is a
    real failure, not a recording to refresh).  The file is edited with tomlkit, which
    keeps every comment and the layout; a key a check did not record yet goes right
    after its last key, never below a comment that introduces the next check.
    """
    import tomlkit

    doc = tomlkit.parse(path.read_text())
    gate_table = doc.get("tool", {}).get("mcheck", {}).get("gate", {})
    entries = gate_table.get("check") if "check" in gate_table else doc.get("check")
    by_name = {o.check.name: o for o in outcomes}
    changes: list[str] = []
    for entry in entries or []:
        name = entry.get("name") or f"{entry.get('spec')}:{entry.get('variant', 'default')}"
        o = by_name.get(str(name))
        if o is None:
            continue
        kind_ok = not any(p.startswith(("expected", "incomplete", "error")) for p in o.problems)
        if not kind_ok:
            continue
        for key, value in (("trace_length", o.trace_length), ("distinct_states", o.distinct)):
            if value is None:
                continue
            old = getattr(o.check, key)
            if old == value:
                continue
            if key in entry:
                entry[key] = value  # tomlkit keeps the line's comment
            else:
                _add_after_last_key(entry, key, value)
            changes.append(f"{name}: {key} {old} -> {value}")
    if changes:
        write_atomically(path, tomlkit.dumps(doc))
    return changes


def _add_after_last_key(table: Any, key: str, value: Any) -> None:
    """Add ``key`` right after the table's last key: comments and blank lines after it
    belong to what follows (tomlkit's plain ``add`` would append below them)."""
    container = getattr(table, "value", None)
    body = getattr(container, "body", [])
    at = [i for i, (k, _) in enumerate(body) if k is not None]
    # tomlkit has no public "insert at"; ``_insert_at`` is in 0.11 to 0.15.3 at least
    # (``_insert_after``, used before, is gone from 0.15.3).
    insert_at = getattr(container, "_insert_at", None)
    if at and insert_at is not None and at[-1] + 1 < len(body):
        insert_at(at[-1] + 1, key, value)
    else:  # nothing after the last key (or another tomlkit layout): at the end
        table[key] = value
