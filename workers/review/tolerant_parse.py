"""A module's tree when this Python cannot parse every line of it.

Kaizen runs on Python 3.11, and the projects it reviews move on: ursina 8.3 writes
``f'{'[required]' if required else '[optional]'}'`` (quotes reused inside an f-string,
Python 3.12), and one such line made ``ast.parse`` refuse the whole file, so every
reading of that file that tells a false alarm from a real one gave up, and ruff's
remarks on it all stood. Ruff parses the newest syntax; the readers here only need the
rest of the file. Each statement the parser stops at stands in as ``pass`` (a block's
header as a block of the same kind, its other lines blank), or its line as a blank
line when that does not help, until the file parses; line numbers and the other lines'
columns are unchanged. A file that
needs more than a few such stand-ins is not read at all.
"""

from __future__ import annotations

import ast
import re
import warnings

__all__ = ["parse_tolerantly"]

_STAND_INS = 12  # statements stood in for before the file is left unread
_LOGICAL_LINES = 200  # lines one statement is read over, at most
_DEF = re.compile(r"(\s*)(async\s+def|def|class)\s+(\w+)")


def parse_tolerantly(source: str) -> ast.Module | None:
    """``ast.parse(source)``, or the tree of ``source`` with the lines this Python cannot
    parse stood in for; None when it cannot be had that way (or the text is no text
    ``ast`` takes: a NUL byte, a nesting too deep)."""
    try:
        return _parse(source)
    except (ValueError, RecursionError, MemoryError):
        return None
    except SyntaxError as error:
        failed_at = error.lineno
    lines = source.split("\n")
    tried: dict[int, int] = {}
    for _ in range(_STAND_INS):
        if failed_at is None or not 0 < failed_at <= len(lines):
            return None
        index = failed_at - 1
        attempts = tried.get(index, 0)
        if attempts >= 2:  # neither stand-in helped
            return None
        tried[index] = attempts + 1
        if attempts == 0:
            end = _logical_end(lines, index)
            statement = "\n".join(lines[index : end + 1])
            lines[index : end + 1] = [_stand_in(statement)] + [""] * (end - index)
        else:
            lines[index] = ""
        try:
            return _parse("\n".join(lines))
        except (ValueError, RecursionError, MemoryError):
            return None
        except SyntaxError as error:
            failed_at = error.lineno
    return None


def _parse(source: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes in old code: not ours to say
        return ast.parse(source)


def _logical_end(lines: list[str], index: int) -> int:
    """The last line of the statement that starts on ``lines[index]``: where the brackets
    it opens close (``def show_progress[T](`` with a parameter a line), read roughly:
    strings and comments skipped, a backslash at a line's end continuing it."""
    depth = 0
    quote = ""
    for end in range(index, min(len(lines), index + _LOGICAL_LINES)):
        line = lines[end]
        position = 0
        while position < len(line):
            char = line[position]
            if quote:
                if char == "\\":
                    position += 1
                elif line.startswith(quote, position):
                    position += len(quote) - 1
                    quote = ""
            elif char == "#":
                break
            elif char in "'\"":
                quote = char * 3 if line.startswith(char * 3, position) else char
                position += len(quote) - 1
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            position += 1
        if len(quote) == 1:
            quote = ""  # a one-quote string ends with its line
        if depth <= 0 and not quote and not line.rstrip().endswith("\\"):
            return end
    return index


def _stand_in(statement: str) -> str:
    """A statement that parses where ``statement`` stood: a block's header keeps a block
    (a ``def``/``class`` keeps its name, so that what is found in it is still found
    there), anything else is ``pass``."""
    line = statement.split("\n", 1)[0]
    indent = line[: len(line) - len(line.lstrip())]
    code = statement.rsplit("\n", 1)[-1].split("#", 1)[0].rstrip()
    found = _DEF.match(line)
    if found is not None and code.endswith(":"):
        keyword = "class" if found.group(2) == "class" else "def"
        return f"{indent}{keyword} {found.group(3)}{'' if keyword == 'class' else '()'}:"
    if code.endswith(":"):
        return f"{indent}if True:"
    return f"{indent}pass"
