"""mcheck view's key reading: a bare Esc never swallows the next key, and --help
lists every key the viewer knows."""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from checker.cli.commands import main
from checker.traces.viewer import ESC_WAIT, read_key


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    os.close(r)
    os.close(w)


def test_bare_escape_is_read_at_once_and_the_next_key_survives(pipe: tuple[int, int]) -> None:
    r, w = pipe

    def person() -> None:  # Esc, then another key a moment later
        os.write(w, b"\x1b")
        time.sleep(ESC_WAIT * 10)
        os.write(w, b"q")

    threading.Thread(target=person).start()
    # Had the reader waited for the next key, it would have read "\x1bq" as one.
    assert read_key(r) == "escape"
    # The next key is still there to read (reading it must not block forever).
    assert select.select([r], [], [], 2.0)[0], "the key after Esc was swallowed"
    assert read_key(r) == "q"


@pytest.mark.parametrize(
    ("sent", "key"),
    [(b"\x1b[C", "right"), (b"\x1b[D", "left"), (b"\x1b[4~", "end"), (b"\r", "enter")],
)
def test_escape_sequences_are_named(pipe: tuple[int, int], sent: bytes, key: str) -> None:
    r, w = pipe
    os.write(w, sent + b"x")
    assert read_key(r) == key
    assert read_key(r) == "x"  # nothing of the sequence is left behind


def test_view_help_lists_every_key() -> None:
    out = CliRunner().invoke(main, ["view", "--help"]).stdout
    for key in ("space", "home", "G", "g NUMBER", "f ", "v NAMES", "c NAME", "Esc", "?", "q"):
        assert key in out, key
