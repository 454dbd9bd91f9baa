"""A minimal hand-written BFS of raft.tla: plain tuples, a Python set, no engine.

It is the yardstick of ``make bench``: the same model as ``specs/raft.py``, written the
way one would write a one-off checker (server-indexed tuples, states stored whole in a
set), run in the same process, so mcheck's throughput can be quoted as a ratio that
survives a noisy machine.  Its distinct count must equal mcheck's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

F, C, L = 0, 1, 2  # Follower, Candidate, Leader
RVQ, RVP, AEQ, AEP = 0, 1, 2, 3  # message types

# State layout (all tuples indexed by server 0..n-1 where per server):
# 0 messages: frozenset of (msg, count); 1 elections: frozenset; 2 allLogs: frozenset
# 3 currentTerm 4 state 5 votedFor 6 log 7 commitIndex 8 votesResponded
# 9 votesGranted 10 voterLog (frozenset of (j, log)) 11 nextIndex 12 matchIndex


def _setn(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return (*t[:i], v, *t[i + 1 :])


def _with(m: Any, msgs: frozenset[Any]) -> frozenset[Any]:
    d = dict(msgs)
    d[m] = d.get(m, 0) + 1
    return frozenset(d.items())


def _without(m: Any, msgs: frozenset[Any]) -> frozenset[Any]:
    d = dict(msgs)
    n = d.get(m, 0)
    if n == 0:
        return msgs
    if n <= 1:
        del d[m]
    else:
        d[m] = n - 1
    return frozenset(d.items())


def _last_term(lg: tuple[Any, ...]) -> int:
    return lg[-1][0] if lg else 0


def successors(s: tuple[Any, ...], n: int, values: int) -> list[tuple[Any, ...]]:
    """Every successor of ``s``: the disjuncts of raft.tla's Next, in its order."""
    (msgs, elections, all_logs, term, role, voted, log, commit, vresp, vgrant, vlog, nxt, match) = s
    logs = set(log)
    if not logs <= all_logs:
        all_logs = all_logs | logs
    out: list[tuple[Any, ...]] = []
    servers = range(n)
    ones = (1,) * n
    zeros = (0,) * n
    e: frozenset[Any] = frozenset()

    def mk(**kw: Any) -> tuple[Any, ...]:
        v = [
            msgs,
            elections,
            all_logs,
            term,
            role,
            voted,
            log,
            commit,
            vresp,
            vgrant,
            vlog,
            nxt,
            match,
        ]
        for k, x in kw.items():
            v[_IDX[k]] = x
        return tuple(v)

    for i in servers:  # Restart
        out.append(
            mk(
                role=_setn(role, i, F),
                vresp=_setn(vresp, i, e),
                vgrant=_setn(vgrant, i, e),
                vlog=_setn(vlog, i, e),
                nxt=_setn(nxt, i, ones),
                match=_setn(match, i, zeros),
                commit=_setn(commit, i, 0),
            )
        )
    for i in servers:  # Timeout
        if role[i] in (F, C):
            out.append(
                mk(
                    role=_setn(role, i, C),
                    term=_setn(term, i, term[i] + 1),
                    voted=_setn(voted, i, -1),
                    vresp=_setn(vresp, i, e),
                    vgrant=_setn(vgrant, i, e),
                    vlog=_setn(vlog, i, e),
                )
            )
    for i in servers:  # RequestVote
        for j in servers:
            if role[i] == C and j not in vresp[i]:
                m = (RVQ, term[i], _last_term(log[i]), len(log[i]), i, j)
                out.append(mk(msgs=_with(m, msgs)))
    for i in servers:  # BecomeLeader
        if role[i] == C and len(vgrant[i]) * 2 > n:
            el = (term[i], i, log[i], vgrant[i], vlog[i])
            out.append(
                mk(
                    role=_setn(role, i, L),
                    nxt=_setn(nxt, i, (len(log[i]) + 1,) * n),
                    match=_setn(match, i, zeros),
                    elections=elections | {el},
                )
            )
    for i in servers:  # ClientRequest
        for v in range(values):
            if role[i] == L:
                out.append(mk(log=_setn(log, i, (*log[i], (term[i], v)))))
    for i in servers:  # AdvanceCommitIndex
        if role[i] == L:
            li = log[i]
            agree = [
                k
                for k in range(1, len(li) + 1)
                if (1 + sum(1 for x in servers if x != i and match[i][x] >= k)) * 2 > n
            ]
            nc = commit[i]
            if agree and li[max(agree) - 1][0] == term[i]:
                nc = max(agree)
            out.append(mk(commit=_setn(commit, i, nc)))
    for i in servers:  # AppendEntries
        for j in servers:
            if i != j and role[i] == L:
                li = log[i]
                ni = nxt[i][j]
                prev = ni - 1
                pterm = li[prev - 1][0] if prev > 0 else 0
                last = min(len(li), ni)
                ae: tuple[Any, ...] = (
                    AEQ,
                    term[i],
                    prev,
                    pterm,
                    li[ni - 1 : last],
                    li,
                    min(commit[i], last),
                    i,
                    j,
                )
                out.append(mk(msgs=_with(ae, msgs)))
    domain = sorted(m for m, _ in msgs)
    for m in domain:  # Receive
        r = _receive(s, m, mk, n)
        if r is not None:
            out.append(r)
    for m in domain:  # DuplicateMessage
        out.append(mk(msgs=_with(m, msgs)))
    for m in domain:  # DropMessage
        out.append(mk(msgs=_without(m, msgs)))
    return out


