import pytest
from latency.report import apdex, error_rate, histogram, nearest_rank

LATENCIES = [7, 1, 10, 3, 5, 2, 9, 4, 8, 6]


def test_median():
    assert nearest_rank(LATENCIES, 50) == 5


def test_max_percentile():
    assert nearest_rank(LATENCIES, 100) == 10


def test_empty_input():
    with pytest.raises(ValueError):
        nearest_rank([], 50)


def test_histogram():
    assert histogram([1, 5, 5.5, 100], [5, 10]) == [2, 1, 1]


def test_apdex():
    assert apdex([1, 2, 6, 30], target=2) == 0.625


def test_error_rate():
    assert error_rate([200, 503, 404, 500]) == 0.5
