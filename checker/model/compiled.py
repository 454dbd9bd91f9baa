"""The interface between a spec and the explorer: the :class:`Model`.

A model is everything exploration and checking need and nothing else: the initial
states, each state's successors in a fixed order, the state constraint, the selected
invariants and temporal properties (with their kinds), fairness, the variable names
and the symmetry renamings.  The explorer, the liveness checker, simulation and replay
depend only on this protocol; how a trace is *drawn* (lanes, owners, actors) lives in
:mod:`checker.traces.presentation`, which the explorer never sees.

:class:`CompiledSpec` builds a model from a :class:`~checker.authoring.spec.Spec`; tests build toy
models (plain graphs) that implement the same protocol.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import immutables
from pyrsistent import PBag, PMap, PSet

from checker.authoring.kinds import Grouped
from checker.authoring.spec import Spec, TemporalDecl, signature_arity
from checker.base.errors import (
    ConfigError,
    EvaluationError,
    SpecError,
    did_you_mean,
    require_boolean,
)
from checker.model.renamings import renamings
from checker.values import ModelValue
from checker.values.fingerprint import encode, in_order
from checker.values.native import NATIVE
from checker.values.show import brief_message, is_message, show
from checker.values.strict import strict_equal

#: One successor: (action family index, parameters, next state).
Successor = tuple[int, tuple[Any, ...], Any]

#: A fairness constraint an action instance belongs to: (key, "weak" | "strong"); the
#: key names the constrained action (one instance, or a group of families).
Fairness = tuple[Any, str]


@dataclass(frozen=True)
class TemporalProperty:
    """A selected temporal property, its parameters bound: one (predicate, premise)
    pair per parameter tuple (the property is their conjunction).  ``premise`` is P of
    ``P ~> Q`` and None for the other kinds."""

    name: str
    kind: str
    instances: tuple[
        tuple[tuple[Any, ...], Callable[[Any], bool], Callable[[Any], bool] | None], ...
    ]
    #: Per instance, the condition on a behaviour's initial state under which the
    #: instance is checked (None: every behaviour), e.g. TLA+'s ``IF P THEN <>A ...``
    #: where P reads the first state.
    starts: tuple[Callable[[Any], bool] | None, ...] = ()

    def start(self, i: int) -> Callable[[Any], bool] | None:
        """Instance ``i``'s initial-state condition, if it has one."""
        return self.starts[i] if i < len(self.starts) else None


class Model(Protocol):
    """What the explorer and the checkers need to know about a transition system."""

    name: str
    var_names: tuple[str, ...]
    action_names: tuple[str, ...]
    #: The invariants checked on every generated state (the selected ones).
    invariant_names: tuple[str, ...]
    action_property_names: tuple[str, ...]
    #: The temporal properties checked on the state graph (the selected ones).
    temporal: tuple[TemporalProperty, ...]
    #: Symmetry renamings, identity first (``[{}]`` when there is no symmetry).
    renamings: list[dict[ModelValue, ModelValue]]
    #: Whether a reachable state without successors is an error by default.
    check_deadlock: bool

    def initial_states(self) -> list[Any]:
        """The initial states, in a fixed order."""
        ...

    def successors(self, state: Any) -> list[Successor]:
        """Every enabled action instance and its next state, in a fixed order."""
        ...

    def within(self, state: Any) -> bool:
        """The state constraint (TLC's CONSTRAINT)."""
        ...

    def violated_invariant(self, state: Any) -> str | None:
        """The first selected invariant the state violates, or None."""
        ...

    def variables(self, state: Any) -> tuple[Any, ...]:
        """The state's variable values, in ``var_names`` order."""
        ...

    def violated_action_property(self, before: Any, after: Any) -> str | None:
        """The first selected action property the step breaks, or None."""
        ...

    def fairness(self, action: int, params: tuple[Any, ...]) -> list[Fairness]:
        """The fairness constraints one action instance belongs to (often none)."""
        ...

    def label(self, action: int, params: tuple[Any, ...]) -> str:
        """A readable label such as ``Timeout(s1)``."""
        ...


