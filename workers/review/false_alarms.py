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
"""

from __future__ import annotations

import ast
import builtins
import functools
import re

__all__ = ["DJANGO_EXTRA_KEYWORDS", "not_djangos_extra", "self_assigned_builtin"]

_SELF_ASSIGNED = re.compile(r"Self-assignment of variable `(\w+)`")
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


@functools.lru_cache(maxsize=16)  # ruff reports several lines per file
def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
