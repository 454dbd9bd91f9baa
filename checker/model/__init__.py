"""What exploration sees of a spec: the :class:`Model` protocol, a spec compiled to one
(:class:`CompiledSpec`), and the renamings of its symmetric sets.

The explorer, the liveness checker, simulation and replay depend only on the protocol;
how a trace is drawn lives in :mod:`checker.traces`.  Imports :mod:`checker.authoring`,
:mod:`checker.values` and :mod:`checker.base` only.
"""

from __future__ import annotations

from checker.model.compiled import (
    CompiledSpec,
    Fairness,
    Model,
    Successor,
    TemporalProperty,
    label_of,
    select_action_properties,
    select_properties,
)
from checker.model.renamings import instance_partners, permute, renamings

__all__ = [
    "CompiledSpec",
    "Fairness",
    "Model",
    "Successor",
    "TemporalProperty",
    "instance_partners",
    "label_of",
    "permute",
    "renamings",
    "select_action_properties",
    "select_properties",
]
