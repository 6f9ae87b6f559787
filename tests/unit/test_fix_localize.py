from __future__ import annotations

import functools
import math
import os
import sqlite3
import time
from pathlib import Path

import pytest

from workers.code_paths import is_example_path, is_test_path
from workers.fix.localize import (
    ARGUMENT_SHARE,
    CONTEXT_PLUGIN,
    CONTEXT_PLUGIN_MODULE,
    CONTEXT_PREFIX,
    COVERAGE_DATA_NAME,
    COVERAGE_RC,
    COVERAGE_RC_NAME,
    FAILURE_FLOOR,
    GUARD_SHARE,
    LOOP_SHARE,
    REPORT_SHARE,
    TRANSLATION_SHARE,
    CoverageDataError,
    canonical_test_id,
    case_key,
    coverage_argv,
    from_checked_attributes,
    from_failures,
    from_issue_text,
    from_test_names,
    ochiai,
    rank,
    read_coverage,
    with_coverage,
    write_coverage_rc,
)
from workers.fix.types import Suspect
from workers.sandbox.junit import TestResult

MOD = """\
import os


def helper(x):
    y = x + 1
    return y * 2


class Parser:
    def parse(self, text):
        parts = text.split(",")
        return [p.strip() for p in parts]

    def reset(self):
        self.state = None


def parse_config(path):
    with open(path) as f:
        return f.read()
"""

API = """\
def get(url):
    return url
"""

FILES = {
    "src/pkg/mod.py": MOD,
    "src/pkg/api.py": API,
    "src/pkg/__init__.py": "",
    "tests/test_mod.py": "def test_x():\n    assert True\n",
    "conftest.py": "import pytest\n",
}


def lines_of(suspects: list[Suspect], path: str | None = None) -> list[tuple[str, int]]:
    return [(s.path, s.line) for s in suspects if path is None or s.path == path]


# --- issue text ------------------------------------------------------------------------


def test_traceback_with_absolute_paths_maps_by_longest_suffix() -> None:
    text = """Crash on save:

Traceback (most recent call last):
  File "/home/alice/work/proj/src/pkg/api.py", line 2, in get
    return url
  File "/usr/lib/python3/dist-packages/requests/api.py", line 59, in get
    return request("get", url)
  File "/opt/venv/lib/python3.11/site-packages/pkg/mod.py", line 6, in helper
    return y * 2
ZeroDivisionError: division by zero
"""
    suspects = from_issue_text(text, FILES)
    tb = [s for s in suspects if s.why.startswith("traceback")]
    # requests/api.py is not the repo's api.py; the installed pkg/mod.py is src/pkg/mod.py.
    assert lines_of(tb) == [("src/pkg/mod.py", 6), ("src/pkg/api.py", 2)]
    assert tb[0].score == 1.0 and tb[1].score == pytest.approx(0.8)


def test_windows_and_relative_traceback_paths() -> None:
    text = (
        'Traceback (most recent call last):\n  File "C:\\Users\\bob\\proj\\src\\pkg\\mod.py", '
        'line 11, in parse\n  File "./src/pkg/api.py", line 2, in get\n'
    )
    tb = [s for s in from_issue_text(text, FILES) if s.why.startswith("traceback")]
    assert lines_of(tb) == [("src/pkg/api.py", 2), ("src/pkg/mod.py", 11)]


def test_stdlib_and_bare_init_frames_do_not_match_repo_files() -> None:
    files = {"pkg/decoder.py": "x = 1\n", "pkg/__init__.py": "x = 1\n"}
    text = (
        'File "/usr/lib/python3.11/json/decoder.py", line 3, in f\n'
        'File "/somewhere/else/__init__.py", line 1, in <module>\n'
    )
    assert [s for s in from_issue_text(text, files) if s.why.startswith("traceback")] == []


def test_path_line_mentions_and_github_anchors() -> None:
    text = (
        "See src/pkg/mod.py:11 and also mod.py:12; the link "
        "https://github.com/o/r/blob/abc/src/pkg/api.py#L1-L2 shows it."
    )
    named = [s for s in from_issue_text(text, FILES) if s.why.startswith("line named")]
    assert set(lines_of(named)) == {
        ("src/pkg/mod.py", 11),
        ("src/pkg/mod.py", 12),
        ("src/pkg/api.py", 1),
        ("src/pkg/api.py", 2),
    }


def test_plain_file_name_gives_its_statements_weakly() -> None:
    suspects = from_issue_text("Something is off in api.py I think.", FILES)
    assert lines_of(suspects) == [("src/pkg/api.py", 1), ("src/pkg/api.py", 2)]
    assert suspects[0].why == "file named in the issue"


def test_symbols_match_function_bodies() -> None:
    text = "Calling `Parser.parse` with an empty string and parse_config() both break."
    suspects = from_issue_text(text, FILES)
    by_why: dict[str, set[int]] = {}
    for s in suspects:
        by_why.setdefault(s.why, set()).add(s.line)
    assert by_why["symbol named in the issue: Parser.parse"] == {11, 12}
    assert by_why["symbol named in the issue: parse_config"] == {19, 20}


def test_a_function_named_through_its_package_is_found_in_the_packages_module() -> None:
    """asyncstdlib re-exports ``enumerate`` from ``asyncstdlib/builtins.py``: an issue
    about ``asyncstdlib.enumerate`` is about that function (not found before: 60 sandbox
    runs on the lines of ``islice``, which uses it, and no fix; then fixed in 7 runs).
    Another package's module of the same name stays out."""
    files = {
        "asyncstdlib/__init__.py": "from .builtins import enumerate\n",
        "asyncstdlib/builtins.py": "async def enumerate(it, start=0):\n    yield start\n",
        "vendored/builtins.py": "def enumerate(it):\n    return it\n",
    }
    suspects = from_issue_text("`asyncstdlib.enumerate` counts in steps of two", files)
    assert lines_of(suspects) == [("asyncstdlib/builtins.py", 2)]
    assert suspects[0].why == "symbol named in the issue: asyncstdlib.enumerate"


def test_a_named_functions_statements_count_on_every_line_their_parts_start() -> None:
    """semantic_version's ``next_minor`` returns ``Version(...)`` written over five
    lines; the slip was ``patch=self.patch`` on the fourth, which coverage counts as a
    line of its own and the issue's symbol did not (position 68 in the plan, then 10).
    A closing bracket alone and a comment are no lines of code."""
    files = {
        "ver.py": (
            "class Version:\n"  # 1
            "    def next_minor(self):\n"  # 2
            "        return Version(\n"  # 3
            "            major=self.major,\n"  # 4
            "            # the patch starts again\n"  # 5
            "            patch=self.patch,\n"  # 6
            "        )\n"  # 7
        )
    }
    suspects = from_issue_text("`Version.next_minor` keeps the patch number", files)
    assert lines_of(suspects) == [("ver.py", 3), ("ver.py", 4), ("ver.py", 6)]


def test_a_named_functions_private_helpers_count_a_little_less() -> None:
    """more-itertools: the issue names ``sliding_window``, the bug is in the
    ``_sliding_window_deque`` it returns; a method's ``self._helper`` likewise."""
    files = {
        "pkg/recipes.py": (
            "def _deque_version(it, n):\n"
            "    return list(it)[:n]\n"
            "\n"
            "def _check(n):\n"
            "    assert n > 0\n"
            "\n"
            "def sliding_window(it, n):\n"
            "    _check(n)\n"
            "    return _deque_version(it, n)\n"
        ),
        "pkg/parser.py": (
            "class Parser:\n"
            "    def parse(self, text):\n"
            "        return self._tokens(text)\n"
            "\n"
            "    def _tokens(self, text):\n"
            "        return text.split()\n"
            "\n"
            "    def __repr__(self):\n"
            "        return 'Parser()'\n"
        ),
        "pkg/other.py": "def _deque_version(it, n):\n    return n\n",
    }

    window = {(s.path, s.line): s for s in from_issue_text("`sliding_window` is wrong", files)}
    parse = {(s.path, s.line): s for s in from_issue_text("`Parser.parse` is wrong", files)}

    assert window[("pkg/recipes.py", 9)].score == pytest.approx(1.0)
    helper = window[("pkg/recipes.py", 2)]
    assert helper.score == pytest.approx(0.8)
    assert helper.why == "symbol named in the issue: sliding_window (_deque_version)"
    assert ("pkg/recipes.py", 5) not in window  # called for its effect alone: a check
    assert ("pkg/other.py", 2) not in window  # another module's function of that name
    assert parse[("pkg/parser.py", 6)].score == pytest.approx(0.8)
    assert ("pkg/parser.py", 9) not in parse  # dunders are not helpers


