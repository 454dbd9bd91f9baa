"""Ctrl-C and SIGTERM that arrive while ``mcheck`` is still starting.

Importing mcheck and its libraries takes a fraction of a second (seconds on a loaded
machine), before any command has installed its own handlers: a SIGTERM then killed
the process with signal 15, a Ctrl-C printed a traceback.  :func:`arm` (called first
thing when the package is imported by the ``mcheck`` command itself, never by a
library user's program) makes either one end the start-up as every interruption
ends: one line, exit 3 ("incomplete").  Nothing is lost: no command has started.
:func:`release` gives the handlers back once a command takes over.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

#: The handlers :func:`arm` replaced, to give back in :func:`release`.
_saved: dict[int, Any] = {}

#: Exit code of an interrupted run (checker.explore.result.ExitCode.INCOMPLETE, not imported:
#: this module must load before anything else).
_INCOMPLETE = 3


def _is_command_line() -> bool:
    """Whether this process is the ``mcheck`` command (the console script, or
    ``python -m checker``), not a program that imports mcheck as a library."""
    argv0 = os.path.basename(sys.argv[0]) if sys.argv else ""
    orig = list(getattr(sys, "orig_argv", []))
    by_module = any(orig[i : i + 2] == ["-m", "checker"] for i in range(len(orig)))
    return argv0 == "mcheck" or by_module


def _stop(signum: int, frame: Any) -> None:
    os.write(2, b"mcheck: interrupted before a verdict: incomplete\n")
    os._exit(_INCOMPLETE)


def arm() -> None:
    """Install the start-up handlers (command line, main thread only; a signal the
    parent ignores stays ignored, as a nohup'd job expects)."""
    if _saved or not _is_command_line():
        return
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        old = signal.getsignal(sig)
        if old is signal.SIG_IGN:
            continue
        _saved[sig] = old
        signal.signal(sig, _stop)


def release() -> None:
    """Give back the handlers :func:`arm` replaced (a command now handles them)."""
    for sig, old in _saved.items():
        if signal.getsignal(sig) is _stop:
            signal.signal(sig, old)
    _saved.clear()
