"""Shipping labels, costs and packing slips."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Address:
    name: str
    street: str
    city: str
    postcode: str
    country: str = "NL"
    line2: str = ""


@dataclass
class Order:
    number: str
    items: list[tuple[str, int, int]] = field(default_factory=list)  # (sku, qty, grams)
    address: Address | None = None

    @property
    def weight(self) -> int:
        return sum(qty * grams for _, qty, grams in self.items)


def format_address(address: Address | None) -> str:
    """Multi-line postal address; digital orders have none and get an empty string."""
    lines = [address.name, address.street]
    if address.line2:
        lines.append(address.line2)
    lines.append(f"{address.postcode} {address.city.upper()}")
    if address.country != "NL":
        lines.append(address.country)
    return "\n".join(lines)


def shipping_cost(order: Order) -> int:
    """Cost in cents: free for digital orders, otherwise by weight band."""
    if order.address is None:
        return 0
    if order.weight <= 2000:
        return 695
    return 695 + 250 * ((order.weight - 2000 + 999) // 1000)


def packing_slip(order: Order) -> str:
    header = f"Order {order.number}"
    body = "\n".join(f"{qty} x {sku}" for sku, qty, _ in order.items)
    return "\n\n".join(part for part in (header, format_address(order.address), body) if part)
