"""``S608`` (SQL built from strings) on a query with nothing in it from outside the code.

Ruff flags every string that reads as SQL and is built by formatting, concatenation or
``%``, without asking what fills the holes. An injection needs text from outside; a hole
filled from the code's own literals, from numbers or from parameter marks cannot carry
one. The common shapes, each a remark on real code where there is nothing to fix:

- placeholders for an ``IN`` list: ``",".join("?" * len(ids))``, or ``"?" for _ in ids``;
- column lists and table names from the module's own constants, or from a loop over a
  tuple of literals: ``f"SELECT {', '.join(_COLUMNS)} FROM t"``;
- numbers: ``range`` counters, ``len()``, ``int()``, a ``{n:d}`` format that refuses
  anything but a number; random names of hex digits, ``secrets.token_hex()`` and
  ``uuid.uuid4().hex`` (sqlite-utils 4.2 probes for ``ON CONFLICT`` support with a
  ``create table t{token_hex(16)}``);
- queries built from those step by step (sqlparse 0.6's benchmarks nest
  ``f"CASE WHEN x={i} THEN {case} ELSE NULL END"`` over ``for i in range(n)``);
- names and values passed through a quoting or escaping function, which is how drivers
  and ORMs put identifiers into SQL: pony's ``"SELECT 1 FROM %s" %
  self.quote_name(table_name)``, Django's ``connection.ops.quote_name``, psycopg's
  ``escape_identifier``.

A hole is from outside as soon as any value that can reach it is: a parameter, an
attribute, a call other than the few that return numbers, an import. That leaves the
remark on every query that takes what a caller passes, which is the one it is for.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping

from workers.review.false_alarms import byte_offset, own_nodes, parse_source

__all__ = ["built_from_constants"]

# Calls whose result is a number or a bool whatever they are given.
_NUMBERS = frozenset({"len", "int", "float", "bool", "abs", "round", "ord", "hash", "id"})
# Functions that quote or escape what they are given for SQL: quote_name, quote_ident,
# escape_string, escape_identifier, literal_escape, …
_QUOTING = re.compile(r"(?i)quote|escape")
# The presentation types of a format spec that accept numbers only ("{n:d}", "{x:.2f}").
_NUMERIC_SPEC = frozenset("bcdoxXeEfFgGn%")
_Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef
# What each name of a scope is bound to: an expression, or None for a binding whose value
# this cannot read (a parameter, an import, ``with … as``, ``except … as``).
_Bindings = dict[str, list[ast.expr | None]]
_Binder = Callable[[ast.expr, ast.expr | None], None]


def built_from_constants(source: str, row: int, column: int) -> bool:
    """Whether the SQL string ruff reported at ``row``/``column`` (1-based, characters) is
    filled only from the code's own constants, numbers and parameter marks."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    found = _query_at(tree, row, offset)
    if found is None:
        return False
    query, scopes = found
    holes = _holes(query)
    if holes is None:
        return False
    reader = _Reader([_bindings(scope) for scope in scopes])
    return all(reader.constant(hole, {}) for hole in holes)


