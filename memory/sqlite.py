"""One SQLite connection per thread, in WAL mode, for Kaizen's small local stores.

SQLite connections must not cross threads, and several worker processes share each file;
WAL lets readers and one writer proceed together, and the busy timeout makes writers wait
for each other instead of failing.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class LocalSQLite:
    def __init__(self, path: Path, *, timeout_s: float = 30.0) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._timeout = timeout_s
        self._local = threading.local()

    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn
