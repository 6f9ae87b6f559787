"""The code a diagnostic points at, written so that formatting does not count.

A security remark stands on the code it flags (``eval(src, dict(_wrapper_=wrapper))``),
and the same code before and after a change is the same remark. Formatters rewrap such
code freely: nltk 3.10.4 added a comment after its decorators' ``eval`` and black spread
the call over three lines. Comparing tokens rather than characters keeps a remark the
team merged long ago from coming back as new.
"""

from __future__ import annotations

import io
import re
import tokenize

_LAYOUT = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
)
_CLOSING = frozenset({")", "]", "}"})
_WORD_END = re.compile(r"\w$")
_WORD_START = re.compile(r"^\w")


def flagged_code(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str | None:
    """The text from ``start`` to ``end`` (1-based row and column, end exclusive, as
    ruff reports them) in canonical form; None when the place is not in ``lines``."""
    (row, column), (end_row, end_column) = start, end
    if not 0 < row <= end_row <= len(lines):
        return None
    if row == end_row:
        text = lines[row - 1][max(column - 1, 0) : max(end_column - 1, 0)]
    else:
        first = lines[row - 1][max(column - 1, 0) :]
        last = lines[end_row - 1][: max(end_column - 1, 0)]
        text = "\n".join([first, *lines[row : end_row - 1], last])
    return canonical_code(text)


def canonical_code(text: str) -> str:
    """``text`` as its tokens, with no layout: no comments, no line breaks, a space
    only where two words meet, no trailing comma before a closing bracket. Text that
    does not tokenize (a fragment of a string, say) has its whitespace collapsed."""
    try:
        tokens = [
            t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _LAYOUT
        ]
    except (tokenize.TokenError, SyntaxError):
        return " ".join(text.split())
    out: list[str] = []
    for i, token in enumerate(tokens):
        following = tokens[i + 1].string if i + 1 < len(tokens) else ""
        if token.string == "," and following in _CLOSING:
            continue
        if out and _WORD_END.search(out[-1]) and _WORD_START.search(token.string):
            out.append(" ")
        text = token.string
        if token.type == tokenize.STRING:
            if "f" in _prefix(text).lower():
                text = _with_canonical_fields(text)
            text = _in_double_quotes(text)
        out.append(text)
    return "".join(out)


def _in_double_quotes(literal: str) -> str:
    """A string literal in double quotes when it holds none: ase 3.29's formatter wrote
    ``"dict({})"`` as ``'dict({})'``, the same string."""
    prefix = _prefix(literal)
    body = literal[len(prefix) :]
    for single, double in (("'''", '"""'), ("'", '"')):
        if len(body) >= 2 * len(single) and body.startswith(single) and body.endswith(single):
            inner = body[len(single) : -len(single)]
            return literal if '"' in inner else f"{prefix}{double}{inner}{double}"
    return literal


def _prefix(literal: str) -> str:
    return literal[: len(literal) - len(literal.lstrip("bBrRuUfF"))]


def _with_canonical_fields(literal: str) -> str:
    """An f-string with each replacement field in canonical form: before Python 3.12
    the whole f-string is one token, and fugue 0.9.7's ``{frac*100}``, which black
    wrote as ``{frac * 100}``, would differ. The text between fields is left as is."""
    out = [_prefix(literal)]
    i = len(out[0])
    while i < len(literal):
        if literal.startswith(("{{", "}}"), i):
            out.append(literal[i : i + 2])
            i += 2
        elif literal[i] == "{":
            end = _field_end(literal, i)
            if end is None:
                return literal
            out.append("{" + canonical_code(literal[i + 1 : end]) + "}")
            i = end + 1
        else:
            out.append(literal[i])
            i += 1
    return "".join(out)


def _field_end(literal: str, start: int) -> int | None:
    """Where the field opened at ``start`` closes: its matching ``}``, outside any
    string inside it; None when it does not close."""
    depth, quote, i = 0, "", start
    while i < len(literal):
        char = literal[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"" and depth > 0:
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None
