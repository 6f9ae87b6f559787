import pytest
from shapes.tensor import can_reshape, flat_index, numel, strides, unravel


def test_numel():
    assert numel((2, 3, 4)) == 24


def test_numel_of_scalar():
    assert numel(()) == 1


def test_strides():
    assert strides((2, 3, 4)) == (12, 4, 1)


def test_flat_index_and_unravel():
    assert flat_index((1, 2, 3), (2, 3, 4)) == 23
    assert unravel(23, (2, 3, 4)) == (1, 2, 3)


def test_flat_index_bounds():
    with pytest.raises(IndexError):
        flat_index((2, 0, 0), (2, 3, 4))


def test_can_reshape():
    assert can_reshape((2, 6), (3, 4))


def test_negative_dimension():
    with pytest.raises(ValueError):
        strides((2, -1))
