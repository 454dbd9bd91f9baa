"""mcheck: a TLA+-style explicit-state model checker for Raft-based systems.

Write a spec with :class:`Spec`, :func:`action` and :func:`invariant`; check it with
:func:`check_spec` (or ``mcheck run SPEC``).  :func:`run` checks any
:class:`Model` (a compiled spec, or a transition system of your own).
"""

from __future__ import annotations

# First: an interruption while the rest imports ends the mcheck command cleanly.
from checker.base import signals as early_signals

early_signals.arm()

from collections.abc import Sequence

from checker.authoring.choose import choose
from checker.authoring.kinds import grouped
from checker.authoring.spec import (
    Spec,
    Story,
    action,
    action_property,
    always_eventually,
    eventually,
    eventually_always,
    invariant,
    leads_to,
)
from checker.base.errors import ConfigError, EvaluationError, MCheckError, SpecError, SpecLoadError
from checker.base.version import __version__
from checker.check.run import run
from checker.explore.options import Options
from checker.explore.result import ExitCode, Result, Stats, Verdict
from checker.explore.trace import Step, Trace
from checker.model import CompiledSpec, Model
from checker.values import ModelValue, model_values, named_values
from checker.values.fingerprint import in_order, sort_key

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
    "Story",
    "Trace",
    "Verdict",
    "__version__",
    "action",
    "action_property",
    "always_eventually",
    "check_spec",
    "choose",
    "eventually",
    "eventually_always",
    "grouped",
    "in_order",
    "invariant",
    "leads_to",
    "model_values",
    "named_values",
    "run",
    "sort_key",
]


def check_spec(
    spec: Spec,
    options: Options | None = None,
    properties: Sequence[str] | None = None,
) -> Result:
    """Check a spec instance exactly as ``mcheck run`` does: compile it (the selected
    invariants and temporal properties, default all), then :func:`run` it with the
    same defaults (the spec's own deadlock setting unless ``options`` says otherwise)."""
    opts = options or Options()
    return run(CompiledSpec(spec, properties=properties, symmetry=opts.symmetry), opts)
