"""Breadth-first exploration with several worker processes, identical to one worker.

The visited set is partitioned by fingerprint: worker ``w`` owns the fingerprints with
``fp % N == w``.  Exploration goes level by level:

1. every worker expands its frontier (states in global-ordinal order) and sends each
   owner the (fingerprint, key) of its in-constraint successors, where ``key =
   (ordinal of the parent, index of the successor)``;
2. each owner keeps, per fingerprint it has not seen, the smallest key: that is the
   (parent, successor) through which one-worker BFS discovers the state first;
3. the winners' generators check invariants and keep the states (only the excess
   over an even share moves between workers, so pickling stays rare);
4. the coordinator sorts the level's keys and numbers the new states, which reproduces
   one-worker BFS's ordinals exactly.

So parent pointers, counts, depth and counterexamples equal those of a single worker.
A stop (violation, deadlock) is resolved at the end of the level as the earliest event
in one-worker order, and the distinct and generated counts are cut to that point.
Per-action coverage after a stop counts the whole level (documented, not exact).
"""

from __future__ import annotations

import contextlib
import heapq
import multiprocessing as mp
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from checker.errors import EvaluationError
from checker.fingerprint import StateFingerprinter
from checker.model import Model
from checker.result import Stats, Verdict

Key = tuple[int, int]
#: A frontier entry: (ordinal, state, per-variable fingerprints).
Entry = tuple[int, Any, tuple[int, ...]]

_NO_KEY: Key = (1 << 62, 1 << 62)


class _Stopped(Exception):
    """The coordinator stopped the run while this worker waited for a phase."""


def _expect(conn: Connection, tag: str) -> Any:
    """The payload of the next command, which must be ``tag`` (or a stop)."""
    msg = conn.recv()
    if msg[0] == "stop":
        raise _Stopped
    assert msg[0] == tag, (msg[0], tag)
    return msg[1]


class _RemoteError(Exception):
    """An EvaluationError raised in a worker, carried back as text."""


