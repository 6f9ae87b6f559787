"""Signals waiting for the experience store to come back.

A developer's 👍 must not be lost because Qdrant was briefly down: the signal is parked
(durably) and applied by the next sweep. Applying is idempotent end to end, so a signal
parked twice, or swept by two workers at once, still counts once.

Where it is parked follows where the scores live: SQLite under the data dir on one
machine, Redis when ``KAIZEN_REDIS_URL`` is set. With workers on several machines the
periodic sweep runs on whichever worker takes it, so a signal parked in one machine's
local file could wait for that machine's turn, or be lost with its disk.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memory.sqlite import LocalSQLite
from memory.types import Signal

if TYPE_CHECKING:
    import redis

MAX_ERROR_CHARS = 500


class PendingStore(Protocol):
    def park(self, signal: Signal, error: str) -> None:
        """Keep ``signal`` until :meth:`done`; parking it again counts another attempt."""
        ...

    def done(self, signal_id: str) -> None: ...

    def all(self) -> list[Signal]:
        """Every parked signal, oldest first."""
        ...

    def count(self) -> int: ...


class PendingSignals:
    """On one machine: SQLite under the data dir."""

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
            (signal.id, json.dumps(asdict(signal)), time.time(), error[:MAX_ERROR_CHARS]),
        )

    def done(self, signal_id: str) -> None:
        self._db.conn().execute("DELETE FROM pending_signals WHERE id = ?", (signal_id,))

    def all(self) -> list[Signal]:
        rows = self._db.conn().execute("SELECT signal FROM pending_signals ORDER BY parked_at")
        return [Signal(**json.loads(row[0])) for row in rows]

    def count(self) -> int:
        row = self._db.conn().execute("SELECT COUNT(*) FROM pending_signals").fetchone()
        return int(row[0])


# First park keeps the signal and its time; later ones count an attempt and the last error.
_REDIS_PARK = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
local entry
if raw then
  entry = cjson.decode(raw)
  entry['attempts'] = entry['attempts'] + 1
  entry['last_error'] = ARGV[4]
else
  entry = {signal = ARGV[2], parked_at = tonumber(ARGV[3]), attempts = 1, last_error = ARGV[4]}
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entry))
return entry['attempts']
"""


class RedisPendingSignals:
    """Many machines: one hash in the Redis the scores use, so any worker's sweep sees every
    parked signal. The key shares the scores' hash tag (Redis Cluster)."""

    def __init__(self, url: str, prefix: str = "kaizen") -> None:
        import redis as redis_lib  # deferred: only deployments with Redis need the client

        self._r: redis.Redis = redis_lib.Redis.from_url(url, decode_responses=True)
        self._key = f"{{{prefix}}}:pending_signals"
        self._park = self._r.register_script(_REDIS_PARK)

    def park(self, signal: Signal, error: str) -> None:
        self._park(
            keys=[self._key],
            args=[
                signal.id,
                json.dumps(asdict(signal)),
                repr(time.time()),
                error[:MAX_ERROR_CHARS],
            ],
        )

    def done(self, signal_id: str) -> None:
        self._r.hdel(self._key, signal_id)

    def all(self) -> list[Signal]:
        entries = [json.loads(raw) for raw in self._r.hvals(self._key)]
        entries.sort(key=lambda e: float(e["parked_at"]))
        return [Signal(**json.loads(e["signal"])) for e in entries]

    def count(self) -> int:
        return int(self._r.hlen(self._key))

    def close(self) -> None:
        self._r.close()
