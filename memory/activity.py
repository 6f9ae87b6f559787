"""What happened, in order: posted comments, applied signals and fix results, for reports.

Experiences live in Qdrant, which in embedded mode only the worker process may open; the
reports are served by the web process. So every event a report needs is also appended
here (SQLite under the data dir, or Redis when Kaizen has one), and reports never need
the experience store. Append-only and idempotent by event id, so a retried task that
writes the same event twice still counts it once.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Collection, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import redis

MAX_EVENTS_PER_REPO = 200_000


@dataclass(frozen=True)
class Event:
    id: str  # unique: the same event written twice is one event
    kind: str  # comment | signal | fix
    repo: str
    at: float
    pattern: str = ""
    data: dict[str, Any] = field(default_factory=dict)


class ActivityLog(Protocol):
    def add(self, event: Event) -> None: ...

    def events(
        self,
        *,
        repo: str | None = None,
        kinds: Collection[str] | None = None,
        since: float | None = None,
    ) -> list[Event]: ...

    def repos(self) -> list[str]: ...

    def move_repo(self, old: str, new: str) -> int:
        """Re-label every event of ``old`` as ``new`` (a renamed or transferred repository),
        so the reports keep its history; returns how many events moved (0 when repeated)."""
        ...

    def forget_repo(self, repo: str) -> int:
        """Delete every event of ``repo``; how many went (0 when repeated)."""
        ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, repo TEXT NOT NULL, pattern TEXT NOT NULL,
    at REAL NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_repo ON events (repo, at);
"""


class SqliteActivityLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as db:
            db.execute("PRAGMA busy_timeout = 30000")
            yield db

    def add(self, event: Event) -> None:
        with self._db() as db:
            db.execute(
                "INSERT OR IGNORE INTO events (id, kind, repo, pattern, at, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    event.id,
                    event.kind,
                    event.repo,
                    event.pattern,
                    event.at,
                    json.dumps(event.data, default=str),
                ),
            )

    def events(
        self,
        *,
        repo: str | None = None,
        kinds: Collection[str] | None = None,
        since: float | None = None,
    ) -> list[Event]:
        where: list[str] = []
        args: list[Any] = []
        if repo is not None:
            where.append("repo = ?")
            args.append(repo)
        if since is not None:
            where.append("at >= ?")
            args.append(since)
        if kinds:
            where.append(f"kind IN ({','.join('?' * len(kinds))})")
            args.extend(kinds)
        sql = "SELECT id, kind, repo, pattern, at, data FROM events"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._db() as db:
            rows = db.execute(sql + " ORDER BY at, id", args).fetchall()
        return [Event(r[0], r[1], r[2], r[4], r[3], json.loads(r[5])) for r in rows]

    def repos(self) -> list[str]:
        with self._db() as db:
            return [r[0] for r in db.execute("SELECT DISTINCT repo FROM events ORDER BY repo")]

    def move_repo(self, old: str, new: str) -> int:
        """A renamed repository keeps its history in the reports.

        Event ids are the primary key across all repositories, so an event is under one
        name only and re-labelling cannot collide with events already under ``new``: one
        UPDATE (atomic on its own) merges them. Ids are left as they are, because they are
        what makes a retried task's second write of the same event a no-op.
        """
        if old == new:
            return 0
        with self._db() as db:
            return db.execute("UPDATE events SET repo = ? WHERE repo = ?", (new, old)).rowcount

    def forget_repo(self, repo: str) -> int:
        with self._db() as db:
            return db.execute("DELETE FROM events WHERE repo = ?", (repo,)).rowcount


