"""Axis-aligned bounding boxes for map features."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Point = tuple[float, float]


@dataclass(frozen=True)
class BBox:
    min_x: float
    min_y: float
    max_x: float
    max_y: float

    @property
    def width(self) -> float:
        return self.max_x - self.min_x

    @property
    def height(self) -> float:
        return self.max_y - self.min_y

    @property
    def area(self) -> float:
        return self.width * self.height

    def contains(self, point: Point) -> bool:
        x, y = point
        return self.min_x <= x <= self.max_x and self.min_y <= y <= self.max_y

    def intersects(self, other: BBox) -> bool:
        return not (
            other.min_x > self.max_x
            or other.max_x < self.min_x
            or other.min_y > self.max_y
            or other.max_y < self.min_y
        )

    def union(self, other: BBox) -> BBox:
        return BBox(
            min(self.min_x, other.min_x),
            min(self.min_y, other.min_y),
            max(self.max_x, other.max_x),
            max(self.max_y, other.max_y),
        )

    def expand(self, margin: float) -> BBox:
        return BBox(
            self.min_x - margin, self.min_y - margin, self.max_x + margin, self.max_y + margin
        )


def bbox_of(points: Sequence[Point]) -> BBox:
    if not points:
        raise ValueError("no points")
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    return BBox(min(xs), min(ys), max(xs), max(xs))
