"""A lease with delayed grants: a bench model over frozen dataclass states.

Written for issue 27 before any tuning, in a style the engine had not met: the state
is a frozen dataclass (which the fast engine's packed path does not serve) with
per-client tuples.  :mod:`bench.lease_plain` is the same model over plain tuples.

A server grants one lease at a time for ``Duration`` ticks of a global clock; the
grant reaches the client after a delay, and the client trusts it until the grant's
send time plus ``Duration`` (never its own receive time: that would be the classic
lease bug).  Clients write while they believe they hold the lease, release it early,
and may ask again.  Invariant: no two clients believe they hold the lease at once,
and a client that believes it holds the lease is the server's holder.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from checker import Spec, action, invariant


def _set(t: tuple[int, ...], i: int, v: int) -> tuple[int, ...]:
    return (*t[:i], v, *t[i + 1 :])


@dataclass(frozen=True)
class LeaseState:
    """The clock, the server's view, each client's belief, grants in flight, writes."""

    now: int
    holder: int  #: -1: no lease granted
    expiry: int
    grantSent: tuple[int, ...]  #: per client: send time of a grant in flight, or -1
    believedUntil: tuple[int, ...]  #: per client: end of the lease it trusts, or -1
    writes: tuple[int, ...]  #: per client: writes made under a lease


class Lease(Spec):
    """The lease protocol (see the module docstring)."""

    name = "lease"
    constants = {"Clients": 3, "Duration": 3, "MaxTime": 9, "MaxWrites": 2}
    check_deadlock = False
    Clients: int
    Duration: int
    MaxTime: int
    MaxWrites: int

    def init(self) -> list[LeaseState]:
        """Time 0, no lease, nothing in flight."""
        none = (-1,) * self.Clients
        return [LeaseState(0, -1, 0, none, none, (0,) * self.Clients)]

    @action
    def Tick(self, s: LeaseState) -> LeaseState | None:
        """Time passes; beliefs that have run out are dropped."""
        if s.now >= self.MaxTime:
            return None
        now = s.now + 1
        believed = tuple(b if b > now else -1 for b in s.believedUntil)
        return replace(s, now=now, believedUntil=believed)

    @action(over=lambda self: range(self.Clients))
    def Grant(self, s: LeaseState, c: int) -> LeaseState | None:
        """The server grants client c the lease if no lease is live."""
        if s.now < s.expiry or s.grantSent[c] != -1 or s.believedUntil[c] != -1:
            return None
        return replace(
            s, holder=c, expiry=s.now + self.Duration, grantSent=_set(s.grantSent, c, s.now)
        )

    @action(over=lambda self: range(self.Clients))
    def ReceiveGrant(self, s: LeaseState, c: int) -> LeaseState | None:
        """Client c receives its grant and trusts it until send time + Duration."""
        sent = s.grantSent[c]
        if sent == -1:
            return None
        until = sent + self.Duration
        return replace(
            s,
            grantSent=_set(s.grantSent, c, -1),
            believedUntil=_set(s.believedUntil, c, until if until > s.now else -1),
        )

    @action(over=lambda self: range(self.Clients))
    def Write(self, s: LeaseState, c: int) -> LeaseState | None:
        """Client c writes under its lease."""
        if s.believedUntil[c] == -1 or s.writes[c] >= self.MaxWrites:
            return None
        return replace(s, writes=_set(s.writes, c, s.writes[c] + 1))

    @action(over=lambda self: range(self.Clients))
    def Release(self, s: LeaseState, c: int) -> LeaseState | None:
        """Client c gives its lease back early; the server frees it."""
        if s.believedUntil[c] == -1:
            return None
        expiry = s.now if s.holder == c else s.expiry
        return replace(s, believedUntil=_set(s.believedUntil, c, -1), expiry=expiry)

    @invariant
    def OneHolder(self, s: LeaseState) -> bool:
        """At most one client trusts a lease, and it is the server's holder."""
        trusting = [c for c, b in enumerate(s.believedUntil) if b != -1]
        return len(trusting) <= 1 and all(c == s.holder and s.now < s.expiry for c in trusting)
