"""Tests of the embedders and the persistent embedding cache.

Why a real model rather than fake vectors: the cache must return exactly what the model
gives, and retrieval quality depends on real similarities. The counting wrapper only
observes which texts reach the model; the vectors are always the real ones. One loaded
model is shared by the whole session (loading takes seconds).
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memory import embedding
from memory.embedding import (
    EMPTY_TEXT,
    CachedEmbedder,
    Embedder,
    LocalEmbedder,
    OpenAIEmbedder,
    make_embedder,
)
from tests.fakes.openai_api import FakeOpenAI, fake_embedding

ROOT = Path(__file__).resolve().parents[2]


class Counting:
    """A real embedder that records which texts it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []
        self.dim_reads = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        self.dim_reads += 1
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def norm(a: Sequence[float]) -> float:
    return math.sqrt(dot(a, a))


@pytest.fixture(scope="session")
def local() -> LocalEmbedder:
    model = LocalEmbedder()
    model.embed(["warm up"])  # load once for the session
    return model


@pytest.fixture
def counting(local: LocalEmbedder) -> Counting:
    return Counting(local)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(embedding_models=("fake-embedding",), embedding_dim=384) as server:
        yield server


# ---- LocalEmbedder ---------------------------------------------------------------------------


def test_local_embedder_gives_384_dim_unit_vectors(local: LocalEmbedder) -> None:
    vectors = local.embed(["def add(items=[]): ...", "Bonjour tout le monde"])
    assert local.dim == 384
    assert local.name == "all-MiniLM-L6-v2"
    assert [len(v) for v in vectors] == [384, 384]
    assert all(abs(norm(v) - 1.0) < 1e-5 for v in vectors)


def test_local_similar_sentences_are_closer_than_unrelated(local: LocalEmbedder) -> None:
    a, b, c = local.embed(
        [
            "Mutable default argument: the list `items=[]` is shared between calls.",
            "Using a mutable default value like `cache={}` means every call shares one dict.",
            "The deployment pipeline uploads Docker images to the registry every night.",
        ]
    )
    assert dot(a, b) > dot(a, c) + 0.2
    assert dot(a, b) > dot(b, c) + 0.2


def test_local_batching_matches_single_calls(local: LocalEmbedder) -> None:
    texts = [f"function number {i} returns {i * i}" for i in range(7)]
    small = LocalEmbedder(batch_size=3)  # same shared model, several batches
    together = small.embed(texts)
    assert len(together) == 7
    for text, vector in zip(texts, together, strict=True):
        assert dot(vector, local.embed([text])[0]) > 0.9999


def test_local_huge_text_is_truncated(local: LocalEmbedder) -> None:
    huge = "x = compute(value)  # a line of code\n" * 200_000  # ~7 MB
    limited = LocalEmbedder(max_chars=500)
    [vector] = limited.embed([huge])
    assert len(vector) == 384
    assert dot(vector, local.embed([huge[:500]])[0]) > 0.9999
    assert len(local.embed([huge])[0]) == 384  # the default limit too


def test_local_empty_text_is_the_placeholder(local: LocalEmbedder) -> None:
    empty, blank, placeholder = local.embed(["", "  \n\t", EMPTY_TEXT])
    assert abs(norm(empty) - 1.0) < 1e-5
    assert dot(empty, placeholder) > 0.9999
    assert dot(blank, placeholder) > 0.9999
    assert local.embed([]) == []


def test_lone_surrogates_do_not_crash(local: LocalEmbedder) -> None:
    [vector] = local.embed(["broken \ud800 text"])
    assert len(vector) == 384


def test_model_is_loaded_once_per_process(local: LocalEmbedder) -> None:
    assert LocalEmbedder().model is local.model


# ---- CachedEmbedder --------------------------------------------------------------------------


def test_cache_hits_and_misses(tmp_path: Path, counting: Counting, local: LocalEmbedder) -> None:
    cached = CachedEmbedder(counting, tmp_path / "cache.sqlite3")
    first = cached.embed(["alpha", "beta"])
    assert counting.calls == [["alpha", "beta"]]
    second = cached.embed(["beta", "gamma", "alpha"])
    assert counting.calls == [["alpha", "beta"], ["gamma"]]  # only the miss, in one batch
    assert second[0] == first[1] and second[2] == first[0]
    assert dot(second[1], local.embed(["gamma"])[0]) > 0.9999
    cached.embed(["alpha", "beta", "gamma"])
    assert len(counting.calls) == 2  # all hits: the model is not called
    assert cached.stats() == {"all-MiniLM-L6-v2": 3}


