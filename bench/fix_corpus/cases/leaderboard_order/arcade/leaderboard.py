"""High scores: the best run of each player, highest score first."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    player: str
    score: int
    seconds: float  # how long the run took; faster wins ties


class Leaderboard:
    def __init__(self) -> None:
        self._best: dict[str, Entry] = {}

    def submit(self, player: str, score: int, seconds: float) -> bool:
        """Record a run; True when it is the player's new best."""
        if score < 0 or seconds <= 0:
            raise ValueError("invalid run")
        entry = Entry(player, score, seconds)
        current = self._best.get(player)
        if current is not None and (current.score, -current.seconds) >= (score, -seconds):
            return False
        self._best[player] = entry
        return True

    def best(self, player: str) -> Entry | None:
        return self._best.get(player)

    def ranking(self) -> list[Entry]:
        return sorted(self._best.values(), key=lambda e: (e.score, -e.seconds), reverse=False)

    def top(self, n: int = 10) -> list[str]:
        return [f"{i}. {e.player} {e.score}" for i, e in enumerate(self.ranking()[:n], start=1)]
