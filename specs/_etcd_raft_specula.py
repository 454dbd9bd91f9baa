"""How Specula's etcd/raft traces map to ``etcd_raft``: Traceetcdraft.tla in Python.

Specula's harness records etcd/raft's own interaction tests as NDJSON lines
(``{"tag": "trace", "event": {"name", "nid", "state", "role", "log", "conf", "msg",
"prop"}}``) and TLC validates them with Traceetcdraft.tla.  This mapping does what
that module does, for ``mcheck validate etcd_raft TRACE.ndjson``:

- the constants the trace fixes (``TraceServer``: every node it names;
  ``TraceMaxInflightMsgs`` from its ``"tag": "config"`` line) and ``Trace`` on, so the
  spec takes etcdraft.tla's actions without the MC model's counters;
- the initial state from each node's bootstrap events (``TraceInit``: the last of a
  node's opening InitState/BecomeFollower/ApplyConfChange lines gives its term, role,
  vote, log length, commit, applied and configuration), and the bootstrap lines
  dropped, as TraceNext skips them;
- the lines TraceNext skips (a BecomeFollower the receive before it caused, a
  response already sent by the handler, ReduceNextIndex) dropped;
- per event, the action(s) it is, bound to the node and message it names, and what
  TraceNext checks after it: ``ValidatePostStates``, the message sent, the progress
  the event records, ``ValidatePreStates`` before a receive.  A receive may first
  take the silent steps UpdateTerm and ReturnToFollowerState on the same message,
  as TraceNextReceiveActions stays on a line until the message is consumed.

The ChangeConf, ApplyConfChange and ApplyEntries lines are matched as Traceetcdraft
matches them (ChangeConfIfLogged's entry from the logged changes; ApplyConfChange
as ApplySimpleConfChange or ApplySnapshotConfChange).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from immutables import Map

from checker.check.validate import LogError, LogEvent, LogMapping, On
from checker.values import ModelValue

from .etcd_raft import (
    CANDIDATE,
    CONFIG_ENTRY,
    FOLLOWER,
    LEADER,
    PROBE,
    SNAPSHOT,
    AEReq,
    AEResp,
    ChangeVal,
    Config,
    ConfVal,
    Counters,
    Durable,
    Entry,
    EtcdState,
    Log,
    RVReq,
    RVResp,
    SnapReq,
    last_index,
)

#: ValidatePreStates' RaftRole (a pre-candidate is a candidate there).
RAFT_ROLE = {
    "StateFollower": FOLLOWER,
    "StateCandidate": CANDIDATE,
    "StatePreCandidate": CANDIDATE,
    "StateLeader": LEADER,
}
#: ValidatePostStates compares the role's name itself: no pre-candidate.
POST_ROLE = {"StateFollower": FOLLOWER, "StateCandidate": CANDIDATE, "StateLeader": LEADER}
#: Traceetcdraft's ``Nil``.
NIL = "0"
BOOTSTRAP = ("InitState", "BecomeFollower", "ApplyConfChange")
RECEIVES = (
    "ReceiveAppendEntriesRequest",
    "ReceiveAppendEntriesResponse",
    "ReceiveRequestVoteRequest",
    "ReceiveRequestVoteResponse",
    "ReceiveSnapshot",
)
Diffs = list[tuple[str, Any, Any]]


# -- the constants the trace fixes ------------------------------------------------------


def _ev(e: LogEvent) -> dict[str, Any]:
    """The event record as Traceetcdraft reads it (``logline.event``)."""
    return {"name": e.name, "state": e.state, **e.params}


def _servers(events: list[LogEvent]) -> list[str]:
    """TraceServer: every nid, message destination, changed node and new voter."""
    names: set[str] = set()
    for e in events:
        x = _ev(e)
        names.add(str(x["nid"]))
        msg = x.get("msg")
        if isinstance(msg, dict) and "to" in msg:
            names.add(str(msg["to"]))
        cc = (x.get("prop") or {}).get("cc") or {}
        if x["name"] == "ChangeConf":
            names.update(str(c["nid"]) for c in cc.get("changes", ()))
        if x["name"] == "ApplyConfChange":
            names.update(str(n) for n in cc.get("newconf", ()))
    return sorted(names, key=lambda n: (len(n), n))


def _server_values(names: list[str]) -> tuple[ModelValue, ...]:
    """The servers as model values named as the trace names them; a numeric name
    keeps its number's place, so one process can read traces of different sizes."""
    out = []
    for k, n in enumerate(names):
        index = int(n) - 1 if n.isdigit() and int(n) > 0 else 1000 + k
        try:
            out.append(ModelValue(n, "Server", index))
        except ValueError:
            raise LogError(f"server {n!r}: a name this process gave another place") from None
    return tuple(out)