def test_plain_words_are_not_symbols_but_marked_ones_are() -> None:
    assert from_issue_text("the helper is slow", FILES) == []
    marked = from_issue_text("the `helper` is slow", FILES)
    assert set(lines_of(marked)) == {("src/pkg/mod.py", 5), ("src/pkg/mod.py", 6)}


def test_module_qualified_symbol_and_ambiguity() -> None:
    files = {"a/util.py": "def run():\n    return 1\n", "b/util.py": "def run():\n    return 2\n"}
    both = from_issue_text("`run` fails", files)
    assert {s.path for s in both} == {"a/util.py", "b/util.py"}
    assert all(s.score == pytest.approx(0.5) for s in both)
    one = from_issue_text("b.util.run() fails", files)
    assert lines_of(one) == [("b/util.py", 2)]


def test_a_definition_named_twice_counts_once() -> None:
    """hjson: "``hjson.dumpsJSON`` with ..." names the wrapper dotted and bare; summed, its
    21 lines outweighed the spectrum's, took every suspect place, and the encoder line
    that held the bug was no suspect at all."""
    files = {"hjson/__init__.py": "def dumpsJSON(obj):\n    return encode(obj)\n"}
    once = rank(from_issue_text("`dumpsJSON` writes -2**31 unquoted", files))
    twice = rank(from_issue_text("hjson.dumpsJSON(x) writes -2**31 unquoted", files))
    assert [(s.line, s.score) for s in twice] == [(s.line, s.score) for s in once]
    assert [s.why for s in twice] == ["symbol named in the issue: hjson.dumpsJSON"]


def test_issue_never_suspects_test_files() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/x/tests/test_mod.py", line 2, in test_x\n'
        '  File "/x/conftest.py", line 1, in <module>\nsee tests/test_mod.py:1 and `test_x`'
    )
    assert from_issue_text(text, FILES) == []


# --- failing tests ---------------------------------------------------------------------


def result(nodeid: str, outcome: str, message: str = "") -> TestResult:
    return TestResult(
        nodeid=nodeid,
        classname="",
        name=nodeid.rsplit("::", 1)[-1],
        file=nodeid.split("::", 1)[0],
        outcome=outcome,  # type: ignore[arg-type]
        duration_s=0.0,
        message=message,
    )


PYTEST_REPORT = """\
    def test_x():
>       helper(None)

tests/test_mod.py:2:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
src/pkg/mod.py:5: in helper
    y = x + 1
E   TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'
"""


def test_from_failures_reads_repo_frames_of_failing_tests_only() -> None:
    tests = [
        result("tests/test_mod.py::test_x", "failed", PYTEST_REPORT),
        result(
            "tests/test_mod.py::test_y",
            "error",
            'File "/workspace/src/pkg/api.py", line 2, in get\n'
            'File "/workspace/src/pkg/mod.py", line 5, in helper\n',
        ),
        result("tests/test_mod.py::test_z", "passed", "src/pkg/mod.py:20: in parse_config"),
    ]
    suspects = from_failures(tests, FILES)
    assert lines_of(suspects) == [("src/pkg/mod.py", 5), ("src/pkg/api.py", 2)]
    assert suspects[0].score == 1.0 and suspects[0].why == "failing test traceback (2 of 2 failing)"
    assert suspects[1].score == pytest.approx(0.4)  # 0.8 in one of two failures


# --- attributes a failing assert reads ---------------------------------------------------
CHECKED_FILES = {
    "pkg/common.py": (
        "class Doc:\n"
        "    def __init__(self):\n"
        "        self.blank_after = False\n"
        "        self.title = None\n"
    ),
    "pkg/google.py": (
        "from pkg.common import Doc\n\n\n"
        "def parse(text):\n"
        "    doc = Doc()\n"
        "    doc.blank_after = text.endswith('\\n')\n"
        "    doc.title = text.split()[0]\n"
        "    return doc\n"
    ),
    "pkg/rest.py": (
        "from pkg.common import Doc\n\n\n"
        "def parse(text):\n"
        "    doc = Doc()\n"
        "    doc.blank_after = text.endswith('\\n\\n')\n"
        "    return doc\n"
    ),
    "tests/test_google.py": (
        "from pkg.google import parse\n\n\n"
        "def test_blank():\n"
        "    doc = parse('a\\n')\n"
        "    assert doc.blank_after is False\n\n\n"
        "def test_title():\n"
        "    assert parse('a b').title.upper() == 'A'\n"
    ),
}
CHECKED_REPORT = (
    ">       assert doc.blank_after is False\n"
    "E       assert True is False\n"
    "E        +  where True = <pkg.common.Doc object at 0x7f>.blank_after\n\n"
    "tests/test_google.py:6: AssertionError\n"
)


def test_the_lines_that_set_what_a_failing_assert_reads_are_suspects() -> None:
    """docstring-parser's ``assert docstring.blank_after_long_description == expected``
    with the Google parser's ``endswith`` short of a newline: the line that sets the
    attribute, among those the failing test ran (not the other parsers')."""
    failing = result("tests/test_google.py::test_blank", "failed", CHECKED_REPORT)
    spectrum = {
        "tests.test_google.test_blank": {
            ("pkg/common.py", 3),
            ("pkg/common.py", 4),
            ("pkg/google.py", 5),
            ("pkg/google.py", 6),
            ("pkg/google.py", 7),
        }
    }
    suspects = from_checked_attributes([failing], CHECKED_FILES, spectrum)

    assert lines_of(suspects) == [("pkg/common.py", 3), ("pkg/google.py", 6)]
    assert {s.why for s in suspects} == {"sets what a failing assert checks"}
    without_coverage = from_checked_attributes([failing], CHECKED_FILES)
    assert ("pkg/rest.py", 6) in lines_of(without_coverage)


def test_an_attribute_set_on_many_lines_or_a_method_called_points_nowhere() -> None:
    many = {
        **CHECKED_FILES,
        "pkg/more.py": "".join(f"def f{i}(d):\n    d.blank_after = {i}\n" for i in range(5)),
    }
    failing = result("tests/test_google.py::test_blank", "failed", CHECKED_REPORT)
    assert from_checked_attributes([failing], many) == []
    called = result(
        "tests/test_google.py::test_title",
        "failed",
        ">       assert parse('a b').title.upper() == 'A'\n\n"
        "tests/test_google.py:10: AssertionError\n",
    )
    assert lines_of(from_checked_attributes([called], CHECKED_FILES)) == [
        ("pkg/common.py", 4),
        ("pkg/google.py", 7),
    ]
    passed = result("tests/test_google.py::test_blank", "passed", CHECKED_REPORT)
    assert from_checked_attributes([passed], CHECKED_FILES) == []


def test_from_failures_without_frames_is_empty() -> None:
    assert from_failures([result("t.py::test_a", "failed", "assert 1 == 2")], FILES) == []
    assert from_failures([], FILES) == []


