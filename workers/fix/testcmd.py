"""Which command runs a repository's tests: the repository's config, else pytest's own
configuration, else the usual test-file conventions. Nothing is executed here.

Order (first hit wins):

1. ``fix.test_command`` from ``.kaizen.yml`` - a shell string, run as ``sh -c``, unless it
   is a plain pytest call (``pytest -k fast``, ``.venv/bin/python -m pytest tests``,
   ``PYTHONPATH=lib pytest``): that is run as pytest with the interpreter, arguments and
   variables it names, so the tests still come back one by one (a ``.venv`` an
   ``install_command`` made keeps per-test results, coverage and the quick check);
2. a pytest configuration, checked in pytest's own precedence: ``pytest.ini`` /
   ``.pytest.ini``, ``pytest.toml`` / ``.pytest.toml`` (pytest 9), ``pyproject.toml``
   (``[tool.pytest.ini_options]`` or ``[tool.pytest]``), ``tox.ini`` (``[pytest]``),
   ``setup.cfg`` (``[tool:pytest]``) - all give ``python3 -m pytest`` (pytest reads its
   ``testpaths`` and options itself);
3. conventions: ``test_*.py`` / ``*_test.py`` files anywhere (virtualenvs, ``.git``,
   ``node_modules`` and build folders skipped) - ``python3 -m pytest``;
4. test files under other names: in a ``tests/`` or ``test/`` folder (py-ubjson's
   ``test/test.py``), or a ``tests.py`` / ``test.py`` at the root (texttable's, beside
   ``texttable.py``) or in a package, that defines tests: pytest collects no such file
   by default, so the run adds them to ``python_files`` (``-o``), which keeps node ids
   selectable one by one;
5. a ``tests/`` or ``test/`` folder holding other Python files - ``python3 -m pytest``.

No tests found: ``None``.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Source = Literal[
    "config", "pytest.ini", "pytest.toml", "pyproject", "tox.ini", "setup.cfg", "convention"
]

PYTEST_ARGV = ("python3", "-m", "pytest")
MAX_CONFIG_BYTES = 1024 * 1024  # a config file bigger than this is not read
MAX_SRC_ENTRIES = 1000  # entries of src/ (and of each folder in it) looked at
MAX_WALK_ENTRIES = 50_000  # directory entries looked at before giving up on conventions
MAX_NAMED_MODULES = 20  # test files named to pytest one by one (python_files)
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        ".env",
        "env",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        "build",
        "dist",
        "site-packages",
    }
)


# A configured command holding any of these needs the shell (pipes, lists, redirections,
# expansions, globs, comments): it is run through ``sh -c`` as it is.
_SHELL_CHARS = frozenset("|&;<>()$`*?[]{}~!#\\\n\r")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON_NAME = re.compile(r"python(?:3(?:\.\d+)?)?")
# Ours: the run's report goes where Kaizen reads it, and no cache is written.
_OWN_OPTIONS = ("--junitxml", "--junit-xml", "--junit-prefix")


@dataclass(frozen=True)
class PytestRun:
    """A pytest call Kaizen runs itself: ``python -m pytest *args`` with ``env``.

    ``python`` ``None`` is the sandbox's interpreter; a path (``.venv/bin/python``) is the
    one the repository's install made, relative to the workspace."""

    python: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TestCommand:
    """The argv that runs a repository's tests, and where it came from. ``pytest`` is set
    when the tests are pytest's, which Kaizen then runs itself (per-test results);
    otherwise ``argv`` runs as it is and its exit code is the verdict."""

    argv: list[str]
    source: Source
    pytest: PytestRun | None = None

    __test__ = False  # not a pytest test class


