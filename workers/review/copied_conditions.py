"""A condition copied from the one beside it and edited half-way.

volatility3 2.28's socket scan drops empty rows with::

    if (src == "0.0.0.0" or isinstance(src, renderers.NotAvailableValue)) and (
        dst == "0.0.0.0" or isinstance(src, renderers.NotAvailableValue)
    ):

The second group is the first with ``src`` changed to ``dst``, except in its last test,
which still asks about ``src``: the destination is never checked for being unavailable.
No linter rule covers it (each test is valid Python on its own), and it reads right at a
glance, which is how it got merged.

The sign, read strictly so that a deliberate mix stays silent: two neighbouring operands
of one ``and``/``or`` are themselves groups of two tests or more, of the same shape once
names are set aside; across them one name is changed to another that the first group
never uses, and yet one test of the second group, with nothing changed in it, still uses
the old name. ``isinstance(b, type(a))`` beside ``isinstance(a, type(a))`` is a single
test, not a group, and is left alone.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from dataclasses import dataclass

from workers.review.base_text import text_before
from workers.review.diff_model import DiffModel
from workers.review.false_alarms import parse_source
from workers.review.findings import Finding

__all__ = ["PATTERN", "CopiedCondition", "copied_condition_findings", "copied_conditions"]

PATTERN = "static:copied-condition"


@dataclass(frozen=True)
class CopiedCondition:
    """Where the copy kept the old name: the line, the name kept, the one meant."""

    line: int
    kept: str
    instead: str


def copied_conditions(source: str) -> list[CopiedCondition]:
    """Every half-edited copy in ``source`` (none if it does not parse), by line."""
    tree = parse_source(source)
    if tree is None:
        return []
    found: dict[int, CopiedCondition] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.BoolOp):
            continue
        for first, second in zip(node.values, node.values[1:], strict=False):
            slip = _half_edited(first, second)
            if slip is not None:
                found.setdefault(slip.line, slip)
    return [found[line] for line in sorted(found)]


def _half_edited(first: ast.expr, second: ast.expr) -> CopiedCondition | None:
    if not (
        isinstance(first, ast.BoolOp)
        and isinstance(second, ast.BoolOp)
        and type(first.op) is type(second.op)
        and len(first.values) == len(second.values) >= 2
        and _shape(first) == _shape(second)
    ):
        return None
    renamed: set[tuple[str, str]] = set()
    parts = list(zip(first.values, second.values, strict=True))
    for one, other in parts:
        renamed |= {(a.id, b.id) for a, b in _names(one, other) if a.id != b.id}
    first_names = {n.id for n in _variables(first)}
    for old, new in sorted(renamed):
        if new in first_names or sum(1 for o, _ in renamed if o == old) != 1:
            continue
        for one, other in parts:
            pairs = _names(one, other)
            if any(a.id != b.id for a, b in pairs):
                continue  # a part that was edited: whatever it kept, it kept on purpose
            kept = [b for a, b in pairs if a.id == old]
            if kept:
                return CopiedCondition(kept[0].lineno, old, new)
    return None


def _names(one: ast.expr, other: ast.expr) -> list[tuple[ast.Name, ast.Name]]:
    """The names of two expressions of one shape, paired in order, functions called
    aside: sqlglot's ``(is_null(l) and is_null(r)) or (is_null(l) and always_true(r))``
    lists cases, each a pair of tests."""
    return list(zip(_variables(one), _variables(other), strict=False))


def _variables(node: ast.expr) -> list[ast.Name]:
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return [n for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called]


def _shape(node: ast.expr) -> str:
    """``node`` as ``ast.dump`` shows it with every name the same."""
    blank = copy.deepcopy(node)
    for name in ast.walk(blank):
        if isinstance(name, ast.Name):
            name.id = "_"
    return ast.dump(blank, annotate_fields=False, include_attributes=False)


def copied_condition_findings(sources: Mapping[str, str], diff: DiffModel) -> list[Finding]:
    """A finding for each half-edited copy on a line the PR added, in the changed Python
    files ``sources`` (path → text at the head); one the file already had is not new."""
    found: list[Finding] = []
    for path, text in sources.items():
        entry = diff.file(path)
        added = entry.added if entry is not None else {}
        if entry is None or not added:
            continue
        slips = [c for c in copied_conditions(text) if c.line in added]
        if not slips:
            continue
        before = text_before(text, entry)
        had = {(c.kept, c.instead) for c in copied_conditions(before)} if before else set()
        found += [
            Finding(
                path=path,
                line=slip.line,
                side="RIGHT",
                pattern=PATTERN,
                severity="medium",
                message=(
                    f"**Copied condition?** This group of tests is the one before it with "
                    f"`{slip.kept}` changed to `{slip.instead}`, except here, where it still "
                    f"tests `{slip.kept}`. If `{slip.instead}` was meant, the check on it is "
                    "missing."
                ),
                source="static",
                code=added[slip.line].rstrip("\r\n"),
            )
            for slip in slips
            if (slip.kept, slip.instead) not in had
        ]
    return found
