"""Inclusive date ranges for bookings and reports."""

from __future__ import annotations

import calendar
from collections.abc import Container
from datetime import date, timedelta


def days_in_range(start: date, end: date) -> list[date]:
    """Every day from ``start`` to ``end``, both included."""
    if end < start:
        raise ValueError(f"range ends before it starts: {start} > {end}")
    return [start + timedelta(days=offset) for offset in range((end - start).days)]


def business_days(start: date, end: date, holidays: Container[date] = ()) -> list[date]:
    return [d for d in days_in_range(start, end) if d.weekday() < 5 and d not in holidays]


def overlap_days(a_start: date, a_end: date, b_start: date, b_end: date) -> int:
    """Number of days two inclusive ranges share."""
    first = max(a_start, b_start)
    last = min(a_end, b_end)
    return max(0, (last - first).days + 1)


def month_bounds(year: int, month: int) -> tuple[date, date]:
    last = calendar.monthrange(year, month)[1]
    return date(year, month, 1), date(year, month, last)