@pytest.mark.parametrize("piece", ["\n", " \n", "a.", "a.b(", "x.py:1:\n"])
def test_a_megabyte_of_hostile_test_output_is_read_in_linear_time(piece: str) -> None:
    # The code under test writes its own failure messages: a megabyte of newlines made the
    # frame patterns (``^\s*`` across lines) quadratic, hours of one worker.
    text = piece * (1_000_000 // len(piece))
    started = time.monotonic()
    from_failures([result("t.py::test_a", "failed", text)], FILES)
    from_issue_text(text, FILES)
    assert time.monotonic() - started < 5.0


def test_a_generated_file_too_deep_to_parse_does_not_stop_localisation() -> None:
    generated = "TABLE = " + " + ".join(["1"] * 20_000) + "\n"  # RecursionError in ast.parse
    files = {**FILES, "src/pkg/generated.py": generated}
    tests = [
        result(
            "tests/test_mod.py::test_y",
            "error",
            'File "/workspace/src/pkg/mod.py", line 5, in helper\n',
        )
    ]
    assert lines_of(from_failures(tests, files)) == [("src/pkg/mod.py", 5)]
    assert from_issue_text("helper() in src/pkg/mod.py fails", files) != []


# --- test ids and ochiai ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodeid", "key"),
    [
        ("tests/test_x.py::test_foo", "tests.test_x.test_foo"),
        ("tests/test_x.py::TestC::test_foo[1-a::b]", "tests.test_x.TestC.test_foo"),
        ("./test_x.py::TestA::TestB::test_n", "test_x.TestA.TestB.test_n"),
        ("tests.test_x.TestC::test_foo", "tests.test_x.TestC.test_foo"),  # no file in JUnit
        ("tests.test_x.test_foo", "tests.test_x.test_foo"),  # already a key
    ],
)
def test_canonical_test_id(nodeid: str, key: str) -> None:
    assert canonical_test_id(nodeid) == key


SPECTRUM: dict[str, set[tuple[str, int]]] = {
    # line 3 is the bug: only the failing tests reach it
    "tests.test_calc.test_neg": {("calc.py", 1), ("calc.py", 2)},
    "tests.test_calc.test_zero": {("calc.py", 1), ("calc.py", 2), ("calc.py", 4)},
    "tests.test_calc.test_big": {("calc.py", 1), ("calc.py", 2), ("calc.py", 3)},
    "tests.test_calc.TestC.test_huge": {("calc.py", 1), ("calc.py", 3), ("tests/h.py", 1)},
}


def test_a_failing_unit_test_of_one_function_points_at_that_function() -> None:
    """natsort: ``test_sep_inserter_…`` ran ``sep_inserter`` alone and failed, beside
    tests of the keygen that runs most of the package. A test named after code that
    calls the bug (``test_convert_…`` running ``convert`` and ``f_to_c``) counts for
    nothing, and without coverage nothing counts."""
    files = {
        "pkg/utils.py": (
            "def sep_inserter(items, sep):\n"  # 1
            "    for x in items:\n"  # 2
            "        yield x\n"  # 3
            "\n\n"
            "def f_to_c(f):\n"  # 6
            "    return (f + 32) * 5 / 9\n"  # 7
            "\n\n"
            "def convert(value):\n"  # 10
            "    return f_to_c(value)\n"  # 11
        ),
    }
    spectrum = {
        "tests.test_utils.test_sep_inserter_between_numbers": {
            ("pkg/utils.py", 2),
            ("pkg/utils.py", 3),
        },
        "tests.test_utils.test_convert_freezing": {("pkg/utils.py", 11), ("pkg/utils.py", 7)},
    }
    failed = [
        "tests/test_utils.py::test_sep_inserter_between_numbers",
        "tests/test_utils.py::test_convert_freezing",
    ]

    suspects = from_test_names(failed, files, spectrum)

    assert lines_of(suspects) == [("pkg/utils.py", 2), ("pkg/utils.py", 3)]
    assert suspects[0].why == "failing test named after it"
    assert from_test_names(failed, files, None) == []


def test_ochiai_on_a_hand_made_spectrum() -> None:
    failed = {"tests/test_calc.py::test_big", "tests/test_calc.py::TestC::test_huge[9]"}
    passed = {"tests/test_calc.py::test_neg", "tests/test_calc.py::test_zero"}
    suspects = ochiai(SPECTRUM, failed, passed)
    scores = {(s.path, s.line): s.score for s in suspects}
    assert scores == {
        ("calc.py", 3): pytest.approx(1.0),
        ("calc.py", 1): pytest.approx(2 / math.sqrt(2 * 4)),
        ("calc.py", 2): pytest.approx(1 / math.sqrt(2 * 3)),
    }  # line 4 only passing tests cover; tests/h.py is a test file
    assert lines_of(suspects)[0] == ("calc.py", 3)
    assert suspects[0].why == "ochiai 1.00"


def test_ochiai_matches_ids_by_dotted_suffix_and_merges_parametrised_cases() -> None:
    spectrum = {
        "test_calc.test_p": {("calc.py", 3)},  # recorded without the tests. package prefix
        "test_calc.test_ok": {("calc.py", 1), ("calc.py", 3)},
    }
    failed = {"tests/test_calc.py::test_p[1]"}
    # test_p[2] passed but shares the failing context: not counted as passing.
    passed = {"tests/test_calc.py::test_p[2]", "tests/test_calc.py::test_ok"}
    scores = {(s.path, s.line): s.score for s in ochiai(spectrum, failed, passed)}
    assert scores == {("calc.py", 3): pytest.approx(1 / math.sqrt(2))}


@pytest.mark.parametrize(
    ("nodeid", "key"),
    [
        ("tests/test_x.py::test_foo", "tests.test_x.test_foo"),
        ("tests/test_x.py::TestC::test_foo[1.5-a::b]", "tests.test_x.TestC.test_foo[1.5-a::b]"),
        ("tests.test_x.TestC::test_foo[x]", "tests.test_x.TestC.test_foo[x]"),
    ],
)
def test_case_key_keeps_the_parameters(nodeid: str, key: str) -> None:
    assert case_key(nodeid) == key


def test_ochiai_scores_each_parametrised_case_on_its_own_coverage() -> None:
    """One failing case of a parametrised test: only what that case ran is suspect, not
    everything its passing siblings ran."""
    spectrum = {
        "tests.test_calc.test_p[1]": {("calc.py", 1), ("calc.py", 3)},  # fails
        "tests.test_calc.test_p[2]": {("calc.py", 1), ("calc.py", 2)},
        "tests.test_calc.test_p[3.5]": {("calc.py", 1), ("calc.py", 2), ("calc.py", 4)},
    }
    failed = {"tests/test_calc.py::test_p[1]"}
    passed = {"tests/test_calc.py::test_p[2]", "tests/test_calc.py::test_p[3.5]"}
    scores = {(s.path, s.line): s.score for s in ochiai(spectrum, failed, passed)}
    assert scores == {("calc.py", 3): pytest.approx(1.0), ("calc.py", 1): pytest.approx(1 / 3**0.5)}


def test_ochiai_matches_a_case_context_recorded_under_another_rootdir() -> None:
    spectrum = {"test_calc.test_p[a]": {("calc.py", 3)}, "test_calc.test_p[b]": {("calc.py", 1)}}
    failed = {"tests/test_calc.py::test_p[a]"}
    passed = {"tests/test_calc.py::test_p[b]"}
    scores = {(s.path, s.line): s.score for s in ochiai(spectrum, failed, passed)}
    assert scores == {("calc.py", 3): pytest.approx(1.0)}


def test_ochiai_without_failures_or_unknown_ids() -> None:
    assert ochiai(SPECTRUM, set(), {"tests/test_calc.py::test_neg"}) == []
    assert ochiai(SPECTRUM, {"tests/other.py::test_nope"}, set()) == []