def _config_line(path: Path) -> dict[str, Any]:
    """The trace's ``"tag": "config"`` record (empty when it has none)."""
    try:
        with path.open(encoding="utf-8") as f:
            for line in f:
                if '"config"' not in line:
                    continue
                obj = json.loads(line)
                if isinstance(obj, dict) and obj.get("tag") == "config":
                    got = obj.get("config", {})
                    return got if isinstance(got, dict) else {}
    except (OSError, ValueError) as exc:
        raise LogError(f"{path}: cannot read its config line ({exc})") from None
    return {}


def trace_constants(path: Path, events: list[LogEvent]) -> dict[str, Any]:
    """Traceetcdraft.cfg's ``<-`` constants for this trace."""
    for e in events:
        if "nid" not in e.params:
            raise LogError(f"line {e.line}: event {e.name!r} has no nid")
    servers = _server_values(_servers(events))
    config = _config_line(path)
    inflight = config.get("MaxInflightMsgs", 256)
    disable = config.get("DisableConfChangeValidation", False)
    if not isinstance(inflight, int) or isinstance(inflight, bool):
        raise LogError(f"{path}: MaxInflightMsgs in its config line is not an integer")
    if not isinstance(disable, bool):
        raise LogError(f"{path}: DisableConfChangeValidation in its config line is not a boolean")
    return {
        "Server": servers,
        "InitServer": len(servers),
        "Value": (0,),
        "MaxInflightMsgs": inflight,
        "Trace": True,
        "DisableConfChangeValidation": disable,
    }


# -- the initial state and the lines TraceNext skips ------------------------------------


def _server(spec: Any, nid: Any) -> ModelValue:
    servers: tuple[ModelValue, ...] = spec.Server
    for x in servers:
        if x.name == str(nid):
            return x
    raise LogError(f"no server {nid!r} in the trace")


def _vote(spec: Any, vote: Any) -> ModelValue | None:
    return None if str(vote) == NIL else _server(spec, vote)


def _names(spec: Any, nids: Iterable[Any]) -> frozenset[ModelValue]:
    return frozenset(_server(spec, n) for n in nids)


def _bootstrap(log: list[dict[str, Any]], nid: str) -> list[int]:
    """BootstrapLogIndicesForServer: the node's lines from its first bootstrap line to
    before its first other line."""
    first = next((k for k, x in enumerate(log) if x["nid"] == nid and x["name"] in BOOTSTRAP), None)
    if first is None:
        return []
    other = next(
        (k for k, x in enumerate(log) if x["nid"] == nid and x["name"] not in BOOTSTRAP), len(log)
    )
    return [k for k in range(first, other) if log[k]["nid"] == nid]


