"""HDDS-17579: a new OM leader reports LEADER_AND_READY while entries of the previous
term are still queued for apply, so default reads miss acknowledged writes.

Mechanism (Ozone OM on Ratis 3).  ``OzoneManagerRatisServer.getLeaderStatus`` answers
LEADER_AND_READY as soon as the Ratis division is leader-ready.  Ratis sets that flag
when the StateMachineUpdater *passes* the new leader's startup configuration entry
(``LeaderStateImpl.checkReady``), and the updater counts an entry as applied once
``applyTransaction`` has *returned its future*.  ``OzoneManagerStateMachine``'s
``applyTransaction`` only queues the entry on the single OM apply executor.  So a node
whose executor has a backlog when leadership is transferred to it becomes "ready"
while writes of the previous term, already acknowledged to clients by the previous
leader, are not yet in its table cache: ``getKey`` answers KEY_NOT_FOUND.  The patch
also requires that the term of OM's own last applied index (advanced after the double
buffer flushes) equals the current term.

Model (the brief ``om_leader_ready_before_apply``): 1-based indices (0 = none); three
OMs; one global log of entries ``(term, kind, key)`` of which each OM holds a prefix;
leadership moves only to an OM holding the whole log (admin transfer); the table cache
and DB are one set ``visible``; the double buffer is one ``Flush`` step; a client's
write is acknowledged when the accepting leader executes it.  ``Read`` is the
observable form (ghost ``staleRead``).  Writes are checked too: a key is created in a
bucket (``BUCKETS``, one by default), and the leader validates a key create against
its local cache before submitting it (``preExecute``), so a stale cache answers
BUCKET_NOT_FOUND for a bucket whose creation was acknowledged (ghost
``staleReject``).  Variants: ``bug`` (LEADER_AND_READY iff Ratis leader-ready),
``fix`` (also require ``term(OM last applied index) = term``), and two wrong patches
kept so the checks show they are caught: ``mutant_reads_only`` (the new status gates
reads, writes still trust Ratis) and ``mutant_executed_index`` (the check uses the
executor's last *executed* index instead of OM's last applied index, which advances
only after the double buffer flushes: the cache is then complete but the DB that
KeyDeletingService and DirectoryDeletingService scan once the leader is ready is not).

Abstractions and soundness: no truncation or divergent logs (the report's trigger, an
admin transfer, needs a caught-up target, and the bug needs only committed entries);
``OmLastApplied`` folds flush callbacks and ``notifyTermIndexUpdated`` skipping over
configuration entries into one prefix rule (the property HDDS-10546 established and
the patch relies on); one bucket and one key suffice (more only add interleavings of
the same window).

Initial state: o1 leads term 1 with only its startup entry, committed and applied
everywhere; bounds ``MAX_TERM=2``, ``MAX_LOG=4`` (entries, startup entries included),
no restarts.

The report's story (``bug``, NoStaleRead, 11 actions; the page's first row): o1 accepts
the creation of bucket b1, replicates it to o2, commits and applies it, and executes it,
so the client's write is acknowledged (actions 1-5); leadership is transferred to o2,
which holds b1 in its log, not yet applied (6); o2 replicates its startup entry and
commits both, and its Ratis apply passes b1 (only queued on the OM executor) and then
the startup entry, so Ratis reports it leader-ready and OM answers LEADER_AND_READY
(7-10); a default read of b1 at o2 misses the acknowledged bucket (11).

Results (engine, pinned in ``tests/test_seed_ratis.py``): ``bug`` lets a Read observe the
stale answer in 11 actions (the story above) and refuses a key create for an
acknowledged bucket in 11; shorter, its bookkeeping invariants fail first:
NewLeaderReadyOnlyAfterPreviousTermApplied in 7 actions (no write acknowledged yet) and
ReadyLeaderServesAckedWrites in 10; ``fix`` holds every property (also with one restart);
``mutant_reads_only`` fails NoStaleWriteRejection and ``mutant_executed_index`` fails
NewLeaderReadyOnlyAfterPreviousTermFlushed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from immutables import Map

from checker import Spec, Story, action, always_eventually, invariant, model_values
from checker.values import ModelValue, put

CONF, WRITE = "CONF", "WRITE"
NOT_LEADER, READY, NOT_READY = "NOT_LEADER", "LEADER_AND_READY", "LEADER_AND_NOT_READY"
OmMap = Map[ModelValue, Any]


class LogEntry(NamedTuple):
    """A Raft log entry: its term, CONF (startup/configuration) or WRITE, and the
    bucket or key the write creates."""

    term: int
    kind: str
    key: ModelValue | None


class OmState(NamedTuple):
    """Raft (term, leader, log, commit), Ratis apply, the OM executor and cache."""

    term: int
    leader: ModelValue | None
    log: tuple[LogEntry, ...]
    logLen: OmMap
    commit: OmMap
    raApplied: OmMap
    applyQueue: OmMap
    executed: OmMap
    visible: OmMap
    flushed: OmMap
    ratisReady: OmMap
    startIndex: OmMap
    acked: frozenset[ModelValue]
    staleRead: bool
    staleReject: bool
    restarts: int


class OmLeaderReadyBeforeApply(Spec):
    """HDDS-17579: getLeaderStatus trusts Ratis leader-ready."""

    constants = {
        "OMS": model_values("o", 3, group="OMS"),
        "KEYS": model_values("k", 1, group="KEYS"),
        "BUCKETS": model_values("b", 1, group="BUCKETS"),
        "MAX_TERM": 2,
        "MAX_LOG": 4,
        "MAX_RESTARTS": 0,
    }
    variants = ("bug", "fix", "mutant_reads_only", "mutant_executed_index")
    # Over every property the shortest violation is the mechanism (a leader ready
    # before it applied, 7 actions); the report tells the stale read it causes.
    stories = {
        "bug": Story(
            check=("NoStaleRead",),
            about="a write the old leader acknowledged, leadership moved, a read on the "
            "ready new leader misses it",
        )
    }
    symmetry = ("OMS",)
    # Bounded terms and log: the model comes to rest once they are used up.
    check_deadlock = False
    # For the sanity liveness check: the fix must not keep a leader unready forever.
    fairness = dict.fromkeys(
        ("RatisApply", "Execute", "Flush", "Replicate", "AdvanceCommit", "LearnCommit"), "weak"
    )

    OMS: tuple[ModelValue, ...]
    KEYS: tuple[ModelValue, ...]
    BUCKETS: tuple[ModelValue, ...]
    MAX_TERM: int
    MAX_LOG: int
    MAX_RESTARTS: int

    def _map(self, value: Any) -> OmMap:
        return Map(dict.fromkeys(self.OMS, value))

    def init(self) -> list[OmState]:
        """o1 leads term 1; its startup entry is committed and applied everywhere."""
        o1 = self.OMS[0]
        return [
            OmState(
                term=1,
                leader=o1,
                log=(LogEntry(1, CONF, None),),
                logLen=self._map(1),
                commit=self._map(1),
                raApplied=self._map(1),
                applyQueue=self._map(()),
                executed=self._map(0),
                visible=self._map(frozenset()),
                flushed=self._map(0),
                ratisReady=put(self._map(False), o1, True),
                startIndex=put(self._map(0), o1, 1),
                acked=frozenset(),
                staleRead=False,
                staleReject=False,
                restarts=0,
            )
        ]

    # -- OM's view ----------------------------------------------------------------
    @staticmethod
    def om_last_applied(s: OmState, n: ModelValue, done: OmMap | None = None) -> int:
        """OM's last applied index: flushed data, and configuration entries once all
        before them is flushed (``done`` = executed instead of flushed: the mutant)."""
        base = s.flushed if done is None else done
        for j in range(base[n] + 1, s.raApplied[n] + 1):
            if s.log[j - 1].kind == WRITE:
                return j - 1
        return int(s.raApplied[n])

    def status(self, s: OmState, n: ModelValue) -> str:
        """OzoneManagerRatisServer.getLeaderStatus (the variant switch)."""
        if s.leader != n:
            return NOT_LEADER
        ready = bool(s.ratisReady[n])
        if self.variant in ("fix", "mutant_reads_only", "mutant_executed_index"):
            done = s.executed if self.variant == "mutant_executed_index" else None
            j = self.om_last_applied(s, n, done)
            ready = ready and (s.log[j - 1].term if j > 0 else 0) == s.term
        return READY if ready else NOT_READY

    def write_status(self, s: OmState, n: ModelValue) -> str:
        """The status a write request is gated on (only the mutant differs)."""
        if self.variant == "mutant_reads_only":
            if s.leader != n:
                return NOT_LEADER
            return READY if s.ratisReady[n] else NOT_READY
        return self.status(s, n)

    @staticmethod
    def bucket_of(k: ModelValue, buckets: tuple[ModelValue, ...], keys: tuple[Any, ...]) -> Any:
        """The bucket key k is created in (keys are spread over the buckets)."""
        return buckets[keys.index(k) % len(buckets)]

    # -- actions ------------------------------------------------------------------
    def _submit(self, s: OmState, obj: ModelValue) -> OmState | None:
        ldr = s.leader
        if ldr is None or any(e.key == obj for e in s.log) or len(s.log) >= self.MAX_LOG:
            return None
        log = (*s.log, LogEntry(s.term, WRITE, obj))
        return s._replace(log=log, logLen=put(s.logLen, ldr, len(log)))

    @action(over="BUCKETS", actor=lambda self, s, b: s.leader)
    def ClientCreateBucket(self, s: OmState, b: ModelValue) -> OmState | None:
        """A client creates bucket b through the ready leader."""
        if s.leader is None or self.write_status(s, s.leader) != READY:
            return None
        return self._submit(s, b)

    @action(over="KEYS", actor=lambda self, s, k: s.leader)
    def ClientWrite(self, s: OmState, k: ModelValue) -> OmState | None:
        """A client creates key k through the ready leader, which validates it
        against its local cache first (preExecute): no bucket, BUCKET_NOT_FOUND."""
        ldr = s.leader
        if ldr is None or self.write_status(s, ldr) != READY:
            return None
        if any(e.key == k for e in s.log):
            return None
        bucket = self.bucket_of(k, self.BUCKETS, self.KEYS)
        if bucket not in s.visible[ldr]:
            if bucket in s.acked and not s.staleReject:
                return s._replace(staleReject=True)  # refused for an acknowledged bucket
            return None
        return self._submit(s, k)

    @action(over=("OMS", "OMS"), actor=lambda self, s, ldr, f: f)
    def Replicate(self, s: OmState, ldr: ModelValue, f: ModelValue) -> OmState | None:
        """Follower f appends the leader's next entry."""
        if s.leader != ldr or s.logLen[f] >= s.logLen[ldr]:
            return None
        return s._replace(logLen=put(s.logLen, f, s.logLen[f] + 1))

    @action(over="OMS")
    def AdvanceCommit(self, s: OmState, ldr: ModelValue) -> OmState | None:
        """The leader commits the largest index of its term a majority holds."""
        if s.leader != ldr:
            return None
        best = s.commit[ldr]
        for i in range(s.commit[ldr] + 1, s.logLen[ldr] + 1):
            holders = sum(1 for n in self.OMS if s.logLen[n] >= i)
            if holders * 2 > len(self.OMS) and s.log[i - 1].term == s.term:
                best = i
        if best == s.commit[ldr]:
            return None
        return s._replace(commit=put(s.commit, ldr, best))

    @action(over="OMS")
    def LearnCommit(self, s: OmState, f: ModelValue) -> OmState | None:
        """f learns the leader's commit index (bounded by its log)."""
        if s.leader is None:
            return None
        new = max(s.commit[f], min(s.commit[s.leader], s.logLen[f]))
        if new == s.commit[f]:
            return None
        return s._replace(commit=put(s.commit, f, new))

    @action(over="OMS")
    def RatisApply(self, s: OmState, n: ModelValue) -> OmState | None:
        """StateMachineUpdater hands the next committed entry over: a WRITE is only
        queued (applyTransaction returns its future at once); passing the leader's
        startup entry makes Ratis leader-ready (checkReady -> notifyLeaderReady)."""
        if s.raApplied[n] >= s.commit[n]:
            return None
        i = s.raApplied[n] + 1
        entry = s.log[i - 1]
        if entry.kind == WRITE:
            s = s._replace(applyQueue=put(s.applyQueue, n, (*s.applyQueue[n], i)))
        elif s.leader == n and i == s.startIndex[n] and entry.term == s.term:
            s = s._replace(ratisReady=put(s.ratisReady, n, True))
        return s._replace(raApplied=put(s.raApplied, n, i))

    @action(over="OMS")
    def Execute(self, s: OmState, n: ModelValue) -> OmState | None:
        """The OM apply executor runs the next queued write into the table cache; the
        leader that accepted it answers the client."""
        queue = s.applyQueue[n]
        if not queue:
            return None
        i, rest = queue[0], queue[1:]
        key = s.log[i - 1].key
        acked = s.acked
        if s.leader == n and s.log[i - 1].term == s.term and key is not None:
            acked = acked | {key}
        return s._replace(
            applyQueue=put(s.applyQueue, n, rest),
            visible=put(s.visible, n, s.visible[n] | {key}),
            executed=put(s.executed, n, i),
            acked=acked,
        )

    @action(over="OMS")
    def Flush(self, s: OmState, n: ModelValue) -> OmState | None:
        """The double buffer flushes what was executed (updateLastAppliedIndex)."""
        if s.executed[n] <= s.flushed[n]:
            return None
        return s._replace(flushed=put(s.flushed, n, s.executed[n]))

    @action(over="OMS")
    def TransferLeadership(self, s: OmState, n: ModelValue) -> OmState | None:
        """Admin transfer (or election) to n, which holds the whole log; n appends its
        startup configuration entry and is not Ratis-ready yet."""
        if s.leader == n or s.logLen[n] != len(s.log):
            return None
        if s.term >= self.MAX_TERM or len(s.log) >= self.MAX_LOG:
            return None
        term = s.term + 1
        ready = s.ratisReady if s.leader is None else put(s.ratisReady, s.leader, False)
        log = (*s.log, LogEntry(term, CONF, None))
        return s._replace(
            term=term,
            leader=n,
            log=log,
            logLen=put(s.logLen, n, len(log)),
            startIndex=put(s.startIndex, n, len(log)),
            ratisReady=put(ready, n, False),
        )

    @action(over=("OMS", lambda self: (*self.BUCKETS, *self.KEYS)))
    def Read(self, s: OmState, n: ModelValue, k: ModelValue) -> OmState | None:
        """A default read of bucket or key k (getBucketInfo, getKeyInfo) served by a
        ready leader from its local cache."""
        if self.status(s, n) != READY:
            return None
        stale = s.staleRead or (k in s.acked and k not in s.visible[n])
        return s._replace(staleRead=stale)

    @action(over="OMS")
    def Restart(self, s: OmState, n: ModelValue) -> OmState | None:
        """n restarts: unflushed work is lost and replayed from OM's last applied index."""
        if s.restarts >= self.MAX_RESTARTS:
            return None
        flushed = s.flushed[n]
        keys = frozenset(e.key for e in s.log[:flushed] if e.kind == WRITE and e.key is not None)
        return s._replace(
            leader=None if s.leader == n else s.leader,
            applyQueue=put(s.applyQueue, n, ()),
            executed=put(s.executed, n, flushed),
            visible=put(s.visible, n, keys),
            raApplied=put(s.raApplied, n, self.om_last_applied(s, n)),
            ratisReady=put(s.ratisReady, n, False),
            restarts=s.restarts + 1,
        )

    # -- invariants -----------------------------------------------------------------
    @invariant
    def NewLeaderReadyOnlyAfterPreviousTermApplied(self, s: OmState) -> bool:
        """A LEADER_AND_READY OM has executed every write before its startup entry."""
        for n in self.OMS:
            if self.status(s, n) == READY:
                for e in s.log[: s.startIndex[n] - 1]:
                    if e.kind == WRITE and e.key not in s.visible[n]:
                        return False
        return True

    @invariant
    def NewLeaderReadyOnlyAfterPreviousTermFlushed(self, s: OmState) -> bool:
        """A LEADER_AND_READY OM has flushed to its DB every write before its startup
        entry (the leader-only deleting services scan the DB, not the cache)."""
        for n in self.OMS:
            if self.status(s, n) == READY:
                writes = [
                    i for i, e in enumerate(s.log[: s.startIndex[n] - 1], 1) if e.kind == WRITE
                ]
                if writes and s.flushed[n] < writes[-1]:
                    return False
        return True

    @invariant
    def ReadyLeaderServesAckedWrites(self, s: OmState) -> bool:
        """A default read on a LEADER_AND_READY OM sees every acknowledged write."""
        return all(s.acked <= s.visible[n] for n in self.OMS if self.status(s, n) == READY)

    @always_eventually
    def LeaderEventuallyReady(self, s: OmState) -> bool:
        """[]<>(leader = Nil \\/ Status(leader) = LEADER_AND_READY)."""
        return s.leader is None or self.status(s, s.leader) == READY

    @invariant
    def NoStaleRead(self, s: OmState) -> bool:
        """No served read missed an acknowledged key (the observable twin)."""
        return not s.staleRead

    @invariant
    def NoStaleWriteRejection(self, s: OmState) -> bool:
        """No write was refused for a bucket whose creation was acknowledged (the
        observable twin for writes)."""
        return not s.staleReject
