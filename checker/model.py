"""The interface between a spec and the explorer.

The explorer depends only on :class:`Model`: initial states, successors in a fixed
order, the state constraint, invariants, the variables of a state and the symmetry
renamings.  :class:`CompiledSpec` builds one from a :class:`~checker.spec.Spec`; tests
build toy models (plain graphs) that implement the same protocol.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from checker.errors import ConfigError, EvaluationError, SpecError
from checker.pretty import brief_message, is_message
from checker.spec import Spec, signature_arity
from checker.symmetry import renamings
from checker.values import ModelValue

#: One successor: (action family index, parameters, next state).
Successor = tuple[int, tuple[Any, ...], Any]


class Model(Protocol):
    """What the explorer needs to know about a transition system."""

    name: str
    var_names: tuple[str, ...]
    action_names: tuple[str, ...]
    invariant_names: tuple[str, ...]
    renamings: list[dict[ModelValue, ModelValue]]

    def initial_states(self) -> list[Any]:
        """The initial states, in a fixed order."""
        ...

    def successors(self, state: Any) -> list[Successor]:
        """Every enabled action instance and its next state, in a fixed order."""
        ...

    def within(self, state: Any) -> bool:
        """The state constraint."""
        ...

    def violated_invariant(self, state: Any) -> str | None:
        """The first checked invariant the state violates, or None."""
        ...

    def variables(self, state: Any) -> tuple[Any, ...]:
        """The state's variable values, in ``var_names`` order."""
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
    if is_message(v):
        return brief_message(v)
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


_Family = tuple[
    int,
    str,
    Callable[..., Any],
    Callable[..., bool] | None,
    list[tuple[Any, ...]] | None,
    Callable[[Any], Any] | None,
    int,
]


class _RecordingState:
    """Stands in for a state and remembers which variables were read."""

    def __init__(self, state: Any) -> None:
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._state, name)

    def __getitem__(self, key: Any) -> Any:
        self.read.add(str(key))
        return self._state[key]


def _identity(state: Any) -> Any:
    return state


