import pytest
from transforms.affine import IDENTITY, Transform, matmul, scaling


def test_identity_product():
    assert matmul(IDENTITY, scaling(2, 3)) == scaling(2, 3)


def test_translate():
    assert Transform().translate(2, -1)((1, 1)) == (3, 0)


def test_scale():
    assert Transform().scale(3)((1, 2)) == (3, 6)


def test_translations_chain():
    assert Transform().translate(1, 0).translate(0, 5)((0, 0)) == (1, 5)


def test_translate_then_scale():
    assert Transform().translate(2, 0).scale(2)((1, 0)) == pytest.approx((6, 0))


def test_rotate_then_translate():
    point = Transform().rotate(90).translate(10, 0)((1, 0))
    assert point == pytest.approx((10, 1))
