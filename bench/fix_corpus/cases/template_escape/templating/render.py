"""A tiny {{ placeholder }} template renderer for notification e-mails."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"))


class MissingValue(KeyError):
    pass


def escape_html(text: str) -> str:
    for old, new in _ESCAPES:
        text = text.replace(new, old)
    return text


def unescape_html(text: str) -> str:
    for raw, entity in reversed(_ESCAPES):
        text = text.replace(entity, raw)
    return text


def lookup(context: Mapping[str, Any], dotted: str) -> Any:
    value: Any = context
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise MissingValue(dotted)
        value = value[part]
    return value


def render(
    template: str, context: Mapping[str, Any], *, autoescape: bool = True, strict: bool = False
) -> str:
    """Replace each {{ name }} (dots walk nested mappings) with its value."""

    def substitute(match: re.Match[str]) -> str:
        try:
            value = lookup(context, match.group(1))
        except MissingValue:
            if strict:
                raise
            return ""
        text = str(value)
        return escape_html(text) if autoescape else text

    return _PLACEHOLDER.sub(substitute, template)
