"""Experience memory at scale: embedding throughput, upsert throughput, filtered search.

1. Embedding: the local all-MiniLM-L6-v2 model on CPU, batch 64, through the on-disk
   cache starting cold (every text a miss), then the same texts again (all hits).
2. Store: embedded Qdrant (the default without KAIZEN_QDRANT_URL) at 1k, 10k and 100k
   experiences spread over 50 repos in 10 orgs. Vectors are precomputed random unit
   vectors passed with ``upsert(vectors=...)``: embedding 100k texts on this CPU would
   take far longer than the store work being measured, and the store does not care where
   vectors come from. Measured: upsert throughput, search p50/p99 through
   ``search_similar`` filtered by repo and kind, reopening the folder, one
   ``enforce_retention`` pass (run after every upsert), ``count``, and re-labelling one
   repo's experiences as after a rename (``move_repo``, the experience-store step of
   ``kaizen memory move``), and deleting another repo's (``forget_repo``, the
   experience-store step of ``kaizen memory forget``).
3. When embedded search at 100k is over 50 ms p50: the same query without the payload
   filter, and on a collection holding a single repo's share of the points (what one
   collection per repo/org would give), to show where the time goes.

    .venv/bin/python bench/memory_scale.py [--sizes 1000,10000,100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.embedding import CachedEmbedder, LocalEmbedder  # noqa: E402
from memory.experiences import ExperienceStore, open_store  # noqa: E402
from memory.types import Experience, Kind, Outcome  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "memory_scale.json"
DIM = 384
REPOS = [f"org{o}/repo{r}" for o in range(10) for r in range(5)]
KINDS = [Kind.COMMENT, Kind.COMMENT, Kind.COMMENT, Kind.FIX, Kind.ISSUE]
OUTCOMES = [o.value for o in Outcome]
PATTERNS = [f"py.pattern-{i}" for i in range(40)]
SLOW_P50_MS = 50.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def review_texts(n: int, rng: random.Random) -> list[str]:
    """Distinct, review-comment-sized texts (~300 characters)."""
    words = (  # noqa: SIM905 - a sentence reads better than a 47-line list
        "mutable default argument list shared between calls handler cache timeout request "
        "retry exception bare except swallow error sql injection query parameter string "
        "format config parse docstring public function missing return type annotation "
        "unused import variable shadowing loop closure late binding lambda resource leak "
        "file handle context manager"
    ).split()
    out = []
    for i in range(n):
        body = " ".join(rng.choice(words) for _ in range(40))
        out.append(f"Finding {i} in module_{i % 97}.py line {i % 400}: {body}.")
    return out


def bench_embedding(work: Path, n: int) -> dict[str, Any]:
    rng = random.Random(1)
    texts = review_texts(n, rng)
    started = time.perf_counter()
    local = LocalEmbedder(batch_size=64)
    local.embed(["load the model"])
    load_s = time.perf_counter() - started
    cached = CachedEmbedder(local, work / "embeddings.sqlite3")
    started = time.perf_counter()
    cached.embed(texts)
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    cached.embed(texts)
    warm_s = time.perf_counter() - started
    single = []
    for text in review_texts(50, random.Random(2)):
        t0 = time.perf_counter()
        cached.embed([text])
        single.append((time.perf_counter() - t0) * 1000)
    return {
        "model": local.name,
        "texts": n,
        "avg_chars": round(sum(map(len, texts)) / n),
        "batch_size": 64,
        "model_load_s": round(load_s, 2),
        "cold_cache_texts_per_s": round(n / cold_s, 1),
        "warm_cache_texts_per_s": round(n / warm_s, 1),
        "single_uncached_text_ms_p50": round(statistics.median(single), 1),
    }


def make_experiences(n: int, rng: random.Random) -> list[Experience]:
    now = time.time()
    return [
        Experience(
            kind=rng.choice(KINDS),
            repo=rng.choice(REPOS),
            pattern=rng.choice(PATTERNS),
            fingerprint=f"fp{i}",
            text=f"synthetic experience {i}",
            installation_id=1,
            outcome=rng.choice(OUTCOMES),
            created_at=now - n + i,
        )
        for i in range(n)
    ]


def unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def time_searches(
    store: ExperienceStore, queries: np.ndarray, *, filtered: bool = True
) -> dict[str, float]:
    rng = random.Random(3)
    times = []
    for vector in queries:
        repo = rng.choice(REPOS)
        t0 = time.perf_counter()
        if filtered:
            store.search_similar(
                "", repo=repo, kind=Kind.COMMENT, scope="repo", limit=5, vector=vector.tolist()
            )
        else:
            store._query(vector.tolist(), [], [], 5, -1.0)
        times.append((time.perf_counter() - t0) * 1000)
    return {
        "p50_ms": round(percentile(times, 50), 2),
        "p99_ms": round(percentile(times, 99), 2),
        "mean_ms": round(statistics.fmean(times), 2),
    }


def bench_store(work: Path, embedder: CachedEmbedder, n: int, queries: int) -> dict[str, Any]:
    rng = random.Random(n)
    experiences = make_experiences(n, rng)
    vectors = unit_vectors(n, seed=n)
    path = work / f"qdrant-{n}"
    store = open_store(
        url=None, api_key=None, path=path, embedder=embedder, retention_per_repo=1_000_000
    )
    batch = 1000
    started = time.perf_counter()
    for start in range(0, n, batch):
        store.upsert(
            experiences[start : start + batch],
            vectors=vectors[start : start + batch].tolist(),
            enforce_retention=False,
        )
    upsert_s = time.perf_counter() - started
    if n >= 100_000:
        queries = min(queries, 100)  # each query scans every payload in Python
    query_vectors = unit_vectors(queries, seed=7)
    result: dict[str, Any] = {
        "experiences": n,
        "upsert_batch": batch,
        "upsert_per_s": round(n / upsert_s, 1),
        "upsert_total_s": round(upsert_s, 2),
        "queries": queries,
        "search_repo_kind": time_searches(store, query_vectors),
    }
    t0 = time.perf_counter()
    store.enforce_retention(REPOS[0])
    result["enforce_retention_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    t0 = time.perf_counter()
    store.count(REPOS[0])
    result["count_repo_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    t0 = time.perf_counter()
    moved = store.move_repo(REPOS[0], f"{REPOS[0]}-renamed")
    result["move_repo"] = {
        "experiences": moved,
        "ms": round((time.perf_counter() - t0) * 1000, 1),
    }
    t0 = time.perf_counter()
    forgotten = store.forget_repo(REPOS[1])
    result["forget_repo"] = {
        "experiences": forgotten,
        "ms": round((time.perf_counter() - t0) * 1000, 1),
    }
    store.close()
    t0 = time.perf_counter()
    store = open_store(url=None, api_key=None, path=path, embedder=embedder)
    store.count()
    result["reopen_s"] = round(time.perf_counter() - t0, 2)
    if result["search_repo_kind"]["p50_ms"] > SLOW_P50_MS:
        result["search_unfiltered"] = time_searches(store, query_vectors, filtered=False)
        per_repo = n // len(REPOS)
        with open_store(
            url=None, api_key=None, path=work / f"qdrant-{n}-one-repo", embedder=embedder
        ) as small:
            small.upsert(
                [e for e in experiences if e.repo == REPOS[0]][:per_repo],
                vectors=[
                    v.tolist()
                    for e, v in zip(experiences, vectors, strict=True)
                    if e.repo == REPOS[0]
                ][:per_repo],
                enforce_retention=False,
            )
            rng_queries = query_vectors
            times = []
            for vector in rng_queries:
                t0 = time.perf_counter()
                small.search_similar(
                    "", repo=REPOS[0], kind=Kind.COMMENT, scope="repo", vector=vector.tolist()
                )
                times.append((time.perf_counter() - t0) * 1000)
            result["search_collection_per_repo"] = {
                "points": small.count(),
                "p50_ms": round(percentile(times, 50), 2),
                "p99_ms": round(percentile(times, 99), 2),
            }
    store.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embed-texts", type=int, default=2000)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    warnings.filterwarnings("ignore", message="Local mode is not recommended")

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="kaizen-bench-") as tmp:
        work = Path(tmp)
        print(f"embedding {args.embed_texts} texts with the local model (cold cache)...")
        embedding = bench_embedding(work, args.embed_texts)
        print(json.dumps(embedding, indent=2))
        embedder = CachedEmbedder(LocalEmbedder(), work / "embeddings.sqlite3")
        stores = []
        for n in sizes:
            print(f"embedded Qdrant, {n} experiences (precomputed random unit vectors)...")
            stores.append(bench_store(work, embedder, n, args.queries))
            print(json.dumps(stores[-1], indent=2))

    notes = [
        "Store runs use precomputed random unit vectors (upsert(vectors=...)): embedding "
        f"{max(sizes)} texts on this CPU at the measured cold-cache rate would take "
        f"~{max(sizes) / embedding['cold_cache_texts_per_s'] / 60:.0f} min, and is measured "
        "separately above.",
        "Embedded upserts: qdrant-client's local mode commits each point separately; the "
        "store switches its SQLite file to WAL + synchronous=NORMAL (without it every commit "
        "waits for fsync: ~60 points/s measured on this disk instead of thousands).",
        "Embedded Qdrant (qdrant-client local mode) is exact brute-force search in Python/"
        "numpy: payload indexes and HNSW settings have no effect there, every filter is "
        "evaluated point by point in Python, so search, count and retention grow linearly "
        "with the collection; it also loads the whole collection into memory on open.",
        "The Qdrant engine embedded (Qdrant Edge, bench/qdrant_edge_scale.py, same data "
        "shape and keyword payload indexes) answers the repo + kind search at 100k points in "
        "under 1.2 ms p99: the time above is the local client's Python filtering, not Qdrant.",
        "No Qdrant server binary is available here, so server numbers are not measured. A "
        "Qdrant server with the keyword payload indexes this store creates (repo, org, kind, "
        "outcome...) plans a filtered search from the index (exact search over the few "
        "thousand matching points, or filterable HNSW), which is typically a few ms at 100k "
        "384-dim points; set KAIZEN_QDRANT_URL for installations beyond ~10-20k experiences.",
    ]
    report = {
        "bench": "memory_scale",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        },
        "embedding": embedding,
        "embedded_qdrant": stores,
        "notes": notes,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print("\n".join(notes))
    print(f"written to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
