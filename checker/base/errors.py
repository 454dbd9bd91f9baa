"""Errors mcheck reports to the user as one line (never a bare traceback)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ConfigError",
    "EvaluationError",
    "MCheckError",
    "NotBoolean",
    "SpecError",
    "SpecLoadError",
    "did_you_mean",
    "require_boolean",
]


class MCheckError(Exception):
    """Base of every error the CLI turns into a one-line message and exit code 2."""


class SpecError(MCheckError):
    """A spec is malformed: missing init, duplicate names, bad declarations."""


class SpecLoadError(MCheckError):
    """A spec could not be found or imported."""


class ConfigError(MCheckError):
    """Bad options: unknown constant, variant or invariant, a value of the wrong type."""


class EvaluationError(MCheckError):
    """Spec code (an action, invariant, constraint or init) raised while being checked.

    ``ordinal`` identifies the explored state the failing code was evaluated on, so the
    explorer can rebuild the trace that reached it.
    """

    def __init__(
        self,
        where: str,
        cause: BaseException,
        state: Any = None,
        ordinal: int | None = None,
    ) -> None:
        if isinstance(cause, MemoryError):
            # The machine ran out, not the spec: every ``except Exception`` that wraps
            # spec code in this error lets it through, so the run ends incomplete
            # (exit 3, one line) rather than with a spec error and its traceback.
            raise cause
        self.where = where
        self.cause = cause
        self.state = state
        self.ordinal = ordinal
        self.trace: Any = None
        if isinstance(cause, NotBoolean):  # not raised by the spec: its result refused
            super().__init__(f"{where} {cause}")
        else:
            super().__init__(f"{where} raised {type(cause).__name__}: {cause}")


class NotBoolean(TypeError):
    """A predicate (invariant, constraint, action or temporal property) returned a
    value that is not a boolean: TLC refuses it, and Python's truthiness would read
    ``0`` or ``[]`` as a violation silently."""


def require_boolean(value: Any) -> bool:
    """``value`` if it is ``True`` or ``False``; otherwise :class:`NotBoolean`, naming
    the value (the caller adds which predicate, the state and the trace)."""
    if value is True or value is False:
        return value
    raise NotBoolean(
        f"returned {value!r} ({type(value).__name__}), not a boolean: a TLA+ predicate "
        "is TRUE or FALSE (write a comparison, or bool(...) if truthiness is meant)"
    )


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean "X"?)`` for the known name closest to a mistyped one, or ""."""
    near = difflib.get_close_matches(name, list(known), n=1)
    return f' (did you mean "{near[0]}"?)' if near else ""
