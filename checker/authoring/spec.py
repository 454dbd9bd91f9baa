"""How a spec is written: the :class:`Spec` base class and its decorators.

A spec is a transition system and nothing more.  It declares constants (with small
defaults), variants, initial states, named actions (guard + effect, over declared
parameter domains), named invariants, an optional state constraint and its symmetric
sets.  It knows nothing about how it is explored: :mod:`checker.model.compiled` compiles it for
the explorer.

Example::

    class DieHard(Spec):
        constants = {"Big": 5, "Small": 3}

        def init(self):
            return [Jugs(big=0, small=0)]

        @action
        def FillBig(self, s):
            return replace(s, big=self.Big)

        @invariant
        def BigJugNotFour(self, s):
            return s.big != 4

An action returns the next state, or ``None`` when it is not enabled.  A guard may also
be given separately: ``@action(guard=lambda self, s: s.big < self.Big)``.
"""

from __future__ import annotations

import difflib
import inspect
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, overload

from checker.authoring.kinds import FairnessKind, Grouped, TemporalKind
from checker.base.errors import ConfigError, SpecError, did_you_mean
from checker.values import ModelValue, model_values

F = TypeVar("F", bound=Callable[..., Any])

#: A static parameter domain: a constant's name, or a function of the spec.
StaticDomain = str | Callable[[Any], Iterable[Any]]


@dataclass(frozen=True)
class ActionDecl:
    """A declared action family: its name, effect, optional guard and parameters.

    ``over`` lists one static domain per parameter (constant names or functions of
    the spec); ``over_state`` is a function ``(spec, state) -> iterable of parameter
    tuples`` for parameters drawn from the state (a message in the bag, say).  The
    spec must return those in a deterministic order (see :func:`checker.in_order`).
    """

    name: str
    effect: Callable[..., Any]
    guard: Callable[..., bool] | None
    over: tuple[StaticDomain, ...]
    over_state: Callable[[Any, Any], Iterable[Any]] | None
    order: int
    actor: Callable[..., Any] | None = None


@dataclass(frozen=True)
class InvariantDecl:
    """A declared invariant: a predicate over one state."""

    name: str
    predicate: Callable[[Any, Any], bool]
    order: int


@dataclass(frozen=True)
class ActionPropertyDecl:
    """A declared action property (TLA+'s ``[][A]_vars``): a predicate over a step,
    the state before and the state after, that every step must satisfy unless it
    changes nothing (a stuttering step satisfies ``[A]_vars`` by definition)."""

    name: str
    predicate: Callable[[Any, Any, Any], bool]
    order: int


#: Spec files loaded by path become modules named with this prefix (see loader).
USER_MODULE_PREFIX = "mcheck_user_"


@dataclass(frozen=True)
class TemporalDecl:
    r"""A declared temporal property over state predicates.

    ``kind`` is ``eventually`` (<>P), ``always_eventually`` ([]<>P) or ``leads_to``
    (P ~> Q, where ``premise`` is P and ``predicate`` is Q).  With ``over``, the
    property is the conjunction over every parameter tuple (``\A i, j: P(i, j) ~>
    Q(i, j)``), the predicates taking the parameters after the state.
    """

    name: str
    kind: str
    predicate: Callable[..., bool]
    premise: Callable[..., bool] | None
    over: tuple[StaticDomain, ...]
    order: int
    #: A condition on the initial state: the property is checked on the behaviours
    #: that start where it holds (TLA+'s ``IF P THEN <>A ELSE <>B``, P on the first
    #: state, is two properties: ``start=P`` and ``start=not P``).
    start: Callable[..., bool] | None = None


_counter = [0]


def _next_order() -> int:
    _counter[0] += 1
    return _counter[0]


@overload
def action(fn: F) -> F: ...


