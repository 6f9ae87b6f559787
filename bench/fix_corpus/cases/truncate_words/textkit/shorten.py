"""Shortening text for previews, teasers and avatars."""

from __future__ import annotations

import re


def truncate(text: str, limit: int, ellipsis: str = "...") -> str:
    """At most ``limit`` characters, cut at a word boundary when possible."""
    if limit < len(ellipsis):
        raise ValueError("limit shorter than the ellipsis")
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ellipsis)]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + ellipsis


def truncate_words(text: str, max_words: int) -> str:
    """The first ``max_words`` words followed by " ..." when there are more."""
    words = text.split()
    if len(words) <= max_words:
        return text
    return " ".join(words[: max_words - 1]) + " ..."


def excerpt(text: str, term: str, radius: int = 20) -> str | None:
    """The text around the first case-insensitive occurrence of ``term``."""
    match = re.search(re.escape(term), text, re.IGNORECASE)
    if match is None:
        return None
    start = max(0, match.start() - radius)
    end = min(len(text), match.end() + radius)
    prefix = "..." if start > 0 else ""
    suffix = "..." if end < len(text) else ""
    return prefix + text[start:end].strip() + suffix


def initials(name: str, limit: int = 2) -> str:
    return "".join(part[0].upper() for part in name.split() if part[0].isalpha())[:limit]
