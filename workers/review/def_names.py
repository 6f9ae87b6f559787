"""Which function each line of a Python text belongs to, by qualified name.

A remark is matched across a change by where it stands. The hunk is a poor measure of
that: git splits a function's edit into two hunks as soon as six unchanged lines lie
between its parts, and joins two functions' edits into one when they are close. The
function is what a reviewer means by "the same place": a call hoisted to the top of its
function is the same call.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from workers.review.tolerant_parse import parse_tolerantly


@dataclass(frozen=True)
class DefNames:
    """The functions of one text: their qualified names and the rows they span."""

    spans: tuple[tuple[int, int, str], ...]  # (first row, last row, qualified name)
    names: frozenset[str]

    def at(self, row: int) -> str | None:
        """The innermost function whose lines (decorators included) hold ``row``."""
        # spans are sorted by first row; an inner function starts after its outer one
        end = bisect.bisect_right(self.spans, (row, float("inf"), ""))
        for first, last, name in reversed(self.spans[:end]):
            if first <= row <= last:
                return name
        return None


def def_names(text: str) -> DefNames:
    """The functions of ``text`` (as far as this Python can read it, see
    workers.review.tolerant_parse); none when it does not parse (a syntax error is
    matched by hunk like any other line)."""
    tree = parse_tolerantly(text)
    if tree is None:
        return DefNames((), frozenset())
    spans = tuple(sorted(_spans(list(tree.body), "")))
    return DefNames(spans, frozenset(name for _first, _last, name in spans))


def _spans(nodes: list[ast.AST], prefix: str) -> Iterator[tuple[int, int, str]]:
    """Functions under ``nodes`` at any depth (under ``if``, ``try``, ``with`` too), their
    names prefixed with the classes and functions around them."""
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            yield first, node.end_lineno or node.lineno, f"{prefix}{node.name}"
            yield from _spans(list(ast.iter_child_nodes(node)), f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _spans(list(ast.iter_child_nodes(node)), f"{prefix}{node.name}.")
        elif not isinstance(node, ast.expr):  # expressions hold no def statements
            yield from _spans(list(ast.iter_child_nodes(node)), prefix)