@overload
def action(
    *,
    over: StaticDomain | Sequence[StaticDomain] | None = None,
    over_state: Callable[[Any, Any], Iterable[Any]] | None = None,
    guard: Callable[..., bool] | None = None,
    name: str | None = None,
    actor: Callable[..., Any] | None = None,
) -> Callable[[F], F]: ...


def action(
    fn: F | None = None,
    *,
    over: StaticDomain | Sequence[StaticDomain] | None = None,
    over_state: Callable[[Any, Any], Iterable[Any]] | None = None,
    guard: Callable[..., bool] | None = None,
    name: str | None = None,
    actor: Callable[..., Any] | None = None,
) -> Any:
    """Declare a method ``(self, state, *params) -> state | None`` as a named action.

    ``over="Server"`` makes one instance per member of constant ``Server`` (in the
    constant's order); ``over=("Server", "Server")`` one per ordered pair; a callable
    ``lambda self: range(1, self.MaxTerm + 1)`` gives a computed domain.  Use
    ``over_state`` for parameters taken from the state.  ``actor=lambda self, s, *p:``
    names the server that takes the step (its lane in a timeline); by default the
    first parameter that is a member of the lane set, else the environment.
    """

    def wrap(f: F) -> F:
        if over is not None and over_state is not None:
            raise SpecError(f"action {f.__name__}: give either over= or over_state=, not both")
        decl = ActionDecl(
            name=name or f.__name__,
            effect=f,
            guard=guard,
            over=_domains(over),
            over_state=over_state,
            order=_next_order(),
            actor=actor,
        )
        f._mcheck_action = decl  # type: ignore[attr-defined]
        return f

    if fn is not None:
        return wrap(fn)
    return wrap


@overload
def invariant(fn: F) -> F: ...


@overload
def invariant(*, name: str | None = None) -> Callable[[F], F]: ...


def invariant(fn: F | None = None, *, name: str | None = None) -> Any:
    """Declare a method ``(self, state) -> bool`` as a named invariant."""

    return _declare(
        fn, "_mcheck_invariant", lambda f: InvariantDecl(name or f.__name__, f, _next_order())
    )


def _declare(fn: F | None, attr: str, make: Callable[[Any], Any]) -> Any:
    """Mark ``fn`` with the declaration ``make(fn)`` (or return the decorator that
    will, when the declaration was called with options)."""

    def wrap(f: F) -> F:
        setattr(f, attr, make(f))
        return f

    if fn is not None:
        return wrap(fn)
    return wrap


@overload
def action_property(fn: F) -> F: ...


@overload
def action_property(*, name: str | None = None) -> Callable[[F], F]: ...


def action_property(fn: F | None = None, *, name: str | None = None) -> Any:
    """Declare a method ``(self, before, after) -> bool`` as a named action property:
    TLA+'s ``[][A]_vars`` ("the can only loses beans": ``after.count < before.count``).
    It is checked on every step the search takes, to states it has seen as well as
    new ones and to states outside the constraint, except a step that changes no
    variable; a violation's counterexample ends in the step that breaks it."""

    return _declare(
        fn,
        "_mcheck_action_property",
        lambda f: ActionPropertyDecl(name or f.__name__, f, _next_order()),
    )


def _domains(over: StaticDomain | Sequence[StaticDomain] | None) -> tuple[StaticDomain, ...]:
    """``over=`` as a tuple of domains: one name or function, or a sequence of them."""
    if over is None:
        return ()
    if isinstance(over, str) or callable(over):
        return (over,)
    return tuple(over)


