"""``PLW1508`` (a default for an environment variable that is not a string) where a
conversion takes the value at once.

``os.getenv("N", 10)`` hands back a ``str`` when ``N`` is set and an ``int`` when it is
not: code that goes on to add to it works on one machine and fails on the next. That is
the bug the rule is about. ``int(os.getenv("N", 10))`` — loky 3.7 reads its
``LOKY_MAX_MEMORY_LEAK_SIZE`` as ``int(float(os.environ.get(…, 3e8)))`` — converts
either into the same type: the remark is only a type checker's complaint there.
``bool()`` is no such conversion: any set string is true, ``"0"`` and ``"false"`` too.
"""

from __future__ import annotations

import ast

from workers.review.false_alarms import byte_offset, called_name, parse_source

__all__ = ["converted_at_once"]

# Conversions that read a number's text and the number alike.
_CONVERSIONS = frozenset({"int", "float", "complex", "str", "Decimal", "Fraction"})
_ENV_GETTERS = frozenset({"getenv", "get"})


def converted_at_once(text: str, row: int, column: int) -> bool:
    """Whether the environment lookup whose default starts at ``row``/``column``
    (1-based, as ruff reports them) is the first argument of a conversion."""
    tree = parse_source(text)
    offset = byte_offset(text, row, column)
    if tree is None or offset is None:
        return False
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and called_name(node.func) in _CONVERSIONS and node.args
        ):
            continue
        lookup = node.args[0]
        if (
            isinstance(lookup, ast.Call)
            and called_name(lookup.func) in _ENV_GETTERS
            and len(lookup.args) >= 2
            and lookup.args[1].lineno == row
            and lookup.args[1].col_offset == offset
        ):
            return True
    return False
