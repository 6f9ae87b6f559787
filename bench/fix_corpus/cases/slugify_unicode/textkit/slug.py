"""URL slugs for blog posts."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

_WORD = re.compile(r"[^\W_]+")


def slugify(text: str, *, sep: str = "-", allow_unicode: bool = False, max_length: int = 60) -> str:
    """Lower-case words of ``text`` joined by ``sep``; ASCII only unless allowed."""
    value = unicodedata.normalize("NFKC", text)
    if allow_unicode:
        value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    slug = sep.join(_WORD.findall(value.lower()))
    if len(slug) > max_length:
        cut = slug[:max_length]
        slug = cut.rsplit(sep, 1)[0] if sep in cut else cut
    return slug


def unique_slug(title: str, taken: Collection[str], **options: object) -> str:
    """``slugify(title)``, with "-2", "-3"... appended until it is not in ``taken``."""
    base = slugify(title, **options)  # type: ignore[arg-type]
    candidate = base
    counter = 2
    while candidate in taken:
        candidate = f"{base}-{counter}"
        counter += 1
    return candidate


def title_from_slug(slug: str, sep: str = "-") -> str:
    return " ".join(word.capitalize() for word in slug.split(sep) if word)
