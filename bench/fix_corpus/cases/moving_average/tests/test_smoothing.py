import pytest
from signals.smoothing import exponential_smoothing, moving_average, normalize, rolling_max


def test_moving_average_all_windows():
    assert moving_average([1, 2, 3, 4, 5], 2) == [1.5, 2.5, 3.5, 4.5]


def test_window_equal_to_length():
    assert moving_average([2, 4, 6], 3) == [4.0]


def test_window_longer_than_series():
    assert moving_average([1, 2], 5) == []


def test_bad_window():
    with pytest.raises(ValueError):
        moving_average([1], 0)


def test_exponential_smoothing():
    assert exponential_smoothing([10, 20, 20], 0.5) == [10, 15.0, 17.5]


def test_rolling_max():
    assert rolling_max([1, 3, 2, 5, 4, 1], 3) == [3, 5, 5, 5]


def test_normalize():
    assert normalize([2, 4, 6]) == [0.0, 0.5, 1.0]
    assert normalize([3, 3]) == [0.0, 0.0]
