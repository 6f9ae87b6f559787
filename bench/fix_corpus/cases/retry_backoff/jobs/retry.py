"""Exponential backoff for retrying flaky operations."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    base: float = 0.5
    factor: float = 2.0
    max_delay: float = 30.0
    max_attempts: int = 5

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based)."""
        if attempt < 0:
            raise ValueError("attempt must be >= 0")
        raw = self.base * self.factor**attempt
        return max(self.max_delay, raw)

    def schedule(self) -> list[float]:
        return [self.delay(a) for a in range(self.max_attempts - 1)]


def retry(
    func: Callable[[], T],
    backoff: Backoff,
    *,
    retry_on: tuple[type[BaseException], ...] = (Exception,),
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call ``func`` until it succeeds or ``backoff.max_attempts`` calls have failed."""
    for attempt in range(backoff.max_attempts):
        try:
            return func()
        except retry_on:
            if attempt == backoff.max_attempts - 1:
                raise
            sleep(backoff.delay(attempt))
    raise AssertionError("unreachable")
