import pytest
from intervals.merge import clip, covered, gaps, merge


def test_disjoint_intervals_are_kept():
    assert merge([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]


def test_overlapping_intervals_merge():
    assert merge([(1, 5), (3, 8)]) == [(1, 8)]


def test_nested_interval():
    assert merge([(1, 10), (2, 3)]) == [(1, 10)]


def test_bad_interval():
    with pytest.raises(ValueError):
        merge([(3, 1)])


def test_gaps():
    assert gaps([(2, 4), (6, 7)], 0, 10) == [(0, 2), (4, 6), (7, 10)]


def test_covered():
    assert covered([(0, 2), (5, 9)]) == 6


def test_clip():
    assert clip([(0, 5), (8, 12), (20, 30)], 2, 10) == [(2, 5), (8, 10)]