class RedisActivityLog:
    """Events per repo in a sorted set by time; ids in a set for idempotency."""

    def __init__(self, url: str, prefix: str = "kaizen:activity") -> None:
        import redis as redis_lib

        self._redis: redis.Redis = redis_lib.Redis.from_url(url)
        self._prefix = prefix

    def add(self, event: Event) -> None:
        if not self._redis.sadd(f"{self._prefix}:ids", event.id):
            return
        payload = json.dumps(
            {
                "id": event.id,
                "kind": event.kind,
                "repo": event.repo,
                "at": event.at,
                "pattern": event.pattern,
                "data": event.data,
            },
            default=str,
        )
        key = f"{self._prefix}:repo:{event.repo}"
        pipe = self._redis.pipeline()
        pipe.zadd(key, {payload: event.at})
        pipe.sadd(f"{self._prefix}:repos", event.repo)
        pipe.zremrangebyrank(key, 0, -MAX_EVENTS_PER_REPO - 1)
        pipe.execute()

    def events(
        self,
        *,
        repo: str | None = None,
        kinds: Collection[str] | None = None,
        since: float | None = None,
    ) -> list[Event]:
        out: list[Event] = []
        for name in [repo] if repo is not None else self.repos():
            raw: list[Any] = self._redis.zrangebyscore(  # type: ignore[assignment]
                f"{self._prefix}:repo:{name}", since if since is not None else "-inf", "+inf"
            )
            for item in raw:
                d = json.loads(item if isinstance(item, bytes | str) else str(item))
                if kinds and d["kind"] not in kinds:
                    continue
                out.append(Event(d["id"], d["kind"], d["repo"], d["at"], d["pattern"], d["data"]))
        return sorted(out, key=lambda e: (e.at, e.id))

    def repos(self) -> list[str]:
        names = self._redis.smembers(f"{self._prefix}:repos")
        return sorted(n.decode() if isinstance(n, bytes) else str(n) for n in names)

    def move_repo(self, old: str, new: str) -> int:
        """A renamed repository keeps its history in the reports.

        Each event is a JSON member naming its repo, so members are rewritten, not just
        moved to the other sorted set. The rewrite is done here rather than in Lua because
        Redis's cjson keeps only 14 significant digits and would change the times. WATCH
        plus MULTI/EXEC makes the write all-or-nothing: an event added to either repo
        meanwhile restarts the move instead of being lost or moved half-way. An event
        whose id is already under ``new`` keeps that copy.
        """
        if old == new:
            return 0
        import redis as redis_lib

        old_key = f"{self._prefix}:repo:{old}"
        new_key = f"{self._prefix}:repo:{new}"
        repos_key = f"{self._prefix}:repos"
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(old_key, new_key)  # type: ignore[no-untyped-call]
                    old_items: list[tuple[Any, float]] = pipe.zrange(  # type: ignore[assignment]
                        old_key, 0, -1, withscores=True
                    )
                    new_items: list[Any] = pipe.zrange(new_key, 0, -1)
                    have = {json.loads(item)["id"] for item in new_items}
                    moved: dict[str, float] = {}
                    for item, at in old_items:
                        event = json.loads(item)
                        if event["id"] in have:
                            continue
                        event["repo"] = new
                        moved[json.dumps(event, default=str)] = at
                    pipe.multi()
                    if moved:
                        pipe.zadd(new_key, moved)
                        pipe.sadd(repos_key, new)
                        pipe.zremrangebyrank(new_key, 0, -MAX_EVENTS_PER_REPO - 1)
                    pipe.delete(old_key)
                    pipe.srem(repos_key, old)
                    pipe.execute()
                    return len(moved)
                except redis_lib.WatchError:
                    continue

    def forget_repo(self, repo: str) -> int:
        """Drop the repo's sorted set, its name and its events' ids (so nothing of it is
        left), all or nothing: an event added meanwhile restarts the deletion."""
        import redis as redis_lib

        key = f"{self._prefix}:repo:{repo}"
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)  # type: ignore[no-untyped-call]
                    items: list[Any] = pipe.zrange(key, 0, -1)
                    ids = [json.loads(item)["id"] for item in items]
                    pipe.multi()
                    pipe.delete(key)
                    pipe.srem(f"{self._prefix}:repos", repo)
                    if ids:
                        pipe.srem(f"{self._prefix}:ids", *ids)
                    pipe.execute()
                    return len(ids)
                except redis_lib.WatchError:
                    continue


def now() -> float:
    return time.time()
