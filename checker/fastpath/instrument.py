"""A spec function's own code, made to report what it reads of the state.

The fast engine caches an outcome for every state that agrees on the slots its
evaluation read, so it must know every read, and the spec must see exactly what the
plain engine shows it: the real state and the real values it holds.  So instead of
handing spec code a stand-in (which ``type()``, ``isinstance`` or C code can tell
apart from the real thing), the engine runs a copy of the spec's own function,
compiled from its source with each operation that can touch the state routed through
a small runtime (:class:`checker.fastpath.reads.ReadLog`):

* ``x.name`` becomes ``ga(x, "name")``, ``x[k]`` becomes ``gi(x, k)`` and ``f(...)``
  becomes ``call(f, ...)``: each does exactly what the original does, and records a
  read when ``x`` is the state (a field) or one of its fixed-key maps (an entry);
* a value in any other position (an operand, an argument to code that is not
  instrumented, an element of a new container, a loop's iterable, a condition, a
  returned value of a nested function, ...) goes through ``esc(v)``: if ``v`` is the
  state or one of its maps, everything it holds counts as read.  Only a few positions
  keep a value untouched: a plain local binding (``m = s.log``), the object of an
  attribute or subscript, an argument to an instrumented function or method, and the
  value a top-level function returns to its instrumented caller.

Whatever cannot be followed this way is refused rather than guessed: a function
without source, ``async`` code, ``match`` statements and class bodies make the
function uninstrumentable, and a call to it passes its arguments through ``esc``; an
action or predicate that cannot be instrumented itself is never cached (it runs on the
plain path).  So is code that looks at frames, closures or namespaces
(``locals()``, ``sys._getframe()``, a traceback's frames, ``eval``): in a copy it
would see the runtime's.  Code that is not instrumented and looks at its caller's
frame from inside a call (a logging library, say) is outside what the engine follows:
docs/engine.md states that contract.

The copy is compiled with the original's file name and line numbers, its globals, its
closure cells, its defaults and (for name mangling and ``super()``) inside a class of
the original's class name.  Everything instrumented belongs to one
:class:`~checker.fastpath.reads.ReadLog` (one per expansion): nothing is kept in module
globals.
"""

from __future__ import annotations
import __future__

import ast
import linecache
import sys
import types
from pathlib import Path
from typing import Any

#: The names under which the runtime's operations reach the compiled copy (as closure
#: cells of a factory function; one leading underscore: never name-mangled).
GA, GI, CALL, ESC, IT, CT, ALL, SLICE = (
    "_mcheck_ga",
    "_mcheck_gi",
    "_mcheck_call",
    "_mcheck_esc",
    "_mcheck_it",
    "_mcheck_ct",
    "_mcheck_all",
    "_mcheck_slice",
)
DICT, SETITEM, SPLAT, BOX = ("_mcheck_dict", "_mcheck_setitem", "_mcheck_splat", "_mcheck_box")
HELPERS = (GA, GI, CALL, ESC, IT, CT, ALL, SLICE, DICT, SETITEM, SPLAT, BOX)

_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag


#: Statements that evaluate nothing the state could reach: kept as they are.
_KEPT_STATEMENTS = (
    ast.Global,
    ast.Nonlocal,
    ast.Pass,
    ast.Break,
    ast.Continue,
    ast.Import,
    ast.ImportFrom,
)


class Unsupported(Exception):
    """A construct the rewrite does not follow: the function is not instrumented."""


def _call(name: str, *args: ast.expr) -> ast.expr:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _scope_declared(body: list[ast.stmt]) -> set[str]:
    """Names a function body declares ``global`` or ``nonlocal`` (not in nested
    functions): a binding to one of them leaves the function."""
    out: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Global | ast.Nonlocal):
            out.update(node.names)
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