def _skipped(log: list[dict[str, Any]], k: int) -> bool:
    """SkipUnusedLogline: the lines TraceNext steps over without an action."""
    x = log[k]
    name = x["name"]
    if name in ("SendRequestVoteResponse", "SendAppendEntriesResponse"):
        return bool(x["msg"]["from"] != x["msg"]["to"])
    if name == "ReduceNextIndex":
        return True
    if name != "BecomeFollower":
        return False
    # LoglineIsBecomeFollowerInUpdateTermOrReturnToFollower
    prev = next((p for p in range(k - 1, -1, -1) if log[p]["nid"] == x["nid"]), None)
    if prev is None:
        return False
    y = log[prev]
    term = x["state"]["term"]
    if y["name"] in RECEIVES and y["state"]["term"] < y["msg"]["term"] == term:
        return True
    return bool(
        y["name"] == "ReceiveAppendEntriesRequest"
        and y["state"]["term"] == y["msg"]["term"] == term
        and y["role"] == "StateCandidate"  # Traceetcdraft.cfg: Candidate = "StateCandidate"
    )


def prepare(spec: Any, events: list[LogEvent]) -> tuple[list[EtcdState], list[LogEvent]]:
    """TraceInit's state, and the events TraceNext takes an action for."""
    log = [_ev(e) for e in events]
    for x in log:
        x["nid"] = str(x["nid"])
    boot = {i: _bootstrap(log, i.name) for i in spec.Server}
    last = {i: log[max(ks)] if ks else log[0] for i, ks in boot.items()}

    def booted_config(i: ModelValue) -> frozenset[ModelValue]:
        x = last[i]
        if x["name"] == "ApplyConfChange":
            return _names(spec, x["prop"]["cc"]["newconf"])
        return _names(spec, x["conf"][0])

    init_server = booted_config(_server(spec, log[0]["nid"]))
    learners: frozenset[ModelValue] = frozenset()
    for x in log:
        if x["name"] in ("InitState", "BecomeFollower", "BecomeCandidate") and x.get("learners"):
            learners = _names(spec, x["learners"])
            break
    if not learners:
        changed = {
            str(c["nid"])
            for x in log
            if x["name"] == "ChangeConf"
            for c in (x.get("prop") or {}).get("cc", {}).get("changes", ())
        }
        learners = frozenset(spec.Server) - init_server - _names(spec, changed)

    def per(f: Any) -> Any:
        return spec._map(f)

    def value(i: ModelValue, field: str, default: Any) -> Any:
        return last[i]["state"][field] if boot[i] else default

    def entries(i: ModelValue) -> tuple[Entry, ...]:
        if not boot[i]:
            return ()
        entry = Entry(1, CONFIG_ENTRY, ConfVal(booted_config(i), learners))
        return (entry,) * int(last[i]["log"])

    config = per(lambda i: Config((booted_config(i), frozenset()), learners, False))
    term = per(lambda i: value(i, "term", 0))
    voted = per(lambda i: _vote(spec, value(i, "vote", NIL)))
    commit = per(lambda i: value(i, "commit", 0))
    zeros = per(lambda i: per(lambda j: 0))
    state = EtcdState(
        messages=Map(),
        pendingMessages=Map(),
        currentTerm=term,
        state=per(lambda i: RAFT_ROLE[last[i]["role"]] if boot[i] else FOLLOWER),
        votedFor=voted,
        log=per(
            lambda i: Log(1, entries(i), value(i, "snapshotIndex", 0), value(i, "snapshotTerm", 0))
        ),
        historyLog=per(entries),
        commitIndex=commit,
        applied=per(lambda i: value(i, "applied", 0)),
        votesResponded=per(lambda i: frozenset()),
        votesGranted=per(lambda i: frozenset()),
        matchIndex=zeros,
        pendingConfChangeIndex=per(
            lambda i: last[i]["state"].get("pendingConfIndex", 0) if boot[i] else 0
        ),
        config=config,
        reconfigCount=0,
        appliedConfigIndex=commit,
        durableState=per(
            lambda i: Durable(term[i], voted[i], 0, (), 0, 0, (), commit[i], config[i])
        ),
        progressState=per(lambda i: per(lambda j: PROBE)),
        pendingSnapshot=zeros,
        nextIndex=per(lambda i: per(lambda j: 1)),
        msgAppFlowPaused=per(lambda i: per(lambda j: False)),
        inflights=per(lambda i: per(lambda j: frozenset())),
        partitions=per(lambda i: 0),
        constraintCounters=Counters(),
    )
    dropped = {k for ks in boot.values() for k in ks}
    kept: list[LogEvent] = []
    for k, e in enumerate(events):
        if k in dropped or _skipped(log, k):
            continue
        # The recorded state is read by the rules' checks (Traceetcdraft's
        # Validate*States), not as variables of the spec.
        name = e.name
        if name == "SendAppendEntriesRequest":
            name = f"SendAppendEntriesRequest:{e.params['msg']['type']}"
        kept.append(dataclasses.replace(e, name=name, params=log[k], state={}))
    return [state], kept


