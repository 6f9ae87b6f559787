import pytest
from textkit.shorten import excerpt, initials, truncate, truncate_words


def test_truncate_words():
    assert truncate_words("one two three four", 3) == "one two three ..."


def test_truncate_words_single():
    assert truncate_words("alpha beta", 1) == "alpha ..."


def test_short_text_unchanged():
    assert truncate_words("one two", 2) == "one two"


def test_truncate_at_word_boundary():
    assert truncate("The quick brown fox jumps", 15) == "The quick..."


def test_truncate_limit_too_small():
    with pytest.raises(ValueError):
        truncate("abc", 2)


def test_excerpt():
    text = "Kaizen reviews pull requests and fixes issues automatically."
    assert excerpt(text, "FIXES", radius=5) == "...and fixes issu..."
    assert excerpt(text, "absent") is None


def test_initials():
    assert initials("ada king lovelace") == "AK"
