"""The ruff rules a repository has switched off, read from its own ruff configuration.

Ruff runs ``--isolated`` on pull requests (``workers.review.ruff_scan``): a repository's
config is untrusted and could point ruff at paths outside the checkout. But a team that
wrote ``ignore = ["B904"]`` in its ``pyproject.toml`` has already said what it thinks of
B904, and Kaizen repeating it on every PR is exactly the noise learning would then have
to unlearn. So the root config files are parsed here as data (``tomllib``: no code, no
paths followed) and only their ignore lists are taken, kept to rule selectors. Rules the
team *selects* are not narrowed to: Kaizen's value is finding what the team's own lint
does not look for. ``per-file-ignores`` and nested configs are not read.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workers.review.ruff_scan import RULE_SELECTOR

# Where ruff looks at the repository root, in its own order of precedence.
CONFIG_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml")
MAX_CONFIG_CHARS = 512_000
MAX_IGNORES = 200
_RULE_CODE = re.compile(r"[A-Z]+[0-9]+")
_KEYS = ("ignore", "extend-ignore")


def _ruff_table(name: str, document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if name == "pyproject.toml":
        tool = document.get("tool")
        table = tool.get("ruff") if isinstance(tool, Mapping) else None
        return table if isinstance(table, Mapping) else None
    return document


def ignores_in(name: str, text: str) -> list[str] | None:
    """The selectors a config file ignores; None when it is not a ruff config (a
    ``pyproject.toml`` without ``[tool.ruff]``, or not TOML at all), so the next file in
    ruff's order is looked at instead, as ruff itself would."""
    if len(text) > MAX_CONFIG_CHARS:
        return None
    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        # RecursionError: tomllib recurses per nested array, so ``a = [[[[…`` a thousand
        # deep (4 KB, in a pull request's own pyproject.toml) would raise it
        return None
    table = _ruff_table(name, document)
    if table is None:
        return None
    found: list[str] = []
    lint = table.get("lint")
    for where in (table, lint if isinstance(lint, Mapping) else {}):
        for key in _KEYS:
            values = where.get(key)
            if isinstance(values, list):
                found += [v.strip() for v in values if isinstance(v, str)]
    return [v for v in dict.fromkeys(found) if RULE_SELECTOR.fullmatch(v)][:MAX_IGNORES]


def team_ignores(file_text: Callable[[str], str | None]) -> list[str]:
    """The rules the repository's root ruff config ignores (the first config file in
    ruff's order that has a ruff section)."""
    for name in CONFIG_FILES:
        text = file_text(name)
        if text is None:
            continue
        found = ignores_in(name, text)
        if found is not None:
            return found
    return []


def _covers(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def ignored_by_team(pattern: str, ignores: Sequence[str], keep: Sequence[str] = ()) -> bool:
    """Whether a ``ruff:<code>`` finding falls under one of the team's ignored selectors,
    read as ruff reads them: a prefix (``E`` covers ``E711``), ``ALL`` every rule. What
    ``.github/kaizen.yml`` selects (``keep``) is asked for and never dropped."""
    code = pattern.removeprefix("ruff:")
    if pattern == code or not _RULE_CODE.fullmatch(code):
        return False  # not ruff's, or not a rule (a syntax error is reported whatever)
    if any(_covers(sel, code) for sel in keep):
        return False
    return any(_covers(sel, code) for sel in ignores)
