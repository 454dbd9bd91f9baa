"""HDDS-16454: a new SCM leader whose apply lags its commit starts the datanode
protocol server at once, so reports for committed-but-unapplied containers are dropped.

Mechanism (Ozone SCM HA).  In HA an SCM defers starting its ``DatanodeProtocolServer``
to ``SCMStateMachine.tryStartDNServerAndRefreshSafeMode``, which runs at most once per
process (``isStateMachineReady``) and is called from ``notifyLeaderChanged``,
``applyTransaction`` and ``notifyTermIndexUpdated``.  Its gate is
``isLeader() || isFollowerCaughtUp()``.  The follower half compares the last applied
index with ``leaderCommitIndexOnStart``, the leader's commit index captured when this
SCM (re)joined.  The leader half is wrong: Ratis elects by *log* up-to-dateness and
fires ``notifyLeaderChanged`` (which makes ``SCMContext.isLeader()`` true) before the
StateMachineUpdater has applied the committed backlog, so a restarted SCM that wins an
election starts the server with ``appliedIndex < commitIndex``.

Model (the brief ``scm_new_leader_dn_server_start``): abstract 1-based indices (0 =
nothing); one global log of which every server holds a prefix (entry i allocates
container c_i); elections as one atomic step restricted to up-to-date servers; ghost
variables record which call started each server's datanode server and with which
applied, commit and accession-commit indexes.

Variants: ``bug`` (gate ``isLeader() || isFollowerCaughtUp()``, with Java's
short-circuit: a leader captures no target), ``fix`` (the report's patch: gate
``isFollowerCaughtUp()`` only), ``fix_recapture`` (also re-capture the target as the
node's own commit index when it becomes leader before its server started: the residual
the brief describes, which the report's patch leaves open).  Two wrong patches are
kept as variants so the checks show they are caught: ``mutant_leader_branch_only``
(the patch applied to the call from ``notifyLeaderChanged`` only: a leader that is
not caught up then starts through ``applyTransaction``'s call, still short-circuited
by ``isLeader()``; NoLeaderBranchStartBeforeApplied is blind to it,
NoLeaderStartBeforeAccessionApplied is not) and ``mutant_never_start_leader`` (a
leader never starts its datanode server: every safety invariant holds, the liveness
property DNServerEventuallyStarts does not).  Two more are wrong targets on the
follower path: ``mutant_unknown_commit_as_zero`` (a node that knows no leader reads the
leader's commit index as 0, not -1, so it starts its datanode server at once) and
``mutant_own_commit_target`` (the node's own commit index taken as the target).  Every
start-while-leader invariant passes them; StartHadRealTarget, which compares each start
with what the node really knew when it captured its target (a ghost), fails both in 1
and 2 actions; with ``DN_REPORTS=TRUE`` the first also drops a report as leader in 3.

Initial states: ``INIT=post_restart`` (default: every server restarted with its log
and commit index recovered up to ``INIT_LOG`` and nothing applied) or ``fresh`` (an
empty cluster; a ``Restart`` is then needed to expose the bug).

Abstractions and soundness: one global log without divergent tails (the defect
concerns committed entries only and Raft never elects a server lacking one); the
follower's view of the leader's commit index is the leader's commit at that moment
(an older value is one the leader once had, and -1 is the "not captured" path);
safe mode, leader-ready and report handling are reduced to the start condition itself,
which is what decides whether reports can be dropped.

Fairness: weak fairness of replication, commit, learning the leader and the commit,
and apply; elections and restarts are environment steps bounded by counters.

Results (engine, pinned in ``tests/test_seed_scm.py``): ``bug`` violates
NoLeaderBranchStartBeforeApplied in 1 action (post_restart) and in 7 from a fresh
cluster with one restart, as the brief says; ``fix`` holds every invariant and
DNServerEventuallyStarts at the defaults (``MAX_INDEX=2``, logs recovered to 2).
The residual: ``fix`` violates NoLeaderStartBeforeAccessionApplied once a server can
become leader with its log recovered short of the others' (``INIT_LOG=1``: 8 actions;
``MAX_INDEX=3, INIT_LOG=2``: 9; from a fresh cluster, ``INIT=fresh``: 13), and
``fix_recapture`` holds both (``INIT_LOG=1``: 84,095 states, a gate row).

The report's symptom (``DN_REPORTS=TRUE``, NoContainerReportDropped): ``bug`` lets the
new leader drop a datanode report as CONTAINER_NOT_FOUND in 2 actions (a container
allocated before the restart, committed, not yet applied); ``fix`` drops none at the
defaults.  From a fresh cluster ``fix`` and ``fix_recapture`` both drop one in 8: s2
starts its datanode server while following s1 (caught up with s1's commit then), s1
commits container 1, s2 wins an election before applying it, s1 applies it (the
datanodes create it) and a report reaches s2.  This is the follower path: every start
was legitimate when it happened, so no start-time invariant sees it.  Whether Ozone's
container report handling on a leader that is not yet leader-ready acts on such a
report was not checked in the Ozone source; the model lets any running datanode
server take reports.

Why StartHadRealTarget compares a start with the target captured, not with the
leader's commit when the server starts (issue 48 asked): that is Ozone's own design.
``isFollowerCaughtUp`` compares the applied index with ``leaderCommitIndexOnStart``,
captured when the node (re)joins or learns a leader ("comparing against a fixed target
avoids chasing the leader's ever-advancing live commit index", its comment at Ozone
master); a property asking for the leader's commit at start would fail the shipped
fix itself whenever the leader commits between capture and start, which is the
fresh-cluster row above.  So a patch that captures a stale but real value (a commit
index the leader once had) starts at a moment the design allows, and no start-time
invariant can tell it from the fix; what tells them apart is a report dropped later,
and that needs a configuration where the fix drops none: the defaults
(``post_restart``), where ``mutant_unknown_commit_as_zero`` drops one in 3 actions with
``DN_REPORTS=TRUE``.  From a fresh cluster with reports the fix itself drops one (the
follower-path gap above), so the symptom cannot separate follower-path patches there;
that gap is the design's, and is stated as a residual rather than hidden by a weaker
property.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from immutables import Map

from checker import ConfigError, Spec, Story, action, invariant, leads_to, model_values
from checker.values import ModelValue, put

LEADER_BRANCH, FOLLOWER_BRANCH, APPLY = "LeaderBranch", "FollowerBranch", "Apply"
ServerMap = Map[ModelValue, Any]


class DnStartState(NamedTuple):
    """Raft view (term, leader, logs, commits), SCM state, and the ghost variables."""

    term: int
    leader: ModelValue | None
    logLen: ServerMap
    commit: ServerMap
    applied: ServerMap
    isLeaderCtx: ServerMap
    knownLeader: ServerMap
    dnServerStarted: ServerMap
    leaderCommitIndexOnStart: ServerMap
    startPath: ServerMap
    startApplied: ServerMap
    startCommit: ServerMap
    startWhileLeader: ServerMap
    accessionCommit: ServerMap
    startAccessionCommit: ServerMap
    capturedLeaderCommit: ServerMap
    droppedReports: frozenset[tuple[ModelValue, int]]
    restarts: int


class ScmNewLeaderDnServerStart(Spec):
    """HDDS-16454: tryStartDNServerAndRefreshSafeMode's isLeader() short-circuit."""

    constants = {
        "SCMS": model_values("s", 3, group="SCMS"),
        "MAX_INDEX": 2,
        "INIT_LOG": -1,  # -1: MAX_INDEX
        "MAX_TERM": 3,
        "MAX_RESTARTS": 1,
        "INIT": "post_restart",
        "DN_REPORTS": False,
    }
    # Elections, restarts (and purges, failures) are bounded by counters: when they
    # run out the model may come to rest, which is not a protocol deadlock.
    check_deadlock = False
    variants = (
        "bug",
        "fix",
        "fix_recapture",
        "mutant_leader_branch_only",
        "mutant_never_start_leader",
        "mutant_unknown_commit_as_zero",
        "mutant_own_commit_target",
    )
    # Over every property the shortest violation is the start alone (1 action); the
    # report goes on to the datanode report the new leader drops.
    stories = {
        "bug": Story(
            constants={"DN_REPORTS": True},
            check=("NoContainerReportDropped",),
            about="a restarted SCM wins the election before applying its log, starts its "
            "datanode server and drops a report",
        )
    }
    symmetry = ("SCMS",)
    # The ghost variables (what each start captured, for the properties) are drawn in
    # the environment's lane: the servers' lanes keep the mechanism.
    owners = dict.fromkeys(
        (
            "startPath",
            "startApplied",
            "startCommit",
            "startWhileLeader",
            "accessionCommit",
            "startAccessionCommit",
            "capturedLeaderCommit",
        ),
        "env",
    )
    fairness = dict.fromkeys(
        ("LearnLeader", "Replicate", "AdvanceCommit", "LearnCommit", "Apply"), "weak"
    )

    SCMS: tuple[ModelValue, ...]
    MAX_INDEX: int
    INIT_LOG: int
    MAX_TERM: int
    MAX_RESTARTS: int
    INIT: str
    DN_REPORTS: bool

    def validate(self) -> None:
        """INIT is one of the two initial states."""
        if self.INIT not in ("post_restart", "fresh"):
            raise ConfigError("INIT must be post_restart or fresh")
        if self.INIT_LOG > self.MAX_INDEX:
            raise ConfigError("INIT_LOG cannot exceed MAX_INDEX")

    def _map(self, value: Any) -> ServerMap:
        return Map(dict.fromkeys(self.SCMS, value))

    def init(self) -> list[DnStartState]:
        """post_restart: logs and commit recovered, nothing applied; fresh: empty."""
        if self.INIT == "post_restart":
            term, log = 1, self.MAX_INDEX if self.INIT_LOG < 0 else self.INIT_LOG
        else:
            term, log = 0, 0
        return [
            DnStartState(
                term=term,
                leader=None,
                logLen=self._map(log),
                commit=self._map(log),
                applied=self._map(0),
                isLeaderCtx=self._map(False),
                knownLeader=self._map(None),
                dnServerStarted=self._map(False),
                leaderCommitIndexOnStart=self._map(-1),
                startPath=self._map(None),
                startApplied=self._map(-1),
                startCommit=self._map(-1),
                startWhileLeader=self._map(False),
                accessionCommit=self._map(-1),
                startAccessionCommit=self._map(-1),
                capturedLeaderCommit=self._map(-1),
                droppedReports=frozenset(),
                restarts=0,
            )
        ]

    # -- SCMStateMachine.tryStartDNServerAndRefreshSafeMode ----------------------------
    @staticmethod
    def _real_leader_commit(s: DnStartState, x: ModelValue) -> int:
        """The commit index of the leader x knows (itself as leader), -1 if none: what
        a correct capture reads (a ghost records it beside each capture)."""
        if s.isLeaderCtx[x]:
            return int(s.commit[x])
        k = s.knownLeader[x]
        return int(s.commit[k]) if k is not None else -1

    def _known_leader_commit(self, s: DnStartState, x: ModelValue) -> int:
        """getLeaderCommitIndex: own commit as leader, the known leader's, else -1."""
        if self.variant == "mutant_own_commit_target":
            return int(s.commit[x])  # a wrong patch: the node's own commit index
        real = self._real_leader_commit(s, x)
        if real < 0 and self.variant == "mutant_unknown_commit_as_zero":
            return 0  # a wrong patch: "no leader known" read as commit index 0
        return real

    def _capture(self, s: DnStartState, x: ModelValue, target: int) -> DnStartState:
        """Set leaderCommitIndexOnStart, and the ghost of what x really knew then."""
        return s._replace(
            leaderCommitIndexOnStart=put(s.leaderCommitIndexOnStart, x, target),
            capturedLeaderCommit=put(s.capturedLeaderCommit, x, self._real_leader_commit(s, x)),
        )

    def _try_start(self, s: DnStartState, x: ModelValue, path: str) -> DnStartState:
        if s.dnServerStarted[x]:
            return s
        v = self.variant
        if v == "mutant_never_start_leader" and s.isLeaderCtx[x]:
            return s
        short_circuit = v == "bug" or (v == "mutant_leader_branch_only" and path != LEADER_BRANCH)
        if short_circuit and s.isLeaderCtx[x]:
            gate = True  # isLeader() || ...: isFollowerCaughtUp() is not even called
        else:
            # isFollowerCaughtUp(): capture the target once, even if the gate fails.
            target = s.leaderCommitIndexOnStart[x]
            if target < 0:
                target = self._known_leader_commit(s, x)
                if target >= 0:
                    s = self._capture(s, x, target)
            gate = target >= 0 and s.applied[x] >= target
        if not gate:
            return s
        if s.leaderCommitIndexOnStart[x] < 0:
            # Started with no target captured (the isLeader() short-circuit): what it
            # relied on is its own commit index as leader, now.
            s = s._replace(
                capturedLeaderCommit=put(s.capturedLeaderCommit, x, self._real_leader_commit(s, x))
            )
        return s._replace(
            dnServerStarted=put(s.dnServerStarted, x, True),
            startPath=put(s.startPath, x, path),
            startApplied=put(s.startApplied, x, s.applied[x]),
            startCommit=put(s.startCommit, x, s.commit[x]),
            startWhileLeader=put(s.startWhileLeader, x, s.isLeaderCtx[x]),
            startAccessionCommit=put(s.startAccessionCommit, x, s.accessionCommit[x]),
        )

    # -- actions ------------------------------------------------------------------
    @action(over="SCMS")
    def BecomeLeader(self, s: DnStartState, x: ModelValue) -> DnStartState | None:
        """x wins an election (or a transfer) on log up-to-dateness alone; Ratis fires
        notifyLeaderChanged, whose leader branch sets SCMContext.isLeader()."""
        if s.leader == x or s.term >= self.MAX_TERM:
            return None
        if s.logLen[x] != max(s.logLen.values()):
            return None
        is_leader, known = s.isLeaderCtx, s.knownLeader
        if s.leader is not None:  # notifyNotLeader on the old leader
            is_leader = put(is_leader, s.leader, False)
            known = put(known, s.leader, None)
        s = s._replace(
            term=s.term + 1,
            leader=x,
            isLeaderCtx=put(is_leader, x, True),
            knownLeader=put(known, x, x),
            accessionCommit=put(s.accessionCommit, x, s.commit[x]),
        )
        if self.variant == "fix_recapture" and not s.dnServerStarted[x]:
            s = self._capture(s, x, s.commit[x])
        return self._try_start(s, x, LEADER_BRANCH)

    @action(over="SCMS")
    def LearnLeader(self, s: DnStartState, f: ModelValue) -> DnStartState | None:
        """Follower branch of notifyLeaderChanged, on the first message of the new
        leader: capture leaderCommitIndexOnStart if not started, then try to start."""
        lead = s.leader
        if lead is None or f == lead or s.knownLeader[f] == lead:
            return None
        s = s._replace(knownLeader=put(s.knownLeader, f, lead))
        if not s.dnServerStarted[f]:
            own = self.variant == "mutant_own_commit_target"
            s = self._capture(s, f, s.commit[f] if own else s.commit[lead])
        return self._try_start(s, f, FOLLOWER_BRANCH)

    @action(over="SCMS")
    def ClientAllocate(self, s: DnStartState, x: ModelValue) -> DnStartState | None:
        """The leader appends 'allocate container c_i' at the next index."""
        if s.leader != x or s.logLen[x] >= self.MAX_INDEX:
            return None
        return s._replace(logLen=put(s.logLen, x, s.logLen[x] + 1))

    @action(over=("SCMS", "SCMS"), actor=lambda self, s, ldr, f: f)
    def Replicate(self, s: DnStartState, ldr: ModelValue, f: ModelValue) -> DnStartState | None:
        """Follower f appends the leader's next entry."""
        if s.leader != ldr or s.knownLeader[f] != ldr or s.logLen[f] >= s.logLen[ldr]:
            return None
        return s._replace(logLen=put(s.logLen, f, s.logLen[f] + 1))

    @action(over="SCMS")
    def AdvanceCommit(self, s: DnStartState, x: ModelValue) -> DnStartState | None:
        """The leader commits the largest index a majority holds."""
        if s.leader != x:
            return None
        lens = sorted(s.logLen.values(), reverse=True)
        majority = lens[len(lens) // 2]  # held by at least a majority
        if majority <= s.commit[x]:
            return None
        return s._replace(commit=put(s.commit, x, majority))

    @action(over="SCMS")
    def LearnCommit(self, s: DnStartState, f: ModelValue) -> DnStartState | None:
        """Follower f learns the leader's commit index (bounded by its log)."""
        lead = s.leader
        if lead is None or f == lead or s.knownLeader[f] != lead:
            return None
        new = max(s.commit[f], min(s.commit[lead], s.logLen[f]))
        if new == s.commit[f]:
            return None
        return s._replace(commit=put(s.commit, f, new))

    @action(over="SCMS")
    def Apply(self, s: DnStartState, x: ModelValue) -> DnStartState | None:
        """StateMachineUpdater applies the next committed entry; applyTransaction then
        calls tryStartDNServerAndRefreshSafeMode."""
        if s.applied[x] >= s.commit[x]:
            return None
        s = s._replace(applied=put(s.applied, x, s.applied[x] + 1))
        return self._try_start(s, x, APPLY)

    @action(over="SCMS")
    def Restart(self, s: DnStartState, x: ModelValue) -> DnStartState | None:
        """x restarts: log and commit are recovered, the state machine replays from 0,
        the datanode server is down until tryStart passes again."""
        if s.restarts >= self.MAX_RESTARTS:
            return None
        return s._replace(
            leader=None if s.leader == x else s.leader,
            applied=put(s.applied, x, 0),
            isLeaderCtx=put(s.isLeaderCtx, x, False),
            knownLeader=put(s.knownLeader, x, None),
            dnServerStarted=put(s.dnServerStarted, x, False),
            leaderCommitIndexOnStart=put(s.leaderCommitIndexOnStart, x, -1),
            startPath=put(s.startPath, x, None),
            startApplied=put(s.startApplied, x, -1),
            startCommit=put(s.startCommit, x, -1),
            startWhileLeader=put(s.startWhileLeader, x, False),
            startAccessionCommit=put(s.startAccessionCommit, x, -1),
            capturedLeaderCommit=put(s.capturedLeaderCommit, x, -1),
            restarts=s.restarts + 1,
        )

    @action(over=("SCMS", lambda self: range(1, self.MAX_INDEX + 1)))
    def DNReport(self, s: DnStartState, x: ModelValue, c: int) -> DnStartState | None:
        """A datanode reports container c_c to x (off unless DN_REPORTS): a container
        committed but not yet applied is CONTAINER_NOT_FOUND and the report dropped.
        A datanode holds c_c once an SCM applied its allocation (and sent the create
        command): before a restart for the recovered log, since then where applied.
        Only a leader's drops are modelled: a follower that lags drops reports too, and
        catches up; the report is about the leader, whose container manager acts."""
        if not self.DN_REPORTS or not s.dnServerStarted[x] or not s.isLeaderCtx[x]:
            return None
        recovered = 0 if self.INIT == "fresh" else self.init()[0].commit[self.SCMS[0]]
        if c > max(recovered, *s.applied.values()):
            return None
        if c <= s.applied[x] or (x, c) in s.droppedReports:
            return None
        return s._replace(droppedReports=s.droppedReports | {(x, c)})

    # -- invariants ---------------------------------------------------------------
    @invariant
    def NoLeaderBranchStartBeforeApplied(self, s: DnStartState) -> bool:
        """The leader branch of notifyLeaderChanged never starts the datanode server
        while the node's applied index is below its commit index (the report's name)."""
        return all(
            s.startPath[x] != LEADER_BRANCH or s.startApplied[x] >= s.startCommit[x]
            for x in self.SCMS
        )

    @invariant
    def NoLeaderStartBeforeAccessionApplied(self, s: DnStartState) -> bool:
        """A server started while leader had applied its commit index as of becoming
        leader (frozen at the start)."""
        return all(
            not s.startWhileLeader[x] or s.startApplied[x] >= s.startAccessionCommit[x]
            for x in self.SCMS
        )

    @invariant
    def StartHadRealTarget(self, s: DnStartState) -> bool:
        """Every running datanode server started on a real catch-up target: when its
        target was captured (or, with none captured, when it started) the node knew a
        leader or was one, and it had applied that leader's commit index as of then.
        Sees the follower path at start time, where the start-while-leader invariants
        cannot."""
        return all(
            not s.dnServerStarted[x]
            or (s.capturedLeaderCommit[x] >= 0 and s.startApplied[x] >= s.capturedLeaderCommit[x])
            for x in self.SCMS
        )

    @invariant
    def NoContainerReportDropped(self, s: DnStartState) -> bool:
        """No datanode report is dropped by the leader as CONTAINER_NOT_FOUND (the
        symptom the report shows in the SCM log: a container whose allocation the
        leader committed but has not applied, its datanode server already running).
        Only DNReport (``DN_REPORTS=TRUE``) drops one."""
        return not s.droppedReports

    # -- liveness -----------------------------------------------------------------
    @leads_to(
        lambda self, s, x, ldr: (
            s.leader == ldr and s.knownLeader[x] == ldr and s.applied[x] >= s.commit[ldr]
        ),
        over=("SCMS", "SCMS"),
    )
    def DNServerEventuallyStarts(self, s: DnStartState, x: ModelValue, ldr: ModelValue) -> bool:
        """Once x follows (or is) leader ldr and has applied everything ldr has
        committed, x's datanode server starts, unless ldr stops leading or x stops
        following it first."""
        return s.dnServerStarted[x] or s.leader != ldr or s.knownLeader[x] != ldr