def _module_function(func: ast.expr) -> tuple[str, str] | None:
    """``("secrets", "token_hex")`` for ``secrets.token_hex``; None for other shapes."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id, func.attr
    return None


def _random_uuid(node: ast.expr) -> bool:
    """Whether ``node`` is ``uuid.uuid1()`` … ``uuid.uuid8()``: a random or time-based
    identifier, with no text from anywhere else."""
    if not isinstance(node, ast.Call):
        return False
    found = _module_function(node.func)
    return (
        found is not None and found[0] == "uuid" and re.fullmatch(r"uuid\d", found[1]) is not None
    )


def _query_at(tree: ast.Module, row: int, offset: int) -> tuple[ast.expr, list[_Scope]] | None:
    """The outermost expression starting at the place, and the scopes it sees (innermost
    function first, the module last)."""

    def walk(node: ast.AST, scopes: list[_Scope]) -> tuple[ast.expr, list[_Scope]] | None:
        if isinstance(node, ast.expr) and (node.lineno, node.col_offset) == (row, offset):
            return node, scopes
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scopes = [node, *scopes]
        for child in ast.iter_child_nodes(node):
            if _contains(child, row):
                found = walk(child, scopes)
                if found is not None:
                    return found
        return None

    return walk(tree, [tree])


def _contains(node: ast.AST, row: int) -> bool:
    start = getattr(node, "lineno", None)
    end = getattr(node, "end_lineno", None)
    return start is None or end is None or start <= row <= end


def _holes(query: ast.expr) -> list[ast.expr] | None:
    """What fills the query: the values of an f-string, the operands of ``+`` that are not
    literals, the right side of ``%``, the arguments of ``.format``; None for a shape this
    does not read."""
    if isinstance(query, ast.JoinedStr):
        return list(_fstring_values(query))
    if isinstance(query, ast.BinOp) and isinstance(query.op, ast.Add):
        parts: list[ast.expr] = []
        for side in (query.left, query.right):
            inner = _holes(side) if isinstance(side, ast.JoinedStr | ast.BinOp) else None
            if inner is not None:
                parts += inner
            elif not isinstance(side, ast.Constant):
                parts.append(side)
        return parts
    if isinstance(query, ast.BinOp) and isinstance(query.op, ast.Mod):
        right = query.right
        if isinstance(right, ast.Tuple):
            return list(right.elts)
        if isinstance(right, ast.Dict):
            return [v for v in right.values if v is not None]
        return [right]
    if (
        isinstance(query, ast.Call)
        and isinstance(query.func, ast.Attribute)
        and query.func.attr == "format"
    ):
        holes = [*query.args, *(k.value for k in query.keywords)]
        template = query.func.value
        if isinstance(template, ast.JoinedStr):
            holes += _fstring_values(template)
        elif not isinstance(template, ast.Constant):
            holes.append(template)
        return holes
    return None


def _fstring_values(text: ast.JoinedStr) -> Iterator[ast.expr]:
    """The values of an f-string, but for those formatted as numbers only."""
    for part in text.values:
        if isinstance(part, ast.FormattedValue) and not _numeric_spec(part.format_spec):
            yield part.value


def _numeric_spec(spec: ast.expr | None) -> bool:
    if not isinstance(spec, ast.JoinedStr) or not spec.values:
        return False
    last = spec.values[-1]
    if not all(isinstance(v, ast.Constant) for v in spec.values):
        return False  # "{x:{width}}": the spec itself is filled in
    return isinstance(last, ast.Constant) and str(last.value)[-1:] in _NUMERIC_SPEC


class _Reader:
    """Reads whether an expression's value can only come from the code itself."""

    def __init__(self, scopes: list[_Bindings]) -> None:
        self._scopes = scopes
        self._reading: set[tuple[int, str]] = set()
        self._depth = 0  # the scope a value being read was bound in: names start there

    def constant(self, node: ast.expr, local: Mapping[str, bool]) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.JoinedStr):
            return all(self.constant(v, local) for v in _fstring_values(node))
        if isinstance(node, ast.BinOp):
            return self.constant(node.left, local) and self.constant(node.right, local)
        if isinstance(node, ast.UnaryOp):
            return self.constant(node.operand, local)
        if isinstance(node, ast.IfExp):
            return self.constant(node.body, local) and self.constant(node.orelse, local)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return all(self.constant(e, local) for e in node.elts)
        if isinstance(node, ast.Subscript):
            return self.constant(node.value, local)
        if isinstance(node, ast.GeneratorExp | ast.ListComp | ast.SetComp):
            return self._comprehension(node, local)
        if isinstance(node, ast.Call):
            return self._call(node, local)
        if isinstance(node, ast.Attribute) and node.attr == "hex":
            return _random_uuid(node.value)  # uuid.uuid4().hex: hex digits
        if isinstance(node, ast.Name):
            return local[node.id] if node.id in local else self._name(node.id)
        return False

    def _call(self, node: ast.Call, local: Mapping[str, bool]) -> bool:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if _QUOTING.search(name):
            return True  # quoted or escaped for SQL: what the rule asks for
        if isinstance(func, ast.Name) and func.id in _NUMBERS and func.id not in local:
            return not self._bound(func.id)  # the builtin, unless the code rebinds it
        if isinstance(func, ast.Name) and func.id == "str" and not self._bound("str"):
            return all(self.constant(a, local) for a in node.args)
        if not isinstance(func, ast.Attribute):
            return False
        if _module_function(func) == ("secrets", "token_hex"):
            return True  # hex digits, whatever the length asked for
        if func.attr == "join" and len(node.args) == 1 and not node.keywords:
            # a constant iterable has constant items: "?" * n, a tuple of names
            return self.constant(func.value, local) and self.constant(node.args[0], local)
        if func.attr == "format":
            values = [*node.args, *(k.value for k in node.keywords)]
            return self.constant(func.value, local) and all(self.constant(v, local) for v in values)
        return False

    def _comprehension(
        self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp, local: Mapping[str, bool]
    ) -> bool:
        inner = dict(local)
        for generator in node.generators:
            inner.update(self._targets(generator.target, generator.iter, inner))
        return self.constant(node.elt, inner)

    def _targets(
        self, target: ast.expr, iterable: ast.expr, local: Mapping[str, bool]
    ) -> Iterator[tuple[str, bool]]:
        """The names a ``for`` binds, each with whether what it takes is constant: a
        ``range`` counter always, ``enumerate``'s index always."""
        call = iterable if isinstance(iterable, ast.Call) else None
        name = call.func.id if call and isinstance(call.func, ast.Name) else None
        if name == "range" and not self._bound("range"):
            yield from ((n, True) for n in _names(target))
            return
        if (
            name == "enumerate"
            and call is not None
            and call.args
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and not self._bound("enumerate")
        ):
            yield from ((n, True) for n in _names(target.elts[0]))
            items = self.constant(call.args[0], local)
            yield from ((n, items) for n in _names(target.elts[1]))
            return
        items = self.constant(iterable, local)
        yield from ((n, items) for n in _names(target))

    def _name(self, name: str) -> bool:
        for depth in range(self._depth, len(self._scopes)):
            scope = self._scopes[depth]
            if name not in scope:
                continue
            key = (depth, name)
            if key in self._reading:
                return True  # built from itself and what else it is given: those decide
            self._reading.add(key)
            outer, self._depth = self._depth, depth
            try:
                return all(value is not None and self.constant(value, {}) for value in scope[name])
            finally:
                self._depth = outer
                self._reading.discard(key)
        return False

    def _bound(self, name: str) -> bool:
        return any(name in scope for scope in self._scopes[self._depth :])


