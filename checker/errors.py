"""``checker.errors`` as specs and scripts import it: the module now lives in
:mod:`checker.base.errors` (this name is kept so those imports keep working)."""

from __future__ import annotations

from checker.base.errors import *  # noqa: F403
from checker.base.errors import __all__ as __all__
