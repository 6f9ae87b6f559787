"""How long a candidate's runs may take (``workers.fix.loop.candidate_runs``)."""

from __future__ import annotations

import pytest

from workers.fix.loop import (
    QUICK_TIMEOUT_FLOOR_S,
    SUITE_TIMEOUT_FLOOR_S,
    candidate_runs,
)


def test_a_run_may_take_a_few_times_what_the_unpatched_tests_took() -> None:
    """idna: the failing tests alone took 15 s and the suite with coverage 115 s; a
    candidate that spins is cut off at 60 s and 345 s (the runner's 300 s caps that)."""
    runs = candidate_runs(["tests/test_idna.py::test_encode"], 15.3, 115.0)
    assert runs.quick == ["tests/test_idna.py::test_encode"]
    assert runs.quick_timeout_s == pytest.approx(61.2)
    assert runs.suite_timeout_s == pytest.approx(345.0)


def test_a_fast_suite_still_leaves_room_for_tests_that_failed_early() -> None:
    """A right patch lets a target that failed at once run its whole course."""
    runs = candidate_runs([], 0.0, 2.0)
    assert runs.quick_timeout_s == QUICK_TIMEOUT_FLOOR_S
    assert runs.suite_timeout_s == SUITE_TIMEOUT_FLOOR_S
