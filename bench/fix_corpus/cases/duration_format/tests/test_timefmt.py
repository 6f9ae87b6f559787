import pytest
from timefmt import clock, format_duration, parse_duration, split_duration


def test_split_mixed():
    assert split_duration(3725) == (1, 2, 5)


def test_whole_hours():
    assert split_duration(3600) == (1, 0, 0)
    assert format_duration(7200) == "2h"


def test_zero():
    assert format_duration(0) == "0s"


def test_clock():
    assert clock(3725) == "01:02:05"


def test_parse():
    assert parse_duration("1h 2m 5s") == 3725
    assert parse_duration("90s") == 90


def test_parse_rejects_garbage():
    with pytest.raises(ValueError):
        parse_duration("ten minutes")


def test_negative():
    with pytest.raises(ValueError):
        split_duration(-1)
