"""The reachable state graph, recorded by the exploration core as it explores.

The core's local backend calls :meth:`GraphRecorder.node` for every stored state and
:meth:`GraphRecorder.edges` for every expanded one, so liveness and ``mcheck graph``
use the very exploration that safety uses (same order, limits and signals) instead of
a loop of their own.  Nodes are the stored states' ordinals; an edge records the
action instance and which successor of its source it was, so a path through the graph
is replayed into a real trace like any counterexample.  States themselves are kept
only when asked (for export); liveness keeps, per node, the truth of each temporal
property's state predicates, evaluated once when the state is first met.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checker.errors import EvaluationError
from checker.model import Model


@dataclass
class StateGraph:
    """The reachable state graph with the data fairness and temporal checks need."""

    init: list[int]
    succ: list[list[tuple[int, int]]]  #: per state: (successor, action instance id)
    enabled: list[frozenset[int]]  #: per state: fairness constraints enabled there
    cut: list[bool]  #: per state: some successor was outside the constraint
    instances: list[tuple[int, tuple[Any, ...]]]  #: instance id -> (action, params)
    fair: dict[int, str]  #: fairness constraint id -> "weak" | "strong"
    #: per state, parallel to ``succ``: which successor of the state the edge is
    succ_index: list[list[int]] = field(default_factory=list)
    #: (property, parameter index, "p" | "q" | "s") -> truth of that predicate per
    #: state ("s": the initial-state condition)
    truth: dict[tuple[str, int, str], bytearray] = field(default_factory=dict)
    states: list[Any] = field(default_factory=list)  #: only when kept (export)
    #: instance id -> the fairness constraints its steps meet; when left empty, a
    #: fair instance is its own constraint (constraint id = instance id).
    member: list[tuple[int, ...]] = field(default_factory=list)

    def meets(self, iid: int) -> tuple[int, ...]:
        """The fairness constraints a step of instance ``iid`` meets."""
        if self.member:
            return self.member[iid]
        return (iid,) if iid in self.fair else ()

    @property
    def size(self) -> int:
        """Number of states."""
        return len(self.succ)

    @property
    def edges(self) -> int:
        """Number of (non-stuttering) transitions inside the constraint."""
        return sum(len(s) for s in self.succ)


class GraphRecorder:
    """Builds a :class:`StateGraph` from the core's node and edge reports."""

    def __init__(self, model: Model, keep_states: bool = False) -> None:
        self.model = model
        self.keep_states = keep_states
        self.graph = StateGraph([], [], [], [], [], {})
        self._ids: dict[tuple[int, tuple[Any, ...]], int] = {}
        self._constraints: dict[Any, int] = {}
        self._atoms: list[tuple[tuple[str, int, str], Any]] = []
        for prop in model.temporal:
            for i, (_params, pred, premise) in enumerate(prop.instances):
                self._atoms.append(((prop.name, i, "q"), pred))
                if premise is not None:
                    self._atoms.append(((prop.name, i, "p"), premise))
                start = prop.start(i)
                if start is not None:  # read on initial states only (cheap anywhere)
                    self._atoms.append(((prop.name, i, "s"), start))
        for key, _ in self._atoms:
            self.graph.truth[key] = bytearray()

    def node(self, ordinal: int, state: Any) -> None:
        """A state stored for the first time (ordinals arrive in order)."""
        g = self.graph
        assert ordinal == len(g.succ)
        g.succ.append([])
        g.succ_index.append([])
        g.enabled.append(frozenset())
        g.cut.append(False)
        if self.keep_states:
            g.states.append(state)
        for key, pred in self._atoms:
            try:
                value = pred(state)
            except MemoryError:
                raise
            except Exception as exc:
                raise EvaluationError(f"temporal property {key[0]}", exc, state) from exc
            g.truth[key].append(1 if value else 0)

    def initial(self, ordinal: int) -> None:
        """Mark a stored state as initial."""
        self.graph.init.append(ordinal)

    def edges(
        self, ordinal: int, edges: list[tuple[int, int, tuple[Any, ...], int]], state: Any
    ) -> None:
        """All successors of an expanded state: (target or -1 if outside the
        constraint, action, parameters, successor index)."""
        g = self.graph
        out: list[tuple[int, int]] = []
        index: list[int] = []
        enabled: set[int] = set()
        cut = False
        for target, ai, params, k in edges:
            iid = self._instance(ai, params)
            if target == ordinal:
                continue  # a stuttering step: neither enables nor takes an action
            enabled.update(g.member[iid])
            if target < 0:
                cut = True
                continue
            out.append((target, iid))
            index.append(k)
        g.succ[ordinal] = out
        g.succ_index[ordinal] = index
        g.enabled[ordinal] = frozenset(enabled)
        g.cut[ordinal] = cut

    def _instance(self, ai: int, params: tuple[Any, ...]) -> int:
        key = (ai, params)
        iid = self._ids.get(key)
        if iid is None:
            g = self.graph
            iid = len(g.instances)
            self._ids[key] = iid
            g.instances.append((ai, params))
            meets = []
            for key, kind in self.model.fairness(ai, params):
                cid = self._constraints.get(key)
                if cid is None:
                    cid = len(self._constraints)
                    self._constraints[key] = cid
                    g.fair[cid] = kind
                meets.append(cid)
            g.member.append(tuple(meets))
        return iid
