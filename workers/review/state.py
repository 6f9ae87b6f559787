"""Small shared state for reviews: who is reviewing a PR, the newest head, token budgets,
and which PRs have Kaizen comments to watch for reactions.

Workers run as several processes (and machines), so this lives in Redis when Kaizen has
one and in a SQLite file under the data dir otherwise (the embedded, single-machine mode).
Both behave the same; the review code only sees :class:`ReviewState`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import redis


class ReviewState(Protocol):
    def claim(self, key: str, holder: str, ttl_s: float) -> bool:
        """Take ``key`` for ``holder`` unless someone else holds it (expires after ttl)."""
        ...

    def release(self, key: str, holder: str) -> None: ...

    def set_latest(self, key: str, head_sha: str) -> None:
        """The newest head asked for; an older review seeing another value stops."""
        ...

    def latest(self, key: str) -> str | None: ...

    def add_tokens(self, scope: str, tokens: int, *, now: float | None = None) -> int:
        """Count ``tokens`` against today's (UTC) budget of ``scope``; the new total."""
        ...

    def watch(self, repo: str, number: int, installation_id: int, at: float) -> None: ...

    def unwatch(self, repo: str, number: int) -> None: ...

    def watched(self) -> list[dict[str, Any]]: ...

    def move_repo(self, old: str, new: str, *, installation_id: int | None = None) -> int:
        """Re-key the watched pull requests of ``old`` under ``new`` (a renamed or
        transferred repository), so reactions on them are still polled; returns how many
        moved. A transfer may land the repo in another installation (``installation_id``),
        whose token the poller must then use. Memos naming the repo (a failed fix's
        issue, kept for months so that a human fix of it can teach Kaizen) move too, with
        their expiry; claims, heads and budgets are short-lived and are left to expire."""
        ...

    def remember(self, key: str, value: str, ttl_s: float) -> None: ...

    def recall(self, key: str) -> str | None: ...

    def drop(self, key: str) -> None:
        """Forget the memo ``key`` now rather than at its expiry."""
        ...

    def forget_repo(self, repo: str) -> int:
        """Drop a forgotten repository's watched pull requests and every key naming it
        (locks, heads, token budgets, and memos such as a failed fix's issue text, kept
        for months); how many entries went."""
        ...


def renamed_key(key: str, old: str, new: str) -> str | None:
    """``key`` with ``old`` replaced by ``new`` where it names the repository (see
    :func:`names_repo`), or ``None`` if it does not name ``old``."""
    for sep in "#:":
        if f":{old}{sep}" in key:
            return key.replace(f":{old}{sep}", f":{new}{sep}", 1)
    return None


def names_repo(key: str, repo: str) -> bool:
    """Whether a state key is about ``repo``: keys name it as ``…:owner/name#number`` or
    ``…:owner/name:…``, and a repository name holds one slash and no colon, so another
    repository's key never matches."""
    return f":{repo}#" in key or f":{repo}:" in key


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _day(now: float | None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(now if now is not None else time.time()))


