"""Removing a run's container never raises out of the run's ``finally``."""

from __future__ import annotations

import docker.errors
import requests

from workers.sandbox.docker import REMOVE_ATTEMPTS, remove_container


def api_error(status: int, explanation: str) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = status
    return docker.errors.APIError("engine said no", response=response, explanation=explanation)


class Engine:
    """Answers ``remove_container`` with the given errors in turn, then succeeds."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def remove_container(self, container_id: str, *, force: bool, v: bool) -> None:
        assert force and v
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)


def test_a_passing_refusal_is_retried() -> None:
    engine = Engine(api_error(500, "device or resource busy"))
    assert remove_container(engine, "c1", wait_s=0.001) is None
    assert engine.calls == 2


def test_a_lasting_refusal_is_reported_not_raised() -> None:
    engine = Engine(*(api_error(500, "driver failed") for _ in range(REMOVE_ATTEMPTS)))
    answer = remove_container(engine, "c1", wait_s=0.001)
    assert answer is not None and "driver failed" in answer
    assert engine.calls == REMOVE_ATTEMPTS


def test_removal_in_progress_and_gone_are_done_at_once() -> None:
    for error in (
        api_error(409, "removal of container c1 is already in progress"),
        docker.errors.NotFound("gone", response=None, explanation="No such container: c1"),
    ):
        engine = Engine(error)
        assert remove_container(engine, "c1", wait_s=0.001) is None
        assert engine.calls == 1


def test_a_lost_engine_is_reported() -> None:
    engine = Engine(*(requests.ConnectionError("refused") for _ in range(REMOVE_ATTEMPTS)))
    assert "ConnectionError" in (remove_container(engine, "c1", wait_s=0.001) or "")
