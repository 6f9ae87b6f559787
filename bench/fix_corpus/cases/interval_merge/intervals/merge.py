"""Half-open integer intervals [start, end): merging, gaps and coverage."""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[int, int]


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping intervals covering the same points."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if end < start:
            raise ValueError(f"bad interval ({start}, {end})")
        if merged and start <= merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, min(last_end, end))
        else:
            merged.append((start, end))
    return merged


def gaps(intervals: Iterable[Interval], lo: int, hi: int) -> list[Interval]:
    """The parts of [lo, hi) not covered by any interval."""
    out: list[Interval] = []
    cursor = lo
    for start, end in merge(intervals):
        if start > cursor:
            out.append((cursor, min(start, hi)))
        cursor = max(cursor, end)
        if cursor >= hi:
            break
    if cursor < hi:
        out.append((cursor, hi))
    return out


def covered(intervals: Iterable[Interval]) -> int:
    return sum(end - start for start, end in merge(intervals))


def clip(intervals: Iterable[Interval], lo: int, hi: int) -> list[Interval]:
    clipped = ((max(start, lo), min(end, hi)) for start, end in intervals)
    return [(start, end) for start, end in clipped if start < end]
