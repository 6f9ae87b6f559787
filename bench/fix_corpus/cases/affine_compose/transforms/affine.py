"""2-D affine transforms as 3x3 matrices (row-major, column vectors)."""

from __future__ import annotations

import math

Matrix = tuple[tuple[float, float, float], ...]

IDENTITY: Matrix = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def matmul(a: Matrix, b: Matrix) -> Matrix:
    """The product a @ b."""
    return tuple(
        tuple(sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)) for i in range(3)
    )  # type: ignore[return-value]


def translation(dx: float, dy: float) -> Matrix:
    return ((1.0, 0.0, dx), (0.0, 1.0, dy), (0.0, 0.0, 1.0))


def scaling(sx: float, sy: float) -> Matrix:
    return ((sx, 0.0, 0.0), (0.0, sy, 0.0), (0.0, 0.0, 1.0))


def rotation(degrees: float) -> Matrix:
    rad = math.radians(degrees)
    c, s = math.cos(rad), math.sin(rad)
    return ((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0))


def apply(m: Matrix, point: tuple[float, float]) -> tuple[float, float]:
    x, y = point
    return (m[0][0] * x + m[0][1] * y + m[0][2], m[1][0] * x + m[1][1] * y + m[1][2])


class Transform:
    def __init__(self, matrix: Matrix = IDENTITY) -> None:
        self.matrix = matrix

    def then(self, other: Transform) -> Transform:
        """This transform followed by ``other``."""
        return Transform(matmul(self.matrix, other.matrix))

    def translate(self, dx: float, dy: float) -> Transform:
        return self.then(Transform(translation(dx, dy)))

    def scale(self, sx: float, sy: float | None = None) -> Transform:
        return self.then(Transform(scaling(sx, sx if sy is None else sy)))

    def rotate(self, degrees: float) -> Transform:
        return self.then(Transform(rotation(degrees)))

    def __call__(self, point: tuple[float, float]) -> tuple[float, float]:
        return apply(self.matrix, point)
