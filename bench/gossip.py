"""Anti-entropy gossip of versioned keys: a bench model over ``immutables.Map``.

Written for issue 27 before any tuning, in a style the engine had not met: each
variable is an ``immutables.Map`` from node to a nested ``immutables.Map`` (key to
version), so a step changes one entry of an inner map of one entry of the outer one.
:mod:`bench.gossip_plain` is the same model over plain tuples.

Nodes write new versions of keys they own (up to ``MaxVersion``); a node pushes its
view to another, which keeps the newer version of every key (last writer wins by
version); a node may crash and lose the keys it does not own.  Invariant: no node
holds a version newer than the owner's.
"""

from __future__ import annotations

from typing import NamedTuple

from immutables import Map

from checker import Spec, action, invariant


class GossipState(NamedTuple):
    """Per node: its view (key to version); per node: how many writes it made."""

    view: Map[int, Map[int, int]]
    writes: Map[int, int]


class Gossip(Spec):
    """Gossip (see the module docstring); key k is owned by node k % Nodes."""

    name = "gossip"
    constants = {"Nodes": 3, "Keys": 3, "MaxVersion": 2, "MaxWrites": 3}
    check_deadlock = False
    Nodes: int
    Keys: int
    MaxVersion: int
    MaxWrites: int

    def init(self) -> list[GossipState]:
        """Every node knows version 0 of every key."""
        empty = Map(dict.fromkeys(range(self.Keys), 0))
        return [
            GossipState(
                view=Map(dict.fromkeys(range(self.Nodes), empty)),
                writes=Map(dict.fromkeys(range(self.Nodes), 0)),
            )
        ]

    @action(over=(lambda self: range(self.Nodes), lambda self: range(self.Keys)))
    def Write(self, s: GossipState, n: int, k: int) -> GossipState | None:
        """Node n, the owner of key k, writes its next version."""
        if k % self.Nodes != n or s.view[n][k] >= self.MaxVersion:
            return None
        if s.writes[n] >= self.MaxWrites:
            return None
        mine = s.view[n]
        return s._replace(
            view=s.view.set(n, mine.set(k, mine[k] + 1)), writes=s.writes.set(n, s.writes[n] + 1)
        )

    @action(
        over=(lambda self: range(self.Nodes), lambda self: range(self.Nodes)),
        guard=lambda self, s, i, j: i != j,
    )
    def Push(self, s: GossipState, i: int, j: int) -> GossipState | None:
        """Node i pushes its view to j, which keeps the newer version of each key."""
        vi, vj = s.view[i], s.view[j]
        merged = vj
        for k in range(self.Keys):
            if vi[k] > merged[k]:
                merged = merged.set(k, vi[k])
        if merged is vj:
            return None
        return s._replace(view=s.view.set(j, merged))

    @action(over=lambda self: range(self.Nodes))
    def Crash(self, s: GossipState, n: int) -> GossipState | None:
        """Node n restarts: it forgets the keys it does not own."""
        mine = s.view[n]
        reset = mine
        for k in range(self.Keys):
            if k % self.Nodes != n and reset[k] != 0:
                reset = reset.set(k, 0)
        if reset is mine:
            return None
        return s._replace(view=s.view.set(n, reset))

    @invariant
    def NoVersionFromTheFuture(self, s: GossipState) -> bool:
        """No node holds a version of a key newer than the owner's."""
        return all(
            s.view[n][k] <= s.view[k % self.Nodes][k]
            for n in range(self.Nodes)
            for k in range(self.Keys)
        )
