"""What the Qdrant engine itself gives, embedded: the answer to memory_scale's 100k figure.

``bench/memory_scale.py`` measures Kaizen's embedded default, qdrant-client's local mode,
which is brute force in Python: 689-944 ms p50 for a repo + kind filtered search at 100k
experiences. No Qdrant server binary can be had on this machine, but Qdrant Edge
(``qdrant-edge-py``, beta) runs the real engine in-process: segments, keyword payload
indexes, HNSW. This bench loads the same shape of data (50 repos in 10 orgs, the same
kinds, outcomes and patterns, precomputed random 384-dim unit vectors) with the payload
indexes Kaizen's store creates and times the same query (nearest 5 for a repo and kind),
before and after the shard builds its index (``optimize``), plus a filtered count.

It measures an engine, not Kaizen: Kaizen has no Qdrant Edge adapter (the package is in
beta and its API still moves). Install it where you run this (it is not a dependency):

    .venv/bin/pip install qdrant-edge-py
    .venv/bin/python bench/qdrant_edge_scale.py [--sizes 1000,10000,100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from memory_scale import (  # noqa: E402 - the same data shape as the embedded-store bench
    KINDS,
    OUTCOMES,
    PATTERNS,
    REPOS,
    percentile,
    unit_vectors,
)

RESULTS = ROOT / "bench" / "results" / "qdrant_edge_scale.json"
INDEXED = ("repo", "org", "kind", "pattern", "outcome")  # as memory.experiences indexes them
VECTOR = "text"


def timings(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 50), 3),
        "p99_ms": round(percentile(values, 99), 3),
        "mean_ms": round(statistics.fmean(values), 3),
    }


def bench(work: Path, n: int, queries: int) -> dict[str, Any]:
    import qdrant_edge as q

    config = q.EdgeConfig(
        vectors={VECTOR: q.EdgeVectorParams(size=384, distance=q.Distance.Cosine)}
    )
    shard = q.EdgeShard.create(str(work / f"edge-{n}"), config)
    for name in INDEXED:
        shard.update(q.UpdateOperation.create_field_index(name, q.PayloadSchemaType.Keyword))
    rng = random.Random(n)
    vectors = unit_vectors(n, seed=n)
    started = time.perf_counter()
    batch = 1000
    for start in range(0, n, batch):
        points = []
        for i in range(start, min(n, start + batch)):
            repo = rng.choice(REPOS)
            payload = {
                "repo": repo,
                "org": repo.split("/")[0],
                "kind": rng.choice(KINDS).value,
                "pattern": rng.choice(PATTERNS),
                "outcome": rng.choice(OUTCOMES),
                "created_at": time.time() - n + i,
            }
            points.append(q.Point(id=i, vector={VECTOR: vectors[i].tolist()}, payload=payload))
        shard.update(q.UpdateOperation.upsert_points(points))
    upsert_s = time.perf_counter() - started
    query_vectors = unit_vectors(queries, seed=7)

    def search_all() -> tuple[dict[str, float], int]:
        pick = random.Random(3)
        times, hits = [], 0
        for vector in query_vectors:
            flt = q.Filter(
                must=[
                    q.FieldCondition(key="repo", match=q.MatchValue(value=pick.choice(REPOS))),
                    q.FieldCondition(key="kind", match=q.MatchValue(value=KINDS[0].value)),
                ]
            )
            request = q.QueryRequest(
                query=q.Query.Nearest(vector.tolist(), using=VECTOR),
                filter=flt,
                limit=5,
                with_payload=True,
            )
            t0 = time.perf_counter()
            found = shard.query(request)
            times.append((time.perf_counter() - t0) * 1000)
            hits += bool(found)
        return timings(times), hits

    before, hits_before = search_all()
    t0 = time.perf_counter()
    shard.optimize()
    optimize_s = time.perf_counter() - t0
    after, hits_after = search_all()
    count_times = []
    for repo in REPOS[:20]:
        flt = q.Filter(must=[q.FieldCondition(key="repo", match=q.MatchValue(value=repo))])
        t0 = time.perf_counter()
        shard.count(q.CountRequest(filter=flt, exact=True))
        count_times.append((time.perf_counter() - t0) * 1000)
    shard.close()
    return {
        "experiences": n,
        "upsert_per_s": round(n / upsert_s, 1),
        "queries": queries,
        "search_repo_kind_before_optimize": before,
        "optimize_s": round(optimize_s, 2),
        "search_repo_kind_after_optimize": after,
        "queries_with_hits": min(hits_before, hits_after),
        "count_repo": timings(count_times),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    try:
        import qdrant_edge  # noqa: F401 - only to tell the user what is missing
    except ImportError:
        print("qdrant-edge-py is not installed: .venv/bin/pip install qdrant-edge-py")
        return 2
    load_before = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="kaizen-edge-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            print(f"Qdrant Edge, {n} points...")
            runs.append(bench(Path(tmp), n, args.queries))
            print(json.dumps(runs[-1], indent=2))
    report = {
        "bench": "qdrant_edge_scale",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "engine": f"qdrant-edge-py {importlib.metadata.version('qdrant-edge-py')}",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        },
        "runs": runs,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