def _check_called_as(fn: Callable[..., Any], what: str, arity: int, params: int) -> None:
    """Refuse, when it is declared, a predicate that cannot be called the way mcheck
    calls it: ``fn(self, state, *params)`` (a lambda written ``lambda s: ...`` would
    otherwise fail on the first state with a TypeError about positional arguments)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin or a callable without a signature: let it be tried
    try:
        sig.bind(*([None] * arity))
    except TypeError:
        extra = "".join(f", p{i + 1}" for i in range(params))
        raise SpecError(
            f"{what} takes {sig}, but is called as (self, state{extra}): write "
            f"`lambda self, s{extra}: ...` or a method of the spec"
        ) from None


def _temporal(
    kind: str,
    premise: Callable[..., bool] | None,
    over: Any,
    name: str | None,
    start: Callable[..., bool] | None = None,
) -> Any:
    doms = _domains(over)

    def wrap(f: F) -> F:
        what = f"@{kind} {name or f.__name__}"
        for role, fn in (("premise", premise), ("start", start)):
            if fn is not None:
                _check_called_as(fn, f"{what}: its {role}", 2 + len(doms), len(doms))
        f._mcheck_temporal = TemporalDecl(  # type: ignore[attr-defined]
            name=name or f.__name__,
            kind=kind,
            predicate=f,
            premise=premise,
            over=doms,
            order=_next_order(),
            start=start,
        )
        return f

    return wrap


@overload
def eventually(fn: F) -> F: ...


@overload
def eventually(
    *, over: Any = None, name: str | None = None, start: Any = None
) -> Callable[[F], F]: ...


def eventually(
    fn: F | None = None, *, over: Any = None, name: str | None = None, start: Any = None
) -> Any:
    """Declare ``<>P``: every fair behaviour reaches a state where the method holds.
    ``start=lambda self, s0: ...`` checks it only on the behaviours whose initial
    state satisfies it (each temporal decorator takes it)."""
    wrap = _temporal(TemporalKind.EVENTUALLY, None, over, name, start)
    return wrap(fn) if fn is not None else wrap


@overload
def always_eventually(fn: F) -> F: ...


@overload
def always_eventually(
    *, over: Any = None, name: str | None = None, start: Any = None
) -> Callable[[F], F]: ...


def always_eventually(
    fn: F | None = None, *, over: Any = None, name: str | None = None, start: Any = None
) -> Any:
    """Declare ``[]<>P``: on every fair behaviour the method holds infinitely often."""
    wrap = _temporal(TemporalKind.ALWAYS_EVENTUALLY, None, over, name, start)
    return wrap(fn) if fn is not None else wrap


@overload
def eventually_always(fn: F) -> F: ...


@overload
def eventually_always(
    *, over: Any = None, name: str | None = None, start: Any = None
) -> Callable[[F], F]: ...


def eventually_always(
    fn: F | None = None, *, over: Any = None, name: str | None = None, start: Any = None
) -> Any:
    """Declare ``<>[]P``: on every fair behaviour the method holds from some point on."""
    wrap = _temporal(TemporalKind.EVENTUALLY_ALWAYS, None, over, name, start)
    return wrap(fn) if fn is not None else wrap


def leads_to(
    premise: Callable[..., bool],
    *,
    over: Any = None,
    name: str | None = None,
    start: Callable[..., bool] | None = None,
) -> Callable[[F], F]:
    """Declare ``P ~> Q`` with P = ``premise(self, state, *params)`` and Q the method:
    whenever P holds, Q holds then or later, on every fair behaviour."""
    wrap: Callable[[F], F] = _temporal(TemporalKind.LEADS_TO, premise, over, name, start)
    return wrap


@dataclass(frozen=True)
class Story:
    """What ``mcheck run SPEC --variant V`` (and ``simulate``) check when the command
    line chooses nothing: the report's story for a bug variant.

    A bug's shortest counterexample over every property is often only the opening of
    what the report tells (a mechanism invariant breaks steps before the symptom), or
    follows an order the report does not (a download ending before the leader change).
    A story names the constants that stage the report's order and the properties that
    state its symptom, as TLC's per-reproduction ``.cfg`` files do.  ``--const`` wins
    over a story's constant, ``--invariant`` (``all`` for every property) over its
    selection; the gate, ``resume`` (which reads what the run recorded) and the Python
    API take what they are given.  ``about`` is the story in one line, for the header.
    """

    constants: Mapping[str, Any] = field(default_factory=dict)
    check: tuple[str, ...] = ()
    about: str = ""


class Spec:
    """Base class of every spec.

    Class attributes a spec sets:

    * ``constants``: name -> default value.  Ints, bools, strings, or tuples of
      :class:`~checker.values.ModelValue` (a symmetric set); overridable with
      ``--const NAME=VALUE``.  Available on the instance as attributes (``self.MaxTerm``);
      annotate them in the class body (``MaxTerm: int``) so type checkers know them.
    * ``variants``: the names of the behaviours the spec can switch between;
      ``default_variant`` (defaults to the first).  Read ``self.variant`` in actions.
    * ``stories``: variant -> :class:`Story`, what the command line checks for that
      variant when it names no constants or properties (a bug variant's report).
    * ``symmetry``: names of constants whose members are interchangeable: a tuple of
      names, one name, or a property returning them (a symmetry that depends on
      the variant).
    * ``lanes``: the constant whose members get a lane in timelines (model values,
      ints such as process numbers, strings, a range), or a function of the spec
      returning them; defaults to the first symmetric set.  ``owners`` maps variables
      that are not keyed by lane members to the member they belong to, and any
      variable to ``"env"`` to draw it in the environment's lane (ghost variables
      that only the properties read, kept out of the servers' lanes).

    Methods: ``init()`` returns the initial states; ``constraint(state)`` bounds
    exploration like TLC's CONSTRAINT (default: everything).
    """

    name: ClassVar[str] = ""
    constants: ClassVar[Mapping[str, Any]] = {}
    variants: ClassVar[Sequence[str]] = ("default",)
    default_variant: ClassVar[str | None] = None
    #: Per variant, the report's story: the constants and properties ``mcheck run``
    #: and ``simulate`` use when the command line names none (:class:`Story`).
    stories: ClassVar[Mapping[str, Story]] = {}
    symmetry: ClassVar[Sequence[str]] = ()
    #: The lanes of a timeline: a constant's name (model values, ints, strings or a
    #: range) or a function of the spec returning the members; default: the first
    #: symmetric set.
    lanes: ClassVar[str | Callable[[Any], Iterable[Any]] | None] = None
    #: Variables that belong to one lane member although they are not maps keyed by
    #: it (a follower's scalars, say): variable name -> member name; ``"env"`` puts a
    #: variable (keyed by members or not) in the environment's lane.
    owners: ClassVar[Mapping[str, str]] = {}
    #: Whether a reachable state without successors is an error for this spec.  Specs
    #: that bound their environment (elections, restarts) by counters reach quiet
    #: terminal states on purpose and set this to False; ``--deadlock`` overrides.
    check_deadlock: ClassVar[bool] = True
    #: Fairness per action family: ``"weak"`` or ``"strong"`` (TLA+'s WF and SF, for
    #: each action instance: ``\A p: WF(A(p))``), or ``(kind, predicate over the
    #: parameters)`` to make only some instances fair; a predicate whose first
    #: parameter is ``self`` gets the spec too, so it can read the constants
    #: (``WF_vars(Phase1a(MCMaxBallot))``: ``lambda self, b: b == self.MaxBallot``).
    #: A tuple of family names as the
    #: key makes their disjunction fair as one action (``WF_vars(A \/ B)``, e.g.
    #: ``WF_vars(Next)``); ``grouped("weak", by=lambda a, m: a)`` as the value makes it
    #: fair per value of ``by`` (``\A a: WF_vars(\E m: A(a, m) \/ B(a, m))``).
    #: Environment actions bounded by counters need none.
    fairness: ClassVar[Mapping[str | tuple[str, ...], Any]] = {}

    _actions: ClassVar[tuple[ActionDecl, ...]] = ()
    _invariants: ClassVar[tuple[InvariantDecl, ...]] = ()
    _action_properties: ClassVar[tuple[ActionPropertyDecl, ...]] = ()
    _temporals: ClassVar[tuple[TemporalDecl, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _refuse_misspelt_settings(cls)
        actions: dict[str, ActionDecl] = {}
        invariants: dict[str, InvariantDecl] = {}
        steps: dict[str, ActionPropertyDecl] = {}
        temporals: dict[str, TemporalDecl] = {}
        # Walk base classes first so a spec can extend another; a redefinition
        # replaces the inherited declaration in place.
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                a = getattr(value, "_mcheck_action", None)
                if isinstance(a, ActionDecl):
                    actions.pop(attr, None)
                    actions[attr] = a
                i = getattr(value, "_mcheck_invariant", None)
                if isinstance(i, InvariantDecl):
                    invariants.pop(attr, None)
                    invariants[attr] = i
                p = getattr(value, "_mcheck_action_property", None)
                if isinstance(p, ActionPropertyDecl):
                    steps.pop(attr, None)
                    steps[attr] = p
                t = getattr(value, "_mcheck_temporal", None)
                if isinstance(t, TemporalDecl):
                    temporals.pop(attr, None)
                    temporals[attr] = t
        # Declaration order (not dict or hash order) fixes the enumeration order.
        cls._actions = tuple(sorted(actions.values(), key=lambda d: d.order))
        cls._invariants = tuple(sorted(invariants.values(), key=lambda d: d.order))
        cls._action_properties = tuple(sorted(steps.values(), key=lambda d: d.order))
        cls._temporals = tuple(sorted(temporals.values(), key=lambda d: d.order))
        names = [d.name for d in cls._actions] + [d.name for d in cls._invariants]
        names += [d.name for d in cls._action_properties]
        names += [d.name for d in cls._temporals]
        action_names = {d.name for d in cls._actions}
        for fam, how in cls.fairness.items():
            _check_fairness_entry(cls.__name__, fam, how)
            kind = how[0] if isinstance(how, tuple) else how
            kind = how.kind if isinstance(how, Grouped) else kind
            fams = fam if isinstance(fam, tuple) else (fam,)
            unknown = [f for f in fams if f not in action_names]
            if unknown:
                raise SpecError(
                    f"{cls.__name__}: fairness names {unknown[0]!r}, which is not an action"
                    f"{did_you_mean(unknown[0], sorted(action_names))}; actions: "
                    f"{', '.join(d.name for d in cls._actions) or 'none'}"
                )
            if kind not in {f.value for f in FairnessKind}:
                raise SpecError(
                    f"{cls.__name__}: fairness {fam!r}: {kind!r} (need 'weak' or 'strong')"
                )
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SpecError(f"{cls.__name__}: duplicate action/invariant names {sorted(dup)}")
        # A symmetry written as one name means that name, not its letters; a property
        # (a symmetry that depends on the variant) is read on each instance.
        if not isinstance(inspect.getattr_static(cls, "symmetry"), property):
            cls.symmetry = _symmetry_names(cls, cls.symmetry)
        if cls.variants and len(set(cls.variants)) != len(cls.variants):
            raise SpecError(f"{cls.__name__}: duplicate variant names")
        _check_stories(cls, [n for n in names if n not in action_names])

    def __init__(self, variant: str | None = None, **overrides: Any) -> None:
        cls = type(self)
        if variant is None:
            variant = cls.default_variant or (cls.variants[0] if cls.variants else "default")
        if cls.variants and variant not in cls.variants:
            raise ConfigError(
                f"unknown variant {variant!r} for {self.spec_name()}"
                f"{did_you_mean(variant, cls.variants)}; choose from {', '.join(cls.variants)}"
            )
        self.variant: str = variant
        values = dict(cls.constants)
        for key, raw in overrides.items():
            if key not in values:
                known = ", ".join(sorted(values)) or "none"
                raise ConfigError(
                    f"unknown constant {key!r} for {self.spec_name()}"
                    f"{did_you_mean(key, values)} (known: {known})"
                )
            values[key] = coerce_constant(key, values[key], raw)
        reserved = {n for n in dir(cls) if not n.startswith("__")}
        for key, value in values.items():
            if key in reserved:
                raise SpecError(f"constant {key!r} clashes with an attribute of the spec")
            setattr(self, key, value)
        self.constant_values: dict[str, Any] = values
        try:
            raw = self.symmetry  # a property sees the variant and the constants
        except SpecError:
            raise
        except Exception as exc:
            raise SpecError(
                f"{cls.__name__}: its symmetry property raised {type(exc).__name__}: {exc}"
            ) from None
        #: The constants whose members are interchangeable, for this variant.
        self.symmetry_names: tuple[str, ...] = _symmetry_names(cls, raw)
        for sym in self.symmetry_names:
            if sym not in values or not _is_model_value_set(values[sym]):
                raise SpecError(
                    f"symmetry names {sym!r}, which is not a constant holding model values"
                )
        self.validate()

    # -- hooks a spec overrides -------------------------------------------------------
    def init(self) -> Iterable[Any]:
        """Return the initial states, in a fixed order."""
        raise SpecError(f"{type(self).__name__} does not define init()")

    def constraint(self, state: Any) -> bool:
        """TLC's CONSTRAINT: a state outside it is generated but not stored or explored."""
        return True

    def validate(self) -> None:
        """Check the constants after overrides (raise ConfigError); default: nothing."""

    # -- helpers a spec's properties use ------------------------------------------------
    def enabled(self, state: Any, action_name: str, *params: Any) -> bool:
        """TLA+'s ``ENABLED``: whether action ``action_name`` can take a step from
        ``state`` (any of its instances, or the one with ``params``); a step that
        changes nothing counts, as in TLA+ (``ENABLED UNCHANGED v`` is TRUE)."""
        decl = next((d for d in type(self)._actions if d.name == action_name), None)
        if decl is None:
            known = ", ".join(type(self).action_names())
            raise SpecError(f"enabled(): no action {action_name!r} (actions: {known})")
        if params:
            instances: Iterable[tuple[Any, ...]] = [params]
        elif decl.over_state is not None:
            drawn = list(decl.over_state(self, state))
            arity = signature_arity(decl.effect)
            instances = [(p,) for p in drawn] if arity == 1 else [tuple(p) for p in drawn]
        else:
            domains = [self._domain_values(d) for d in decl.over]
            instances = itertools.product(*domains)
        for p in instances:
            if decl.guard is not None and not decl.guard(self, state, *p):
                continue
            if decl.effect(self, state, *p) is not None:
                return True
        return False

    def _domain_values(self, dom: Any) -> list[Any]:
        if isinstance(dom, str):
            return list(self.constant_values[dom])
        return list(dom(self))

    # -- introspection -------------------------------------------------------------
    @classmethod
    def spec_name(cls) -> str:
        """The spec's name: ``name`` if set, else its module's last component."""
        if cls.name:
            return cls.name
        module = cls.__module__.rsplit(".", 1)[-1]
        return module.removeprefix(USER_MODULE_PREFIX)

    @classmethod
    def story_for(cls, variant: str | None) -> Story | None:
        """The story of ``variant`` (None: the default variant), if it declares one."""
        if variant is None:
            variant = cls.default_variant or (cls.variants[0] if cls.variants else "default")
        return cls.stories.get(variant)

    @classmethod
    def action_names(cls) -> list[str]:
        """Names of the declared action families, in declaration order."""
        return [d.name for d in cls._actions]

    @classmethod
    def invariant_names(cls) -> list[str]:
        """Names of the declared invariants, in declaration order."""
        return [d.name for d in cls._invariants]

    @classmethod
    def action_property_names(cls) -> list[str]:
        """Names of the declared action properties, in declaration order."""
        return [d.name for d in cls._action_properties]

    @classmethod
    def temporal_names(cls) -> list[str]:
        """Names of the declared temporal properties, in declaration order."""
        return [d.name for d in cls._temporals]

    def lane_values(self) -> tuple[Any, ...]:
        """The members that get a lane each in a timeline (the servers, processes)."""
        cls = type(self)
        key = cls.lanes or (self.symmetry_names[0] if self.symmetry_names else None)
        if key is None:
            return ()
        if callable(key):
            try:
                return tuple(key(self))
            except Exception as exc:
                raise SpecError(
                    f"{cls.__name__}: lanes raised {type(exc).__name__}: {exc}"
                ) from None
        if key not in self.constant_values:
            raise SpecError(f"{cls.__name__}: lanes names unknown constant {key!r}")
        value = self.constant_values[key]
        if isinstance(value, range | tuple | list | frozenset):
            members = tuple(value)
            if isinstance(value, frozenset):
                members = tuple(sorted(members, key=repr))
            return members
        if isinstance(value, int) and not isinstance(value, bool):
            return tuple(range(value))  # a count: processes 0 .. N-1
        return ()


def _check_fairness_entry(owner: str, key: Any, how: Any) -> None:
    """Refuse a fairness entry whose meaning is not one of the two forms: a family's
    name (each instance fair on its own: ``\\A p: WF(A(p))``) or a tuple of names (the
    families as one action: ``WF(\\E p: A(p) \\/ ...)``), with "weak"/"strong", or
    (kind, predicate over the parameters) for some instances of one family."""
    if not isinstance(key, str | tuple) or (isinstance(key, tuple) and not key):
        raise SpecError(
            f"{owner}: fairness key {key!r}: give a family's name (each instance fair) "
            "or a non-empty tuple of names (the families as one action)"
        )
    if isinstance(key, tuple):
        if not all(isinstance(k, str) for k in key) or len(set(key)) != len(key):
            raise SpecError(f"{owner}: fairness key {key!r}: distinct family names only")
        if isinstance(how, tuple):
            raise SpecError(
                f"{owner}: fairness {key!r}: a predicate picks instances of one family; "
                "the families-as-one-action form takes 'weak' or 'strong' alone, or "
                "grouped(kind, by=...)"
            )
    if isinstance(how, Grouped) and not callable(how.by):
        raise SpecError(f"{owner}: fairness {key!r}: grouped(kind, by=...) needs a function")
    if isinstance(how, tuple) and (len(how) != 2 or not callable(how[1])):
        raise SpecError(
            f"{owner}: fairness {key!r}: {how!r} is not (kind, predicate over the parameters)"
        )


def _symmetry_names(cls: type, raw: Any) -> tuple[str, ...]:
    """A spec's ``symmetry`` as a tuple of constant names: one name alone is that
    name (``"Procs"``, not ``P, r, o, c, s``); anything but names is refused."""
    if isinstance(raw, str):
        return (raw,)
    if callable(raw):
        raise SpecError(
            f"{cls.__name__}: symmetry is a method: give a tuple of constant names, or a "
            "property returning one (to depend on the variant)"
        )
    try:
        names = tuple(raw)
    except TypeError:
        names = (raw,)
    if not all(isinstance(n, str) for n in names):
        raise SpecError(
            f"{cls.__name__}: symmetry must name constants (a name or a tuple of names), "
            f"not {raw!r}"
        )
    return names


def _is_model_value_set(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, ModelValue) for v in value)


