"""Shared fixtures: a real Redis database per test, settings, and signing helpers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.settings import Settings

REDIS_HOST = os.environ.get("KAIZEN_TEST_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("KAIZEN_TEST_REDIS_PORT", "6379"))
# A database of its own, so tests never touch data of a Kaizen running on the same Redis;
# under pytest-xdist one per worker (gw0 → 11, gw1 → 12, …), since tests flush theirs.
REDIS_DB = int(os.environ.get("KAIZEN_TEST_REDIS_DB", "11")) + int(
    os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0
)
WEBHOOK_SECRET = "test-webhook-secret"


@pytest.fixture(autouse=True)
def _clean_kaizen_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings come only from what each test says, never from the developer's shell."""
    for name in list(os.environ):
        if name.startswith("KAIZEN_") and not name.startswith("KAIZEN_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)


@pytest.fixture
def redis_url() -> Iterator[str]:
    url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.RedisError as exc:  # pragma: no cover - .ci/run starts Redis
        pytest.fail(f"Redis is required at {url}: {exc}")
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def settings(tmp_path: Path, redis_url: str) -> Settings:
    return Settings(
        webhook_secret=WEBHOOK_SECRET,
        redis_url=redis_url,
        data_dir=tmp_path / "data",
        log_json=True,
    )
