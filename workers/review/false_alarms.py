"""Ruff remarks that do not apply to the code they are on, told by reading that code.

Ruff judges a line by its own shape and, for some rules, guesses what a name refers to.
Two guesses go wrong often enough on real projects to drown the useful remarks of a
review, and reading a little more of the file settles them:

- ``PLW0127`` (self-assignment) on a builtin: ``ExceptionGroup = ExceptionGroup`` binds
  the builtin as a module attribute, to re-export it or beside a fallback class for older
  Pythons (packaging 24.2). The rule assumes the line does nothing; for a builtin it does.
- ``S610`` (Django's ``QuerySet.extra``) on any method called ``extra``: anyio's typed
  attributes (``stream.extra(SocketAttribute.local_address)``) gave nine "high" remarks
  on one release of a project that has nothing to do with Django. Django's ``extra``
  takes SQL fragments as ``select``/``where``/``tables``/``order_by``/``params``/
  ``select_params``, or a literal dict or list in their place; a call with none of those,
  in a file that does not import Django, is another library's ``extra``.
- ``B018`` (useless expression) on an expression standing alone in the body of a
  ``try`` with an ``except``: it is there to raise. ``brotli.Decompressor.process`` under
  ``except AttributeError`` (scrapy 2.11) asks whether the installed version has it, as
  ``hasattr`` would; ``1 / 0`` under ``except Exception as e`` (sanic's tests) makes an
  exception to work with.
- ``PLE0704`` (a bare ``raise`` outside an ``except``) under a check that an exception
  is being handled: flask's ``if error is sys.exc_info()[1]: raise`` re-raises the
  caller's exception, which is what a bare ``raise`` in a function called from an
  ``except`` block does.

And one is right about the code but wrong about its weight:

- ``ISC001`` (two string literals side by side on one line) is medium because it is
  usually a missing comma (``["a" "b", "c"]``). Where the text runs on across the split,
  a space or a line break at it (``"Cannot set {key} " f"due to {value}"``, marshmallow;
  ``"Successful " "Response"``, fastapi), it is one sentence a formatter joined onto one
  line: a minor remark (combine them), not a likely bug.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re

__all__ = [
    "DJANGO_EXTRA_KEYWORDS",
    "not_djangos_extra",
    "raises_on_purpose",
    "reraises_a_handled_exception",
    "self_assigned_builtin",
    "split_inside_a_sentence",
]

_SELF_ASSIGNED = re.compile(r"Self-assignment of variable `(\w+)`")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# One string literal on one line: prefix, quote, body (escapes kept as written).
_LITERAL = re.compile(
    r"""(?P<prefix>[rRbBuUfFtT]{0,2})(?P<q>\"\"\"|'''|"|')(?P<body>(?:\\.|(?!(?P=q)).)*?)(?P=q)"""
)
_RUNS_ON_END = re.compile(r"(?:\s|\\[nrt])$")
_RUNS_ON_START = re.compile(r"^(?:\s|\\[nrt])")
_IMPORTS_DJANGO = re.compile(r"^[ \t]*(?:from|import)[ \t]+django\b", re.MULTILINE)
DJANGO_EXTRA_KEYWORDS = frozenset(
    {"select", "where", "params", "tables", "order_by", "select_params"}
)


def self_assigned_builtin(message: str, newer_builtins: frozenset[str] = frozenset()) -> bool:
    """Whether ruff's PLW0127 ``message`` is about a builtin (of this Python, or one of
    ``newer_builtins``, added after it)."""
    match = _SELF_ASSIGNED.search(message)
    return match is not None and (
        match.group(1) in newer_builtins or hasattr(builtins, match.group(1))
    )


def not_djangos_extra(source: str, row: int) -> bool:
    """Whether every ``.extra(...)`` call on ``row`` is plainly not Django's: the file
    does not import Django and no such call passes Django's arguments. A file that does
    not parse, or a row without such a call, keeps the remark."""
    if _IMPORTS_DJANGO.search(source):
        return False
    tree = _parse(source)
    if tree is None:
        return False
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "extra"
        and node.lineno <= row <= (node.end_lineno or node.lineno)
    ]
    return bool(calls) and not any(_djangos_shape(call) for call in calls)


def _djangos_shape(call: ast.Call) -> bool:
    if any(k.arg in DJANGO_EXTRA_KEYWORDS or k.arg is None for k in call.keywords):
        return True  # ``**kwargs`` may hold them too
    return any(
        isinstance(a, ast.Dict | ast.List | ast.Tuple | ast.Starred | ast.DictComp)
        for a in call.args
    )


def raises_on_purpose(source: str, row: int) -> bool:
    """Whether ``row`` holds an expression standing alone as a statement directly in the
    body of a ``try`` that has an ``except`` (not only a ``finally``)."""
    tree = _parse(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try | ast.TryStar) or not node.handlers:
            continue
        for statement in node.body:
            if isinstance(statement, ast.Expr) and (
                statement.lineno <= row <= (statement.end_lineno or statement.lineno)
            ):
                return True
    return False


_HANDLED_NOW = frozenset({"exc_info", "exception"})  # sys.exc_info(), sys.exception()


def reraises_a_handled_exception(source: str, row: int) -> bool:
    """Whether the bare ``raise`` on ``row`` sits under an ``if`` whose test asks
    ``sys.exc_info()`` or ``sys.exception()``: it runs only while an exception is handled."""
    tree = _parse(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not _asks_for_handled(node.test):
            continue
        for statement in node.body:
            for inner in ast.walk(statement):
                if isinstance(inner, ast.Raise) and inner.exc is None and inner.lineno == row:
                    return True
    return False


def _asks_for_handled(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in _HANDLED_NOW
                and isinstance(func.value, ast.Name)
                and func.value.id == "sys"
            ) or (isinstance(func, ast.Name) and func.id == "exc_info"):
                return True
    return False


@functools.lru_cache(maxsize=16)  # ruff reports several lines per file
def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def split_inside_a_sentence(source: str, row: int, start: int, end: int) -> bool:
    """Whether ruff's ISC001 pair from column ``start`` to ``end`` (1-based, ``end``
    exclusive) on ``row`` is one text split where it runs on: the first literal ends, or
    the second starts, with whitespace (or a ``\\n``/``\\r``/``\\t`` escape). Anything
    this cannot read as exactly two literals is not."""
    lines = _LINE_BREAK.split(source)
    if not 1 <= row <= len(lines) or not 1 <= start < end:
        return False
    pair = lines[row - 1][start - 1 : end - 1]
    found = list(_LITERAL.finditer(pair))
    if len(found) != 2 or found[0].start() != 0 or found[1].end() != len(pair):
        return False
    if pair[found[0].end() : found[1].start()].strip():
        return False  # something between them that is not space: not read right
    return _runs_on(found[0], _RUNS_ON_END) or _runs_on(found[1], _RUNS_ON_START)


def _runs_on(literal: re.Match[str], edge: re.Pattern[str]) -> bool:
    body = literal.group("body")
    if "r" in literal.group("prefix").lower():  # a raw string has no escapes
        body = body.replace("\\", "\x00")
    return edge.search(body) is not None
