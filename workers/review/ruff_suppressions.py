"""Ruff remarks a ``# ruff: ignore[…]`` comment on their line silences.

Ruff reads ``# noqa: F821`` and ``# ruff: ignore[F821]`` itself; newer projects write
the rule's name instead (``# ruff:ignore[undefined-name]``), which ruff reads only in
preview mode. pudb 2026.1 sets ``preview = true`` and silences its Sphinx config's and
theme example's names that way; Kaizen lints without preview (its own rule set, which
preview would widen) and flagged every line the team had silenced. The comment is read
here as ruff reads it in preview: on the diagnostic's line, by code or by name.
"""

from __future__ import annotations

import io
import re
import tokenize

__all__ = ["ignored_on_line"]

_IGNORE = re.compile(r"#\s*ruff\s*:\s*ignore\s*\[([^\]]*)\]", re.IGNORECASE)


def ignored_on_line(text: str, row: int, code: str, name: str) -> bool:
    """Whether a comment on ``row`` names ``code`` (``F821``) or the rule's ``name``
    (``undefined-name``) in a ``ruff: ignore[…]`` list."""
    lines = text.splitlines()
    if not 0 < row <= len(lines) or "ruff" not in lines[row - 1]:
        return False
    wanted = {word.lower() for word in (code, name) if word}
    for comment in _comments(lines[row - 1]):
        for found in _IGNORE.finditer(comment):
            said = {part.strip().lower() for part in found.group(1).split(",")}
            if said & wanted:
                return True
    return False


def _comments(line: str) -> list[str]:
    """The comment of one line of Python (none inside a string); a line that does not
    tokenise alone (inside a bracket or a string of several lines) is read from its
    last ``#`` that no quote follows."""
    try:
        return [
            token.string
            for token in tokenize.generate_tokens(io.StringIO(line).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        at = line.rfind("#")
        return [line[at:]] if at >= 0 and not {'"', "'"} & set(line[at:]) else []
