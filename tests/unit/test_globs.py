"""Config globs: the same language as before, in time that a hostile glob cannot stretch."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.repo_config import DEFAULT_EXCLUDES
from workers.review.globs import compile_glob


def backtracking_regex(glob: str) -> re.Pattern[str]:
    """The translation Kaizen used before: the reference for what a glob means."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("**/node_modules/**", "web/node_modules/x/y.js", True),
        ("**/node_modules/**", "node_modules/x.js", True),
        ("**/node_modules/**", "web/node_modules", False),
        ("*.py", "pkg/a.py", False),
        ("*.py", "a.py", True),
        ("**/*.py", "a.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("src/?.py", "src/a.py", True),
        ("src/?.py", "src/ab.py", False),
        ("src/?.py", "src//.py", False),
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "doc/a.md", False),
        ("", "", True),
        ("", "a", False),
        ("a.py", "a.py", True),
        ("a.py", "a.pyc", False),
    ],
)
def test_globs(glob: str, path: str, matches: bool) -> None:
    assert compile_glob(glob).fullmatch(path) is matches


@settings(max_examples=2000, deadline=None)
@given(
    glob=st.text(alphabet=["a", "b", "/", "*", "?", "."], max_size=10),
    path=st.text(alphabet=["a", "b", "/", "."], max_size=12),
)
def test_same_answers_as_the_backtracking_translation(glob: str, path: str) -> None:
    assert compile_glob(glob).fullmatch(path) is bool(backtracking_regex(glob).fullmatch(path))


def test_a_hostile_glob_against_a_hostile_path_is_answered_at_once() -> None:
    glob = "**a" * 60 + "b"  # 200 characters, the longest glob the config accepts
    path = "a" * 4000  # GitHub allows paths this long
    started = time.monotonic()
    assert compile_glob(glob).fullmatch(path) is False
    assert compile_glob("*a" * 99 + "b").fullmatch("a" * 4000) is False
    assert time.monotonic() - started < 1.0


def test_the_default_excludes_over_a_large_pull_request_take_milliseconds() -> None:
    globs = [compile_glob(g) for g in DEFAULT_EXCLUDES]
    paths = [f"services/api/src/module_{i}/handlers/request_{i}.py" for i in range(3000)]
    started = time.monotonic()
    excluded = [p for p in paths if any(g.fullmatch(p) for g in globs)]
    elapsed = time.monotonic() - started
    assert excluded == []
    assert elapsed < 2.0, elapsed
