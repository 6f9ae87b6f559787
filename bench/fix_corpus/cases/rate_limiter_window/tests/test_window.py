import pytest
from throttle import SlidingWindowLimiter


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(limit: int = 3, window: float = 10.0) -> tuple[SlidingWindowLimiter, FakeClock]:
    clock = FakeClock()
    return SlidingWindowLimiter(limit, window, clock=clock), clock


def test_allows_up_to_limit():
    limiter, _ = make(limit=3)
    assert [limiter.allow("a") for _ in range(3)] == [True, True, True]


def test_blocks_after_limit():
    limiter, _ = make(limit=3)
    for _ in range(3):
        limiter.allow("a")
    assert limiter.allow("a") is False


def test_burst_allows_exactly_limit():
    limiter, _ = make(limit=5)
    assert sum(limiter.allow("a") for _ in range(10)) == 5


def test_window_expiry_allows_again():
    limiter, clock = make(limit=2, window=10.0)
    limiter.allow("a")
    limiter.allow("a")
    clock.now = 10.0
    assert limiter.allow("a") is True


def test_keys_are_independent():
    limiter, _ = make(limit=1)
    assert limiter.allow("a") is True
    assert limiter.allow("b") is True


def test_remaining_counts_down():
    limiter, _ = make(limit=3)
    limiter.allow("a")
    limiter.allow("a")
    assert limiter.remaining("a") == 1


def test_retry_after():
    limiter, clock = make(limit=2, window=10.0)
    limiter.allow("a")
    clock.now = 1.0
    limiter.allow("a")
    assert limiter.retry_after("a") == pytest.approx(9.0)


def test_rejects_bad_limit():
    with pytest.raises(ValueError):
        SlidingWindowLimiter(0, 1.0)