class Rewriter:
    """Rewrites one function's body (see the module docstring).  ``mangle`` is the
    class name private attribute names are mangled with (None: no class)."""

    def __init__(self, mangle: str | None) -> None:
        self.prefix = f"_{mangle.lstrip('_')}" if mangle and mangle.lstrip("_") else None
        self.declared: set[str] = set()
        self.top = True  # in the instrumented function itself, not a nested one

    def attr(self, name: str) -> str:
        """An attribute name as the compiler would mangle it in the original class."""
        if self.prefix and name.startswith("__") and not name.endswith("__"):
            return self.prefix + name
        return name

    # -- expressions -------------------------------------------------------------------
    def expr(self, node: ast.expr, passing: bool) -> ast.expr:
        """``node`` rewritten; ``passing``: its value may stay tracked (a local binding,
        an instrumented call's argument, ...); otherwise it goes through ``esc``."""
        new = self._expr(node, passing)
        return ast.copy_location(new, node)

    def _escaped(self, new: ast.expr, passing: bool) -> ast.expr:
        return new if passing else _call(ESC, new)

    def _expr(self, node: ast.expr, passing: bool) -> ast.expr:
        e = self.expr
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, ast.Name):
            return self._escaped(node, passing)
        if isinstance(node, ast.Attribute):
            new = _call(GA, e(node.value, True), ast.Constant(self.attr(node.attr)))
            return self._escaped(new, passing)
        if isinstance(node, ast.Subscript):
            new = _call(GI, e(node.value, True), self.key(node.slice))
            return self._escaped(new, passing)
        if isinstance(node, ast.Call):
            return self._escaped(self.call(node), passing)
        if isinstance(node, ast.IfExp):
            return ast.IfExp(e(node.test, False), e(node.body, passing), e(node.orelse, passing))
        if isinstance(node, ast.BoolOp):
            # The result is one of the operands; bool() of a state or one of its maps
            # depends on its size only, which every state shares.
            return ast.BoolOp(node.op, [e(v, passing) for v in node.values])
        if isinstance(node, ast.NamedExpr):
            return ast.NamedExpr(node.target, e(node.value, False))
        if isinstance(node, ast.Lambda):
            if node.args.vararg is not None or node.args.kwarg is not None:
                raise Unsupported("a lambda with *args or **kwargs")
            return ast.Lambda(self.arguments(node.args), self.nested_body_expr(node.body))
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            gens = self.comprehensions(node.generators)
            return type(node)(e(node.elt, False), gens)
        if isinstance(node, ast.DictComp):
            gens = self.comprehensions(node.generators)
            return ast.DictComp(e(node.key, False), e(node.value, False), gens)
        if isinstance(node, ast.Compare):
            comparators = []
            last = len(node.comparators) - 1
            for j, (op, c) in enumerate(zip(node.ops, node.comparators, strict=True)):
                if isinstance(op, ast.In | ast.NotIn) and j == last:
                    # Membership in a fixed-key map depends on its keys only.
                    comparators.append(_call(CT, e(c, True)))
                else:
                    comparators.append(e(c, False))
            return ast.Compare(e(node.left, False), node.ops, comparators)
        if isinstance(node, ast.BinOp):
            return ast.BinOp(e(node.left, False), node.op, e(node.right, False))
        if isinstance(node, ast.UnaryOp):
            return ast.UnaryOp(node.op, e(node.operand, False))
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            elts = [self.element(x) for x in node.elts]
            return ast.Set(elts) if isinstance(node, ast.Set) else type(node)(elts, ast.Load())
        if isinstance(node, ast.Dict):
            # A dict of values (the keyword arguments of a later call, say) keeps them
            # tracked as a container; keys are hashed, and a spread is iterated.
            keys = [None if k is None else e(k, False) for k in node.keys]
            values = [e(v, k is not None) for k, v in zip(node.keys, node.values, strict=True)]
            return self._escaped(_call(DICT, ast.Dict(keys, values)), passing)
        if isinstance(node, ast.JoinedStr):
            return ast.JoinedStr([e(v, False) for v in node.values])
        if isinstance(node, ast.FormattedValue):
            spec = None if node.format_spec is None else e(node.format_spec, False)
            return ast.FormattedValue(e(node.value, False), node.conversion, spec)
        if isinstance(node, ast.Yield):
            return ast.Yield(None if node.value is None else e(node.value, False))
        if isinstance(node, ast.YieldFrom):
            return ast.YieldFrom(e(node.value, False))
        if isinstance(node, ast.Starred):
            return ast.Starred(e(node.value, False), node.ctx)
        raise Unsupported(type(node).__name__)

    def element(self, node: ast.expr) -> ast.expr:
        """An element of a new tuple, list or set (escapes into the container)."""
        if isinstance(node, ast.Starred):
            return ast.copy_location(ast.Starred(self.expr(node.value, False), ast.Load()), node)
        return self.expr(node, False)

    def key(self, node: ast.expr) -> ast.expr:
        """A subscript's key, as the value ``__getitem__`` receives."""
        if isinstance(node, ast.Slice):
            parts = [
                ast.Constant(None) if p is None else self.expr(p, False)
                for p in (node.lower, node.upper, node.step)
            ]
            return ast.copy_location(_call(SLICE, *parts), node)
        if isinstance(node, ast.Tuple) and any(isinstance(x, ast.Slice) for x in node.elts):
            return ast.copy_location(ast.Tuple([self.key(x) for x in node.elts], ast.Load()), node)
        return self.expr(node, False)

    def call(self, node: ast.Call) -> ast.expr:
        """A call: through ``call`` (which decides per callee), except ``super()``, which
        finds its class and instance in the calling frame."""
        # *x and **x hand the call x's items one by one (followed there): the splat
        # itself iterates x, which reads the state's values (a map's keys only).
        args = [
            ast.Starred(_call(SPLAT, self.expr(a.value, True)), ast.Load())
            if isinstance(a, ast.Starred)
            else self.expr(a, True)
            for a in node.args
        ]
        keywords = [
            ast.keyword(
                k.arg,
                self.expr(k.value, True)
                if k.arg is not None
                else _call(SPLAT, self.expr(k.value, True), ast.Constant(True)),
            )
            for k in node.keywords
        ]
        func = node.func
        if isinstance(func, ast.Name) and func.id == "super":
            return ast.Call(func, [self.expr(a, False) for a in node.args], keywords)
        return ast.Call(ast.Name(CALL, ast.Load()), [self.expr(func, True), *args], keywords)

    def comprehensions(self, gens: list[ast.comprehension]) -> list[ast.comprehension]:
        """A comprehension's loops: each iterable through ``it``, each condition and
        target as in a function body."""
        out = []
        for g in gens:
            if g.is_async:
                raise Unsupported("async comprehension")
            out.append(
                ast.comprehension(
                    self.target(g.target),
                    _call(IT, self.expr(g.iter, True)),
                    [self.expr(c, False) for c in g.ifs],
                    0,
                )
            )
        return out

    def arguments(self, args: ast.arguments) -> ast.arguments:
        """A nested function's parameters: defaults are evaluated here (escaping)."""
        return ast.arguments(
            posonlyargs=args.posonlyargs,
            args=args.args,
            vararg=args.vararg,
            kwonlyargs=args.kwonlyargs,
            kw_defaults=[None if d is None else self.expr(d, False) for d in args.kw_defaults],
            kwarg=args.kwarg,
            defaults=[self.expr(d, False) for d in args.defaults],
        )

    def nested_body_expr(self, body: ast.expr) -> ast.expr:
        """A lambda's body: its value returns to whoever calls it (maybe code that is not
        instrumented), so it escapes."""
        top, self.top = self.top, False
        try:
            return self.expr(body, False)
        finally:
            self.top = top

    # -- targets -----------------------------------------------------------------------
    def target(self, node: ast.expr) -> ast.expr:
        """An assignment or deletion target: the object whose attribute or item is set
        escapes (states are immutable; a mutable local is not the state)."""
        if isinstance(node, ast.Name):
            return node
        if isinstance(node, ast.Attribute):
            return ast.copy_location(
                ast.Attribute(self.expr(node.value, False), self.attr(node.attr), node.ctx), node
            )
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Slice):
                key = ast.Slice(
                    *[
                        None if p is None else self.expr(p, False)
                        for p in (key.lower, key.upper, key.step)
                    ]
                )
            else:
                key = self.expr(key, False)
            return ast.copy_location(
                ast.Subscript(self.expr(node.value, False), key, node.ctx), node
            )
        if isinstance(node, ast.Tuple | ast.List):
            return ast.copy_location(
                type(node)([self.target(x) for x in node.elts], node.ctx), node
            )
        if isinstance(node, ast.Starred):
            return ast.copy_location(ast.Starred(self.target(node.value), node.ctx), node)
        raise Unsupported(type(node).__name__)

    # -- statements --------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """Statements rewritten (an AugAssign on a name may add a statement before)."""
        out: list[ast.stmt] = []
        for st in stmts:
            out.extend(self.stmt(st))
        return out

    def stmt(self, st: ast.stmt) -> list[ast.stmt]:
        e = self.expr
        new: ast.stmt
        extra: list[ast.stmt] = []
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Subscript)
            and not isinstance(st.targets[0].slice, ast.Slice)
        ):
            # d[k] = v: in Python's order (the value, the object, the key), through the
            # runtime, which keeps v tracked in a tracked container.
            t = st.targets[0]
            store = _call(SETITEM, e(st.value, True), e(t.value, True), e(t.slice, False))
            new = ast.Expr(store)
        elif isinstance(st, ast.Assign):
            simple = all(isinstance(t, ast.Name) and t.id not in self.declared for t in st.targets)
            new = ast.Assign([self.target(t) for t in st.targets], e(st.value, simple))
        elif isinstance(st, ast.AnnAssign):
            simple = isinstance(st.target, ast.Name) and st.target.id not in self.declared
            value = None if st.value is None else e(st.value, simple)
            new = ast.AnnAssign(  # type: ignore[call-overload]
                self.target(st.target), e(st.annotation, False), value, st.simple
            )
        elif isinstance(st, ast.AugAssign):
            if isinstance(st.target, ast.Name):
                # x += v reads x as an operand: the same as esc(x) before it.
                load = ast.copy_location(ast.Name(st.target.id, ast.Load()), st)
                extra.append(ast.copy_location(ast.Expr(_call(ESC, load)), st))
            target = self.target(st.target)
            new = ast.AugAssign(target, st.op, e(st.value, False))  # type: ignore[arg-type]
        elif isinstance(st, ast.Return):
            new = ast.Return(None if st.value is None else e(st.value, self.top))
        elif isinstance(st, ast.Expr):
            new = ast.Expr(e(st.value, True))
        elif isinstance(st, ast.If):
            new = ast.If(e(st.test, False), self.body(st.body), self.body(st.orelse))
        elif isinstance(st, ast.While):
            new = ast.While(e(st.test, False), self.body(st.body), self.body(st.orelse))
        elif isinstance(st, ast.For):
            new = ast.For(
                self.target(st.target),
                _call(IT, e(st.iter, True)),
                self.body(st.body),
                self.body(st.orelse),
                st.type_comment,
            )
        elif isinstance(st, ast.With):
            items = [
                ast.withitem(
                    e(i.context_expr, False),
                    None if i.optional_vars is None else self.target(i.optional_vars),
                )
                for i in st.items
            ]
            new = ast.With(items, self.body(st.body), st.type_comment)
        elif isinstance(st, ast.Raise):
            new = ast.Raise(
                None if st.exc is None else e(st.exc, False),
                None if st.cause is None else e(st.cause, False),
            )
        elif isinstance(st, ast.Assert):
            new = ast.Assert(e(st.test, False), None if st.msg is None else e(st.msg, False))
        elif isinstance(st, ast.Delete):
            new = ast.Delete([self.target(t) for t in st.targets])
        elif isinstance(st, ast.Try | ast.TryStar):
            handlers = [
                ast.ExceptHandler(
                    None if h.type is None else e(h.type, False), h.name, self.body(h.body)
                )
                for h in st.handlers
            ]
            new = type(st)(
                self.body(st.body), handlers, self.body(st.orelse), self.body(st.finalbody)
            )
        elif isinstance(st, ast.FunctionDef):
            new = self.nested_def(st)
        elif isinstance(st, _KEPT_STATEMENTS):
            new = st
        else:
            raise Unsupported(type(st).__name__)
        return [*extra, ast.copy_location(new, st)]

    def nested_def(self, st: ast.FunctionDef) -> ast.FunctionDef:
        """A function defined inside: its decorators and defaults run here; its returns
        go to whoever calls it, so they escape."""
        outer = (self.top, self.declared)
        decorators = [self.expr(d, False) for d in st.decorator_list]
        args = self.arguments(st.args)
        self.top, self.declared = False, _scope_declared(st.body)
        try:
            body = boxes(st.args) + self.body(st.body)
        finally:
            self.top, self.declared = outer
        returns = None if st.returns is None else self.expr(st.returns, False)
        return ast.FunctionDef(st.name, args, body, decorators, returns, st.type_comment)