# -- what TraceNext checks ----------------------------------------------------------------


def _post(spec: Any, ev: dict[str, Any], s: EtcdState, i: ModelValue) -> Diffs:
    """ValidatePostStates(i)."""
    st = ev["state"]
    lg = s.log[i]
    voters, outgoing = s.config[i].jointConfig
    role = POST_ROLE.get(ev["role"], ev["role"])
    rows: list[tuple[str, Any, Any]] = [
        ("term", st["term"], s.currentTerm[i]),
        ("role", role, s.state[i]),
        ("vote", _vote(spec, st["vote"]), s.votedFor[i]),
        ("log", ev["log"], last_index(lg)),
        ("commit", st["commit"], s.commitIndex[i]),
        ("conf", (_names(spec, ev["conf"][0]), _names(spec, ev["conf"][1])), (voters, outgoing)),
        ("snapshotIndex", st["snapshotIndex"], lg.snapshotIndex),
        ("snapshotTerm", st["snapshotTerm"], lg.snapshotTerm),
    ]
    if "applied" in st:
        rows.append(("applied", st["applied"], s.applied[i]))
    if "learners" in ev:
        rows.append(("learners", _names(spec, ev["learners"]), s.config[i].learners))
    return [(f"{k}[{i.name}]", want, got) for k, want, got in rows if want != got]


def _pre(spec: Any, ev: dict[str, Any], s: EtcdState, i: ModelValue) -> Diffs:
    """ValidatePreStates(i): the state the event started from."""
    st = ev["state"]
    rows = [
        ("term", st["term"], s.currentTerm[i]),
        ("role", RAFT_ROLE.get(ev["role"], ev["role"]), s.state[i]),
        ("commit", st["commit"], s.commitIndex[i]),
        ("vote", _vote(spec, st["vote"]), s.votedFor[i]),
    ]
    return [(f"{k}[{i.name}] before", want, got) for k, want, got in rows if want != got]


def _progress(ev: dict[str, Any], s: EtcdState, i: ModelValue, j: ModelValue) -> Diffs:
    """ValidateProgressState(i, j) on ``s``: what the event's ``prop`` records."""
    prop = ev.get("prop")
    if prop is None:
        return []
    if "state" not in prop:
        return [("prop.state", "a progress state", None)]
    rows: list[tuple[str, Any, Any]] = [("progress", prop["state"], s.progressState[i][j])]
    if "match" in prop:
        rows.append(("match", prop["match"], s.matchIndex[i][j]))
    if "next" in prop:
        rows.append(("next", prop["next"], s.nextIndex[i][j]))
    if "paused" in prop:
        rows.append(("paused", prop["paused"], s.msgAppFlowPaused[i][j]))
    if "inflights_count" in prop:
        rows.append(("inflights", prop["inflights_count"], len(s.inflights[i][j])))
    if s.progressState[i][j] == SNAPSHOT and "pending_snapshot" in prop:
        rows.append(("pendingSnapshot", prop["pending_snapshot"], s.pendingSnapshot[i][j]))
    where = f"[{i.name}][{j.name}]"
    return [(k + where, want, got) for k, want, got in rows if want != got]


