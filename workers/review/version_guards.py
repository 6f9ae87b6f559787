"""Which Pythons a line of code can run on, as the version checks around it say.

Ruff lints a file for the oldest Python the project supports and does not follow
``sys.version_info`` branches, so a builtin added later (``ExceptionGroup``,
``EncodingWarning``) is an "undefined name" even where the code only reaches it on a
Python that has it::

    if sys.version_info >= (3, 11):
        ExceptionGroup = ExceptionGroup      # packaging 24.2
    else:
        class ExceptionGroup(Exception): ...

Such code is the correct way to support both, so a remark on it is noise. This module reads
the file (``ast``, never run) and says what the checks around a position guarantee:
enclosing ``if``/``else`` branches and conditional expressions on ``sys.version_info``
(also as ``version_info``, sliced, ``.minor`` or ``[1]``, negated, joined with
``and``/``or``, or through a module-level name such as ``PY311 = sys.version_info >=
(3, 11)``), an earlier ``if sys.version_info < (3, 11): raise/return/pytest.skip(...)``
in the same block, tests skipped on older versions (``@pytest.mark.skipif(...)``,
``unittest.skipIf``/``skipUnless``, a module's ``pytestmark``: aiohttp's tests of
``anext``), and a ``try`` (or ``contextlib.suppress``) that catches ``NameError``.
Anything it cannot read guarantees nothing, so the remark stays.

Whole test files are kept from older Pythons the same way, one level up: a ``conftest.py``
that says ``if sys.version_info < (3, 12): collect_ignore_glob.append("*_695.py")``
(cattrs) has pytest skip them there, so PEP 695 syntax in ``tests/test_generics_695.py``
never meets a Python that lacks it. :func:`collected_from` reads those lists.
"""

from __future__ import annotations

import ast
import collections
import fnmatch
import functools
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Guarantee", "collected_from", "guarantee_at", "int_tuple", "runs_only_where_defined"]

# What an exception handler must name to catch the NameError of a missing builtin.
_CATCHES_NAME_ERROR = frozenset({"NameError", "Exception", "BaseException"})
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_IGNORE_LISTS = ("collect_ignore", "collect_ignore_glob")
MAX_CONFTEST_DEPTH = 12


@dataclass(frozen=True)
class Guarantee:
    """What holds wherever a position runs: the oldest Python 3 minor version it can run
    on (``None``: no check says), and whether a ``NameError`` there is caught."""

    minor: int | None = None
    name_error_caught: bool = False

    def at_least(self, minor: int | None) -> Guarantee:
        if minor is None or (self.minor is not None and self.minor >= minor):
            return self
        return Guarantee(minor, self.name_error_caught)

    def catching(self) -> Guarantee:
        return Guarantee(self.minor, True)


def runs_only_where_defined(source: str, row: int, column: int, added_minor: int) -> bool:
    """Whether the name at ``row``/``column`` (1-based, ruff's character column), a builtin
    since Python 3.``added_minor``, never raises ``NameError``: the checks around it keep
    it from running on older versions, or a ``NameError`` there is caught."""
    found = guarantee_at(source, row, column)
    return found.name_error_caught or (found.minor is not None and found.minor >= added_minor)


def guarantee_at(source: str, row: int, column: int) -> Guarantee:
    """The :class:`Guarantee` at ``row``/``column`` (1-based; the column counts characters,
    as ruff's does). A file that does not parse guarantees nothing."""
    read = _read(source)
    lines = _LINE_BREAK.split(source)  # as ast counts rows: not at form feeds
    if read is None or not 1 <= row <= len(lines):
        return Guarantee()
    tree, reader = read
    offset = len(lines[row - 1][: max(0, column - 1)].encode("utf-8"))
    return reader.node(tree, (row, offset), Guarantee(reader.module_floor))


