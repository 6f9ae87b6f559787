"""A repository's own config files, read as data: TOML and INI parsers, size-limited, and
globs kept inside the repository.

Why one place: the review reads the team's ruff config, its lint excludes and its Python
version from files a pull request may have written, so each reader needs the same
guards (a megabyte of TOML, ``a = [[[[…`` nested until tomllib's recursion gives out, an
INI file that is not one, a glob that points outside the checkout).
"""

from __future__ import annotations

import configparser
import itertools
import re
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

MAX_FILE_CHARS = 512_000
MAX_GLOB_CHARS = 500
FLAKE8_FILES = ("setup.cfg", "tox.ini", ".flake8")  # flake8's own order
MAX_GLOB_VARIANTS = 32
_BRACES = re.compile(r"\{([^{}]*)\}")


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


def glob_variants(glob: str) -> list[str]:
    """A ruff glob as :mod:`fnmatch` globs: ``{a,b}`` alternatives spelled out, and ``**/``
    also as nothing (ruff's globs let it match no folder at all: pylint's
    ``tests/**/functional/`` covers ``tests/functional``); fnmatch knows neither. At most
    :data:`MAX_GLOB_VARIANTS`."""
    variants = [glob]
    while any(_BRACES.search(v) for v in variants) and len(variants) <= MAX_GLOB_VARIANTS:
        spelled = []
        for v in variants:
            match = _BRACES.search(v)
            if match is None:
                spelled.append(v)
                continue
            head, tail = v[: match.start()], v[match.end() :]
            spelled += [head + option + tail for option in match.group(1).split(",")]
        variants = spelled
    out = []
    for v in variants[:MAX_GLOB_VARIANTS]:
        parts = v.split("**/")
        count = len(parts) - 1
        for skips in itertools.product(("**/", ""), repeat=min(count, 3)):
            separators = [*skips, *["**/"] * (count - len(skips)), ""]
            out.append("".join(p + s for p, s in zip(parts, separators, strict=True)))
            if len(out) >= MAX_GLOB_VARIANTS:
                return out
    return out


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


# pytest's own order: the first of these with a pytest section is its config file.
PYTEST_INI_FILES = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"))
PYTEST_LATER_INI_FILES = (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))
MAX_TEST_PATHS = 50


def pytest_testpaths(file_text: Callable[[str], str | None]) -> tuple[str, ...]:
    """The folders and files pytest's ``testpaths`` names (from the repository root), from
    pytest's own config file: where a project keeps tests that no name says are tests
    (celery's ``t/unit``). Globs, ``.`` (the whole repository) and paths leaving it are
    left out."""
    found = _ini_testpaths(file_text, PYTEST_INI_FILES)
    if found is not None:
        return found
    document = load_toml(file_text("pyproject.toml"))
    tool = document.get("tool") if document is not None else None
    pytest = tool.get("pytest") if isinstance(tool, Mapping) else None
    options = pytest.get("ini_options") if isinstance(pytest, Mapping) else None
    if isinstance(options, Mapping):
        raw: object = options.get("testpaths", "")
        if isinstance(raw, list):
            raw = " ".join(str(item) for item in raw if isinstance(item, str))
        return _test_paths(raw if isinstance(raw, str) else "")
    return _ini_testpaths(file_text, PYTEST_LATER_INI_FILES) or ()


def _ini_testpaths(
    file_text: Callable[[str], str | None], files: tuple[tuple[str, str], ...]
) -> tuple[str, ...] | None:
    """``testpaths`` of the first of ``files`` (name, section) with a pytest section, or
    None when none has one."""
    for name, section in files:
        parser = load_ini(file_text(name))
        if parser is not None and parser.has_section(section):
            return _test_paths(parser.get(section, "testpaths", fallback=""))
    return None


def _test_paths(value: str) -> tuple[str, ...]:
    out: list[str] = []
    for item in value.split()[:MAX_TEST_PATHS]:
        path = clean_glob(item)
        if path is not None and path != "." and not any(c in path for c in "*?["):
            out.append(path)
    return tuple(out)
