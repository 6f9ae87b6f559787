from textkit.slug import slugify, title_from_slug, unique_slug


def test_basic():
    assert slugify("Hello, World!") == "hello-world"


def test_collapses_punctuation_and_underscores():
    assert slugify("  a -- b__c  ") == "a-b-c"


def test_accents_are_folded_by_default():
    assert slugify("Caf\u00e9 au lait") == "cafe-au-lait"


def test_unicode_kept_when_allowed():
    assert (
        slugify("Cr\u00e8me br\u00fbl\u00e9e", allow_unicode=True) == "cr\u00e8me-br\u00fbl\u00e9e"
    )


def test_max_length_cuts_at_word():
    assert slugify("one two three four", max_length=12) == "one-two"


def test_unique_slug():
    assert unique_slug("Release notes", {"release-notes", "release-notes-2"}) == "release-notes-3"


def test_title_from_slug():
    assert title_from_slug("release-notes") == "Release Notes"
