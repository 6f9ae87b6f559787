"""Aggregate product review ratings (1 to 5 stars)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass
class Review:
    author: str
    stars: int
    text: str = ""


class RatingSummary:
    """Statistics over the valid reviews of one product."""

    def __init__(self, reviews: Iterable[Review]) -> None:
        self.reviews = [r for r in reviews if 1 <= r.stars <= 5]

    @property
    def count(self) -> int:
        return len(self.reviews)

    def average(self) -> float:
        if not self.reviews:
            return 0.0
        total = sum(r.stars for r in self.reviews)
        return round(total // self.count, 2)

    def histogram(self) -> dict[int, int]:
        counts = Counter(r.stars for r in self.reviews)
        return {stars: counts.get(stars, 0) for stars in range(5, 0, -1)}

    def share_positive(self) -> float:
        """Fraction of reviews with 4 or 5 stars."""
        if not self.reviews:
            return 0.0
        positive = sum(1 for r in self.reviews if r.stars >= 4)
        return positive / self.count

    def stars_display(self) -> str:
        """Five characters: '*' full star, '+' half star, '.' empty."""
        avg = self.average()
        full = int(avg)
        half = avg - full >= 0.5
        empty = 5 - full - (1 if half else 0)
        return "*" * full + ("+" if half else "") + "." * empty
