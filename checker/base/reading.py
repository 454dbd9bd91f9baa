"""Reading a file someone else gave us, bounded: a regular file is refused by its size
before a byte is read, and a device or pipe (``/dev/zero``, whose size says 0) is read
no further than the bound, so no input makes mcheck read until memory runs out."""

from __future__ import annotations

import os


class TooLarge(Exception):
    """The file holds more than the bound; each reader says so in its own words."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit:,} bytes")
        self.limit = limit


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them, else :class:`TooLarge`.
    ``OSError`` (not found, a folder, no permission) is the caller's to word."""
    with open(path, "rb") as fh:
        # A sparse 1 GB file would otherwise cost the bound in memory to say no.
        if os.fstat(fh.fileno()).st_size > limit:
            raise TooLarge(limit)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data