# --- rank ------------------------------------------------------------------------------


def test_rank_combines_the_same_line_across_sources() -> None:
    spectrum = [
        Suspect("calc.py", 3, 0.5, "ochiai 0.50"),
        Suspect("calc.py", 7, 0.25, "ochiai 0.25"),
    ]
    issue = [Suspect("calc.py", 7, 1.0, "traceback in the issue")]
    ranked = rank(spectrum, issue)
    assert lines_of(ranked) == [("calc.py", 7), ("calc.py", 3)]
    assert ranked[0].score == pytest.approx(3.0 + 1.0)  # traceback 3 + ochiai 2 * 0.25/0.5
    assert ranked[0].why == "traceback in the issue; ochiai 0.25"
    assert ranked[1].score == pytest.approx(2.0)


def test_rank_normalises_each_source_and_weighs_tracebacks_over_ochiai() -> None:
    weak_spectrum = [Suspect("a.py", 1, 0.1, "ochiai 0.10")]  # normalised to 1 -> 2.0
    traceback = [Suspect("b.py", 9, 0.3, "failing test traceback (1 of 3 failing)")]  # 3.0
    symbol = [Suspect("c.py", 2, 1.0, "symbol named in the issue: f")]  # 1.0
    ranked = rank(weak_spectrum, traceback, symbol)
    assert lines_of(ranked) == [("b.py", 9), ("a.py", 1), ("c.py", 2)]
    assert [s.score for s in ranked] == pytest.approx([3.0, 2.0, 1.0])


def test_a_traceback_few_of_many_failing_tests_share_does_not_outrank_the_spectrum() -> None:
    """transitions, a condition's ``==`` made ``!=``: 4 of 218 failing tests crashed in the
    repository's code (the rest failed their own asserts); normalised to a best of 1, the
    lines of those 4 outranked the inverted comparison ochiai put first at 0.99."""
    spectrum = [
        Suspect("core.py", 191, 0.99, "ochiai 0.99"),
        Suspect("core.py", 277, 0.28, "ochiai 0.28"),
    ]
    few = [Suspect("core.py", 277, 4 / 218, "failing test traceback (4 of 218 failing)")]
    most = [Suspect("core.py", 277, 0.3, "failing test traceback (1 of 3 failing)")]

    assert lines_of(rank(spectrum, few))[0] == ("core.py", 191)
    assert lines_of(rank(spectrum, most))[0] == ("core.py", 277)
    assert rank(spectrum, few)[1].score == pytest.approx(
        2.0 * 0.28 / 0.99 + 3.0 * (4 / 218) / FAILURE_FLOOR
    )


def test_a_class_named_alone_weighs_what_it_weighs_beside_a_function() -> None:
    """semantic_version: the issue wrote ``Version('1.2.0')`` as the argument it passed;
    the class's half weight was lifted to a full one when nothing else was named, and its
    lines outranked the comparison ochiai put first (``>`` for ``>=`` in ``Range.match``:
    not fixed in 60 runs, then fixed at attempt 59)."""
    spectrum = [
        Suspect("base.py", 978, 0.77, "ochiai 0.77"),
        Suspect("base.py", 186, 0.5, "ochiai 0.50"),
    ]
    class_lines = [Suspect("base.py", 186, 0.5, "symbol named in the issue: Version")]

    ranked = rank(spectrum, class_lines)
    assert lines_of(ranked) == [("base.py", 978), ("base.py", 186)]
    assert ranked[1].score == pytest.approx(2.0 * 0.5 / 0.77 + 0.5)


def test_rank_excludes_test_files_and_paths_outside_the_repo_and_limits() -> None:
    source = [
        Suspect("tests/test_a.py", 1, 1.0, "ochiai 1.00"),
        Suspect("pkg/test_b.py", 1, 1.0, "ochiai 1.00"),
        Suspect("pkg/b_test.py", 1, 1.0, "ochiai 1.00"),
        Suspect("conftest.py", 1, 1.0, "ochiai 1.00"),
        Suspect("/etc/passwd", 1, 1.0, "ochiai 1.00"),
        Suspect("../other/x.py", 1, 1.0, "ochiai 1.00"),
        Suspect("pkg/x.py", 0, 1.0, "ochiai 1.00"),
        *[Suspect("pkg/ok.py", n, 1.0 / n, f"ochiai {1.0 / n:.2f}") for n in range(1, 30)],
    ]
    ranked = rank(source, limit=5)
    assert lines_of(ranked) == [("pkg/ok.py", n) for n in range(1, 6)]
    assert rank(source, limit=0) == []


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/unit/helpers.py", True),
        ("src/pkg/test/fixtures.py", True),
        ("test_x.py", True),
        ("pkg/x_test.py", True),
        ("pkg/conftest.py", True),
        ("pkg/testing.py", False),
        ("pkg/contest.py", False),
        ("pkg/latest_tests.py", False),
        ("tests.py", True),  # texttable's, beside texttable.py
        ("polls/tests.py", True),  # a Django app's
        ("test.py", True),
        # a package's own (dotmap's ``dotmap/test.py``), there or under src/: the suite
        ("dotmap/test.py", True),
        ("src/dotmap/test.py", True),
        ("setuptools/command/test.py", False),  # the `setup.py test` command
    ],
)
def test_is_test_path(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


# --- coverage wiring -------------------------------------------------------------------


def test_coverage_command_and_rc(tmp_path: Path) -> None:
    assert coverage_argv("py") == [
        "py",
        "-m",
        "coverage",
        "run",
        f"--rcfile={COVERAGE_RC_NAME}",
        "-m",
        "pytest",
        "-p",
        CONTEXT_PLUGIN_MODULE,
    ]
    assert with_coverage(["python3", "-m", "pytest", "-q", "--junitxml=r.xml"]) == [
        *coverage_argv("python3"),
        "-q",
        "--junitxml=r.xml",
    ]
    with pytest.raises(ValueError):
        with_coverage(["pytest", "-q"])
    assert "dynamic_context" not in COVERAGE_RC  # the plugin names the contexts
    assert f"data_file = {COVERAGE_DATA_NAME}" in COVERAGE_RC
    (tmp_path / COVERAGE_DATA_NAME).write_text("stale")
    (tmp_path / COVERAGE_RC_NAME).symlink_to("/etc/hostname")
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / f"{CONTEXT_PLUGIN_MODULE}.py").symlink_to("/etc/hostname")
    rc = write_coverage_rc(tmp_path, "plugins")
    assert not rc.is_symlink() and rc.read_text() == COVERAGE_RC
    plugin = tmp_path / "plugins" / f"{CONTEXT_PLUGIN_MODULE}.py"
    assert not plugin.is_symlink() and plugin.read_text() == CONTEXT_PLUGIN
    assert not (tmp_path / COVERAGE_DATA_NAME).exists()


SCHEMA = """
CREATE TABLE coverage_schema (version integer);
CREATE TABLE meta (key text, value text, unique (key));
CREATE TABLE file (id integer primary key, path text, unique (path));
CREATE TABLE context (id integer primary key, context text, unique (context));
CREATE TABLE line_bits (file_id integer, context_id integer, numbits blob,
                        unique (file_id, context_id));
CREATE TABLE arc (file_id integer, context_id integer, fromno integer, tono integer,
                  unique (file_id, context_id, fromno, tono));
CREATE TABLE tracer (file_id integer primary key, tracer text);
INSERT INTO coverage_schema VALUES (7);
"""


