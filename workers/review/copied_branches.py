"""``SIM114`` (two ``if`` arms with the same body) where the second arm was copied.

corner 2.3.0 checks its two indices in turn::

    if ix > ndim - 1:
        msg = f"ix={ix} too large for ndim={ndim}"
        raise ValueError(msg)
    elif iy > ndim - 1:
        msg = f"ix={ix} too large for ndim={ndim}"
        raise ValueError(msg)

Ruff sees one body written twice and asks for ``if … or …:``; a reader sees a branch
copied and half edited: the ``elif`` tests ``iy`` exactly as the ``if`` tests ``ix``, and
its body still speaks of ``ix``. Merging the arms would keep the slip for good.

The sign, read strictly so that one branch meant for two conditions stays a plain
simplification: the two conditions are the same expression but for names swapped one
for one (``ix`` → ``iy``, ``self.width`` → ``self.height``), and the shared body reads a
name of the first arm without its counterpart.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from workers.review.false_alarms import parse_source

__all__ = ["CopiedBranch", "copied_branch"]


@dataclass(frozen=True)
class CopiedBranch:
    """The copied arm: its line, the name its body kept and the one its test has instead."""

    line: int
    first_line: int
    kept: str
    instead: str


def copied_branch(text: str, row: int) -> CopiedBranch | None:
    """The ``elif`` after the ``if`` (or ``elif``) at ``row`` if it looks copied from it."""
    tree = parse_source(text)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or node.lineno != row or len(node.orelse) != 1:
            continue
        second = node.orelse[0]
        if not isinstance(second, ast.If):
            continue
        swapped = _swapped_names(node.test, second.test)
        if not swapped:
            continue
        read = _names_read(second.body)
        for first, other in swapped.items():
            if first in read and other not in read:
                return CopiedBranch(second.lineno, node.lineno, first, other)
    return None


def _swapped_names(first: ast.AST, second: ast.AST) -> dict[str, str]:
    """The names that tell two expressions apart, first's to second's, if nothing else
    does and each name has one counterpart; else nothing."""
    pairs: dict[str, str] = {}
    if not _alike(first, second, pairs):
        return {}
    if len(set(pairs.values())) != len(pairs):
        return {}
    return pairs


def _alike(first: ast.AST, second: ast.AST, pairs: dict[str, str]) -> bool:
    """The same tree but for names (and dotted names) in the same places."""
    one, two = _dotted(first), _dotted(second)
    if one is not None and two is not None:
        return one == two or pairs.setdefault(one, two) == two
    if type(first) is not type(second):
        return False
    for field in first._fields:
        a, b = getattr(first, field, None), getattr(second, field, None)
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            for x, y in zip(a, b, strict=True):
                if not _same_part(x, y, pairs):
                    return False
        elif not _same_part(a, b, pairs):
            return False
    return True


def _same_part(a: object, b: object, pairs: dict[str, str]) -> bool:
    if isinstance(a, ast.AST) and isinstance(b, ast.AST):
        return _alike(a, b, pairs)
    if isinstance(a, ast.AST) or isinstance(b, ast.AST):
        return False
    return a == b


def _dotted(node: ast.AST) -> str | None:
    """``ix`` or ``self.width``: a name read as a whole."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner is not None else None
    return None


def _names_read(body: list[ast.stmt]) -> set[str]:
    read: set[str] = set()
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
                name = _dotted(node)
                if name is not None:
                    read.add(name)
    return read