_IDX = {
    k: i
    for i, k in enumerate(
        [
            "msgs",
            "elections",
            "all_logs",
            "term",
            "role",
            "voted",
            "log",
            "commit",
            "vresp",
            "vgrant",
            "vlog",
            "nxt",
            "match",
        ]
    )
}


def _receive(
    s: tuple[Any, ...], m: tuple[Any, ...], mk: Callable[..., tuple[Any, ...]], n: int
) -> tuple[Any, ...] | None:
    (msgs, _, _, term, role, voted, log, commit, vresp, vgrant, vlog, nxt, match) = s
    mtype, mterm = m[0], m[1]
    i, j = m[-1], m[-2]
    if mterm > term[i]:
        return mk(term=_setn(term, i, mterm), role=_setn(role, i, F), voted=_setn(voted, i, -1))
    if mtype == RVQ:
        _, _, lterm, lindex, _, _ = m
        li = log[i]
        ok = lterm > _last_term(li) or (lterm == _last_term(li) and lindex >= len(li))
        grant = mterm == term[i] and ok and voted[i] in (-1, j)
        reply = (RVP, term[i], grant, li, i, j)
        nm = _without(m, _with(reply, msgs))
        if grant:
            return mk(voted=_setn(voted, i, j), msgs=nm)
        return mk(msgs=nm)
    if mtype == RVP:
        if mterm < term[i]:
            return mk(msgs=_without(m, msgs))
        granted, mlog = m[2], m[3]
        kw: dict[str, Any] = {"vresp": _setn(vresp, i, vresp[i] | {j}), "msgs": _without(m, msgs)}
        if granted:
            kw["vgrant"] = _setn(vgrant, i, vgrant[i] | {j})
            if all(k != j for k, _ in vlog[i]):
                kw["vlog"] = _setn(vlog, i, vlog[i] | {(j, mlog)})
        return mk(**kw)
    if mtype == AEQ:
        _, _, prev, pterm, entries, _mlog, mcommit, _, _ = m
        li = log[i]
        ok = prev == 0 or (0 < prev <= len(li) and pterm == li[prev - 1][0])
        if mterm < term[i] or (mterm == term[i] and role[i] == F and not ok):
            reply = (AEP, term[i], False, 0, i, j)
            return mk(msgs=_without(m, _with(reply, msgs)))
        if mterm == term[i] and role[i] == C:
            return mk(role=_setn(role, i, F))
        if not (mterm == term[i] and role[i] == F and ok):
            return None
        index = prev + 1
        if not entries or (len(li) >= index and li[index - 1][0] == entries[0][0]):
            reply = (AEP, term[i], True, prev + len(entries), i, j)
            return mk(commit=_setn(commit, i, mcommit), msgs=_without(m, _with(reply, msgs)))
        if len(li) >= index:
            return mk(log=_setn(log, i, li[:-1]))
        if len(li) == prev:
            return mk(log=_setn(log, i, (*li, entries[0])))
        return None
    # AEP
    if mterm < term[i]:
        return mk(msgs=_without(m, msgs))
    success, mmatch = m[2], m[3]
    nm = _without(m, msgs)
    if success:
        return mk(
            nxt=_setn(nxt, i, _setn(nxt[i], j, mmatch + 1)),
            match=_setn(match, i, _setn(match[i], j, mmatch)),
            msgs=nm,
        )
    return mk(nxt=_setn(nxt, i, _setn(nxt[i], j, max(nxt[i][j] - 1, 1))), msgs=nm)


def explore(n: int, max_term: int, max_log: int, max_msgs: int, values: int = 1) -> tuple[int, int]:
    """BFS over the bounded model; returns (distinct, generated)."""
    distinct, generated, _ = explore_with_depth(n, max_term, max_log, max_msgs, values)
    return distinct, generated


def explore_with_depth(
    n: int, max_term: int, max_log: int, max_msgs: int, values: int = 1
) -> tuple[int, int, int]:
    """BFS over the bounded model; returns (distinct, generated, depth), depth counted
    as TLC counts it (initial states are depth 1)."""
    e: frozenset[Any] = frozenset()
    init = (
        e,
        e,
        e,
        (1,) * n,
        (F,) * n,
        (-1,) * n,
        ((),) * n,
        (0,) * n,
        (e,) * n,
        (e,) * n,
        (e,) * n,
        ((1,) * n,) * n,
        ((0,) * n,) * n,
    )
    seen = {init}
    queue = deque([(init, 1)])
    generated = 1
    depth = 1
    while queue:
        s, d = queue.popleft()
        depth = max(depth, d)
        for t in successors(s, n, values):
            generated += 1
            msgs = t[0]
            if len(msgs) > max_msgs or any(c > 1 for _, c in msgs):
                continue
            if max(t[3]) > max_term or max(map(len, t[6])) > max_log:
                continue
            if t not in seen:
                seen.add(t)
                queue.append((t, d + 1))
    return len(seen), generated, depth