def collected_from(path: str, file_text: Callable[[str], str | None]) -> int | None:
    """The oldest Python 3 minor version on which pytest collects the test file ``path``,
    as the ``conftest.py`` files in its folder and the folders above say (their
    ``collect_ignore``/``collect_ignore_glob`` entries added under a version check); None
    when none of them keeps it from a version."""
    parts = path.split("/")
    floor: int | None = None
    for depth in range(min(len(parts), MAX_CONFTEST_DEPTH)):
        folder = "/".join(parts[:depth])
        inside = "/".join(parts[depth:])  # the path from the conftest's folder
        source = file_text(f"{folder}/conftest.py" if folder else "conftest.py")
        if not source:
            continue
        for minor, kind, entry in _version_ignores(source):
            if _ignored(kind, entry, inside):
                floor = _highest([floor, minor])
    return floor


def _ignored(kind: str, entry: str, inside: str) -> bool:
    """As pytest matches: ``collect_ignore`` names a path (a file, or a folder and all
    under it), ``collect_ignore_glob`` a glob whose ``*`` crosses folders; both from the
    conftest's folder."""
    entry = posixpath.normpath(entry.replace("\\", "/"))
    if entry.startswith(("/", "..")) or entry == ".":
        return False
    if kind == "collect_ignore_glob":
        return fnmatch.fnmatchcase(inside, entry)
    return inside == entry or inside.startswith(entry + "/")


@functools.lru_cache(maxsize=16)
def _version_ignores(source: str) -> tuple[tuple[int, str, str], ...]:
    """(minor version from which the entry is collected, list name, entry) for each string
    a conftest adds to its ignore lists under a version check."""
    read = _read(source)
    if read is None:
        return ()
    tree, reader = read
    return tuple(_ignores_in(tree.body, reader, None))


def _ignores_in(
    block: Sequence[ast.stmt], reader: _Reader, floor: int | None
) -> Iterator[tuple[int, str, str]]:
    for stmt in block:
        if isinstance(stmt, ast.If):
            true, false = reader.sense(stmt.test)
            yield from _ignores_in(stmt.body, reader, _highest([floor, false]))
            yield from _ignores_in(stmt.orelse, reader, _highest([floor, true]))
        elif floor is not None:
            for kind, entry in _added_entries(stmt):
                yield floor, kind, entry


def _added_entries(stmt: ast.stmt) -> Iterator[tuple[str, str]]:
    """``collect_ignore.append("a")``, ``.extend([...])``, ``+= [...]``, ``= [...]``."""
    values: list[ast.expr] = []
    kind = ""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in _IGNORE_LISTS
        ):
            kind = func.value.id
            if func.attr == "append":
                values = list(stmt.value.args[:1])
            elif func.attr == "extend" and stmt.value.args:
                values = _elements(stmt.value.args[0])
    elif isinstance(stmt, ast.AugAssign | ast.Assign):
        targets = [stmt.target] if isinstance(stmt, ast.AugAssign) else stmt.targets
        names = [t.id for t in targets if isinstance(t, ast.Name) and t.id in _IGNORE_LISTS]
        if names:
            kind, values = names[0], _elements(stmt.value)
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            yield kind, value.value


def _elements(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.List | ast.Tuple | ast.Set) else []


Point = tuple[int, int]  # (row, UTF-8 byte offset in the row), as ast positions are
# (minor guaranteed when a test is true, minor guaranteed when it is false)
Sense = tuple[int | None, int | None]
_NOTHING: Sense = (None, None)
_MIRROR = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


@functools.lru_cache(maxsize=16)  # ruff reports several names per file
def _read(source: str) -> tuple[ast.Module, _Reader] | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    # ``version_info`` imported from sys; names bound once, at module level, to a check
    aliases = {
        a.asname or a.name
        for stmt in tree.body
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "sys"
        for a in stmt.names
        if a.name == "version_info"
    }
    reader = _Reader({}, aliases)
    bound = collections.Counter(
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    )
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and bound[target.id] == 1:
                sense = reader.sense(stmt.value)
                if sense != _NOTHING:
                    reader.names[target.id] = sense
    # ``pytestmark = pytest.mark.skipif(...)``: the whole module's tests
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
        ):
            reader.module_floor = _highest(reader.skips([stmt.value]))
    return tree, reader