def label_of(name: str, params: tuple[Any, ...]) -> str:
    """``Name(p1, p2)``, or ``Name`` for an action without parameters."""
    if not params:
        return name
    return f"{name}({', '.join(_short(p) for p in params)})"


def _short(v: Any) -> str:
    # A parameter reads as the same value does in the state (one form everywhere).
    if is_message(v):
        return brief_message(v)
    return show(v, limit=60)


@dataclass(frozen=True)
class _Family:
    """An action family ready to enumerate: static instances or a state-drawn domain."""

    index: int
    name: str
    effect: Callable[..., Any]
    guard: Callable[..., bool] | None
    instances: list[tuple[Any, ...]] | None
    dynamic: Callable[[Any], Any] | None
    arity: int


def _identity(state: Any) -> Any:
    return state


#: Collections whose iteration order depends on the hash seed: an ``over_state``
#: domain of one of these is put in :func:`checker.in_order` order.
_HASH_ORDERED = (set, frozenset, PSet, PMap, PBag, immutables.Map)


#: The successor loop in C (checker/values/_native.c), where the value core is built.
_SUCCESSORS: Callable[..., Any] | None = NATIVE.successors if NATIVE is not None else None


class _WrongType(Exception):
    """An action returned something that is not a state of the spec's type."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value

    def evaluation_error(
        self, name: str, params: tuple[Any, ...], state: Any, state_type: type | None
    ) -> EvaluationError:
        """The error a run reports: the action, and what it returned instead."""
        return EvaluationError(
            f"action {label_of(name, params)}",
            TypeError(
                f"it returned a {type(self.value).__name__}, not a "
                f"{getattr(state_type, '__name__', '?')} state (or None)"
            ),
            state,
        )


def select_properties(cls: type[Spec], names: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The invariants and temporal properties selected by ``names`` (None, empty or
    ``["all"]``: all of them; ``["none"]``: none at all, which explores the full
    space).  Names of action properties are allowed too
    (:func:`select_action_properties`)."""
    invs, temps = cls.invariant_names(), cls.temporal_names()
    steps = cls.action_property_names()
    if not names or _all(cls, names):
        return invs, temps
    if list(names) == ["none"] and "none" not in invs + temps + steps:
        return [], []
    unknown = [n for n in names if n not in invs and n not in temps and n not in steps]
    if unknown:
        known = ", ".join(invs + steps + temps) or "none"
        raise ConfigError(
            f"unknown property {unknown[0]!r} for {cls.spec_name()}"
            f"{did_you_mean(unknown[0], invs + steps + temps)} (known: {known})"
        )
    return [n for n in invs if n in names], [n for n in temps if n in names]


def select_action_properties(cls: type[Spec], names: Sequence[str] | None) -> list[str]:
    """The action properties selected by ``names`` (as :func:`select_properties`)."""
    steps = cls.action_property_names()
    if not names or _all(cls, names):
        return steps
    return [n for n in steps if n in names]


def _all(cls: type[Spec], names: Sequence[str]) -> bool:
    """Whether ``names`` is the word ``all`` (unless a property is named so)."""
    every = cls.invariant_names() + cls.temporal_names() + cls.action_property_names()
    return list(names) == ["all"] and "all" not in every


def _index_of(
    instances: Sequence[tuple[Any, ...]],
) -> dict[tuple[Any, ...], tuple[int, tuple[Any, ...]]] | None:
    """Instances by value -> (position, instance), the first of values equal by ``==``
    (a strict check after the lookup tells them apart); None when an instance is
    unhashable (then every lookup is a scan)."""
    out: dict[tuple[Any, ...], tuple[int, tuple[Any, ...]]] = {}
    try:
        for position, params in enumerate(instances):
            out.setdefault(params, (position, params))
    except TypeError:
        return None
    return out


