"""Every LLM call Kaizen makes, kept as a transition so Kaizen's own runs become training data.

A *trajectory* is one piece of work (reviewing a PR, fixing an issue); each LLM call in it
is a *transition* ``(prompt, generation, reward)`` at a numbered step, in the spirit of
Agent Lightning's triplets. A step may carry an immediate reward (a critic's score, a test
run: StepAgent-style step rewards); the *final* reward arrives later, often days later,
when the outcome is known (the comment is accepted, the fix PR merged), and is attached to
every step of the trajectory, or to the steps linked to the experience that decided it.

Storage is one SQLite file in WAL mode, because Kaizen runs several worker processes on one
machine and they all record: every write is a single statement (its own short
transaction), every operation opens its own connection (so nothing is shared across a
``fork`` of a Celery prefork pool, and no lock outlives a call) and waits on a busy
timeout instead of failing when another process holds the write lock.

Sizes are bounded so one runaway prompt cannot bloat the database or crash a worker:
a generation, and the text of each prompt message, is cut at :data:`MAX_TEXT_CHARS`
characters with :data:`TRUNCATION_MARKER` appended, and metadata over
:data:`MAX_METADATA_CHARS` characters of JSON loses its largest values. What was cut is
listed in ``metadata["truncated"]``. Values that are not JSON (objects, NaN, lone
surrogates) are stored as their closest JSON form instead of raising.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1

MAX_TEXT_CHARS = 200_000
"""Longest generation or prompt-message text kept (characters, about 200 kB of code)."""

MAX_METADATA_CHARS = 64_000
"""Longest metadata kept, measured as its JSON text."""

MAX_ERROR_CHARS = 2_000
"""Longest exception text the :class:`Recorder` keeps in ``metadata["error"]``."""

TRUNCATION_MARKER = "\n[... truncated by Kaizen: kept {kept} of {total} characters]"

BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's transaction before giving up."""

_FETCH_BATCH = 256

_SURROGATE = re.compile("[\ud800-\udfff]")

_COLUMNS = (
    "trajectory_id",
    "step",
    "messages",
    "generation",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "reward",
    "final_reward",
    "created_at",
    "repo",
    "kind",
    "pattern",
    "experience_id",
    "metadata",
)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM transitions"  # noqa: S608 - constant columns

_SCHEMA = """
CREATE TABLE IF NOT EXISTS transitions (
    trajectory_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    messages TEXT NOT NULL,
    generation TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    reward REAL,
    final_reward REAL,
    created_at REAL NOT NULL,
    repo TEXT NOT NULL,
    kind TEXT NOT NULL,
    pattern TEXT,
    experience_id TEXT,
    metadata TEXT NOT NULL,
    PRIMARY KEY (trajectory_id, step)
);
CREATE INDEX IF NOT EXISTS transitions_created ON transitions (created_at);
CREATE INDEX IF NOT EXISTS transitions_experience ON transitions (experience_id);
CREATE INDEX IF NOT EXISTS transitions_repo ON transitions (repo, created_at);
CREATE INDEX IF NOT EXISTS transitions_kind ON transitions (kind, created_at);
"""


