"""raft.tla with a probe invariant: no server commits beyond index 1 (issue 32).

Breadth-first search violates it (3 servers, MaxLogLen=2) in 20 actions; a random
walk rarely gets there, because the steps that reset servers (Restart) are always
enabled.  ``python -m bench.hunt`` times ``mcheck simulate`` (plain and ``--swarm``)
on it beside the breadth-first run.
"""

from __future__ import annotations

from checker import invariant
from mcheck_shipped.specs.raft import Raft, RaftState


class RaftCommitProbe(Raft):
    """raft.tla plus the probe."""

    name = "raft_commit_probe"

    @invariant
    def CommitAtMostOne(self, s: RaftState) -> bool:
        """No server's commitIndex exceeds 1."""
        return all(c <= 1 for c in s.commitIndex.values())
