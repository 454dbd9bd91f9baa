"""What each command's exit code means: the one source for ``--help`` and the docs.

Every command's ``--help`` ends with its table (:func:`epilog`), and a test holds
README.md and docs/ci.md to the same codes, so the three cannot drift apart.
"""

from __future__ import annotations

from checker.explore.result import ExitCode

_CHECK = (
    (ExitCode.OK, "every property holds over the whole reachable state space"),
    (ExitCode.BAD_INPUT, "bad usage or input: unknown name, a spec that does not import or raises"),
    (ExitCode.INCOMPLETE, "incomplete: a limit or Ctrl-C came first (never a pass)"),
    (ExitCode.DEADLOCK, "deadlock: a reachable state with no enabled action"),
    (ExitCode.SAFETY, "an invariant is violated"),
    (ExitCode.LIVENESS, "a temporal property (a lasso) or an action property is violated"),
)

_DRAW = (
    (ExitCode.OK, "drawn"),
    (ExitCode.BAD_INPUT, "bad usage, or a file that is not a trace mcheck reads"),
)

#: Per command, its codes and what each means, in the order ``--help`` lists them.
EXIT_CODES: dict[str, tuple[tuple[int, str], ...]] = {
    "run": _CHECK,
    "resume": _CHECK,
    "simulate": (
        (ExitCode.BAD_INPUT, "bad usage or input, as for run"),
        (ExitCode.INCOMPLETE, "nothing found within the budget: a hunt proves nothing"),
        (ExitCode.DEADLOCK, "deadlock found"),
        (ExitCode.SAFETY, "an invariant violation found"),
        (ExitCode.LIVENESS, "a temporal property (a lasso) or action property violation found"),
    ),
    "validate": (
        (ExitCode.OK, "every log is a behaviour of the spec"),
        (1, "a log has an event no behaviour matches (the first is named)"),
        (ExitCode.BAD_INPUT, "bad usage, a malformed log or mapping"),
        (ExitCode.INCOMPLETE, "a limit or Ctrl-C came first (of several logs: the worst)"),
    ),
    "replay": (
        (ExitCode.OK, "the trace is a behaviour of the spec, ending in its violation"),
        (1, "it diverges (the first diverging step is named)"),
        (ExitCode.BAD_INPUT, "bad usage, or a file that is not a trace mcheck reads"),
        (ExitCode.INCOMPLETE, "a limit or Ctrl-C came first"),
    ),
    "gate": (
        (ExitCode.OK, "every check's outcome matches its expectation"),
        (1, "a mismatch"),
        (ExitCode.BAD_INPUT, "a bad manifest (unknown spec, variant, constant or property)"),
        (ExitCode.INCOMPLETE, "interrupted: checks passed, failed and not run are counted"),
    ),
    "graph": (
        (ExitCode.OK, "written"),
        (ExitCode.BAD_INPUT, "bad usage or input, as for run"),
        (ExitCode.INCOMPLETE, "--max-nodes or Ctrl-C came first: nothing written"),
    ),
    "show": _DRAW,
    "view": _DRAW,
}


def epilog(command: str) -> str:
    """The ``Exit codes:`` block of ``command``'s ``--help`` (click keeps a paragraph
    that starts with ``\\b`` as written)."""
    rows = "\n".join(f"  {code:>2}  {meaning}" for code, meaning in EXIT_CODES[command])
    return f"\b\nExit codes:\n{rows}"
