"""A sliding-window rate limiter keyed by client id."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable


class SlidingWindowLimiter:
    """Allow at most ``limit`` calls per ``window`` seconds for each key."""

    def __init__(
        self, limit: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if window <= 0:
            raise ValueError("window must be positive")
        self.limit = limit
        self.window = window
        self._clock = clock
        self._hits: dict[str, deque[float]] = defaultdict(deque)

    def _prune(self, key: str, now: float) -> deque[float]:
        hits = self._hits[key]
        while hits and now - hits[0] >= self.window:
            hits.popleft()
        return hits

    def allow(self, key: str) -> bool:
        """Record a call for ``key`` and say whether it is within the limit."""
        now = self._clock()
        hits = self._prune(key, now)
        if len(hits) <= self.limit:
            hits.append(now)
            return True
        return False

    def remaining(self, key: str) -> int:
        hits = self._prune(key, self._clock())
        return max(0, self.limit - len(hits))

    def retry_after(self, key: str) -> float:
        """Seconds until the next call for ``key`` would be allowed (0 if now)."""
        now = self._clock()
        hits = self._prune(key, now)
        if len(hits) < self.limit:
            return 0.0
        return self.window - (now - hits[0])

    def reset(self, key: str) -> None:
        self._hits.pop(key, None)
