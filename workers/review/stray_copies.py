"""Python files whose name says they are a copy of another file of the repository.

parsimonious 0.11 shipped ``parsimonious/grammar.py pre-rewriting-resolve_refs.py`` beside
``grammar.py``: the module as it was before a rewrite, saved under a name no ``import``
can reach. Its 498 lines drew lint remarks as if they were new code; what a reviewer says
is that the copy looks left there by accident. A name that says "copy" plainly is: a
second ``.py`` inside it (``grammar.py pre-rewrite.py``, ``models.py.orig.py``), what a
file manager gives a duplicate (``views copy.py``, ``views copy 2.py``, ``views (1).py``)
and ``.bak``/``.orig``/``.old`` or ``~`` before the suffix, each only when the file it
names is there too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["copy_of"]

_SUFFIX = re.compile(r"\.pyi?$")
# what is added to the original's stem: " copy", " copy 2", " (1)", ".bak", ".orig", "~"
_COPY_TAIL = re.compile(r"(?: copy(?: \d+)?| \(\d+\)|\.(?:bak|orig|old)|~)$", re.IGNORECASE)
# "grammar.py pre-rewriting-resolve_refs": the original's full name, then anything
_SECOND_SUFFIX = re.compile(r"^(?P<name>.+?\.pyi?)(?:[ ._~-].*)?$")


def copy_of(path: str, exists: Callable[[str], bool]) -> str | None:
    """The path of the file ``path`` is named as a copy of, when that file exists."""
    folder, _, name = path.rpartition("/")
    suffix = _SUFFIX.search(name)
    if suffix is None:
        return None
    stem = name[: suffix.start()]
    candidates = []
    second = _SECOND_SUFFIX.fullmatch(stem)
    if second is not None:
        candidates.append(second.group("name"))
    tail = _COPY_TAIL.search(stem)
    if tail is not None and tail.start() > 0:
        candidates.append(stem[: tail.start()] + suffix.group())
    for original in candidates:
        where = f"{folder}/{original}" if folder else original
        if where != path and exists(where):
            return where
    return None
