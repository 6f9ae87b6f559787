"""The oldest Python a repository says it supports, read from its metadata as data.

Ruff runs ``--isolated`` on pull requests (:mod:`workers.review.ruff_scan`), so it never
sees the project's ``requires-python`` and lints for its own default (Python 3.10 in
ruff 0.17). Its pyupgrade rules then suggest ``X | None`` and ``tuple[int]`` to a
project that supports 3.7, and accepting the one-click suggestion breaks the project on
the versions it promises (``TypeVar("T", bound=A | B)`` raises on 3.9). Measured on the
releases of click 8.1.3 → 8.1.7 (``python_requires >= 3.7``): 7 of the 10 comments
Kaizen would have posted were such suggestions.

Where the version is declared, in ruff's own order of precedence: the root ruff config's
``target-version`` (unless it is ruff's oldest, py37, and the project declares an older
Python elsewhere: loguru says 3.5 and "Ruff does not support it"), then
``requires-python`` in ``pyproject.toml``, then the Poetry ``python`` dependency,
``python_requires`` in ``setup.cfg`` and in ``setup.py``. Then what ruff does not read:
the oldest ``Programming Language :: Python :: 3.N`` classifier (in ``pyproject.toml``,
``setup.cfg``, ``setup.py``; peewee and bottle declare their Pythons only so, and ruff's
default had told them to write ``datetime.UTC``), and last ``.python-version`` (an
application's runtime, for repositories that are not packages). Classifiers go stale
more often than specifiers; newer syntax in a file whose merged code already needs it is
no remark (:mod:`workers.review.ruff_scan`). Every file is parsed as data: TOML and INI
parsers, and ``setup.py`` with :mod:`ast`, never run.
A version specifier newer than the ruff target is kept beside it as where pip installs
from: ruff lints for the target as the team's would, and syntax between the two is no
remark (folium: ``py37`` for ruff, ``python_requires=">=3.9"``).
Nothing declared: ruff's default, as the team's own ruff would.

A project inside the repository (a folder below the root with its own ``pyproject.toml``,
as ruff finds the nearest one) declares for the files under it: pyramid 2.1 asks for
Python 3.10 at its root, and its tutorials are projects of their own for 3.8, whose
SQLAlchemy models evaluate ``Mapped[Optional[str]]`` at run time; ``str | None`` there
breaks them on 3.8 and 3.9. A nested ``pyproject.toml`` that declares no Python (a
tool's settings only) leaves its files to the root's declaration.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from workers.review.repo_files import MAX_FILE_CHARS, load_ini, load_toml
from workers.review.ruff_team_config import ruff_config

# The Python versions ruff can lint for (ruff >= 0.5 knows py37 to py313).
OLDEST_MINOR = 7
NEWEST_MINOR = 13
_HIGHEST_MINOR_TRIED = 30
_RUFF_TARGET = re.compile(r"py3(\d{1,2})")
_PYTHON2_CLASSIFIER = re.compile(r"Programming Language :: Python :: 2(?:\.\d+)?(?: :: Only)?")
_CLASSIFIER = re.compile(r"Programming Language :: Python :: 3\.(\d{1,2})")
_PYTHON_VERSION_LINE = re.compile(r"(?:python-?|cpython-?)?3\.(\d{1,2})(?:[.\-].*)?")


@dataclass(frozen=True)
class DeclaredPython:
    """The oldest Python 3 minor version a repository supports, and where it says so."""

    minor: int
    source: str  # e.g. "requires-python = \">=3.8\" in pyproject.toml", for messages
    # Python 2 is supported too (``>=2.7``, a ``Python :: 2.7`` classifier): ruff cannot
    # lint for it, and its pyupgrade rules would all break it (python-dateutil 2.9).
    python2: bool = False
    # The oldest Python pip installs the project on (its version specifier), when that is
    # newer than the ruff target above: syntax between the two is no bug, since no Python
    # that fails on it gets the code (folium: py37 in its ruff config, ``>=3.9`` in setup.py).
    installs_from: int | None = None

    @property
    def ruff_target(self) -> str:
        """The ``--target-version`` to give ruff: clamped to what ruff knows."""
        return f"py3{min(max(self.minor, OLDEST_MINOR), NEWEST_MINOR)}"

    @property
    def version(self) -> str:
        return f"3.{self.minor}"


def lowest_minor(spec: str) -> int | None:
    """The lowest Python 3 minor version a version specifier lets in.

    ``>=3.8`` → 8, ``~=3.9`` → 9, ``>=2.7,!=3.0.*,!=3.1.*`` → 2, Poetry's ``^3.8`` and
    ``>=3.8 <4`` → 8, ``^3.8 || ^3.7`` → 7. None when it is not a specifier or lets no
    Python 3 in.
    """
    lowest: int | None = None
    for allowed in _alternatives(spec):
        for minor in range(_HIGHEST_MINOR_TRIED + 1):
            # the patch range too: ">=3.8.1" lets 3.8 in, from 3.8.1 on
            if _admits(allowed, 3, minor) and (lowest is None or minor < lowest):
                lowest = minor
                break
    return lowest


def admits_python2(spec: str) -> bool:
    """Whether a version specifier lets Python 2.7 in (``>=2.7``, Poetry's ``^2.7``)."""
    return any(_admits(allowed, 2, 7) for allowed in _alternatives(spec))


def _admits(allowed: SpecifierSet, major: int, minor: int) -> bool:
    return any(
        allowed.contains(Version(f"{major}.{minor}.{patch}"), prereleases=True) for patch in (0, 99)
    )


def _alternatives(spec: str) -> list[SpecifierSet]:
    found = (_specifier(alternative.strip()) for alternative in spec.split("||"))
    return [allowed for allowed in found if allowed is not None]


def _specifier(spec: str) -> SpecifierSet | None:
    if not spec or len(spec) > 200:
        return None
    if spec[0] == "^" or (spec[0] == "~" and not spec.startswith("~=")):
        spec = ">=" + spec[1:].strip()  # Poetry's caret and tilde: the lower bound is what counts
    elif spec[0].isdigit():
        spec = "==" + spec  # Poetry: "3.8.*" or a bare version
    spec = re.sub(r"(?<=[\d*])\s+(?=[<>=!~])", ",", spec)  # Poetry: ">=3.8 <4"
    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None


def declared_python(file_text: Callable[[str], str | None]) -> DeclaredPython | None:
    """The oldest Python the repository at hand declares, or None when it declares none.

    ``file_text(path)`` gives a root file's text (None when absent)."""
    specified = _declared_by_specifier(file_text)
    found = ruff_config(file_text)
    if found is not None:
        name, table = found
        target = _ruff_target_version(table)
        if target is not None:
            ruffs = DeclaredPython(target, f'target-version = "py3{target}" in {name}')
            if specified is not None and specified.minor > target:
                return replace(ruffs, installs_from=specified.minor)
            if target > OLDEST_MINOR:
                return ruffs
            # ruff's oldest target may be the closest it gets to an older Python the
            # project declares (loguru: py37 for 3.5, "Ruff does not support it")
            older = specified or _declared_otherwise(file_text)
            return older if older is not None and older.minor < target else ruffs
    return specified or _declared_otherwise(file_text)


# How many folders deep a nested project's pyproject.toml is looked for.
MAX_PROJECT_DEPTH = 8


def declared_python_at(path: str, file_text: Callable[[str], str | None]) -> DeclaredPython | None:
    """The oldest Python declared for the file ``path``: by the nearest project folder
    above it that declares one (see the module docstring), else by the repository's root.
    ``file_text(path)`` gives any file's text (None when absent)."""
    folder = path.rpartition("/")[0]
    return declared_in_folder(folder, file_text) or declared_python(file_text)


def declared_in_folder(
    folder: str, file_text: Callable[[str], str | None]
) -> DeclaredPython | None:
    """What the nearest project at or above ``folder`` (below the root) declares; None
    when no nested project declares a Python."""
    parts = folder.split("/") if folder else []
    for depth in range(min(len(parts), MAX_PROJECT_DEPTH), 0, -1):
        project = "/".join(parts[:depth])
        if file_text(f"{project}/pyproject.toml") is None:
            continue
        inner = declared_python(functools.partial(_in_folder, project, file_text))
        if inner is not None:
            return replace(inner, source=f"{inner.source} of `{project}/`")
    return None


def _in_folder(folder: str, file_text: Callable[[str], str | None], name: str) -> str | None:
    return file_text(f"{folder}/{name}")


def _declared_otherwise(file_text: Callable[[str], str | None]) -> DeclaredPython | None:
    """What ruff does not read: trove classifiers, then ``.python-version``."""
    pyproject = load_toml(file_text("pyproject.toml")) or {}
    project = pyproject.get("project")
    setup_py = file_text("setup.py")
    classified = (
        _from_classifiers(_strings(project.get("classifiers")), "pyproject.toml")
        if isinstance(project, Mapping)
        else None
    )
    classified = classified or _from_classifiers(
        _setup_cfg_classifiers(file_text("setup.cfg")), "setup.cfg"
    )
    classified = classified or _from_classifiers(_setup_py_strings(setup_py), "setup.py")
    if classified is not None:
        return classified
    return _python_version_file(file_text(".python-version"))


def _declared_by_specifier(file_text: Callable[[str], str | None]) -> DeclaredPython | None:
    """The version specifier pip enforces: ``requires-python``, Poetry's ``python``,
    ``python_requires`` in ``setup.cfg`` or ``setup.py``, the first found."""
    pyproject = load_toml(file_text("pyproject.toml")) or {}
    project = pyproject.get("project")
    if isinstance(project, Mapping):
        declared = _from_spec(project.get("requires-python"), "requires-python", "pyproject.toml")
        if declared is not None:
            return declared
    poetry = _table(pyproject, "tool", "poetry", "dependencies")
    declared = _from_spec(poetry.get("python"), "python", "[tool.poetry.dependencies]")
    if declared is not None:
        return declared
    declared = _from_spec(_setup_cfg(file_text("setup.cfg")), "python_requires", "setup.cfg")
    if declared is not None:
        return declared
    return _from_spec(_setup_py(file_text("setup.py")), "python_requires", "setup.py")


def _ruff_target_version(table: Mapping[str, Any]) -> int | None:
    value = table.get("target-version")
    match = _RUFF_TARGET.fullmatch(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def _from_spec(value: object, key: str, where: str) -> DeclaredPython | None:
    if not isinstance(value, str):
        return None
    minor = lowest_minor(value)
    if minor is None:
        return None
    return DeclaredPython(minor, f"{key} = {value.strip()!r} in {where}", admits_python2(value))


def _table(document: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    here: object = document
    for key in keys:
        here = here.get(key) if isinstance(here, Mapping) else None
    return here if isinstance(here, Mapping) else {}


def _setup_cfg(text: str | None) -> str | None:
    parser = load_ini(text)
    return None if parser is None else parser.get("options", "python_requires", fallback=None)


def _setup_py(text: str | None) -> str | None:
    """The string given as ``python_requires=`` in ``setup.py``, read from its syntax tree:
    a literal only (a value computed at run time is not known without running it)."""
    if text is None or len(text) > MAX_FILE_CHARS or "python_requires" not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.keyword)
            and node.arg == "python_requires"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def _from_classifiers(classifiers: list[str], where: str) -> DeclaredPython | None:
    """The oldest Python 3 minor the trove classifiers list (``:: 3`` alone names none)."""
    minors = [
        (int(match.group(1)), text.strip())
        for text in classifiers
        if (match := _CLASSIFIER.fullmatch(text.strip()))
    ]
    python2 = [text.strip() for text in classifiers if _PYTHON2_CLASSIFIER.fullmatch(text.strip())]
    if minors:
        minor, text = min(minors)
        return DeclaredPython(minor, f"{text!r} classifier in {where}", bool(python2))
    if python2:  # "2.7" and "3" (pexpect 4.9): no oldest Python 3 named, so ruff's oldest
        return DeclaredPython(OLDEST_MINOR, f"{python2[0]!r} classifier in {where}", True)
    return None


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _setup_cfg_classifiers(text: str | None) -> list[str]:
    parser = load_ini(text)
    value = None if parser is None else parser.get("metadata", "classifiers", fallback=None)
    return value.splitlines() if value else []


def _setup_py_strings(text: str | None) -> list[str]:
    """Every string literal in ``setup.py``: classifiers are data whether they are given
    inline or through a name, and no other literal reads as one."""
    if text is None or len(text) > MAX_FILE_CHARS or "Programming Language" not in text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def _python_version_file(text: str | None) -> DeclaredPython | None:
    """pyenv's ``.python-version``: the first version named (``3.12.1``, ``3.11``,
    ``3.10-dev``); several lines name several versions, and the oldest is what counts."""
    if text is None or len(text) > 10_000:
        return None
    minors = []
    for line in text.splitlines():
        match = _PYTHON_VERSION_LINE.fullmatch(line.split("#", 1)[0].strip())
        if match:
            minors.append(int(match.group(1)))
    if not minors:
        return None
    return DeclaredPython(min(minors), f"3.{min(minors)} in .python-version")
