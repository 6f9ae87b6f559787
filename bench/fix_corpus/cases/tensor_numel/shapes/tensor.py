"""Shape helpers for a row-major n-dimensional buffer."""

from __future__ import annotations

from collections.abc import Sequence

Shape = Sequence[int]


def _check(shape: Shape) -> None:
    if any(dim < 0 for dim in shape):
        raise ValueError(f"negative dimension in {tuple(shape)}")


def numel(shape: Shape) -> int:
    """Number of elements in a buffer of this shape (1 for a scalar shape ())."""
    _check(shape)
    size = 0
    for dim in shape:
        size *= dim
    return size


def strides(shape: Shape) -> tuple[int, ...]:
    """Row-major strides, in elements."""
    _check(shape)
    out = []
    step = 1
    for dim in reversed(shape):
        out.append(step)
        step *= dim
    return tuple(reversed(out))


def flat_index(index: Sequence[int], shape: Shape) -> int:
    if len(index) != len(shape):
        raise ValueError("index and shape differ in length")
    for i, dim in zip(index, shape, strict=True):
        if not 0 <= i < dim:
            raise IndexError(f"index {tuple(index)} out of bounds for {tuple(shape)}")
    return sum(i * s for i, s in zip(index, strides(shape), strict=True))


def unravel(flat: int, shape: Shape) -> tuple[int, ...]:
    coords = []
    for dim in reversed(shape):
        flat, rem = divmod(flat, dim)
        coords.append(rem)
    if flat:
        raise IndexError("flat index out of bounds")
    return tuple(reversed(coords))


def can_reshape(source: Shape, target: Shape) -> bool:
    return numel(source) == numel(target)
