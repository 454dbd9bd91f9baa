"""How the user invoked mcheck, for the commands a hint prints.

A hint that says ``mcheck show traces/x.itf.json`` fails for a user whose mcheck is
``.venv/bin/mcheck`` (the README's set-up) or ``python -m checker``: hints print the
command as it was typed.
"""

from __future__ import annotations

import os
import sys


def command() -> str:
    """``mcheck`` as invoked: ``.venv/bin/mcheck``, ``mcheck`` (found on PATH), or
    ``python -m checker``; plain ``mcheck`` when run from Python, not a command line."""
    argv0 = sys.argv[0] if sys.argv else ""
    base = os.path.basename(argv0)
    if base == "__main__.py" or base == "-m":
        return "python -m checker"
    if base != "mcheck":
        return "mcheck"
    folder = os.path.dirname(argv0)
    on_path = any(
        os.path.realpath(os.path.join(p, "mcheck")) == os.path.realpath(argv0)
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p
    )
    if not folder or on_path:
        return "mcheck"
    return argv0
