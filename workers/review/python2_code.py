"""Whether a file that does not parse is Python 2 code, which ruff cannot read.

A project that still ships for Python 2 may keep files only Python 2 runs: crcmod 1.7
picks ``python2/`` or ``python3/`` in its setup.py, and every ``0L`` and ``print "…"`` in
its Python 2 tests came out of ruff as a syntax error, two of them posted as "important".
They are no bug on the Python that runs them. The file's first syntax error, as CPython
finds it, settles it: on a line with a construct only Python 2 has, the file is Python 2
code, and the errors after the first (ruff recovers and reports on) are that code too.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings

# Constructs Python 3 refused outright, so that a line holding one is Python 2 code:
# long literals (``0L``, ``0xFFL``), old octals (``0777``), the print and exec
# statements, ``except E, e``, ``raise E, "text"``, backquoted repr and ``<>``, read
# with the line's strings emptied and its comment cut; and ``ur""``, read on the line.
_PYTHON2_ONLY = re.compile(
    r"""
      (?<![\w.])(?:0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|[1-9]\d*|0)[lL]\b
    | (?<![\w.])0[0-7]+\b
    | ^\s*print\b\s*(?:>>|[^\s=(.,)\[\]:;+\-*/%&|^<>!])
    | ^\s*exec\s+[\w"']
    | ^\s*except\s*\(?[\w.]+(?:\s*,\s*[\w.]+)*\)?\s*,\s*\w+\s*:
    | ^\s*raise\s+[\w.]+\s*,
    | `
    | <>
    """,
    re.VERBOSE,
)
_UNICODE_RAW = re.compile(r"""(?<![\w"'])[uU][rR]["']""")
_STRING_OR_COMMENT = re.compile(r""""[^"]*"|'[^']*'|#.*""")


@functools.lru_cache(maxsize=32)
def written_for_python2(source: str) -> bool:
    """Whether ``source`` stops parsing, as Python 3, at a construct only Python 2 has."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: not our question
            compile(source, "<file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        if error.msg.startswith("Missing parentheses in call to"):
            return True  # CPython's own word for a print or exec statement
        lines = source.splitlines()
        row = error.lineno or 0
        return 0 < row <= len(lines) and _python2_line(lines[row - 1])
    except (ValueError, OverflowError, RecursionError, MemoryError):
        return False  # a NUL byte, nesting too deep: not Python 2, only unreadable
    return False


def _python2_line(line: str) -> bool:
    if _UNICODE_RAW.search(line):
        return True
    code = _STRING_OR_COMMENT.sub(lambda m: "" if m[0].startswith("#") else '""', line)
    return _PYTHON2_ONLY.search(code) is not None
