"""What a step did to the network, read from every message variable at once.

A spec may keep its messages in more than one variable: etcd/raft's model puts a
reply in ``pendingMessages`` and its ``Ready`` step moves it to ``messages`` (the
network).  Read one variable at a time, that move looks like a drop (or a receipt)
from one bag and a fresh send into the other, which tells an etcd engineer a story
the model does not.  So a step's changes are paired across variables first: copies of
a message that leave one variable and enter another in the same step are *moved*;
what is left is sent, duplicated, received or dropped as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from checker.values.show import _DST, _field, _name, brief_message

#: A message variable before and after a step, as {message: copies}.
Counts = dict[Any, int]


@dataclass(frozen=True)
class NetEvent:
    """One thing a step did to copies of one message.

    ``kind`` is ``sent`` (no copy existed in any message variable before),
    ``duplicated`` (more copies than before), ``moved`` (copies left ``source`` and
    entered ``target`` in the same step), ``received`` (the destination took the step)
    or ``dropped`` (copies vanished otherwise).
    """

    kind: str
    message: Any
    copies: int
    source: str | None = None  #: the variable copies left (moved, received, dropped)
    target: str | None = None  #: the variable copies entered (sent, duplicated, moved)


def network_events(
    changes: Mapping[str, tuple[Counts, Counts]], actor: str | None, lanes: Iterable[str]
) -> list[NetEvent]:
    """The events of one step, given each message variable's counts before and after.

    Deterministic: messages in the order of their brief text, variables by name.
    Deliveries, drops and duplicates come before moves and sends, the order in which
    things happen.
    """
    known = set(lanes)
    messages: set[Any] = set()
    for before, after in changes.values():
        messages.update(before, after)
    first: list[NetEvent] = []
    then: list[NetEvent] = []
    for m in sorted(messages, key=brief_message):
        losses: list[list[Any]] = []
        gains: list[list[Any]] = []
        existed = False
        for var in sorted(changes):
            before, after = changes[var]
            n0, n1 = before.get(m, 0), after.get(m, 0)
            existed = existed or n0 > 0
            if n1 < n0:
                losses.append([var, n0 - n1])
            elif n1 > n0:
                gains.append([var, n1 - n0])
        # Pair what left one variable with what entered another: a move, not a drop
        # and a send.
        li = gi = 0
        while li < len(losses) and gi < len(gains):
            k = min(losses[li][1], gains[gi][1])
            then.append(NetEvent("moved", m, k, losses[li][0], gains[gi][0]))
            losses[li][1] -= k
            gains[gi][1] -= k
            li += losses[li][1] == 0
            gi += gains[gi][1] == 0
        dst = _name(_field(m, _DST))
        for var, k in losses[li:]:
            if k:
                kind = "received" if actor == dst and dst in known else "dropped"
                first.append(NetEvent(kind, m, k, source=var))
        for var, k in gains[gi:]:
            if k and existed:
                first.append(NetEvent("duplicated", m, k, target=var))
            elif k:
                then.append(NetEvent("sent", m, k, target=var))
    return first + then
