"""Files named as a copy of another file of the repository."""

from __future__ import annotations

import pytest

from workers.review.stray_copies import copy_of

REPO = {"parsimonious/grammar.py", "app/views.py", "models.py", "pkg/util.py"}


@pytest.mark.parametrize(
    ("path", "original"),
    [
        ("parsimonious/grammar.py pre-rewriting-resolve_refs.py", "parsimonious/grammar.py"),
        ("app/views copy.py", "app/views.py"),
        ("app/views copy 2.py", "app/views.py"),
        ("app/views (1).py", "app/views.py"),
        ("models.py.orig.py", "models.py"),
        ("models.bak.py", "models.py"),
        ("pkg/util~.py", "pkg/util.py"),
    ],
)
def test_a_copy_is_named_after_its_original(path: str, original: str) -> None:
    assert copy_of(path, REPO.__contains__) == original


@pytest.mark.parametrize(
    "path",
    [
        "app/views_old.py",  # a module of its own, importable
        "app/views.py",
        "other/grammar.py pre.py",  # no such original beside it
        "app/new copy.py",
        "README copy.md",
    ],
)
def test_other_files_are_no_copies(path: str) -> None:
    assert copy_of(path, REPO.__contains__) is None
