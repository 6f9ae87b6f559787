"""Remember only the most recent call of an expensive pure function."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any

_NOTHING: Any = object()


class memoize_last:
    """Cache the result of the last call; a call with equal arguments reuses it."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self._key: Hashable = _NOTHING
        self._result: Any = None
        self.hits = 0
        self.misses = 0
        functools.update_wrapper(self, func)

    def __call__(self, *args: Hashable, **kwargs: Hashable) -> Any:
        key = (args, tuple(sorted(kwargs.items())))
        if self._key is key:
            self.hits += 1
            return self._result
        self.misses += 1
        result = self.func(*args, **kwargs)
        self._key, self._result = key, result
        return result

    def clear(self) -> None:
        self._key = _NOTHING
        self._result = None
