import pytest
from templating.render import MissingValue, escape_html, render, unescape_html


def test_plain_substitution():
    assert render("Hi {{ name }}!", {"name": "Ann"}) == "Hi Ann!"


def test_nested_lookup():
    assert render("{{user.email}}", {"user": {"email": "a@example.com"}}) == "a@example.com"


def test_missing_value_lenient_and_strict():
    assert render("[{{ x }}]", {}) == "[]"
    with pytest.raises(MissingValue):
        render("{{ x }}", {}, strict=True)


def test_escape_html():
    assert escape_html('<a href="x">&</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"


def test_render_escapes_values():
    assert render("<p>{{ name }}</p>", {"name": "<script>"}) == "<p>&lt;script&gt;</p>"


def test_autoescape_off():
    assert render("{{ html }}", {"html": "<br>"}, autoescape=False) == "<br>"


def test_unescape():
    assert unescape_html("&lt;b&gt; &amp;amp;") == "<b> &amp;"
