import pytest
from ttlcache import TTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_get_fresh_value(clock):
    cache = TTLCache(ttl=5, clock=clock)
    cache.set("k", 42)
    assert cache.get("k") == 42


def test_get_expired_value_returns_default(clock):
    cache = TTLCache(ttl=5, clock=clock)
    cache.set("k", 42)
    clock.now += 5
    assert cache.get("k", "gone") == "gone"


def test_missing_key(clock):
    assert TTLCache(ttl=5, clock=clock).get("nope", 0) == 0


def test_contains_respects_ttl(clock):
    cache = TTLCache(ttl=5, clock=clock)
    cache.set("k", 1)
    assert "k" in cache
    clock.now += 6
    assert "k" not in cache


def test_maxsize_evicts_oldest(clock):
    cache = TTLCache(ttl=5, maxsize=2, clock=clock)
    for key in "abc":
        cache.set(key, key)
    assert "a" not in cache
    assert "c" in cache


def test_purge_and_len(clock):
    cache = TTLCache(ttl=5, clock=clock)
    cache.set("old", 1)
    clock.now += 3
    cache.set("new", 2)
    clock.now += 3
    assert len(cache) == 1
    assert cache.purge() == 0
