"""Descriptive statistics for sensor readings; None when there is no data."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def mean(values: Sequence[float]) -> float | None:
    if not values:
        return None
    return sum(values) / len(values)


def median(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2


def mode(values: Sequence[float]) -> float | None:
    """The most common value (the smallest one on ties)."""
    counts = Counter(values)
    if not counts:
        return None
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Linear-interpolated percentile, pct in 0..100."""
    if not 0 <= pct <= 100:
        raise ValueError("pct must be within 0..100")
    if not values:
        return None
    data = sorted(values)
    rank = (len(data) - 1) * pct / 100
    low, high = math.floor(rank), math.ceil(rank)
    return data[low] + (data[high] - data[low]) * (rank - low)


def summary(values: Sequence[float]) -> dict[str, float | None]:
    return {
        "count": len(values),
        "mean": mean(values),
        "median": median(values),
        "p90": percentile(values, 90),
    }
