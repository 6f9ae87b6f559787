"""Kaizen's experience memory: every comment posted and fix tried, with what became of it,
searchable by meaning.

Why a vector store: the reviewer's best teacher is "what happened last time we said
something like this here". A finding about a ``mutable default argument`` in ``b.py``
should recall the comment on the same problem in ``a.py`` last week, and whether the
developers accepted it. Qdrant does the similarity search and the payload filtering
(repo, org, kind, outcome); the same code runs on embedded storage (one process, a
folder under the data dir) or a Qdrant server (``KAIZEN_QDRANT_URL``).

Design decisions:

- **Deterministic ids.** A point's id is ``Experience.id`` (uuid5 of kind, repo and
  finding fingerprint), so writing the same experience twice is one point.
- **History survives re-upserts.** A point carries the history of developer reactions:
  ``signals`` (one record per signal, idempotent by signal id), ``reflections`` (free-text
  reasons) and ``outcome``. Re-upserting an existing experience (re-posted on a new push,
  text refreshed) updates its content fields and vector but never its history: the
  existing point is patched with ``set_payload`` of the content keys only, so a signal
  recorded concurrently is not overwritten either. The one exception: an upsert may move
  a still-``pending`` outcome to a final one (conditionally, so it cannot undo a signal).
  ``created_at`` keeps the first write's value (retention is "oldest first seen").
- **Concurrency.** Embedded Qdrant is one process, so a lock per store makes each
  read-modify-write atomic. On a server several workers may record signals on the same
  point at once: ``record_signal`` is a compare-and-set on a ``revision`` counter (the
  write is conditioned on the revision it read, and retried), so no signal is lost.
- **No cross-org leaks.** Another organisation's experience is only ever returned when
  its payload says ``shareable: true`` (from ``Experience.extra["shareable"]``, false by
  default) *and* the caller asked for it (``scope="global"`` or ``allow_global=True``).
  Code from one customer's private repositories must never appear in another customer's
  prompts.
- **Bounded size.** Each repo keeps at most ``retention_per_repo`` experiences (oldest
  deleted first, after each upsert); the stored text is capped at ``max_text_chars``
  (the embedding only reads the start anyway) and marked ``text_truncated``.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from memory.embedding import Embedder
from memory.scores import DAY, check_half_life
from memory.types import Experience, Kind, Outcome, scopes_for

__all__ = [
    "ACCEPTED_OUTCOMES",
    "FINAL_OUTCOMES",
    "REJECTED_OUTCOMES",
    "VOTE_HORIZON_HALF_LIVES",
    "VOTE_WEIGHTS",
    "ExperienceStore",
    "ExperienceStoreError",
    "Hit",
    "StoreLocked",
    "Vote",
    "decided_at",
    "open_store",
    "tally_vote",
    "vote_horizon",
]

DEFAULT_COLLECTION = "kaizen_experiences"

# Examples shown as "developers liked this" / "developers did not want this".
ACCEPTED_OUTCOMES: tuple[str, ...] = (Outcome.ACCEPTED, Outcome.ADDRESSED, Outcome.PARTLY)
REJECTED_OUTCOMES: tuple[str, ...] = (Outcome.REJECTED, Outcome.DISMISSED)
FINAL_OUTCOMES: tuple[str, ...] = tuple(o.value for o in Outcome if o is not Outcome.PENDING)

# (accept, reject) weight of one similar past experience in a neighbour vote. An ignored
# comment is weak evidence against (nobody cared), a partly-merged fix half an accept.
VOTE_WEIGHTS: Mapping[str, tuple[float, float]] = {
    Outcome.ACCEPTED: (1.0, 0.0),
    Outcome.ADDRESSED: (1.0, 0.0),
    Outcome.PARTLY: (0.5, 0.0),
    Outcome.REJECTED: (0.0, 1.0),
    Outcome.DISMISSED: (0.0, 1.0),
    Outcome.IGNORED: (0.0, 0.3),
}

# How far back a neighbour vote looks, in half-lives of the pattern scores: a comment
# judged four half-lives ago would weigh 1/16 and must not fill the ten places of one
# judged last week.
VOTE_HORIZON_HALF_LIVES = 4.0

# Payload keys holding the reaction history: never written by a re-upsert.
_HISTORY_KEYS = ("signals", "reflections", "revision")
# Server-side payload indexes (embedded Qdrant ignores indexes, so none are made there).
_PAYLOAD_INDEXES: Mapping[str, models.PayloadSchemaType] = {
    "repo": models.PayloadSchemaType.KEYWORD,
    "org": models.PayloadSchemaType.KEYWORD,
    "kind": models.PayloadSchemaType.KEYWORD,
    "pattern": models.PayloadSchemaType.KEYWORD,
    "outcome": models.PayloadSchemaType.KEYWORD,
    # An integer index: a keyword index would not index the integer values.
    "installation_id": models.PayloadSchemaType.INTEGER,
    # A range index: retention orders by it (the server requires an index for order_by).
    "created_at": models.PayloadSchemaType.FLOAT,
    "shareable": models.PayloadSchemaType.BOOL,
}
_WRITE_CHUNK = 256
_CAS_ATTEMPTS = 20


class ExperienceStoreError(RuntimeError):
    """The experience store cannot be used as configured."""


class SignalRefused(LookupError):
    """The experience holds the record that bars this signal (its source was deleted)."""


class StoreLocked(ExperienceStoreError):
    """Embedded Qdrant storage is already open in another process (or client)."""


@dataclass(frozen=True)
class Hit:
    """One retrieved experience, its cosine similarity, and which scope it came from
    (``repo``, ``org`` or ``global``: prompts may present them differently)."""

    experience: Experience
    score: float
    scope: str = "repo"


@dataclass(frozen=True)
class Vote:
    """What this repo's developers did with comments very similar to a candidate."""

    accepts: float = 0.0
    rejects: float = 0.0
    neighbours: int = 0
    examples: list[Hit] = field(default_factory=list)


