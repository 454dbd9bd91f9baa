"""The one place an exploration is assembled, and started again when it asks to be.

An exploration is the core (:class:`checker.explore.engine.Exploration`) driving a
backend (this process, worker processes, or a dask cluster) whose per-state work is an
expansion: the fast engine where it serves the model, else the plain one
(:func:`checker.fastpath.choice.make_expansion`).  Backends are handed that choice as a
factory; none makes it itself.  When the expansion asks to start again
(:class:`checker.explore.expansion.Restart`: the fast engine met a map whose keys it
took for fixed, a slot with more values than it packs, a cached outcome that differs
from a direct run), the exploration starts afresh here with the settings it gives, and
the note (if any) joins the run's warnings.  Every restart caches strictly less than
the one before, so a run restarts a bounded number of times.  ``run``, ``graph`` and
every mode (``--workers``, ``--cluster``, liveness, checkpoints) come through here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from checker.base.errors import ConfigError
from checker.distributed.cluster import ClusterBackend
from checker.distributed.workers import WorkerBackend
from checker.explore.engine import Backend, Exploration, LocalBackend, Outcome
from checker.explore.expansion import ExpansionSettings, Restart
from checker.explore.kinds import SwitchPolicy
from checker.explore.options import Options
from checker.explore.snapshot import Snapshot
from checker.fastpath.choice import make_expansion
from checker.liveness.stategraph import GraphRecorder
from checker.model import Model


def explore(
    model: Model,
    opts: Options,
    renamings: list[dict[Any, Any]],
    deadlock: bool,
    warnings: list[str],
    *,
    record: Callable[[], GraphRecorder | None] = lambda: None,
    checkpointer: Callable[[Snapshot], str] | None = None,
    resumed: Snapshot | None = None,
    deadline: float | None = None,
) -> tuple[Outcome, GraphRecorder | None]:
    """One exploration of ``model`` with ``opts``, recording the state graph with what
    ``record`` makes (a fresh recorder per attempt), restarted as the expansion asks:
    (its outcome, the recorder of the attempt that ended)."""
    settings = ExpansionSettings(cache=opts.cache, switching=switching())
    seen: set[ExpansionSettings] = set()
    while True:
        recorder = record()
        try:
            backend = _backend(model, renamings, deadlock, opts, settings, recorder)
            exploration = Exploration(model, opts, backend, checkpointer, resumed, deadline)
            return exploration.run(), recorder
        except Restart as exc:
            # Each restart caches strictly less: a settings object met twice would loop.
            if exc.settings in seen or exc.settings == settings:
                raise RuntimeError(f"the fast engine asked twice for one restart ({exc})") from exc
            seen.add(settings)
            settings = exc.settings
            if exc.note is not None:
                warnings.append(exc.note)


def _backend(
    model: Model,
    renamings: list[dict[Any, Any]],
    deadlock: bool,
    opts: Options,
    settings: ExpansionSettings,
    recorder: GraphRecorder | None,
) -> Backend:
    """The backend ``opts`` asks for, handed the choice of expansion."""
    if opts.cluster is not None:
        return ClusterBackend(model, renamings, deadlock, opts, make_expansion, settings, recorder)
    if opts.workers > 1:
        return WorkerBackend(model, renamings, deadlock, opts, make_expansion, settings, recorder)
    expansion = make_expansion(model, renamings, deadlock, settings)
    return LocalBackend(model, expansion, opts.strategy, opts.max_depth, recorder)


def switching() -> SwitchPolicy:
    """How the fast engine and the plain expansion share a run: MCHECK_ENGINE_SWITCH
    (for tests and measurements; see :mod:`checker.fastpath.adaptive`), "measured" by
    default."""
    policy = os.environ.get("MCHECK_ENGINE_SWITCH", SwitchPolicy.MEASURED)
    if policy not in {p.value for p in SwitchPolicy}:
        known = ", ".join(SwitchPolicy)
        raise ConfigError(f"MCHECK_ENGINE_SWITCH={policy!r} is not one of {known}")
    return SwitchPolicy(policy)