def pytest_run_of(command: str) -> PytestRun | None:
    """``command`` as a :class:`PytestRun` when it is a plain pytest call, else ``None``.

    Plain: optional ``NAME=value`` assignments, then ``pytest``/``py.test`` (a path to one
    means the ``python`` beside it, as in a virtualenv's ``bin``) or ``python… -m pytest``,
    then arguments - nothing the shell would read differently from its words.
    """
    if any(ch in _SHELL_CHARS for ch in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if not words:
        return None
    program, rest = words[0], words[1:]
    folder, _, name = program.rpartition("/")
    if name in ("pytest", "py.test"):
        python = f"{folder}/python" if "/" in program else None
    elif _PYTHON_NAME.fullmatch(name) and rest[:2] == ["-m", "pytest"]:
        python = None if program in ("python", "python3") else program
        rest = rest[2:]
    else:
        return None
    return PytestRun(python, tuple(_without_own_options(rest)), env)


def _without_own_options(args: list[str]) -> list[str]:
    kept: list[str] = []
    value_next = False
    for arg in args:
        option, equals, _ = arg.partition("=")
        if value_next:
            value_next = False
        elif option in _OWN_OPTIONS:
            value_next = not equals  # `--junitxml out.xml`: its value is the next word
        else:
            kept.append(arg)
    return kept


def detect_test_command(repo: Path, configured: str | None = None) -> TestCommand | None:
    """The command that runs ``repo``'s tests, or ``None`` when it seems to have none.

    ``configured`` is ``fix.test_command`` from the repository's config (``None`` or blank:
    detect). Only reads files; never runs anything from the repository.
    """
    if configured is not None and configured.strip():
        return TestCommand(["sh", "-c", configured], "config", pytest_run_of(configured))
    repo = Path(repo)
    source = pytest_config_source(repo)
    if source is not None:
        return TestCommand(list(PYTEST_ARGV), source, PytestRun())
    if _has_default_test_files(repo):
        return TestCommand(list(PYTEST_ARGV), "convention", PytestRun())
    named = _test_folder_modules(repo)
    module = _root_test_module(repo) or _package_test_module(repo)
    if module is not None:
        named.append(module)
    if named:
        option = ("-o", f"python_files={' '.join(named)} test_*.py *_test.py")
        return TestCommand([*PYTEST_ARGV, *option], "convention", PytestRun(args=option))
    if _has_test_folder(repo):
        return TestCommand(list(PYTEST_ARGV), "convention", PytestRun())
    return None


# a test function or method (pyotp's ``unittest.TestCase`` subclasses in ``test.py``), or
# a class pytest collects by its name
_DEFINES_TESTS = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+test|^class[ \t]+Test", re.MULTILINE)


def _root_test_module(repo: Path) -> str | None:
    """``tests.py`` or ``test.py`` at the root when it is a file that defines a test
    function or class (read, never run)."""
    return next((name for name in _TEST_MODULES if _defines_tests(repo / name)), None)


_TEST_MODULES = ("tests.py", "test.py")


def _package_test_module(repo: Path) -> str | None:
    """``tests.py`` or ``test.py`` in a package at the root (or under ``src/``) that
    defines tests: dotmap keeps its ``unittest`` cases in ``dotmap/test.py``,
    verboselogs in ``verboselogs/tests.py``, a Django app in ``app/tests.py``. pytest
    collects neither name by default; in ``python_files`` it finds them anywhere."""
    for top in (repo, repo / "src"):
        for entry in sorted(_first_entries(top), key=lambda e: e.name):
            folder = Path(entry.path)
            if not (
                entry.name.isidentifier()
                and entry.is_dir(follow_symlinks=False)
                and _regular_file(folder / "__init__.py")
            ):
                continue
            for name in _TEST_MODULES:
                if _defines_tests(folder / name):
                    return name
    return None


def _defines_tests(path: Path) -> bool:
    """Whether ``path`` is a regular file whose start defines a test function or class."""
    if path.is_symlink() or not _regular_file(path):
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    return bool(_DEFINES_TESTS.search(head))


def src_layout(repo: Path) -> bool:
    """Whether ``repo`` keeps its code in ``src/`` (the "src layout").

    Such a project's tests import its packages only after ``pip install -e .``; the
    sandbox has no network and installs nothing, so the test runs put ``src`` on
    ``PYTHONPATH`` instead, which is what an editable install of a pure-Python package
    amounts to. Not when ``src`` holds a module named like the standard library's
    (``src/logging.py``), which would then shadow it.
    """
    src = Path(repo) / "src"
    if src.is_symlink() or not src.is_dir():
        return False
    entries = _first_entries(src)
    if any(e.name.endswith(".py") and e.name[:-3] in sys.stdlib_module_names for e in entries):
        return False
    return any(
        e.name.isidentifier() and e.is_dir(follow_symlinks=False) and _holds_python(Path(e.path))
        for e in entries
    )


def _holds_python(folder: Path) -> bool:
    return any(
        e.name.endswith(".py") and e.is_file(follow_symlinks=False) for e in _first_entries(folder)
    )


def _first_entries(folder: Path) -> list[os.DirEntry[str]]:
    """At most :data:`MAX_SRC_ENTRIES` entries of ``folder`` (none if it cannot be read):
    a repository may hold a folder of a million files."""
    try:
        with os.scandir(folder) as entries:
            return [e for _, e in zip(range(MAX_SRC_ENTRIES), entries, strict=False)]
    except OSError:
        return []


def pytest_config_source(repo: Path) -> Source | None:
    """The file pytest takes its configuration from, in pytest's order; None without one."""
    for name in ("pytest.ini", ".pytest.ini"):
        if _regular_file(repo / name):
            return "pytest.ini"  # pytest uses these even when empty
    for name in ("pytest.toml", ".pytest.toml"):
        if _regular_file(repo / name):
            return "pytest.toml"
    pyproject = _read(repo / "pyproject.toml")
    if pyproject is not None and _pyproject_has_pytest(pyproject):
        return "pyproject"
    tox = _read(repo / "tox.ini")
    if tox is not None and _has_section(tox, "pytest"):
        return "tox.ini"
    setup_cfg = _read(repo / "setup.cfg")
    if setup_cfg is not None and _has_section(setup_cfg, "tool:pytest"):
        return "setup.cfg"
    return None


def _pyproject_has_pytest(text: str) -> bool:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        # A broken (or absurdly nested) pyproject.toml: look for the table header.
        return bool(re.search(r"^[ \t]*\[\s*tool\.pytest(\.ini_options)?\s*\]", text, re.MULTILINE))
    tool = data.get("tool")
    pytest = tool.get("pytest") if isinstance(tool, dict) else None
    return isinstance(pytest, dict)


def _has_section(text: str, section: str) -> bool:
    """An INI section header, found by pattern rather than configparser (which rejects
    duplicate keys and interpolation that tox.ini files commonly hold)."""
    return bool(re.search(rf"^[ \t]*\[\s*{re.escape(section)}\s*\]", text, re.MULTILINE))


def _regular_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def config_text(checkout: Path, name: str) -> str | None:
    """A config file at the checkout's root (``pyproject.toml``, ``pytest.ini``, …) as text,
    or None: missing, not at the root, a symbolic link (it may point out of the
    checkout), too large or unreadable."""
    path = checkout / name
    try:
        if "/" in name or "\\" in name or path.is_symlink():
            return None
    except OSError:
        return None
    return _read(path)


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def is_test_file_name(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


_TEST_FOLDERS = ("tests", "test")


def _has_default_test_files(repo: Path) -> bool:
    """Whether pytest's default ``python_files`` find anything: the test folders are
    looked at first, as a whole repository's walk may take long before it gets there."""
    return any(_walk_for(folder, is_test_file_name) for folder in _test_folders(repo)) or (
        _walk_for(repo, is_test_file_name)
    )


def _has_test_folder(repo: Path) -> bool:
    return any(_walk_for(folder, lambda n: n.endswith(".py")) for folder in _test_folders(repo))


def _test_folders(repo: Path) -> list[Path]:
    return [
        repo / name
        for name in _TEST_FOLDERS
        if (repo / name).is_dir() and not (repo / name).is_symlink()
    ]


def _test_folder_modules(repo: Path) -> list[str]:
    """Files in ``tests/`` or ``test/`` that define tests under names pytest does not
    collect (py-ubjson's ``test/test.py``, a ``tests/units.py``), as paths from the root:
    in ``python_files`` a pattern with a folder in it is matched against the whole path,
    so it names those files and no module of the same name elsewhere. At most
    :data:`MAX_NAMED_MODULES` files, of the first :data:`MAX_SRC_ENTRIES` looked at."""
    named: list[str] = []
    looked = 0
    for folder in _test_folders(repo):
        for dirpath, dirnames, filenames in os.walk(folder, onerror=lambda _e: None):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and d.isidentifier())
            for name in sorted(filenames):
                looked += 1
                if looked > MAX_SRC_ENTRIES or len(named) >= MAX_NAMED_MODULES:
                    return named
                stem, dot, suffix = name.rpartition(".")
                path = Path(dirpath, name)
                if (
                    dot
                    and suffix == "py"
                    and stem.isidentifier()
                    and stem not in ("conftest", "__init__")
                    and _defines_tests(path)
                ):
                    named.append(path.relative_to(repo).as_posix())
    return named


def _walk_for(top: Path, wanted: Callable[[str], bool]) -> bool:
    """Whether a file whose name satisfies ``wanted`` lies under ``top`` (bounded walk,
    symlinked folders not followed, :data:`SKIP_DIRS` and virtualenvs skipped)."""
    seen = 0
    for dirpath, dirnames, filenames in os.walk(top, onerror=lambda _e: None):
        seen += len(dirnames) + len(filenames)
        if any(wanted(name) for name in filenames):
            return True
        if seen > MAX_WALK_ENTRIES:
            return False
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not d.endswith(".egg-info")
            and not (Path(dirpath, d, "pyvenv.cfg")).exists()
        )
    return False
