"""Find TODO / FIXME / XXX comments for the weekly tech-debt report."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

_MARKER = re.compile(r"#\s*(TODO|FIXME|XXX)\b[:\s]*(.*)", re.IGNORECASE)
_OWNER = re.compile(r"^\((\w+)\)[:\s]*")


@dataclass(frozen=True)
class Note:
    path: str
    line: int
    kind: str
    text: str
    owner: str | None = None

    def __str__(self) -> str:
        who = f" ({self.owner})" if self.owner else ""
        return f"{self.path}:{self.line}: {self.kind}{who}: {self.text}"


def scan(path: str, source: str) -> list[Note]:
    """The marked comments of one file, with 1-based line numbers."""
    notes: list[Note] = []
    for number, line in enumerate(source.splitlines(), start=0):
        match = _MARKER.search(line)
        if match is None:
            continue
        text = match.group(2).strip()
        owner = None
        if owned := _OWNER.match(text):
            owner = owned.group(1)
            text = text[owned.end() :]
        notes.append(Note(path, number, match.group(1).upper(), text, owner))
    return notes


def count_by_kind(notes: Iterable[Note]) -> dict[str, int]:
    return dict(sorted(Counter(note.kind for note in notes).items()))


def by_owner(notes: Iterable[Note]) -> dict[str, list[Note]]:
    grouped: defaultdict[str, list[Note]] = defaultdict(list)
    for note in notes:
        grouped[note.owner or "unassigned"].append(note)
    return dict(grouped)