class CompiledSpec:
    """A :class:`Spec` instance made ready for exploration (implements :class:`Model`).

    ``properties`` selects invariants and temporal properties by name (default: all);
    ``symmetry=False`` drops the spec's symmetric sets.
    """

    def __init__(
        self,
        spec: Spec,
        properties: Sequence[str] | None = None,
        symmetry: bool = True,
    ) -> None:
        self.spec = spec
        cls = type(spec)
        self.name = cls.spec_name()
        self.variant = spec.variant
        self.constants = dict(spec.constant_values)
        self.action_names = tuple(cls.action_names())
        self.check_deadlock = cls.check_deadlock
        inv_names, temp_names = select_properties(cls, properties)
        self.invariant_names = tuple(inv_names)
        decls = {d.name: d for d in cls._invariants}
        self._invariants = [(n, decls[n].predicate.__get__(spec)) for n in self.invariant_names]
        #: The selected action properties ([][A]_vars), checked on every step.
        self.action_property_names = tuple(select_action_properties(cls, properties))
        sdecls = {d.name: d for d in cls._action_properties}
        self._steps = [(n, sdecls[n].predicate.__get__(spec)) for n in self.action_property_names]
        tdecls = {d.name: d for d in cls._temporals}
        self.temporal = tuple(self._temporal(tdecls[n]) for n in temp_names)
        self.symmetry_sets = tuple(spec.constant_values[n] for n in spec.symmetry_names)
        self.symmetric = symmetry and bool(self.symmetry_sets)
        self.renamings = renamings(self.symmetry_sets) if self.symmetric else [{}]
        self._fairness = {key: _with_spec(how, spec) for key, how in cls.fairness.items()}
        self._families: list[_Family] = []
        for ai, decl in enumerate(cls._actions):
            effect = decl.effect.__get__(spec)
            guard = decl.guard.__get__(spec) if decl.guard is not None else None
            arity = signature_arity(decl.effect)
            if decl.over_state is not None:
                dyn = decl.over_state.__get__(spec)
                self._families.append(_Family(ai, decl.name, effect, guard, None, dyn, arity))
                continue
            if len(decl.over) != arity:
                raise SpecError(
                    f"action {decl.name} takes {arity} parameter(s) but over= gives "
                    f"{len(decl.over)} domain(s)"
                )
            domains = [self.domain(decl.name, d) for d in decl.over]
            instances = [tuple(p) for p in itertools.product(*domains)]
            self._families.append(_Family(ai, decl.name, effect, guard, instances, None, arity))
        # The families as plain tuples: the hot loop unpacks them.
        self._plans: list[Any] = [
            (f.index, f.name, f.effect, f.guard, f.instances, f.dynamic, f.arity)
            for f in self._families
        ]
        self._inits: list[Any] | None = None
        #: Per static family: its instances by value -> (position, instance), built
        #: when a log first binds an instance of it (see _bound_instances).
        self._domain_index: dict[int, dict[tuple[Any, ...], tuple[int, tuple[Any, ...]]] | None]
        self._domain_index = {}
        self.var_names: tuple[str, ...] = ()
        self._getter: Callable[[Any], tuple[Any, ...]] = lambda s: (s,)
        self.state_type: type | None = None

    def _temporal(self, decl: TemporalDecl) -> TemporalProperty:
        spec = self.spec
        if decl.over:
            doms = [self.domain(decl.name, d) for d in decl.over]
            params_list = [tuple(p) for p in itertools.product(*doms)]
        else:
            params_list = [()]
        instances = []
        starts: list[Callable[[Any], bool] | None] = []
        for params in params_list:
            pred = _bind(decl.predicate, spec, params)
            premise = _bind(decl.premise, spec, params) if decl.premise is not None else None
            instances.append((params, pred, premise))
            starts.append(_bind(decl.start, spec, params) if decl.start is not None else None)
        return TemporalProperty(decl.name, decl.kind, tuple(instances), tuple(starts))

    def domain(self, owner: str, dom: Any) -> list[Any]:
        """The values of a static parameter domain (a constant's name or a function
        of the spec) declared by action or property ``owner``."""
        if isinstance(dom, str):
            if dom not in self.spec.constant_values:
                raise SpecError(f"{owner}: over= names unknown constant {dom!r}")
            values = self.spec.constant_values[dom]
        else:
            try:
                values = dom(self.spec)
            except MemoryError:
                raise
            except Exception as exc:
                raise SpecError(
                    f"{owner}: its over= domain raised {type(exc).__name__}: {exc}"
                ) from None
        try:
            return list(values)
        except TypeError:
            raise SpecError(f"{owner}: domain {dom!r} is not iterable") from None

    # -- Model protocol ----------------------------------------------------------------
    def initial_states(self) -> list[Any]:
        """The spec's initial states (computed once, then cached)."""
        if self._inits is None:
            try:
                inits = list(self.spec.init())
            except MemoryError:
                raise
            except Exception as exc:
                raise EvaluationError("init()", exc) from exc
            if not inits:
                raise SpecError(f"{self.name}: init() returned no initial state")
            self._setup_variables(inits[0])
            for s in inits:
                if type(s) is not self.state_type:
                    raise SpecError(
                        f"{self.name}: init() returned states of two types "
                        f"({type(inits[0]).__name__} and {type(s).__name__})"
                    )
            self._inits = inits
        return self._inits

    def _setup_variables(self, sample: Any) -> None:
        self.state_type = type(sample)
        if isinstance(sample, tuple) and hasattr(sample, "_fields"):
            # A NamedTuple state already is the tuple of its variables.
            self.var_names = tuple(sample._fields)
            self._getter = _identity
        elif dataclasses.is_dataclass(sample):
            params = getattr(type(sample), "__dataclass_params__", None)
            if params is not None and not params.frozen:
                raise SpecError(
                    f"{self.name}: the state class {type(sample).__name__} is a dataclass "
                    "that is not frozen: states must be immutable (@dataclass(frozen=True))"
                )
            names = tuple(f.name for f in dataclasses.fields(sample))
            getter = operator.attrgetter(*names)
            if len(names) == 1:
                self._getter = lambda s: (getter(s),)
            else:
                self._getter = getter
            self.var_names = names
        elif isinstance(sample, Mapping):
            keys = tuple(sorted(sample.keys(), key=str))
            self.var_names = tuple(str(k) for k in keys)
            self._getter = lambda s: tuple([s[k] for k in keys])
        elif isinstance(sample, list | dict | set | bytearray):
            raise SpecError(
                f"{self.name}: init() returned a {type(sample).__name__}, which is mutable: "
                "use a NamedTuple, a frozen dataclass or an immutable map for states"
            )
        else:
            self.var_names = ("state",)
            self._getter = lambda s: (s,)

    def variables(self, state: Any) -> tuple[Any, ...]:
        """The state's variable values, in ``var_names`` order."""
        return self._getter(state)

    @property
    def variables_getter(self) -> Callable[[Any], tuple[Any, ...]]:
        """What :meth:`variables` calls: for a frozen dataclass state an
        ``operator.attrgetter`` (C), which a C loop calls without a Python frame."""
        self.initial_states()
        return self._getter

    @property
    def states_are_variables(self) -> bool:
        """Whether a state is itself the tuple of its variables (a NamedTuple), so
        :meth:`variables` returns it unchanged and a caller may skip the call."""
        self.initial_states()
        return self._getter is _identity

    def successors(self, state: Any) -> list[Successor]:
        """Every enabled action instance, in declaration then parameter order."""
        return self._successors_of(self._plans, state)

    def _successors_of(self, plans: list[Any], state: Any) -> list[Successor]:
        if _SUCCESSORS is not None:
            # The same loop in C (the same calls in the same order): what it cannot
            # return, an action's error or a wrong result, comes back to be raised
            # here exactly as the loop below raises it.
            got = _SUCCESSORS(plans, state, self.state_type, self._drawn_instances)
            if type(got) is list:
                return got
            self._raise_failure(got, state)
        return self._successors_in_python(plans, state)

    def _raise_failure(self, got: tuple[str, str, tuple[Any, ...], Any], state: Any) -> None:
        kind, name, params, value = got
        if kind == "wrong":
            raise _WrongType(value).evaluation_error(name, params, state, self.state_type)
        raise EvaluationError(f"action {label_of(name, params)}", value, state) from value

    def _successors_in_python(self, plans: list[Any], state: Any) -> list[Successor]:
        out: list[Successor] = []
        append = out.append
        state_type = self.state_type
        for index, name, effect, guard, instances, dynamic, arity in plans:
            if instances is None:
                instances = self._drawn_instances(name, dynamic, arity, state)
            params: tuple[Any, ...] = ()
            try:
                for params in instances:
                    if guard is not None and not guard(state, *params):
                        continue
                    nxt = effect(state, *params)
                    if nxt is None:
                        continue
                    if type(nxt) is not state_type:
                        # (a subclass too: another record, which type(s) tells apart)
                        raise _WrongType(nxt)
                    append((index, params, nxt))
            except _WrongType as wrong:
                raise wrong.evaluation_error(name, params, state, state_type) from None
            except MemoryError:
                raise
            except Exception as exc:
                raise EvaluationError(f"action {label_of(name, params)}", exc, state) from exc
        return out

    def successors_among(
        self,
        state: Any,
        families: Iterable[int],
        accept: Callable[[int, tuple[Any, ...]], bool] | None = None,
        bound: Sequence[tuple[Any, ...]] | None = None,
    ) -> list[Successor]:
        """The enabled instances of the action ``families`` only (declaration order):
        of those, only the parameter tuples in ``bound`` when it is given (each must
        be strictly one of the family's instances in ``state``; others are skipped)
        and only those ``accept(family, params)`` keeps.  The rest are never
        evaluated: trace validation asks for one event's instances, and a family
        over a wide range would otherwise run in full for every candidate state."""
        plans = self._plans
        if accept is None and bound is None:
            return self._successors_of([plans[i] for i in sorted(families)], state)
        out: list[Successor] = []
        for index in sorted(families):
            plan = plans[index]
            if bound is not None:
                instances = self._bound_instances(index, state, bound)
            else:
                instances = plan[4]
                if instances is None:
                    instances = self._drawn_instances(plan[1], plan[5], plan[6], state)
            chosen = instances if accept is None else [p for p in instances if accept(index, p)]
            if chosen:
                out += self._successors_of([(*plan[:4], chosen, None, plan[6])], state)
        return out

    def _bound_instances(
        self, index: int, state: Any, bound: Sequence[tuple[Any, ...]]
    ) -> list[tuple[Any, ...]]:
        """The family's own instances that ``bound`` names, in the family's order.  A
        static domain is indexed once; a drawn one is drawn from ``state``.  A named
        tuple matches an instance only strictly (``(a, True)`` is not ``(a, 1)``),
        and the instance's own values are the ones the action is given."""
        plan = self._plans[index]
        instances: list[tuple[Any, ...]] = plan[4]
        where: dict[tuple[Any, ...], tuple[int, tuple[Any, ...]]] | None = None
        if instances is not None:
            if index not in self._domain_index:
                self._domain_index[index] = _index_of(instances)
            where = self._domain_index[index]
        else:
            # Drawn for this state only: a search at C speed, not an index to build.
            instances = self._drawn_instances(plan[1], plan[5], plan[6], state)
        found: list[tuple[int, tuple[Any, ...]]] = []
        for params in bound:
            hit = None
            if where is not None:
                try:
                    hit = where.get(params)
                except TypeError:  # an unhashable value: no instance is one
                    continue
            elif plan[4] is None:
                try:
                    at = instances.index(params)
                    hit = (at, instances[at])
                except ValueError:
                    continue
            if hit is None or not strict_equal(hit[1], params):
                # Not indexed (unhashable instances), or equal by == only (True and
                # 1): an instance strictly equal to it, if any.
                hit = next((h for h in enumerate(instances) if strict_equal(h[1], params)), None)
            if hit is not None:
                found.append(hit)
        found.sort(key=lambda hit: hit[0])
        return [p for _, p in found]

    @staticmethod
    def _drawn_instances(
        name: str, dynamic: Callable[[Any], Any], arity: int, state: Any
    ) -> list[tuple[Any, ...]]:
        """The parameter tuples an ``over_state`` family draws from ``state``."""
        try:
            got = dynamic(state)
            # A set's or map's iteration order follows salted hashes: in that order
            # the same run would give another counterexample per process.
            raw = in_order(got) if isinstance(got, _HASH_ORDERED) else list(got)
        except MemoryError:
            raise
        except Exception as exc:
            raise EvaluationError(f"over_state of action {name}", exc, state) from exc
        return [(p,) for p in raw] if arity == 1 else [tuple(p) for p in raw]

    def without_invariants(self) -> CompiledSpec:
        """The same model checking no invariant (a liveness graph pass after a
        safety pass that already checked them)."""
        import copy

        other = copy.copy(self)
        other.invariant_names = ()
        other._invariants = []
        other.action_property_names = ()
        other._steps = []
        return other

    # -- what the fast engine (checker.fastpath) needs beyond the protocol -------------
    @property
    def has_constraint(self) -> bool:
        """Whether the spec overrides ``constraint`` (else every state is inside)."""
        return type(self.spec).constraint is not Spec.constraint

    def make_state(self, values: Any) -> Any:
        """The state whose variables hold ``values`` (in ``var_names`` order); only for
        NamedTuple states, which :mod:`checker.fastpath` rebuilds from interned values."""
        assert self.state_type is not None
        return self.state_type._make(values)  # type: ignore[attr-defined]

    @property
    def is_namedtuple_state(self) -> bool:
        """States are NamedTuples (the fast engine's cached actions need this)."""
        t = self.state_type
        return t is not None and issubclass(t, tuple) and hasattr(t, "_fields")

    def family_successors(self, index: int, state: Any) -> list[tuple[tuple[Any, ...], Any]]:
        """The (parameters, next state) of one action family's enabled instances."""
        return [(p, t) for ai, p, t in self._successors_of(self._plans[index : index + 1], state)]

    def family_callables(
        self, index: int
    ) -> tuple[str, Callable[..., Any], Callable[..., Any] | None, Callable[..., Any] | None, int]:
        """One action family's (name, effect, guard, state-drawn domain, arity), bound
        to the spec: what the fast engine runs through its instrumented copies."""
        _, name, effect, guard, _, dynamic, arity = self._plans[index]
        return name, effect, guard, dynamic, arity

    def drawn_instances(
        self, name: str, dynamic: Callable[[Any], Any], arity: int, state: Any
    ) -> list[tuple[Any, ...]]:
        """The parameter tuples ``dynamic`` (an ``over_state`` domain, or a stand-in
        for it) draws from ``state``, ordered as every engine orders them."""
        return self._drawn_instances(name, dynamic, arity, state)

    def family_instances(self, index: int) -> list[tuple[Any, ...]] | None:
        """The parameter tuples of a family with a static domain (None: drawn from the
        state by ``over_state``)."""
        instances = self._plans[index][4]
        return None if instances is None else list(instances)

    def instance_step(self, index: int, params: tuple[Any, ...], state: Any) -> Any:
        """The next state of one action instance, or None when it is disabled."""
        _, _, effect, guard, _, _, _ = self._plans[index]
        try:
            if guard is not None and not guard(state, *params):
                return None
            nxt = effect(state, *params)
        except MemoryError:
            raise
        except Exception as exc:
            raise EvaluationError(
                f"action {label_of(self._plans[index][1], params)}", exc, state
            ) from exc
        if nxt is None or type(nxt) is self.state_type:
            return nxt
        plan = self._plans[index]
        out = self._successors_of([(*plan[:4], [params], None, plan[6])], state)
        return out[0][2] if out else None

    @property
    def invariant_predicates(self) -> list[tuple[str, Callable[[Any], bool]]]:
        """The selected invariants, bound, in order."""
        return list(self._invariants)

    @property
    def constraint_predicate(self) -> Callable[[Any], Any] | None:
        """The spec's own state constraint, bound, with nothing around it (None: the
        spec declares none): for a caller that runs ``within``'s checks itself and
        hands anything but ``True`` or ``False``, or an exception, back to ``within``."""
        return self.spec.constraint if self.has_constraint else None

    def within(self, state: Any) -> bool:
        """The spec's state constraint."""
        try:
            return require_boolean(self.spec.constraint(state))
        except MemoryError:
            raise
        except Exception as exc:
            raise EvaluationError("constraint", exc, state) from exc

    def violated_invariant(self, state: Any) -> str | None:
        """The first selected invariant that does not hold in ``state``."""
        return _first_broken(self._invariants, "invariant", (state,), state)

    def violated_action_property(
        self, before: Any, after: Any, only: str | None = None
    ) -> str | None:
        """The first selected action property (or the declared one named ``only``)
        the step ``before -> after`` breaks, or None; a step that changes no variable
        (strictly) breaks none: ``[A]_vars`` holds on stuttering steps."""
        steps = self._steps
        if only is not None:
            pred = self.action_property_predicate(only)
            steps = [(only, pred)] if pred is not None else []
        if not steps or strict_equal(self.variables(before), self.variables(after)):
            return None
        return _first_broken(steps, "action property", (before, after), after)

    def action_property_predicate(self, name: str) -> Callable[[Any, Any], bool] | None:
        """A declared action property by name, bound (None if there is none)."""
        for d in type(self.spec)._action_properties:
            if d.name == name:
                pred: Callable[[Any, Any], bool] = d.predicate.__get__(self.spec)
                return pred
        return None

    def fairness(self, action: int, params: tuple[Any, ...]) -> list[Fairness]:
        """The fairness constraints of one action instance (the spec's ``fairness``
        table): its own WF/SF, and those of each fair group of families it is in."""
        name = self.action_names[action]
        out: list[Fairness] = []
        for key, how in self._fairness.items():
            if isinstance(how, Grouped):
                families = key if isinstance(key, tuple) else (key,)
                if name in families:
                    out.append((self._group_key(name, families, how.by, params), how.kind))
                continue
            kind, pred = how if isinstance(how, tuple) else (how, None)
            if isinstance(key, tuple):
                if name in key:
                    out.append((("group", key), str(kind)))
                continue
            if key != name:
                continue
            if pred is not None:
                try:
                    if not pred(*params):
                        continue
                except MemoryError:
                    raise
                except Exception as exc:
                    raise EvaluationError(f"fairness predicate of {name}", exc) from exc
            out.append(((action, params), str(kind)))
        return out

    @staticmethod
    def _group_key(
        name: str, families: tuple[str, ...], by: Callable[..., Any], params: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """The constraint a grouped instance meets: its families and the value ``by``
        gives, keyed by the value's injective encoding (``1`` and ``True`` are two
        groups, as they are two TLA+ values), the value kept to name it."""
        try:
            value = by(*params)
        except MemoryError:
            raise
        except Exception as exc:
            raise EvaluationError(f"fairness grouping of {name}", exc) from exc
        return ("group", families, repr(encode(value)), value)

    def label(self, action: int, params: tuple[Any, ...]) -> str:
        """``Timeout(s1)``-style label of an action instance."""
        return label_of(self.action_names[action], params)

    def invariant_predicate(self, name: str) -> Callable[[Any], bool] | None:
        """The bound predicate of any declared invariant (selected or not)."""
        decl = {d.name: d for d in type(self.spec)._invariants}.get(name)
        return decl.predicate.__get__(self.spec) if decl is not None else None


def _first_broken(
    checks: list[tuple[str, Callable[..., Any]]], kind: str, args: tuple[Any, ...], state: Any
) -> str | None:
    """The name of the first predicate false on ``args``; one that raises is the
    spec's error, reported with ``state``."""
    for name, pred in checks:
        try:
            ok = require_boolean(pred(*args))
        except MemoryError:
            raise
        except Exception as exc:
            raise EvaluationError(f"{kind} {name}", exc, state) from exc
        if not ok:
            return name
    return None


def _with_spec(how: Any, spec: Spec) -> Any:
    """A fairness entry with its predicate bound to the spec when the predicate's
    first parameter is ``self`` (it reads the constants, as TLA+'s fairness formulas
    do); other entries as they are."""
    if isinstance(how, Grouped):
        bound = _with_spec((how.kind, how.by), spec)
        return Grouped(how.kind, bound[1])
    if not isinstance(how, tuple):
        return how
    kind, pred = how
    try:
        first = next(iter(inspect.signature(pred).parameters), None)
    except (TypeError, ValueError):
        return how
    return (kind, functools.partial(pred, spec)) if first == "self" else how


def _bind(fn: Callable[..., bool], spec: Spec, params: tuple[Any, ...]) -> Callable[[Any], bool]:
    def pred(state: Any) -> bool:
        return require_boolean(fn(spec, state, *params))

    return pred
