"""Meeting room slots within one day, in minutes since midnight."""

from __future__ import annotations

import bisect
from dataclasses import dataclass


class ConflictError(Exception):
    pass


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@dataclass(frozen=True, order=True)
class Slot:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise ValueError("a slot must end after it starts")

    @classmethod
    def parse(cls, text: str) -> Slot:
        """A slot from "HH:MM-HH:MM"."""
        start, end = text.split("-")
        return cls(_minutes(start.strip()), _minutes(end.strip()))

    @property
    def duration(self) -> int:
        return self.end - self.start

    def overlaps(self, other: Slot) -> bool:
        return self.start < other.end or other.start < self.end

    def __str__(self) -> str:
        return f"{_hhmm(self.start)}-{_hhmm(self.end)}"


class RoomCalendar:
    def __init__(self) -> None:
        self._slots: list[Slot] = []

    def book(self, slot: Slot) -> None:
        for existing in self._slots:
            if slot.overlaps(existing):
                raise ConflictError(f"{slot} overlaps {existing}")
        bisect.insort(self._slots, slot)

    def free_between(self, start: int, end: int) -> list[Slot]:
        """The gaps between bookings inside [start, end)."""
        gaps: list[Slot] = []
        cursor = start
        for slot in self._slots:
            if slot.start > cursor:
                gaps.append(Slot(cursor, min(slot.start, end)))
            cursor = max(cursor, slot.end)
        if cursor < end:
            gaps.append(Slot(cursor, end))
        return gaps
