"""Signals of experiences that retention deleted.

Scores are sums over every signal ever applied; retention keeps Qdrant small by deleting a
repo's oldest experiences. Their signals are archived here first, so ``kaizen memory
rebuild`` still reproduces the live scores after retention has run.

Like the scores, the archive is SQLite under the data dir on one machine and Redis when
``KAIZEN_REDIS_URL`` is set: retention runs on whichever worker upserts, so with workers
on several machines a local archive would leave each machine's rebuild short of the
others' archived signals.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory.sqlite import LocalSQLite
from memory.types import GONE_KIND, Experience

if TYPE_CHECKING:
    import redis

ArchivedSignal = tuple[str, str, str, float, float, float]  # id, repo, pattern, alpha, beta, at


def signal_rows(experiences: Iterable[Experience]) -> list[ArchivedSignal]:
    """The weighted signal records of ``experiences``, as rebuilds and the archive keep
    them (a deleted reply's note carries no weights and is left out)."""
    return [
        (str(r["id"]), e.repo, e.pattern, float(r["alpha"]), float(r["beta"]), float(r["at"]))
        for e in experiences
        for r in e.extra.get("signals", [])
        if r.get("kind") != GONE_KIND
    ]


class ArchiveStore(Protocol):
    def archive(self, experiences: Sequence[Experience]) -> int:
        """Keep the signals of ``experiences`` (each id once); how many were offered."""
        ...

    def iter_signals(self) -> Iterator[ArchivedSignal]:
        """(id, repo, pattern, alpha, beta, at) for every archived signal, by id."""
        ...

    def count(self) -> int: ...

    def move_repo(self, old: str, new: str) -> int:
        """Re-label a renamed or transferred repository's archived signals, so a rebuild
        counts them where the live scores now keep them; how many were re-labelled."""
        ...

    def forget_repo(self, repo: str) -> int:
        """Delete a forgotten repository's archived signals; how many went."""
        ...


class SignalArchive:
    """On one machine: SQLite under the data dir."""

    def __init__(self, path: Path) -> None:
        self._db = LocalSQLite(path)
        self._db.conn().execute(
            "CREATE TABLE IF NOT EXISTS archived_signals ("
            " id TEXT PRIMARY KEY, repo TEXT NOT NULL, pattern TEXT NOT NULL,"
            " alpha REAL NOT NULL, beta REAL NOT NULL, at REAL NOT NULL)"
        )

    def archive(self, experiences: Sequence[Experience]) -> int:
        rows = signal_rows(experiences)
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

    def iter_signals(self) -> Iterator[ArchivedSignal]:
        yield from self._db.conn().execute(
            "SELECT id, repo, pattern, alpha, beta, at FROM archived_signals ORDER BY id"
        )

    def count(self) -> int:
        return int(self._db.conn().execute("SELECT COUNT(*) FROM archived_signals").fetchone()[0])

    def move_repo(self, old: str, new: str) -> int:
        if old == new:
            return 0
        # one statement: atomic in autocommit
        sql = "UPDATE archived_signals SET repo = ? WHERE repo = ?"
        return int(self._db.conn().execute(sql, (new, old)).rowcount)

    def forget_repo(self, repo: str) -> int:
        sql = "DELETE FROM archived_signals WHERE repo = ?"
        return int(self._db.conn().execute(sql, (repo,)).rowcount)


class RedisSignalArchive:
    """Many machines: one hash in the scores' Redis (same hash tag), id → signal, written
    with HSETNX so an id archived twice keeps its first copy, as the SQLite one does."""

    def __init__(self, url: str, prefix: str = "kaizen") -> None:
        import redis as redis_lib  # deferred: only deployments with Redis need the client

        self._r: redis.Redis = redis_lib.Redis.from_url(url, decode_responses=True)
        self._key = f"{{{prefix}}}:archived_signals"

    def archive(self, experiences: Sequence[Experience]) -> int:
        rows = signal_rows(experiences)
        pipe = self._r.pipeline(transaction=True)
        for sid, repo, pattern, alpha, beta, at in rows:
            pipe.hsetnx(self._key, sid, json.dumps([repo, pattern, alpha, beta, at]))
        pipe.execute()
        return len(rows)

    def iter_signals(self) -> Iterator[ArchivedSignal]:
        entries = dict(self._r.hscan_iter(self._key, count=1000))
        for sid in sorted(entries):
            repo, pattern, alpha, beta, at = json.loads(entries[sid])
            yield (sid, str(repo), str(pattern), float(alpha), float(beta), float(at))

    def count(self) -> int:
        return int(self._r.hlen(self._key))

    def _entries_of(self, repo: str) -> dict[str, list[Any]]:
        """The repo's archived signals by id, scanned, not scripted: the archive can be
        large and a script would block Redis. One archived under ``repo`` meanwhile is
        caught when the move or forget is retried."""
        found = {}
        for sid, value in self._r.hscan_iter(self._key, count=1000):
            entry = json.loads(value)
            if entry[0] == repo:
                found[sid] = entry
        return found

    def move_repo(self, old: str, new: str) -> int:
        if old == new:
            return 0
        changed = {sid: json.dumps([new, *e[1:]]) for sid, e in self._entries_of(old).items()}
        items = list(changed.items())
        for start in range(0, len(items), 1000):
            self._r.hset(self._key, mapping=dict(items[start : start + 1000]))
        return len(changed)

    def forget_repo(self, repo: str) -> int:
        gone = list(self._entries_of(repo))
        for start in range(0, len(gone), 1000):
            self._r.hdel(self._key, *gone[start : start + 1000])
        return len(gone)

    def close(self) -> None:
        self._r.close()