class CompiledSpec:
    """A :class:`Spec` instance made ready for exploration (implements :class:`Model`)."""

    def __init__(
        self,
        spec: Spec,
        invariants: Sequence[str] | None = None,
        symmetry: bool = True,
    ) -> None:
        self.spec = spec
        cls = type(spec)
        self.name = cls.spec_name()
        self.action_names = tuple(cls.action_names())
        known = cls.invariant_names()
        if invariants:
            unknown = [n for n in invariants if n not in known]
            if unknown:
                raise ConfigError(
                    f"unknown invariant {unknown[0]!r} for {self.name} "
                    f"(known: {', '.join(known) or 'none'})"
                )
            chosen = [n for n in known if n in invariants]
        else:
            chosen = list(known)
        self.invariant_names = tuple(chosen)
        decls = {d.name: d for d in cls._invariants}
        self._invariants = [(n, decls[n].predicate.__get__(spec)) for n in self.invariant_names]
        self.symmetry_sets = tuple(spec.constant_values[n] for n in cls.symmetry)
        self.renamings = renamings(self.symmetry_sets) if symmetry else [{}]
        self._families: list[_Family] = []
        for ai, decl in enumerate(cls._actions):
            effect = decl.effect.__get__(spec)
            guard = decl.guard.__get__(spec) if decl.guard is not None else None
            arity = signature_arity(decl.effect)
            if decl.over_state is not None:
                dyn = decl.over_state.__get__(spec)
                self._families.append((ai, decl.name, effect, guard, None, dyn, arity))
                continue
            if len(decl.over) != arity:
                raise SpecError(
                    f"action {decl.name} takes {arity} parameter(s) but over= gives "
                    f"{len(decl.over)} domain(s)"
                )
            domains = [self.domain(decl.name, d) for d in decl.over]
            instances = [tuple(p) for p in itertools.product(*domains)]
            self._families.append((ai, decl.name, effect, guard, instances, None, arity))
        self._inits: list[Any] | None = None
        self.var_names: tuple[str, ...] = ()
        self._getter: Callable[[Any], tuple[Any, ...]] = lambda s: (s,)

    def domain(self, owner: str, dom: Any) -> list[Any]:
        """The values of a static parameter domain (a constant's name or a function
        of the spec) declared by action or property ``owner``."""
        if isinstance(dom, str):
            if dom not in self.spec.constant_values:
                raise SpecError(f"{owner}: over= names unknown constant {dom!r}")
            values = self.spec.constant_values[dom]
        else:
            values = dom(self.spec)
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
            except Exception as exc:
                raise EvaluationError("init()", exc) from exc
            if not inits:
                raise SpecError(f"{self.name}: init() returned no initial state")
            self._inits = inits
            self._setup_variables(inits[0])
        return self._inits

    def _setup_variables(self, sample: Any) -> None:
        if isinstance(sample, tuple) and hasattr(sample, "_fields"):
            # A NamedTuple state already is the tuple of its variables.
            self.var_names = tuple(sample._fields)
            self._getter = _identity
        elif dataclasses.is_dataclass(sample):
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
        else:
            self.var_names = ("state",)
            self._getter = lambda s: (s,)

    def variables(self, state: Any) -> tuple[Any, ...]:
        """The state's variable values, in ``var_names`` order."""
        return self._getter(state)

    def successors(self, state: Any) -> list[Successor]:
        """Every enabled action instance, in declaration then parameter order."""
        out: list[Successor] = []
        for ai, name, effect, guard, instances, dyn, arity in self._families:
            if instances is None:
                assert dyn is not None
                try:
                    raw = list(dyn(state))
                except Exception as exc:
                    raise EvaluationError(f"over_state of action {name}", exc, state) from exc
                params_list = [(p,) for p in raw] if arity == 1 else [tuple(p) for p in raw]
            else:
                params_list = instances
            for params in params_list:
                try:
                    if guard is not None and not guard(state, *params):
                        continue
                    nxt = effect(state, *params)
                except Exception as exc:
                    raise EvaluationError(f"action {label_of(name, params)}", exc, state) from exc
                if nxt is not None:
                    out.append((ai, params, nxt))
        return out

    def within(self, state: Any) -> bool:
        """The spec's state constraint."""
        try:
            return bool(self.spec.constraint(state))
        except Exception as exc:
            raise EvaluationError("constraint", exc, state) from exc

    def violated_invariant(self, state: Any) -> str | None:
        """The first selected invariant that does not hold in ``state``."""
        for name, pred in self._invariants:
            try:
                ok = pred(state)
            except Exception as exc:
                raise EvaluationError(f"invariant {name}", exc, state) from exc
            if not ok:
                return name
        return None

    def label(self, action: int, params: tuple[Any, ...]) -> str:
        """``Timeout(s1)``-style label of an action instance."""
        return label_of(self.action_names[action], params)

    def reads_of(self, invariant_name: str, state: Any) -> list[str]:
        """The variables invariant ``invariant_name`` reads when evaluated on ``state``.

        Evaluated on a proxy that records attribute (or key) access, so a report can
        show the values that break an invariant without the spec saying which they are.
        """
        decls = {d.name: d for d in type(self.spec)._invariants}
        decl = decls.get(invariant_name)
        if decl is None:
            return []
        proxy = _RecordingState(state)
        try:
            decl.predicate(self.spec, proxy)
        except Exception:
            return list(self.var_names)
        return [n for n in self.var_names if n in proxy.read]

    def actor(self, action: int, params: tuple[Any, ...], state: Any) -> Any:
        """The lane member that takes this step, or None for the environment."""
        decl = type(self.spec)._actions[action]
        if decl.actor is not None:
            try:
                return decl.actor(self.spec, state, *params)
            except Exception:
                return None
        lanes = self.spec.lane_values()
        for p in params:
            if isinstance(p, ModelValue) and p in lanes:
                return p
        return None
