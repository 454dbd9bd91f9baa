"""Signals, in one place: Ctrl-C and SIGTERM while mcheck starts, while it explores
and while it reports, and the ``--timeout`` watchdog.

**While starting.**
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
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


# -- while exploring and reporting ---------------------------------------------------------


def ignore_interrupts() -> None:
    """From now on this process ignores Ctrl-C and SIGTERM (it is reporting)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


@contextmanager
def stop_signals() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while exploring (the main thread only)."""

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        old = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is on_term:
            signal.signal(signal.SIGTERM, old)


@contextmanager
def deferred_stop(active: bool) -> Iterator[list[bool]]:
    """While ``active``, the first Ctrl-C or SIGTERM only raises a flag (``[True]``)
    that the loop reads between chunks, so the run can stop where a checkpoint is
    consistent; a second one stops at once (the previous checkpoint stays)."""
    asked = [False]
    if not active:
        yield asked
        return

    def on_signal(signum: int, frame: Any) -> None:
        if asked[0]:
            raise KeyboardInterrupt
        asked[0] = True

    try:
        old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread
        yield asked
        return
    try:
        yield asked
    finally:
        for sig, handler in old.items():
            if signal.getsignal(sig) is on_signal:
                signal.signal(sig, handler)


@contextmanager
def watchdog_paused(rearm: bool = True) -> Iterator[None]:
    """Hold the watchdog's timer off within this block (a checkpoint being written);
    afterwards it runs on with the time it had left, unless ``rearm`` is False."""
    try:
        left, _ = signal.setitimer(signal.ITIMER_REAL, 0)
    except ValueError:  # not the main thread: there is no timer
        yield
        return
    try:
        yield
    finally:
        if left > 0 and rearm:
            signal.setitimer(signal.ITIMER_REAL, left)


class DeadlineReached(KeyboardInterrupt):
    """Raised by :func:`watchdog` when ``--timeout`` passes inside one long step (a state
    whose fingerprint needs 9! renamings, a huge chunk): the run stops like Ctrl-C, but
    reports the timeout."""


#: How long after the deadline the watchdog fires: the explorer's own check between
#: chunks normally stops the run first, cleanly and without unwinding a step.
WATCHDOG_GRACE = 1.0


def _on_alarm(signum: int, frame: Any) -> None:
    raise DeadlineReached


@contextmanager
def watchdog(deadline: float | None) -> Iterator[None]:
    """Within this block, a ``deadline`` (``time.perf_counter()`` seconds) overrun by
    :data:`WATCHDOG_GRACE` raises :class:`DeadlineReached` wherever the run is.

    A real-time interval timer (SIGALRM), main thread only; forked workers do not
    inherit it, and the timer is cancelled on leaving, so the report is never cut.
    Nested blocks share the outermost one's timer."""
    if deadline is None or signal.getsignal(signal.SIGALRM) is _on_alarm:
        yield  # no deadline, or an enclosing watchdog already keeps it
        return
    try:
        old = signal.signal(signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main thread
        yield
        return
    try:
        signal.setitimer(
            signal.ITIMER_REAL, max(0.001, deadline - time.perf_counter() + WATCHDOG_GRACE)
        )
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def worker_process(parent: int | None = None) -> None:
    """In a worker process (``--workers``, the gate's pool, simulation workers): Ctrl-C,
    sent to the whole process group, is the coordinator's to handle; SIGTERM ends the
    worker at once, quietly (the coordinator's handler, inherited by a fork, would turn
    it into a KeyboardInterrupt and a traceback); and the worker dies with its parent
    (:func:`die_with_parent`), whatever signal the parent got, SIGKILL included."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)


#: prctl's request to be sent a signal when the parent dies (Linux).
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> None:
    """Have the kernel kill this process (SIGKILL) when its parent dies: a worker never
    outlives a coordinator that was killed, even by SIGKILL, and needs no signal that
    could be ignored to learn of it (Linux's PR_SET_PDEATHSIG; elsewhere the workers'
    own polls of their parent remain).  ``parent``: the pid the parent had; if it is
    gone already (it died before this ran), exit now."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def term_as_interrupt() -> Any:
    """Make SIGTERM raise KeyboardInterrupt (a command stops as on Ctrl-C); returns the
    handler it replaced (None off the main thread, where nothing changes)."""

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread (tests)
        return None


def restore_term(previous: Any) -> None:
    """Give SIGTERM back the handler :func:`term_as_interrupt` replaced, unless it has
    been set to be ignored since (the command is reporting)."""
    if previous is not None and signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def shielded() -> Iterator[None]:
    """Ignore Ctrl-C while writing something the user asked to keep."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@contextmanager
def kept_handlers() -> Iterator[None]:
    """Restore SIGINT's and SIGTERM's handlers on the way out (main thread only): a
    library call leaves the program's handlers as it found them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def say_ready(what: str) -> None:
    """Tell a script that started the ``mcheck`` command that its worker processes are
    up (one line on stderr: ``mcheck: <what>``), so it can wait for that line instead
    of sleeping.  Library callers see nothing."""
    if _is_command_line():
        print(f"mcheck: {what}", file=sys.stderr, flush=True)
