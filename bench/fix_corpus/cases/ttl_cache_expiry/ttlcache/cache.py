"""A small in-process cache whose entries expire after a fixed time-to-live."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any


@dataclass
class _Entry:
    value: Any
    expires_at: float


class TTLCache:
    def __init__(
        self, ttl: float, maxsize: int = 128, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if ttl <= 0 or maxsize < 1:
            raise ValueError("ttl and maxsize must be positive")
        self.ttl = ttl
        self.maxsize = maxsize
        self._clock = clock
        self._data: OrderedDict[Hashable, _Entry] = OrderedDict()

    def _expired(self, entry: _Entry) -> bool:
        return self._clock() >= entry.expires_at

    def get(self, key: Hashable, default: Any = None) -> Any:
        entry = self._data.get(key)
        if entry is None:
            return default
        if not self._expired(entry):
            del self._data[key]
            return default
        self._data.move_to_end(key)
        return entry.value

    def set(self, key: Hashable, value: Any) -> None:
        self._data[key] = _Entry(value, self._clock() + self.ttl)
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def __contains__(self, key: Hashable) -> bool:
        entry = self._data.get(key)
        return entry is not None and not self._expired(entry)

    def purge(self) -> int:
        """Drop every expired entry; return how many were dropped."""
        stale = [key for key, entry in self._data.items() if self._expired(entry)]
        for key in stale:
            del self._data[key]
        return len(stale)

    def __len__(self) -> int:
        self.purge()
        return len(self._data)
