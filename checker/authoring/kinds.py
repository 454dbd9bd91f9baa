"""The kinds a spec declares: temporal properties and fairness (strings equal to their
values, as specs, checkpoints and reports spell them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class TemporalKind(StrEnum):
    """A temporal property's form."""

    #: <>P
    EVENTUALLY = "eventually"
    #: []<>P
    ALWAYS_EVENTUALLY = "always_eventually"
    #: <>[]P
    EVENTUALLY_ALWAYS = "eventually_always"
    #: P ~> Q
    LEADS_TO = "leads_to"

    @property
    def formula(self) -> str:
        """The form as TLA+ writes it."""
        return _FORMULA[self]


_FORMULA = {
    TemporalKind.EVENTUALLY: "<>P",
    TemporalKind.ALWAYS_EVENTUALLY: "[]<>P",
    TemporalKind.EVENTUALLY_ALWAYS: "<>[]P",
    TemporalKind.LEADS_TO: "P ~> Q",
}


class FairnessKind(StrEnum):
    """TLA+'s weak (WF) and strong (SF) fairness."""

    WEAK = "weak"
    STRONG = "strong"

    @property
    def operator(self) -> str:
        """WF or SF."""
        return "WF" if self is FairnessKind.WEAK else "SF"


@dataclass(frozen=True)
class Grouped:
    """A fairness entry that groups instances by a value of their parameters: one
    constraint per value, over the named families' instances that give it.  See
    :func:`grouped`."""

    kind: str
    by: Callable[..., Any]


def grouped(kind: str, by: Callable[..., Any]) -> Grouped:
    """Fairness for each value of ``by`` over the instances' parameters, TLA+'s
    ``\\A a \\in S : WF_vars(\\E m : Phase1b(a, m) \\/ Phase2b(a, m))``:

    ``fairness = {("Phase1b", "Phase2b"): grouped("weak", by=lambda a, m: a)}``.

    ``by`` gets an instance's parameters (and the spec first when its first parameter
    is ``self``, to read constants); the instances of the key's families that give
    one value form one action, weakly or strongly fair.  Between the per-instance
    form (``{"Phase1b": "weak"}``, one constraint per ``(a, m)``) and the
    families-as-one form (``{("Phase1b",): "weak"}``, one constraint in all)."""
    return Grouped(kind, by)
