"""Stock levels per SKU with reservations for unpaid orders."""

from __future__ import annotations


class OutOfStock(Exception):
    pass


class Inventory:
    def __init__(self) -> None:
        self._on_hand: dict[str, int] = {}
        self._reserved: dict[str, int] = {}

    def receive(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError("quantity must be positive")
        self._on_hand[sku] = self._on_hand.get(sku, 0) + qty

    def available(self, sku: str) -> int:
        return self._on_hand.get(sku, 0) - self._reserved.get(sku, 0)

    def reserve(self, sku: str, qty: int) -> None:
        on_hand = self._on_hand.get(sku, 0)
        available = on_hand - self._reserved.get(sku, 0)
        if qty > on_hand:
            raise OutOfStock(f"{sku}: requested {qty}, available {available} of {on_hand}")
        self._reserved[sku] = self._reserved.get(sku, 0) + qty

    def release(self, sku: str, qty: int) -> None:
        reserved = self._reserved.get(sku, 0)
        self._reserved[sku] = max(0, reserved - qty)

    def ship(self, sku: str, qty: int) -> None:
        """Ship reserved units: they leave both the reservation and the shelf."""
        if qty > self._reserved.get(sku, 0):
            raise ValueError(f"{sku}: only reserved units can be shipped")
        self._reserved[sku] -= qty
        self._on_hand[sku] -= qty

    def low_stock(self, threshold: int) -> list[str]:
        return sorted(sku for sku in self._on_hand if self.available(sku) < threshold)