def boxes(args: ast.arguments) -> list[ast.stmt]:
    """Statements that make a function's ``*args`` tuple and ``**kwargs`` dict (built
    by the interpreter from what the caller passed) tracked containers."""
    out: list[ast.stmt] = []
    for a in (args.vararg, args.kwarg):
        if a is not None:
            out.append(ast.Expr(_call(BOX, ast.Name(a.arg, ast.Load()))))
    return out


# -- finding a function's source and compiling its copy -------------------------------------


def _module_tree(filename: str, trees: dict[str, Any]) -> tuple[ast.Module, types.CodeType] | None:
    """The source file's syntax tree and the module code that text compiles to (None:
    no source, or a text that does not parse)."""
    if filename in trees:
        return trees[filename]  # type: ignore[no-any-return]
    # Python's line cache keeps the first text it read under a file name: a spec file
    # rewritten and imported again in one process would be instrumented from its old
    # text.  Look at the file again; what it holds is still checked against the code
    # that runs (_compiled_from), as the file may change after the import too.
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    found = None
    if lines:
        try:
            tree = ast.parse("".join(lines), filename)
            found = (tree, compile(tree, filename, "exec", dont_inherit=True))
        except (SyntaxError, ValueError):
            found = None
    trees[filename] = found
    return found


def _compiled_from(code: types.CodeType, module: types.CodeType) -> bool:
    """Whether the module text compiles to ``code`` itself (same bytecode, constants,
    names and positions): only then is the copy made from that text the function
    that runs.  The fast path must never see another spec than the plain one."""
    stack = [module]
    while stack:
        c = stack.pop()
        if c.co_firstlineno == code.co_firstlineno and c.co_name == code.co_name and c == code:
            return True
        stack.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
    return False