def matches(msg: dict[str, Any], m: Any) -> bool:
    """Whether model message ``m`` is the logged ``msg`` (LoglineIs...Request/Response)."""
    kind = msg["type"]
    if m.msource.name != str(msg["from"]) or m.mdest.name != str(msg["to"]):
        return False
    if m.mterm != msg["term"]:
        return False
    if kind in ("MsgApp", "MsgHeartbeat"):
        if not isinstance(m, AEReq) or m.msubtype != ("app" if kind == "MsgApp" else "heartbeat"):
            return False
        if kind == "MsgApp" and (m.mprevLogTerm, m.mprevLogIndex) != (msg["logTerm"], msg["index"]):
            return False
        return bool(m.mcommitIndex == msg["commit"] and len(m.mentries) == msg["entries"])
    if kind == "MsgSnap":
        return (
            isinstance(m, SnapReq)
            and m.msnapshotIndex == msg["index"]
            and m.msnapshotTerm == msg["logTerm"]
        )
    if kind in ("MsgAppResp", "MsgHeartbeatResp"):
        if not isinstance(m, AEResp):
            return False
        sub = "heartbeat" if kind == "MsgHeartbeatResp" else "app"
        if not (m.msubtype == sub or (kind == "MsgAppResp" and m.msubtype == "snapshot")):
            return False
        reject = bool(msg["reject"])
        if m.msuccess == reject:
            return False
        if not reject and m.msubtype != "heartbeat" and m.mmatchIndex != msg["index"]:
            return False
        rejected = (m.mmatchIndex, m.mrejectHint, m.mlogTerm)
        return not reject or rejected == (msg["index"], msg["rejectHint"], msg["logTerm"])
    if kind == "MsgVote":
        return (
            isinstance(m, RVReq)
            and m.mlastLogIndex == msg["index"]
            and m.mlastLogTerm == msg["logTerm"]
        )
    if kind == "MsgVoteResp":
        return isinstance(m, RVResp) and m.mvoteGranted == (not msg["reject"])
    return False


def _sent(ev: dict[str, Any], before: EtcdState, after: EtcdState) -> Diffs:
    """``\\E msg \\in DOMAIN pendingMessages': LoglineIs...(msg) /\\ OneMoreMessage(msg)``."""
    for m, n in after.pendingMessages.items():
        if n == before.pendingMessages.get(m, 0) + 1 and matches(ev["msg"], m):
            return []
    return [("message sent", ev["msg"], None)]


# -- the rules ------------------------------------------------------------------------------


def _node(spec: Any, params: dict[str, Any]) -> ModelValue:
    return _server(spec, params["nid"])


