"""Signals waiting for the experience store to come back.

A developer's 👍 must not be lost because Qdrant was briefly down: the signal is parked
here (SQLite, durable) and applied by the next sweep. Applying is idempotent end to end,
so a signal parked twice, or swept by two workers at once, still counts once.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

from memory.sqlite import LocalSQLite
from memory.types import Signal


class PendingSignals:
    def __init__(self, path: Path) -> None:
        self._db = LocalSQLite(path)
        with self._db.conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS pending_signals ("
                " id TEXT PRIMARY KEY, signal TEXT NOT NULL, parked_at REAL NOT NULL,"
                " attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT)"
            )

    def park(self, signal: Signal, error: str) -> None:
        self._db.conn().execute(
            "INSERT INTO pending_signals (id, signal, parked_at, attempts, last_error)"
            " VALUES (?, ?, ?, 1, ?) ON CONFLICT(id) DO UPDATE SET"
            " attempts = attempts + 1, last_error = excluded.last_error",
            (signal.id, json.dumps(asdict(signal)), time.time(), error[:500]),
        )

    def done(self, signal_id: str) -> None:
        self._db.conn().execute("DELETE FROM pending_signals WHERE id = ?", (signal_id,))

    def all(self) -> list[Signal]:
        rows = self._db.conn().execute("SELECT signal FROM pending_signals ORDER BY parked_at")
        return [Signal(**json.loads(row[0])) for row in rows]

    def count(self) -> int:
        row = self._db.conn().execute("SELECT COUNT(*) FROM pending_signals").fetchone()
        return int(row[0])