class RedisReviewState:
    def __init__(self, url: str, prefix: str = "kaizen:review") -> None:
        import redis as redis_lib

        self._redis: redis.Redis = redis_lib.Redis.from_url(url)
        self._prefix = prefix

    def _k(self, *parts: str) -> str:
        return ":".join((self._prefix, *parts))

    def claim(self, key: str, holder: str, ttl_s: float) -> bool:
        name = self._k("lock", key)
        if self._redis.set(name, holder, nx=True, px=int(ttl_s * 1000)):
            return True
        current = self._redis.get(name)
        return current is not None and _text(current) == holder

    def release(self, key: str, holder: str) -> None:
        # Delete only our own lock: compare-and-delete in one server-side step.
        self._redis.eval(
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
            "end return 0",
            1,
            self._k("lock", key),
            holder,
        )

    def set_latest(self, key: str, head_sha: str) -> None:
        self._redis.set(self._k("latest", key), head_sha, ex=30 * 86400)

    def latest(self, key: str) -> str | None:
        value = self._redis.get(self._k("latest", key))
        return _text(value) if value is not None else None

    def add_tokens(self, scope: str, tokens: int, *, now: float | None = None) -> int:
        name = self._k("tokens", scope, _day(now))
        pipe = self._redis.pipeline()
        pipe.incrby(name, int(tokens))
        pipe.expire(name, 3 * 86400)
        total, _ = pipe.execute()
        return int(total)

    def watch(self, repo: str, number: int, installation_id: int, at: float) -> None:
        value = json.dumps(
            {"repo": repo, "number": number, "installation_id": installation_id, "at": at}
        )
        self._redis.hset(self._k("watched"), f"{repo}#{number}", value)

    def unwatch(self, repo: str, number: int) -> None:
        self._redis.hdel(self._k("watched"), f"{repo}#{number}")

    def watched(self) -> list[dict[str, Any]]:
        raw = self._redis.hgetall(self._k("watched"))
        return sorted((json.loads(v) for v in raw.values()), key=lambda w: -float(w["at"]))

    def move_repo(self, old: str, new: str, *, installation_id: int | None = None) -> int:
        """Polling a watched PR goes through its repo name, which GitHub only redirects
        for a while after a rename, so the entries must carry the new name.

        WATCH plus MULTI/EXEC makes the re-keying all-or-nothing, and a PR watched or
        unwatched meanwhile restarts it rather than being overwritten. A PR already
        watched under ``new`` was written under the current name, so that entry is kept.
        """
        if old == new:
            return 0
        import redis as redis_lib

        name = self._k("watched")
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(name)  # type: ignore[no-untyped-call]
                    raw: dict[Any, Any] = pipe.hgetall(name)
                    fields = {_text(k): _text(v) for k, v in raw.items()}
                    gone = _prs_of(fields, old)
                    moved: dict[str, str] = {}
                    for pr in gone:
                        entry = json.loads(fields[pr])
                        entry["repo"] = new
                        if installation_id is not None:
                            entry["installation_id"] = installation_id
                        key = f"{new}#{entry['number']}"
                        if key not in fields:
                            moved[key] = json.dumps(entry)
                    pipe.multi()
                    if moved:
                        pipe.hset(name, mapping=moved)  # type: ignore[arg-type]
                    if gone:
                        pipe.hdel(name, *gone)
                    pipe.execute()
                    break
                except redis_lib.WatchError:
                    continue
        self._move_memos(old, new)
        return len(moved)

    def _keys_naming(self, repo: str) -> list[str]:
        """Every key naming ``repo``, scanned (never KEYS, which blocks Redis); glob
        characters in the name are escaped."""
        escaped = "".join(f"\\{ch}" if ch in "*?[]\\" else ch for ch in repo)
        pattern = f"{self._prefix}:*:{escaped}[#:]*"
        return [
            _text(key)
            for key in self._redis.scan_iter(match=pattern, count=1000)
            if names_repo(_text(key)[len(self._prefix) :], repo)
        ]

    def _move_memos(self, old: str, new: str) -> None:
        """Each memo is copied under the new name with its remaining time (unless one is
        already there) and then deleted; a retried move finds only what is left."""
        memo = self._k("memo", "")
        for key in self._keys_naming(old):
            target = renamed_key(key, old, new)
            if not key.startswith(memo) or target is None:
                continue
            value, ttl_ms = self._redis.get(key), int(self._redis.pttl(key))  # type: ignore[arg-type]
            if value is not None:
                self._redis.set(target, value, px=ttl_ms if ttl_ms > 0 else None, nx=True)
            self._redis.delete(key)

    def remember(self, key: str, value: str, ttl_s: float) -> None:
        self._redis.set(self._k("memo", key), value, px=int(ttl_s * 1000))

    def recall(self, key: str) -> str | None:
        value = self._redis.get(self._k("memo", key))
        return _text(value) if value is not None else None

    def drop(self, key: str) -> None:
        self._redis.delete(self._k("memo", key))

    def forget_repo(self, repo: str) -> int:
        keys = self._keys_naming(repo)
        name = self._k("watched")
        fields = {_text(k): _text(v) for k, v in self._redis.hgetall(name).items()}
        prs = _prs_of(fields, repo)
        pipe = self._redis.pipeline()
        if keys:
            pipe.delete(*keys)
        if prs:
            pipe.hdel(name, *prs)
        pipe.execute()
        return len(keys) + len(prs)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL, expires REAL);