@dataclass
class Transition:
    """One LLM call: the prompt it got, what it answered, and what that answer earned.

    ``messages`` is the prompt in OpenAI chat format; ``generation`` the model's answer
    (tool calls serialised as JSON), so a transition can be replayed or trained on without
    Kaizen's code. ``reward`` is the immediate (step) reward, ``final_reward`` the outcome
    of the whole trajectory, known later; either may be ``None`` until known.
    ``experience_id`` links the step to the experience (:mod:`memory.types`) whose outcome
    decides its final reward.
    """

    trajectory_id: str
    step: int
    messages: list[dict[str, Any]]
    generation: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    reward: float | None = None
    final_reward: float | None = None
    created_at: float = field(default_factory=time.time)
    repo: str = ""
    kind: str = ""
    pattern: str | None = None
    experience_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class TrajectoryStore:
    """Durable transitions in one SQLite file, shared by the worker processes of a machine.

    Creating a store creates the file and its schema (idempotently); nothing happens at
    import. The store holds no connection between calls, so one instance may be used from
    several threads and survives a ``fork``.
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as conn:
            # WAL is a property of the file: readers never block the writer and vice versa.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: autocommit, so each statement is its own short transaction
        # and no implicit transaction is left open holding a lock.
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        conn.execute("PRAGMA synchronous = NORMAL")  # durable across crashes of a process
        return conn

    # -- writing -------------------------------------------------------------------------

    def record(self, t: Transition) -> None:
        """Store ``t`` at its (trajectory_id, step), replacing whatever was there.

        Replacing (not ignoring) makes a retried task's re-recording the truth, and makes
        recording idempotent: the same transition recorded twice is one row.
        """
        _check_step(t.trajectory_id, t.step)
        row = _to_row(t)
        placeholders = ", ".join("?" for _ in _COLUMNS)
        with closing(self._connect()) as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO transitions ({', '.join(_COLUMNS)}) "  # noqa: S608
                f"VALUES ({placeholders})",
                row,
            )

    def append(self, t: Transition) -> int:
        """Store ``t`` as the next step of its trajectory and return that step (``t.step``
        is ignored).

        The step number is chosen inside the INSERT itself, so processes appending to the
        same trajectory at once still get distinct, gapless steps (0, 1, 2, ...).
        """
        _check_step(t.trajectory_id, 0)
        row = _to_row(t)
        others = ", ".join("?" for _ in _COLUMNS[2:])
        with closing(self._connect()) as conn:
            conn.execute(
                f"INSERT INTO transitions ({', '.join(_COLUMNS)}) "  # noqa: S608
                f"SELECT ?, COALESCE(MAX(step) + 1, 0), {others} "
                "FROM transitions WHERE trajectory_id = ?",
                (row[0], *row[2:], row[0]),
            )
            (step,) = conn.execute(
                "SELECT step FROM transitions WHERE rowid = last_insert_rowid()"
            ).fetchone()
        return int(step)

    def set_step_reward(self, trajectory_id: str, step: int, reward: float | None) -> int:
        """Set the immediate reward of one step; returns 1, or 0 if there is no such step."""
        with closing(self._connect()) as conn:
            cur = conn.execute(
                "UPDATE transitions SET reward = ? WHERE trajectory_id = ? AND step = ?",
                (_check_reward(reward), trajectory_id, step),
            )
            return cur.rowcount

    def attach_final_reward(self, trajectory_id: str, reward: float) -> int:
        """Give every step of a trajectory its outcome; returns the number of steps updated."""
        with closing(self._connect()) as conn:
            cur = conn.execute(
                "UPDATE transitions SET final_reward = ? WHERE trajectory_id = ?",
                (_check_reward(reward), trajectory_id),
            )
            return cur.rowcount

    def attach_final_reward_for_experience(self, experience_id: str, reward: float) -> int:
        """Give the steps linked to an experience its outcome; returns the steps updated.

        Only steps whose ``experience_id`` matches are updated, because one trajectory
        (a review of a PR) can post several comments, each its own experience with its own
        fate. Tag every step that the experience's outcome should reward.
        """
        with closing(self._connect()) as conn:
            cur = conn.execute(
                "UPDATE transitions SET final_reward = ? WHERE experience_id = ?",
                (_check_reward(reward), experience_id),
            )
            return cur.rowcount

    def clear_final_reward_for_experience(self, experience_id: str) -> int:
        """Its outcome is unknown again (a 👍 taken back): the steps lose their final reward,
        so no export trains on a verdict nobody holds any more. Returns the steps updated."""
        with closing(self._connect()) as conn:
            cur = conn.execute(
                "UPDATE transitions SET final_reward = NULL WHERE experience_id = ?",
                (experience_id,),
            )
            return cur.rowcount

    def move_repo(self, old: str, new: str) -> int:
        """A renamed or transferred repository keeps its transitions under its new name,
        so per-repo exports and usage charts still include its past. Returns the rows moved.

        Only the ``repo`` column names the repository as data: the key is
        (trajectory_id, step), so rows under ``new`` never collide and one UPDATE merges
        them. Trajectory ids often embed the old name too, but they are kept: experiences
        store them to find their steps again, and messages and metadata are kept as the
        model saw them, because they are training data.
        """
        if old == new:
            return 0
        with closing(self._connect()) as conn:  # one statement: atomic in autocommit
            cur = conn.execute("UPDATE transitions SET repo = ? WHERE repo = ?", (new, old))
            return cur.rowcount

    def forget_repo(self, repo: str, experience_ids: Iterable[str] = ()) -> int:
        """Delete a forgotten repository's LLM calls: prompts hold its code. Rows under its
        name, and rows of its experiences (a trajectory recorded before a rename the move
        missed still names the experience). Returns the rows deleted."""
        ids = sorted(set(experience_ids))
        with closing(self._connect()) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                gone = conn.execute("DELETE FROM transitions WHERE repo = ?", (repo,)).rowcount
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    sql = f"DELETE FROM transitions WHERE experience_id IN ({marks})"  # noqa: S608
                    gone += conn.execute(sql, chunk).rowcount
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return gone

    # -- reading -------------------------------------------------------------------------

    def get(self, trajectory_id: str) -> list[Transition]:
        """All steps of a trajectory, ordered by step ([] if unknown)."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                f"{_SELECT} WHERE trajectory_id = ? ORDER BY step", (trajectory_id,)
            ).fetchall()
        return [_from_row(r) for r in rows]

    def get_step(self, trajectory_id: str, step: int) -> Transition | None:
        """One step, or ``None``."""
        with closing(self._connect()) as conn:
            row = conn.execute(
                f"{_SELECT} WHERE trajectory_id = ? AND step = ?", (trajectory_id, step)
            ).fetchone()
        return None if row is None else _from_row(row)

    def iter_transitions(
        self,
        *,
        repo: str | None = None,
        kind: str | None = None,
        since: float | None = None,
        with_final_reward: bool | None = None,
    ) -> Iterator[Transition]:
        """Transitions matching every given filter, oldest first, streamed in batches.

        ``since`` keeps transitions created at or after that unix time;
        ``with_final_reward`` keeps only those with (True) or without (False) a final
        reward. Rows are fetched a batch at a time on a connection of their own, so an
        export of millions of rows uses little memory and writers are not blocked (WAL).
        """
        clauses: list[str] = []
        params: list[Any] = []
        if repo is not None:
            clauses.append("repo = ?")
            params.append(repo)
        if kind is not None:
            clauses.append("kind = ?")
            params.append(kind)
        if since is not None:
            clauses.append("created_at >= ?")
            params.append(since)
        if with_final_reward is not None:
            clauses.append(f"final_reward IS {'NOT ' if with_final_reward else ''}NULL")
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"{_SELECT}{where} ORDER BY created_at, trajectory_id, step"
        with closing(self._connect()) as conn:
            cur = conn.execute(sql, params)
            while batch := cur.fetchmany(_FETCH_BATCH):
                for row in batch:
                    yield _from_row(row)

    def usage_by_day(
        self, *, repo: str | None = None, since: float | None = None
    ) -> list[tuple[float, str, int, int, int]]:
        """(day start, kind, LLM calls, prompt tokens, completion tokens) per UTC day and
        kind, for the reports' token and cost charts (aggregated in SQL, not in Python)."""
        clauses: list[str] = []
        params: list[Any] = []
        if repo is not None:
            clauses.append("repo = ?")
            params.append(repo)
        if since is not None:
            clauses.append("created_at >= ?")
            params.append(since)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        # The clauses are constants; every value is a bound parameter.
        sql = (
            "SELECT CAST(created_at / 86400 AS INTEGER) * 86400 AS day, kind, COUNT(*),"  # noqa: S608
            " COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0)"
            f" FROM transitions{where} GROUP BY day, kind ORDER BY day, kind"
        )
        with closing(self._connect()) as conn:
            rows = conn.execute(sql, params).fetchall()
        return [(float(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows]

    def repos(self) -> list[str]:
        """Every repository with recorded LLM calls, sorted (read from the repo index)."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT DISTINCT repo FROM transitions WHERE repo != ''")
            return sorted(str(r[0]) for r in rows)

    def stats(self) -> dict[str, Any]:
        """Counts for dashboards and for deciding whether there is enough to train on."""
        with closing(self._connect()) as conn:
            (
                transitions,
                trajectories,
                prompt_tokens,
                completion_tokens,
                with_final,
                with_step,
                trajectories_with_final,
            ) = conn.execute(
                "SELECT COUNT(*), COUNT(DISTINCT trajectory_id),"
                " COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0),"
                " COUNT(final_reward), COUNT(reward),"
                " COUNT(DISTINCT CASE WHEN final_reward IS NOT NULL THEN trajectory_id END)"
                " FROM transitions"
            ).fetchone()
            by_kind = dict(
                conn.execute(
                    "SELECT kind, COUNT(*) FROM transitions GROUP BY kind ORDER BY kind"
                ).fetchall()
            )
        return {
            "transitions": transitions,
            "trajectories": trajectories,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "with_final_reward": with_final,
            "without_final_reward": transitions - with_final,
            "with_step_reward": with_step,
            "trajectories_with_final_reward": trajectories_with_final,
            "trajectories_without_final_reward": trajectories - trajectories_with_final,
            "by_kind": by_kind,
        }


class RecordingStep:
    """One LLM call being recorded; returned by :meth:`Recorder.step`.

    Call :meth:`finish` with the model's answer. ``pattern``, ``experience_id`` and
    ``metadata`` may be changed inside the block (the experience is often only known once
    the answer is parsed). After the block, ``step`` holds the step number recorded.
    """

    def __init__(
        self,
        recorder: Recorder,
        trajectory_id: str,
        messages: list[dict[str, Any]],
        model: str,
        *,
        repo: str,
        kind: str,
        pattern: str | None,
        experience_id: str | None,
        metadata: dict[str, Any] | None,
        step: int | None,
    ) -> None:
        self._recorder = recorder
        self.trajectory_id = trajectory_id
        self.messages = messages
        self.model = model
        self.repo = repo
        self.kind = kind
        self.pattern = pattern
        self.experience_id = experience_id
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.step = step
        self.generation = ""
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.reward: float | None = None
        self.latency_s: float | None = None
        self.finished = False
        self._created_at = 0.0
        self._started = 0.0

    def __enter__(self) -> RecordingStep:
        self._created_at = self._recorder.clock()
        self._started = self._recorder.timer()
        return self

    def finish(
        self,
        generation: str,
        prompt_tokens: int,
        completion_tokens: int,
        reward: float | None = None,
    ) -> None:
        """The call returned: keep its answer and usage; latency is measured up to here."""
        self.latency_s = max(0.0, self._recorder.timer() - self._started)
        self.generation = generation
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.reward = reward
        self.finished = True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Failed calls are recorded too: they are what a trainer most needs to see avoided.
        if self.latency_s is None:
            self.latency_s = max(0.0, self._recorder.timer() - self._started)
        metadata = dict(self.metadata)
        if exc is not None:
            metadata["error"] = _cut(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS)
        elif not self.finished:
            metadata["error"] = "step ended without finish()"
        t = Transition(
            trajectory_id=self.trajectory_id,
            step=self.step if self.step is not None else 0,
            messages=self.messages,
            generation=self.generation,
            model=self.model,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            latency_s=self.latency_s,
            reward=self.reward,
            created_at=self._created_at,
            repo=self.repo,
            kind=self.kind,
            pattern=self.pattern,
            experience_id=self.experience_id,
            metadata=metadata,
        )
        self.step = self._recorder.save(t, explicit_step=self.step is not None)
        # Never swallow the caller's exception (returning None re-raises it).


class Recorder:
    """Records LLM calls for callers that should not have to think about storage.

    Recording is a by-product: if the store fails (disk full, database locked past the
    timeout), the failure is logged and the review or fix carries on, one transition
    poorer. ``clock`` (wall time for ``created_at``) and ``timer`` (monotonic, for
    latency) are injectable for tests.
    """

    def __init__(
        self,
        store: TrajectoryStore,
        *,
        clock: Callable[[], float] = time.time,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.store = store
        self.clock = clock
        self.timer = timer

    def step(
        self,
        trajectory_id: str,
        messages: list[dict[str, Any]],
        model: str,
        *,
        repo: str = "",
        kind: str = "",
        pattern: str | None = None,
        experience_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        step: int | None = None,
    ) -> RecordingStep:
        """A context manager recording one call; with ``step=None`` the next free step
        number of the trajectory is taken when the call is recorded."""
        return RecordingStep(
            self,
            trajectory_id,
            messages,
            model,
            repo=repo,
            kind=kind,
            pattern=pattern,
            experience_id=experience_id,
            metadata=metadata,
            step=step,
        )

    def save(self, t: Transition, *, explicit_step: bool) -> int | None:
        """Store ``t`` (at ``t.step`` if explicit, else appended); the step, or ``None``
        if recording failed."""
        try:
            if explicit_step:
                self.store.record(t)
                return t.step
            return self.store.append(t)
        except Exception:
            logger.warning(
                "could not record transition of trajectory %s", t.trajectory_id, exc_info=True
            )
            return t.step if explicit_step else None


# -- row conversion and limits -----------------------------------------------------------


def _check_step(trajectory_id: str, step: int) -> None:
    if not trajectory_id:
        raise ValueError("trajectory_id must not be empty")
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")


def _check_reward(reward: float | None) -> float | None:
    """Rewards must be finite: NaN would poison training and is not valid JSON."""
    if reward is None:
        return None
    value = float(reward)
    if not math.isfinite(value):
        raise ValueError(f"reward must be finite, got {reward!r}")
    return value


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATION_MARKER.format(kept=limit, total=len(text))


def _clean_str(text: str) -> str:
    """Text SQLite and UTF-8 files accept: lone surrogates become U+FFFD, not a crash."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _jsonable(value: Any) -> Any:
    """The closest plain-JSON form of ``value``, so storing never raises on odd values."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _clean_str(value)
    if isinstance(value, dict):
        return {_clean_str(str(k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return _clean_str(str(value))


def _limit_messages(messages: list[dict[str, Any]], truncated: list[str]) -> list[Any]:
    """Cut over-long message texts (plain ``content`` and ``text`` parts)."""
    out: list[Any] = []
    for i, message in enumerate(_jsonable(messages)):
        if isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, str) and len(content) > MAX_TEXT_CHARS:
                message["content"] = _cut(content, MAX_TEXT_CHARS)
                truncated.append(f"messages[{i}].content")
            elif isinstance(content, list):
                for j, part in enumerate(content):
                    text = part.get("text") if isinstance(part, dict) else None
                    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
                        part["text"] = _cut(text, MAX_TEXT_CHARS)
                        truncated.append(f"messages[{i}].content[{j}].text")
        out.append(message)
    return out


def _limit_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Drop the largest values until the JSON fits; their keys keep a marker."""
    data: dict[str, Any] = _jsonable(metadata)
    sizes = {k: len(json.dumps(v, ensure_ascii=False)) for k, v in data.items()}
    for key in sorted(sizes, key=lambda k: (-sizes[k], k)):
        if len(json.dumps(data, ensure_ascii=False)) <= MAX_METADATA_CHARS:
            break
        data[key] = f"[dropped by Kaizen: {sizes[key]} characters of JSON]"
    if len(json.dumps(data, ensure_ascii=False)) > MAX_METADATA_CHARS:  # too many keys
        data = {"truncated": ["metadata"], "metadata_keys": len(data)}
    return data


def _to_row(t: Transition) -> tuple[Any, ...]:
    truncated: list[str] = []
    messages = _limit_messages(t.messages, truncated)
    generation = _clean_str(t.generation)
    if len(generation) > MAX_TEXT_CHARS:
        generation = _cut(generation, MAX_TEXT_CHARS)
        truncated.append("generation")
    metadata = dict(t.metadata)
    if truncated:
        metadata["truncated"] = truncated
    return (
        _clean_str(t.trajectory_id),
        int(t.step),
        json.dumps(messages, ensure_ascii=False),
        generation,
        _clean_str(t.model),
        int(t.prompt_tokens),
        int(t.completion_tokens),
        float(t.latency_s),
        _check_reward(t.reward),
        _check_reward(t.final_reward),
        float(t.created_at),
        _clean_str(t.repo),
        _clean_str(t.kind),
        None if t.pattern is None else _clean_str(t.pattern),
        None if t.experience_id is None else _clean_str(t.experience_id),
        json.dumps(_limit_metadata(metadata), ensure_ascii=False),
    )


def _from_row(row: tuple[Any, ...]) -> Transition:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["messages"] = json.loads(values["messages"])
    values["metadata"] = json.loads(values["metadata"])
    return Transition(**values)