#: A model value given on the command line: an identifier (TLC's rule), so a name can
#: neither look like a number nor carry markup or path characters into reports.
_MODEL_VALUE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


#: The class attributes a spec sets to configure mcheck.
SPEC_SETTINGS = (
    "name",
    "constants",
    "variants",
    "default_variant",
    "stories",
    "symmetry",
    "lanes",
    "owners",
    "check_deadlock",
    "fairness",
)


def _check_stories(cls: type[Spec], properties: list[str]) -> None:
    """A story must name a variant, constants and properties the spec has: a typo
    would otherwise change silently what ``mcheck run --variant V`` checks."""
    for variant, story in cls.stories.items():
        where = f"{cls.__name__}: the story of variant {variant!r}"
        if not isinstance(story, Story):
            raise SpecError(f"{where} is {type(story).__name__}, not a checker.Story")
        if variant not in cls.variants:
            raise SpecError(
                f"{cls.__name__}: stories names variant {variant!r}, which it does not "
                f"declare{did_you_mean(variant, cls.variants)}"
            )
        for name in story.constants:
            if name not in cls.constants:
                raise SpecError(
                    f"{where} sets {name!r}, which is not a constant"
                    f"{did_you_mean(name, list(cls.constants))}"
                )
        for name in story.check:
            if name not in properties:
                raise SpecError(
                    f"{where} checks {name!r}, which is not a property of the spec"
                    f"{did_you_mean(name, properties)}"
                )