def _contains(node: ast.AST, point: Point) -> bool:
    start = (getattr(node, "lineno", None), getattr(node, "col_offset", None))
    end = (getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))
    if None in start or None in end:
        return False
    return start <= point < end  # type: ignore[operator]


class _Reader:
    """Reads version checks in one file: ``names`` are its module-level check names,
    ``aliases`` what it calls ``sys.version_info`` when imported from ``sys``."""

    def __init__(self, names: dict[str, Sense], aliases: set[str]) -> None:
        self.names = names
        self.aliases = aliases
        self.module_floor: int | None = None  # from the module's ``pytestmark``

    # -- what a test says

    def _version_info(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute):
            return (
                node.attr == "version_info"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            )
        if isinstance(node, ast.Name):
            return node.id in self.aliases
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            s = node.slice
            lower_ok = s.lower is None or _int(s.lower) == 0
            upper = _int(s.upper) if s.upper is not None else None
            return (
                s.step is None and lower_ok and upper in (2, 3) and self._version_info(node.value)
            )
        return False

    def _minor_field(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "minor":
            return self._version_info(node.value)
        if isinstance(node, ast.Subscript) and _int(node.slice) == 1:
            return self._version_info(node.value)
        return False

    def _compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> Sense:
        if not self._version_info(left) and not self._minor_field(left):
            mirrored = _MIRROR.get(type(op))
            if mirrored is None or not (self._version_info(right) or self._minor_field(right)):
                return _NOTHING
            return self._compare(right, mirrored(), left)
        if self._version_info(left):
            version = int_tuple(right)
            if version is None or len(version) < 2 or version[0] != 3:
                return _NOTHING
            minor = version[1]
            # version_info is (3, minor, micro, ...), so ``> (3, 10)`` holds on 3.10.0
            if isinstance(op, ast.GtE | ast.Gt):
                return (minor, None)
            if isinstance(op, ast.Lt | ast.LtE):
                return (None, minor)
            return _NOTHING
        number = _int(right)
        if number is None:
            return _NOTHING
        return {
            ast.GtE: (number, None),
            ast.Gt: (number + 1, None),
            ast.Lt: (None, number),
            ast.LtE: (None, number + 1),
        }.get(type(op), _NOTHING)

    def sense(self, test: ast.expr) -> Sense:
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            return self._compare(test.left, test.ops[0], test.comparators[0])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            true, false = self.sense(test.operand)
            return (false, true)
        if isinstance(test, ast.Name):
            return self.names.get(test.id, _NOTHING)
        if isinstance(test, ast.BoolOp):
            parts = [self.sense(v) for v in test.values]
            if isinstance(test.op, ast.And):  # true: all hold; false: any may fail
                return (_highest([p[0] for p in parts]), _lowest([p[1] for p in parts]))
            return (_lowest([p[0] for p in parts]), _highest([p[1] for p in parts]))
        return _NOTHING

    def skips(self, marks: Sequence[ast.expr]) -> list[int | None]:
        """What each test-skipping mark guarantees where the test runs: pytest's
        ``skipif(cond)`` and unittest's ``skipIf(cond)`` run it when ``cond`` is false,
        ``skipUnless(cond)`` when it is true. Other marks guarantee nothing."""
        out: list[int | None] = []
        for mark in marks:
            if isinstance(mark, ast.List | ast.Tuple):
                out += self.skips(mark.elts)
                continue
            if not isinstance(mark, ast.Call):
                continue
            func = mark.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            condition = mark.args[0] if mark.args else None
            for keyword in mark.keywords:
                if keyword.arg == "condition":
                    condition = keyword.value
            if condition is None:
                continue
            if name in ("skipif", "skipIf"):
                out.append(self.sense(condition)[1])
            elif name == "skipUnless":
                out.append(self.sense(condition)[0])
        return out

    # -- what holds at a point

    def node(self, node: ast.AST, point: Point, held: Guarantee) -> Guarantee:
        branches: list[tuple[ast.AST | list[ast.stmt], Guarantee]] = []
        if isinstance(node, ast.If | ast.IfExp):
            true, false = self.sense(node.test)
            branches = [(node.body, held.at_least(true)), (node.orelse, held.at_least(false))]
        elif isinstance(node, ast.Try | ast.TryStar):
            if any(_catches(h) for h in node.handlers):
                branches = [(node.body, held.catching())]
        elif isinstance(node, ast.With | ast.AsyncWith):
            if any(_suppresses(i) for i in node.items):
                branches = [(node.body, held.catching())]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # ``@pytest.mark.skipif(sys.version_info < (3, 10), reason=...)``
            branches = [(node.body, held.at_least(_highest(self.skips(node.decorator_list))))]
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            # ``sys.version_info >= (3, 11) and isinstance(e, ExceptionGroup)``
            for i, value in enumerate(node.values):
                if _contains(value, point):
                    before = _highest([self.sense(v)[0] for v in node.values[:i]])
                    return self.node(value, point, held.at_least(before))
        for part, guarded in branches:
            if _inside(part, point):
                return self.field(part, point, guarded)
        for _, value in ast.iter_fields(node):
            if isinstance(value, list | ast.AST) and _inside(value, point):
                return self.field(value, point, held)
        return held

    def field(self, value: ast.AST | Sequence[ast.AST], point: Point, held: Guarantee) -> Guarantee:
        items = [value] if isinstance(value, ast.AST) else value
        for item in items:
            if _contains(item, point):
                return self.node(item, point, held)
            # ``if sys.version_info < (3, 11): raise ...`` before it in the same block
            if isinstance(item, ast.If) and not item.orelse and _leaves(item.body[-1]):
                held = held.at_least(self.sense(item.test)[1])
        return held


def _leaves(stmt: ast.stmt) -> bool:
    """Whether the rest of the block never runs after ``stmt``: ``return``, ``raise``,
    ``continue``, ``break``, or a call of ``pytest.skip``/``sys.exit``/``exit``."""
    if isinstance(stmt, _EXITS):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in ("skip", "exit", "_exit")
    return False


def _inside(nodes: ast.AST | Sequence[ast.AST], point: Point) -> bool:
    if isinstance(nodes, ast.AST):
        return _contains(nodes, point)
    return any(isinstance(n, ast.AST) and _contains(n, point) for n in nodes)


def _int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def int_tuple(node: ast.expr) -> tuple[int, ...] | None:
    """A tuple of integer literals as written (``(3, 8)``), or None."""
    if not isinstance(node, ast.Tuple):
        return None
    values = [_int(e) for e in node.elts]
    return None if None in values else tuple(v for v in values if v is not None)


def _highest(values: list[int | None]) -> int | None:
    """The most any of the parts guarantees (all of them hold)."""
    found = [v for v in values if v is not None]
    return max(found) if found else None


def _lowest(values: list[int | None]) -> int | None:
    """What holds whichever part holds: nothing, unless every part guarantees something."""
    if not values or any(v is None for v in values):
        return None
    return min(v for v in values if v is not None)


def _names(node: ast.expr | None) -> set[str]:
    if node is None:
        return {"BaseException"}  # a bare ``except:``
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(e) for e in node.elts))
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return {node.attr} if node.value.id == "builtins" else set()
    return set()


def _catches(handler: ast.ExceptHandler) -> bool:
    return bool(_names(handler.type) & _CATCHES_NAME_ERROR)


def _suppresses(item: ast.withitem) -> bool:
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "suppress" and any(_names(a) & _CATCHES_NAME_ERROR for a in call.args)
