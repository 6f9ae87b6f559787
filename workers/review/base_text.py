"""A changed file's text before the change, rebuilt from its text after and its diff.

To tell a remark about code the change wrote from one about code it only touched, the
review lints the file as it was too. GitHub gives the head's text and the patch; the
patch run backwards gives the base's text, with no second contents call per file.
"""

from __future__ import annotations

from itertools import groupby

from workers.review.diff_model import DiffLine, FileChange

__all__ = ["text_before"]


def text_before(after: str, entry: FileChange) -> str | None:
    """The file as it was, or None when the diff does not fit the text (a truncated
    patch, a text fetched at another commit) or there was no file before."""
    if entry.status == "added" or entry.skipped or not entry.lines:
        return None
    new_lines = after.splitlines(keepends=True)
    ending = _line_ending(new_lines)
    before: list[str] = []
    cursor = 1  # the next line of ``after`` to copy
    for _, group in groupby(entry.lines, key=lambda line: line.hunk):
        hunk = list(group)
        # lines the review made context on the right only (see diff_model) were added
        old_side = [line.old for line in hunk if line.old is not None]
        new_side = [line.new for line in hunk if line.new is not None]
        # where the hunk starts: on the old side when it has one (a pure addition has not)
        gap = old_side[0] - 1 - len(before) if old_side else new_side[0] - cursor
        if gap < 0 or cursor - 1 + gap > len(new_lines):
            return None
        before += new_lines[cursor - 1 : cursor - 1 + gap]
        cursor += gap
        if new_side and new_side[0] != cursor:
            return None
        for line in hunk:
            if line.kind == " " and line.old is not None and not _same(line, new_lines):
                return None
            if line.old is not None:
                before.append(line.text + ending)
        if new_side:
            cursor = new_side[-1] + 1
    if cursor - 1 > len(new_lines):
        return None
    before += new_lines[cursor - 1 :]
    return "".join(before)


def _same(line: DiffLine, new_lines: list[str]) -> bool:
    number = line.new
    return (
        number is not None
        and 0 < number <= len(new_lines)
        and new_lines[number - 1].rstrip("\r\n") == line.text
    )


def _line_ending(lines: list[str]) -> str:
    for line in lines:
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith("\n"):
            return "\n"
    return "\n"