def find_node(code: types.CodeType, tree: ast.Module) -> ast.FunctionDef | ast.Lambda | None:
    """The definition in ``tree`` that compiled to ``code``: by name and first line,
    and where several share them (lambdas on one line), by the columns of the code's
    instructions."""
    candidates: list[ast.FunctionDef | ast.Lambda] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if node.name == code.co_name and first == code.co_firstlineno:
                candidates.append(node)
        elif (
            isinstance(node, ast.Lambda)
            and code.co_name == "<lambda>"
            and node.lineno == code.co_firstlineno
        ):
            candidates.append(node)
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    spans = [
        (p[0], p[2], p[1], p[3]) for p in code.co_positions() if None not in p and p[2] is not None
    ]
    inside = []
    for node in candidates:
        lo = (node.lineno, node.col_offset)
        hi = (node.end_lineno or node.lineno, node.end_col_offset or 0)
        if spans and all(lo <= (a, c) and (b, d) <= hi for a, c, b, d in spans):
            inside.append(node)
    # The innermost span that holds every instruction: a lambda inside another's body.
    if not inside:
        return None
    inside.sort(key=lambda n: (n.end_lineno or 0) - n.lineno)
    best = [n for n in inside if n is inside[0] or _span(n) == _span(inside[0])]
    return inside[0] if len(best) == 1 else None


