"""Request latency statistics for the weekly SLO report."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence


def nearest_rank(values: Sequence[float], pct: float) -> float:
    """The nearest-rank percentile: the smallest value with ``pct``% of data at or below it."""
    if not values:
        raise ValueError("no latencies")
    if not 0 < pct <= 100:
        raise ValueError("pct must be in (0, 100]")
    ordered = sorted(values)
    rank = math.ceil(pct / 100 * len(ordered))
    return ordered[rank]


def histogram(values: Sequence[float], edges: Sequence[float]) -> list[int]:
    """Counts per bucket: (-inf, e0], (e0, e1], ..., (e_last, +inf)."""
    counts = [0] * (len(edges) + 1)
    for value in values:
        counts[bisect.bisect_left(edges, value)] += 1
    return counts


def apdex(values: Sequence[float], target: float) -> float:
    """Satisfied (<= target) count 1, tolerating (<= 4 * target) count 0.5."""
    if not values:
        return 1.0
    satisfied = sum(1 for v in values if v <= target)
    tolerating = sum(1 for v in values if target < v <= 4 * target)
    return round((satisfied + tolerating / 2) / len(values), 3)


def error_rate(statuses: Sequence[int]) -> float:
    if not statuses:
        return 0.0
    return sum(1 for s in statuses if s >= 500) / len(statuses)