CREATE TABLE IF NOT EXISTS watched (pr TEXT PRIMARY KEY, v TEXT NOT NULL, at REAL NOT NULL);
"""


class SqliteReviewState:
    """The same state in one SQLite file; each operation is one short transaction."""

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
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _get(self, db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute("SELECT v, expires FROM kv WHERE k = ?", (key,)).fetchone()
        if row is None or (row[1] is not None and row[1] < time.time()):
            return None
        return str(row[0])

    def _set(self, db: sqlite3.Connection, key: str, value: str, ttl_s: float | None) -> None:
        expires = time.time() + ttl_s if ttl_s is not None else None
        db.execute(
            "INSERT INTO kv (k, v, expires) VALUES (?, ?, ?) "
            "ON CONFLICT(k) DO UPDATE SET v = excluded.v, expires = excluded.expires",
            (key, value, expires),
        )

    def claim(self, key: str, holder: str, ttl_s: float) -> bool:
        with self._db() as db:
            current = self._get(db, f"lock:{key}")
            if current is not None and current != holder:
                return False
            self._set(db, f"lock:{key}", holder, ttl_s)
            return True

    def release(self, key: str, holder: str) -> None:
        with self._db() as db:
            db.execute("DELETE FROM kv WHERE k = ? AND v = ?", (f"lock:{key}", holder))

    def set_latest(self, key: str, head_sha: str) -> None:
        with self._db() as db:
            self._set(db, f"latest:{key}", head_sha, 30 * 86400)

    def latest(self, key: str) -> str | None:
        with self._db() as db:
            return self._get(db, f"latest:{key}")

    def add_tokens(self, scope: str, tokens: int, *, now: float | None = None) -> int:
        key = f"tokens:{scope}:{_day(now)}"
        with self._db() as db:
            total = int(self._get(db, key) or 0) + int(tokens)
            self._set(db, key, str(total), 3 * 86400)
            return total

    def watch(self, repo: str, number: int, installation_id: int, at: float) -> None:
        value = json.dumps(
            {"repo": repo, "number": number, "installation_id": installation_id, "at": at}
        )
        with self._db() as db:
            db.execute(
                "INSERT INTO watched (pr, v, at) VALUES (?, ?, ?) "
                "ON CONFLICT(pr) DO UPDATE SET v = excluded.v, at = excluded.at",
                (f"{repo}#{number}", value, at),
            )

    def unwatch(self, repo: str, number: int) -> None:
        with self._db() as db:
            db.execute("DELETE FROM watched WHERE pr = ?", (f"{repo}#{number}",))

    def watched(self) -> list[dict[str, Any]]:
        with self._db() as db:
            rows = db.execute("SELECT v FROM watched ORDER BY at DESC").fetchall()
        return [json.loads(r[0]) for r in rows]

    def move_repo(self, old: str, new: str, *, installation_id: int | None = None) -> int:
        """Polling a watched PR goes through its repo name, which GitHub only redirects
        for a while after a rename, so the entries must carry the new name. One
        transaction; a PR already watched under ``new`` was written under the current
        name, so that entry is kept."""
        if old == new:
            return 0
        moved = 0
        with self._db() as db:
            rows = db.execute("SELECT pr, v, at FROM watched").fetchall()
            fields = {str(r[0]): str(r[1]) for r in rows}
            at = {str(r[0]): float(r[2]) for r in rows}
            for pr in _prs_of(fields, old):
                entry = json.loads(fields[pr])
                entry["repo"] = new
                if installation_id is not None:
                    entry["installation_id"] = installation_id
                inserted = db.execute(
                    "INSERT OR IGNORE INTO watched (pr, v, at) VALUES (?, ?, ?)",
                    (f"{new}#{entry['number']}", json.dumps(entry), at[pr]),
                )
                moved += inserted.rowcount
                db.execute("DELETE FROM watched WHERE pr = ?", (pr,))
            for key, value, expires in db.execute(
                "SELECT k, v, expires FROM kv WHERE k LIKE 'memo:%'"
            ).fetchall():
                target = renamed_key(str(key), old, new)
                if target is not None:
                    db.execute(
                        "INSERT OR IGNORE INTO kv (k, v, expires) VALUES (?, ?, ?)",
                        (target, value, expires),
                    )
                    db.execute("DELETE FROM kv WHERE k = ?", (key,))
        return moved

    def remember(self, key: str, value: str, ttl_s: float) -> None:
        with self._db() as db:
            self._set(db, f"memo:{key}", value, ttl_s)

    def recall(self, key: str) -> str | None:
        with self._db() as db:
            return self._get(db, f"memo:{key}")

    def drop(self, key: str) -> None:
        with self._db() as db:
            db.execute("DELETE FROM kv WHERE k = ?", (f"memo:{key}",))

    def forget_repo(self, repo: str) -> int:
        with self._db() as db:
            keys = [str(r[0]) for r in db.execute("SELECT k FROM kv")]
            gone = [(k,) for k in keys if names_repo(f":{k}", repo)]
            db.executemany("DELETE FROM kv WHERE k = ?", gone)
            rows = db.execute("SELECT pr, v FROM watched").fetchall()
            prs = [(pr,) for pr in _prs_of({str(r[0]): str(r[1]) for r in rows}, repo)]
            db.executemany("DELETE FROM watched WHERE pr = ?", prs)
        return len(gone) + len(prs)


def _prs_of(watched: dict[str, str], repo: str) -> list[str]:
    """The watched keys of ``repo``, found by the name inside each entry because that is
    the name :meth:`ReviewState.watched` hands to the poller."""
    return [pr for pr, value in watched.items() if json.loads(value).get("repo") == repo]


def review_state(redis_url: str | None, data_dir: Path) -> ReviewState:
    if redis_url:
        return RedisReviewState(redis_url)
    return SqliteReviewState(data_dir / "review_state.sqlite3")
