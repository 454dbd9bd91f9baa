"""Go-Back-N over lossy, reordering channels: a bench model of long tuples and many
cheap successors.

Written for issue 27 before any tuning, in a style the engine had not met: one
NamedTuple of ints and tuples (the channels and the receiver's output are tuples that
grow and shrink), and actions over channel positions, so every state has many
successors that each change one or two tuples.  :mod:`bench.go_back_n_plain` is the same
model as a deque-and-set BFS over plain tuples; the two must agree on every count.

The sender may have ``Window`` unacknowledged messages of ``Messages`` in flight; a
timeout sends again from the oldest unacknowledged one (the "go back"); the receiver
takes only the message it expects and acknowledges cumulatively.  A channel holds at
most ``Capacity`` messages, loses any of them and delivers any of them (reorders).
"""

from __future__ import annotations

from typing import NamedTuple

from checker import Spec, action, invariant


class GbnState(NamedTuple):
    """Sender window [base, nextSeq), receiver's next expected, both channels, output."""

    base: int
    nextSeq: int
    expected: int
    dataChan: tuple[int, ...]
    ackChan: tuple[int, ...]
    delivered: tuple[int, ...]


def _drop(chan: tuple[int, ...], k: int) -> tuple[int, ...]:
    return chan[:k] + chan[k + 1 :]


class GoBackN(Spec):
    """Go-Back-N (see the module docstring)."""

    name = "go_back_n"
    constants = {"Messages": 4, "Window": 2, "Capacity": 3}
    check_deadlock = False
    Messages: int
    Window: int
    Capacity: int

    def init(self) -> list[GbnState]:
        """Nothing sent, nothing delivered."""
        return [GbnState(0, 0, 0, (), (), ())]

    @action
    def Send(self, s: GbnState) -> GbnState | None:
        """The sender sends the next message if the window and the channel allow."""
        if s.nextSeq >= s.base + self.Window or s.nextSeq >= self.Messages:
            return None
        if len(s.dataChan) >= self.Capacity:
            return None
        return s._replace(nextSeq=s.nextSeq + 1, dataChan=(*s.dataChan, s.nextSeq))

    @action
    def Timeout(self, s: GbnState) -> GbnState | None:
        """The oldest unacknowledged message timed out: send again from it."""
        if s.base == s.nextSeq:
            return None
        return s._replace(nextSeq=s.base)

    @action(over=lambda self: range(self.Capacity))
    def LoseData(self, s: GbnState, k: int) -> GbnState | None:
        """The data channel loses its k-th message."""
        if k >= len(s.dataChan):
            return None
        return s._replace(dataChan=_drop(s.dataChan, k))

    @action(over=lambda self: range(self.Capacity))
    def Receive(self, s: GbnState, k: int) -> GbnState | None:
        """The receiver takes the k-th message: the expected one is delivered; either
        way it acknowledges what it expects next (the ack is lost if the channel is full)."""
        if k >= len(s.dataChan):
            return None
        m = s.dataChan[k]
        expected, delivered = s.expected, s.delivered
        if m == expected:
            expected, delivered = expected + 1, (*delivered, m)
        acks = s.ackChan if len(s.ackChan) >= self.Capacity else (*s.ackChan, expected)
        return s._replace(
            expected=expected, dataChan=_drop(s.dataChan, k), ackChan=acks, delivered=delivered
        )

    @action(over=lambda self: range(self.Capacity))
    def LoseAck(self, s: GbnState, k: int) -> GbnState | None:
        """The ack channel loses its k-th ack."""
        if k >= len(s.ackChan):
            return None
        return s._replace(ackChan=_drop(s.ackChan, k))

    @action(over=lambda self: range(self.Capacity))
    def ReceiveAck(self, s: GbnState, k: int) -> GbnState | None:
        """The sender takes the k-th ack: the window slides to it."""
        if k >= len(s.ackChan):
            return None
        base = max(s.base, s.ackChan[k])
        return s._replace(base=base, nextSeq=max(s.nextSeq, base), ackChan=_drop(s.ackChan, k))

    @invariant
    def InOrder(self, s: GbnState) -> bool:
        """The receiver delivered exactly 0, 1, ..., expected - 1, in order."""
        return s.delivered == tuple(range(s.expected))

    @invariant
    def AcksNotAhead(self, s: GbnState) -> bool:
        """The sender never believes more was received than was."""
        return s.base <= s.expected and all(a <= s.expected for a in s.ackChan)
