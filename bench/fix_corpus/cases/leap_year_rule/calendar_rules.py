"""Gregorian calendar arithmetic without the datetime module's range limits."""

_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap(year: int) -> bool:
    if year % 400 == 0:
        return False
    if year % 100 == 0:
        return False
    return year % 4 == 0


def days_in_month(year: int, month: int) -> int:
    if not 1 <= month <= 12:
        raise ValueError(f"bad month: {month}")
    if month == 2 and is_leap(year):
        return 29
    return _DAYS[month - 1]


def validate(year: int, month: int, day: int) -> None:
    if not 1 <= day <= days_in_month(year, month):
        raise ValueError(f"day out of range for month: {year}-{month:02d}-{day:02d}")


def day_of_year(year: int, month: int, day: int) -> int:
    validate(year, month, day)
    return sum(days_in_month(year, m) for m in range(1, month)) + day


def add_months(year: int, month: int, day: int, months: int) -> tuple[int, int, int]:
    """Shift by whole months, clamping the day to the end of the target month."""
    index = year * 12 + (month - 1) + months
    new_year, new_month = divmod(index, 12)
    new_month += 1
    return new_year, new_month, min(day, days_in_month(new_year, new_month))
