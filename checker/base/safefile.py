"""Writing a file so that nothing already in its folder decides where the bytes go.

Every file mcheck writes (traces, checkpoints, reports, pictures, graphs, the gate's
manifest) goes through :func:`atomic_writer`: the bytes go to a new file created
exclusively (``O_CREAT | O_EXCL``, a random name, so no existing file or link by that
name is opened, and a link planted under the old fixed ``X.tmp`` name is never
followed), which is then renamed over the target.  A rename replaces a link at the
target itself rather than writing through it, and an interrupted or failed write
(a full disk, Ctrl-C) removes its temporary file and leaves the previous target whole.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from checker.base.errors import ConfigError


class WriteFailed(ConfigError):
    """A file could not be written (a full disk, a read-only folder); the previous
    content of the target, if any, is unchanged and no temporary file is left."""


def check_writable(target: str | os.PathLike[str], what: str) -> None:
    """Refuse now, with one line, an output that could not be written later (after a
    long run): ``target`` must be a file its existing folder lets us replace (a new
    file made there, then removed) and, if it exists, writable itself."""
    path = Path(target)
    try:
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise ConfigError(f"cannot write {what} {path}: {exc.strerror or exc}") from None


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


@contextlib.contextmanager
def atomic_writer(target: str | os.PathLike[str], *, durable: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write ``target``'s new content into; on a clean exit it
    replaces ``target`` (see the module docstring).  ``durable``: fsync the file and
    its folder, so the rename survives a crash (checkpoints)."""
    path = Path(target)
    folder = path.parent
    try:
        # A folder the user names for an output (build/graph.graphml) is made, as
        # pictures' and traces' folders always were; one that cannot be is one line.
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        # mkstemp makes the file private (0600); a report or trace gets the permissions
        # any new file of the user's gets.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            # A full disk or a folder gone read-only: one line, the old file whole.
            raise WriteFailed(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
    if durable:
        sync_folder(folder)


def write_atomically(target: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text is UTF-8) to ``target`` with :func:`atomic_writer`."""
    with atomic_writer(target) as f:
        f.write(data.encode() if isinstance(data, str) else data)


def sync_folder(folder: str | os.PathLike[str]) -> None:
    """Make a rename in ``folder`` durable (its entry on disk); best effort."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
