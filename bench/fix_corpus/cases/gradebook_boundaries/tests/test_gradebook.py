import pytest
from gradebook import distribution, honor_roll, letter, percentage, report


def test_clear_a():
    assert letter(95) == "A"


def test_exactly_ninety_is_an_a():
    assert letter(90) == "A"


def test_exactly_eighty_is_a_b():
    assert letter(80.0) == "B"


def test_failing_grade():
    assert letter(59.9) == "F"


def test_out_of_range():
    with pytest.raises(ValueError):
        letter(101)


def test_percentage():
    assert percentage(45, 60) == 75.0


def test_report_and_distribution():
    scores = {"bo": 72.5, "al": 88, "cy": 41}
    assert report(scores) == {"al": "B", "bo": "C", "cy": "F"}
    assert distribution(scores) == {"A": 0, "B": 1, "C": 1, "D": 0, "F": 1}


def test_honor_roll():
    assert honor_roll({"al": 97, "bo": 85.5, "cy": 64}) == ["al", "bo"]
