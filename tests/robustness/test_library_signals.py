"""A check run from Python (a test session, a notebook) gives the caller's Ctrl-C and
SIGTERM handlers back, even after it was itself interrupted."""

from __future__ import annotations

import signal
from types import FrameType

from checker import CompiledSpec, Options, Spec, action
from checker import run as check
from checker.explore.result import Verdict


class InterruptedCounter(Spec):
    """Counts up; reaching 50 stands for the user pressing Ctrl-C mid-run."""

    def init(self) -> list[int]:
        return [0]

    @action
    def Inc(self, s: int) -> int | None:
        if s == 50:
            raise KeyboardInterrupt
        return s + 1 if s < 100 else None


def _sentinel(signum: int, frame: FrameType | None) -> None:  # pragma: no cover
    """A caller's own handler (never called here)."""


def test_an_interrupted_check_restores_the_callers_handlers() -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        signal.signal(signal.SIGINT, _sentinel)
        signal.signal(signal.SIGTERM, _sentinel)
        result = check(CompiledSpec(InterruptedCounter()), Options())
        assert result.verdict is Verdict.INCOMPLETE
        # Without the restore, the process would ignore Ctrl-C from here on.
        assert signal.getsignal(signal.SIGINT) is _sentinel
        assert signal.getsignal(signal.SIGTERM) is _sentinel
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
