"""Comments that share the issue's words point the localiser at their lines."""

from __future__ import annotations

import pytest

from workers.fix.localize import from_issue_comments, rank
from workers.fix.types import Suspect

SHORT_HELP = """\
def short_help(help, max_length=45):
    words = help.split()
    total = 0
    for i, word in enumerate(words):
        total += len(word) + (i > 0)
        if total > max_length:  # too long, truncate
            break
        if word[0] == ".":  # sentence end, truncate without the dots
            return " ".join(words[: i + 1])
    return " ".join(words)  # no truncation needed: the sentence fits
"""
ISSUE = (
    "Short help no longer stops at the end of the first sentence: 'Hello world. More "
    "text.' shows 'Hello world. More text' instead of 'Hello world.'"
)
FILES = {"pkg/text.py": SHORT_HELP}


def test_comments_sharing_the_issues_words_point_at_their_lines() -> None:
    named = [("pkg/text.py", n) for n in range(1, 11)]
    found = from_issue_comments(ISSUE, FILES, named)
    assert {(s.line, s.why) for s in found} == {
        (8, "comment shares words with the issue: end, sentence"),
        (10, "comment shares words with the issue: sentence"),
    }
    scores = {s.line: s.score for s in found}
    assert scores[8] > scores[10]


def test_a_word_in_fewer_comments_tells_more() -> None:
    named = [("pkg/text.py", n) for n in (6, 8, 10)]
    scores = {s.line: s.score for s in from_issue_comments("the end", FILES, named)}
    # "end" is in one comment of three; "sentence" would be in two
    assert set(scores) == {8}
    both = {s.line: s.score for s in from_issue_comments("sentence end", FILES, named)}
    assert both[8] > both[10] and both[10] < scores[8]


def test_only_comments_count_and_only_on_lines_already_named() -> None:
    source = (
        "def first_sentence(text):\n"  # the issue's words as identifiers: not counted
        "    marker = '# the first sentence'\n"  # a string, not a comment
        "    return text  # the first sentence\n"
    )
    files = {"pkg/a.py": source}
    lines = [("pkg/a.py", 1), ("pkg/a.py", 2)]
    assert from_issue_comments(ISSUE, files, lines) == []
    assert [s.line for s in from_issue_comments(ISSUE, files, [("pkg/a.py", 3)])] == [3]
    assert from_issue_comments(ISSUE, files, []) == []


def test_comment_words_break_a_tie_in_the_spectrum() -> None:
    """The condition and the code it wrongly lets run score alike on coverage; the comment
    the issue echoes puts the condition first."""
    spectrum = [Suspect("pkg/text.py", n, 0.5, "ochiai 0.50") for n in (5, 6, 7, 8)]
    comments = from_issue_comments(ISSUE, FILES, [(s.path, s.line) for s in spectrum])
    assert rank(spectrum, comments)[0].line == 8


@pytest.mark.parametrize(
    "source",
    [
        "x = 1  # sentence end\ndef f(:\n    s = '''never closed\n",
        "x = 1  # sentence end\n\x00\n",
    ],
)
def test_source_that_does_not_tokenize_keeps_the_comments_read(source: str) -> None:
    files = {"pkg/a.py": source}
    found = from_issue_comments(ISSUE, files, [("pkg/a.py", 1), ("pkg/a.py", 9)])
    assert [s.line for s in found] == [1]
    assert from_issue_comments("", files, [("pkg/a.py", 1)]) == []
