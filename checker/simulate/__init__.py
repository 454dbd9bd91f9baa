"""Random behaviours (TLC's ``-simulate``): one process, ``--workers`` and a dask
cluster.  :func:`simulate` is the library's entry point."""

from __future__ import annotations

from checker.simulate.core import DEFAULT_DEPTH, SimulationOptions, SimulationStats
from checker.simulate.entry import simulate

__all__ = ["DEFAULT_DEPTH", "SimulationOptions", "SimulationStats", "simulate"]
