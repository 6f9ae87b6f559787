"""The ruff rules a repository has switched off, read from its own ruff configuration.

Ruff runs ``--isolated`` on pull requests (``workers.review.ruff_scan``): a repository's
config is untrusted and could point ruff at paths outside the checkout. But a team that
wrote ``ignore = ["B904"]`` in its ``pyproject.toml`` has already said what it thinks of
B904, and Kaizen repeating it on every PR is exactly the noise learning would then have
to unlearn. So the root config files are parsed here as data (``tomllib``: no code, no
paths followed) and only their ignore lists are taken, kept to rule selectors. Rules the
team *selects* are not narrowed to: Kaizen's value is finding what the team's own lint
does not look for.

``per-file-ignores`` count the same way: httpx says ``"__init__.py" = ["F403", "F405"]``
for its re-exporting packages, and without it 9 of the 15 comments Kaizen would have
posted on its 0.27 → 0.28 changes were those. Their globs are matched as ruff matches
them (against the path from the repository root, or against the file's name alone).
Nested configs (a ``pyproject.toml`` in a sub-folder) are not read.

A team that lints with flake8 has said the same in its ``[flake8]`` section (``ignore``,
``extend-ignore``, ``per-file-ignores``), in the codes ruff shares with pyflakes,
pycodestyle and the common plugins: sqlalchemy's ``test/typing/plain_files/*:F821``
(``reveal_type`` in its typing tests) made 11 of its 92 candidates on 2.0.30 → 2.0.35.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workers.review.repo_files import (
    clean_glob,
    flake8_config,
    flake8_list,
    glob_variants,
    load_toml,
)
from workers.review.ruff_scan import RULE_SELECTOR

# Where ruff looks at the repository root, in its own order of precedence.
CONFIG_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml")
MAX_IGNORES = 200
MAX_PER_FILE_PATTERNS = 200
_RULE_CODE = re.compile(r"[A-Z]+[0-9]+")
_KEYS = ("ignore", "extend-ignore")
_PER_FILE_KEYS = ("per-file-ignores", "extend-per-file-ignores")
_FLAKE8_TOKEN = re.compile(r"[^\s,:]+|:")


@dataclass(frozen=True)
class PerFileIgnore:
    """One ``per-file-ignores`` entry: the rules switched off in the files a glob names
    (in the files it does not name, when it starts with ``!``)."""

    glob: str
    selectors: tuple[str, ...]
    negated: bool = False

    def applies_to(self, path: str) -> bool:
        return _glob_matches(self.glob, path) != self.negated


@dataclass(frozen=True)
class TeamRuffConfig:
    """What the repository's root ruff config switches off, everywhere and per file."""

    ignores: tuple[str, ...] = ()
    per_file: tuple[PerFileIgnore, ...] = ()

    def ignored_at(self, path: str) -> list[str]:
        """Every selector switched off for the file at ``path``."""
        found = list(self.ignores)
        for entry in self.per_file:
            if entry.applies_to(path):
                found += entry.selectors
        return found

    def ignores_finding(self, pattern: str, path: str, keep: Sequence[str] = ()) -> bool:
        return ignored_by_team(pattern, self.ignored_at(path), keep)


