"""Signals of experiences that retention deleted.

Scores are sums over every signal ever applied; retention keeps Qdrant small by deleting a
repo's oldest experiences. Their signals are archived here first, so ``kaizen memory
rebuild`` still reproduces the live scores after retention has run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from memory.sqlite import LocalSQLite
from memory.types import Experience


class SignalArchive:
    def __init__(self, path: Path) -> None:
        self._db = LocalSQLite(path)
        self._db.conn().execute(
            "CREATE TABLE IF NOT EXISTS archived_signals ("
            " id TEXT PRIMARY KEY, repo TEXT NOT NULL, pattern TEXT NOT NULL,"
            " alpha REAL NOT NULL, beta REAL NOT NULL, at REAL NOT NULL)"
        )

    def archive(self, experiences: Sequence[Experience]) -> int:
        rows = [
            (str(r["id"]), e.repo, e.pattern, float(r["alpha"]), float(r["beta"]), float(r["at"]))
            for e in experiences
            for r in e.extra.get("signals", [])
        ]
        conn = self._db.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR IGNORE INTO archived_signals VALUES (?, ?, ?, ?, ?, ?)", rows
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(rows)

    def iter_signals(self) -> Iterator[tuple[str, str, str, float, float, float]]:
        """(id, repo, pattern, alpha, beta, at) for every archived signal."""
        yield from self._db.conn().execute(
            "SELECT id, repo, pattern, alpha, beta, at FROM archived_signals ORDER BY id"
        )

    def count(self) -> int:
        return int(self._db.conn().execute("SELECT COUNT(*) FROM archived_signals").fetchone()[0])
