"""How a module spells typing's names, read from its text.

pyupgrade's rules (UP006, UP035, UP007, UP045) ask for ``list[int]`` and ``X | None``
where a module writes ``List[int]`` and ``Optional[X]``; whether ruff asks depends on
the Python it lints for and, before 3.10, on a ``from __future__ import annotations``.
Within one module that is the same for every line, but two modules of a folder can
differ: rich-toolkit 0.20.6's new ``_console.py`` has the import, so ruff asks it for
``X | None``, and the modules beside it write ``Optional[...]`` without it, and ruff
says nothing of them. How they are written is still there to read.
"""

from __future__ import annotations

import re

__all__ = ["SPELLED", "spellings_in"]

SPELLED = {
    "UP006": re.compile(r"\b(?:List|Dict|Set|FrozenSet|Tuple|Type|DefaultDict|Deque)\["),
    "UP035": re.compile(
        r"^\s*from typing import [^\n]*\b(?:List|Dict|Set|FrozenSet|Tuple|Type|Callable"
        r"|Iterable|Iterator|Mapping|Sequence|Generator|AsyncGenerator|AsyncIterator)\b",
        re.MULTILINE,
    ),
    "UP007": re.compile(r"\bUnion\["),
    "UP045": re.compile(r"\bOptional\["),
}


def spellings_in(text: str) -> set[str]:
    """The rules whose old spelling ``text`` uses somewhere."""
    return {code for code, spelled in SPELLED.items() if spelled.search(text)}
