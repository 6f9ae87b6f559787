"""A repository's own config files, read as data: TOML and INI parsers, size-limited, and
globs kept inside the repository.

Why one place: the review reads the team's ruff config, its lint excludes and its Python
version from files a pull request may have written, so each reader needs the same
guards (a megabyte of TOML, ``a = [[[[…`` nested until tomllib's recursion gives out, an
INI file that is not one, a glob that points outside the checkout).
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

MAX_FILE_CHARS = 512_000
MAX_GLOB_CHARS = 500
FLAKE8_FILES = ("setup.cfg", "tox.ini", ".flake8")  # flake8's own order


def load_toml(text: str | None) -> Mapping[str, Any] | None:
    """The TOML document, or None when there is none, it is too large or not TOML."""
    if text is None or len(text) > MAX_FILE_CHARS:
        return None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        # RecursionError: tomllib recurses per nested array, so ``a = [[[[…`` a thousand
        # deep (4 KB, in a pull request's own pyproject.toml) would raise it
        return None


def load_ini(text: str | None) -> configparser.ConfigParser | None:
    """The INI file (``setup.cfg``, ``tox.ini``, ``.flake8``) without interpolation, or None
    when there is none, it is too large or not INI."""
    if text is None or len(text) > MAX_FILE_CHARS:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def clean_glob(glob: str) -> str | None:
    """A config's path glob from the repository root (``./`` and a trailing ``/``
    dropped), or None when it is empty, too long or points outside the repository."""
    glob = glob.strip().rstrip("/")
    while glob.startswith("./"):
        glob = glob[2:]
    if not glob or len(glob) > MAX_GLOB_CHARS or glob.startswith("/") or ".." in glob:
        return None
    return glob


def flake8_config(file_text: Callable[[str], str | None]) -> tuple[str, dict[str, str]] | None:
    """The ``[flake8]`` section of the first of flake8's config files that has one, as
    (file name, options with ``_`` spelled ``-``), or None."""
    for name in FLAKE8_FILES:
        parser = load_ini(file_text(name))
        if parser is not None and parser.has_section("flake8"):
            options = {k.replace("_", "-"): v for k, v in parser.items("flake8")}
            return name, options
    return None


def flake8_list(value: str) -> list[str]:
    """A flake8 list option (comma- or line-separated, ``#`` comments) as its items."""
    pieces = value.replace("\n", ",").split(",")
    return [p.split("#", 1)[0].strip() for p in pieces if p.split("#", 1)[0].strip()]