def _ruff_table(name: str, document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if name == "pyproject.toml":
        tool = document.get("tool")
        table = tool.get("ruff") if isinstance(tool, Mapping) else None
        return table if isinstance(table, Mapping) else None
    return document


def ruff_table_in(name: str, text: str) -> Mapping[str, Any] | None:
    """A config file's ruff settings; None when it is not a ruff config (a
    ``pyproject.toml`` without ``[tool.ruff]``, or not TOML at all), so the next file in
    ruff's order is looked at instead, as ruff itself would."""
    document = load_toml(text)
    return None if document is None else _ruff_table(name, document)


def ruff_config(file_text: Callable[[str], str | None]) -> tuple[str, Mapping[str, Any]] | None:
    """The repository's root ruff config (the first file in ruff's order that has a ruff
    section) as (file name, settings), or None when it has none."""
    for name in CONFIG_FILES:
        text = file_text(name)
        if text is None:
            continue
        table = ruff_table_in(name, text)
        if table is not None:
            return name, table
    return None


def parse_config(table: Mapping[str, Any]) -> TeamRuffConfig:
    """The ignore lists of one ruff config's settings (its top level and ``lint``)."""
    lint = table.get("lint")
    places = (table, lint if isinstance(lint, Mapping) else {})
    found: list[str] = []
    per_file: list[PerFileIgnore] = []
    for where in places:
        for key in _KEYS:
            if isinstance(values := where.get(key), list):
                found += _selectors(values)
        for key in _PER_FILE_KEYS:
            if isinstance(entries := where.get(key), Mapping):
                per_file += _per_file(entries)
    return TeamRuffConfig(
        tuple(dict.fromkeys(found))[:MAX_IGNORES], tuple(per_file[:MAX_PER_FILE_PATTERNS])
    )


def _selectors(values: Sequence[object]) -> list[str]:
    found = [v.strip() for v in values if isinstance(v, str)]
    return [v for v in found if RULE_SELECTOR.fullmatch(v)][:MAX_IGNORES]


def _per_file(entries: Mapping[str, Any]) -> list[PerFileIgnore]:
    found = []
    for glob, values in entries.items():
        if not isinstance(values, list) or not isinstance(glob, str):
            continue
        negated = glob.startswith("!")
        cleaned = clean_glob(glob.removeprefix("!"))
        if cleaned is None:
            continue  # outside the repository: nothing Kaizen reviews
        selectors = _selectors(values)
        if selectors:
            found.append(PerFileIgnore(cleaned, tuple(selectors), negated))
    return found


def team_config(file_text: Callable[[str], str | None]) -> TeamRuffConfig:
    """What the repository's root ruff config and its flake8 config switch off; nothing
    when it has neither."""
    found = ruff_config(file_text)
    ruff = parse_config(found[1]) if found is not None else TeamRuffConfig()
    flake8 = flake8_config(file_text)
    if flake8 is None:
        return ruff
    options = flake8[1]
    ignores = [
        code
        for key in ("ignore", "extend-ignore")
        for code in _selectors(flake8_list(options.get(key, "")))
    ]
    per_file = [
        entry
        for key in ("per-file-ignores", "extend-per-file-ignores")
        for entry in flake8_per_file(options.get(key, ""))
    ]
    return TeamRuffConfig(
        tuple(dict.fromkeys([*ruff.ignores, *ignores]))[:MAX_IGNORES],
        tuple([*ruff.per_file, *per_file][:MAX_PER_FILE_PATTERNS]),
    )


def flake8_per_file(value: str) -> list[PerFileIgnore]:
    """flake8's ``per-file-ignores``: ``glob[,glob...]:code[,code...]`` entries separated
    by spaces, commas or lines (``test/typing/plain_files/*:F821,E501``). Read as flake8
    reads it: names until a colon, then codes until the next name."""
    entries: list[tuple[list[str], list[str]]] = []
    names: list[str] = []
    codes: list[str] = []
    after_colon = False
    for word in _FLAKE8_TOKEN.findall(value):
        if word == ":":
            after_colon = True
        elif after_colon and RULE_SELECTOR.fullmatch(word):
            codes.append(word)
        else:
            if after_colon:
                entries.append((names, codes))
                names, codes, after_colon = [], [], False
            names.append(word)
    if after_colon:
        entries.append((names, codes))
    found = []
    for globs, selectors in entries:
        for glob in globs:
            cleaned = clean_glob(glob)
            if cleaned is not None and selectors:
                found.append(PerFileIgnore(cleaned, tuple(selectors[:MAX_IGNORES])))
    return found[:MAX_PER_FILE_PATTERNS]


def _glob_matches(glob: str, path: str) -> bool:
    """Ruff's matching: the glob against the path from the root, or a glob against the
    file name alone; ``*`` and ``?`` cross folders, as in ruff's (``tests/*`` covers
    ``tests/unit/test_a.py``). :mod:`fnmatch` keeps stars from backtracking without end."""
    name = path.rsplit("/", 1)[-1]
    return any(
        fnmatch.fnmatchcase(path, variant) or fnmatch.fnmatchcase(name, variant)
        for variant in glob_variants(glob)
    )


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
