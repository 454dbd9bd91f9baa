"""Which expansion a run uses: the fast engine where it can serve the model and the
settings allow it, else the plain one.  The one place that knows both (the
exploration core knows neither, only :class:`checker.explore.expansion.ExpansionLike`)."""

from __future__ import annotations

from typing import Any

from checker.explore.expansion import Expansion, ExpansionLike, ExpansionSettings
from checker.explore.kinds import SwitchPolicy
from checker.model import Model


def make_expansion(
    model: Model,
    renamings: list[dict[Any, Any]],
    deadlock: bool,
    settings: ExpansionSettings | None = None,
) -> ExpansionLike:
    """For a compiled spec with NamedTuple states (unless ``settings.cache`` is off)
    the fast expansion, with the plain one taking over where it is measured cheaper
    (:mod:`checker.fastpath.adaptive`); else the plain one."""
    settings = settings or ExpansionSettings()
    # Action properties read both ends of every step: the plain expansion has them
    # as states (the fast engine's cached outcomes skip the step itself).
    if settings.cache and not getattr(model, "action_property_names", ()):
        from checker import fastpath

        if fastpath.supports(model):
            if settings.switching is SwitchPolicy.MEASURED and settings.wide is None:
                # The plain expansion starts; the fast engine is made from the run's
                # first stored states, then tried (see adaptive.Later).
                from checker.fastpath.adaptive import Later, measured_later
                from checker.fastpath.pilot import with_layout

                def make(layout: tuple[set[int], dict[int, Any]] | None) -> Any:
                    chosen = settings if layout is None else with_layout(settings, *layout)
                    try:
                        return fastpath.FastExpansion(model, renamings, deadlock, chosen)  # type: ignore[arg-type]
                    except fastpath.Unsuitable:
                        return None

                plain = Expansion(model, renamings, deadlock)
                return measured_later(Later(plain.nvars, make), plain)
            try:
                fast = fastpath.FastExpansion(model, renamings, deadlock, settings)  # type: ignore[arg-type]
            except fastpath.Unsuitable:
                return Expansion(model, renamings, deadlock)
            if settings.switching is SwitchPolicy.FAST:
                return fast
            from checker.fastpath.adaptive import measured

            return measured(fast, Expansion(model, renamings, deadlock), settings)
    return Expansion(model, renamings, deadlock)
