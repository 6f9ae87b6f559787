"""Ruff remarks a ``# ruff: ignore[…]`` comment on their line silences.

Ruff reads ``# noqa: F821`` and ``# ruff: ignore[F821]`` itself; newer projects write
the rule's name instead (``# ruff:ignore[undefined-name]``), which ruff reads only in
preview mode. pudb 2026.1 sets ``preview = true`` and silences its Sphinx config's and
theme example's names that way; Kaizen lints without preview (its own rule set, which
preview would widen) and flagged every line the team had silenced. The comment is read
here as ruff reads it in preview: on the diagnostic's line, by code or by name.
"""

from __future__ import annotations

import re

__all__ = ["ignored_on_line"]

_IGNORE = re.compile(r"#\s*ruff\s*:\s*ignore\s*\[([^\]]*)\]", re.IGNORECASE)


def ignored_on_line(text: str, row: int, code: str, name: str) -> bool:
    """Whether ``row`` carries a ``ruff: ignore[…]`` comment that names ``code``
    (``F821``) or the rule's ``name`` (``undefined-name``). The line is read as
    ``workers.review.pylint_disables`` reads ``# pylint: disable=``."""
    lines = text.splitlines()
    if not 0 < row <= len(lines):
        return False
    wanted = {word.lower() for word in (code, name) if word}
    for found in _IGNORE.finditer(lines[row - 1]):
        said = {part.strip().lower() for part in found.group(1).split(",")}
        if said & wanted:
            return True
    return False
