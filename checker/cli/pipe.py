"""Output into a pipe its reader closed (``mcheck run X | head -1``).

Python ignores SIGPIPE, so the first write after the reader has gone raises
BrokenPipeError, which would end the run with exit 1 (or a traceback at shutdown)
instead of its own code.  As a shell user expects, the run carries on to its verdict
and exits with TLC's code; what it still prints goes nowhere (and nothing a user asked
to be saved, a trace or a checkpoint, is skipped).
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["survive_closed_stdout"]


class _PipeSafe:
    """A text stream that, once its pipe is closed, swallows what is written to it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        """Write, or drop the text once the reader has gone."""
        if not self._gone:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        """Flush, or do nothing once the reader has gone."""
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._closed()

    def _closed(self) -> None:
        # Point the descriptor at /dev/null: the stream's own buffered bytes, and the
        # interpreter's flush at exit, then go there instead of raising again.
        self._gone = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def survive_closed_stdout() -> None:
    """Make ``sys.stdout`` outlive a closed pipe (idempotent; a stream without a file
    descriptor, such as a test runner's, is left alone)."""
    out = sys.stdout
    if isinstance(out, _PipeSafe) or out is None:
        return
    try:
        out.fileno()
    except (AttributeError, OSError, ValueError):
        return
    sys.stdout = _PipeSafe(out)
