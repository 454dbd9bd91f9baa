"""Where a simulation runs: this process, worker processes, or a dask cluster."""

from __future__ import annotations

from checker.explore.result import Result
from checker.model import Model
from checker.simulate.cluster import simulate_cluster
from checker.simulate.core import SimulationOptions, simulate_here
from checker.simulate.workers import simulate_workers
from checker.values.records import native_records, record_types


def simulate(model: Model, options: SimulationOptions | None = None) -> Result:
    """Random behaviours of ``model`` checked against its invariants and temporal
    properties; the Result carries a :class:`~checker.simulate.core.SimulationStats`
    in ``simulation``.  With ``workers`` or ``cluster`` set, the same answer from more
    processes (the walks are numbered and each draws from its own seed)."""
    opts = options or SimulationOptions()
    opts.validate()
    # (the workers fork inside, so they inherit the records' C _replace)
    with native_records(record_types(model)):
        if opts.cluster is not None:
            return simulate_cluster(model, opts, opts.cluster)
        if opts.workers > 1:
            return simulate_workers(model, opts, opts.workers)
        return simulate_here(model, opts)
