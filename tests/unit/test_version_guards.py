"""What the version checks around a line guarantee (``workers.review.version_guards``)."""

from __future__ import annotations

import re
import textwrap

import pytest

from workers.review.version_guards import (
    collected_from,
    guarantee_at,
    runs_only_where_defined,
)


def _at(source: str, name: str = "ExceptionGroup", nth: int = 0) -> tuple[str, int, int]:
    """The source (dedented) and the 1-based row and character column of ``name``'s
    ``nth`` use, as ruff reports it."""
    source = textwrap.dedent(source)
    seen = 0
    for row, line in enumerate(re.split(r"\r\n|\r|\n", source), start=1):
        column = line.find(name)
        while column != -1:
            if seen == nth:
                return source, row, column + 1
            seen += 1
            column = line.find(name, column + 1)
    raise AssertionError(f"{name} #{nth} not in the source")


def _safe(source: str, name: str = "ExceptionGroup", nth: int = 0, added: int = 11) -> bool:
    text, row, column = _at(source, name, nth)
    return runs_only_where_defined(text, row, column, added)


def test_the_if_branch_of_a_version_check_runs_only_on_newer_pythons() -> None:
    source = """
        import sys
        if sys.version_info >= (3, 11):
            ExceptionGroup = ExceptionGroup
        else:
            class ExceptionGroup(Exception):
                pass
    """
    assert _safe(source)
    assert _safe(source, nth=1)


def test_no_check_guarantees_nothing() -> None:
    source = """
        def f(errors):
            raise ExceptionGroup("many", errors)
    """
    text, row, column = _at(source)
    assert guarantee_at(text, row, column).minor is None
    assert not _safe(source)


def test_a_check_for_an_older_version_than_the_builtin_is_not_enough() -> None:
    source = """
        import sys
        if sys.version_info >= (3, 10):
            x = ExceptionGroup
    """
    assert not _safe(source)
    assert _safe(source, added=10)


@pytest.mark.parametrize(
    "test",
    [
        "sys.version_info > (3, 11)",
        "sys.version_info[:2] >= (3, 11)",
        "sys.version_info[0:2] >= (3, 11, 0)",
        "(3, 11) <= sys.version_info",
        "sys.version_info.minor >= 11",
        "sys.version_info[1] > 10",
        "not sys.version_info < (3, 11)",
        "sys.version_info >= (3, 11) and os.name == 'nt'",
        "sys.version_info >= (3, 12) or sys.version_info >= (3, 11)",
    ],
)
def test_the_ways_projects_write_the_check(test: str) -> None:
    source = f"import os, sys\nif {test}:\n    x = ExceptionGroup\n"
    assert _safe(source)


@pytest.mark.parametrize(
    "test",
    [
        "sys.version_info >= (2, 7)",
        "sys.version_info >= (3, 11) or os.name == 'nt'",
        "sys.version_info == (3, 11)",
        "platform.python_version() >= '3.11'",
        "sys.version_info[:1] >= (3,)",
    ],
)
def test_checks_that_do_not_say_it_guarantee_nothing(test: str) -> None:
    source = f"import os, sys, platform\nif {test}:\n    x = ExceptionGroup\n"
    assert not _safe(source)


def test_the_else_branch_of_a_check_for_older_versions() -> None:
    source = """
        import sys
        if sys.version_info < (3, 11):
            from exceptiongroup import ExceptionGroup as Group
        else:
            Group = ExceptionGroup
    """
    assert _safe(source, nth=1)
    # and the if branch of it is the older versions
    assert not _safe("import sys\nif sys.version_info < (3, 11):\n    x = ExceptionGroup\n")


def test_version_info_imported_from_sys() -> None:
    source = """
        from sys import version_info as v
        if v >= (3, 11):
            x = ExceptionGroup
    """
    assert _safe(source)


def test_a_module_level_name_for_the_check() -> None:
    source = """
        import sys
        PY311 = sys.version_info >= (3, 11)

        def f(errors):
            if PY311:
                raise ExceptionGroup("many", errors)
            raise errors[0]
    """
    assert _safe(source)
    # a name bound twice is not a constant
    rebound = source.replace("def f", "PY311 = True\n\ndef f")
    assert not _safe(rebound)


def test_an_early_exit_for_older_versions_guards_the_rest_of_the_block() -> None:
    source = """
        import sys

        def f(errors):
            if sys.version_info < (3, 11):
                raise RuntimeError("needs 3.11")
            raise ExceptionGroup("many", errors)
    """
    assert _safe(source)
    # an if that does not leave the block guards nothing after it
    assert not _safe(source.replace('raise RuntimeError("needs 3.11")', "errors = list(errors)"))


def test_a_conditional_expression_on_one_line() -> None:
    source = "import sys\nGroup = ExceptionGroup if sys.version_info >= (3, 11) else Exception\n"
    assert _safe(source)
    other = "import sys\nGroup = Exception if sys.version_info >= (3, 11) else ExceptionGroup\n"
    assert not _safe(other)


def test_the_second_half_of_an_and_after_the_check() -> None:
    source = "import sys\nok = sys.version_info >= (3, 11) and isinstance(e, ExceptionGroup)\n"
    assert _safe(source)


def test_a_name_error_caught_around_it() -> None:
    for handler in ("NameError", "(ImportError, NameError)", "Exception", ""):
        source = f"try:\n    Group = ExceptionGroup\nexcept {handler}:\n    Group = None\n"
        assert _safe(source.replace("except :", "except:")), handler
    assert not _safe("try:\n    Group = ExceptionGroup\nexcept ImportError:\n    Group = None\n")
    # the handler itself is not protected by its own try
    assert not _safe("try:\n    pass\nexcept NameError:\n    Group = ExceptionGroup\n")


