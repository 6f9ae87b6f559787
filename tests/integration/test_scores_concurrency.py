"""Many processes applying signals at once: every sum and counter must come out exact.

Signal times are whole half-lives after the epoch and weights are multiples of 1/4, so
every increment is a small dyadic number and float addition is exact in any order: the
expected sums can be compared with ``==``, and a lost or doubled update cannot hide in a
tolerance.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections import Counter
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest

from memory.scores import (
    DAY,
    EPOCH,
    RedisScoreStore,
    ScoreStore,
    SqliteScoreStore,
    recent_half_life_days,
)
from memory.types import scopes_for
from tests.helpers import assert_same_recent_sums

pytestmark = pytest.mark.slow

PROCS = 8
PER_PROC = 500
SHARED = 50  # ids every process applies (redeliveries): each must count once
HALF_LIFE_DAYS = 30.0
PATTERNS = [f"ruff:P{k}" for k in range(5)]
REPOS = ["acme/api", "acme/web", "globex/app"]

Plan = list[tuple[str, str, str, float, float, float]]


def _signal(sid: str, n: int) -> tuple[str, str, str, float, float, float]:
    at = EPOCH + (n % 4) * HALF_LIFE_DAYS * DAY  # weights 1, 2, 4, 8: exact
    return (sid, REPOS[n % 3], PATTERNS[n % 5], (n % 3) * 0.5, (n % 2) * 0.25, at)


def plan(proc: int) -> Plan:
    """This process's own signals, with the shared ones interleaved."""
    own = [_signal(f"p{proc}-{i}", proc * 7 + i) for i in range(PER_PROC)]
    shared = [_signal(f"shared-{j}", 1000 + j) for j in range(SHARED)]
    out: Plan = []
    step = PER_PROC // SHARED
    for j, sig in enumerate(own):
        out.append(sig)
        if j % step == 0:
            out.append(shared[(j // step + proc) % SHARED])
    return out


def _open(kind: str, where: str) -> ScoreStore:
    if kind == "sqlite":
        return SqliteScoreStore(Path(where), HALF_LIFE_DAYS)
    return RedisScoreStore(where, HALF_LIFE_DAYS, prefix="kaizen-concurrency")


def worker(kind: str, where: str, proc: int, barrier: Barrier, results: Any) -> None:
    store = _open(kind, where)
    try:
        barrier.wait(timeout=60)
        applied = sum(store.apply(*sig) for sig in plan(proc))
        results.put((proc, applied))
    finally:
        store.close()


def retracting_worker(kind: str, where: str, proc: int, barrier: Barrier, results: Any) -> None:
    """Apply this process's plan, then take back every shared signal (as every poller
    that sees a 👍 removed would): each must be subtracted once, whoever wins."""
    store = _open(kind, where)
    try:
        barrier.wait(timeout=60)
        for sig in plan(proc):
            store.apply(*sig)
        shared = [_signal(f"shared-{j}", 1000 + j) for j in range(SHARED)]
        retracted = sum(store.retract(*sig) for sig in shared[proc:] + shared[:proc])
        results.put((proc, retracted))
    finally:
        store.close()


Sums = dict[tuple[str, str], tuple[float, float]]
Recent = dict[tuple[str, str], tuple[float, float, float]]


def run_processes(fn: Any, kind: str, where: str) -> tuple[dict[int, int], float]:
    """Start PROCS processes running ``fn`` at once; what each reported, and the time."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCS)
    results = ctx.Queue()
    procs = [ctx.Process(target=fn, args=(kind, where, p, barrier, results)) for p in range(PROCS)]
    started = time.monotonic()
    for p in procs:
        p.start()
    reported = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    return reported, time.monotonic() - started


def expected(*, shared: bool = True) -> tuple[Sums, Recent, Counter[tuple[str, str]], int]:
    """What the stores must hold: every distinct signal once (``shared`` False: without
    the shared ones, as after they were all taken back)."""
    unique = {
        sig[0]: sig
        for proc in range(PROCS)
        for sig in plan(proc)
        if shared or not sig[0].startswith("shared-")
    }
    sums: Sums = {}
    recent: Recent = {}
    counts: Counter[tuple[str, str]] = Counter()
    recent_days = recent_half_life_days(HALF_LIFE_DAYS)
    for _, repo, pattern, alpha, beta, at in unique.values():
        weight = 2.0 ** ((at - EPOCH) / (HALF_LIFE_DAYS * DAY))
        recent_weight = 2.0 ** ((at - EPOCH) / (recent_days * DAY))
        for scope in scopes_for(repo):
            a, b = sums.get((scope, pattern), (0.0, 0.0))
            sums[(scope, pattern)] = (a + alpha * weight, b + beta * weight)
            ra, rb, last = recent.get((scope, pattern), (0.0, 0.0, -math.inf))
            recent[(scope, pattern)] = (
                ra + alpha * recent_weight,
                rb + beta * recent_weight,
                max(last, at),
            )
            counts[(scope, pattern)] += 1
    return sums, recent, counts, len(unique)


@pytest.fixture(params=["sqlite", "redis"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "sqlite":
        # No schema yet: the processes race to create it, as workers on a fresh machine do.
        return ("sqlite", str(tmp_path / "scores.sqlite3"))
    return ("redis", str(request.getfixturevalue("redis_url")))


def test_concurrent_processes_apply_every_signal_exactly_once(target: tuple[str, str]) -> None:
    kind, where = target
    applied_by, elapsed = run_processes(worker, kind, where)

    sums, recent, counts, distinct = expected()
    assert distinct == PROCS * PER_PROC + SHARED
    assert sum(applied_by.values()) == distinct  # each shared id won by exactly one process

    store = _open(kind, where)
    try:
        assert store.applied_count() == distinct
        assert store.snapshot() == sums  # exact: no lost or doubled increment
        # the recent sums add up in another order; the newest times are exact maxima
        assert_same_recent_sums(store.recent_snapshot(), recent)
        for (scope, pattern), n in counts.items():
            assert store.totals(scope, pattern).n == n
    finally:
        store.close()
    assert elapsed < 60, f"{kind}: {elapsed:.1f}s"


def test_concurrent_retractions_subtract_each_signal_exactly_once(target: tuple[str, str]) -> None:
    kind, where = target
    retracted_by, _ = run_processes(retracting_worker, kind, where)
    assert sum(retracted_by.values()) == SHARED  # each taken back once, whoever won

    sums, _, counts, distinct = expected(shared=False)
    store = _open(kind, where)
    try:
        left = {k: v for k, v in store.snapshot().items() if v != (0.0, 0.0)}
        assert left == {k: v for k, v in sums.items() if v != (0.0, 0.0)}  # exact
        for (scope, pattern), n in counts.items():
            assert store.totals(scope, pattern).n == n
        assert store.applied_count() == distinct + 2 * SHARED  # the ids and the retractions
    finally:
        store.close()
