import pytest
from paging.paginator import page_links, paginate

ITEMS = list(range(25))


def test_first_page_items():
    page = paginate(ITEMS, 1)
    assert page.items == list(range(10))
    assert page.has_next
    assert not page.has_previous


def test_last_page_is_partial():
    page = paginate(ITEMS, 3)
    assert page.items == [20, 21, 22, 23, 24]
    assert page.total_pages == 3


def test_last_page_has_no_next():
    assert paginate(ITEMS, 3).has_next is False


def test_links_on_last_page():
    assert page_links(paginate(ITEMS, 3)) == {"first": 1, "prev": 2, "next": None, "last": 3}


def test_links_in_the_middle():
    assert page_links(paginate(ITEMS, 2))["prev"] == 1


def test_out_of_range_page():
    with pytest.raises(ValueError, match="out of range"):
        paginate(ITEMS, 4)


def test_bad_per_page():
    with pytest.raises(ValueError):
        paginate(ITEMS, 1, per_page=0)
