import pytest
from jobs.retry import Backoff, retry


def flaky(failures: int):
    state = {"calls": 0}

    def func() -> str:
        state["calls"] += 1
        if state["calls"] <= failures:
            raise ConnectionError("boom")
        return "ok"

    return func, state


def test_delays_grow():
    assert Backoff().schedule() == [0.5, 1.0, 2.0, 4.0]


def test_delay_is_capped():
    assert Backoff(max_delay=30.0).delay(10) == 30.0


def test_negative_attempt():
    with pytest.raises(ValueError):
        Backoff().delay(-1)


def test_retry_until_success():
    func, state = flaky(2)
    assert retry(func, Backoff(), sleep=lambda _: None) == "ok"
    assert state["calls"] == 3


def test_retry_gives_up():
    func, state = flaky(10)
    with pytest.raises(ConnectionError):
        retry(func, Backoff(max_attempts=3), sleep=lambda _: None)
    assert state["calls"] == 3


def test_other_errors_not_retried():
    def func() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        retry(func, Backoff(), retry_on=(ConnectionError,), sleep=lambda _: None)
