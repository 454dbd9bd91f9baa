"""LamportMutex: Lamport's distributed mutual exclusion (Time, Clocks and the Ordering
of Events, 1978), ported from the TLA+ Examples.

Source: github.com/tlaplus/Examples, ``specifications/lamport_mutex/LamportMutex.tla``
and ``MCLamportMutex.tla`` (commit 32a32c7), model ``MCLamportMutex.cfg``: ``N = 3``,
``maxClock = 6``, ``Nat <- 0 .. MaxNat`` with ``MaxNat = 7``, state constraint
ClockConstraint, invariants TypeOK, BoundedNetwork and Mutex, deadlock checking on.
TLC (the Examples' manifest): 724,274 distinct states, 2,729,079 generated, depth 61.

Functions over ``Proc = 1 .. N`` are maps keyed by process; ``network[p][q]`` is the
FIFO queue (a tuple) of messages from p to q.
"""

from __future__ import annotations

from typing import NamedTuple

from immutables import Map

from checker import Spec, action, invariant


class Message(NamedTuple):
    """A message ``[type |-> t, clock |-> c]``."""

    type: str
    clock: int


ACK = Message("ack", 0)
REL = Message("rel", 0)


def req_message(c: int) -> Message:
    """ReqMessage(c)."""
    return Message("req", c)


Queue = tuple[Message, ...]


class LamportMutexState(NamedTuple):
    """The variables of LamportMutex, in its declaration order."""

    clock: Map[int, int]
    req: Map[int, Map[int, int]]
    ack: Map[int, frozenset[int]]
    network: Map[int, Map[int, Queue]]
    crit: frozenset[int]


