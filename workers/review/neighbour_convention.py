"""A new module written like the modules beside it.

A remark the rest of a file already earns is that file's convention (see
:func:`workers.review.selection.follows_convention`). A file the change adds has no rest
to ask: feature-engine 1.9.4's new ``geo_features.py`` imports ``typing.List`` as the
package's other modules do (UP006, UP035), and ansible-lint 26.11's new rule sets ``tags
= [...]`` as every rule beside it does (RUF012). Telling the author to write it unlike
its neighbours is noise; moving the package over is a change of its own.

So for a file the change adds, a few of the Python modules of its folder that the change
leaves alone are read (by name, generated ones skipped) and linted the same way. Each
finding on the new file then carries how many of them earn its rule
(``extra["neighbour_files"]``) and how many were read (``extra["neighbours_read"]``).
High and security remarks are never a matter of convention and are not asked about.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from workers.review.diff_model import DiffModel
from workers.review.findings import NEIGHBOUR_FILES, NEIGHBOURS_READ, Finding, severity_rank
from workers.review.generated import generated_by
from workers.review.typing_spellings import spellings_in

__all__ = ["MAX_FOLDERS", "MAX_NEIGHBOURS", "with_neighbours"]

log = logging.getLogger(__name__)

_HIGH = severity_rank("high")

MAX_NEIGHBOURS = 6
# folders asked per review: a PR that adds a whole tree lists and reads no more than this
MAX_FOLDERS = 8

# folder → the repository paths of the files in it (None: not known)
ListFolder = Callable[[str], "Sequence[str] | None"]
# repository path → rule codes ruff finds in that file
Lint = Callable[[Mapping[str, str]], Mapping[str, "set[str]"]]


def with_neighbours(
    findings: Sequence[Finding],
    diff: DiffModel,
    list_folder: ListFolder,
    read: Callable[[str], str | None],
    lint: Lint,
) -> list[Finding]:
    """``findings`` with, on each ruff remark of a file the change adds, how the modules
    beside that file are written (see the module docstring). The first
    ``MAX_FOLDERS`` folders (by name) are asked, their modules linted in one run. A
    folder that cannot be listed or read, or a lint that fails, leaves the findings as
    they were: the review goes on."""
    asked = {id(f): f for f in findings if _asks_neighbours(f, diff)}
    changed = {entry.path for entry in diff.files}
    beside: dict[str, dict[str, str]] = {}
    for folder in sorted({_folder(f.path) for f in asked.values()})[:MAX_FOLDERS]:
        try:
            texts = _neighbours_of(folder, changed, list_folder, read)
        except Exception as exc:  # neighbours are a nicety; never fail a review on them
            log.warning("neighbour modules unread", extra={"folder": folder, "error": str(exc)})
            continue
        if texts:
            beside[folder] = texts
    if not beside:
        return list(findings)
    try:
        by_file = lint({path: text for texts in beside.values() for path, text in texts.items()})
    except Exception as exc:
        log.warning("neighbour modules not linted", extra={"error": str(exc)})
        return list(findings)
    earned = {
        folder: Counter(
            code for path, text in texts.items() for code in _earned(by_file.get(path), text)
        )
        for folder, texts in beside.items()
    }
    out = []
    for finding in findings:
        folder = _folder(finding.path)
        if id(finding) not in asked or folder not in earned:
            out.append(finding)
            continue
        code = finding.pattern.partition(":")[2]
        extra = {
            **finding.extra,
            NEIGHBOUR_FILES: earned[folder][code],
            NEIGHBOURS_READ: len(beside[folder]),
        }
        out.append(replace(finding, extra=extra))
    return out


def _earned(linted: set[str] | None, text: str) -> set[str]:
    """The rules a neighbour earns: ruff's, and the typing spellings its text uses (see
    workers.review.typing_spellings: ruff asks rich-toolkit's new ``_console.py`` for
    ``X | None`` under its ``__future__`` import, and not the modules beside it that
    write ``Optional[...]`` without one)."""
    return (linted or set()) | spellings_in(text)


def _asks_neighbours(finding: Finding, diff: DiffModel) -> bool:
    entry = diff.file(finding.path)
    return (
        finding.source == "ruff"
        and severity_rank(finding.severity) < _HIGH
        and entry is not None
        and entry.status == "added"
    )


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _neighbours_of(
    folder: str,
    changed: set[str],
    list_folder: ListFolder,
    read: Callable[[str], str | None],
) -> dict[str, str]:
    """The texts of up to ``MAX_NEIGHBOURS`` of the folder's modules the change leaves
    alone; for a folder the change adds whole, those of the folder above it
    (feature-engine 1.9.4's new ``text`` package is written like the package it joins)."""
    texts: dict[str, str] = {}
    for place in [folder, _folder(folder)] if folder else [folder]:
        listed = list_folder(place) or ()
        for path in sorted(p for p in listed if p.endswith(".py") and p not in changed):
            if len(texts) == MAX_NEIGHBOURS:
                break
            text = read(path)
            if text is not None and text.strip() and generated_by(text) is None:
                texts[path] = text
        if texts:
            break
    return texts
