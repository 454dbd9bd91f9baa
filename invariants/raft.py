"""Raft safety invariants, written once for every Raft-shaped spec.

Each takes the spec's per-server maps (or any mapping from server to value), so a spec
states an invariant by naming its own variables::

    @invariant
    def ElectionSafety(self, s):
        return election_safety(s.state, s.currentTerm)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

LEADER = "Leader"


def election_safety(
    state: Mapping[Any, Any], current_term: Mapping[Any, int], leader: Any = LEADER
) -> bool:
    """At most one leader per term: no two servers are leaders with the same term."""
    terms = [current_term[i] for i, role in state.items() if role == leader]
    return len(terms) == len(set(terms))


def committed_logs_agree(log: Mapping[Any, Sequence[Any]], commit_index: Mapping[Any, int]) -> bool:
    """Committed entries agree: for every pair of servers and every index up to both
    commit indexes and both log lengths, the two logs hold the same entry."""
    servers = sorted(log.keys())
    for i, j in combinations(servers, 2):
        li, lj = log[i], log[j]
        upto = min(commit_index[i], commit_index[j], len(li), len(lj))
        if li[:upto] != lj[:upto]:
            return False
    return True