def _check_post(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    """ValidatePostStates of the event's own node."""
    return _post(spec, p, after, _node(spec, p))


def _check_send(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    i = _node(spec, p)
    j = _server(spec, p["msg"]["to"])
    return _post(spec, p, after, i) or _sent(p, before, after) or _progress(p, before, i, j)


def _check_snapshot(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    i = _node(spec, p)
    j = _server(spec, p["msg"]["to"])
    return (
        _post(spec, p, after, i)
        or _sent(p, before, after)
        or _progress(p, after, i, j)
        or (
            []
            if after.progressState[i][j] == SNAPSHOT
            else [("progress", SNAPSHOT, after.progressState[i][j])]
        )
    )


def _check_self_send(
    spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None
) -> Diffs:
    return _post(spec, p, after, _node(spec, p)) or _sent(p, before, after)


def _check_leader(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    i = _node(spec, p)
    out = _post(spec, p, after, i)
    probing = [j for j in spec.Server if j != i and after.progressState[i][j] != PROBE]
    return out + [
        (f"progress[{i.name}][{j.name}]", PROBE, after.progressState[i][j]) for j in probing
    ]


def _check_commit(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    i = _node(spec, p)
    if p["role"] != "StateLeader":
        return [("role", p["role"], "a Commit line of a leader")]
    return _post(spec, p, after, i)


def _check_timeout(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    i = _node(spec, p)
    rows = [
        ("role", POST_ROLE.get(p["role"], p["role"]), CANDIDATE),
        ("role", CANDIDATE, after.state[i]),
        ("term", p["state"]["term"], after.currentTerm[i]),
    ]
    return [(f"{k}[{i.name}]", want, got) for k, want, got in rows if want != got]


def _check_progress(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    i = _node(spec, p)
    return _progress(p, after, i, _server(spec, p["prop"]["target"]))


def _check_change(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    """ChangeConfIfLogged: the entry the logged changes give, from i's configuration."""
    i = _node(spec, p)
    out = _pre(spec, p, before, i)
    if out:
        return out
    voters = set(before.config[i].jointConfig[0])
    learners = set(before.config[i].learners)
    for c in p["prop"]["cc"]["changes"]:
        n = _server(spec, c["nid"])
        if c["action"] == "AddNewServer":
            voters.add(n)
            learners.discard(n)
        elif c["action"] == "RemoveServer":
            voters.discard(n)
            learners.discard(n)
        elif c["action"] == "AddLearner":
            voters.discard(n)
            learners.add(n)
    want = ChangeVal(
        frozenset(voters),
        frozenset(learners),
        bool(p["prop"]["enterJoint"]),
        before.config[i].jointConfig[0],
    )
    got = after.log[i].entries[-1].value if after.log[i].entries else None
    return [] if got == want else [("entry", want, got)]


def _check_apply_conf(
    spec: Any, p: dict[str, Any], before: Any, after: Any, action: str | None
) -> Diffs:
    """ApplySimpleConfChangeIfLogged / LeaveJointIfLogged / ApplySnapshotConfChange's
    guards (Traceetcdraft checks nothing after them)."""
    i = _node(spec, p)
    cc = p["prop"]["cc"]
    joint = bool(before.config[i].jointConfig[1])
    flagged = cc.get("leaveJoint") is True
    if action == "ApplySimpleConfChange":
        if (not joint and not flagged) or ("newconf" in cc and (joint or flagged)):
            return []
        return [("ApplyConfChange", "a snapshot's configuration", "a configuration entry")]
    if "newconf" not in cc:
        return [("ApplyConfChange", "newconf", None)]
    return []


def _receive_where(params: dict[str, Any], action_params: tuple[Any, ...]) -> bool:
    return matches(params["msg"], action_params[0])


def _check_receive(spec: Any, p: dict[str, Any], before: Any, after: Any, _a: str | None) -> Diffs:
    return _pre(spec, p, before, _server(spec, p["msg"]["to"]))


def _silent_where(params: dict[str, Any], action_params: tuple[Any, ...]) -> bool:
    """UpdateTerm and ReturnToFollowerState only on the message the event receives."""
    msg = params.get("msg")
    return isinstance(msg, dict) and matches(msg, action_params[0])


def _at(*keys: str) -> Any:
    """instances: the event's node, then the values at ``keys`` (dotted paths)."""

    def get(spec: Any, p: dict[str, Any]) -> list[tuple[Any, ...]]:
        out: list[Any] = [_node(spec, p)]
        for k in keys:
            v: Any = p
            for part in k.split("."):
                v = v[part]
            out.append(_server(spec, v) if k in ("msg.to", "prop.target") else v)
        return [tuple(out)]

    return get


def _append_range(spec: Any, p: dict[str, Any]) -> list[tuple[Any, ...]]:
    b = p["msg"]["index"] + 1
    return [(_node(spec, p), _server(spec, p["msg"]["to"]), b, b + p["msg"]["entries"])]


#: A line that is one step of its own: no silent step before it.
_ONE: dict[str, Any] = {"after_silent": False}

SPECULA_MAPPING: LogMapping = LogMapping(
    events={
        "SendRequestVoteRequest": On(
            ("RequestVote",), instances=_at("msg.to"), check=_check_self_send, **_ONE
        ),
        "SendRequestVoteResponse": On(
            ("RequestVote",), instances=_at("msg.to"), check=_check_self_send, **_ONE
        ),
        "BecomeLeader": On(("BecomeLeader",), instances=_at(), check=_check_leader, **_ONE),
        "Replicate": On(("ClientRequest",), instances=lambda s, p: [(_node(s, p), 0)], **_ONE),
        "Commit": On(("AdvanceCommitIndex",), instances=_at(), check=_check_commit, **_ONE),
        "SendAppendEntriesRequest:MsgApp": On(
            ("AppendEntries",), instances=_append_range, check=_check_send, **_ONE
        ),
        "SendAppendEntriesRequest:MsgHeartbeat": On(
            ("Heartbeat",), instances=_at("msg.to"), check=_check_send, **_ONE
        ),
        "SendAppendEntriesRequest:MsgSnap": On(
            ("SendSnapshotWithCompaction",),
            instances=lambda s, p: [
                ((_node(s, p), _server(s, p["msg"]["to"]), p["msg"]["index"]),)
            ],
            check=_check_snapshot,
            **_ONE,
        ),
        "ManualSendSnapshot": On(("ManualSendSnapshot",), instances=_at("msg.to"), **_ONE),
        "SendAppendEntriesResponse": On(
            ("AppendEntriesToSelf", "ReplicateImplicitEntry"),
            instances=_at(),
            check=_check_self_send,
            **_ONE,
        ),
        "BecomeCandidate": On(("Timeout",), instances=_at(), check=_check_timeout, **_ONE),
        "ChangeConf": On(
            ("ChangeConf",),
            where=lambda p, a: a[0][0].name == str(p["nid"]),
            check=_check_change,
            **_ONE,
        ),
        "ApplyConfChange": On(
            ("ApplySimpleConfChange", "ApplySnapshotConfChange"),
            where=lambda p, a: (
                a[0].name == str(p["nid"])
                and (
                    len(a) == 1
                    or {x.name for x in a[1]}
                    == {str(n) for n in p["prop"]["cc"].get("newconf", ())}
                )
            ),
            check=_check_apply_conf,
            **_ONE,
        ),
        "Ready": On(("Ready",), instances=_at(), **_ONE),
        "InitState": On(("Restart",), instances=_at(), check=_check_post, **_ONE),
        "BecomeFollower": On(("StepDownToFollower",), instances=_at(), check=_check_post, **_ONE),
        "ReportUnreachable": On(
            ("ReportUnreachable",), instances=_at("prop.target"), check=_check_progress, **_ONE
        ),
        "ReportSnapshotStatus": On(
            ("ReportSnapshotStatus",),
            instances=_at("prop.target", "prop.success"),
            check=_check_progress,
            **_ONE,
        ),
        "ApplyEntries": On(
            ("ApplyEntries",),
            instances=lambda s, p: [(_node(s, p), p["prop"]["applied"])],
            check=_check_post,
            **_ONE,
        ),
        "CompactLog": On(
            ("CompactLog",),
            instances=lambda s, p: [(_node(s, p), p["prop"]["compactIndex"] + 1)],
            check=_check_post,
            **_ONE,
        ),
        **{
            name: On(
                ("Receive", "DropResponseFromNonMember"), where=_receive_where, check=_check_receive
            )
            for name in RECEIVES
        },
    },
    silent=("UpdateTerm", "ReturnToFollowerState"),
    max_silent=2,
    silent_where=_silent_where,
    constants=trace_constants,
    prepare=prepare,
)