def _worker(
    w: int,
    n: int,
    model: Model,
    symmetry: bool,
    deadlock: bool,
    inboxes: list[Any],
    conn: Connection,
) -> None:
    """One worker process: owns fingerprints ``fp % n == w`` and expands their states."""
    # Ctrl-C reaches the whole process group: the coordinator handles it (reports
    # incomplete and stops the workers), so workers must not die with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rens = model.renamings if symmetry else [{}]
    inits = model.initial_states()
    variables = model.variables
    fpr = StateFingerprinter(len(variables(inits[0])), rens)
    successors = model.successors
    within = model.within
    violated = model.violated_invariant
    inbox = inboxes[w]
    visited: set[int] = set()
    # Fingerprints this worker already submitted to other owners: they are visited
    # there, whoever won them, so they need never cross the pipe again.
    remote_seen: set[int] = set()
    frontier: list[Entry] = []
    nact = len(model.action_names)

    stash: dict[str, list[Any]] = {}

    def receive(tag: str) -> list[Any]:
        # Peers run ahead: a message of a later phase may arrive before the last
        # message of this one, so keep it for later.
        got = stash.pop(tag, [])
        while len(got) < n:
            t, payload = inbox.get()
            if t == tag:
                got.append(payload)
            else:
                stash.setdefault(t, []).append(payload)
        return got

    while True:
        cmd = conn.recv()
        op = cmd[0]
        if op == "stop":
            return
        if op == "seed":
            # Initial states this worker owns (already deduplicated, numbered).
            for ordinal, state, fps, fp in cmd[1]:
                visited.add(fp)
                frontier.append((ordinal, state, fps))
            conn.send(("ok",))
            continue
        assert op == "level"
        try:
            # -- 1. expand ------------------------------------------------------------
            generated = 0
            act_gen = [0] * nact
            deadlock_key: Key | None = None
            cands: dict[int, tuple[Key, Any, tuple[int, ...], int]] = {}
            for ordinal, state, pfps in frontier:
                try:
                    succ = successors(state)
                except EvaluationError as exc:
                    raise _RemoteError(str(exc), ordinal) from None
                if not succ:
                    if deadlock and deadlock_key is None:
                        deadlock_key = (ordinal, -1)
                    continue
                pvals = variables(state)
                for k, (ai, _params, t) in enumerate(succ):
                    generated += 1
                    act_gen[ai] += 1
                    try:
                        ok = within(t)
                    except EvaluationError as exc:
                        raise _RemoteError(str(exc), ordinal) from None
                    if not ok:
                        continue
                    fp, fps = fpr.child(variables(t), pvals, pfps)
                    if fp % n == w:
                        if fp in visited:
                            continue
                    elif fp in remote_seen:
                        # Submitted in an earlier level: its owner has it by now.
                        continue
                    old = cands.get(fp)
                    if old is None or (ordinal, k) < old[0]:
                        cands[fp] = ((ordinal, k), t, fps, ai)
            outgoing: list[list[tuple[int, Key]]] = [[] for _ in range(n)]
            for fp, (key, _, _, _) in cands.items():
                o = fp % n
                outgoing[o].append((fp, key))
                if o != w and not cmd[1]:
                    remote_seen.add(fp)
            for o in range(n):
                inboxes[o].put(("submit", (w, outgoing[o])))
            conn.send(("expanded", generated, act_gen, deadlock_key))
            # -- 2. own: decide winners -------------------------------------------------
            best: dict[int, tuple[Key, int]] = {}
            for submitter, items in receive("submit"):
                for fp, key in items:
                    if fp in visited:
                        continue
                    old_best = best.get(fp)
                    if old_best is None or key < old_best[0]:
                        best[fp] = (key, submitter)
            limited = cmd[1]
            won: list[list[int]] = [[] for _ in range(n)]
            for fp, (_, submitter) in best.items():
                won[submitter].append(fp)
                if not limited:
                    visited.add(fp)
            for o in range(n):
                inboxes[o].put(("won", won[o]))
            # -- 3. check the winners; they stay here unless the coordinator rebalances --
            act_new = [0] * nact
            violation: tuple[Key, str] | None = None
            kept: list[tuple[Key, Any, tuple[int, ...]]] = []
            for fps_won in receive("won"):
                for fp in fps_won:
                    key, t, fps, ai = cands[fp]
                    act_new[ai] += 1
                    if limited:
                        continue
                    try:
                        bad = violated(t)
                    except EvaluationError as exc:
                        # Not numbered yet: its parent's ordinal and its successor index.
                        raise _RemoteError(str(exc), key[0], key[1]) from None
                    if bad is not None and (violation is None or key < violation[0]):
                        violation = (key, bad)
                    kept.append((key, t, fps))
            new_here = sum(act_new)
            cands.clear()
            conn.send(("checked", new_here, act_new, violation, len(kept)))
            # Rebalance: the coordinator says how many states to send to whom.
            plan = _expect(conn, "balance")
            sends: list[list[tuple[Key, Any, tuple[int, ...]]]] = [[] for _ in range(n)]
            for target, count in plan:
                for _ in range(count):
                    sends[target].append(kept.pop())
            for o in range(n):
                inboxes[o].put(("ship", sends[o]))
            for part in receive("ship"):
                kept.extend(part)
            kept.sort(key=lambda e: e[0])
            incoming = kept
            conn.send(("keys", [e[0] for e in incoming]))
            # -- 4. number the new frontier ------------------------------------------
            ordinals = _expect(conn, "ordinals")
            # Keep the old frontier until the coordinator is done asking about it.
            old_frontier = frontier
            frontier = [(o, t, fps) for o, (_, t, fps) in zip(ordinals, incoming, strict=True)]
            conn.send(("numbered",))
            while True:
                cmd2 = conn.recv()
                if cmd2[0] == "count_before":
                    conn.send(("count", _generated_before(old_frontier, cmd2[1], successors)))
                    continue
                if cmd2[0] == "stop":
                    return
                assert cmd2[0] == "next"
                break
        except _RemoteError as exc:
            conn.send(("error", *exc.args))
            return
        except _Stopped:
            return


def _generated_before(
    frontier: list[Entry], key: Key, successors: Callable[[Any], list[Any]]
) -> int:
    """Successors one worker would have generated from ``frontier`` before stopping at
    ``key`` = (ordinal of the state being expanded, index of its successor)."""
    x, k = key
    total = 0
    for ordinal, state, _ in frontier:
        if ordinal < x:
            total += len(successors(state))
        elif ordinal == x:
            total += k + 1
    return total


