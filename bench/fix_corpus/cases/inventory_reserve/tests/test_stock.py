import contextlib

import pytest
from inventory.stock import Inventory, OutOfStock


@pytest.fixture
def inv() -> Inventory:
    inv = Inventory()
    inv.receive("SKU-1", 10)
    return inv


def test_reserve_reduces_available(inv):
    inv.reserve("SKU-1", 4)
    assert inv.available("SKU-1") == 6


def test_cannot_reserve_more_than_on_hand(inv):
    with pytest.raises(OutOfStock):
        inv.reserve("SKU-1", 11)


def test_existing_reservations_count(inv):
    inv.reserve("SKU-1", 8)
    with pytest.raises(OutOfStock):
        inv.reserve("SKU-1", 5)


def test_available_never_negative(inv):
    inv.reserve("SKU-1", 7)
    with contextlib.suppress(OutOfStock):
        inv.reserve("SKU-1", 7)
    assert inv.available("SKU-1") == 3


def test_ship_and_release(inv):
    inv.reserve("SKU-1", 5)
    inv.ship("SKU-1", 3)
    inv.release("SKU-1", 2)
    assert inv.available("SKU-1") == 7


def test_low_stock(inv):
    inv.receive("SKU-2", 2)
    assert inv.low_stock(5) == ["SKU-2"]