def test_contextlib_suppress_of_name_error() -> None:
    source = "import contextlib\nwith contextlib.suppress(NameError):\n    G = ExceptionGroup\n"
    assert _safe(source)


def test_columns_count_characters_on_lines_with_other_scripts() -> None:
    """ruff's column counts characters, ast's bytes: the point must land on the name."""
    source = (
        "import sys\n"
        "x = ('größe', ExceptionGroup if sys.version_info >= (3, 11) else None,"
        " ExceptionGroup)\n"
    )
    assert _safe(source)
    assert not _safe(source, nth=1)


def test_a_file_that_does_not_parse_or_a_row_outside_it_guarantees_nothing() -> None:
    assert not runs_only_where_defined("if sys.version_info >= (3, 11)\n", 1, 5, 11)
    assert not runs_only_where_defined("x = 1\n", 7, 1, 11)
    assert not runs_only_where_defined("", 1, 1, 11)


def test_a_test_skipped_on_older_versions() -> None:
    """aiohttp 3.10: ``@pytest.mark.skipif(sys.version_info < (3, 10), reason="Needs
    anext()")`` over a test that calls ``anext``."""
    source = """
        import sys
        import pytest

        @pytest.mark.skipif(sys.version_info < (3, 10), reason="Needs anext()")
        async def test_read(reader):
            part = await anext(reader)
    """
    assert _safe(source, name="anext", nth=1, added=10)
    assert not _safe(
        source.replace("sys.version_info < (3, 10)", "sys.platform == 'win32'"),
        name="anext",
        nth=1,
        added=10,
    )


def test_unittest_skip_marks_on_a_class() -> None:
    for mark in (
        "unittest.skipIf(sys.version_info < (3, 11), 'needs 3.11')",
        "unittest.skipUnless(sys.version_info >= (3, 11), 'needs 3.11')",
        "pytest.mark.skipif(condition=sys.version_info < (3, 11), reason='x')",
    ):
        source = (
            f"import sys, unittest, pytest\n@{mark}\nclass T:\n"
            "    def test(self):\n        raise ExceptionGroup('x', [])\n"
        )
        assert _safe(source), mark


def test_a_modules_pytestmark() -> None:
    for value in (
        "pytest.mark.skipif(sys.version_info < (3, 11), reason='x')",
        "[pytest.mark.asyncio, pytest.mark.skipif(sys.version_info < (3, 11), reason='x')]",
    ):
        source = (
            "import sys, pytest\n\ndef test():\n    raise ExceptionGroup('x', [])\n\n"
            f"pytestmark = {value}\n"
        )
        assert _safe(source), value
    assert not _safe("import pytest\npytestmark = pytest.mark.asyncio\nx = ExceptionGroup\n")


def test_a_module_skipped_early_on_older_versions() -> None:
    source = """
        import sys
        import pytest

        if sys.version_info < (3, 11):
            pytest.skip("needs 3.11", allow_module_level=True)

        def test_group():
            raise ExceptionGroup("x", [])
    """
    assert _safe(source)


def test_rows_are_counted_as_python_counts_them() -> None:
    """A form feed (a page break in older code) ends no line for Python."""
    source = (
        "import sys\n\x0c\nx = ('größe', ExceptionGroup if sys.version_info >= (3, 11) else None)\n"
    )
    assert _safe(source)


CATTRS_CONFTEST = """\
import platform
import sys

collect_ignore_glob = []
if sys.version_info < (3, 10):
    collect_ignore_glob.append("*_604.py")
if sys.version_info < (3, 12):
    collect_ignore_glob.append("*_695.py")
if platform.python_implementation() == "PyPy":
    collect_ignore_glob.append("*_cpython.py")
"""


def test_a_conftest_keeps_test_files_from_older_pythons() -> None:
    files = {"tests/conftest.py": CATTRS_CONFTEST}

    assert collected_from("tests/test_generics_695.py", files.get) == 12
    assert collected_from("tests/deep/er/test_union_604.py", files.get) == 10
    assert collected_from("tests/test_plain.py", files.get) is None
    assert collected_from("tests/test_gen_cpython.py", files.get) is None  # not a version
    assert collected_from("src/pkg/module_695.py", files.get) is None  # another folder


@pytest.mark.parametrize(
    "conftest",
    [
        "import sys\ncollect_ignore = []\nif sys.version_info[:2] < (3, 10):\n"
        "    collect_ignore.extend(['tests/test_pattern_matching.py', 'tests/test_next.py'])\n",
        "import sys\ncollect_ignore = []\nif sys.version_info >= (3, 10):\n    pass\n"
        "else:\n    collect_ignore += ['tests/test_pattern_matching.py']\n",
        "from sys import version_info\nif version_info.minor < 10:\n"
        "    collect_ignore = ['tests']\n",
    ],
)
def test_the_ways_a_conftest_adds_to_its_ignore_lists(conftest: str) -> None:
    """attrs: ``collect_ignore.extend([...])`` under ``sys.version_info[:2] < (3, 10)``."""
    files = {"conftest.py": conftest}

    assert collected_from("tests/test_pattern_matching.py", files.get) == 10


def test_an_ignore_without_a_version_check_or_a_broken_conftest_says_nothing() -> None:
    plain = {"conftest.py": "collect_ignore = ['tests/test_slow.py']\n"}
    broken = {"conftest.py": "if sys.version_info < (3, 12:\n"}

    assert collected_from("tests/test_slow.py", plain.get) is None
    assert collected_from("tests/test_slow.py", broken.get) is None
    assert collected_from("tests/test_slow.py", {}.get) is None
