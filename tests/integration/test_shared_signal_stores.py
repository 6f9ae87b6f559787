"""Parked and archived signals: the same behaviour in SQLite and in Redis, and with Redis
every machine's sweep and rebuild sees every machine's signals."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memory.activity import RedisActivityLog
from memory.archive import ArchiveStore, RedisSignalArchive, SignalArchive
from memory.embedding import CachedEmbedder, Embedder, LocalEmbedder
from memory.experiences import open_store
from memory.pending import PendingSignals, PendingStore, RedisPendingSignals
from memory.scores import RedisScoreStore
from memory.service import Memory, default_paths
from memory.trajectories import TrajectoryStore
from memory.types import Experience, Kind, Signal
from tests.helpers import free_port, sqlite_or_redis

REPO = "octo-org/app"


def signal(sid: str, at: float = 0.0, exp: str = "e1") -> Signal:
    return Signal(
        id=sid, kind="thumbs_up", experience_id=exp, repo=REPO, pattern="ruff:B006", at=at
    )


def experience(fp: str, *signals: tuple[str, float, float, float]) -> Experience:
    return Experience(
        kind=Kind.COMMENT,
        repo=REPO,
        pattern="ruff:B006",
        fingerprint=fp,
        text=f"finding {fp}",
        extra={"signals": [{"id": s, "alpha": a, "beta": b, "at": t} for s, a, b, t in signals]},
    )


@pytest.fixture(params=["sqlite", "redis"])
def pending(request: pytest.FixtureRequest, tmp_path: Path) -> PendingStore:
    return sqlite_or_redis(
        request.param,
        request,
        lambda: PendingSignals(tmp_path / "pending.sqlite3"),
        RedisPendingSignals,
    )


@pytest.fixture(params=["sqlite", "redis"])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> ArchiveStore:
    return sqlite_or_redis(
        request.param,
        request,
        lambda: SignalArchive(tmp_path / "archive.sqlite3"),
        RedisSignalArchive,
    )


def test_parked_signals_come_back_oldest_first_and_once_each(pending: PendingStore) -> None:
    pending.park(signal("s2", at=2.0), "qdrant down")
    time.sleep(0.01)
    pending.park(signal("s1", at=1.0), "qdrant down")
    pending.park(signal("s2", at=2.0), "still down")  # parked again: one entry
    assert pending.count() == 2
    assert [s.id for s in pending.all()] == ["s2", "s1"]
    assert pending.all()[1] == signal("s1", at=1.0)
    pending.done("s2")
    pending.done("never-parked")
    assert [s.id for s in pending.all()] == ["s1"]


def test_a_huge_error_text_is_cut_not_refused(pending: PendingStore) -> None:
    pending.park(signal("s1"), "x" * 1_000_000)
    assert pending.count() == 1


def test_archived_signals_keep_their_first_copy_and_come_back_by_id(
    archive: ArchiveStore,
) -> None:
    assert archive.archive([experience("a", ("sig:b", 1.0, 0.0, 10.0))]) == 1
    offered = archive.archive(
        [experience("b", ("sig:a", 0.0, 0.6, 20.0), ("sig:b", 0.0, 1.0, 99.0))]
    )
    assert offered == 2
    assert archive.count() == 2
    assert list(archive.iter_signals()) == [
        ("sig:a", REPO, "ruff:B006", 0.0, 0.6, 20.0),
        ("sig:b", REPO, "ruff:B006", 1.0, 0.0, 10.0),  # the first copy
    ]
    assert archive.archive([]) == 0


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return CachedEmbedder(LocalEmbedder(), tmp_path_factory.mktemp("emb") / "cache.sqlite3")


def machine(data: Path, redis_url: str, embedder: Embedder, *, qdrant: str | None) -> Memory:
    """One worker machine of a deployment with Redis: its own data dir, shared Redis."""
    paths = default_paths(data)
    return Memory(
        scores=RedisScoreStore(redis_url, half_life_days=60),
        trajectories=TrajectoryStore(paths["trajectories"]),
        pending=RedisPendingSignals(redis_url),
        archive=RedisSignalArchive(redis_url),
        open_experiences=lambda: open_store(
            url=qdrant,
            api_key=None,
            path=data.parent / "qdrant",  # the shared experience store
            embedder=embedder,
            timeout=2,
            retention_per_repo=2,
        ),
        activity=RedisActivityLog(redis_url),
    )


def test_a_signal_parked_on_one_machine_is_applied_by_another(
    tmp_path: Path, redis_url: str, embedder: Embedder
) -> None:
    root = tmp_path
    b = machine(root / "b", redis_url, embedder, qdrant=None)
    exp_id = b.record_experience(experience("x"))
    # machine A cannot reach the experience store right now
    a = machine(root / "a", redis_url, embedder, qdrant=f"http://127.0.0.1:{free_port()}")
    assert a.apply_signal(signal("reaction:1", at=time.time(), exp=exp_id)).status == "pending"
    a.close()
    assert b.pending.count() == 1  # B sees what A parked
    assert b.retry_pending() == 1
    assert b.pending.count() == 0
    assert b.scores.counts(REPO, "ruff:B006", time.time())[0] == pytest.approx(1.0, abs=1e-6)
    b.close()


def test_every_machines_archived_signals_count_in_a_rebuild(
    tmp_path: Path, redis_url: str, embedder: Embedder
) -> None:
    root = tmp_path
    a = machine(root / "a", redis_url, embedder, qdrant=None)
    for i in range(4):  # retention keeps 2: A archives the signals of the first ones
        exp_id = a.record_experience(experience(f"a{i}"))
        a.apply_signal(signal(f"sig:a{i}", at=time.time(), exp=exp_id))
    a.record_experience(experience("a-last"))
    assert a.archive.count() >= 2
    a.close()
    b = machine(root / "b", redis_url, embedder, qdrant=None)
    report = b.rebuild()
    assert report.signals == 4
    assert report.unchanged, report.differences
    b.close()
