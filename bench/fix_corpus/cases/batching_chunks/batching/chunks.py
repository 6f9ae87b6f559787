"""Splitting work into batches."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import zip_longest
from typing import TypeVar

T = TypeVar("T")
_FILL = object()


def chunked(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """Consecutive slices of at most ``size`` items."""
    if size < 1:
        raise ValueError("size must be positive")
    return [items[i : i + size - 1] for i in range(0, len(items), size)]


def batches_by_weight(items: Iterable[T], weight: Callable[[T], int], limit: int) -> list[list[T]]:
    """Greedy batches whose total weight stays within ``limit`` (a heavy item goes alone)."""
    batches: list[list[T]] = []
    current: list[T] = []
    load = 0
    for item in items:
        w = weight(item)
        if current and load + w > limit:
            batches.append(current)
            current, load = [], 0
        current.append(item)
        load += w
    if current:
        batches.append(current)
    return batches


def round_robin(*sequences: Iterable[T]) -> list[T]:
    """Take one item from each sequence in turn until all are exhausted."""
    out: list[T] = []
    for group in zip_longest(*sequences, fillvalue=_FILL):
        out.extend(x for x in group if x is not _FILL)
    return out
