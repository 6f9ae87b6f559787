"""What a repository path is for, told from its name alone (files are never opened here).

The fixer must not edit a test (tests are the judge), its localiser must not blame one,
and the reviewer weighs a remark on test code differently from one on code that ships.
All three need the same answer to "is this a test file?".
"""

from __future__ import annotations

__all__ = ["is_test_path"]

_TEST_DIRS = frozenset({"tests", "test"})


def is_test_path(path: str) -> bool:
    """A test file: under ``tests/``/``test/``, ``test_*.py``, ``*_test.py``, ``conftest.py``."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return (
        any(p in _TEST_DIRS for p in parts[:-1])
        or name == "conftest.py"
        or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))
    )