def _span(node: ast.AST) -> tuple[int, int, int, int]:
    return (
        node.lineno,  # type: ignore[attr-defined]
        node.col_offset,  # type: ignore[attr-defined]
        node.end_lineno or 0,  # type: ignore[attr-defined]
        node.end_col_offset or 0,  # type: ignore[attr-defined]
    )


def enclosing_class(qualname: str) -> str | None:
    """The name of the innermost class a function is defined in (by its qualified
    name): names there are mangled with it, and ``super()`` refers to it."""
    parts = qualname.split(".")[:-1]
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == "<locals>":
            continue
        following = parts[i + 1] if i + 1 < len(parts) else None
        if following != "<locals>":
            return parts[i]
    return None


#: Names through which code sees frames, closures or namespaces: a copy would show it
#: the runtime's (its cells in ``locals()``, its frame from ``sys._getframe()``), so
#: code that uses them is not instrumented and runs on the plain path.
FRAME_NAMES = frozenset(
    {
        "locals",
        "vars",
        "globals",
        "dir",
        "eval",
        "exec",
        "breakpoint",
        "_getframe",
        "currentframe",
        "stack",
        "trace",
        "f_back",
        "f_locals",
        "f_globals",
        "tb_frame",
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "__closure__",
        "cell_contents",
        "__globals__",
        "__code__",
    }
)


def _refuse_constructs(node: ast.AST) -> None:
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Name) and sub.id in FRAME_NAMES) or (
            isinstance(sub, ast.Attribute) and sub.attr in FRAME_NAMES
        ):
            raise Unsupported(f"frame or namespace access ({ast.unparse(sub)})")
        if isinstance(
            sub,
            ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith | ast.Match,
        ):
            raise Unsupported(type(sub).__name__)
        if isinstance(sub, ast.ClassDef):
            raise Unsupported("a class defined inside")


