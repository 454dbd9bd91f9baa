"""Errors mcheck reports to the user as one line (never a bare traceback)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError",
    "EvaluationError",
    "MCheckError",
    "SpecError",
    "SpecLoadError",
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
        self.where = where
        self.cause = cause
        self.state = state
        self.ordinal = ordinal
        self.trace: Any = None
        super().__init__(f"{where} raised {type(cause).__name__}: {cause}")