def decided_at(experience: Experience) -> float:
    """When the developers last acted on an experience: its newest signal, else its creation.

    A vote's age is counted from here, as a pattern score's evidence ages from each
    signal: the comment may be old, what counts is how long ago the team judged it.
    """
    newest = experience.created_at
    for record in experience.extra.get("signals") or ():
        at = record.get("at") if isinstance(record, Mapping) else None
        if isinstance(at, int | float) and not isinstance(at, bool) and math.isfinite(at):
            newest = max(newest, float(at))
    return newest


def tally_vote(
    neighbours: Iterable[tuple[str, float]],
    *,
    now: float | None = None,
    half_life_days: float | None = None,
) -> tuple[float, float]:
    """(accepts, rejects) of neighbours given as (outcome, when it was decided).

    Each weighs ``VOTE_WEIGHTS[outcome]`` times ``2 ** -(age / half-life)`` with the pattern
    scores' half-life, so near-identical comments the team judged long ago fade exactly as
    the pattern's own evidence does. Without it a team that changed its mind stayed stuck:
    every try-out of a pattern it now wants sat next to a dozen of its old rejections, and
    they outvoted the recent sums that had already noticed the change (learning simulation,
    1,000 PRs, seeds 0-9: drift recovery 79 PRs without votes, 307 with the old undecayed
    rule, 81 with faded votes and :func:`memory.scores.neighbours_differ`).
    ``half_life_days`` ``None``: no decay.
    """
    if half_life_days is not None:
        check_half_life(half_life_days)
    accepts = rejects = 0.0
    for outcome, at in neighbours:
        a, r = VOTE_WEIGHTS.get(outcome, (0.0, 0.0))
        if not (a or r):
            continue
        weight = 1.0
        if half_life_days is not None and now is not None:
            age_days = max(0.0, now - at) / DAY
            weight = 0.5 ** (age_days / half_life_days)
        accepts += a * weight
        rejects += r * weight
    return accepts, rejects


def vote_horizon(now: float, half_life_days: float) -> float:
    """The oldest ``created_at`` a neighbour vote looks at (``VOTE_HORIZON_HALF_LIVES``)."""
    return now - VOTE_HORIZON_HALF_LIVES * check_half_life(half_life_days) * DAY


def _match(key: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _match_any(key: str, values: Sequence[str]) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))


def _is_local(client: QdrantClient) -> bool:
    inner = getattr(client, "_client", None)
    return type(inner).__name__ in ("QdrantLocal", "AsyncQdrantLocal")


def _valid_id(point_id: str) -> bool:
    try:
        uuid.UUID(str(point_id))
    except ValueError:
        return False
    return True


