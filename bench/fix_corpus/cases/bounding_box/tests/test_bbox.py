import pytest
from geo.bbox import BBox, bbox_of


def test_bbox_of_wide_route():
    assert bbox_of([(0, 0), (4, 2), (1, 1)]) == BBox(0, 0, 4, 2)


def test_bbox_height():
    assert bbox_of([(-3, 5), (7, 6)]).height == 1


def test_bbox_of_no_points():
    with pytest.raises(ValueError):
        bbox_of([])


def test_contains_and_area():
    box = BBox(0, 0, 2, 3)
    assert box.contains((2, 1))
    assert not box.contains((2.5, 1))
    assert box.area == 6


def test_intersects_and_union():
    a, b = BBox(0, 0, 2, 2), BBox(1, 1, 5, 3)
    assert a.intersects(b)
    assert not a.intersects(BBox(3, 3, 4, 4))
    assert a.union(b) == BBox(0, 0, 5, 3)


def test_expand():
    assert BBox(0, 0, 1, 1).expand(1) == BBox(-1, -1, 2, 2)