def test_cache_preserves_order_and_embeds_duplicates_once(
    tmp_path: Path, counting: Counting, local: LocalEmbedder
) -> None:
    cached = CachedEmbedder(counting, tmp_path / "cache.sqlite3")
    texts = ["one", "two", "one", "three", "two", "one"]
    vectors = cached.embed(texts)
    assert counting.embedded == ["one", "two", "three"]
    for text, vector in zip(texts, vectors, strict=True):
        assert dot(vector, local.embed([text])[0]) > 0.9999
    assert vectors[0] == vectors[2] == vectors[5]
    assert cached.embed([]) == []


def test_cached_and_fresh_vectors_are_identical(tmp_path: Path, counting: Counting) -> None:
    cached = CachedEmbedder(counting, tmp_path / "cache.sqlite3")
    fresh = cached.embed(["identical bits"])
    assert cached.embed(["identical bits"]) == fresh  # float32 round trip either way


def test_same_text_across_instances_embedded_once(tmp_path: Path, local: LocalEmbedder) -> None:
    path = tmp_path / "cache.sqlite3"
    one, two = Counting(local), Counting(local)
    a = CachedEmbedder(one, path).embed(["shared text", "only in one"])
    b = CachedEmbedder(two, path).embed(["shared text"])
    assert one.embedded == ["shared text", "only in one"]
    assert two.calls == []
    assert a[0] == b[0]


def test_cache_key_includes_the_model_name(tmp_path: Path, local: LocalEmbedder) -> None:
    path = tmp_path / "cache.sqlite3"
    CachedEmbedder(local, path).embed(["same text"])
    other = Counting(LocalEmbedder(name="another-model"))
    CachedEmbedder(other, path).embed(["same text"])
    assert other.embedded == ["same text"]


