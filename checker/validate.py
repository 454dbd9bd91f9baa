"""``checker.validate`` as specs and scripts import it: the module now lives in
:mod:`checker.check.validate` (this name is kept so those imports keep working)."""

from __future__ import annotations

from checker.check.validate import *  # noqa: F403
from checker.check.validate import __all__ as __all__
