import pytest
from batching.chunks import batches_by_weight, chunked, round_robin


def test_chunked_with_remainder():
    assert chunked([1, 2, 3, 4, 5, 6, 7], 3) == [[1, 2, 3], [4, 5, 6], [7]]


def test_chunked_exact_multiple():
    assert chunked("abcdef", 2) == ["ab", "cd", "ef"]


def test_chunked_empty():
    assert chunked([], 4) == []


def test_chunked_bad_size():
    with pytest.raises(ValueError):
        chunked([1], 0)


def test_batches_by_weight():
    assert batches_by_weight(["aa", "bbb", "c", "dddd"], len, 4) == [["aa"], ["bbb", "c"], ["dddd"]]


def test_heavy_item_goes_alone():
    assert batches_by_weight([10, 1], lambda x: x, 5) == [[10], [1]]


def test_round_robin():
    assert round_robin([1, 2, 3], "ab") == [1, "a", 2, "b", 3]
