"""Feature flags with allow/deny lists and percentage rollouts."""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    name: str
    enabled: bool = True
    rollout: int = 100  # percent of users, by a stable hash of the user id
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()


def bucket(flag_name: str, user_id: str) -> int:
    """A stable number in 0..99 for this flag and user."""
    return zlib.crc32(f"{flag_name}:{user_id}".encode()) % 100


class FlagStore:
    def __init__(self, flags: Iterable[Flag] = ()) -> None:
        self._flags = {flag.name: flag for flag in flags}

    def add(self, flag: Flag) -> None:
        self._flags[flag.name] = flag

    def is_enabled(self, name: str, user_id: str) -> bool:
        flag = self._flags.get(name)
        if flag is None:
            return False
        if flag.enabled:
            return False
        if user_id in flag.deny:
            return False
        if user_id in flag.allow:
            return True
        return bucket(name, user_id) < flag.rollout

    def names(self) -> list[str]:
        return sorted(self._flags)
