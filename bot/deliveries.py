"""The delivery ledger: each ``X-GitHub-Delivery`` is queued at most once.

A delivery is *claimed* before it is enqueued and *released* if enqueueing fails, so a
delivery the broker never took is not recorded as handled: GitHub shows it as failed and
``kaizen redeliver`` brings it back. Claims expire after GitHub's own redelivery window.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Protocol

import redis

from memory.sqlite import LocalSQLite


class LedgerUnavailable(Exception):
    """The ledger's store cannot be reached; the delivery must be refused (503)."""


class DeliveryLedger(Protocol):
    def claim(self, delivery_id: str) -> bool:
        """True if this delivery was not seen before (and is now claimed)."""
        ...

    def release(self, delivery_id: str) -> None:
        """Forget a claim whose delivery could not be queued."""
        ...

    def seen(self, delivery_id: str) -> bool: ...

    def ping(self) -> bool: ...


class RedisLedger:
    """Claims as ``SET NX EX`` keys: atomic across any number of web processes."""

    def __init__(self, url: str, *, ttl_s: int, timeout_s: float, prefix: str = "kaizen") -> None:
        self._redis = redis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )
        self._ttl = ttl_s
        self._prefix = f"{prefix}:delivery:"

    def claim(self, delivery_id: str) -> bool:
        try:
            return bool(self._redis.set(self._prefix + delivery_id, "1", nx=True, ex=self._ttl))
        except redis.RedisError as exc:
            raise LedgerUnavailable(str(exc)) from exc

    def release(self, delivery_id: str) -> None:
        try:
            self._redis.delete(self._prefix + delivery_id)
        except redis.RedisError as exc:
            raise LedgerUnavailable(str(exc)) from exc

    def seen(self, delivery_id: str) -> bool:
        try:
            return bool(self._redis.exists(self._prefix + delivery_id))
        except redis.RedisError as exc:
            raise LedgerUnavailable(str(exc)) from exc

    def ping(self) -> bool:
        try:
            return bool(self._redis.ping())
        except redis.RedisError:
            return False


class SqliteLedger:
    """Claims in a SQLite file, for the embedded single-machine setup."""

    def __init__(self, path: Path, *, ttl_s: int) -> None:
        self._db = LocalSQLite(path, timeout_s=10)
        self._ttl = ttl_s
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS deliveries (id TEXT PRIMARY KEY, claimed_at REAL)"
            )

    def _connect(self) -> sqlite3.Connection:
        return self._db.conn()

    def claim(self, delivery_id: str) -> bool:
        now = time.time()
        try:
            conn = self._connect()
            conn.execute(
                "DELETE FROM deliveries WHERE id = ? AND claimed_at < ?",
                (delivery_id, now - self._ttl),
            )
            cursor = conn.execute(
                "INSERT OR IGNORE INTO deliveries (id, claimed_at) VALUES (?, ?)",
                (delivery_id, now),
            )
            return cursor.rowcount == 1
        except sqlite3.Error as exc:
            raise LedgerUnavailable(str(exc)) from exc

    def release(self, delivery_id: str) -> None:
        try:
            self._connect().execute("DELETE FROM deliveries WHERE id = ?", (delivery_id,))
        except sqlite3.Error as exc:
            raise LedgerUnavailable(str(exc)) from exc

    def seen(self, delivery_id: str) -> bool:
        row = (
            self._connect()
            .execute(
                "SELECT 1 FROM deliveries WHERE id = ? AND claimed_at >= ?",
                (delivery_id, time.time() - self._ttl),
            )
            .fetchone()
        )
        return row is not None

    def purge(self) -> int:
        """Drop expired claims; the beat schedule calls this hourly."""
        cursor = self._connect().execute(
            "DELETE FROM deliveries WHERE claimed_at < ?", (time.time() - self._ttl,)
        )
        return cursor.rowcount

    def ping(self) -> bool:
        try:
            self._connect().execute("SELECT 1")
            return True
        except sqlite3.Error:
            return False
