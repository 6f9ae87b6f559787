from orders.shipping import Address, Order, format_address, packing_slip, shipping_cost

HOME = Address("Ann Smit", "Kade 1", "Utrecht", "3511 AA")


def test_format_domestic_address():
    assert format_address(HOME) == "Ann Smit\nKade 1\n3511 AA UTRECHT"


def test_format_foreign_address_with_line2():
    address = Address("Bo", "Rue 2", "Lyon", "69001", country="FR", line2="Apt 4")
    assert format_address(address).splitlines() == ["Bo", "Rue 2", "Apt 4", "69001 LYON", "FR"]


def test_digital_order_has_no_address_block():
    assert format_address(None) == ""


def test_packing_slip_for_digital_order():
    order = Order("1001", [("ebook-7", 1, 0)])
    assert packing_slip(order) == "Order 1001\n\n1 x ebook-7"


def test_shipping_cost_bands():
    assert shipping_cost(Order("1", [("mug", 2, 400)], HOME)) == 695
    assert shipping_cost(Order("2", [("book", 5, 500)], HOME)) == 695 + 250
    assert shipping_cost(Order("3", [("ebook", 1, 0)])) == 0
