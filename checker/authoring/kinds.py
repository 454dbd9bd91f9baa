"""The kinds a spec declares: temporal properties and fairness (strings equal to their
values, as specs, checkpoints and reports spell them)."""

from __future__ import annotations

from enum import StrEnum


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
