"""Python files whose name says they are a copy of another file of the repository.

parsimonious 0.11 shipped ``parsimonious/grammar.py pre-rewriting-resolve_refs.py`` beside
``grammar.py``: the module as it was before a rewrite, saved under a name no ``import``
can reach. Its 498 lines drew lint remarks as if they were new code; what a reviewer says
is that the copy looks left there by accident. A name that says "copy" plainly is: a
second ``.py`` inside it (``grammar.py pre-rewrite.py``, ``models.py.orig.py``), what a
file manager gives a duplicate (``views copy.py``, ``views copy 2.py``, ``views (1).py``)
and ``.bak``/``.orig``/``.old`` or ``~`` before the suffix, each only when the file it
names is there too; so is a module under setuptools' ``build/lib/`` whose source is.

Files an editor, a file manager or ``patch`` leaves beside the real ones are the same
slip, whatever the language: vim's swap files (uritemplate 4.2 shipped
``tests/.test_uritemplate.py.swp``), emacs' auto-saves and locks, macOS's
``.DS_Store``, Windows' ``Thumbs.db``, the ``.rej``/``.orig`` a patch that did not apply
leaves. They are binary or not code, so they were "not reviewed" without a word on why
they are there.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["copy_of", "left_by_a_tool"]

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
    built = _BUILD_COPY.match(path)
    if built is not None and exists(built.group("source")):
        return built.group("source")
    return None


# setuptools' ``build/lib/`` (or ``build/lib.<platform>/``) holds a copy of each module
# of the package as ``setup.py build`` left it: committed by accident, beside the source
_BUILD_COPY = re.compile(r"^build/lib(?:\.[^/]+)?/(?P<source>.+\.pyi?)$")


# (pattern of a file name, what leaves it)
_TOOL_LEFTOVERS = (
    (re.compile(r"^\..+\.sw[a-p]$"), "an editor's swap file (vim)"),
    (re.compile(r"^#.+#$"), "an editor's auto-save (emacs)"),
    (re.compile(r"^\.#.+"), "an editor's lock file (emacs)"),
    (re.compile(r"^\.DS_Store$"), "a macOS folder settings file"),
    (re.compile(r"^Thumbs\.db$", re.IGNORECASE), "a Windows thumbnail cache"),
    (re.compile(r".\.rej$"), "what a patch that did not apply left"),
)


def left_by_a_tool(path: str) -> str | None:
    """What left ``path`` in the change (an editor's swap file, …), or None."""
    name = path.rpartition("/")[2]
    for pattern, what in _TOOL_LEFTOVERS:
        if pattern.search(name):
            return what
    return None
