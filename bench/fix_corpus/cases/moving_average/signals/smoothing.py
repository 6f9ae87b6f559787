"""Smoothing and scaling for time series shown on dashboards."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Mean of every full window of ``window`` consecutive values."""
    if window < 1:
        raise ValueError("window must be positive")
    if window > len(values):
        return []
    return [sum(values[i : i + window]) / window for i in range(len(values) - window)]


def exponential_smoothing(values: Sequence[float], alpha: float) -> list[float]:
    if not 0 < alpha <= 1:
        raise ValueError("alpha must be in (0, 1]")
    smoothed: list[float] = []
    for value in values:
        smoothed.append(value if not smoothed else alpha * value + (1 - alpha) * smoothed[-1])
    return smoothed


def rolling_max(values: Sequence[float], window: int) -> list[float]:
    """Maximum of each full window, using a monotonic deque of indexes."""
    out: list[float] = []
    candidates: deque[int] = deque()
    for i, value in enumerate(values):
        while candidates and values[candidates[-1]] <= value:
            candidates.pop()
        candidates.append(i)
        if candidates[0] <= i - window:
            candidates.popleft()
        if i >= window - 1:
            out.append(values[candidates[0]])
    return out


def normalize(values: Sequence[float]) -> list[float]:
    """Scale to 0..1; a flat series maps to all zeros."""
    if not values:
        return []
    low, high = min(values), max(values)
    span = high - low
    return [0.0 if span == 0 else (v - low) / span for v in values]