def run_parallel(
    model: Model,
    workers: int,
    symmetry: bool,
    deadlock: bool,
    max_states: int | None,
    max_depth: int | None,
    timeout: float | None,
    stats: Stats,
    add: Callable[[int, int, int], int],
    record: Callable[[int, int], int],
    progress: Callable[[Stats], None] | None,
) -> tuple[Verdict, str | None, str | None, int]:
    """Explore ``model`` breadth-first with ``workers`` processes.

    ``add(fp, parent, choice)`` records an initial state in the caller's store and
    ``record(parent, choice)`` a later one (the workers hold the fingerprints);
    ordinals are assigned in one-worker order.  Returns (verdict, property, reason, ordinal).
    """
    ctx = mp.get_context("fork")
    rens = model.renamings if symmetry else [{}]
    inits = model.initial_states()
    variables = model.variables
    fpr = StateFingerprinter(len(variables(inits[0])), rens)
    seeds: list[list[tuple[int, Any, tuple[int, ...], int]]] = [[] for _ in range(workers)]
    seen_init: set[int] = set()
    for k, s in enumerate(inits):
        stats.generated += 1
        if not model.within(s):
            continue
        fp, fps = fpr.initial(variables(s))
        if fp in seen_init:
            continue
        seen_init.add(fp)
        ordinal = add(fp, -1, k)
        stats.distinct += 1
        stats.depth = 1
        try:
            bad = model.violated_invariant(s)
        except EvaluationError as exc:
            exc.ordinal = ordinal
            raise
        if bad is not None:
            return Verdict.VIOLATION, bad, None, ordinal
        seeds[fp % workers].append((ordinal, s, fps, fp))
        if max_states is not None and stats.distinct >= max_states:
            return Verdict.INCOMPLETE, None, f"max-states {max_states} reached", -1

    inboxes = [ctx.Queue() for _ in range(workers)]
    conns: list[Connection] = []
    procs = []
    for w in range(workers):
        parent_end, child_end = ctx.Pipe()
        p = ctx.Process(
            target=_worker,
            args=(w, workers, model, symmetry, deadlock, inboxes, child_end),
            daemon=True,
        )
        p.start()
        conns.append(parent_end)
        procs.append(p)
    deadline = time.perf_counter() + timeout if timeout else None
    try:
        for w in range(workers):
            conns[w].send(("seed", seeds[w]))
        for c in conns:
            c.recv()
        depth = 1
        frontier_size = stats.distinct
        while frontier_size:
            limited = max_depth is not None and depth >= max_depth
            for c in conns:
                c.send(("level", limited))
            expanded = [_recv(c, "expanded") for c in conns]
            gen_level = sum(e[1] for e in expanded)
            for e in expanded:
                for i, g in enumerate(e[2]):
                    stats.action_generated[i] += g
            deadlocks = [e[3] for e in expanded if e[3] is not None]
            checked = [_recv(c, "checked") for c in conns]
            for e in checked:
                for i, g in enumerate(e[2]):
                    stats.action_distinct[i] += g
            violations = [e[3] for e in checked if e[3] is not None]
            new_total = sum(e[1] for e in checked)
            plans = _balance([e[4] for e in checked])
            for c, plan in zip(conns, plans, strict=True):
                c.send(("balance", plan))
            keyed = [_recv(c, "keys")[1] for c in conns]
            merged = list(heapq.merge(*[[(key, w) for key in ks] for w, ks in enumerate(keyed)]))
            if limited:
                for c in conns:
                    c.send(("ordinals", []))
                    _recv(c, "numbered")
                stats.generated += gen_level
                if new_total:
                    return Verdict.INCOMPLETE, None, f"max-depth {max_depth} reached", -1
                if deadlocks:
                    x = min(deadlocks)
                    return _stop_deadlock(x, conns, stats, gen_level)
                return Verdict.OK, None, None, -1
            # Number the new states in one-worker order.
            ordinals: list[list[int]] = [[] for _ in range(workers)]
            base = stats.distinct
            first_ordinal: dict[Key, int] = {}
            for rank, (key, w) in enumerate(merged):
                ordinals[w].append(base + rank)
                first_ordinal[key] = base + rank
            for w, c in enumerate(conns):
                c.send(("ordinals", ordinals[w]))
            for c in conns:
                _recv(c, "numbered")
            # The earliest event of the level, in one-worker order, stops the run.
            event_key = min(list(deadlocks) + [v[0] for v in violations], default=None)
            if event_key is not None:
                keep = [key for key, _ in merged if key <= event_key]
                for key in keep:
                    record(key[0], key[1])
                stats.distinct += len(keep)
                if keep:
                    stats.depth = depth + 1
                stats.generated += _count_before(conns, event_key)
                if event_key[1] == -1:
                    return Verdict.DEADLOCK, None, None, event_key[0]
                prop = next(v[1] for v in violations if v[0] == event_key)
                return Verdict.VIOLATION, prop, None, first_ordinal[event_key]
            for key, _ in merged:
                record(key[0], key[1])
            stats.generated += gen_level
            stats.distinct += len(merged)
            if merged:
                depth += 1
                stats.depth = depth
            frontier_size = len(merged)
            stats.queue = frontier_size
            stats.queue_peak = max(stats.queue_peak, frontier_size)
            for c in conns:
                c.send(("next",))
            if progress is not None:
                progress(stats)
            if max_states is not None and stats.distinct >= max_states:
                return Verdict.INCOMPLETE, None, f"max-states {max_states} reached", -1
            if deadline is not None and time.perf_counter() >= deadline:
                return Verdict.INCOMPLETE, None, f"timeout {timeout}s reached", -1
        return Verdict.OK, None, None, -1
    except KeyboardInterrupt:
        return Verdict.INCOMPLETE, None, "interrupted", -1
    finally:
        for c in conns:
            with contextlib.suppress(OSError, BrokenPipeError):
                c.send(("stop",))
        for p in procs:
            p.join(timeout=2)
            if p.is_alive():
                p.terminate()


