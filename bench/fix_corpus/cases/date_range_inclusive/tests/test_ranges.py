from datetime import date

import pytest
from calendar_tools.ranges import business_days, days_in_range, month_bounds, overlap_days


def test_days_in_range_is_inclusive():
    days = days_in_range(date(2024, 3, 4), date(2024, 3, 10))
    assert len(days) == 7
    assert days[-1] == date(2024, 3, 10)


def test_single_day_range():
    assert days_in_range(date(2024, 1, 1), date(2024, 1, 1)) == [date(2024, 1, 1)]


def test_reversed_range():
    with pytest.raises(ValueError):
        days_in_range(date(2024, 1, 2), date(2024, 1, 1))


def test_business_days_skip_weekend_and_holidays():
    # Monday 4 March to Sunday 10 March 2024, Wednesday is a holiday.
    days = business_days(date(2024, 3, 4), date(2024, 3, 10), {date(2024, 3, 6)})
    assert [d.day for d in days] == [4, 5, 7, 8]


def test_overlap():
    assert (
        overlap_days(date(2024, 1, 1), date(2024, 1, 10), date(2024, 1, 8), date(2024, 2, 1)) == 3
    )
    assert overlap_days(date(2024, 1, 1), date(2024, 1, 2), date(2024, 1, 5), date(2024, 1, 6)) == 0


def test_month_bounds_leap_february():
    assert month_bounds(2024, 2) == (date(2024, 2, 1), date(2024, 2, 29))
