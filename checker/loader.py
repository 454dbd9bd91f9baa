"""``checker.loader`` as specs and scripts import it: the module now lives in
:mod:`checker.authoring.loader` (this name is kept so those imports keep working)."""

from __future__ import annotations

from checker.authoring.loader import *  # noqa: F403
from checker.authoring.loader import __all__ as __all__
