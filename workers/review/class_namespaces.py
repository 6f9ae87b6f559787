"""Classes whose body runs in a namespace their metaclass makes, told from the body alone.

A metaclass's ``__prepare__`` may hand the class body a namespace that answers names no
import defines and keeps every definition of a name: SLY's ``Lexer`` reads
``tokens = {NAME, NUMBER}`` before the body assigns ``NAME``, and its ``Parser`` decorates
each grammar rule with ``@_('expr PLUS term')`` on methods that all share the rule's name.
Ruff reads the body as an ordinary one and says "undefined name" (F821) and
"redefinition of unused" (F811) on every line of the grammar: sly 0.3 → 0.5 gave 161 such
candidates. Python itself shows which classes these are: in an ordinary class body a name
read before it is bound raises NameError, so a body that reads a name before binding it
(and the module never binds it), or that decorates two methods of one name with calls of
a name nothing binds, imports without error only because its namespace supplies them.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter

from workers.review.false_alarms import parse_source

__all__ = ["in_a_namespace_class", "read_from_its_namespace"]

_BUILTINS = frozenset(dir(builtins))


def read_from_its_namespace(source: str, row: int, name: str) -> bool:
    """Whether ``name``, undefined on ``row``, is read by the body of a class whose
    namespace its metaclass makes (decorators and default values included, not the
    bodies of its methods, which look names up in the module)."""
    tree = parse_source(source)
    if tree is None:
        return False
    return any(
        any(read.id == name and read.lineno == row for read in _class_reads(cls))
        for cls in _namespace_classes(tree)
    )


def in_a_namespace_class(source: str, row: int) -> bool:
    """Whether ``row`` binds a name directly in the body of such a class, where a second
    definition adds to the namespace instead of replacing the first."""
    tree = parse_source(source)
    if tree is None:
        return False
    return any(
        any(statement.lineno <= row <= (statement.end_lineno or row) for statement in cls.body)
        for cls in _namespace_classes(tree)
    )


def _namespace_classes(tree: ast.Module) -> list[ast.ClassDef]:
    bound = _module_bindings(tree) | _BUILTINS
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and node.bases
        and (_reads_before_binding(node, bound) or _registers_under_one_name(node, bound))
    ]


def _reads_before_binding(cls: ast.ClassDef, bound: frozenset[str]) -> bool:
    """A read, at the class's top level, of a name the body binds only later."""
    first_bound: dict[str, int] = {}
    for statement in cls.body:
        for name in _statement_binds(statement):
            first_bound.setdefault(name, statement.lineno)
    return any(
        read.id not in bound and read.lineno < first_bound.get(read.id, 0)
        for read in _class_reads(cls)
    )


def _registers_under_one_name(cls: ast.ClassDef, bound: frozenset[str]) -> bool:
    """Two methods of one name, each decorated by a call of the same unbound name."""
    seen: Counter[tuple[str, str]] = Counter()
    for statement in cls.body:
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in statement.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Name)
                and decorator.func.id not in bound
            ):
                seen[(decorator.func.id, statement.name)] += 1
    return any(count > 1 for count in seen.values())


def _class_reads(cls: ast.ClassDef) -> list[ast.Name]:
    """The names the class body itself looks up: its statements, and its methods'
    decorators and default values, but not what runs later inside methods or lambdas."""
    evaluated: list[ast.AST] = []
    for statement in cls.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            evaluated.extend(statement.decorator_list)
            evaluated.extend(statement.args.defaults)
            evaluated.extend(d for d in statement.args.kw_defaults if d is not None)
        elif not isinstance(statement, ast.ClassDef):
            evaluated.append(statement)
    reads: list[ast.Name] = []
    pending = evaluated
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.append(node)
        if not isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
            pending.extend(ast.iter_child_nodes(node))
    return reads


def _statement_binds(statement: ast.stmt) -> set[str]:
    """The names a statement binds where it stands: a definition's name, and for any
    other statement (``if``, ``try`` and the rest, in any branch) its imports,
    definitions and assignment targets."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    names: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


def _module_bindings(tree: ast.Module) -> frozenset[str]:
    """Every name the module's own statements bind (in any branch), and names declared
    ``global`` anywhere."""
    names = {name for statement in tree.body for name in _statement_binds(statement)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
    return frozenset(names)
