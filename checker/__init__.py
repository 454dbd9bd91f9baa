"""mcheck: a TLA+-style explicit-state model checker for Raft-based systems.

Write a spec with :class:`Spec`, :func:`action` and :func:`invariant`; check it with
:func:`check_spec` (or ``mcheck run SPEC``).
"""

from __future__ import annotations

from typing import Any

from checker.errors import ConfigError, EvaluationError, MCheckError, SpecError, SpecLoadError
from checker.explore import Options, check
from checker.fingerprint import in_order, sort_key
from checker.model import CompiledSpec, Model
from checker.result import ExitCode, Result, Stats, Verdict
from checker.spec import Spec, action, always_eventually, eventually, invariant, leads_to
from checker.trace import Step, Trace
from checker.values import ModelValue, model_values, named_values

__version__ = "0.1.0"

__all__ = [
    "CompiledSpec",
    "ConfigError",
    "EvaluationError",
    "ExitCode",
    "MCheckError",
    "Model",
    "ModelValue",
    "Options",
    "Result",
    "Spec",
    "SpecError",
    "SpecLoadError",
    "Stats",
    "Step",
    "Trace",
    "Verdict",
    "__version__",
    "action",
    "always_eventually",
    "check",
    "check_spec",
    "eventually",
    "in_order",
    "invariant",
    "leads_to",
    "model_values",
    "named_values",
    "sort_key",
]


def check_spec(
    spec: Spec,
    options: Options | None = None,
    invariants: list[str] | None = None,
) -> Result:
    """Check a spec instance: compile it, explore it, return the :class:`Result`."""
    opts = options or Options()
    model = CompiledSpec(spec, invariants=invariants, symmetry=opts.symmetry)
    meta: dict[str, Any] = {"variant": spec.variant, "constants": spec.constant_values}
    return check(model, opts, **meta)
