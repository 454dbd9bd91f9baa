"""mini-Raft written the way a one-off checker would: server-indexed tuples, no engine.

The same model as :mod:`bench.mini_raft` (elections, one-entry replication, commit)
over plain tuples.  It serves three ways in ``make bench``, each the natural style of
its user: the plain baseline (a ``deque`` and a ``set`` of whole states, run in the
same process as mcheck), and the model handed to the Python peers, minicheck (a
``transitions`` function) and musil (one guarded ``Action`` per instance).  Its
distinct count must equal mcheck's, with and without symmetry.

State: ``(currentTerm, role, votedFor, votesGranted, log, commitIndex)``, each a tuple
with one entry per server; ``votedFor`` is a server index or -1, ``votesGranted`` a
frozenset of indices, a log a tuple of entry terms.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from itertools import permutations
from typing import Any

FOLLOWER, CANDIDATE, LEADER = 0, 1, 2
State = tuple[tuple[Any, ...], ...]
Step = Callable[[State], State | None]


def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return (*t[:i], v, *t[i + 1 :])


def _last_term(lg: tuple[int, ...]) -> int:
    return lg[-1] if lg else 0


def _step_down(s: State, i: int, new_term: int) -> State:
    """Server i learns ``new_term`` and becomes a follower that has not voted."""
    term, role, voted, granted, log, commit = s
    return (
        _set(term, i, new_term),
        _set(role, i, FOLLOWER),
        _set(voted, i, -1),
        granted,
        log,
        commit,
    )


class MiniRaftPlain:
    """The model for ``n`` servers, terms up to ``max_term``, logs up to ``max_log``."""

    def __init__(self, n: int = 3, max_term: int = 4, max_log: int = 3) -> None:
        self.n = n
        self.max_term = max_term
        self.max_log = max_log
        self.quorum = n // 2 + 1

    def init(self) -> State:
        """Every server a follower in term 0 with an empty log."""
        n = self.n
        return ((0,) * n, (FOLLOWER,) * n, (-1,) * n, (frozenset(),) * n, ((),) * n, (0,) * n)

    # -- actions (the same order and guards as bench.mini_raft) ---------------------------
    def timeout(self, s: State, i: int) -> State | None:
        """Server i starts an election in the next term."""
        term, role, voted, granted, log, commit = s
        if role[i] == LEADER or term[i] >= self.max_term:
            return None
        return (
            _set(term, i, term[i] + 1),
            _set(role, i, CANDIDATE),
            _set(voted, i, i),
            _set(granted, i, frozenset((i,))),
            log,
            commit,
        )

    def request_vote(self, s: State, i: int, j: int) -> State | None:
        """Candidate i asks j for its vote (one atomic exchange)."""
        term, role, voted, granted, log, commit = s
        if role[i] != CANDIDATE or j in granted[i]:
            return None
        if term[j] > term[i]:  # the candidate learns a newer term and steps down
            return _step_down(s, i, term[j])
        changed = term[j] < term[i]
        if changed:
            term = _set(term, j, term[i])
            role = _set(role, j, FOLLOWER)
            voted = _set(voted, j, -1)
        li, lj = log[i], log[j]
        up_to_date = _last_term(li) > _last_term(lj) or (
            _last_term(li) == _last_term(lj) and len(li) >= len(lj)
        )
        if voted[j] in (-1, i) and up_to_date:
            return (term, role, _set(voted, j, i), _set(granted, i, granted[i] | {j}), log, commit)
        return (term, role, voted, granted, log, commit) if changed else None

    def become_leader(self, s: State, i: int) -> State | None:
        """A candidate with a quorum of votes leads its term."""
        term, role, voted, granted, log, commit = s
        if role[i] != CANDIDATE or len(granted[i]) < self.quorum:
            return None
        return (term, _set(role, i, LEADER), voted, granted, log, commit)

    def client_request(self, s: State, i: int) -> State | None:
        """The leader appends an entry of its term."""
        term, role, voted, granted, log, commit = s
        if role[i] != LEADER or len(log[i]) >= self.max_log:
            return None
        return (term, role, voted, granted, _set(log, i, (*log[i], term[i])), commit)

    def append_entry(self, s: State, i: int, j: int) -> State | None:
        """Leader i sends j one entry (or, on a mismatch, makes j drop its last one)."""
        term, role, voted, granted, log, commit = s
        if role[i] != LEADER:
            return None
        if term[j] > term[i]:  # a stale leader steps down
            return _step_down(s, i, term[j])
        li, lj = log[i], log[j]
        n = len(lj)
        if n > 0 and (n > len(li) or lj[n - 1] != li[n - 1]):
            new = lj[:-1]
        elif n < len(li):
            new = (*lj, li[n])
        else:
            new = lj
        new_commit = commit[j]
        if len(new) <= len(li) and (not new or new[-1] == li[len(new) - 1]):
            new_commit = max(commit[j], min(commit[i], len(new)))
        if term[j] == term[i] and role[j] == FOLLOWER and new == lj and new_commit == commit[j]:
            return None
        if term[j] < term[i]:
            voted = _set(voted, j, -1)
        return (
            _set(term, j, term[i]),
            _set(role, j, FOLLOWER),
            voted,
            granted,
            _set(log, j, new),
            _set(commit, j, new_commit),
        )

    def advance_commit(self, s: State, i: int) -> State | None:
        """The leader commits the longest prefix of its term that a quorum holds."""
        term, role, voted, granted, log, commit = s
        if role[i] != LEADER:
            return None
        li = log[i]
        for k in range(len(li), commit[i], -1):
            if li[k - 1] != term[i]:
                break
            holders = sum(1 for lg in log if len(lg) >= k and lg[:k] == li[:k])
            if holders >= self.quorum:
                return (term, role, voted, granted, log, _set(commit, i, k))
        return None

    def actions(self) -> list[tuple[str, Step]]:
        """Every action instance: (label, state -> successor or None), in spec order."""
        servers = range(self.n)
        out: list[tuple[str, Step]] = []

        def bind(f: Callable[..., State | None], *args: int) -> Step:
            return lambda s: f(s, *args)

        pairs = [(i, j) for i in servers for j in servers if i != j]
        for name, f, arity in (
            ("Timeout", self.timeout, 1),
            ("RequestVote", self.request_vote, 2),
            ("BecomeLeader", self.become_leader, 1),
            ("ClientRequest", self.client_request, 1),
            ("AppendEntry", self.append_entry, 2),
            ("AdvanceCommit", self.advance_commit, 1),
        ):
            params = pairs if arity == 2 else [(i,) for i in servers]
            out += [(f"{name}({','.join(map(str, p))})", bind(f, *p)) for p in params]
        return out

    # -- properties -------------------------------------------------------------------
    def election_safety(self, s: State) -> bool:
        """At most one leader per term."""
        term, role = s[0], s[1]
        leaders = [term[i] for i in range(self.n) if role[i] == LEADER]
        return len(leaders) == len(set(leaders))

    def committed_agree(self, s: State) -> bool:
        """Committed prefixes never disagree."""
        log, commit = s[4], s[5]
        done = [log[i][: commit[i]] for i in range(self.n)]
        return all(a[: min(len(a), len(b))] == b[: min(len(a), len(b))] for a in done for b in done)

    def invariants(self) -> dict[str, Callable[[State], bool]]:
        """The invariants by name."""
        return {"ElectionSafety": self.election_safety, "CommittedAgree": self.committed_agree}

    # -- symmetry -------------------------------------------------------------------------
    def canonical(self) -> Callable[[State], State]:
        """The least relabelling of a state over all server permutations (exact orbits)."""
        perms = list(permutations(range(self.n)))

        def relabel(s: State, p: tuple[int, ...]) -> State:
            term, role, voted, granted, log, commit = s
            inv = [0] * len(p)
            for new, old in enumerate(p):
                inv[old] = new
            return (
                tuple(term[k] for k in p),
                tuple(role[k] for k in p),
                tuple(inv[voted[k]] if voted[k] >= 0 else -1 for k in p),
                tuple(frozenset(inv[x] for x in granted[k]) for k in p),
                tuple(log[k] for k in p),
                tuple(commit[k] for k in p),
            )

        def key(s: State) -> Any:
            return (s[0], s[1], s[2], tuple(tuple(sorted(g)) for g in s[3]), s[4], s[5])

        def canon(s: State) -> State:
            return min((relabel(s, p) for p in perms), key=key)

        return canon

    # -- the plain baseline ------------------------------------------------------------
    def successors(self, s: State) -> Iterator[State]:
        """The successors of a state (stuttering steps included)."""
        for _, step in self.actions():
            t = step(s)
            if t is not None:
                yield t


def plain_bfs(model: MiniRaftPlain, symmetry: bool = False) -> tuple[int, int, int]:
    """The yardstick: breadth-first over whole states in a set, invariants on every
    new state.  Returns (distinct, generated, depth)."""
    steps = [step for _, step in model.actions()]
    invs = list(model.invariants().values())
    canon = model.canonical() if symmetry else None
    init = model.init()
    if canon is not None:
        init = canon(init)
    seen = {init}
    queue: deque[tuple[State, int]] = deque([(init, 1)])
    generated = 1
    depth = 1
    while queue:
        s, d = queue.popleft()
        for step in steps:
            t = step(s)
            if t is None:
                continue
            generated += 1
            if canon is not None:
                t = canon(t)
            if t in seen:
                continue
            seen.add(t)
            if not all(inv(t) for inv in invs):
                raise AssertionError("mini-Raft invariant violated")
            queue.append((t, d + 1))
            if d + 1 > depth:
                depth = d + 1
    return len(seen), generated, depth
