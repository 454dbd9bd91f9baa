"""The command line (``mcheck``), the CI gate and the pytest plugin: the top room,
which may use every other; no other room imports it."""

from __future__ import annotations

from checker.cli.commands import main

__all__ = ["main"]
