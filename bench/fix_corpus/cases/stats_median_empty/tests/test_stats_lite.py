import pytest
from stats_lite import mean, median, mode, percentile, summary


def test_median_odd_and_even():
    assert median([3, 1, 2]) == 2.0
    assert median([4, 1, 3, 2]) == 2.5


def test_median_empty():
    assert median([]) is None


def test_mean():
    assert mean([1, 2, 3, 6]) == 3.0
    assert mean([]) is None


def test_mode_ties_take_smallest():
    assert mode([3, 1, 3, 1, 2]) == 1


def test_percentile():
    assert percentile([10, 20, 30, 40, 50], 90) == pytest.approx(46.0)


def test_summary_of_no_data():
    assert summary([]) == {"count": 0, "mean": None, "median": None, "p90": None}
