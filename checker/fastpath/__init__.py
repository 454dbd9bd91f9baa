"""The fast engine: packed states and cached outcomes behind the core's expansion
interface (:class:`checker.explore.expansion.ExpansionLike`).  The core never imports it;
:mod:`checker.fastpath.choice` picks it where it serves the model."""

from __future__ import annotations

from checker.fastpath.expansion import FastExpansion
from checker.fastpath.pilot import Unsuitable, supports

__all__ = ["FastExpansion", "Unsuitable", "supports"]