def _refuse_misspelt_settings(cls: type) -> None:
    """A data attribute one typo away from a setting (``symmetric = ("Server",)``)
    would be ignored silently, and the run checked without what the author asked for."""

    for attr, value in vars(cls).items():
        if attr.startswith("_") or attr in SPEC_SETTINGS or callable(value):
            continue
        if isinstance(value, staticmethod | classmethod | property):
            continue
        close = difflib.get_close_matches(attr.lower(), SPEC_SETTINGS, n=1, cutoff=0.8)
        if close:
            raise SpecError(
                f"{cls.__name__}.{attr} is not a spec setting (did you mean {close[0]!r}?)"
            )


def coerce_constant(name: str, default: Any, raw: Any) -> Any:
    """Convert an override (often a command-line string) to the default's type.

    A set of model values accepts a count (``3`` -> ``s1, s2, s3``, same prefix as
    the default) or a comma-separated list of names.
    """
    if not isinstance(raw, str):
        if isinstance(default, bool) and not isinstance(raw, bool):
            raise ConfigError(f"constant {name} expects true/false, got {raw!r}")
        return raw
    text = raw.strip()
    if isinstance(default, bool):
        low = text.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"constant {name} expects true/false, got {raw!r}")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"constant {name} expects an integer, got {raw!r}") from None
    if _is_model_value_set(default):
        group = default[0].group if default else name
        if re.fullmatch(r"[+-]?\d+", text):
            if int(text) < 1:
                # "-1" would otherwise become one server named "-1" and pass vacuously.
                raise ConfigError(f"constant {name} expects a count of at least 1, got {raw!r}")
            prefix = _common_prefix(default) or name[:1].lower()
            return model_values(prefix, int(text), group=group)
        names = [p.strip() for p in text.split(",") if p.strip()]
        if not names:
            raise ConfigError(f"constant {name} expects a count or names like s1,s2")
        bad = [n for n in names if not _MODEL_VALUE_NAME.fullmatch(n)]
        if bad:
            raise ConfigError(
                f"constant {name}: model value names are identifiers like s1, got {bad[0]!r}"
            )
        if len(set(names)) != len(names):
            raise ConfigError(f"constant {name} names a model value twice: {raw!r}")
        try:
            return tuple(ModelValue(n, group, i) for i, n in enumerate(names))
        except ValueError as exc:
            raise ConfigError(f"constant {name}: {exc}") from None
    if isinstance(default, str):
        return text
    if isinstance(default, tuple):
        return tuple(p.strip() for p in text.split(",") if p.strip())
    raise ConfigError(f"constant {name} cannot be set from the command line")


def _common_prefix(values: tuple[ModelValue, ...]) -> str:
    if not values:
        return ""
    name = values[0].name
    return name.rstrip("0123456789")


def signature_arity(fn: Callable[..., Any]) -> int:
    """Number of positional parameters after ``self`` and ``state``."""
    params = list(inspect.signature(fn).parameters.values())
    return max(0, len(params) - 2)
