"""``--cluster ADDRESS`` / ``--cluster local:N``: breadth-first search on dask.distributed.

The same level-synchronous algorithm as ``--workers`` (:mod:`checker.distributed.partition`),
with each partition a dask *actor* pinned to one worker of the cluster: its
fingerprints and its share of the frontier live there for the whole run.  This
process (the dask client) runs the exploration core's coordinator: per level it
calls each actor's phases and passes the exchanges between them (the (fingerprint,
key) candidates each owner must judge, who won what, the states moved to even out
the frontier); the dask scheduler only places the actors and routes the calls.  No
networking of our own: dask's comms carry everything.

Each actor builds the model itself from a *recipe* (the spec's module or file, its
class, variant, constants and selected invariants): the spec must be importable on
every worker (the same checkout, or the spec file at the same path).  A worker lost
mid-run (killed, out of memory, disconnected) stops the run as incomplete with a
one-line reason, never a pass.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
from typing import Any

import numpy as np

from checker.authoring.spec import USER_MODULE_PREFIX
from checker.base.errors import ConfigError, MCheckError
from checker.base.signals import say_ready
from checker.distributed.partition import LevelBackend, Partition
from checker.explore.collector import paced_collector
from checker.explore.engine import ChunkResult, WorkerLost
from checker.explore.expansion import ExpansionFactory, ExpansionSettings, Key, Restart
from checker.explore.options import Options, parse_cluster
from checker.liveness.stategraph import GraphPart, GraphRecorder
from checker.model import CompiledSpec, Model
from checker.values.records import native_records, record_types

#: Seconds to wait for the scheduler of ``--cluster ADDRESS``.
CONNECT_TIMEOUT = 20


def recipe_of(model: Model) -> dict[str, Any]:
    """How a worker rebuilds ``model``: the spec class's module (or file), name,
    variant, constants and selected invariants."""
    if not isinstance(model, CompiledSpec):
        raise ConfigError("--cluster checks specs (a CompiledSpec), not other models")
    cls = type(model.spec)
    return {
        "module": cls.__module__,
        "file": inspect.getfile(cls),
        "class": cls.__name__,
        "variant": model.variant,
        "constants": dict(model.constants),
        "invariants": [
            *model.invariant_names,
            *model.action_property_names,
            *(prop.name for prop in model.temporal),
        ]
        or ["none"],
        "symmetry": model.symmetric,
    }


def model_of(recipe: dict[str, Any]) -> CompiledSpec:
    """The model a recipe describes (on a worker)."""
    from checker.authoring.loader import load_module

    module_name = recipe["module"]
    if module_name.startswith(USER_MODULE_PREFIX):
        module = load_module(recipe["file"])
    else:
        module = importlib.import_module(module_name)
    cls = getattr(module, recipe["class"])
    spec = cls(variant=recipe["variant"], **recipe["constants"])
    return CompiledSpec(spec, properties=recipe["invariants"], symmetry=recipe["symmetry"])


class PartitionActor:
    """A :class:`~checker.distributed.partition.Partition` kept on a dask worker.  Each method
    returns ``("ok", value)`` or a tagged failure: exceptions of ours need not pickle,
    and the fast engine's restart requests must reach the coordinator as such."""

    def __init__(
        self,
        w: int,
        n: int,
        recipe: dict[str, Any],
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        settings: ExpansionSettings,
        make: ExpansionFactory,
        graph: bool = False,
    ) -> None:
        self.failure: tuple[str, Any] | None = None
        #: The spec's records, given the C _replace while a phase runs (as run() does).
        self.records: list[type] = []
        try:
            model = model_of(recipe)
            self.records = record_types(model)
            self.part: Partition | None = Partition(
                w, n, model, renamings, deadlock, settings, make, graph
            )
        except Exception as exc:
            self.part = None
            self.failure = ("failed", f"worker {w} could not build the model: {exc}")

    def call(self, method: str, *args: Any) -> tuple[str, Any]:
        """Run one phase (see Partition) and tag its outcome."""
        if self.part is None:
            assert self.failure is not None
            return self.failure
        try:
            with paced_collector(), native_records(self.records):
                return ("ok", getattr(self.part, method)(*args))
        except Restart as exc:
            return ("restart", exc)
        except MemoryError:
            return ("failed", f"worker {self.part.w} ran out of memory")
        except MCheckError as exc:
            return ("error", exc)  # the spec's own error: raised as one process would
        except Exception as exc:
            return ("failed", f"worker {self.part.w} failed: {type(exc).__name__}: {exc}")


def dask_module() -> Any:
    try:
        import distributed
    except ImportError:
        raise ConfigError(
            "--cluster needs dask.distributed: pip install 'mcheck-raft[cluster]' (or distributed)"
        ) from None
    return distributed


