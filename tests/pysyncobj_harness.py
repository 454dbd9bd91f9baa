"""Run a 3-node pysyncobj cluster on 127.0.0.1 and log what each node's state shows,
as NDJSON events for ``mcheck validate pysyncobj_raft``.

No fork of pysyncobj: the nodes run its own ``SyncObj`` with ``autoTick=False``, and
this harness ticks them one at a time from one thread, so the log is in the order
things happened (a message sent in one node's tick is handled in a later tick of
another).  After each tick it reads the node's term, role, vote and commit index
(pysyncobj's private attributes, read only) and logs one event per change, in the
order pysyncobj makes them: a higher term adopted, a timeout, a vote, a role change,
a commit.  A node is stopped with ``destroy()`` and started again as a new
``SyncObj`` on the same port (the default in-memory journal: it forgets everything).
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from pysyncobj import SyncObj, SyncObjConf, replicated

NAMES = ("a", "b", "c")
ROLES = {0: "Follower", 1: "Candidate", 2: "Leader"}


class Counter(SyncObj):  # type: ignore[misc]
    """pysyncobj's replicated counter example."""

    def __init__(self, me: str, others: list[str], conf: SyncObjConf) -> None:
        super().__init__(me, others, conf)
        self.value = 0

    @replicated  # type: ignore[untyped-decorator]
    def incr(self) -> int:
        self.value += 1
        return self.value


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Cluster:
    """Three pysyncobj nodes and the NDJSON log of their state changes."""

    def __init__(self, log: Path) -> None:
        self.addr = {n: f"127.0.0.1:{p}" for n, p in zip(NAMES, _free_ports(3), strict=True)}
        self.name = {a: n for n, a in self.addr.items()}
        self.out = log.open("w")
        self.nodes: dict[str, Counter | None] = {}
        self.last: dict[str, tuple[int, str, str | None, int]] = {}
        for n in NAMES:
            self.start(n, log_restart=False)

    def _conf(self) -> SyncObjConf:
        return SyncObjConf(
            autoTick=False,
            raftMinTimeout=0.25,
            raftMaxTimeout=0.6,
            appendEntriesPeriod=0.05,
            connectionRetryTime=0.2,
            leaderFallbackTimeout=1.0,
        )

    def start(self, n: str, log_restart: bool = True) -> None:
        """Start node ``n`` (again)."""
        others = [a for m, a in self.addr.items() if m != n]
        node = Counter(self.addr[n], others, self._conf())
        self.nodes[n] = node
        # What a new node shows (its journal's first entry counts as committed).
        self.last[n] = now = self.observe(node)
        if log_restart:
            self._emit(
                "Restart",
                {"node": n},
                {f"term[{n}]": now[0], f"role[{n}]": now[1], f"votedFor[{n}]": now[2],
                 f"commitIndex[{n}]": now[3]},
            )  # fmt: skip

    def stop(self, n: str) -> None:
        """Stop node ``n`` (its sockets closed, its state gone)."""
        node = self.nodes[n]
        assert node is not None
        node.destroy()
        self.nodes[n] = None

    def observe(self, node: Counter) -> tuple[int, str, str | None, int]:
        """(term, role, vote, commit index) of a node, from its private state."""
        voted = node._SyncObj__votedForNodeId
        return (
            int(node._SyncObj__raftCurrentTerm),
            ROLES[int(node._SyncObj__raftState)],
            self.name.get(voted) if voted is not None else None,
            int(node._SyncObj__raftCommitIndex),
        )

    def tick(self, seconds: float) -> None:
        """Tick every running node in turn for ``seconds``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for n in NAMES:
                node = self.nodes[n]
                if node is None:
                    continue
                node.doTick(0.005)
                self._diff(n, self.observe(node))

    def _diff(self, n: str, now: tuple[int, str, str | None, int]) -> None:
        term0, role0, vote0, commit0 = self.last[n]
        term, role, vote, commit = now
        if term > term0:
            if vote == n and role == "Candidate":
                if term > term0 + 1:
                    self._emit(
                        "UpdateTerm", {"node": n, "term": term - 1}, {f"term[{n}]": term - 1}
                    )
                seen = {f"term[{n}]": term, f"role[{n}]": role, f"votedFor[{n}]": n}
                self._emit("Timeout", {"node": n}, seen)
            else:
                seen = {f"term[{n}]": term, f"votedFor[{n}]": None}
                self._emit("UpdateTerm", {"node": n, "term": term}, seen)
                role0, vote0 = "Follower", None
        if vote is not None and vote != n and (vote != vote0 or term != term0):
            self._emit("Vote", {"node": n, "candidate": vote}, {f"votedFor[{n}]": vote})
        if role != role0 and not (role == "Candidate" and term > term0):
            event = {
                "Leader": "BecomeLeader",
                "Follower": "StepDown" if role0 == "Leader" else "BecomeFollower",
            }.get(role)
            if event is not None:
                self._emit(event, {"node": n}, {f"role[{n}]": role})
        if commit > commit0:
            self._emit("AdvanceCommit", {"node": n, "index": commit}, {f"commitIndex[{n}]": commit})
        self.last[n] = now

    def _emit(self, event: str, params: dict[str, Any], state: dict[str, Any]) -> None:
        self.out.write(json.dumps({"event": event, "params": params, "state": state}) + "\n")
        self.out.flush()

    def leader(self) -> str | None:
        """The node that is leader now, if any."""
        for n in NAMES:
            node = self.nodes[n]
            if node is not None and self.observe(node)[1] == "Leader":
                return n
        return None

    def close(self) -> None:
        """Stop every node."""
        for n in NAMES:
            if self.nodes[n] is not None:
                self.stop(n)
        self.out.close()


def run(
    log: Path, seconds: float = 3.0, restart: bool = False, commands: int = 3
) -> dict[str, Any]:
    """One run: elect, replicate ``commands`` increments, optionally stop and restart
    the leader, elect again.  Returns what happened (for the test's own checks)."""
    cluster = Cluster(log)
    info: dict[str, Any] = {"restarted": None}
    try:
        deadline = time.monotonic() + seconds
        while cluster.leader() is None and time.monotonic() < deadline:
            cluster.tick(0.05)
        leader = cluster.leader()
        info["first_leader"] = leader
        if leader is not None:
            node = cluster.nodes[leader]
            assert node is not None
            for _ in range(commands):
                node.incr(sync=False)
            cluster.tick(0.5)
            if restart:
                cluster.stop(leader)
                cluster.tick(1.2)
                cluster.start(leader)
                info["restarted"] = leader
                cluster.tick(1.5)
        info["final_leader"] = cluster.leader()
    finally:
        cluster.close()
    return info
