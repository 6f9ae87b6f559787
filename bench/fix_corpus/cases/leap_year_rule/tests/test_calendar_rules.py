import pytest
from calendar_rules import add_months, day_of_year, days_in_month, is_leap, validate


def test_ordinary_leap_year():
    assert is_leap(2024)
    assert not is_leap(2023)


def test_century_is_not_leap():
    assert not is_leap(1900)


def test_year_2000_is_leap():
    assert is_leap(2000)


def test_february_2000_has_29_days():
    assert days_in_month(2000, 2) == 29


def test_validate_rejects_bad_day():
    with pytest.raises(ValueError, match="out of range"):
        validate(2023, 2, 29)


def test_day_of_year():
    assert day_of_year(2024, 3, 1) == 61
    assert day_of_year(2023, 12, 31) == 365


def test_add_months_clamps():
    assert add_months(2023, 1, 31, 1) == (2023, 2, 28)
    assert add_months(2023, 11, 15, 3) == (2024, 2, 15)
