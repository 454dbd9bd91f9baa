"""``python -m bench.pysyncobj_log OUT.ndjson N``: a long log of a real pysyncobj run.

How ``bench/data/pysyncobj-12k.ndjson.gz`` was written (about 25 minutes: pysyncobj's
timeouts are wall-clock): three pysyncobj nodes (``tests/pysyncobj_harness.py``, no
fork of its code) elect a leader, replicate three increments, then the leader is
stopped and started again with an empty in-memory journal; round after round, until
the log holds ``N`` events.  The log is what the harness saw, nothing made up.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.pysyncobj_harness import Cluster


def write(log: Path, target: int) -> int:
    """Run rounds until ``log`` holds at least ``target`` events; return how many."""
    cluster = Cluster(log)
    events = 0
    try:
        while events < target:
            deadline = time.monotonic() + 3
            while cluster.leader() is None and time.monotonic() < deadline:
                cluster.tick(0.05)
            leader = cluster.leader()
            if leader is not None:
                node = cluster.nodes[leader]
                assert node is not None
                for _ in range(3):
                    node.incr(sync=False)
                cluster.tick(0.3)
                cluster.stop(leader)
                cluster.tick(0.8)
                cluster.start(leader)
                cluster.tick(0.3)
            cluster.out.flush()
            with log.open() as fh:
                events = sum(1 for _ in fh)
    finally:
        cluster.close()
    return events


if __name__ == "__main__":
    print(write(Path(sys.argv[1]), int(sys.argv[2])), "events")
