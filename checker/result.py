"""``checker.result`` as specs and scripts import it: the module now lives in
:mod:`checker.explore.result` (this name is kept so those imports keep working)."""

from __future__ import annotations

from checker.explore.result import *  # noqa: F403
from checker.explore.result import __all__ as __all__