def test_cache_survives_a_restart_in_another_process(tmp_path: Path, local: LocalEmbedder) -> None:
    """A new process reads the vector from disk and never loads the model."""
    path = tmp_path / "cache.sqlite3"
    [vector] = CachedEmbedder(local, path).embed(["persisted across processes"])
    CachedEmbedder(local, path).dim  # noqa: B018 - remembers the dimension
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        from memory import embedding
        cached = embedding.CachedEmbedder(embedding.LocalEmbedder(), Path({str(path)!r}))
        [vector] = cached.embed(["persisted across processes"])
        print(json.dumps({{"dim": cached.dim, "loaded": len(embedding._MODELS),
                          "torch": "torch" in sys.modules, "vector": vector}}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    import json

    result = json.loads(out.stdout)
    assert result["loaded"] == 0 and result["torch"] is False
    assert result["dim"] == 384
    assert result["vector"] == vector


def test_cache_remembers_the_dimension(tmp_path: Path, local: LocalEmbedder) -> None:
    path = tmp_path / "cache.sqlite3"
    first = Counting(local)
    assert CachedEmbedder(first, path).dim == 384
    second = Counting(local)
    assert CachedEmbedder(second, path).dim == 384
    assert (first.dim_reads, second.dim_reads) == (1, 0)


def test_concurrent_threads_embed_a_new_text_once(tmp_path: Path, counting: Counting) -> None:
    cached = CachedEmbedder(counting, tmp_path / "cache.sqlite3")
    results: list[list[list[float]]] = []
    barrier = threading.Barrier(6)

    def work() -> None:
        barrier.wait()
        results.append(cached.embed(["raced text", "another raced text"]))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counting.embedded) == ["another raced text", "raced text"]
    assert len(results) == 6
    assert all(r == results[0] for r in results)


def test_cached_huge_and_empty_texts(tmp_path: Path, counting: Counting) -> None:
    cached = CachedEmbedder(counting, tmp_path / "cache.sqlite3")
    huge = "y" * 3_000_000
    vectors = cached.embed([huge, "", huge])
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert len(counting.calls) == 1 and len(counting.calls[0]) == 2
    assert cached.embed([huge, ""]) == vectors[:2]
    assert len(counting.calls) == 1


# ---- OpenAIEmbedder --------------------------------------------------------------------------


def test_openai_embedder_against_the_fake(fake: FakeOpenAI) -> None:
    model = OpenAIEmbedder(fake.base_url, "test-key", "fake-embedding", dim=384, batch_size=2)
    texts = ["first text", "second text", "third", "fourth", "fifth"]
    vectors = model.embed(texts)
    assert len(vectors) == 5
    for text, vector in zip(texts, vectors, strict=True):
        expected = fake_embedding(text)
        assert len(vector) == 384
        assert abs(norm(vector) - 1.0) < 1e-6
        assert dot(vector, expected) > 0.99999
    bodies = [r["body"] for r in fake.requests if r["path"] == "/v1/embeddings"]
    assert [b["input"] for b in bodies] == [texts[0:2], texts[2:4], texts[4:5]]
    assert all(b["model"] == "fake-embedding" for b in bodies)
    assert all(r["headers"]["authorization"] == "Bearer test-key" for r in fake.requests)


def test_openai_embedder_learns_its_dimension(fake: FakeOpenAI) -> None:
    model = OpenAIEmbedder(fake.base_url, "test-key", "fake-embedding")
    assert model.dim == 384
    assert model.name == "fake-embedding"


def test_openai_embedder_requests_shorter_vectors(fake: FakeOpenAI) -> None:
    model = OpenAIEmbedder(
        fake.base_url, "test-key", "fake-embedding", dim=64, request_dimensions=True
    )
    [vector] = model.embed(["short"])
    assert len(vector) == 64
    assert model.name == "fake-embedding@64"
    assert fake.requests[-1]["body"]["dimensions"] == 64


def test_openai_embedder_empty_and_huge_texts(fake: FakeOpenAI) -> None:
    """The API rejects empty inputs: the placeholder goes instead; huge ones are cut."""
    model = OpenAIEmbedder(fake.base_url, "test-key", "fake-embedding", max_chars=1000)
    vectors = model.embed(["", "z" * 5_000_000])
    assert [len(v) for v in vectors] == [384, 384]
    sent = fake.requests[-1]["body"]["input"]
    assert sent == [EMPTY_TEXT, "z" * 1000]
    assert dot(vectors[0], fake_embedding(EMPTY_TEXT)) > 0.99999


def test_openai_embedder_retries_through_the_sdk(fake: FakeOpenAI) -> None:
    fake.fail_next(503, times=2, retry_after=0.01, path="/v1/embeddings")
    model = OpenAIEmbedder(fake.base_url, "test-key", "fake-embedding", dim=384)
    [vector] = model.embed(["eventually"])
    assert dot(vector, fake_embedding("eventually")) > 0.99999
    assert len([r for r in fake.requests if r["path"] == "/v1/embeddings"]) == 3


def test_openai_embedder_behind_the_cache(tmp_path: Path, fake: FakeOpenAI) -> None:
    cached = make_embedder(
        "openai",
        data_dir=tmp_path,
        base_url=fake.base_url,
        api_key="test-key",
        model="fake-embedding",
    )
    assert isinstance(cached, CachedEmbedder)
    first = cached.embed(["cached remote", "other"])
    again = cached.embed(["other", "cached remote"])
    assert again == [first[1], first[0]]
    assert len([r for r in fake.requests if r["path"] == "/v1/embeddings"]) == 1
    assert (tmp_path / "embeddings.sqlite3").exists()


# ---- make_embedder ---------------------------------------------------------------------------


def test_make_embedder_local_is_cached(tmp_path: Path, local: LocalEmbedder) -> None:
    made = make_embedder("local", data_dir=tmp_path, model="text-embedding-3-small")
    assert isinstance(made, CachedEmbedder)
    assert isinstance(made.inner, LocalEmbedder)
    assert made.name == "all-MiniLM-L6-v2"
    assert (
        made.embed(["x"])[0]
        == CachedEmbedder(local, tmp_path / "embeddings.sqlite3").embed(["x"])[0]
    )


def test_make_embedder_rejects_unknown_kinds(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder("word2vec", data_dir=tmp_path)


def test_importing_does_not_load_torch() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, memory.embedding, memory.experiences; print('torch' in sys.modules)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"
    assert embedding.Embedder is not None
