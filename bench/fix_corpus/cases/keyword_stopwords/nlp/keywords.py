"""Keyword extraction for the article tag suggester."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

_STOPWORD_TEXT = """
a an and are as at be by for from has in is it its of on or that the to was with
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Tokens of ``text`` without stopwords, in order."""
    return [word for word in tokenize(text) if word in STOPWORDS]


def top_keywords(text: str, n: int = 3) -> list[tuple[str, int]]:
    """The ``n`` most frequent content words; ties keep first-appearance order."""
    return Counter(content_words(text)).most_common(n)


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    if n < 1:
        raise ValueError("n must be positive")
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def density(text: str, word: str) -> float:
    """Share of all tokens equal to ``word``."""
    tokens = tokenize(text)
    if not tokens:
        return 0.0
    return tokens.count(word.lower()) / len(tokens)
