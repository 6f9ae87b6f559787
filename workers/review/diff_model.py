"""The diff of a pull request, and exactly which lines GitHub accepts a comment on.

GitHub answers 422 to a review comment whose ``line``/``side`` is not in the PR's diff:
RIGHT accepts added and context lines (new numbering), LEFT accepts removed and context
lines (old numbering), and a multi-line comment's ``start_line`` must lie in the same hunk,
before ``line``. Everything that posts checks its anchors here first.

Two inputs, one model: a local ``git diff`` (unified text with headers) and GitHub's PR
files (one ``patch`` per file, no headers, missing for binary or very large files). Both
are parsed by unidiff.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from workers.review.findings import Side
from workers.review.globs import compile_glob

# A file with more changed lines than this is skipped with a note: a review comment on
# line 40,000 of a generated file helps nobody, and it would crowd out the real files.
DEFAULT_MAX_FILE_CHANGES = 10_000

_GIT_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed"}


# Reasons a file is not reviewed that are not worth listing in the review's summary: there
# was nothing new in it to review.
UNCHANGED_SINCE_LAST_REVIEW = "unchanged since the last review"
RENAMED_UNCHANGED = "renamed without changes"
NOTHING_TO_REVIEW = frozenset({UNCHANGED_SINCE_LAST_REVIEW, RENAMED_UNCHANGED})


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "+", "-" or " "
    old: int | None
    new: int | None
    text: str
    hunk: int


@dataclass
class FileChange:
    """One changed file. ``skipped`` says why it is not reviewed (binary, too large, …)."""

    path: str
    status: str  # added | modified | removed | renamed | copied | changed
    old_path: str | None = None
    lines: list[DiffLine] = field(default_factory=list)
    skipped: str | None = None
    no_newline_at_end: bool = False

    def __post_init__(self) -> None:
        self._right = {ln.new: ln for ln in self.lines if ln.kind != "-" and ln.new is not None}
        self._left = {ln.old: ln for ln in self.lines if ln.kind != "+" and ln.old is not None}

    @property
    def added(self) -> dict[int, str]:
        """New line number → text of every added line."""
        return {ln.new: ln.text for ln in self.lines if ln.kind == "+" and ln.new is not None}

    @property
    def removed(self) -> dict[int, str]:
        return {ln.old: ln.text for ln in self.lines if ln.kind == "-" and ln.old is not None}

    @property
    def changed_count(self) -> int:
        return sum(1 for ln in self.lines if ln.kind != " ")

    def line(self, side: Side, number: int) -> DiffLine | None:
        return (self._right if side == "RIGHT" else self._left).get(number)

    def can_comment(self, side: Side, line: int, start_line: int | None = None) -> bool:
        end = self.line(side, line)
        if end is None or self.skipped:
            return False
        if start_line is None:
            return True
        start = self.line(side, start_line)
        return start is not None and start.hunk == end.hunk and start_line < line


@dataclass
class DiffModel:
    files: list[FileChange]

    def __post_init__(self) -> None:
        self._by_path = {f.path: f for f in self.files}

    def file(self, path: str) -> FileChange | None:
        return self._by_path.get(path)

    def reviewable(self) -> list[FileChange]:
        return [f for f in self.files if not f.skipped and f.status != "removed"]

    def skipped(self) -> list[FileChange]:
        return [f for f in self.files if f.skipped]

    def can_comment(self, path: str, side: Side, line: int, start_line: int | None = None) -> bool:
        entry = self._by_path.get(path)
        return entry is not None and entry.can_comment(side, line, start_line)

    @property
    def changed_lines(self) -> int:
        return sum(f.changed_count for f in self.files if not f.skipped)

    def apply_path_filters(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        """Mark files outside ``include`` or inside ``exclude`` as skipped."""
        inc = [compile_glob(g) for g in include]
        exc = [compile_glob(g) for g in exclude]
        for entry in self.files:
            if entry.skipped:
                continue
            if inc and not any(r.fullmatch(entry.path) for r in inc):
                entry.skipped = "not in review.paths.include"
            elif any(r.fullmatch(entry.path) for r in exc):
                entry.skipped = "excluded by review.paths.exclude"

    # -- building ---------------------------------------------------------------------

    @classmethod
    def from_unified(
        cls, text: str, *, max_file_changes: int = DEFAULT_MAX_FILE_CHANGES
    ) -> DiffModel:
        """From ``git diff`` output (with ``diff --git``/``---``/``+++`` headers)."""
        try:
            patch = PatchSet(text)
        except UnidiffParseError as exc:
            raise ValueError(f"not a unified diff: {exc}") from exc
        files = []
        for pf in patch:
            path = _strip_prefix(pf.target_file if not pf.is_removed_file else pf.source_file)
            old = _strip_prefix(pf.source_file) if pf.is_rename else None
            status = (
                "added"
                if pf.is_added_file
                else "removed"
                if pf.is_removed_file
                else "renamed"
                if pf.is_rename
                else "modified"
            )
            entry = _file_from_patched(pf, path, status, old, max_file_changes)
            if not entry.skipped and _SYMLINK.search(str(pf.patch_info)):
                entry.skipped = SYMLINK  # its "text" is the target's name, not code
            files.append(entry)
        return cls(files)

    @classmethod
    def from_github_files(
        cls,
        files: Iterable[Mapping[str, Any]],
        *,
        max_file_changes: int = DEFAULT_MAX_FILE_CHANGES,
    ) -> DiffModel:
        """From ``GET /pulls/{n}/files`` or ``GET /compare`` entries."""
        out = []
        for item in files:
            path = str(item["filename"])
            status = str(item.get("status") or "modified")
            old = item.get("previous_filename")
            patch = item.get("patch")
            if patch is None:
                changes = int(item.get("changes") or 0)
                if changes == 0 and status == "renamed":
                    reason = RENAMED_UNCHANGED  # a move: GitHub sends no patch, nothing to review
                elif changes == 0:
                    reason = "no textual diff (binary file)"
                else:
                    reason = "GitHub sent no diff for it (too large)"
                out.append(FileChange(path, status, old, skipped=reason))
                continue
            text = f"--- a/{old or path}\n+++ b/{path}\n{patch}\n"
            try:
                parsed = PatchSet(text)
            except UnidiffParseError:
                out.append(FileChange(path, status, old, skipped="diff could not be parsed"))
                continue
            if not len(parsed):
                out.append(FileChange(path, status, old, skipped="no changed lines"))
                continue
            out.append(_file_from_patched(parsed[0], path, status, old, max_file_changes))
        return cls(out)


def _file_from_patched(
    pf: Any, path: str, status: str, old: str | None, max_file_changes: int
) -> FileChange:
    if pf.is_binary_file:
        return FileChange(path, status, old, skipped="binary file")
    lines: list[DiffLine] = []
    no_newline = False
    for index, hunk in enumerate(pf):
        for ln in hunk:
            if ln.line_type == "\\":
                no_newline = True
                continue
            if ln.line_type not in ("+", "-", " "):
                continue
            text = ln.value[:-1] if ln.value.endswith("\n") else ln.value
            text = text[:-1] if text.endswith("\r") else text
            lines.append(DiffLine(ln.line_type, ln.source_line_no, ln.target_line_no, text, index))
    entry = FileChange(path, status, old, _same_text_as_before(lines), no_newline_at_end=no_newline)
    if entry.changed_count > max_file_changes:
        entry = FileChange(
            path,
            status,
            old,
            skipped=f"{entry.changed_count} changed lines (over {max_file_changes})",
        )
    elif not lines and status == "renamed":
        entry.skipped = RENAMED_UNCHANGED
    elif not lines and status != "removed":
        entry.skipped = "no changed lines"
    return entry


def _same_text_as_before(lines: list[DiffLine]) -> list[DiffLine]:
    """The lines with each added line that a removed line of its hunk already had, up to
    trailing whitespace and line endings, made a context line on the right side only: a
    file converted from CRLF to LF (rsa 4.9.1) or stripped of trailing blanks is not new
    code, yet every line of it is removed and added again. One removed copy makes one
    added copy old; GitHub still takes a comment on the line, and the left side stays."""
    removed: dict[int, Counter[str]] = {}
    for ln in lines:
        if ln.kind == "-":
            removed.setdefault(ln.hunk, Counter())[ln.text.rstrip()] += 1
    if not removed:
        return lines
    out = []
    for ln in lines:
        before = removed.get(ln.hunk)
        key = ln.text.rstrip()
        if ln.kind == "+" and before and before[key] > 0:
            before[key] -= 1
            ln = DiffLine(" ", None, ln.new, ln.text, ln.hunk)
        out.append(ln)
    return out


SYMLINK = "a symbolic link"
# git's header for a file that is (still, or newly) a symbolic link
_SYMLINK = re.compile(r"^(?:new file mode|new mode|index [0-9a-f]+\.\.[0-9a-f]+) 120000$", re.M)

_GIT_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(name: str) -> str:
    """A path as git wrote it into a diff: ``"b/\\303\\274 mod.py"`` (git quotes a path with
    non-ASCII bytes or control characters, C-style with octal bytes) becomes ``b/ü mod.py``.
    Unquoted, such a file would be looked up under a name that does not exist and never
    reviewed."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            octal = body[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            if nxt in _GIT_ESCAPES:
                out.append(_GIT_ESCAPES[nxt])
                i += 2
                continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", errors="replace")


def _strip_prefix(name: str) -> str:
    name = _unquote(name)
    for prefix in ("a/", "b/"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def only_new(diff: DiffModel, increment: DiffModel) -> DiffModel:
    """``diff`` (the whole PR, for anchors) with only ``increment``'s added lines still
    counted as added: an incremental review looks at the new commits, while comments stay
    anchored to the PR's diff, which is what GitHub checks them against. A file the
    increment changed without a patch (too large for compare) keeps all its PR lines."""
    files = []
    for entry in diff.files:
        new = increment.file(entry.path)
        if new is not None and new.skipped and not entry.skipped:
            files.append(entry)  # changed, but compare sent no patch: review all of it
            continue
        fresh = set(new.added) if new is not None else set()
        lines = [
            ln
            if ln.kind != "+" or ln.new in fresh
            else DiffLine(" ", None, ln.new, ln.text, ln.hunk)
            for ln in entry.lines
        ]
        copy = FileChange(
            entry.path, entry.status, entry.old_path, lines, entry.skipped, entry.no_newline_at_end
        )
        if not copy.skipped and not fresh and entry.status != "removed":
            copy.skipped = UNCHANGED_SINCE_LAST_REVIEW
        files.append(copy)
    return DiffModel(files)
