"""Files named as a copy of another file of the repository."""

from __future__ import annotations

import pytest

from workers.review.stray_copies import copy_of, left_by_a_tool

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
        # setuptools' build output, committed with the change
        ("build/lib/pkg/util.py", "pkg/util.py"),
        ("build/lib.linux-x86_64-cpython-311/app/views.py", "app/views.py"),
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
        "build/lib/pkg/other.py",  # no such module in the source
        "tools/build/lib/helpers.py",
    ],
)
def test_other_files_are_no_copies(path: str) -> None:
    assert copy_of(path, REPO.__contains__) is None


@pytest.mark.parametrize(
    ("path", "what"),
    [
        ("tests/.test_uritemplate.py.swp", "an editor's swap file (vim)"),
        ("src/.app.js.swo", "an editor's swap file (vim)"),
        ("pkg/#views.py#", "an editor's auto-save (emacs)"),
        ("pkg/.#views.py", "an editor's lock file (emacs)"),
        ("docs/.DS_Store", "a macOS folder settings file"),
        ("img/Thumbs.db", "a Windows thumbnail cache"),
        ("setup.py.rej", "what a patch that did not apply left"),
    ],
)
def test_what_a_tool_leaves_behind_is_named(path: str, what: str) -> None:
    assert left_by_a_tool(path) == what


@pytest.mark.parametrize(
    "path", [".swp", "vim/syntax.swp.py", ".github/workflows/ci.yml", "docs/#1.md", ".rej"]
)
def test_ordinary_files_are_no_leftovers(path: str) -> None:
    assert left_by_a_tool(path) is None