class LamportMutex(Spec):
    """N processes enter a critical section in timestamp order."""

    constants = {"N": 3, "maxClock": 6, "MaxNat": 7}
    lanes = lambda self: range(1, self.N + 1)  # noqa: E731 - one lane per process

    N: int
    maxClock: int
    MaxNat: int

    def procs(self) -> range:
        """Proc == 1 .. N."""
        return range(1, self.N + 1)

    def init(self) -> list[LamportMutexState]:
        """Clocks at 1, no requests, acks or messages, nobody in the section."""
        procs = self.procs()
        zeros = Map(dict.fromkeys(procs, 0))
        empty = Map(dict.fromkeys(procs, ()))
        return [
            LamportMutexState(
                clock=Map(dict.fromkeys(procs, 1)),
                req=Map(dict.fromkeys(procs, zeros)),
                ack=Map(dict.fromkeys(procs, frozenset())),
                network=Map(dict.fromkeys(procs, empty)),
                crit=frozenset(),
            )
        ]

    def constraint(self, s: LamportMutexState) -> bool:
        """ClockConstraint: every clock <= maxClock."""
        return all(c <= self.maxClock for c in s.clock.values())

    # -- helpers ------------------------------------------------------------------
    def beats(self, s: LamportMutexState, p: int, q: int) -> bool:
        """p's request has priority over q's (as p knows them)."""
        rp = s.req[p]
        return rp[q] == 0 or rp[p] < rp[q] or (rp[p] == rp[q] and p < q)

    def broadcast(self, s: LamportMutexState, sender: int, m: Message) -> Map[int, Queue]:
        """Broadcast(s, m): append m to every channel from the sender but its own."""
        out = s.network[sender]
        return Map({r: q if r == sender else (*q, m) for r, q in out.items()})

    def head(self, s: LamportMutexState, q: int, p: int) -> Message | None:
        """The first message on the channel from q to p, if any."""
        chan = s.network[q][p]
        return chan[0] if chan else None

    def _pop(self, s: LamportMutexState, q: int, p: int) -> Map[int, Map[int, Queue]]:
        """[network EXCEPT ![q][p] = Tail(@)]."""
        return s.network.set(q, s.network[q].set(p, s.network[q][p][1:]))

    # -- Next -----------------------------------------------------------------------
    @action(over=lambda self: self.procs())
    def Request(self, s: LamportMutexState, p: int) -> LamportMutexState | None:
        """p requests the critical section and tells everybody."""
        if s.req[p][p] != 0:
            return None
        return s._replace(
            req=s.req.set(p, s.req[p].set(p, s.clock[p])),
            network=s.network.set(p, self.broadcast(s, p, req_message(s.clock[p]))),
            ack=s.ack.set(p, frozenset({p})),
        )

    @action(over=lambda self: self.procs())
    def Enter(self, s: LamportMutexState, p: int) -> LamportMutexState | None:
        """p has every ack and beats every other request: it enters."""
        if s.ack[p] != frozenset(self.procs()):
            return None
        if not all(self.beats(s, p, q) for q in self.procs() if q != p):
            return None
        return s._replace(crit=s.crit | {p})

    @action(over=lambda self: self.procs())
    def Exit(self, s: LamportMutexState, p: int) -> LamportMutexState | None:
        """p leaves the critical section and releases its request."""
        if p not in s.crit:
            return None
        return s._replace(
            crit=s.crit - {p},
            network=s.network.set(p, self.broadcast(s, p, REL)),
            req=s.req.set(p, s.req[p].set(p, 0)),
            ack=s.ack.set(p, frozenset()),
        )

    @action(over=(lambda self: self.procs(), lambda self: self.procs()))
    def ReceiveRequest(self, s: LamportMutexState, p: int, q: int) -> LamportMutexState | None:
        """p receives q's request, records it, advances its clock and acks it."""
        m = self.head(s, q, p) if p != q else None
        if m is None or m.type != "req":
            return None
        c = m.clock
        network = self._pop(s, q, p)
        network = network.set(p, network[p].set(q, (*network[p][q], ACK)))
        return s._replace(
            req=s.req.set(p, s.req[p].set(q, c)),
            clock=s.clock.set(p, c + 1 if c > s.clock[p] else s.clock[p] + 1),
            network=network,
        )

    @action(over=(lambda self: self.procs(), lambda self: self.procs()))
    def ReceiveAck(self, s: LamportMutexState, p: int, q: int) -> LamportMutexState | None:
        """p receives q's acknowledgement."""
        m = self.head(s, q, p) if p != q else None
        if m is None or m.type != "ack":
            return None
        return s._replace(ack=s.ack.set(p, s.ack[p] | {q}), network=self._pop(s, q, p))

    @action(over=(lambda self: self.procs(), lambda self: self.procs()))
    def ReceiveRelease(self, s: LamportMutexState, p: int, q: int) -> LamportMutexState | None:
        """p receives q's release and forgets q's request."""
        m = self.head(s, q, p) if p != q else None
        if m is None or m.type != "rel":
            return None
        return s._replace(req=s.req.set(p, s.req[p].set(q, 0)), network=self._pop(s, q, p))

    # -- invariants ---------------------------------------------------------------
    @invariant
    def TypeOK(self, s: LamportMutexState) -> bool:
        """Types, with Nat overridden by 0 .. MaxNat (so Clock = 1 .. MaxNat)."""
        procs = set(self.procs())
        nat = range(self.MaxNat + 1)
        clock = range(1, self.MaxNat + 1)

        def is_message(m: Message) -> bool:
            return m in (ACK, REL) or (m.type == "req" and m.clock in clock)

        return (
            set(s.clock) == procs
            and all(c in clock for c in s.clock.values())
            and all(set(r) == procs and all(v in nat for v in r.values()) for r in s.req.values())
            and all(a <= procs for a in s.ack.values())
            and all(
                all(is_message(m) for q in row.values() for m in q) for row in s.network.values()
            )
            and s.crit <= procs
        )

    @invariant
    def BoundedNetwork(self, s: LamportMutexState) -> bool:
        """No channel holds more than three messages."""
        return all(len(q) <= 3 for row in s.network.values() for q in row.values())

    @invariant
    def Mutex(self, s: LamportMutexState) -> bool:
        """At most one process is in the critical section."""
        return len(s.crit) <= 1
