"""Slice a sequence into numbered pages, the way the REST API exposes them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Page:
    number: int
    items: list[Any]
    total_items: int
    per_page: int

    @property
    def total_pages(self) -> int:
        return max(1, math.ceil(self.total_items / self.per_page))

    @property
    def has_next(self) -> bool:
        return self.number <= self.total_pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def next_number(self) -> int | None:
        return self.number + 1 if self.has_next else None

    @property
    def previous_number(self) -> int | None:
        return self.number - 1 if self.has_previous else None


def paginate(items: Sequence[Any], page: int, per_page: int = 10) -> Page:
    """Page ``page`` (1-based) of ``items``; raises ValueError outside 1..total_pages."""
    if per_page < 1:
        raise ValueError("per_page must be positive")
    pages = max(1, math.ceil(len(items) / per_page))
    if not 1 <= page <= pages:
        raise ValueError(f"page {page} out of range 1..{pages}")
    start = (page - 1) * per_page
    return Page(page, list(items[start : start + per_page]), len(items), per_page)


def page_links(page: Page) -> dict[str, int | None]:
    return {
        "first": 1,
        "prev": page.previous_number,
        "next": page.next_number,
        "last": page.total_pages,
    }