def _names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _names(element)
    elif isinstance(target, ast.Starred):
        yield from _names(target.value)


# Nodes whose insides bind names of their own, not the scope's.
_BINDS_ITS_OWN = (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)


def _bindings(scope: _Scope) -> _Bindings:
    """Every value each name of a scope is bound to (``for`` targets as a ``range``
    counter or an item of their iterable), without entering nested functions, classes
    and comprehensions, which bind their own."""
    bound: _Bindings = {}

    def bind(target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            bound.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Tuple | ast.List):
            values = value.elts if isinstance(value, ast.Tuple | ast.List) else None
            if values is not None and len(values) == len(target.elts):
                for element, item in zip(target.elts, values, strict=True):
                    bind(element, item)
            else:
                for element in target.elts:
                    bind(element, None)
        elif isinstance(target, ast.Starred):
            bind(target.value, None)

    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = scope.args
        for arg in (
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *(a for a in (arguments.vararg, arguments.kwarg) if a is not None),
        ):
            bound.setdefault(arg.arg, []).append(None)
    shared: set[str] = set()  # global or nonlocal: read from the enclosing scopes
    for node in own_nodes(scope, _BINDS_ITS_OWN):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
            bind(node.target, node.value)
        elif isinstance(node, ast.For | ast.AsyncFor):
            _bind_loop(node, bind)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bind(node.optional_vars, None)
        elif (
            isinstance(
                node, ast.ExceptHandler | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            )
            and node.name
        ):
            bound.setdefault(node.name, []).append(None)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            shared.update(node.names)
    return {name: values for name, values in bound.items() if name not in shared}


def _bind_loop(node: ast.For | ast.AsyncFor, bind: _Binder) -> None:
    """A ``for`` target: a ``range`` counter is a number; anything else is one item of
    its iterable, which is constant when the iterable is (a tuple of literals)."""
    iterable = node.iter
    counts = (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id == "range"
    )
    if counts:
        for name in _names(node.target):
            bind(ast.Name(id=name), ast.Constant(value=0))
    elif isinstance(iterable, ast.Tuple | ast.List) and isinstance(node.target, ast.Name):
        for item in iterable.elts:
            bind(node.target, item)
    else:
        bind(node.target, _ItemOf(iterable) if isinstance(node.target, ast.Name) else None)


class _ItemOf(ast.Subscript):
    """One item of an iterable, read as ``iterable[...]``: constant when it is."""

    def __init__(self, iterable: ast.expr) -> None:
        super().__init__(value=iterable, slice=ast.Constant(value=0), ctx=ast.Load())