def _balance(counts: list[int]) -> list[list[tuple[int, int]]]:
    """Transfers [(target, count)] per worker that even out the next frontier.

    New states stay with the worker that generated them (shipping a state costs a
    pickle round trip); only the excess over an even share moves.
    """
    n = len(counts)
    total = sum(counts)
    share = [total // n + (1 if w < total % n else 0) for w in range(n)]
    excess = [(w, counts[w] - share[w]) for w in range(n) if counts[w] > share[w]]
    deficit = [[w, share[w] - counts[w]] for w in range(n) if counts[w] < share[w]]
    plans: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    # Small imbalances are not worth a transfer.
    if not total or max(counts) - min(counts) <= max(64, total // (8 * n)):
        return plans
    d = 0
    for w, extra in excess:
        while extra > 0 and d < len(deficit):
            take = min(extra, deficit[d][1])
            plans[w].append((deficit[d][0], take))
            extra -= take
            deficit[d][1] -= take
            if deficit[d][1] == 0:
                d += 1
    return plans


class _WorkerException(Exception):
    """An exception raised in a worker process, carried back as its message."""


def _recv(conn: Connection, tag: str) -> Any:
    msg = conn.recv()
    if msg[0] == "error":
        text = msg[1]
        ordinal = msg[2] if len(msg) > 2 else -1
        where = text.partition(" raised ")[0]
        exc = EvaluationError(where, _WorkerException(text))
        exc.args = (text,)  # the worker's own "X raised Type: message"
        exc.ordinal = ordinal if ordinal >= 0 else None
        exc.extra_choice = msg[3] if len(msg) > 3 else None
        raise exc
    assert msg[0] == tag, (msg[0], tag)
    return msg


def _count_before(conns: list[Connection], key: Key) -> int:
    for c in conns:
        c.send(("count_before", key))
    return sum(_recv(c, "count")[1] for c in conns)


def _stop_deadlock(
    key: Key, conns: list[Connection], stats: Stats, gen_level: int
) -> tuple[Verdict, str | None, str | None, int]:
    stats.generated -= gen_level
    stats.generated += _count_before(conns, key)
    return Verdict.DEADLOCK, None, None, key[0]
