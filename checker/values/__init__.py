"""The value model, and the values specs use from it.

Specs import :class:`ModelValue`, :func:`model_values`, :func:`named_values` and
:func:`put` from here (``from checker.values import ModelValue, put``).  The rest of
this room is what every engine decides about values: the closed list of kinds
(:mod:`~checker.values.kinds`), their type-strict equality
(:mod:`~checker.values.strict`), their canonical encoding and fingerprints
(:mod:`~checker.values.fingerprint`), how they are shown (:mod:`~checker.values.show`)
and written as data (:mod:`~checker.values.codec`).  It imports nothing of mcheck's
but :mod:`checker.base`.
"""

from __future__ import annotations

from checker.values.modelvalue import ModelValue, model_values, named_values
from checker.values.record import Record
from checker.values.update import put

__all__ = ["ModelValue", "Record", "model_values", "named_values", "put"]