class ExperienceStore:
    """Experiences in a Qdrant collection, searchable by text similarity and scope.

    Thread-safe: writes always take the store's lock (read-modify-write steps are atomic
    in this process); reads take it too on embedded storage, which is not thread-safe.
    """

    def __init__(
        self,
        client: QdrantClient,
        embedder: Embedder,
        *,
        collection: str = DEFAULT_COLLECTION,
        retention_per_repo: int = 20000,
        max_text_chars: int = 20000,
    ) -> None:
        if retention_per_repo < 1:
            raise ValueError("retention_per_repo must be positive")
        self.client = client
        self.embedder = embedder
        self.collection = collection
        self.retention_per_repo = retention_per_repo
        self.max_text_chars = max_text_chars
        self.local = _is_local(client)
        self._lock = threading.RLock()
        self._ready = False

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Release the client (and, for embedded storage, the folder's lock)."""
        with self._lock:
            self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _reading(self) -> AbstractContextManager[Any]:
        return self._lock if self.local else nullcontext()

    def _ensure(self) -> None:
        """Create the collection and its indexes on first use; check the vector size.

        Why check: switching embedding model (384-dim local to 1536-dim OpenAI) would make
        every upsert fail with an obscure error, and a model of the same size would silently
        return nonsense neighbours; say what to do instead.
        """
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            dim = self.embedder.dim
            if not self.client.collection_exists(self.collection):
                try:
                    self.client.create_collection(
                        self.collection,
                        vectors_config=models.VectorParams(
                            size=dim, distance=models.Distance.COSINE
                        ),
                    )
                except (UnexpectedResponse, ValueError):
                    # Another process created it first: fine if it exists now.
                    if not self.client.collection_exists(self.collection):
                        raise
            info = self.client.get_collection(self.collection)
            vectors = info.config.params.vectors
            size = vectors.size if isinstance(vectors, models.VectorParams) else None
            if size != dim:
                raise ExperienceStoreError(
                    f"collection {self.collection!r} holds {size}-dim vectors but the embedder "
                    f"{self.embedder.name!r} makes {dim}-dim ones; use another collection "
                    "(or delete this one) when changing the embedding model"
                )
            sample, _ = self.client.scroll(
                self.collection, limit=1, with_payload=["embedder"], with_vectors=False
            )
            model = (sample[0].payload or {}).get("embedder") if sample else None
            if model not in (None, self.embedder.name):
                raise ExperienceStoreError(
                    f"collection {self.collection!r} holds vectors of the model {model!r}, not "
                    f"{self.embedder.name!r}: vectors of different models cannot be compared; "
                    "use another collection (or delete this one) when changing the model"
                )
            if self.local:
                self._tune_embedded_storage()
            else:
                existing = set(info.payload_schema or {})
                for name, schema in _PAYLOAD_INDEXES.items():
                    if name not in existing:
                        self.client.create_payload_index(
                            self.collection, name, field_schema=schema, wait=True
                        )
            self._ready = True

    def _tune_embedded_storage(self) -> None:
        """Put embedded Qdrant's SQLite file in WAL mode with ``synchronous=NORMAL``.

        Why: qdrant-client's local mode commits every point in its own transaction, and
        with the default rollback journal each commit waits for fsync - 15-20 ms per
        experience on a virtual disk (60 points/s). WAL with NORMAL sync commits without
        waiting (a few thousand points/s) and stays consistent and durable across a crash
        of the process; only a power loss may drop the last commits. This reaches into
        qdrant-client internals, so it is best-effort: any change there just skips it.
        """
        inner = getattr(self.client, "_client", None)
        collection = getattr(inner, "collections", {}).get(self.collection)
        conn = getattr(getattr(collection, "storage", None), "storage", None)
        if not isinstance(conn, sqlite3.Connection):
            return
        with suppress(sqlite3.Error):  # an optimisation only
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")

    # -- conversion ------------------------------------------------------------------------

    def _content_payload(self, experience: Experience) -> dict[str, Any]:
        """The payload keys an upsert owns (everything but the reaction history)."""
        extra = {k: v for k, v in experience.extra.items() if k not in _HISTORY_KEYS}
        text = experience.text
        truncated = len(text) > self.max_text_chars
        if truncated:
            text = text[: self.max_text_chars]
        return {
            "kind": str(experience.kind),
            "repo": experience.repo,
            "org": experience.org,
            "pattern": experience.pattern,
            "fingerprint": experience.fingerprint,
            "text": text,
            "text_truncated": truncated,
            "installation_id": experience.installation_id,
            "severity": experience.severity,
            "extra": extra,
            "shareable": extra.get("shareable") is True,
            "embedder": self.embedder.name,
            "updated_at": time.time(),
        }

    @staticmethod
    def _from_payload(payload: Mapping[str, Any], point_id: Any = None) -> Experience:
        extra = dict(payload.get("extra") or {})
        extra["signals"] = list(payload.get("signals") or [])
        extra["reflections"] = list(payload.get("reflections") or [])
        if payload.get("text_truncated"):
            extra["text_truncated"] = True
        installation = payload.get("installation_id")
        reward = payload.get("reward")
        return Experience(
            kind=str(payload.get("kind", Kind.COMMENT)),
            repo=str(payload.get("repo", "")),
            pattern=str(payload.get("pattern", "")),
            fingerprint=str(payload.get("fingerprint", "")),
            text=str(payload.get("text", "")),
            installation_id=int(installation) if installation is not None else None,
            severity=str(payload.get("severity", "medium")),
            outcome=str(payload.get("outcome", Outcome.PENDING)),
            reward=float(reward) if reward is not None else None,
            reflection=payload.get("reflection"),
            created_at=float(payload.get("created_at") or 0.0),
            extra=extra,
            stored_id=None if point_id is None else str(point_id),
        )

    # -- writing ---------------------------------------------------------------------------

    def upsert(
        self,
        experiences: Sequence[Experience],
        *,
        vectors: Sequence[Sequence[float]] | None = None,
        enforce_retention: bool = True,
        on_delete: Callable[[list[Experience]], None] | None = None,
    ) -> None:
        """Write experiences (new ones whole, existing ones' content only; see module doc).

        ``vectors`` skips embedding (precomputed vectors, one per experience, e.g. for
        benchmarks or a migration); otherwise all texts are embedded in one batch.
        """
        if not experiences:
            return
        if vectors is not None and len(vectors) != len(experiences):
            raise ValueError("vectors must have one vector per experience")
        self._ensure()
        if vectors is None:
            vectors = self.embedder.embed([e.text for e in experiences])
        latest: dict[str, tuple[Experience, Sequence[float]]] = {}
        for experience, vector in zip(experiences, vectors, strict=True):
            latest[experience.id] = (experience, vector)  # the last copy in a batch wins
        items = list(latest.items())
        now = time.time()
        with self._lock:
            for start in range(0, len(items), _WRITE_CHUNK):
                self._write_chunk(items[start : start + _WRITE_CHUNK], now)
        if enforce_retention:
            for repo in sorted({e.repo for e in experiences}):
                self.enforce_retention(repo, on_delete=on_delete)

    def _write_chunk(
        self, items: list[tuple[str, tuple[Experience, Sequence[float]]]], now: float
    ) -> None:
        ids = [point_id for point_id, _ in items]
        stored = {
            str(r.id): r.payload or {}
            for r in self.client.retrieve(
                self.collection, ids, with_payload=["outcome"], with_vectors=False
            )
        }
        new_points: list[models.PointStruct] = []
        operations: list[models.SetPayloadOperation | models.UpdateVectorsOperation] = []
        promotions: list[tuple[str, str]] = []
        dim = self.embedder.dim
        for point_id, (experience, vector) in items:
            if len(vector) != dim or not all(math.isfinite(x) for x in vector):
                raise ValueError(f"experience {point_id}: expected a finite {dim}-dim vector")
            content = self._content_payload(experience)
            if point_id not in stored:
                reflections = [experience.reflection] if experience.reflection else []
                payload = {
                    **content,
                    "outcome": str(experience.outcome),
                    "reward": experience.reward,
                    "reflection": experience.reflection,
                    "created_at": experience.created_at or now,
                    "signals": [],
                    "reflections": reflections,
                    "revision": 0,
                }
                new_points.append(
                    models.PointStruct(id=point_id, vector=list(vector), payload=payload)
                )
                continue
            operations.append(
                models.SetPayloadOperation(
                    set_payload=models.SetPayload(payload=content, points=[point_id])
                )
            )
            operations.append(
                models.UpdateVectorsOperation(
                    update_vectors=models.UpdateVectors(
                        points=[models.PointVectors(id=point_id, vector=list(vector))]
                    )
                )
            )
            if stored[point_id].get("outcome") == Outcome.PENDING and (
                experience.outcome != Outcome.PENDING
            ):
                promotions.append((point_id, str(experience.outcome)))
        if new_points:
            self.client.upsert(self.collection, new_points, wait=True)
        if operations:
            self.client.batch_update_points(self.collection, operations, wait=True)
        for point_id, outcome in promotions:
            # Conditional on still being pending, so a signal recorded meanwhile (by another
            # process on a server) wins; embedded storage is under our lock already.
            selector: list[models.ExtendedPointId] | models.Filter = [point_id]
            if not self.local:
                selector = models.Filter(
                    must=[
                        models.HasIdCondition(has_id=[point_id]),
                        _match("outcome", str(Outcome.PENDING)),
                    ]
                )
            self.client.set_payload(
                self.collection, {"outcome": outcome}, points=selector, wait=True
            )

    def record_signal(
        self,
        id: str,
        signal: Mapping[str, Any],
        outcome: str,
        reflection: str | None,
        *,
        unless: str | None = None,
    ) -> bool:
        """Append a developer signal to an experience, once; set its outcome.

        ``signal`` is a JSON-able record with at least ``id`` (plus kind, alpha, beta, at,
        reason...): it is kept on the point so scores can be rebuilt from experiences. A
        record whose id is already there changes nothing (GitHub redelivers, pollers
        repeat). ``reflection`` (a developer's reason) is appended to ``reflections`` and
        becomes the experience's ``reflection``. Returns False if there is no such point.

        ``unless`` names a record whose presence bars this one (a deleted reply's note):
        checked in the same compare-and-set as the write, so a writer that checked just
        before the barring record landed is still refused (``SignalRefused``).
        """
        if "id" not in signal:
            raise ValueError("a signal record needs an 'id'")
        if not _valid_id(id):
            return False
        record = dict(signal)
        record_id = str(record["id"])
        self._ensure()
        with self._lock:
            for _ in range(_CAS_ATTEMPTS):
                found = self.client.retrieve(
                    self.collection,
                    [id],
                    with_payload=["signals", "reflections", "revision"],
                    with_vectors=False,
                )
                if not found:
                    return False
                payload = found[0].payload or {}
                signals = list(payload.get("signals") or [])
                if any(str(s.get("id")) == record_id for s in signals):
                    return True
                if unless is not None and any(str(s.get("id")) == unless for s in signals):
                    raise SignalRefused(f"signal {record_id} on {id} is barred by {unless}")
                revision = int(payload.get("revision") or 0)
                update: dict[str, Any] = {
                    "signals": [*signals, record],
                    "outcome": str(outcome),
                    "revision": revision + 1,
                    "updated_at": time.time(),
                }
                if reflection:
                    update["reflections"] = [*(payload.get("reflections") or []), reflection]
                    update["reflection"] = reflection
                selector: list[models.ExtendedPointId] | models.Filter = [id]
                if not self.local:
                    # Compare-and-set: applies only if nobody wrote since we read.
                    selector = models.Filter(
                        must=[models.HasIdCondition(has_id=[id]), _match("revision", revision)]
                    )
                self.client.set_payload(self.collection, update, points=selector, wait=True)
                if self.local:
                    return True
            raise ExperienceStoreError(
                f"could not record signal {record_id} on {id}: too many concurrent writers"
            )

    def enforce_retention(
        self, repo: str, *, on_delete: Callable[[list[Experience]], None] | None = None
    ) -> int:
        """Delete this repo's oldest experiences beyond ``retention_per_repo``.

        Returns how many were deleted. Oldest by ``created_at`` (first written).
        ``on_delete`` sees each batch (with its signals) before it goes, so the caller can
        archive what scores are built from: a rebuild must still add up after retention.
        """
        self._ensure()
        repo_filter = models.Filter(must=[_match("repo", repo)])
        return self._delete_in_batches(
            repo_filter,
            on_delete,
            wanted=lambda: self._count(repo_filter) - self.retention_per_repo,
            order_by=models.OrderBy(key="created_at", direction=models.Direction.ASC),
        )

    def _delete_in_batches(
        self,
        selection: models.Filter,
        on_delete: Callable[[list[Experience]], None] | None,
        *,
        wanted: Callable[[], int] = lambda: 1000,
        order_by: models.OrderBy | None = None,
    ) -> int:
        """Delete up to ``wanted()`` selected points at a time (at most 1000), until it says
        none or none are left; ``on_delete`` sees each batch with its payload first, so a
        failure there keeps the batch. How many were deleted."""
        deleted = 0
        with self._lock:
            while (want := wanted()) > 0:
                batch, _ = self.client.scroll(
                    self.collection,
                    scroll_filter=selection,
                    order_by=order_by,
                    limit=min(want, 1000),
                    with_payload=on_delete is not None,
                    with_vectors=False,
                )
                if not batch:
                    break
                if on_delete is not None:
                    on_delete([self._from_payload(r.payload or {}, r.id) for r in batch])
                self.client.delete(
                    self.collection, models.PointIdsList(points=[r.id for r in batch]), wait=True
                )
                deleted += len(batch)
        return deleted

    def move_repo(self, old: str, new: str, *, installation_id: int | None = None) -> int:
        """Re-label a renamed or transferred repository's experiences (repo, org and, when
        given, the installation), keeping their ids: comment markers on GitHub name them,
        and the repo/org filters of neighbour search and retention must find them under
        the new name. Idempotent; how many were re-labelled."""
        if old == new:
            return 0
        self._ensure()
        repo_filter = models.Filter(must=[_match("repo", old)])
        payload: dict[str, Any] = {"repo": new, "org": scopes_for(new)[1]}
        if installation_id is not None:
            payload["installation_id"] = int(installation_id)
        with self._lock:
            moved = self._count(repo_filter)
            if moved:
                self.client.set_payload(
                    self.collection,
                    payload=payload,
                    points=models.FilterSelector(filter=repo_filter),
                    wait=True,
                )
        return moved

    def forget_repo(
        self, repo: str, *, on_delete: Callable[[list[Experience]], None] | None = None
    ) -> int:
        """Delete every experience of ``repo`` (what it said, its code and its signals), in
        batches that ``on_delete`` sees first, as retention's do. Idempotent: a second call
        finds nothing; a failure leaves the rest for the next call. How many went."""
        self._ensure()
        return self._delete_in_batches(models.Filter(must=[_match("repo", repo)]), on_delete)

    def repos(self, installation_id: int | None = None) -> list[str]:
        """The repositories with experiences, sorted; with ``installation_id``, those written
        under that installation (an uninstalled App's payload may not list them all)."""
        self._ensure()
        where = None
        if installation_id is not None:
            where = models.Filter(must=[_match("installation_id", int(installation_id))])
        with self._reading():
            facet = self.client.facet(
                self.collection, "repo", facet_filter=where, limit=100_000, exact=True
            )
        return sorted(str(hit.value) for hit in facet.hits)

    # -- reading ---------------------------------------------------------------------------

    def get(self, id: str) -> Experience | None:
        """The experience with this id (signals in ``extra["signals"]``), or None."""
        if not _valid_id(id):
            return None
        self._ensure()
        with self._reading():
            found = self.client.retrieve(self.collection, [id], with_payload=True)
        return self._from_payload(found[0].payload or {}, found[0].id) if found else None

    def iter_all(self, batch: int = 256) -> Iterator[Experience]:
        """Every experience, with its signals in ``extra["signals"]`` (for score rebuilds)."""
        self._ensure()
        offset: models.ExtendedPointId | None = None
        while True:
            with self._reading():
                records, next_offset = self.client.scroll(
                    self.collection,
                    limit=batch,
                    offset=offset,
                    with_payload=True,
                    with_vectors=False,
                )
            for record in records:
                yield self._from_payload(record.payload or {}, record.id)
            if next_offset is None:
                return
            offset = next_offset

    def _count(self, count_filter: models.Filter | None) -> int:
        return int(self.client.count(self.collection, count_filter=count_filter, exact=True).count)

    def count(self, repo: str | None = None) -> int:
        """Experiences stored, in one repo or in all."""
        self._ensure()
        with self._reading():
            return self._count(models.Filter(must=[_match("repo", repo)]) if repo else None)

    def stats(self) -> dict[str, Any]:
        """Counts in total, by kind, by outcome and by kind and outcome."""
        self._ensure()
        by_kind: dict[str, int] = {}
        by_outcome: dict[str, int] = {}
        by_kind_outcome: dict[str, dict[str, int]] = {}
        with self._reading():
            total = self._count(None)
            for hit in self.client.facet(self.collection, "kind", limit=100, exact=True).hits:
                kind = str(hit.value)
                by_kind[kind] = hit.count
                facet = self.client.facet(
                    self.collection,
                    "outcome",
                    facet_filter=models.Filter(must=[_match("kind", kind)]),
                    limit=100,
                    exact=True,
                )
                by_kind_outcome[kind] = {str(h.value): h.count for h in facet.hits}
                for outcome, n in by_kind_outcome[kind].items():
                    by_outcome[outcome] = by_outcome.get(outcome, 0) + n
        return {
            "total": total,
            "by_kind": by_kind,
            "by_outcome": by_outcome,
            "by_kind_outcome": by_kind_outcome,
            "embedder": self.embedder.name,
            "storage": "embedded" if self.local else "server",
        }

    def _query(
        self,
        vector: list[float],
        must: list[models.Condition],
        must_not: list[models.Condition],
        limit: int,
        min_score: float,
    ) -> list[tuple[Experience, float]]:
        if limit <= 0:
            return []
        with self._reading():
            response = self.client.query_points(
                self.collection,
                query=vector,
                # No filter at all rather than an empty one: embedded Qdrant would still
                # evaluate an empty filter point by point in Python.
                query_filter=(
                    models.Filter(must=must or None, must_not=must_not or None)
                    if must or must_not
                    else None
                ),
                limit=limit,
                with_payload=True,
                with_vectors=False,
            )
        return [
            (self._from_payload(p.payload or {}, p.id), float(p.score))
            for p in response.points
            if p.score >= min_score
        ]

    def _scoped(
        self,
        vector: list[float],
        repo: str,
        filters: list[models.Condition],
        limit: int,
        min_score: float,
        scope: str,
        allow_global: bool,
    ) -> list[Hit]:
        """Search one scope, or the tiers of "auto" in order until ``limit`` is reached."""
        org = scopes_for(repo)[1]
        shareable = _match("shareable", True)

        def label(experience: Experience) -> str:
            if experience.repo == repo:
                return "repo"
            return "org" if experience.org == org else "global"

        tiers: list[tuple[list[models.Condition], list[models.Condition]]]
        if scope == "repo":
            tiers = [([_match("repo", repo)], [])]
        elif scope == "org":
            tiers = [([_match("org", org)], [])]
        elif scope == "global":
            # Own org, or another org's experience explicitly marked shareable.
            tiers = [([models.Filter(should=[_match("org", org), shareable])], [])]
        elif scope == "auto":
            tiers = [
                ([_match("repo", repo)], []),
                ([_match("org", org)], [_match("repo", repo)]),
            ]
            if allow_global:
                tiers.append(([shareable], [_match("org", org)]))
        else:
            raise ValueError(f"unknown scope {scope!r}: expected repo, org, global or auto")
        hits: list[Hit] = []
        for must, must_not in tiers:
            found = self._query(vector, [*must, *filters], must_not, limit - len(hits), min_score)
            hits.extend(Hit(e, s, label(e)) for e, s in found)
            if len(hits) >= limit:
                break
        return hits

    def search_similar(
        self,
        text: str,
        *,
        repo: str,
        kind: str | None = None,
        outcome: Sequence[str] | None = None,
        limit: int = 5,
        min_score: float = 0.0,
        scope: str = "auto",
        allow_global: bool = False,
        balanced: bool = False,
        vector: Sequence[float] | None = None,
        since: float | None = None,
    ) -> list[Hit]:
        """Past experiences most similar to ``text``, best first.

        ``scope``: ``repo`` (this repo only), ``org`` (this repo's organisation), ``global``
        (this org plus other orgs' *shareable* experiences), ``auto`` (this repo first, then
        filled from the org, then - only with ``allow_global`` - from other orgs'
        shareable experiences). In ``auto``, hits stay grouped by tier (repo hits first).
        ``balanced``: up to ``limit // 2`` accepted (accepted/addressed/partly) and up to
        ``limit // 2`` rejected (rejected/dismissed) examples, the rest of ``limit`` filled
        from whichever side has more, so a prompt shows both what worked and what did not.
        ``vector``: a precomputed query vector (``text`` is then not embedded).
        ``since``: only experiences first written at or after this unix time.
        """
        self._ensure()
        query = list(vector) if vector is not None else self.embedder.embed([text])[0]
        filters: list[models.Condition] = []
        if kind is not None:
            filters.append(_match("kind", str(kind)))
        if since is not None:
            filters.append(models.FieldCondition(key="created_at", range=models.Range(gte=since)))
        if not balanced:
            if outcome is not None:
                filters.append(_match_any("outcome", [str(o) for o in outcome]))
            return self._scoped(query, repo, filters, limit, min_score, scope, allow_global)
        wanted = None if outcome is None else {str(o) for o in outcome}
        sides: list[list[Hit]] = []
        for side in (ACCEPTED_OUTCOMES, REJECTED_OUTCOMES):
            outcomes = [o for o in side if wanted is None or o in wanted]
            if not outcomes:
                sides.append([])
                continue
            side_filters = [*filters, _match_any("outcome", outcomes)]
            sides.append(
                self._scoped(query, repo, side_filters, limit, min_score, scope, allow_global)
            )
        good, bad = sides
        half = limit // 2
        chosen = good[:half] + bad[:half]
        rest = sorted(good[half:] + bad[half:], key=lambda h: h.score, reverse=True)
        chosen += rest[: limit - len(chosen)]
        return sorted(chosen, key=lambda h: h.score, reverse=True)

    def neighbour_vote(
        self,
        text: str,
        *,
        repo: str,
        kind: str = Kind.COMMENT,
        threshold: float = 0.85,
        limit: int = 10,
        now: float | None = None,
        half_life_days: float | None = None,
    ) -> Vote:
        """How this repo's developers reacted to past experiences nearly identical to ``text``.

        Among experiences of this repo and kind with a final outcome and similarity of at
        least ``threshold``: accepted/addressed count 1 accept (partly 0.5), rejected and
        dismissed 1 reject, ignored 0.3 reject; pending ones are not evidence yet.

        With ``half_life_days`` (the pattern scores' half-life; ``now`` defaults to the
        clock) each neighbour fades with the time since it was judged (:func:`tally_vote`),
        and only experiences from the last ``VOTE_HORIZON_HALF_LIVES`` half-lives are
        looked at, so the ``limit`` places go to evidence that still counts.
        """
        since = None
        if half_life_days is not None:
            now = time.time() if now is None else now
            since = vote_horizon(now, half_life_days)
        hits = self.search_similar(
            text,
            repo=repo,
            kind=kind,
            outcome=FINAL_OUTCOMES,
            limit=limit,
            min_score=threshold,
            scope="repo",
            since=since,
        )
        accepts, rejects = tally_vote(
            ((hit.experience.outcome, decided_at(hit.experience)) for hit in hits),
            now=now,
            half_life_days=half_life_days,
        )
        return Vote(accepts=accepts, rejects=rejects, neighbours=len(hits), examples=hits)


def open_store(
    *,
    url: str | None,
    api_key: str | None,
    path: Path,
    embedder: Embedder,
    collection: str = DEFAULT_COLLECTION,
    retention_per_repo: int = 20000,
    timeout: int = 30,
) -> ExperienceStore:
    """A store on a Qdrant server when ``url`` is set, else embedded at ``path``.

    Embedded storage is a folder one process may open at a time; a second opener gets
    ``StoreLocked`` explaining the two ways out.
    """
    if url:
        client = QdrantClient(url=url, api_key=api_key, timeout=timeout)
    else:
        path.mkdir(parents=True, exist_ok=True)
        try:
            client = QdrantClient(path=str(path))
        except RuntimeError as exc:
            if "already accessed by another instance" not in str(exc):
                raise
            raise StoreLocked(
                f"the embedded experience store at {path} is already open in another process "
                "(or by another client in this one). "
                "Embedded Qdrant allows one process at a time: stop the other Kaizen process "
                "(or run web and worker together with `kaizen up`), or set KAIZEN_QDRANT_URL "
                "to use a Qdrant server that every process can share."
            ) from exc
    return ExperienceStore(
        client, embedder, collection=collection, retention_per_repo=retention_per_repo
    )
