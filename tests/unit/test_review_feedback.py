"""Reading developers' replies and pushes as feedback, without I/O."""

from __future__ import annotations

import time

import pytest

from workers.review.feedback import _contains_lines, classify_reply, suggestion_of
from workers.review.findings import Finding
from workers.review.render import comment_body, parse_finding_marker, suggestion_block


@pytest.mark.parametrize(
    ("body", "kind", "reason"),
    [
        ("/kaizen good", "good", None),
        ("/kaizen bad too noisy for tests", "bad", "too noisy for tests"),
        ("/KAIZEN Bad\nwe allow this", "bad", "we allow this"),
        ("Good catch, fixed!", "good", "Good catch, fixed!"),
        ("This is a false positive", "bad", "This is a false positive"),
        ("Which version of Python is this?", None, None),
    ],
)
def test_replies(body: str, kind: str | None, reason: str | None) -> None:
    assert classify_reply(body, "kaizen") == (kind, reason)


def test_negative_words_win_over_polite_ones() -> None:
    assert classify_reply("Thanks, but this is wrong here", "kaizen")[0] == "bad"


def test_a_committed_suggestion_is_recognised_anywhere_in_the_file() -> None:
    text = "a = 1\nGREETING = 'hi'\nb = 2\n"
    assert _contains_lines(text, "GREETING = 'hi'\n")
    assert not _contains_lines(text, "GREETING = 'hello'\n")
    assert not _contains_lines(text, "")  # a deletion proves nothing


def test_suggestion_round_trips_through_the_comment_body() -> None:
    finding = Finding(
        "a.py", 3, "RIGHT", "ruff:F541", "low", "No placeholders.", "ruff", "x = f'a'", "x = 'a'"
    )
    body = comment_body(finding, "6f1d3c52-52a4-4f38-9a0c-6b1f3f0a7e11", app_slug="kaizen")
    assert suggestion_of(body) == "x = 'a'\n"
    marker = parse_finding_marker(body)
    assert marker is not None and marker.fingerprint == finding.fingerprint


def test_suggestion_fence_outgrows_backticks_in_the_code() -> None:
    block = suggestion_block("s = '```'")
    assert block.startswith("````suggestion\n") and block.endswith("````")
    assert suggestion_of(block) == "s = '```'\n"


def test_a_comment_of_backticks_is_read_in_linear_time() -> None:
    started = time.monotonic()
    assert suggestion_of("`" * 300_000) is None
    assert time.monotonic() - started < 2.0