class ClusterBackend(LevelBackend):
    """The :class:`~checker.explore.engine.Backend` over a dask.distributed cluster (BFS)."""

    def __init__(
        self,
        model: Model,
        renamings: list[dict[Any, Any]],
        deadlock: bool,
        opts: Options,
        make: ExpansionFactory,
        settings: ExpansionSettings | None = None,
        recorder: GraphRecorder | None = None,
    ) -> None:
        assert opts.cluster is not None
        self.recipe = recipe_of(model)
        super().__init__(model, renamings, deadlock, opts, make, settings, recorder)
        self.where, self.local_workers = parse_cluster(opts.cluster)
        self.address = opts.cluster
        self.cluster: Any = None
        self.client: Any = None
        self.actors: list[Any] = []

    # -- the cluster ---------------------------------------------------------------
    def _launch(self) -> None:
        distributed = dask_module()
        # dask logs a lost scheduler's reconnection attempts with tracebacks: the run
        # reports the loss itself, in one line.
        quiet_dask()
        try:
            self._connect(distributed)
        except (ConfigError, WorkerLost, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise WorkerLost(
                f"the dask cluster {self.address} did not start ({type(exc).__name__}: {exc})"
            ) from None

    def _connect(self, distributed: Any) -> None:
        self.client, self.cluster, workers = open_client(distributed, self.address)
        self.n = len(workers)
        say_ready(f"the cluster's {self.n} workers are up")
        futures = [
            self.client.submit(
                PartitionActor,
                w,
                self.n,
                self.recipe,
                self.renamings,
                self.deadlock,
                self.settings,
                self.make,
                self.graph,
                actor=True,
                workers=[addr],
                allow_other_workers=False,
                pure=False,
            )
            for w, addr in enumerate(workers)
        ]
        self.actors = [f.result() for f in futures]

    def _all(self, method: str, args: list[tuple[Any, ...]]) -> list[Any]:
        """Call ``method`` on every actor (the calls run at once) and return the
        values, raising what a failed one reported."""
        try:
            futures = [a.call(method, *arg) for a, arg in zip(self.actors, args, strict=True)]
            results = [f.result() for f in futures]
        except (KeyboardInterrupt, MCheckError):
            raise
        except Exception as exc:
            if self._scheduler_lost():
                what = f"the dask scheduler {self.where} was lost"
            else:
                what = "a cluster worker was lost"
            raise WorkerLost(
                f"{what} ({type(exc).__name__}: {exc}); the run is incomplete"
            ) from None
        out = []
        for tag, value in results:
            if tag == "restart":
                raise value
            if tag == "failed":
                raise WorkerLost(value)
            if tag == "error":
                raise value
            out.append(value)
        return out

    def _scheduler_lost(self) -> bool:
        """Whether the scheduler is gone: it does not answer the client within a few
        seconds (the client itself may not have noticed yet)."""
        if self.client is None or self.client.status not in ("running", "newly-created"):
            return True
        try:
            self.client.sync(self.client.scheduler.identity, callback_timeout=5)
        except Exception:
            return True
        return False

    # -- the Backend protocol ------------------------------------------------------
    def _seed(self, seeds: list[list[tuple[int, Any, int]]]) -> None:
        self._all("seed", [(s,) for s in seeds])

    def _graph_parts(self) -> list[GraphPart]:
        parts: list[GraphPart] = self._all("graph_part", [()] * self.n)
        return parts

    def step(self) -> ChunkResult:
        """One breadth-first level across the actors."""
        n = self.n
        expanded = self._all("expand", [(self.limited(),)] * n)
        generated = sum(e[0] for e in expanded)
        act_gen = [sum(col) for col in zip(*(e[1] for e in expanded), strict=True)]
        won = self._all("own", [([(w, expanded[w][2][o]) for w in range(n)],) for o in range(n)])
        checked = self._all("check", [([won[o][w] for o in range(n)],) for w in range(n)])

        def balance(plans: list[list[tuple[int, int]]]) -> list[tuple[np.ndarray, np.ndarray]]:
            shipped = self._all("ship", [(p,) for p in plans])
            return self._all("take", [([shipped[w][t] for w in range(n)],) for t in range(n)])

        def number(ordinals: list[np.ndarray]) -> None:
            self._all("number", [(o,) for o in ordinals])

        def ask(key: Key) -> list[tuple[int, dict[int, int]]]:
            return self._all("count_before", [(key,)] * n)

        return self._finish(generated, act_gen, checked, balance, number, ask)

    def close(self) -> None:
        """Release the actors; shut a local cluster down (a remote one keeps running)."""
        self.actors = []
        with contextlib.suppress(Exception):
            if self.client is not None:
                self.client.close()
        with contextlib.suppress(Exception):
            if self.cluster is not None:
                self.cluster.close()
        self.client = self.cluster = None


def open_client(distributed: Any, address: str) -> tuple[Any, Any, list[str]]:
    """A client of the cluster ``address`` (``local:N``: a LocalCluster of N
    single-threaded processes on 127.0.0.1, started here): (client, the local cluster
    or None, the workers' addresses, sorted)."""
    where, local_workers = parse_cluster(address)
    cluster = None
    try:
        if local_workers is not None:
            cluster = distributed.LocalCluster(
                n_workers=local_workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(where, timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        raise ConfigError(f"cannot reach the dask cluster {where}: {exc}") from None
    workers = sorted(client.scheduler_info()["workers"])
    if not workers:
        raise ConfigError(f"the dask cluster {where} has no workers")
    return client, cluster, workers


def quiet_dask() -> None:
    """Silence dask's loggers in this process for good: a lost scheduler's reconnection
    attempts are logged with tracebacks from dask's own thread, even after the client
    is closed; the run reports the loss itself, in one line."""
    names = ["distributed", "tornado", "asyncio"]
    names += [n for n in logging.root.manager.loggerDict if n.startswith("distributed.")]
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