def instrument(
    fn: types.FunctionType, helpers: dict[str, Any], trees: dict[str, Any]
) -> types.FunctionType | None:
    """The instrumented copy of ``fn`` with the runtime's ``helpers`` (see the module
    docstring), or None where it cannot be made (no source, a construct the rewrite
    does not follow).  ``trees`` caches parsed source files."""
    code = fn.__code__
    source = _module_tree(code.co_filename, trees)
    if source is None or not _compiled_from(code, source[1]):
        return None
    node = find_node(code, source[0])
    if node is None:
        return None
    try:
        _refuse_constructs(node)
        return _compile(fn, node, helpers)
    except (Unsupported, SyntaxError, ValueError, TypeError):
        return None


def _compile(
    fn: types.FunctionType, node: ast.FunctionDef | ast.Lambda, helpers: dict[str, Any]
) -> types.FunctionType | None:
    code = fn.__code__
    cls = enclosing_class(fn.__qualname__)
    rw = Rewriter(cls)
    name = code.co_name if isinstance(node, ast.FunctionDef) else "_mcheck_lambda"
    # The copy's signature; defaults, annotations and decorators come from the original
    # function object (evaluating them again could have effects).
    args = node.args
    plain = ast.arguments(
        posonlyargs=args.posonlyargs,
        args=[ast.arg(a.arg) for a in args.args],
        vararg=None if args.vararg is None else ast.arg(args.vararg.arg),
        kwonlyargs=[ast.arg(a.arg) for a in args.kwonlyargs],
        kw_defaults=[None] * len(args.kwonlyargs),
        kwarg=None if args.kwarg is None else ast.arg(args.kwarg.arg),
        defaults=[],
    )
    plain.posonlyargs = [ast.arg(a.arg) for a in args.posonlyargs]
    if isinstance(node, ast.FunctionDef):
        rw.declared = _scope_declared(node.body)
        body = boxes(node.args) + rw.body(node.body)
    else:
        if args.vararg is not None or args.kwarg is not None:
            raise Unsupported("a lambda with *args or **kwargs")
        body = [ast.copy_location(ast.Return(rw.expr(node.body, True)), node.body)]
    fdef = ast.FunctionDef(name, plain, body, [], None, None)
    ast.copy_location(fdef, node)
    free = [v for v in code.co_freevars if v != "__class__"]
    inner: list[ast.stmt]
    if cls is not None:
        holder = ast.ClassDef(cls, [], [], [fdef], [])
        ast.copy_location(holder, node)
        get = ast.Subscript(
            ast.Attribute(ast.Name(cls, ast.Load()), "__dict__", ast.Load()),
            ast.Constant(name),
            ast.Load(),
        )
        inner = [holder, ast.Return(get)]
    else:
        inner = [fdef, ast.Return(ast.Name(name, ast.Load()))]
    factory_args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(n) for n in (*HELPERS, *free)],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    factory = ast.FunctionDef("_mcheck_factory", factory_args, inner, [], None, None)
    ast.copy_location(factory, node)
    module = ast.Module([factory], [])
    ast.fix_missing_locations(module)
    compiled = compile(
        module, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True
    )
    factory_code = next(
        c
        for c in compiled.co_consts
        if isinstance(c, types.CodeType) and c.co_name == "_mcheck_factory"
    )
    make = types.FunctionType(factory_code, fn.__globals__)
    made = make(*(helpers[h] for h in HELPERS), *([None] * len(free)))
    made_code = made.__code__
    own = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
    theirs = dict(zip(made_code.co_freevars, made.__closure__ or (), strict=True))
    cells = []
    for v in made_code.co_freevars:
        if v in own:
            cells.append(own[v])
        elif v in HELPERS:
            cells.append(theirs[v])
        else:
            return None  # a free name the original does not have
    if made_code.co_argcount != code.co_argcount or made_code.co_kwonlyargcount != (
        code.co_kwonlyargcount
    ):
        return None
    copy = types.FunctionType(made_code, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells))
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    copy.__annotations__ = dict(getattr(fn, "__annotations__", {}) or {})
    return copy


def may_instrument(fn: types.FunctionType) -> bool:
    """Whether ``fn`` is spec code worth instrumenting: not mcheck's own, not the
    standard library's, not an installed third-party package's (the shipped specs
    excepted).  Code that is not instrumented still runs; what it is given counts as
    read in full."""
    module = (fn.__module__ or "").split(".")[0]
    if module == "checker" or module in sys.stdlib_module_names:
        return False
    if module == "mcheck_shipped":
        return True
    parts = Path(fn.__code__.co_filename).parts
    return not ("site-packages" in parts or "dist-packages" in parts)