def numbits(*lines: int) -> bytes:
    data = bytearray(max(lines) // 8 + 1)
    for n in lines:
        data[n // 8] |= 1 << (n % 8)
    return bytes(data)


def make_data(path: Path, files: dict[int, str], contexts: dict[int, str], rows: list) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO file VALUES (?, ?)", files.items())
    conn.executemany("INSERT INTO context VALUES (?, ?)", contexts.items())
    for row in rows:
        if len(row) == 3:
            conn.execute("INSERT INTO line_bits VALUES (?, ?, ?)", row)
        else:
            conn.execute("INSERT INTO arc VALUES (?, ?, ?, ?)", row)
    conn.commit()
    conn.close()


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel in ("pkg/calc.py", "tests/test_calc.py", "pkg/tests/test_inner.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    return root


@pytest.mark.parametrize("at_root", [True, False])
def test_read_coverage_maps_paths_contexts_and_drops_tests(tmp_path: Path, at_root: bool) -> None:
    root = repo(tmp_path) if at_root else Path(".")  # relative paths need no root
    data = tmp_path / "data.sqlite"
    make_data(
        data,
        {
            1: "pkg/calc.py",
            2: "tests/test_calc.py",
            3: "/workspace/pkg/calc.py",  # an absolute path from inside the sandbox
            4: "/usr/lib/python3/dist-packages/six.py",  # outside the repo
            5: "../escape.py",  # leaves the repo
        },
        {1: "", 2: "test_calc.test_a", 3: "test_calc.TestC.test_b", 4: "elsewhere.test_c"},
        [
            (1, 1, numbits(1, 2)),  # the empty context (imports) is left out
            (1, 2, numbits(3, 4)),
            (2, 2, numbits(7)),  # test file lines are never suspects
            (3, 3, numbits(9)),
            (4, 3, numbits(5)),
            (5, 3, numbits(2)),
            (1, 3, 4, 5),  # branch data: from/to lines
            (1, 3, -1, 6),
        ],
    )
    assert read_coverage(data, root) == {
        "tests.test_calc.test_a": {("pkg/calc.py", 3), ("pkg/calc.py", 4)},
        "tests.test_calc.TestC.test_b": {
            ("pkg/calc.py", 9),
            ("pkg/calc.py", 4),
            ("pkg/calc.py", 5),
            ("pkg/calc.py", 6),
        },
        "elsewhere.test_c": set(),  # cannot be placed: kept as recorded
    }


def test_read_coverage_keys_the_plugins_contexts_by_case(tmp_path: Path) -> None:
    data = tmp_path / "data.sqlite"
    make_data(
        data,
        {1: "pkg/calc.py"},
        {
            1: "",
            2: f"{CONTEXT_PREFIX}tests/test_calc.py::test_p[1]",
            3: f"{CONTEXT_PREFIX}tests/test_calc.py::TestC::test_q[a.b-2]",
            4: CONTEXT_PREFIX,  # no node id: nothing to place
        },
        [(1, 1, numbits(1)), (1, 2, numbits(3)), (1, 3, numbits(4)), (1, 4, numbits(5))],
    )
    assert read_coverage(data, repo(tmp_path)) == {
        "tests.test_calc.test_p[1]": {("pkg/calc.py", 3)},
        "tests.test_calc.TestC.test_q[a.b-2]": {("pkg/calc.py", 4)},
    }


def test_read_coverage_refuses_symlinks_and_other_files(tmp_path: Path) -> None:
    root = repo(tmp_path)
    with pytest.raises(CoverageDataError, match="no coverage data"):
        read_coverage(tmp_path / "missing", root)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "missing")
    with pytest.raises(CoverageDataError):
        read_coverage(link, root)
    junk = tmp_path / "junk"
    junk.write_bytes(os.urandom(64))
    with pytest.raises(CoverageDataError):
        read_coverage(junk, root)
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE file (id integer, path text)")
    conn.close()
    with pytest.raises(CoverageDataError, match=r"not coverage\.py data"):
        read_coverage(other, root)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100)
    with pytest.raises(CoverageDataError, match="over 10"):
        read_coverage(big, root, max_bytes=10)


CACHE_SOURCE = """\
class Cache:
    def __setitem__(self, key, value):
        maxsize = self.maxsize
        size = self.getsizeof(value)
        if (
            size >= maxsize
            or key is None
        ):
            raise ValueError("value too large")
        self.data[key] = value

    def get(self, key):
        if key in self.data:
            return self.data[key]
        else:
            raise KeyError(key)

    def check(self):
        raise RuntimeError("always")
"""


def test_the_guard_of_a_raise_in_a_traceback_is_suspected_with_it() -> None:
    """cachetools with ``size >= maxsize``: the failing tests' tracebacks end at the
    ``raise ValueError``, which no edit can fix; the decision to raise is the ``if``."""
    files = {"src/cache.py": CACHE_SOURCE}
    report = (
        'File "/w/src/cache.py", line 9, in __setitem__\n    raise ValueError("value too large")'
    )
    suspects = from_failures([result("tests/test_c.py::test_fit", "failed", report)], files)

    scores = {s.line: s.score for s in suspects}
    assert scores[9] == 1.0
    assert scores[6] == scores[7] == pytest.approx(GUARD_SHARE)  # the condition's lines
    # where the names the condition reads were bound: as likely wrong as the test
    assert scores[3] == scores[4] == pytest.approx(ARGUMENT_SHARE)
    assert set(scores) == {3, 4, 6, 7, 9}  # nothing else
    # a raise in an ``else``: the ``if`` decided that too; a raise with no guard: itself
    in_else = from_issue_text(
        'Traceback (most recent call last):\n  File "src/cache.py", line 16, in get\n', files
    )
    assert {s.line for s in in_else} == {13, 16}
    alone = from_issue_text(
        'Traceback (most recent call last):\n  File "src/cache.py", line 19, in check\n', files
    )
    assert {s.line for s in alone} == {19}


def suspected_from(files: dict[str, str], line: int) -> dict[int, float]:
    """Suspects (line → score) of one failing test whose traceback ends at ``line`` of the
    only file in ``files``."""
    (path,) = files
    report = f'File "/w/{path}", line {line}, in f\n'
    found = from_failures([result("tests/test_x.py::test_x", "failed", report)], files)
    return {s.line: s.score for s in found}


def test_the_test_deciding_a_frames_line_is_suspected_with_it() -> None:
    """cachetools with ``while self.currsize + 1 >= maxsize: self.popitem()``: the
    tracebacks of the keys evicted too early go through ``self.popitem()``, which holds
    nothing to edit; xmltodict's ``if len(self.path) >= self.item_depth:`` ran the
    caller's callback for items it should not have. A test that only asks a builtin
    decides like any other; a frame on the test itself has no guard of its own."""
    source = (
        "class Cache:\n"
        "    def __setitem__(self, key, value):\n"
        "        while self.currsize + 1 >= self.maxsize:\n"
        "            self.popitem()\n"
        "        if len(self.path) >= self.depth:\n"
        "            self.callback(self.path, key)\n"
        "        self.data[key] = value\n"
    )
    files = {"src/cache.py": source}
    assert suspected_from(files, 4) == {4: 1.0, 3: pytest.approx(GUARD_SHARE)}
    assert suspected_from(files, 6) == {6: 1.0, 5: pytest.approx(GUARD_SHARE)}
    assert suspected_from(files, 7) == {7: 1.0}
    assert suspected_from(files, 3) == {3: 1.0}


def test_the_guard_of_a_recursive_call_in_a_runaway_recursion_is_as_suspect() -> None:
    """dotmap's ``__str__`` with ``if id(v) not in seen:`` recursed until RecursionError:
    the traceback repeats the recursive call, and the guard that let it through is as
    suspect as the call. A frame seen once keeps its guard at the usual share."""
    source = (
        "class Map:\n"
        "    def show(self, seen):\n"
        "        for v in self.values:\n"
        "            if id(v) not in seen:\n"
        "                v.show(seen)\n"
    )
    files = {"pkg/map.py": source}
    frame = 'File "/w/pkg/map.py", line 5, in show\n    v.show(seen)\n'
    runaway = from_failures(
        [result("tests/test_m.py::test_cycle", "failed", frame * 3 + "RecursionError\n")], files
    )
    assert {s.line: s.score for s in runaway} == {5: 1.0, 4: 1.0}
    assert suspected_from(files, 5) == {5: 1.0, 4: pytest.approx(GUARD_SHARE)}


DECODER = (
    "def decode_string(read, length):\n"
    "    raw = read(length)\n"
    "    if len(raw) <= length:\n"
    "        raise DecoderError('String too short')\n"
    "    return raw\n"
    "\n"
    "\n"
    "def load(fp):\n"
    "    try:\n"
    "        return decode_string(fp.read, 3)\n"
    "    except DecoderError as ex:\n"
    "        raise_from(DecoderError(ex.args[0], position=fp.tell()), ex)\n"
)


def test_an_exception_that_translates_an_earlier_one_weighs_less_than_its_cause() -> None:
    """py-ubjson's ``load`` turns every ``DecoderError`` into one with a position: read as
    one traceback, that handler line was the innermost frame and came first; the guard
    that raised "String too short" took 24 sandbox runs to reach."""
    report = (
        "ubjson/decoder.py:10: in load\n"
        "    return decode_string(fp.read, 3)\n"
        ">       raise DecoderError('String too short')\n"
        "ubjson/decoder.py:4: DecoderError\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "test/test.py:51: in test_string\n"
        "ubjson/decoder.py:12: in load\n"
        "<string>:2: DecoderError\n"
    )
    suspects = from_failures(
        [result("test/test.py::test_string", "failed", report)], {"ubjson/decoder.py": DECODER}
    )
    scores = {s.line: s.score for s in suspects}
    assert scores[4] == 1.0 and scores[3] == pytest.approx(GUARD_SHARE)
    assert scores[12] == pytest.approx(TRANSLATION_SHARE)
    assert lines_of(suspects)[0] == ("ubjson/decoder.py", 4)


def test_an_exception_raised_while_handling_another_for_its_own_reason_keeps_its_weight() -> None:
    """A handler whose own line fails (a name it never bound) holds that bug; it does not
    translate the exception it caught. In an issue's Python traceback alike."""
    source = DECODER.replace(
        "raise_from(DecoderError(ex.args[0], position=fp.tell()), ex)", "log(pos)"
    )
    issue = (
        "Traceback (most recent call last):\n"
        '  File "/w/ubjson/decoder.py", line 4, in decode_string\n'
        "DecoderError: String too short\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/w/ubjson/decoder.py", line 12, in load\n'
        "NameError: name 'pos' is not defined\n"
    )

    def traceback_scores(source: str) -> dict[int, float]:
        suspects = from_issue_text(issue, {"ubjson/decoder.py": source})
        return {s.line: s.score for s in suspects if s.why == "traceback in the issue"}

    assert traceback_scores(source)[12] == 1.0 and traceback_scores(source)[4] == 1.0
    translated = traceback_scores(DECODER)
    assert translated[12] == pytest.approx(TRANSLATION_SHARE) and translated[4] == 1.0


def test_where_a_raises_guard_got_its_names_is_suspected_with_it() -> None:
    """bitmath's ``parse_string('10MiB')`` raised "not a valid unit" for "iB": the
    guard read ``unit``, bound three lines up by ``s[index + 1:]`` (in no frame, 37
    sandbox runs). A parameter the guard reads is its callers' to answer for."""
    source = (
        "def parse(s, units):\n"
        "    index = s.find('M')\n"
        "    val, unit = s[:index], s[index + 1:]\n"
        "    if unit not in units:\n"
        "        raise ValueError(unit)\n"
        "    return float(val)\n"
    )
    assert suspected_from({"pkg/parse.py": source}, 5) == {
        5: 1.0,
        4: pytest.approx(GUARD_SHARE),
        3: pytest.approx(ARGUMENT_SHARE),
    }


def test_a_guard_that_calls_out_is_not_suspected_for_its_raise() -> None:
    """``if slot.overlaps(existing): raise ConflictError``: the answer is ``overlaps``'s."""
    source = (
        "def book(slots, slot):\n"
        "    for existing in slots:\n"
        "        if slot.overlaps(existing):\n"
        "            raise ConflictError(slot)\n"
    )
    report = 'File "/w/booking.py", line 4, in book\n'
    suspects = from_failures(
        [result("tests/test_b.py::test_book", "failed", report)], {"booking.py": source}
    )
    assert lines_of(suspects) == [("booking.py", 4)]


def test_a_guard_that_looks_a_value_up_decides_with_the_codes_own_values() -> None:
    """intelhex raised AddressOverlapError under ``if not self._buf.get(addr) is None:``
    with ``addr = bin[1]*256 + bin[1]`` (for ``bin[2]``) fifteen lines up: a dict's
    ``get`` runs no code of the project's, so the guard and where ``addr`` came from are
    suspected as for ``len`` (not fixed in 60 sandbox runs before; 20th after)."""
    source = (
        "def decode(self, bin):\n"
        "    addr = bin[1] * 256 + bin[1]\n"
        "    for i in range(4):\n"
        "        if not self._buf.get(addr, None) is None:\n"
        "            raise AddressOverlapError(addr)\n"
        "        self._buf[addr] = bin[i]\n"
    )
    assert suspected_from({"intelhex/__init__.py": source}, 5) == {
        5: 1.0,
        4: pytest.approx(GUARD_SHARE),
        2: pytest.approx(ARGUMENT_SHARE),
    }


WALKER_SOURCE = """\
class Walker:
    @staticmethod
    def walk(start, end):
        common = Walker.__calc_common(start.path, end.path)
        size = len(common)
        if start is common[-1]:
            return (), common[-1], size
        return start.path[size:], common[-1], size

    @staticmethod
    def __calc_common(start, end):
        return tuple(si for si, ei in zip(start, end) if si is not ei)
"""


def test_where_a_value_the_failing_line_indexes_came_from_is_suspected() -> None:
    """anytree's ``if start is common[-1]:`` raised IndexError: ``common`` was empty,
    made two lines up by a helper of the class whose ``if si is not ei`` (for ``is``)
    kept nothing. The line binding it is suspected as a raise's guard sources are, and
    the helper's return, one call further, a little less (not fixed in 60 runs before).
    A runaway recursion keeps to its call and guard."""
    report = 'File "/w/anytree/walker.py", line 6, in walk\nIndexError: tuple index out of range\n'
    suspects = from_failures(
        [result("tests/test_walker.py::test_walker", "failed", report)],
        {"anytree/walker.py": WALKER_SOURCE},
    )
    scores = {s.line: s.score for s in suspects}
    assert scores == {
        6: 1.0,
        4: pytest.approx(ARGUMENT_SHARE),
        12: pytest.approx(ARGUMENT_SHARE * 0.8),
    }


def test_where_a_value_unpacked_into_the_failing_call_came_from_is_suspected() -> None:
    """petl's ``asnamedtuple`` padded a short row with ``(missing,) * (na - ne)`` for
    ``(ne - na)``, and ``nt(*padded)`` a line below raised TypeError (too few
    arguments): the line that built ``padded`` is suspected as an indexed value's source
    is. A name passed whole is the call's own choice and points nowhere."""
    source = (
        "def asnamedtuple(nt, row, missing=None):\n"
        "    ne = len(nt._fields)\n"
        "    na = len(row)\n"
        "    padded = tuple(row) + (missing,) * (na - ne)\n"
        "    options = {'rename': True}\n"
        "    kept = list(row)\n"
        "    return nt(*padded, **options), kept\n"
    )
    report = 'File "/w/petl/util/base.py", line 7, in asnamedtuple\nTypeError: missing 1\n'
    suspects = from_failures(
        [result("tests/test_base.py::test_short_rows", "failed", report)],
        {"petl/util/base.py": source},
    )
    scores = {s.line: s.score for s in suspects}
    assert scores == {
        7: 1.0,
        4: pytest.approx(ARGUMENT_SHARE),
        5: pytest.approx(ARGUMENT_SHARE),
    }


def test_a_callers_argument_sources_are_suspected_when_a_library_turns_a_value_down() -> None:
    """rstr with ``if char in list(exclude)`` (for ``not in``): ``random.choice`` raised
    IndexError on the empty population two calls in, past the repository's frames; the
    filter that emptied it was in no frame (48 sandbox runs)."""
    source = (
        "import random\n"
        "\n"
        "def sample(population, k):\n"
        "    return [random.choice(population) for _ in range(k)]\n"
        "\n"
        "def rstr(alphabet, exclude, k):\n"
        "    popul = [c for c in alphabet if c in exclude]\n"
        "    return ''.join(sample(popul, k))\n"
    )
    report = (
        'File "/w/rstr/base.py", line 8, in rstr\n'
        'File "/w/rstr/base.py", line 4, in sample\n'
        'File "/usr/lib/python3.11/random.py", line 373, in choice\n'
        "IndexError: list index out of range\n"
    )
    suspects = from_failures(
        [result("tests/test_rstr.py::test_exclude", "failed", report)], {"rstr/base.py": source}
    )
    scores = {s.line: s.score for s in suspects}
    assert scores == {4: 1.0, 8: pytest.approx(0.8), 7: pytest.approx(0.8 * ARGUMENT_SHARE)}


def test_an_assert_in_the_code_is_a_raise_whose_test_is_its_guard() -> None:
    """An ``assert`` that fails raises as a ``raise`` under ``if not …`` does: the names
    its test reads were bound by lines as suspect as the assert, and callers' argument
    sources are suspected with the call."""
    source = (
        "def walk(start, end):\n"
        "    common = calc_common(start, end)\n"
        "    assert common[0] is start\n"
        "    return common\n"
        "\n"
        "\n"
        "def calc_common(start, end):\n"
        "    return tuple(s for s in start if s is not end)\n"
    )
    assert suspected_from({"pkg/walker.py": source}, 3) == {
        3: 1.0,
        2: pytest.approx(ARGUMENT_SHARE),
        8: pytest.approx(ARGUMENT_SHARE * 0.8),
    }


def test_a_guard_calling_a_function_of_its_module_suspects_what_that_returns() -> None:
    """idna with ``len(label) < 63``: ``if not valid_label_length(label_bytes): raise
    IDNAError("Label too long")`` holds nothing to edit, and its answer is the module's
    own predicate. A ``self.`` method of the class answers the same way; a callee with
    many returns says too little to point at one."""
    source = (
        "def valid_label_length(label):\n"  # 1
        '    """At most 63 octets."""\n'
        "    return len(label) < 63\n"  # 3
        "\n"
        "def alabel(label):\n"  # 5
        "    if not valid_label_length(label):\n"
        '        raise IDNAError("Label too long")\n'  # 7
        "    if not pick(label):\n"
        "        raise IDNAError(label)\n"  # 9
        "\n"
        "class Codec:\n"
        "    def ok(self, data):\n"  # 12
        "        if data is None:\n"
        "            return False\n"  # 14
        "        return bool(data)\n"  # 15
        "\n"
        "    def encode(self, data):\n"
        "        if not self.ok(data):\n"  # 18
        "            raise ValueError(data)\n"  # 19
        "\n"
        "def pick(x):\n"  # 21
        "    if x == 1:\n"
        "        return 1\n"
        "    if x == 2:\n"
        "        return 2\n"
        "    if x == 3:\n"
        "        return 3\n"
        "    return 4\n"
    )
    files = {"idna/core.py": source}
    suspected = functools.partial(suspected_from, files)
    assert suspected(7) == {7: 1.0, 3: pytest.approx(GUARD_SHARE)}
    assert suspected(19) == {
        19: 1.0,
        14: pytest.approx(GUARD_SHARE),
        15: pytest.approx(GUARD_SHARE),
    }
    assert suspected(9) == {9: 1.0}  # four returns: no one of them is the answer


VERSION_SOURCE = """\
def parse(text):
    if not text[:1].isdigit():
        raise ValueError(f"{text!r} is not a version")
    return tuple(text.split("."))


def match(version, expr):
    if expr[:2] in (">=", "<="):
        wanted = expr[2:]
    elif expr[:1] in "<>":
        wanted = expr[2:]
    else:
        wanted = expr
    other = parse(wanted)
    return version > other
"""


def test_a_callers_argument_sources_are_suspected_when_the_innermost_frame_raises() -> None:
    """semver with ``match_expr[2:]`` for a one-character operator: ``parse`` turns the
    ".0.0" down two frames in; the slice that made it is in no frame."""
    report = (
        'File "/w/ver.py", line 14, in match\n    other = parse(wanted)\n'
        'File "/w/ver.py", line 3, in parse\n    raise ValueError(f"{text!r} is not a version")'
    )
    suspects = from_failures(
        [result("tests/test_v.py::test_gt", "failed", report)], {"ver.py": VERSION_SOURCE}
    )

    scores = {s.line: s.score for s in suspects}
    assert scores[3] == 1.0
    assert scores[14] == pytest.approx(0.8)
    # every place ``wanted`` was bound before the call, a little less than the call
    assert scores[9] == scores[11] == scores[13] == pytest.approx(0.8 * ARGUMENT_SHARE)
    # and the guard, which asks a string method of the code's own value
    assert scores[2] == pytest.approx(GUARD_SHARE)
    assert set(scores) == {2, 3, 9, 11, 13, 14}


def test_argument_sources_are_not_suspected_when_the_innermost_frame_does_not_raise() -> None:
    report = (
        'File "/w/ver.py", line 14, in match\n    other = parse(wanted)\n'
        'File "/w/ver.py", line 4, in parse\n    return tuple(text.split("."))'
    )
    suspects = from_failures(
        [result("tests/test_v.py::test_gt", "failed", report)], {"ver.py": VERSION_SOURCE}
    )

    assert {s.line for s in suspects} == {4, 14}


EMIT_SOURCE = """\
def emit(out, depth, pretty):
    out.append("<a/>")
    if pretty and depth > 1:
        out.append("\\n")
    if depth:
        if len(out) > 3:
            out.append("!")
"""


def test_the_test_of_an_if_scores_with_the_lines_it_decides_to_run() -> None:
    """xmltodict with ``if pretty and depth > 1:``: the newline runs only in passing tests
    of deeper levels, wrongly skipped at the top; the condition runs everywhere."""
    spectrum = {
        "tests.test_e.test_top": {("emit.py", 1), ("emit.py", 2), ("emit.py", 3)},
        "tests.test_e.test_deep": {("emit.py", n) for n in (1, 2, 3, 4, 5, 6, 7)},
        "tests.test_e.test_flat": {("emit.py", n) for n in (1, 2, 3, 5)},
    }
    failed, passed = (
        {"tests/test_e.py::test_top"},
        {
            "tests/test_e.py::test_deep",
            "tests/test_e.py::test_flat",
        },
    )
    failing_only = {
        "tests.test_e.test_fail": {("emit.py", n) for n in (1, 2, 3, 4, 5, 6, 7)},
        "tests.test_e.test_flat": {("emit.py", n) for n in (1, 2, 3, 5)},
    }
    plain = {s.line: s.score for s in ochiai(failing_only, {"test_fail"}, {"test_flat"})}
    lifted = {
        s.line: s
        for s in ochiai(failing_only, {"test_fail"}, {"test_flat"}, {"emit.py": EMIT_SOURCE})
    }

    assert plain[4] == plain[6] == plain[7] == pytest.approx(1.0)
    assert plain[3] == pytest.approx(1 / math.sqrt(2))
    # line 3 decides whether line 4 runs: 0.75 of it, above its own 0.71
    assert lifted[3].score == pytest.approx(GUARD_SHARE)
    assert lifted[3].why == "ochiai 0.75 (decides whether line 4 runs)"
    # a test that calls out (``len(out) > 3``) is not lifted; a nested if's own line is
    assert lifted[6].score == pytest.approx(1.0)
    assert lifted[5].score == pytest.approx(GUARD_SHARE)
    # a line no failing test ran is not made a suspect by what it decides
    assert {s.line for s in ochiai(spectrum, failed, passed, {"emit.py": EMIT_SOURCE})} == {
        1,
        2,
        3,
    }


ORDERED_SOURCE = """\
def add_ordered(machine, states):
    states = list(states)
    for i in range(1, len(states) - 1):
        machine.add(states[i], states[i + 1])
    for state in machine.pending():
        machine.check(state)
"""


def test_the_iterable_of_a_for_scores_with_the_body_it_runs() -> None:
    """transitions' ``add_ordered_transitions`` with ``range(0, …)`` made ``range(1, …)``:
    the loop body ran in fewer passing tests than the rest of the function, and the range
    that decides how often it runs was one of the function's many lines, past the plan's
    60 runs. An iterable that calls out (``machine.pending()``) is not lifted."""
    spectrum = {
        "tests.test_o.test_three": {("o.py", n) for n in (2, 3, 4, 5, 6)},
        "tests.test_o.test_two": {("o.py", n) for n in (2, 3, 5)},
    }
    files = {"o.py": ORDERED_SOURCE}

    plain = {s.line: s.score for s in ochiai(spectrum, {"test_three"}, {"test_two"})}
    lifted = {s.line: s for s in ochiai(spectrum, {"test_three"}, {"test_two"}, files)}

    assert plain[4] == pytest.approx(1.0) and plain[3] == pytest.approx(1 / math.sqrt(2))
    assert lifted[3].score == pytest.approx(LOOP_SHARE * plain[4])
    assert lifted[3].why == f"ochiai {LOOP_SHARE:.2f} (decides whether line 4 runs)"
    assert lifted[5].score == pytest.approx(plain[5])


def test_the_test_of_a_while_scores_with_the_body_it_runs() -> None:
    """webcolors' legacy colour parser with ``... and green[0] == "0" or blue[0] == "0"``
    in ``while length > 2 and (...)``: the body that strips a zero ran in the failing
    tests, the ``while`` line in every test; the test came past the plan's 60 runs."""
    source = (
        "def strip(red, blue, length):\n"
        "    while length > 2 and (red[0] == '0' or blue[0] == '0'):\n"
        "        red, blue = red[1:], blue[1:]\n"
        "        length -= 1\n"
        "    return red, blue\n"
    )
    spectrum = {
        "tests.test_s.test_junk": {("s.py", n) for n in (2, 3, 4, 5)},
        "tests.test_s.test_plain": {("s.py", n) for n in (2, 5)},
    }
    plain = {s.line: s.score for s in ochiai(spectrum, {"test_junk"}, {"test_plain"})}
    lifted = {s.line: s for s in ochiai(spectrum, {"test_junk"}, {"test_plain"}, {"s.py": source})}

    assert plain[3] == pytest.approx(1.0) and plain[2] == pytest.approx(1 / math.sqrt(2))
    assert lifted[2].score == pytest.approx(LOOP_SHARE * plain[3])
    assert lifted[5].score == pytest.approx(plain[5])


def test_an_elif_block_is_decided_by_every_test_before_it_in_its_chain() -> None:
    """u-msgpack-python with ``if obj > -32:`` (for ``>=``): -32 fell through to ``elif
    obj >= -128:`` and was packed as an int8. The int8 line ran in the failing test, and
    the ``if`` above, whose "no" sent it there, came 57th. An ``else`` block is decided
    by the whole chain too; a block's own lines are not lifted by a test after them."""
    source = (
        "def pack(obj, out):\n"
        "    if obj > -32:\n"
        "        out.append(obj)\n"
        "    elif obj >= -128:\n"
        "        out.append(208)\n"
        "    else:\n"
        "        out.append(209)\n"
    )
    spectrum = {
        "tests.test_p.test_minus_32": {("p.py", n) for n in (2, 4, 5)},
        "tests.test_p.test_zero": {("p.py", n) for n in (2, 3)},
        "tests.test_p.test_minus_200": {("p.py", n) for n in (2, 4, 7)},
    }
    failed, passed = {"test_minus_32"}, {"test_zero", "test_minus_200"}
    plain = {s.line: s.score for s in ochiai(spectrum, failed, passed)}
    lifted = {s.line: s for s in ochiai(spectrum, failed, passed, {"p.py": source})}

    assert plain[5] == pytest.approx(1.0)
    assert lifted[4].score == lifted[2].score == pytest.approx(GUARD_SHARE)
    assert lifted[2].why == "ochiai 0.75 (decides whether line 5 runs)"
    assert 3 not in lifted and 7 not in lifted


@pytest.mark.parametrize(
    ("path", "is_example"),
    [
        ("examples/app.py", True),
        ("pony/orm/examples/university1.py", True),
        ("docs/conf.py", True),
        ("demo/run.py", True),
        ("presentations/dask/badmath.py", True),  # eliot's talks' demo scripts
        ("tutorial/step1.py", True),
        ("pkg/example.py", False),  # a module named so, not a folder of examples
        ("pkg/examples_util.py", False),
    ],
)
def test_is_example_path(path: str, is_example: bool) -> None:
    assert is_example_path(path) is is_example


OFFSET_SOURCE = """\
class FixedOffset:
    def __init__(self, hours, minutes):
        self.minutes = hours * 60 + minutes

    def __repr__(self):
        return f"<FixedOffset {self.minutes}>"
"""


def test_a_method_that_shows_a_value_weighs_less_in_the_spectrum() -> None:
    """isodate's ``FixedOffset.__repr__`` runs only when pytest shows a failed assertion's
    values: it ranked above the sign bug that made the offset wrong."""
    spectrum = {
        "tests.test_tz.test_negative": {("tz.py", 3), ("tz.py", 6)},
        "tests.test_tz.test_positive": {("tz.py", 3)},
    }
    plain = {s.line: s.score for s in ochiai(spectrum, {"test_negative"}, {"test_positive"})}
    read = {
        s.line: s
        for s in ochiai(spectrum, {"test_negative"}, {"test_positive"}, {"tz.py": OFFSET_SOURCE})
    }

    assert plain[6] == pytest.approx(1.0)
    assert read[6].score == pytest.approx(REPORT_SHARE)
    assert read[6].why == "ochiai 1.00 (shows a value: 0.50)"
    assert read[3].score == plain[3]  # the rest is untouched


MATCHER_SOURCE = """\
class IsCloseTo:
    def _matches(self, item):
        return abs(item - self.value) < self.delta

    def describe_to(self, description):
        description.append_text("a numeric value within ")

    def describe_mismatch(self, item, description):
        description.append_text("was ").append_description_of(item)
"""


def test_a_matcher_describing_a_failed_match_weighs_less_in_the_spectrum() -> None:
    """pyhamcrest's ``close_to`` with ``<=`` made ``<``: ``describe_to`` and
    ``describe_mismatch`` run only to word the failure, and outranked the comparison."""
    spectrum = {
        "tests.test_close.test_at_delta": {("close.py", 3), ("close.py", 6), ("close.py", 9)},
        "tests.test_close.test_within": {("close.py", 3)},
    }
    files = {"close.py": MATCHER_SOURCE}

    read = {s.line: s.score for s in ochiai(spectrum, {"test_at_delta"}, {"test_within"}, files)}

    assert read[6] == pytest.approx(REPORT_SHARE)
    assert read[9] == pytest.approx(REPORT_SHARE)
