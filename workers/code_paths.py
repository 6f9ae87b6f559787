"""What a repository path is for, told from its name alone (files are never opened here).

The fixer must not edit a test (tests are the judge), its localiser must not blame one,
and the reviewer weighs a remark on test code differently from one on code that ships.
All three need the same answer to "is this a test file?".
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["is_build_script", "is_example_path", "is_test_path"]

_TEST_DIRS = frozenset({"tests", "test"})
_BUILD_SCRIPTS = frozenset({"setup.py", "noxfile.py"})
_EXAMPLE_DIRS = frozenset(
    {"examples", "example", "demo", "demos", "docs_src", "doc", "docs"}
    | {"tutorial", "tutorials", "samples", "presentations"}
)


def is_test_path(path: str, test_roots: Collection[str] = ()) -> bool:
    """A test file: under ``tests/``/``test/``, ``test_*.py``, ``*_test.py``, ``conftest.py``,
    ``tests.py`` (a Django app's, texttable's beside its module), ``test.py`` at the root or
    in a package there or under ``src/`` (dotmap's ``dotmap/test.py``, which Kaizen's fix
    runs as the suite; deeper, it may be a command named so: setuptools'
    ``command/test.py``), or in one of
    ``test_roots`` (folders or files from the root: pytest's ``testpaths``)."""
    path = path.replace("\\", "/")
    parts = path.split("/")
    name = parts[-1]
    return (
        any(path == root or path.startswith(root + "/") for root in test_roots)
        or any(p in _TEST_DIRS for p in parts[:-1])
        or name in ("conftest.py", "tests.py")
        or path == "test.py"
        or (name == "test.py" and len(parts) - (parts[0] == "src") == 2)
        or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))
    )


def is_example_path(path: str) -> bool:
    """Example or documentation code: a file under ``examples/``, ``example/``, ``demo/``,
    ``docs/``, ``tutorial/``, ``samples/`` or ``presentations/`` (eliot's talks' demo
    scripts) at any depth (pony's ``pony/orm/examples/``). It shows readers how to
    use the project and runs on their machines, like a test."""
    parts = path.replace("\\", "/").split("/")
    return any(p in _EXAMPLE_DIRS for p in parts[:-1])


def is_build_script(path: str) -> bool:
    """A script that builds or tests the project on its developers' and packagers'
    machines (``setup.py``, ``noxfile.py``, at any depth: a monorepo's packages have
    their own). What it reads are the project's own files, written by the same hands."""
    return path.replace("\\", "/").rsplit("/", 1)[-1] in _BUILD_SCRIPTS
