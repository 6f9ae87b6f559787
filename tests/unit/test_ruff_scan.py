"""Ruff findings on added lines: these run the real ruff of the virtualenv."""

from __future__ import annotations

import difflib
import importlib.util
import shutil
import sys
import uuid
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest

from tests.unit.test_tolerant_parse import NESTED_QUOTES
from workers.review import ruff_scan
from workers.review.diff_model import DiffModel
from workers.review.findings import Finding
from workers.review.python_version import DeclaredPython
from workers.review.ruff_scan import RuffUnavailable, rule_severity, run_ruff
from workers.review.ruff_suppressions import ignored_on_line
from workers.review.version_guards import collected_from


def diff_of(changes: dict[str, tuple[str, str]]) -> DiffModel:
    """A DiffModel from (old text, new text) per path, as ``git diff`` would show it."""
    chunks: list[str] = []
    for path, (old, new) in changes.items():
        chunks += difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            "/dev/null" if not old else f"a/{path}",
            "/dev/null" if not new else f"b/{path}",
        )
    return DiffModel.from_unified("".join(chunks))


def scan(changes: dict[str, tuple[str, str]]) -> list[Finding]:
    return run_ruff({path: new for path, (_old, new) in changes.items()}, diff_of(changes))


def test_only_added_lines_are_reported() -> None:
    old = "import os\n\nVALUE = 1\n"
    new = "import os\nimport sys\n\nVALUE = 1\n"

    findings = scan({"pkg/mod.py": (old, new)})

    assert [(f.path, f.line, f.side, f.pattern) for f in findings] == [
        ("pkg/mod.py", 2, "RIGHT", "ruff:F401")
    ]
    assert findings[0].code == "import sys"
    assert findings[0].source == "ruff"


def test_patterns_and_severities() -> None:
    new = (
        "def f(items=[]):\n"  # B006
        "    return eval(items)\n"  # S307
        "\n"
        "\n"
        "x = undefined_name\n"  # F821
        "y = dict()\n"  # C408
    )

    findings = scan({"a.py": ("", new)})

    assert {(f.line, f.pattern, f.severity) for f in findings} == {
        (1, "ruff:B006", "medium"),
        (2, "ruff:S307", "high"),
        (5, "ruff:F821", "high"),
        (6, "ruff:C408", "low"),
    }


@pytest.mark.parametrize(
    ("code", "severity"),
    [
        ("F821", "high"),
        ("F811", "high"),
        ("F632", "high"),
        ("F706", "high"),
        ("E999", "high"),
        ("PLE0101", "high"),
        ("S608", "high"),
        ("S101", "low"),
        ("S110", "low"),
        ("S112", "low"),
        ("S606", "low"),
        ("S605", "high"),
        ("S104", "medium"),  # binding to 0.0.0.0, bandit's medium
        ("S108", "medium"),  # bandit's own rating: a fixed /tmp path, urlopen, no timeout
        ("S310", "medium"),
        ("S113", "medium"),
        ("S301", "medium"),
        ("S314", "medium"),
        ("S311", "low"),
        ("S312", "high"),
        ("S307", "high"),  # eval
        ("S304", "high"),  # a broken cipher
        ("B023", "medium"),
        ("B009", "low"),  # getattr with a constant: style, often for a type checker
        ("B010", "low"),
        ("ASYNC230", "medium"),
        ("DTZ005", "medium"),
        ("PLW0120", "medium"),
        ("PLW0108", "low"),  # a lambda kept for late lookup is not a likely bug
        ("RUF006", "medium"),
        ("RUF012", "medium"),
        ("F401", "low"),
        ("PERF401", "low"),
        ("SIM118", "low"),
        ("UP006", "low"),
        ("UP005", "medium"),  # removed in Python 3.12
        ("ZZZ123", "low"),
    ],
)
def test_rule_severity(code: str, severity: str) -> None:
    assert rule_severity(code) == severity


def test_a_removed_unittest_alias_says_where_it_fails() -> None:
    """parameterized 0.9's tests call ``self.assertRaisesRegexp``: "deprecated", says the
    rule, but Python 3.12 removed it, and the test errors there. A warning that says so,
    in test code too."""
    source = (
        "import unittest\n\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_x(self):\n"
        "        with self.assertRaisesRegexp(ValueError, 'bad'):\n"
        "            int('x')\n"
    )
    (finding,) = [f for f in scan({"tests/test_x.py": ("", source)}) if f.pattern == "ruff:UP005"]

    assert finding.severity == "medium"
    assert "raises AttributeError" in finding.message


def test_an_import_with_an_import_error_fallback_is_no_deprecated_import_remark() -> None:
    """parameterized 0.9 tries ``unittest.mock`` first and falls back to the ``mock``
    backport, and imports the backport where it is installed to read its version: UP026's
    "use ``unittest.mock``" is what the code already does. A plain ``import mock`` keeps
    the remark."""
    source = (
        "try:\n"
        "    from unittest import mock\n"
        "except ImportError:\n"
        "    import mock\n"
        "try:\n"
        "    import mock as _backport\n"
        "except ImportError:\n"
        "    _backport = None\n"
        "import mock as plain\n"
        "print(mock, _backport, plain)\n"
    )
    found = scan({"pkg/compat.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:UP026"] == [9]


def test_a_field_specifier_as_a_dataclass_default_is_no_remark() -> None:
    """desert's ``x: datetime = desert.field(NaiveDateTime())`` returns a
    ``dataclasses.field``; a call that makes a value still draws RUF009."""
    source = (
        "import dataclasses\n\nimport desert\n\n\n"
        "@dataclasses.dataclass\n"
        "class A:\n"
        "    x: datetime = desert.field(NaiveDateTime())\n"
        "    y: Config = config_field(default=1)\n"
        "    z: list = make_list()\n"
    )
    found = scan({"pkg/models.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF009"] == [10]


def test_a_comparison_of_an_operator_dsl_is_no_pointless_comparison() -> None:
    """grappa's tests: ``error | should.raise_error(AssertionError) > should.equal('foo')``
    does its work in the overloaded operators. A forgotten ``assert`` keeps B015."""
    source = (
        "def test_raises(should, error, result):\n"
        "    error | should.raise_error(AssertionError) > should.equal('foo')\n"
        "    result.count() == 3\n"
    )
    found = scan({"tests/raises_test.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B015"] == [3]


def test_a_file_left_open_by_a_scripts_main_block_is_minor() -> None:
    """hexdump's command line: ``hexdump(open(args[0], 'rb'))`` under ``if __name__ ==
    '__main__':`` runs once, and the exit closes the file; so does a build script's. In
    a function it stays a warning."""
    source = (
        "import sys\n\n\n"
        "def dump(path):\n"
        "    f = open(path, 'rb')\n"
        "    return f.read()\n\n\n"
        "if __name__ == '__main__':\n"
        "    f = open(sys.argv[1], 'rb')\n"
        "    print(f.read())\n"
    )
    found = scan({"hexdump.py": ("", source)})
    setup = scan({"setup.py": ("", "from setuptools import setup\n\nf = open('README.md')\n")})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:SIM115"] == [
        (5, "medium"),
        (10, "low"),
    ]
    # setup.py's long_description read (lunardate 0.3): the build's one run
    assert [(f.line, f.severity) for f in setup if f.pattern == "ruff:SIM115"] == [(3, "low")]


def test_an_unused_counter_of_a_range_loop_is_minor() -> None:
    """ping3's tests: ``for round_idx in range(num_rounds):`` repeats a round; an unused
    item of a loop over data stays a warning."""
    source = (
        "def rounds(n, items):\n"
        "    for round_idx in range(n):\n"
        "        print('round')\n"
        "    for item in items:\n"
        "        print('item')\n"
    )
    found = scan({"pkg/rounds.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:B007"] == [
        (2, "low"),
        (4, "medium"),
    ]


def test_an_unused_item_of_a_loop_that_counts_the_items_is_minor() -> None:
    """minio's tests: ``for bucket in buckets: count += 1`` counts what a listing gave;
    the count is the point. A loop that adds anything else stays a warning."""
    source = (
        "def counts(buckets, items):\n"
        "    count = 0\n"
        "    for bucket in buckets:\n"
        "        count += 1\n"
        "    total = 0\n"
        "    for item in items:\n"
        "        total += count\n"
        "    for result in items:\n"
        "        pass\n"
        "    return count, total\n"
    )
    found = scan({"pkg/counts.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:B007"] == [
        (3, "low"),
        (6, "medium"),
        (8, "low"),  # gql's tests drain a subscription: the iterating is the point
    ]


def test_an_unused_name_unpacked_beside_used_ones_is_minor() -> None:
    """pefile's tests: ``for root, dirs, files in os.walk(directory):`` reads two of the
    three; the loop is used, the name left over is a rename to ``_dirs``. A loop none of
    whose names is read stays a warning."""
    source = (
        "import os\n\n\n"
        "def walk(top, pairs):\n"
        "    for root, dirs, files in os.walk(top):\n"
        "        print(root, files)\n"
        "    for key, (value, extra) in pairs:\n"
        "        print(value)\n"
        "    for key, value in pairs:\n"
        "        print('pair')\n"
    )
    found = scan({"pkg/walk.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:B007"] == [
        (5, "low"),
        (7, "low"),
        (9, "medium"),
    ]


def test_raising_a_cli_frameworks_usage_error_from_a_caught_one_is_no_b904() -> None:
    """webvtt-py's argparse types: ``except ValueError: raise
    argparse.ArgumentTypeError(f'invalid duration: {value!r}')``. argparse catches it and
    prints its message alone, and click's BadParameter or a SystemExit the same: no
    traceback shows the chain ``from err`` would keep. Any other exception stays a B904."""
    source = (
        "import argparse\n"
        "import click\n\n\n"
        "def duration(value):\n"
        "    try:\n"
        "        return int(value)\n"
        "    except ValueError:\n"
        "        raise argparse.ArgumentTypeError(f'invalid duration: {value!r}')\n\n\n"
        "def port(value):\n"
        "    try:\n"
        "        return int(value)\n"
        "    except ValueError:\n"
        "        raise click.BadParameter('not a port')\n\n\n"
        "def parse(value):\n"
        "    try:\n"
        "        return int(value)\n"
        "    except ValueError:\n"
        "        raise RuntimeError('not a number')\n"
    )
    found = scan({"pkg/cli.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B904"] == [23]


def test_a_raise_in_a_handler_under_pytest_raises_is_no_b904() -> None:
    """exceptiongroup's tests raise in an ``except`` inside ``with pytest.raises(…)`` to
    see what the new exception's ``__context__`` holds: the chain is what they test."""
    source = (
        "import pytest\n\n\n"
        "def test_context():\n"
        "    with pytest.raises(KeyError):\n"
        "        try:\n"
        "            raise ValueError\n"
        "        except ValueError:\n"
        "            raise KeyError('k')\n"
        "    try:\n"
        "        int('x')\n"
        "    except ValueError:\n"
        "        raise KeyError('k')\n"
    )
    found = scan({"tests/test_context.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B904"] == [13]


def test_importing_the_debugger_is_no_remark_stopping_in_it_is() -> None:
    """asyncclick's test runner imports ``pdb`` to patch ``pdb.Pdb.__init__``: T100 said
    "Import for `pdb` found". A call that stops in the debugger has its own T100."""
    source = (
        "import pdb\n\n\n"
        "def patch():\n"
        "    pdb.Pdb.__init__ = None\n\n\n"
        "def debug():\n"
        "    pdb.set_trace()\n"
    )
    found = scan({"pkg/testing.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:T100"] == [9]


def test_a_string_value_of_a_literal_ruff_does_not_know_is_no_undefined_name() -> None:
    """defopt re-exports ``typing.Literal``; its tests' ``defopt.Literal[1, "a"]`` drew
    "undefined name ``a``". A forward reference elsewhere keeps its (minor) remark."""
    source = (
        "import defopt\n\n\n"
        "def foo(x: defopt.Literal[1, 'a']):\n"
        "    pass\n\n\n"
        "def bar(y: 'Missing'):\n"
        "    pass\n"
    )
    found = scan({"test_defopt.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:F821"] == [8]


def test_an_argument_rebound_from_itself_is_minor() -> None:
    """asyncclick's ``with _pager_contextmanager(color=color) as (stream, color):``
    resolves the caller's ``color``; a loop that throws the argument away keeps the
    warning."""
    source = (
        "def pager(color=None):\n"
        "    with resolve(color=color) as (stream, color):\n"
        "        print(stream, color)\n\n\n"
        "def scan(item, items):\n"
        "    for item in items:\n"
        "        print(item)\n"
    )
    found = scan({"pkg/termui.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:PLR1704"] == [
        (2, "low"),
        (7, "medium"),
    ]


def test_an_argument_opened_where_the_caller_gave_none_is_minor() -> None:
    """camelot 2's ``if pdf is None: with playa.open(path) as pdf:``: the argument was
    missing and the ``with`` supplies it, as ``x = default`` under ``if x is None`` would
    (which ruff leaves alone). The same ``with`` outside such a test keeps the warning."""
    source = (
        "def pages(path, pdf=None, spec=''):\n"
        "    if pdf is None:\n"
        "        with open(path) as pdf:\n"
        "            return pages(path, pdf)\n"
        "    if not spec:\n"
        "        for spec in ('1', '2'):\n"
        "            print(spec)\n\n\n"
        "def text(path, pdf=None):\n"
        "    with open(path) as pdf:\n"
        "        return pdf.read()\n"
    )
    found = scan({"pkg/handlers.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:PLR1704"] == [
        (3, "low"),
        (6, "low"),
        (11, "medium"),
    ]


def test_root_logger_calls_in_examples_and_tests_are_minor() -> None:
    """flasgger's example apps call ``logging.warning``: a demo has no module logger to
    configure apart. The library's own code keeps the warning."""
    source = "import logging\n\n\ndef view():\n    logging.warning('no spec')\n"
    found = scan(
        {path: ("", source) for path in ("examples/app.py", "tests/test_app.py", "pkg/app.py")}
    )

    assert sorted((f.path, f.severity) for f in found if f.pattern == "ruff:LOG015") == [
        ("examples/app.py", "low"),
        ("pkg/app.py", "medium"),
        ("tests/test_app.py", "low"),
    ]


def test_a_name_kept_alive_with_a_comment_and_a_deliberate_duplicate_in_tests() -> None:
    """pottery's tests: ``basket  # Workaround for Pyflakes.`` uses the name on purpose,
    and ``{'apple', 'orange', 'apple'}`` shows a set keeping one. A bare name without a
    word keeps B018; a duplicate in shipped code stays a warning."""
    source = (
        "def test_basket(make):\n"
        "    basket = make({'apple', 'orange', 'apple'})\n"
        "    basket  # Workaround for Pyflakes.\n"
        "    basket\n"
    )
    found = scan({path: ("", source) for path in ("tests/test_set.py", "pkg/set.py")})

    assert sorted((f.path, f.line) for f in found if f.pattern == "ruff:B018") == [
        ("pkg/set.py", 4),
        ("tests/test_set.py", 4),
    ]
    assert sorted((f.path, f.severity) for f in found if f.pattern == "ruff:B033") == [
        ("pkg/set.py", "medium"),
        ("tests/test_set.py", "low"),
    ]


def test_message_has_code_fix_title_and_docs_link() -> None:
    (finding,) = scan({"a.py": ("", "import os\n")})

    assert finding.message.startswith("**F401** `os` imported but unused")
    assert "Remove unused import: `os`" in finding.message
    assert "(https://docs.astral.sh/ruff/rules/unused-import/)" in finding.message


def test_deleting_fix_becomes_empty_suggestion() -> None:
    old = "VALUE = 1\n"
    new = "import os\nVALUE = 1\n"

    (finding,) = scan({"a.py": (old, new)})

    # An empty GitHub suggestion deletes the commented line.
    assert (finding.line, finding.start_line, finding.suggestion) == (1, None, "")


def test_in_line_fix_becomes_replacement_line() -> None:
    (finding,) = scan({"a.py": ("", 'GREETING = f"hello"\n')})

    assert finding.pattern == "ruff:F541"
    assert finding.suggestion == 'GREETING = "hello"'


def test_a_fix_that_leaves_only_a_noqa_comment_deletes_the_line() -> None:
    """pymoo 0.6.2's ``class HV(Hypervolume): "Alias." / pass  # noqa: E701``: ruff's
    PIE790 fix takes the ``pass`` and keeps the comment, which then silences nothing.
    The suggestion deletes the line; a fix that keeps other code keeps its comment."""
    new = 'class HV(Base):\n    """Alias."""\n\n    pass  # noqa: E701\n'

    (finding,) = [f for f in scan({"a.py": ("", new)}) if f.pattern == "ruff:PIE790"]

    assert (finding.line, finding.suggestion) == (4, "")


def test_fix_over_several_added_lines_is_multi_line_suggestion() -> None:
    new = "from typing import (\n    Dict,\n    List,\n)\n\nVALUE = 1\n"

    findings = [f for f in scan({"a.py": ("", new)}) if f.pattern == "ruff:F401"]

    # Both names' fixes remove the whole statement: one finding over lines 1-4.
    assert [(f.start_line, f.line, f.suggestion) for f in findings] == [(1, 4, "")]
    assert findings[0].code == "    Dict,"


def test_fix_touching_a_context_line_has_no_suggestion() -> None:
    old = "from typing import (\n    Dict,\n)\n\nVALUE: Dict[str, int] = {}\n"
    new = "from typing import (\n    Dict,\n    List,\n)\n\nVALUE: Dict[str, int] = {}\n"

    findings = [f for f in scan({"a.py": (old, new)}) if f.pattern == "ruff:F401"]

    assert [(f.line, f.suggestion) for f in findings] == [(3, None)]


def test_unsafe_fix_has_no_suggestion() -> None:
    (finding,) = scan({"a.py": ("", "def f(items=[]):\n    return items\n")})

    assert finding.pattern == "ruff:B006"
    assert finding.suggestion is None


def test_fix_on_crlf_file_keeps_line_breaks_out_of_suggestion() -> None:
    (finding,) = scan({"a.py": ("", 'A = 1\r\nGREETING = f"hello"\r\n')})

    assert (finding.line, finding.suggestion) == (2, 'GREETING = "hello"')
    assert finding.code == 'GREETING = f"hello"'


def test_fix_joining_lines_includes_the_joined_line() -> None:
    text = "x = (1 +\n     2)\n"
    entry = diff_of({"a.py": ("", text)}).file("a.py")
    assert entry is not None
    join = {
        "applicability": "safe",
        "edits": [
            {
                "content": " ",
                "location": {"row": 1, "column": 9},
                "end_location": {"row": 2, "column": 6},
            }
        ],
    }

    assert ruff_scan._suggestion(text, entry, 1, join) == (1, 2, "x = (1 + 2)")


def test_syntax_error_is_one_high_finding() -> None:
    findings = scan({"broken.py": ("", "def broken(:\n    pass\n")})

    assert [(f.line, f.pattern, f.severity) for f in findings] == [(1, "ruff:syntax-error", "high")]
    assert findings[0].message.startswith("**Syntax error** ")


OPTIONAL = (
    "from typing import Optional, Tuple\n\n\n"
    "def f(a: Optional[int]) -> Tuple[int, int]:\n"
    "    return (a or 0, 1)\n"
)


def test_ruff_lints_for_the_oldest_python_the_repository_supports() -> None:
    """``X | None`` and ``tuple[int]`` are suggested only to a project that can run them."""
    changes = {"a.py": ("", OPTIONAL)}
    files = {"a.py": OPTIONAL}

    default = run_ruff(files, diff_of(changes))
    on_37 = run_ruff(files, diff_of(changes), python=DeclaredPython(7, "setup.cfg"))
    on_310 = run_ruff(files, diff_of(changes), python=DeclaredPython(10, "pyproject.toml"))

    assert {f.pattern for f in default} >= {"ruff:UP045", "ruff:UP006"}
    assert not {f.pattern for f in on_37} & {"ruff:UP045", "ruff:UP006", "ruff:UP035"}
    assert {f.pattern for f in on_310} == {f.pattern for f in default}


def test_syntax_newer_than_the_project_supports_says_where_it_is_declared() -> None:
    source = "def f(x):\n    match x:\n        case 1:\n            return 2\n    return 3\n"
    changes = {"a.py": ("", source)}
    declared = DeclaredPython(9, "requires-python = '>=3.9' in pyproject.toml")

    findings = run_ruff({"a.py": source}, diff_of(changes), python=declared)

    assert [(f.line, f.pattern, f.severity) for f in findings] == [
        (2, "ruff:unsupported-syntax", "medium")
    ]
    assert "Python 3.9" in findings[0].message
    assert "requires-python = '>=3.9' in pyproject.toml" in findings[0].message
    # nothing declared: ruff's default, which takes the syntax
    assert run_ruff({"a.py": source}, diff_of(changes)) == []


def test_newer_syntax_in_example_code_is_minor() -> None:
    """pynmea2 1.19 supports Python 2.7 and 3.4 by its classifiers and adds
    ``examples/nmea2gpx.py`` with ``:=``: readers run an example on their own Python; the
    package's users on 3.7 import nothing from it."""
    source = "import re\n\nif m := re.match('a', 'a'):\n    print(m)\n"
    paths = ("examples/to_gpx.py", "docs/conf.py", "pkg/core.py")
    declared = DeclaredPython(4, "'Programming Language :: Python :: 3.4' classifier in setup.py")

    found = run_ruff(
        dict.fromkeys(paths, source), diff_of(dict.fromkeys(paths, ("", source))), python=declared
    )

    assert sorted((f.path, f.pattern, f.severity) for f in found) == [
        ("docs/conf.py", "ruff:unsupported-syntax", "low"),
        ("examples/to_gpx.py", "ruff:unsupported-syntax", "low"),
        ("pkg/core.py", "ruff:unsupported-syntax", "medium"),
    ]


def test_a_builtin_newer_than_the_project_supports_is_its_own_pattern() -> None:
    """Linting for 3.8, ruff calls ``EncodingWarning`` undefined: where no version check
    guards it, not a high "undefined name" but a medium remark that says why."""
    source = (
        "import warnings\n\n\ndef f():\n"
        "    warnings.simplefilter('ignore', EncodingWarning)\n"
        "    return undefined_thing\n"
    )
    changes = {"a.py": ("", source)}
    declared = DeclaredPython(8, "python_requires = '>=3.8' in setup.cfg")

    findings = run_ruff({"a.py": source}, diff_of(changes), python=declared)
    on_311 = run_ruff({"a.py": source}, diff_of(changes), python=DeclaredPython(11, "x"))

    assert [(f.line, f.pattern, f.severity) for f in findings] == [
        (5, "ruff:newer-builtin", "medium"),
        (6, "ruff:F821", "high"),
    ]
    assert "since Python 3.10" in findings[0].message
    assert "supports 3.8 (python_requires = '>=3.8' in setup.cfg)" in findings[0].message
    assert [(f.line, f.pattern) for f in on_311 if "UP" not in f.pattern] == [(6, "ruff:F821")]


def test_a_newer_builtin_behind_a_version_check_is_not_a_finding() -> None:
    """pytest: ``if sys.version_info >= (3, 10): … EncodingWarning``; packaging 24.2:
    ``if sys.version_info >= (3, 11): ExceptionGroup = ExceptionGroup`` with a fallback
    class in the else branch. Both are how a library supports old and new Pythons."""
    source = (
        "import sys\nimport warnings\n\n"
        "if sys.version_info >= (3, 11):\n"
        "    ExceptionGroup = ExceptionGroup\n"
        "else:\n\n"
        "    class ExceptionGroup(Exception):\n"
        "        pass\n\n\n"
        "def f():\n"
        "    if sys.version_info >= (3, 10):\n"
        "        warnings.simplefilter('ignore', EncodingWarning)\n"
        "    return EncodingWarning\n"
    )
    declared = DeclaredPython(8, "requires-python = '>=3.8' in pyproject.toml")

    findings = run_ruff({"a.py": source}, diff_of({"a.py": ("", source)}), python=declared)

    # only the unguarded use is left; the re-exporting self-assignment is no PLW0127 either
    assert [(f.line, f.pattern) for f in findings] == [(15, "ruff:newer-builtin")]


def test_a_self_assignment_of_anything_but_a_builtin_is_still_one() -> None:
    source = "def f(x):\n    x = x\n    return x\n"
    assert [f.pattern for f in scan({"a.py": ("", source)})] == ["ruff:PLW0127"]


def test_djangos_extra_rule_only_where_django_is_meant() -> None:
    """anyio 4.6: nine "high" S610 remarks on ``stream.extra(SocketAttribute...)``."""
    anyio = "def f(stream, attr):\n    return stream.extra(attr.family)\n"
    django = "def f(qs, clause):\n    return qs.extra(where=[clause])\n"

    assert [f.pattern for f in scan({"a.py": ("", anyio)})] == []
    assert [f.pattern for f in scan({"a.py": ("", django)})] == ["ruff:S610"]


def test_a_noqa_for_another_linters_rule_is_left_alone() -> None:
    """RUF102 calls flake8's codes "invalid", and its fix deletes the team's noqa."""
    source = "def f(__self):  # noqa: B902\n    return __self\n"
    assert scan({"a.py": ("", source)}) == []


def test_a_noqa_code_a_newer_ruff_renamed_is_left_alone() -> None:
    """RUF101 asks for the new name (TC001), which the team's older ruff does not know."""
    source = "from pkg import Thing  # noqa: TCH001\n\nVALUE: Thing\n"
    assert [f.pattern for f in scan({"a.py": ("", source)})] == []


def test_same_rule_twice_on_a_line_is_one_finding() -> None:
    findings = scan({"a.py": ("", "import os, sys\n")})

    assert [(f.line, f.pattern) for f in findings] == [(1, "ruff:F401")]


def test_findings_are_sorted_by_path_and_line() -> None:
    findings = scan(
        {
            "b.py": ("", "import os\nimport sys\n"),
            "a.py": ("", "import json\n"),
        }
    )

    assert [(f.path, f.line) for f in findings] == [("a.py", 1), ("b.py", 1), ("b.py", 2)]


def test_hostile_paths_are_skipped() -> None:
    escape = f"kaizen-escape-{uuid.uuid4().hex}.py"
    hostile = {
        f"../{escape}": ("", "import os\n"),
        f"/tmp/{escape}": ("", "import os\n"),
        f"pkg/./../{escape}": ("", "import os\n"),
        "-rf.py": ("", "import os\n"),
        "ok.py": ("", "import os\n"),
    }

    findings = scan(hostile)

    assert sorted(f.path for f in findings) == ["-rf.py", "ok.py"]
    assert not (Path("/tmp") / escape).exists()


def test_file_not_in_diff_is_ignored() -> None:
    diff = diff_of({"a.py": ("", "VALUE = 1\n")})

    assert run_ruff({"a.py": "VALUE = 1\n", "other.py": "import os\n"}, diff) == []


def test_file_the_diff_skips_is_ignored() -> None:
    diff = diff_of({"gen/a.py": ("", "import os\n")})
    diff.apply_path_filters([], ["gen/**"])

    assert run_ruff({"gen/a.py": "import os\n"}, diff) == []


def test_non_python_paths_are_ignored() -> None:
    changes = {"script.sh": ("", "import os\n"), "types.pyi": ("", "import os\n")}

    assert [f.path for f in scan(changes)] == ["types.pyi"]


def test_empty_input_gives_no_findings() -> None:
    assert run_ruff({}, DiffModel([])) == []


def test_missing_ruff_raises(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == "ruff" else real_find_spec(name, package)

    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(shutil, "which", lambda *_args, **_kwargs: None)
    monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    with pytest.raises(RuffUnavailable, match="not installed"):
        scan({"a.py": ("", "import os\n")})


def test_slow_ruff_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    monkeypatch.setattr(ruff_scan, "ruff_command", lambda: sleeper)

    with pytest.raises(RuffUnavailable, match="did not finish"):
        run_ruff({"a.py": "import os\n"}, diff_of({"a.py": ("", "import os\n")}), timeout_s=0.5)


def test_rule_ruff_rejects_is_an_error() -> None:
    with pytest.raises(RuffUnavailable, match="exit code"):
        run_ruff({"a.py": "import os\n"}, diff_of({"a.py": ("", "import os\n")}), select=["XYZ999"])


def test_selector_that_is_not_a_rule_code_is_refused() -> None:
    with pytest.raises(ValueError, match="not a ruff rule code"):
        run_ruff({"a.py": "import os\n"}, diff_of({"a.py": ("", "import os\n")}), ignore=["--fix"])


def test_a_missing_comma_is_medium_and_a_joined_sentence_low() -> None:
    new = (
        'NAMES = ["alpha" "beta", "gamma"]\nMESSAGE = ("Cannot set " "the value")\n'
        # isodate 0.7: regex pieces formatted whole are one template
        'CENTURY = r"(?P<sign>[+-]){%d}" r"(?P<century>[0-9]{%d})" % (1, 2)\n'
        'YEAR = "{}-" "{}".format(1, 2)\n'
        'PAIR = ["a-" "b", "%s" % 1]\n'
    )

    found = scan({"pkg/text.py": ("", new)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:ISC001"] == [
        (1, "medium"),
        (2, "low"),
        (3, "low"),
        (4, "low"),
        (5, "medium"),  # another string on the line is formatted, not this pair
    ]


def test_literals_side_by_side_in_a_value_written_over_lines_are_a_low_isc001() -> None:
    """pyelftools' tests write a frame's bytes over many lines, an instruction's bytes
    side by side with a comment after them (``b'\\x0e\\x0c' b'\\x41'``): one value in
    pieces, no list missing a comma. A pair on a line of its own stays medium."""
    new = (
        "FRAME = (\n"
        "    b'\\x00\\x00'  # pointer\n"
        "    b'\\x0e\\x0c' b'\\x41'\n"
        "    b'\\x88\\x01' b'\\x41'\n"
        ")\n"
        "NAMES = ['alpha' 'beta', 'gamma']\n"
    )
    found = scan({"pkg/frames.py": ("", new)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:ISC001"] == [
        (3, "low"),
        (4, "low"),
        (6, "medium"),
    ]


def test_an_f_string_beside_a_plain_literal_is_a_low_isc001() -> None:
    """pycparser 3.12's lexer puts ``rf"(?!{_unicode_escape})"`` beside a raw pattern
    with braces and quotes: two kinds that cannot be one literal as written. Two of one
    kind stay medium."""
    new = (
        'ESCAPE = (rf"(?!{PREFIX})" r"[a-w{}]")\n'
        'PATTERN = (r"\\d+" "\\n")\n'
        'NAMES = (r"alpha" r"beta")\n'
    )
    found = scan({"pkg/lexer.py": ("", new)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:ISC001"] == [
        (1, "low"),
        (2, "low"),
        (3, "medium"),
    ]


def test_bandits_rules_and_assert_false_are_minor_in_test_code() -> None:
    code = (
        "import pickle\n\n\n"
        "def load(data, bucket=[]):\n"
        "    assert False, 'unreachable'\n"
        "    return pickle.loads(bucket.pop() or data)\n"
    )
    paths = ("pkg/store.py", "tests/test_store.py", "pkg/store_test.py", "conftest.py")

    found = scan({path: ("", code) for path in paths})

    severity = {(f.path, f.pattern): f.severity for f in found}
    assert severity[("pkg/store.py", "ruff:S301")] == "medium"  # bandit rates it so
    assert severity[("pkg/store.py", "ruff:B011")] == "medium"
    for path in paths[1:]:
        assert severity[(path, "ruff:S301")] == "low"
        assert severity[(path, "ruff:B011")] == "low"
        assert severity[(path, "ruff:B006")] == "medium"  # a likely bug is one in tests too


def test_an_attribute_probe_in_a_try_is_no_useless_expression() -> None:
    probe = "import mod\n\ntry:\n    mod.feature\nexcept AttributeError:\n    HAS_FEATURE = False\n"
    useless = "def f(mod):\n    mod.feature\n"

    assert [f.pattern for f in scan({"a.py": ("", probe)})] == []
    assert [f.pattern for f in scan({"b.py": ("", useless)})] == ["ruff:B018"]


def test_syntax_a_conftest_keeps_from_older_pythons_is_no_remark_in_its_tests() -> None:
    """cattrs 24.1: PEP 695 in tests/test_generics_695.py, which its conftest has pytest
    ignore before 3.12, on a project that supports 3.8."""
    source = "type Pair[T] = tuple[T, T]\n"
    paths = ("tests/test_generics_695.py", "src/pkg/generics_695.py", "tests/test_other.py")
    changes = {path: ("", source) for path in paths}
    conftest = {"tests/conftest.py": CONFTEST_695}

    found = run_ruff(
        {path: source for path in paths},
        diff_of(changes),
        python=DeclaredPython(8, "requires-python = '>=3.8' in pyproject.toml"),
        collected_from=lambda path: collected_from(path, conftest.get),
    )

    flagged = {f.path for f in found if f.pattern == "ruff:unsupported-syntax"}
    assert flagged == {"src/pkg/generics_695.py", "tests/test_other.py"}


CONFTEST_695 = """\
import sys

collect_ignore_glob = []
if sys.version_info < (3, 12):
    collect_ignore_glob.append("*_695.py")
"""


def test_a_bare_raise_guarded_by_sys_exc_info_is_not_misplaced() -> None:
    guarded = "import sys\n\n\ndef f(error):\n    if error is sys.exc_info()[1]:\n        raise\n"
    bare = "def f(flag):\n    if flag:\n        raise\n"

    assert [f.pattern for f in scan({"a.py": ("", guarded)})] == []
    assert [f.pattern for f in scan({"b.py": ("", bare)})] == ["ruff:PLE0704"]


def test_newer_syntax_is_no_remark_in_a_file_that_already_needs_a_newer_python() -> None:
    """A module compiles whole: one merged ``match`` already shuts out 3.9, so a new walrus
    beside it shuts out nobody. A new ``type`` statement (3.12) still does."""
    old = "def g(x):\n    match x:\n        case 1:\n            return 2\n    return 3\n"
    new = (
        old
        + "\n\ndef f(xs):\n    if (n := len(xs)) > 1:\n        return n\n    return 0\n"
        + "\n\ntype P = int\n"
    )
    walrus, alias = (
        new.splitlines().index(t) + 1 for t in ("    if (n := len(xs)) > 1:", "type P = int")
    )
    declared = DeclaredPython(7, "'Programming Language :: Python :: 3.7' classifier in setup.py")

    found = run_ruff({"a.py": new}, diff_of({"a.py": (old, new)}), python=declared)
    fresh = run_ruff({"b.py": new}, diff_of({"b.py": ("", new)}), python=declared)

    assert [(f.line, f.pattern) for f in found] == [(alias, "ruff:unsupported-syntax")]
    assert "3.12" in found[0].message
    assert [f.line for f in fresh if f.pattern == "ruff:unsupported-syntax"] == [2, walrus, alias]


def test_a_loop_variable_kept_for_after_the_loop_is_no_remark() -> None:
    kept = "def f(xs):\n    for i, x in enumerate(xs):\n        if i:\n            break\n"
    kept += "    return x\n"
    unused = "def f(xs):\n    n = 0\n    for x in xs:\n        n += 1\n    return n\n"

    assert [f.pattern for f in scan({"a.py": ("", kept)})] == []
    assert [f.pattern for f in scan({"b.py": ("", unused)})] == ["ruff:B007"]


def test_exec_of_a_literal_is_no_security_remark() -> None:
    literal = "exec(compile('def _raise(*a): raise a[0]', '<py3fix>', 'exec'))\n"
    dynamic = "import sys\n\nexec(sys.stdin.read())\n"

    assert [f.pattern for f in scan({"a.py": ("", literal)})] == []
    assert [f.pattern for f in scan({"b.py": ("", dynamic)})] == ["ruff:S102"]


def test_naive_datetimes_and_blocking_calls_in_async_tests_are_minor() -> None:
    """redis-py 5.0.8's tests: ``datetime.now()`` for an expiry, ``open`` in an async
    test. In the code that ships, a naive time or a blocked event loop is a bug."""
    code = (
        "import datetime\n\n\n"
        "async def check(path):\n"
        "    with open(path) as f:\n"
        "        f.read()\n"
        "    return datetime.datetime.now()\n"
    )
    found = scan({path: ("", code) for path in ("pkg/expiry.py", "tests/test_expiry.py")})

    severity = {(f.path, f.pattern): f.severity for f in found}
    assert severity[("pkg/expiry.py", "ruff:DTZ005")] == "medium"
    assert severity[("pkg/expiry.py", "ruff:ASYNC230")] == "medium"
    assert severity[("tests/test_expiry.py", "ruff:DTZ005")] == "low"
    assert severity[("tests/test_expiry.py", "ruff:ASYNC230")] == "low"


def test_no_pyupgrade_remarks_for_a_project_that_still_supports_python_2() -> None:
    """python-dateutil 2.9 (``>=2.7, !=3.0.*, …``): an f-string or a class without
    ``object`` would break the Python 2 it still ships for."""
    source = "class Foo(object):\n    pass\n\n\nname = 'x {}'.format(Foo)\n"
    changes = {"a.py": ("", source)}
    both = DeclaredPython(3, "python_requires = '>=2.7, !=3.0.*' in setup.py", python2=True)
    three = DeclaredPython(7, "python_requires = '>=3.7' in setup.py")

    assert run_ruff({"a.py": source}, diff_of(changes), python=both) == []
    assert {f.pattern for f in run_ruff({"a.py": source}, diff_of(changes), python=three)} == {
        "ruff:UP004",
        "ruff:UP032",
    }


def test_no_python_3_only_advice_for_a_project_that_still_supports_python_2() -> None:
    """pyserial 3.5 (a ``Python :: 2.7`` classifier): ``raise … from err``, ``[*a, b]``
    and ``contextlib.suppress`` are a SyntaxError or an ImportError on Python 2."""
    source = (
        "def f(items, port):\n"
        "    try:\n        port.open()\n    except OSError as err:\n"
        "        raise ValueError(err)\n"
        "    try:\n        port.close()\n    except OSError:\n        pass\n"
        "    return items + [port]\n"
    )
    changes = {"a.py": ("", source)}
    both = DeclaredPython(4, "'Programming Language :: Python :: 3.4' classifier", python2=True)
    three = DeclaredPython(7, "python_requires = '>=3.7' in setup.py")

    advice = {"ruff:B904", "ruff:RUF005"}
    assert {f.pattern for f in run_ruff({"a.py": source}, diff_of(changes), python=three)} >= (
        advice
    )
    assert not {f.pattern for f in run_ruff({"a.py": source}, diff_of(changes), python=both)} & (
        advice
    )


def test_python_2_builtins_are_defined_for_a_project_that_supports_python_2() -> None:
    """pexpect 4.9 (a ``Python :: 2.7`` classifier): ``unicode`` in the Python 2 branch."""
    source = "import sys\n\nif sys.argv:\n    kind = bytes\nelse:\n    kind = unicode\n"
    changes = {"a.py": ("", source)}
    both = DeclaredPython(3, "'Programming Language :: Python :: 3.3' classifier", python2=True)
    three = DeclaredPython(7, "python_requires = '>=3.7' in setup.py")

    assert run_ruff({"a.py": source}, diff_of(changes), python=both) == []
    assert [f.pattern for f in run_ruff({"a.py": source}, diff_of(changes), python=three)] == [
        "ruff:F821"
    ]


def test_names_a_module_defines_at_run_time_are_not_undefined() -> None:
    """pyparsing's examples: ``vars().update(keywords)`` defines ``NOT`` and the rest."""
    dynamic = (
        "keywords = {k: k.lower() for k in ('AND', 'NOT')}\n"
        "vars().update(keywords)\n"
        "rule = NOT + AND\n"
    )
    plain = "keywords = {}\nrule = NOT + AND\n"

    assert scan({"a.py": ("", dynamic)}) == []
    assert {f.pattern for f in scan({"b.py": ("", plain)})} == {"ruff:F821"}


def test_a_password_rule_on_a_name_that_holds_no_secret_is_no_remark() -> None:
    """authlib 1.3: ``token_placement="header"`` says where a token goes, not what it is."""
    source = (
        "def client(token_placement='header', password='hunter2-but-longer'):\n"
        "    return token_placement, password\n"
    )
    found = scan({"a.py": ("", source)})

    assert [f.pattern for f in found] == ["ruff:S107"]
    assert '"password"' in found[0].message


def test_a_class_attribute_named_as_a_shared_store_is_no_remark() -> None:
    """devito 4.8's ``class memoized_func: _scoped_caches = {}``: caches kept for the whole
    process, one for all instances on purpose; so are a ``_registry`` and a singleton's
    ``_instances``. Other mutable class attributes keep RUF012."""
    source = (
        "class Memo:\n"
        "    _scoped_caches = {}\n"
        "    _registry = []\n"
        "    _instances = {}\n"
        "    options = []\n"
    )
    found = scan({"pkg/memo.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF012"] == [5]


def test_options_of_a_nested_meta_class_are_no_mutable_class_attributes() -> None:
    """Django 4.2's ``class Meta: required_db_features = {...}``: options a framework
    reads once, never an instance's state to share by mistake."""
    source = (
        "from django.db import models\n\n\n"
        "class JSONFieldModel(models.Model):\n"
        "    tags = []\n\n"
        "    class Meta:\n"
        "        required_db_features = {'supports_json_field'}\n"
        "        ordering = ['name']\n"
    )
    found = scan({"app/models.py": ("", source)})

    assert [(f.line, f.pattern) for f in found] == [(5, "ruff:RUF012")]


def test_mutable_class_attributes_are_minor_in_test_code() -> None:
    source = (
        "class StorageTests:\n    invalid_names = ['../x', 'a/../../b']\n\n"
        "    def add(self, name):\n        self.invalid_names.append(name)\n"
    )
    found = scan({path: ("", source) for path in ("pkg/store.py", "tests/test_store.py")})

    assert {(f.path, f.severity) for f in found if f.pattern == "ruff:RUF012"} == {
        ("pkg/store.py", "medium"),
        ("tests/test_store.py", "low"),
    }


def test_an_undefined_name_the_rest_of_the_file_already_uses_is_no_remark() -> None:
    """IPython 8.27's tests use ``ip``, which their harness puts in builtins: merged code
    that runs. A name no untouched line uses is still undefined."""
    old = "def test_a():\n    ip.run_line_magic('autocall', 1)\n"
    new = old + "\n\ndef test_b():\n    ip.user_ns['x'] = 1\n    return shell.x\n"

    found = run_ruff({"t.py": new}, diff_of({"t.py": (old, new)}))

    assert [(f.line, f.message.split("`")[1]) for f in found if f.pattern == "ruff:F821"] == [
        (7, "shell")
    ]


def test_an_import_used_only_in_a_type_comment_is_no_unused_import() -> None:
    """sentry-sdk annotates with PEP 484 type comments, which ruff does not read."""
    source = (
        "from typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n    from typing import Any, Dict\n\n\n"
        "def f(x):\n    # type: (Any) -> None\n    return None\n"
    )
    found = scan({"a.py": ("", source)})

    assert [f.message.split("`")[1] for f in found if f.pattern == "ruff:F401"] == ["typing.Dict"]


def test_a_fixture_taken_as_a_parameter_is_no_redefinition() -> None:
    """gunicorn 27: ``from test_asgi_keepalive_smuggling import http_parser`` (a fixture)
    and ``def test_…(http_parser)``, pytest's way. A function defined twice still is."""
    source = (
        "from helpers import http_parser  # noqa: F401\n\n\n"
        "def test_parse(http_parser):\n    assert http_parser\n\n\n"
        "def helper():\n    pass\n\n\ndef helper():\n    pass\n"
    )
    found = scan({"tests/test_parse.py": ("", source)})

    assert [(f.line, f.pattern) for f in found if f.pattern == "ruff:F811"] == [(12, "ruff:F811")]


def test_a_local_named_like_an_unused_import_is_no_redefinition() -> None:
    """PyX 0.18's ``from . import otffile`` and, in a method, ``otffile = OTFfile(data)``:
    the local lives in its function and the module's name is untouched (posted as
    important). Bound again at module level, the import is lost, and F811 stays."""
    source = (
        "from . import otffile, afmfile\n"
        "from .otf import OTFfile\n\n\n"
        "class Font:\n"
        "    @classmethod\n"
        "    def load(cls, data):\n"
        "        otffile = OTFfile(data)\n"
        "        return cls(otffile)\n\n\n"
        "afmfile = None\n"
    )
    found = scan({"pkg/font.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:F811"] == [12]


def test_a_version_block_is_not_outdated_for_a_python_older_than_ruff_knows() -> None:
    """loguru supports 3.5; ruff lints for 3.7 at the oldest and calls ``>= (3, 6)``
    outdated. ``< (3, 0)`` is outdated on 3.5 as well."""
    source = (
        "import sys\n\nif sys.version_info >= (3, 6):\n    A = 1\nelse:\n    A = 2\n"
        "if sys.version_info < (3, 0):\n    B = 1\n"
    )
    changes = {"a.py": ("", source)}
    python = DeclaredPython(5, "requires-python = '>=3.5' in pyproject.toml")
    found = run_ruff({"a.py": source}, diff_of(changes), select=["UP036"], python=python)

    assert [f.line for f in found] == [7]


def test_an_assert_that_tests_an_operator_as_written_is_no_remark_in_test_code() -> None:
    """babel 2.19 tests ``__eq__`` and ``__ne__``: ``assert not (message == other)`` is
    the point of the test, and so is ``assert en_US == en_US``. Outside an assert, or
    outside test code, the rewrite stands."""
    source = (
        "def test_equality(message, other):\n"
        "    assert not (message == other)\n"
        "    assert not message != other\n"
        "    assert message == message\n"
        "    same = not (message == other)\n"
        "    return same\n"
    )
    found = scan({path: ("", source) for path in ("tests/test_eq.py", "pkg/eq.py")})

    assert sorted((f.path, f.line) for f in found if f.pattern.startswith("ruff:SIM20")) == [
        ("pkg/eq.py", 2),
        ("pkg/eq.py", 3),
        ("pkg/eq.py", 5),
        ("tests/test_eq.py", 5),
    ]
    assert [f.path for f in found if f.pattern == "ruff:PLR0124"] == ["pkg/eq.py"]


def test_a_list_concatenated_in_a_test_assert_tests_the_operator() -> None:
    """bitstring 5: ``assert [True] + BitArray('0b1') == '0b11'`` tests ``__radd__``;
    ``[True, *BitArray('0b1')]`` would be a list. Outside an assert the advice stands."""
    source = (
        "def test_radd(BitArray):\n"
        "    assert [True] + BitArray('0b1') == '0b11'\n"
        "    joined = [True] + BitArray('0b1')\n"
        "    return joined\n"
    )

    found = scan({"tests/test_radd.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF005"] == [3]


def test_a_value_compared_with_itself_to_find_nan_is_no_remark() -> None:
    """tablib 3.10's SQL export: ``value == value and value not in (float('inf'), …)``
    under ``# non-finite as NULL`` is the NaN test (NaN is the one float not equal to
    itself), as is the json encoder's ``if o != o: text = 'NaN'`` and a compare inside
    ``isinstance(x, float)``. A name compared with itself with no word of NaN or
    infinity near it, and no float check around it, is the typo the rule is for."""
    source = (
        "def render(value, other):\n"
        "    if isinstance(value, float):\n"
        "        # non-finite as NULL\n"
        "        if value == value and value not in (float('inf'), -float('inf')):\n"
        "            return repr(value)\n"
        "    if other != other:\n"
        "        text = 'NaN'\n"
        "    if isinstance(other, (int, float)) and other != other:\n"
        "        return None\n"
        "    return other == other\n"
    )
    found = scan({"src/tablib/formats/_sql.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLR0124"] == [10]


def test_a_function_that_says_up_front_it_finds_nan_compares_on_purpose() -> None:
    """bokeh 3.10's ``_is_missing_category`` opens with "``None``, NaN-like floats and
    masked values are all treated as a single missing legend category" and returns
    ``bool(val != val)`` five lines later. A function that opens with no such word keeps
    PLR0124."""
    source = (
        "def is_missing(val):\n"
        "    # None, NaN-like floats and masked values are all treated as a single\n"
        "    # missing legend category.\n"
        "    if val is None:\n"
        "        return True\n"
        "    try:\n"
        "        return bool(val != val)\n"
        "    except Exception:\n"
        "        return False\n\n\n"
        "def same(val):\n"
        '    """Whether the value is set."""\n'
        "    return val != val\n"
    )
    found = scan({"pkg/legend.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLR0124"] == [14]


def test_none_or_not_equal_to_itself_is_the_missing_value_test() -> None:
    """clickhouse-connect 1.13: ``0.0 if value is None or value != value else value``, a
    value missing as ``None`` or as NaN; so is momepy 1.0's positive form, ``{i for i in
    ids if i is not None and i == i}``. Compared with itself beside a test of another
    name keeps PLR0124."""
    source = (
        "def fill(column, other):\n"
        "    data = [0.0 if value is None or value != value else value for value in column]\n"
        "    return data, [v for v in column if other is None or v != v]\n\n\n"
        "def present(ids, other):\n"
        "    kept = {i for i in ids if i is not None and i == i}\n"
        "    return kept, [i for i in ids if other is not None and i == i]\n"
    )
    found = scan({"clickhouse_connect/driver/insert.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLR0124"] == [3, 8]


def test_logging_an_exception_in_a_function_handed_it_is_no_remark() -> None:
    """flask-cors 6's example: ``@app.errorhandler(500) def server_error(e: Exception)``
    logs with ``logging.exception``; Flask calls it from its ``except`` block. A function
    handed nothing of the kind keeps LOG004."""
    source = (
        "import logging\n\n\n"
        "def server_error(e: Exception):\n"
        "    logging.getLogger(__name__).exception('failed: %s', e)\n"
        "    return 'error', 500\n\n\n"
        "def report(message):\n"
        "    logging.getLogger(__name__).exception(message)\n"
    )
    found = scan({"app/errors.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:LOG004"] == [10]


def test_an_import_a_test_makes_to_skip_without_it_is_no_remark() -> None:
    """schedule's tests: ``try: import pytz`` / ``except ModuleNotFoundError:
    self.skipTest("pytz unavailable")``, pytest.importorskip written out. Shipped code
    that only sets a flag keeps ruff's find_spec advice, and so does a test that does
    not skip."""
    source = (
        "def test_tz(self):\n"
        "    try:\n"
        "        import pytz\n"
        "    except ModuleNotFoundError:\n"
        "        self.skipTest('pytz unavailable')\n"
        "    try:\n"
        "        import numpy\n"
        "    except ImportError:\n"
        "        pytest.skip('no numpy')\n"
        "    try:\n"
        "        import yaml\n"
        "    except ImportError:\n"
        "        has_yaml = False\n"
        "    return has_yaml\n"
    )
    in_tests = scan({"tests/test_tz.py": ("", source)})
    shipped = scan({"pkg/tz.py": ("", source)})

    assert [f.line for f in in_tests if f.pattern == "ruff:F401"] == [11]
    assert [f.line for f in shipped if f.pattern == "ruff:F401"] == [3, 7, 11]


def test_a_class_with_eq_and_no_hash_is_minor_in_test_code() -> None:
    source = "class Same:\n    def __eq__(self, other):\n        return True\n"
    found = scan({path: ("", source) for path in ("tests/test_eq.py", "pkg/eq.py")})

    assert {(f.path, f.severity) for f in found if f.pattern == "ruff:PLW1641"} == {
        ("pkg/eq.py", "medium"),
        ("tests/test_eq.py", "low"),
    }


def test_a_type_compared_with_eq_is_minor_in_test_code() -> None:
    """justext 3.0.2's tests ``assert type(s1) == type(s2)``: an exact type asked for,
    as ``is`` would; in code that ships, ``==`` where ``isinstance`` was meant stays a
    warning."""
    source = "def same(a, b):\n    assert type(a) == type(b)\n    return a\n"
    found = scan({path: ("", source) for path in ("tests/test_same.py", "pkg/same.py")})

    assert {(f.path, f.severity) for f in found if f.pattern == "ruff:E721"} == {
        ("pkg/same.py", "medium"),
        ("tests/test_same.py", "low"),
    }


def test_a_file_opened_without_a_with_is_minor_in_test_code() -> None:
    """line_profiler 5.1's tests ``ast.parse(open(path).read())``: the test process closes
    it soon enough; in code that ships, a handle left to the collector stays a warning."""
    source = (
        "import ast\n\n\ndef read(path):\n"
        "    tree = ast.parse(open(path).read())\n"
        "    return tree\n"
    )
    found = scan({path: ("", source) for path in ("tests/test_read.py", "pkg/read.py")})

    assert {(f.path, f.severity) for f in found if f.pattern == "ruff:SIM115"} == {
        ("pkg/read.py", "medium"),
        ("tests/test_read.py", "low"),
    }


def test_unpickling_what_the_same_function_pickled_is_no_remark() -> None:
    """anytree 2.13's test of pickling support dumps a tree to a file in ``tmp_path`` and
    loads it again; ``pickle.loads(pickle.dumps(x))`` copies. Loading what came from
    elsewhere, or pickling only after the load, keeps the remark."""
    source = (
        "import pickle\n\n\n"
        "def round_trip(root, path):\n"
        "    with open(path, 'wb') as file:\n"
        "        pickle.dump(root, file)\n"
        "    with open(path, 'rb') as file:\n"
        "        return pickle.load(file)\n\n\n"
        "def copy(x):\n"
        "    return pickle.loads(pickle.dumps(x))\n\n\n"
        "def receive(sock):\n"
        "    return pickle.loads(sock.recv(4096))\n\n\n"
        "def cached(path, make):\n"
        "    value = pickle.load(open(path, 'rb'))\n"
        "    pickle.dump(make(), open(path, 'wb'))\n"
        "    return value\n"
    )
    found = scan({"pkg/store.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S301"] == [16, 20]


def test_a_frameworks_dependency_marker_in_a_default_is_no_call_to_move() -> None:
    """taskiq 0.13's docs: ``progress: ProgressTracker[str] = Depends()``; a FastAPI
    endpoint's ``db = Depends(get_db)``. The framework reads what the call returns; it
    is made once on purpose. A call of the project's own stays a remark."""
    source = (
        "from fastapi import Depends, Header\n"
        "from taskiq_dependencies import Depends as TDepends\n\n\n"
        "def make_cache():\n    return {}\n\n\n"
        "async def endpoint(db=Depends(print), agent: str = Header(None)):\n    return db\n\n\n"
        "async def task(progress=TDepends()):\n    return progress\n\n\n"
        "def remember(key, cache=make_cache()):\n    return cache\n"
    )
    found = scan({"app/api.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B008"] == [17]


def test_django_ninjas_parameter_markers_in_defaults_are_no_calls_to_move() -> None:
    """wagtail 8's API on django-ninja: ``filters: PageFilterSchema = Query(...)``, as
    FastAPI's. A call of the project's own stays a remark."""
    source = (
        "from ninja import Body, Query\n\n\n"
        "def make_cache():\n    return {}\n\n\n"
        "def list_pages(request, filters=Query(...), payload=Body(...)):\n    return filters\n\n\n"
        "def remember(key, cache=make_cache()):\n    return cache\n"
    )
    found = scan({"app/api.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B008"] == [12]


def test_yaml_load_with_a_loader_of_the_projects_own_is_minor() -> None:
    """omegaconf 2.4's loader derives from ``BaseLoader`` in another module: worth a look,
    not "important". ``yaml.FullLoader`` stays what it is."""
    source = (
        "import yaml\n\nfrom ._yaml import get_yaml_loader\n\n\n"
        "def load(f):\n    return yaml.load(f, Loader=get_yaml_loader())\n\n\n"
        "def load_full(f):\n    return yaml.load(f, Loader=yaml.FullLoader)\n"
    )
    found = scan({"pkg/config.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:S506"] == [
        (7, "low"),
        (11, "high"),
    ]


@pytest.mark.parametrize(
    "change",
    [
        "self.aliases.append(name)",
        "self.aliases[0] = name",
        "type(self).aliases += [name]",
        "del BitBakeLexer.aliases[0]",
    ],
)
def test_a_mutable_class_attribute_nothing_changes_in_place_is_minor(change: str) -> None:
    """pygments' ``aliases = ['bitbake']`` in every lexer: data the framework reads. Where
    the file changes it in place, the shared state the rule is about is there."""
    declared = (
        "from pygments.lexer import RegexLexer\n\n\n"
        "class BitBakeLexer(RegexLexer):\n"
        "    aliases = ['bitbake']\n"
        "    filenames = ['*.bb']\n\n"
        "    def alias(self, name):\n"
        "        return name in self.aliases\n"
    )
    changed = declared.replace("return name in self.aliases", change)
    found = scan({"pkg/lexers.py": ("", declared), "pkg/changed.py": ("", changed)})

    assert {(f.path, f.line, f.severity) for f in found if f.pattern == "ruff:RUF012"} == {
        ("pkg/lexers.py", 5, "low"),
        ("pkg/lexers.py", 6, "low"),
        ("pkg/changed.py", 5, "medium"),
        ("pkg/changed.py", 6, "low"),
    }


def test_a_run_whose_return_code_is_asserted_needs_no_check() -> None:
    """click-repl 0.4.1's test keeps the result and asserts on ``returncode``."""
    source = (
        "import subprocess\n\n\n"
        "def test_import():\n"
        "    result = subprocess.run(['python', '-c', 'x'], capture_output=True)\n"
        "    assert result.returncode == 0, result.stderr\n"
        "    subprocess.run(['python', '-c', 'y'])\n"
    )
    found = scan({"tests/test_import.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLW1510"] == [7]


def test_a_password_rule_on_a_placeholder_value_is_no_remark() -> None:
    """flask-wtf 1.3's example apps: ``SECRET_KEY = "secret"`` stands in for a key."""
    source = (
        'SECRET_KEY = "secret"\n'
        'API_TOKEN = "changeme"\n'
        'PASSWORD = ""\n'
        'DB_PASSWORD = "hunter2-but-longer"\n'
        # pyjwt 2.15's tests: a token with an empty signature, which no verifier accepts
        'token = "eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3Qta2V5In0.e30."\n'
        # nats-py 2.16: a subject token compared with a wildcard
        'wild = token == ">"\n'
        # asyncssh 2.24: a format token of its config's ``%u`` substitution
        'user = token == "u"\n'
        'ADMIN_PASSWORD = "ab"\n'
        'ROOT_PASSWORD = "abc"\n'
    )
    found = scan({"examples/app.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S105"] == [4, 9]


def test_markup_from_escaped_values_only_is_no_remark() -> None:
    """flask-wtf 1.3's ``csrf_meta``: every value in the f-string is escaped."""
    source = (
        "from markupsafe import Markup, escape\n\n\n"
        "def meta(name, token):\n"
        '    a = Markup(f\'<meta name="{escape(name)}" content="{escape(token)}">\')\n'
        "    b = Markup('<b>{}</b>'.format(escape(name)))\n"
        "    c = Markup(f'<input {name}>')\n"
        "    return a, b, c\n"
    )
    found = scan({"pkg/meta.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S704"] == [7]


def test_syntax_older_than_where_pip_installs_from_is_no_remark() -> None:
    """folium 0.20's ``def enable_draw(self, shape, /, **kwargs)``: its ruff config says
    py37, its ``python_requires`` 3.9, and pip never puts it on 3.7."""
    source = "def enable_draw(shape, /, **kwargs):\n    return shape\n"
    changes = {"a.py": ("", source)}
    stale = DeclaredPython(7, 'target-version = "py37" in pyproject.toml')
    installs = DeclaredPython(7, 'target-version = "py37" in pyproject.toml', installs_from=9)

    assert [f.pattern for f in run_ruff({"a.py": source}, diff_of(changes), python=stale)] == [
        "ruff:unsupported-syntax"
    ]
    assert run_ruff({"a.py": source}, diff_of(changes), python=installs) == []


@pytest.mark.parametrize(
    ("path", "remarks"),
    [
        # mako 1.4's exceptions.py renders its HTML traceback with a Mako template (and
        # Django's remark still stands there: mako is not Django)
        ("mako/exceptions.py", ["ruff:S308"]),
        ("src/mako/exceptions.py", ["ruff:S308"]),
        ("lib/django/utils/html.py", ["ruff:S702"]),
        # a project that uses them gets both remarks
        ("myapp/errors.py", ["ruff:S308", "ruff:S702"]),
        # a module of the project that happens to share the name is not the library
        ("myapp/mako/errors.py", ["ruff:S308", "ruff:S702"]),
    ],
)
def test_a_librarys_own_package_is_not_warned_about_using_it(path: str, remarks: list[str]) -> None:
    """Bandit's rules about a library's API are for the projects that use it: said to the
    library's authors on its own source they are noise."""
    source = (
        "import mako.template\n"
        "from django.utils.safestring import mark_safe\n\n\n"
        "def page(text):\n"
        '    return mako.template.Template("<p>${x}</p>").render(x=mark_safe(text))\n'
    )
    found = scan({path: ("", source)})

    assert sorted(f.pattern for f in found if f.pattern in ("ruff:S308", "ruff:S702")) == remarks


def test_sql_built_only_from_the_codes_own_constants_is_no_remark() -> None:
    """sqlparse 0.6's benchmarks build queries from ``range`` counters; an ``IN`` list of
    ``?`` marks is the way to pass a list to a driver. A query that takes what the caller
    passes keeps its remark (see workers.review.constant_sql)."""
    source = (
        "def rows(cur, ids, table):\n"
        '    marks = ",".join("?" * len(ids))\n'
        '    cur.execute(f"SELECT * FROM t WHERE id IN ({marks})", ids)\n'
        '    cur.execute(f"SELECT * FROM {table} WHERE id = 1")\n'
        "\n\n"
        "def nested_case_when(n):\n"
        '    case = "1"\n'
        "    for i in range(n):\n"
        '        case = f"CASE WHEN x={i} THEN {case} ELSE NULL END"\n'
        '    return f"SELECT {case} FROM t"\n'
    )
    found = scan({"pkg/store.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S608"] == [4]


def test_a_loop_function_run_in_its_own_iteration_is_no_remark() -> None:
    """mistune 3.4's tests: ``def render(size)`` made per case and handed to a helper that
    runs it then. Outside test code a function handed over keeps its remark (the callee
    may keep it), and one kept in a list keeps it everywhere."""
    source = (
        "def check(cases, helper, kept):\n"
        "    for case in cases:\n"
        "        def render(size):\n"
        "            return case.unit * size\n"
        "        helper(render)\n"
        "        def build():\n"
        "            return case.name\n"
        "        build()\n"
        "        def later():\n"
        "            return case.path\n"
        "        kept.append(later)\n"
    )
    in_tests = scan({"tests/test_render.py": ("", source)})
    shipped = scan({"pkg/render.py": ("", source)})

    assert [f.line for f in in_tests if f.pattern == "ruff:B023"] == [10]
    assert [f.line for f in shipped if f.pattern == "ruff:B023"] == [4, 10]


def test_a_remark_on_code_a_removed_line_of_its_hunk_already_had_is_not_made() -> None:
    """tornado 6.6 modernised its annotations: ``ax_attrs: List[str] = [...]`` became
    ``list[str]``, and the mutable default the team merged years ago was "new". The
    same default written afresh, or one the changed line adds, is new."""
    old = (
        "def redirect(uri=None, ax_attrs=['name', 'email', 'language']):\n"
        "    return uri, ax_attrs\n"
    )
    new = (
        "def redirect(uri: str = None, ax_attrs=['name', 'email', 'language']):\n"
        "    return uri, ax_attrs\n"
        "\n\n"
        "def again(ax_attrs=['name', 'email', 'language']):\n"
        "    return ax_attrs\n"
    )
    newer = "def redirect(uri=None, ax_attrs=['name', 'email', 'language'], seen=[]):\n"

    assert [f.line for f in scan({"a.py": (old, new)}) if f.pattern == "ruff:B006"] == [5]
    found = scan({"a.py": (old, newer + "    return uri, ax_attrs\n")})
    assert [f.line for f in found if f.pattern == "ruff:B006"] == [1]  # seen=[] is new


def test_a_remark_moved_up_its_function_past_the_hunk_is_not_made() -> None:
    """humanize 4.17 hoisted ``dt.date.today()`` to the top of ``naturalday`` (to pick
    the timezone's today); the call left its old line seven lines down, another hunk.
    The function's one DTZ011 is as old as before; a second call added to it is new, and
    so is the call in a function that had none."""
    body = "".join(f"    step{i}()\n" for i in range(8))
    old = (
        "import datetime as dt\n\n\n"
        "def naturalday(value):\n"
        "    start()\n" + body + "    return value - dt.date.today()\n\n\n"
        "def other(value):\n"
        "    return value\n"
    )
    new = (
        "import datetime as dt\n\n\n"
        "def naturalday(value):\n"
        "    today = dt.date.today()\n" + body + "    return value - today\n\n\n"
        "def other(value):\n"
        "    return dt.date.today() - value\n"
    )
    twice = new.replace("    return value - today\n", "    return value - dt.date.today()\n")

    assert [f.line for f in scan({"a.py": (old, new)}) if f.pattern == "ruff:DTZ011"] == [18]
    found = scan({"a.py": (old, twice)})
    assert [f.line for f in found if f.pattern == "ruff:DTZ011"] == [5, 18]


def test_a_remark_on_code_moved_to_another_module_is_not_made() -> None:
    """uncertainties 3.2.3 moved its operators out of ``core.py`` into a new ``ops.py``:
    the ``eval`` that builds each derivative and the ``raise`` without ``from`` came
    along unchanged, and were "new" in the new file. A copy the change adds besides the
    moved one, and the same rule on a line no module lost, are new."""
    derive = '        fns.append(eval("lambda x, y: %s" % expr))\n'
    kept = "def keep(value):\n    return value\n"
    core = "def derivatives(exprs):\n    fns = []\n    for expr in exprs:\n" + derive
    old = {"pkg/core.py": kept + "\n\n" + core + "    return fns\n"}
    ops = core + "    return fns\n\n\ndef other(expr):\n    return eval(expr)\n"
    found = scan({"pkg/core.py": (old["pkg/core.py"], kept), "pkg/ops.py": ("", ops)})

    assert [f.line for f in found if f.pattern == "ruff:S307"] == [9]
    twice = ops.replace(derive, derive + derive)
    found = scan({"pkg/core.py": (old["pkg/core.py"], kept), "pkg/ops.py": ("", twice)})
    assert [f.line for f in found if f.pattern == "ruff:S307"] == [5, 10]
    reformatted = ops.replace(derive, derive.replace("fns.append(", "fns.append(  "))
    found = scan({"pkg/core.py": (old["pkg/core.py"], kept), "pkg/ops.py": ("", reformatted)})
    assert [f.line for f in found if f.pattern == "ruff:S307"] == [9]


def test_a_remark_on_code_moved_out_of_a_deleted_module_is_not_made() -> None:
    source = (
        "def parse(text):\n"
        "    try:\n"
        "        return float(text)\n"
        "    except ValueError:\n"
        "        raise ValueError(f'cannot parse {text}')\n"
    )
    found = scan({"pkg/old_parsing.py": (source, ""), "pkg/parsing.py": ("", source)})

    assert [f.pattern for f in found if f.pattern == "ruff:B904"] == []
    black = source.replace("f'cannot parse {text}'", 'f"cannot parse {text}"')
    found = scan({"pkg/old_parsing.py": (source, ""), "pkg/parsing.py": ("", black)})
    assert [f.pattern for f in found if f.pattern == "ruff:B904"] == []
    assert [f.line for f in scan({"pkg/parsing.py": ("", source)})] == [5]


def test_a_format_spec_an_object_reads_itself_is_no_remark() -> None:
    """uncertainties 3.2.3's tests: ``assert "{:P}".format(x) == "[2.00 ± 0.10]…"``, a
    spec its numbers' ``__format__`` reads (pretty print). Shipped code keeps the remark
    unless the file defines ``__format__``; a ``%`` format always keeps it."""
    test = 'def test_pretty(x):\n    assert "{:P}".format(x) == "2.00+/-0.10"\n'
    shown = 'def show(x):\n    return "{:P}".format(x), "%Q" % x\n'
    own = "class Number:\n    def __format__(self, spec):\n        return spec\n\n\n" + shown

    def lines(path: str, source: str) -> list[int]:
        return [f.line for f in scan({path: ("", source)}) if f.pattern == "ruff:PLE1300"]

    assert lines("tests/test_formatting.py", test) == []
    # stanza 1.15's tests: ``"{:C}".format(doc)`` writes a document as CoNLL, then
    # compares the lines; a wrong spec in a test fails that test on its first run
    loose = 'def test_conll(doc):\n    lines = "{:C}".format(doc).split()\n    assert lines\n'
    assert lines("tests/test_formatting.py", loose) == []
    assert lines("pkg/show.py", loose) == [2]
    assert lines("pkg/show.py", test) == [2]
    assert lines("pkg/show.py", shown) == [2]
    (remark,) = [f.message for f in scan({"pkg/n.py": ("", own)}) if f.pattern == "ruff:PLE1300"]
    assert "character 'Q'" in remark and "'P'" not in remark


def test_a_match_pattern_whose_only_metacharacters_are_anchors_is_no_remark() -> None:
    """cbor2 6.3's tests: ``pytest.raises(SystemExit, match="^-: ")``, a message that
    starts so. A ``.`` meant literally, anchored or not, keeps the remark, and so does
    an escape."""
    source = "import pytest\n\n\ndef test_it():\n" + "".join(
        f"    with pytest.raises(ValueError, match={pattern!r}):\n        run()\n"
        for pattern in ("^-: ", "bad value$", "^exactly$", "a.b", "^a.b$", "cost \\$5$")
    )
    found = scan({"tests/test_tool.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF043"] == [11, 13, 15]


def test_not_equal_written_so_on_purpose_is_no_remark() -> None:
    """pyrsistent 0.20's ``_pmap.py``: ``not (k2 == k)``, with a comment saying it does
    not rely on the keys' ``__ne__``. Without a word why, SIM201 stands."""
    source = (
        "def replace(bucket, k, val):\n"
        "    # `not (k2 == k)` rather than `!=`: keys may lack a well implemented __ne__\n"
        "    kept = [(k2, v2) if not (k2 == k) else (k2, val) for k2, v2 in bucket]\n"
        "\n\n"
        "def drop(kept, val):\n"
        "    return [(k2, v2) for k2, v2 in kept if not (k2 == val)]\n"
    )
    found = scan({"pkg/_pmap.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM201"] == [7]


def test_iterating_the_keys_of_a_mapping_the_loop_changes_is_no_remark() -> None:
    """lxml-html-clean 0.4.7: ``for aname in attrib.keys(): … del attrib[aname]`` walks
    lxml's list of the keys; the loop that only reads keeps SIM118."""
    source = (
        "def clean(attrib, other):\n"
        "    for aname in attrib.keys():\n"
        "        if aname == 'srcdoc':\n"
        "            del attrib[aname]\n"
        "    for key in other.keys():\n"
        "        other.pop(key.upper(), None)\n"
        "    for aname in attrib.keys():\n"
        "        print(attrib[aname])\n"
    )
    found = scan({"pkg/clean.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM118"] == [7]


def test_a_long_flagged_text_new_to_its_hunk_keeps_its_remark() -> None:
    old = "def f(a):\n    return a\n"
    new = "def f(a, ax_attrs=['name', 'email', 'language']):\n    return a, ax_attrs\n"

    assert [f.line for f in scan({"a.py": (old, new)}) if f.pattern == "ruff:B006"] == [1]


def test_a_short_flagged_text_is_old_on_the_old_line_of_the_same_name() -> None:
    """tornado 6.6: ``_pending_tasks: Set[Future] = set()`` became ``set[Future]``; the
    RUF012 on ``set()`` is as old as the attribute. A new attribute's ``set()`` is new."""
    old = "from typing import Set\n\n\nclass Loop:\n    _pending_tasks: Set[object] = set()\n"
    new = (
        "class Loop:\n"
        "    _pending_tasks: set[object] = set()\n"
        "    _done_tasks: set[object] = set()\n"
    )
    found = scan({"loop.py": (old, new)})

    assert [f.line for f in found if f.pattern == "ruff:RUF012"] == [3]


def test_a_security_remark_on_code_that_only_lost_a_typing_alias_is_old() -> None:
    """bpython 0.26: ``eval(name, cast(Dict[str, Any], locals))`` became ``cast(dict[str,
    Any], …)``: the S307 stands on the same call. An ``eval`` of something else is new."""
    old = (
        "from typing import Any, Dict, cast\n\n\n"
        "def get_object(name, ns):\n"
        "    return eval(name, cast(Dict[str, Any], ns))\n"
    )
    new = (
        "from typing import Any, cast\n\n\n"
        "def get_object(name, ns):\n"
        "    return eval(name, cast(dict[str, Any], ns))\n\n\n"
        "def get_other(name, ns):\n"
        "    return eval(name + '()', cast(dict[str, Any], ns))\n"
    )
    found = scan({"repl.py": (old, new)})

    assert [f.line for f in found if f.pattern == "ruff:S307"] == [9]


def test_a_security_remark_on_a_call_spread_over_lines_is_old() -> None:
    """nltk 3.10.4 put a comment after the ``eval`` that builds its decorators' wrappers,
    and black spread the call over three lines: the S307 stands on the same call. A
    spread-out ``eval`` of something else is new."""
    old = (
        "def new_wrapper(wrapper, src):\n"
        "    funcopy = eval(src, dict(_wrapper_=wrapper))\n"
        "    return funcopy\n"
    )
    new = (
        "def new_wrapper(wrapper, src):\n"
        "    funcopy = eval(\n"
        "        src, dict(_wrapper_=wrapper)\n"
        "    )  # bare-exec ok: the signature was fenced\n"
        "    return funcopy\n"
    )
    other = new.replace("src, dict(", "src + '()', dict(")

    assert [
        f.line for f in scan({"pkg/decorators.py": (old, new)}) if f.pattern == "ruff:S307"
    ] == []
    found = scan({"pkg/decorators.py": (old, other)})
    assert [f.line for f in found if f.pattern == "ruff:S307"] == [2]


def test_a_test_double_that_breaks_a_protocol_on_purpose_is_no_remark() -> None:
    """nltk 3.10.4's tests: ``class Wrong`` inside a test, whose ``__str__`` returns 42,
    to see ``safe_print`` fail closed. A helper class at a test module's top level, or
    such a class in shipped code, keeps the remark."""
    local = (
        "def test_non_str_fails_closed():\n"
        "    class Wrong:\n"
        "        def __str__(self):\n"
        "            return 42\n"
        "\n"
        "        def __len__(self):\n"
        "            return 'x'\n"
        "    return Wrong()\n"
    )
    helper = "class Wrong:\n    def __str__(self):\n        return 42\n"

    def lines(path: str, source: str) -> list[int]:
        return [f.line for f in scan({path: ("", source)}) if f.pattern.startswith("ruff:PLE03")]

    assert lines("tests/test_print.py", local) == []
    assert lines("tests/test_print.py", helper) == [3]
    assert lines("pkg/show.py", local) == [4, 7]


def test_a_capital_name_the_function_unpacks_is_no_yoda_constant() -> None:
    """timm 1.0.31's ``O, I, J, K = conv_weight.shape`` then ``if I > base_chans:``:
    ruff takes the capital ``I`` for a constant and the comparison for a Yoda condition.
    A module's constant, or a capital name the function sets to a literal, keeps it."""
    source = (
        "LIMIT = 3\n\n\n"
        "def adapt(weight, base_chans, n):\n"
        "    O, I = weight.shape\n"
        "    if I > base_chans:\n"
        "        return O\n"
        "    for K in weight:\n"
        "        if K == n:\n"
        "            return K\n"
        "    N = 5\n"
        "    if N == n:\n"
        "        return n\n"
        "    return LIMIT < n\n"
    )
    found = scan({"pkg/manipulate.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM300"] == [12, 14]


def test_a_mode_only_its_owner_can_write_is_no_permissive_mask() -> None:
    """xonsh 0.25's and pyinstaller 6.22's tests ``os.chmod(script, 0o755)``: an
    executable (or a folder) others may read and run, as every installed program is.
    Bandit's S103 flags any group execute bit; a mode that lets others write keeps it."""
    source = (
        "import os\n\n\n"
        "def prepare(script, shared):\n"
        "    os.chmod(script, 0o755)\n"
        "    os.chmod(shared, 0o777)\n"
        "    os.chmod(shared, 0o775)\n"
    )
    found = scan({"pkg/perms.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S103"] == [6, 7]


def test_the_constant_a_function_is_named_for_is_no_yoda_condition() -> None:
    """kornia 0.9's ``def torch_version_le(major, minor, patch): return _TORCH_VERSION <=
    (major, minor, patch)``: the installed version is what the function is about, and
    it reads first. A constant another function compares first keeps SIM300."""
    source = (
        "_TORCH_VERSION = (2, 1, 0)\n"
        "LIMIT = 3\n\n\n"
        "def torch_version_le(major, minor, patch):\n"
        "    return _TORCH_VERSION <= (major, minor, patch)\n\n\n"
        "def too_many(n):\n"
        "    return LIMIT < n\n\n\n"
        "def newer(major, minor, patch):\n"
        "    return _TORCH_VERSION > (major, minor, patch)\n"
    )
    found = scan({"pkg/compat.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM300"] == [10, 14]


def test_an_instance_of_an_immutable_class_the_file_defines_is_a_safe_default() -> None:
    """sqlfluff 4.5's ``ContextVar("_worker_state", default=_WorkerState(None, True))``,
    a NamedTuple of the same file that the worker replaces, never mutates. A frozen
    dataclass or a ``namedtuple`` is as safe; a list, or an ordinary class, is shared."""
    source = (
        "import collections\n"
        "from contextvars import ContextVar\n"
        "from dataclasses import dataclass\n"
        "from typing import NamedTuple\n\n\n"
        "class State(NamedTuple):\n"
        "    a: int\n\n\n"
        "@dataclass(frozen=True)\n"
        "class Frozen:\n"
        "    a: int\n\n\n"
        "class Plain:\n"
        "    a = 1\n\n\n"
        "Pair = collections.namedtuple('Pair', 'a b')\n"
        "v1 = ContextVar('v1', default=State(1))\n"
        "v2 = ContextVar('v2', default=Frozen(1))\n"
        "v3 = ContextVar('v3', default=Pair(1, 2))\n"
        "v4 = ContextVar('v4', default=[])\n"
        "v5 = ContextVar('v5', default=Plain())\n\n\n"
        "def f(x=State(1), z=Pair(1, 2), p=Plain()):\n"
        "    return x, z, p\n"
    )
    found = scan({"pkg/runner.py": ("", source)})

    assert [(f.line, f.pattern) for f in found if f.pattern in ("ruff:B039", "ruff:B008")] == [
        (24, "ruff:B039"),
        (25, "ruff:B039"),
        (28, "ruff:B008"),
    ]


def test_a_sentence_that_reads_like_sql_in_an_error_message_is_no_query() -> None:
    """polars 2.2's ``msg = f"delete from an Iceberg v{version} table is not supported
    yet: table '{name}'"`` then ``raise NotImplementedError(msg)``: ruff reads "delete
    from" as SQL. A message raised, warned or logged runs in no database; the same text
    handed to ``execute`` keeps S608."""
    source = (
        "import logging\n"
        "import warnings\n\n\n"
        "def delete(table, name, cursor):\n"
        "    if table.version > 2:\n"
        "        msg = f'delete from an Iceberg v{table.version} table fails: {name}'\n"
        "        raise NotImplementedError(msg)\n"
        "    warnings.warn(f'delete from {name} is slow', stacklevel=2)\n"
        "    logging.getLogger(__name__).info('delete from %s' % name)\n"
        "    query = f'delete from {name} where id > 3'\n"
        "    cursor.execute(query)\n"
        "    raise ValueError(f'select * from {name} found nothing')\n"
    )
    found = scan({"pkg/iceberg.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S608"] == [11]


def test_a_closure_returned_from_its_iteration_is_no_late_binding() -> None:
    """tslearn 0.10's forecaster wraps the first method whose signature names a horizon:
    ``def call(context, horizon): … kwargs[horizon_name] = horizon …`` then ``return
    call`` in that iteration. The return ends the loop, so ``horizon_name`` keeps its
    value. One kept in a list while the loop goes on keeps B023."""
    source = (
        "def wrap(methods, names, kept):\n"
        "    for method in methods:\n"
        "        name = names.get(method)\n"
        "        if name is None:\n"
        "            continue\n"
        "\n"
        "        def call(horizon):\n"
        "            return method(**{name: horizon})\n"
        "\n"
        "        if kept is None:\n"
        "            return call\n"
        "    for method in methods:\n"
        "        kept.append(lambda: method())\n"
    )
    found = scan({"pkg/forecasting.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B023"] == [13]


def test_a_file_with_syntax_newer_than_kaizens_python_is_still_read() -> None:
    """ursina 8.3's ``cmd_tool_maker.py`` reuses quotes inside an f-string (Python 3.12)
    on one line, and compares an argument ``token`` with ``'--'`` on another: S105 on a
    two-character value is no remark, but Kaizen's Python could not parse the file, so
    nothing was read and the remark stood. The rest of the file is read as before."""
    pyproject = '[project]\nname = "ursina"\nrequires-python = ">=3.12"\n'
    found = scan(
        {"pyproject.toml": ("", pyproject), "ursina/cmd_tool_maker.py": ("", NESTED_QUOTES)}
    )

    assert [f.pattern for f in found if f.pattern.startswith("ruff:")] == []


def test_the_lower_bound_of_a_range_check_is_no_yoda_condition() -> None:
    """xgboost 3.4's tests: ``((0 <= node_idx) & (node_idx < left.size)).all()``, a
    range written in two comparisons because arrays do not chain. ``0 <= x and x < n``
    reads the same way; a lone ``0 <= x``, or a bound beside a test of something else,
    keeps SIM300."""
    source = (
        "def check(node_idx, left, n, m):\n"
        "    assert ((0 <= node_idx) & (node_idx < left.size)).all()\n"
        "    assert 0 <= n and n < m\n"
        "    assert 0 <= n\n"
        "    assert 0 <= n and m < 3\n"
    )
    found = scan({"xgboost/testing/predict.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM300"] == [4, 5]


def test_brace_fields_for_the_projects_own_logger_are_no_logging_format_slip() -> None:
    """scikit-build-core 1.1's ``logger`` comes from its own ``_logging`` module, which
    formats messages with ``str.format``: ``logger.debug("Including {} {} …", ptype, p,
    …)`` has one field per argument. A ``logging.getLogger`` logger given braces, or an
    own logger given more arguments than fields, keeps PLE1205."""
    source = (
        "import logging\n\n"
        "from .._logging import logger\n\n"
        "log = logging.getLogger(__name__)\n\n\n"
        "def include(ptype, p, rule):\n"
        "    logger.debug(\n"
        "        'Including {} {} because of {!r}.',\n"
        "        ptype,\n"
        "        p,\n"
        "        rule,\n"
        "    )\n"
        "    log.debug('Including {} {}', ptype, p)\n"
        "    logger.debug('Including {}', ptype, p)\n"
    )
    found = scan({"src/pkg/build/_file_processor.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLE1205"] == [15, 16]


def test_a_string_of_a_literal_type_imported_from_elsewhere_is_no_forward_reference() -> None:
    """colour-science 0.4.7 takes ``Literal`` from its own ``colour.hints``: ruff does not
    know it, reads ``Literal["CIE 1994", "Von Kries"]`` as two forward references and
    finds "CIE 1994" no expression. A string annotation that does not parse keeps F722."""
    source = (
        "from colour.hints import Literal\n\n\n"
        "def adapt(method: Literal['CIE 1994', 'Von Kries'] = 'CIE 1994', n: 'List[int' = 1):\n"
        "    return method, n\n"
    )
    found = scan({"colour/adaptation/__init__.py": ("", source)})

    assert [(f.line, f.pattern) for f in found if f.pattern == "ruff:F722"] == [(4, "ruff:F722")]
    (remark,) = [f for f in found if f.pattern == "ruff:F722"]
    assert "EOF" in remark.message


def test_an_invisible_character_the_line_names_is_shown_on_purpose() -> None:
    """ocrmypdf 17.13's font tests list characters with a comment naming each: a zero
    width space written as itself beside ``# ZERO WIDTH SPACE``. One in a string with no
    word of it keeps PLE2515."""
    source = "CHARS = [\n    ('\u200b', 0),  # ZERO WIDTH SPACE\n    ('a\u200bb', 1),\n]\n"
    found = scan({"tests/test_occulta_font.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLE2515"] == [3]


def test_a_comparison_a_test_runs_for_its_own_sake_is_no_remark() -> None:
    """pikepdf 10.18's threading tests run ``_ = d == d`` in fifty loops on many threads
    to see ``__eq__`` survive them: the comparison is the test. Compared with itself in
    shipped code, or in a test that uses the result, keeps PLR0124."""
    source = (
        "def walker(d):\n"
        "    for _ in range(50):\n"
        "        repr(d)\n"
        "        _ = d == d\n"
        "        d != d\n"
        "    same = d == d\n"
        "    return same\n"
    )
    in_tests = scan({"tests/test_threading_unowned.py": ("", source)})
    shipped = scan({"pkg/walk.py": ("", source)})

    assert [f.line for f in in_tests if f.pattern == "ruff:PLR0124"] == [6]
    assert [f.line for f in shipped if f.pattern == "ruff:PLR0124"] == [4, 5, 6]


def test_a_naive_time_the_function_makes_aware_before_use_is_no_remark() -> None:
    """mike 2.2's ``make_when``: ``when = datetime.now()``, or a parsed time, then ``if
    not when.tzinfo: when = when.astimezone()`` before it is used. A naive time the
    function uses as it is keeps DTZ005."""
    source = (
        "from datetime import datetime, timezone\n\n\n"
        "def make_when(timestamp=None):\n"
        "    if timestamp is None:\n"
        "        when = datetime.now()\n"
        "    else:\n"
        "        when = datetime.fromisoformat(timestamp)\n"
        "    if not when.tzinfo:\n"
        "        when = when.astimezone()\n"
        "    return when.timestamp()\n\n\n"
        "def stamp():\n"
        "    now = datetime.now()\n"
        "    later = datetime.now()\n"
        "    return now.replace(tzinfo=timezone.utc), later.replace(microsecond=0)\n"
    )
    found = scan({"mike/git_utils.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:DTZ005"] == [16]


def test_a_check_pylint_was_told_to_skip_on_the_line_is_no_remark() -> None:
    """astroid 4.4: ``# pylint: disable-next=consider-using-with`` above an ``open`` that
    a test keeps open on purpose; ruff's SIM115 is the same check."""
    source = (
        "def track(streams, *args):\n"
        "    # pylint: disable-next=consider-using-with,unspecified-encoding\n"
        "    stream = open(*args)\n"
        "    streams.append(stream)\n"
        "    other = open(*args)\n"
        "    return stream, other.read()\n"
    )
    found = scan({"pkg/track.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM115"] == [5]


def test_an_attribute_read_for_its_getter_is_no_remark_in_tests_or_with_a_comment() -> None:
    """kombu 5.7's ``channel.pool  # force sync pool creation``; wrapt reads ``fn.__doc__``
    in a test to count a factory's calls. Without a word why, shipped code keeps B018."""
    source = (
        "def warm(channel, fn):\n"
        "    channel.pool  # force sync pool creation\n"
        "    fn.__doc__\n"
        "    channel.pool == 1\n"
    )
    in_tests = scan({"t/unit/test_redis.py": ("", source)})
    shipped = scan({"kombu/redis.py": ("", source)})

    assert [f.line for f in in_tests if f.pattern == "ruff:B018"] == []
    assert [f.line for f in shipped if f.pattern == "ruff:B018"] == [3]
    assert [f.line for f in shipped if f.pattern == "ruff:B015"] == [4]  # a comparison


def test_an_attribute_read_a_comment_above_explains_is_no_remark() -> None:
    """django-q2 1.11's ``qcluster``: ``# Ensure that the cluster starts only if the
    SECRET_KEY is set`` then ``settings.SECRET_KEY``, which raises when it is missing. A
    read after a line of code, or after a blank line, keeps B018."""
    source = (
        "def handle(settings, options):\n"
        "    # Ensure the cluster starts only if the SECRET_KEY is set\n"
        "    settings.SECRET_KEY\n"
        "    name = options.get('cluster_name')\n"
        "    settings.CACHES\n"
        "    # a comment, then a blank line\n"
        "\n"
        "    settings.DEBUG\n"
        "    return name\n"
    )
    found = scan({"django_q/management/commands/qcluster.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B018"] == [5, 8]


def test_a_class_attribute_a_comment_calls_shared_is_no_remark() -> None:
    """fsspec's MemoryFileSystem: ``pseudo_dirs = [""]  # shared by default`` is one
    filesystem for every instance, as documented; an attribute without a word keeps it."""
    source = (
        "class MemoryFileSystem:\n"
        '    pseudo_dirs = [""]  # shared by default\n'
        "    # one registry for the whole class\n"
        "    # class-level registry of handlers\n"
        "    handlers = {}\n"
        '    names = ["#shared"]\n'
        "    seen = []\n"
        "\n"
        "    def add(self, name):\n"
        "        self.pseudo_dirs.append(name)\n"
        "        self.handlers[name] = name\n"
        "        self.names.append(name)\n"
        "        self.seen.append(name)\n"
    )
    found = scan({"fsspec/memory.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF012"] == [6, 7]


def test_a_password_rule_on_a_value_that_spells_its_name_is_no_remark() -> None:
    """pydantic-extra-types 2.11's MIME types: ``APPLICATION_VND_ETSI_TIMESTAMP_TOKEN =
    "application/vnd.etsi.timestamp-token"`` names a media type. A value that says more,
    or other words, stays a remark."""
    source = (
        'APPLICATION_VND_ETSI_TIMESTAMP_TOKEN = "application/vnd.etsi.timestamp-token"\n'
        'GITHUB_OAUTH_REFRESH_TOKEN = "github.oauth.refresh.token"\n'
        'SERVICE_AUTH_TOKEN = "service-auth-token-4f9a2c"\n'
        'ADMIN_AUTH_TOKEN = "grand-piano-seventy-nine-sky"\n'
    )
    found = scan({"pkg/mime_types.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S105"] == [3, 4]


def test_bandit_on_example_code_is_minor() -> None:
    """pony 0.7.20's ``pony/orm/examples/``: ``db.bind(..., password="pony")`` shows a
    reader how to connect; the same line in code that ships stays medium."""
    source = (
        'def connect(db):\n    db.bind(provider="postgres", user="pony", password="pony-db-pw")\n'
    )
    example = scan({"pony/orm/examples/university1.py": ("", source)})
    shipped = scan({"pony/orm/core.py": ("", source)})

    assert [f.severity for f in example if f.pattern == "ruff:S106"] == ["low"]
    assert [f.severity for f in shipped if f.pattern == "ruff:S106"] == ["medium"]


def test_bandit_on_the_projects_own_files_in_a_build_script_is_minor() -> None:
    """mccabe 0.7's setup.py reads its version with ``eval`` of a line of ``mccabe.py``:
    whoever could change that file writes setup.py too. A password or an unverified
    download there stays as heavy as anywhere."""
    source = (
        "import requests\n\n\n"
        "def get_version(fname='mccabe.py'):\n"
        "    with open(fname) as f:\n"
        "        for line in f:\n"
        "            if line.startswith('__version__'):\n"
        "                return eval(line.split('=')[-1])\n\n\n"
        "def fetch():\n"
        "    return requests.get('https://example.com/x', verify=False, timeout=5)\n"
    )
    severities = {
        path: {f.pattern: f.severity for f in scan({path: ("", source)})}
        for path in ("setup.py", "sub/setup.py", "noxfile.py", "mccabe.py")
    }

    for path in ("setup.py", "sub/setup.py", "noxfile.py"):
        assert severities[path]["ruff:S307"] == "low", path
        assert severities[path]["ruff:S501"] == "high", path
    assert severities["mccabe.py"]["ruff:S307"] == "high"


def test_a_grammar_in_a_metaclass_namespace_draws_no_undefined_names() -> None:
    """sly 0.3 -> 0.5: 110 F821 and 51 F811 candidates on its grammars, where the
    ``Lexer``/``Parser`` metaclass supplies ``NAME`` and ``_`` and keeps every rule. A
    forgotten import in an ordinary class stays."""
    grammar = (
        "from sly import Lexer, Parser\n\n\n"
        "class CalcLexer(Lexer):\n"
        "    tokens = {NAME, NUMBER}\n"
        "    NAME = r'[a-z]+'\n"
        "    NUMBER = r'[0-9]+'\n\n\n"
        "class CalcParser(Parser):\n"
        "    @_('NAME')\n"
        "    def expr(self, p):\n"
        "        return p.NAME\n\n"
        "    @_('NUMBER')\n"
        "    def expr(self, p):\n"
        "        return int(p.NUMBER)\n\n\n"
        "class Settings(Base):\n"
        "    size = LIMIT\n"
    )
    found = scan({"calc.py": ("", grammar)})

    assert [(f.pattern, f.line) for f in found if f.pattern in ("ruff:F821", "ruff:F811")] == [
        ("ruff:F821", 20),  # Base
        ("ruff:F821", 21),  # LIMIT
    ]


def test_a_rule_registered_like_the_functions_the_file_already_has_is_no_redefinition() -> None:
    """owlready2 0.51's SPARQL grammar: every rply production is ``def f(p)`` under
    ``@pg.production("…")``, which keeps each one; a new production drew F811. The file's
    own productions, left as they were, show the decorator keeps what it decorates. A
    second Flask view of one name (two routes, one endpoint: Flask refuses it) stays."""
    rule = '@pg.production("{0} : NAME")\ndef f(p):\n    return p\n\n\n'
    old = "".join(rule.format(name) for name in ("a", "b", "c"))
    grammar = old + rule.format("d")
    views = (
        "@app.route('/')\ndef index():\n    return 'a'\n\n\n"
        "@app.route('/b')\ndef index():\n    return 'b'\n"
    )
    found = scan({"sparql/parser.py": (old, grammar), "web.py": ("", views)})

    assert [(f.path, f.line) for f in found if f.pattern == "ruff:F811"] == [("web.py", 7)]
    fresh = scan({"sparql/parser.py": ("", grammar)})
    assert [f.line for f in fresh if f.pattern == "ruff:F811"] == [7, 12, 17]


def test_an_undefined_name_in_a_lazy_annotation_is_minor() -> None:
    """soda-core 4.28: ``from __future__ import annotations``, then ``measurement_values:
    MeasurementValues`` in a signature, the class imported only inside a function. No
    annotation is evaluated at run time there; a type checker still wants the import.
    The same name used as code stays "important", and so does one in an annotation of a
    module without the future import."""
    source = (
        "from __future__ import annotations\n\n\n"
        "def add(check, values: MeasurementValues) -> list[AggregationQuery]:\n"
        "    return Missing(values)\n"
    )
    found = scan({"src/soda_core/check_collections/base.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:F821"] == [
        (4, "low"),
        (5, "high"),
    ]
    eager = source.replace("from __future__ import annotations\n", "")
    found = scan({"src/soda_core/check_collections/base.py": ("", eager)})
    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:F821"] == [
        (3, "high"),
        (4, "high"),
    ]


def test_an_undefined_name_in_a_forward_reference_is_minor() -> None:
    """pyramid 2.1's tutorial: ``Mapped[List['Page']]`` names a model of another module
    that SQLAlchemy resolves by name; the same name used as code stays "high"."""
    source = (
        "from typing import List\n\n\n"
        "class User:\n"
        "    created_pages: 'List[Page]' = []\n"
        "    other: List['Page'] = []\n"
        "\n"
        "    def first(self):\n"
        "        return Page(self)\n"
    )
    found = scan({"tutorial/models/user.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:F821"] == [
        (5, "low"),
        (6, "low"),
        (9, "high"),
    ]


def test_a_naive_datetime_a_comment_says_is_naive_is_no_remark() -> None:
    """python-docx 1.2: ``# -- fall-back to parsing as naive datetime --`` over the
    ``strptime`` calls; the same call with no word about it keeps DTZ007."""
    source = (
        "import datetime as dt\n\n\n"
        "def parse(text):\n"
        "    try:\n"
        "        return dt.datetime.fromisoformat(text)\n"
        "    except ValueError:\n"
        "        # -- fall-back to parsing as naive datetime --\n"
        "        try:\n"
        '            return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f")\n'
        "        except ValueError:\n"
        '            return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")\n'
        "\n\n"
        "def stamp(text):\n"
        '    return dt.datetime.strptime(text, "%Y-%m-%d")\n'
    )
    found = scan({"src/docx/simpletypes.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:DTZ007"] == [12, 16]


def test_a_package_init_importing_from_its_own_package_reexports() -> None:
    """intervaltree 3.2's ``test/data/__init__.py`` is ``from . import issue4`` and the
    like: a package's ``__init__`` importing its own modules makes them its attributes,
    which is what it is there for. An unused import of anything else, there or in a
    module, keeps F401."""
    source = (
        "import os\n"
        "from . import issue4\n"
        "from .core import Tree\n"
        "from pkg.tools import helper\n"
        "from json import dumps\n"
    )
    init = scan({"src/pkg/__init__.py": ("", source)})
    module = scan({"src/pkg/mod.py": ("", source)})

    assert [f.line for f in init if f.pattern == "ruff:F401"] == [1, 5]
    assert [f.line for f in module if f.pattern == "ruff:F401"] == [1, 2, 3, 4, 5]


def test_a_character_of_another_script_among_its_own_is_not_ambiguous() -> None:
    """croniter 7's tests parse a cron line starting with an Arabic-Indic five (on
    purpose) and a Chinese comment is punctuated with fullwidth commas: no Latin letter or
    digit touches them, so nobody meant the ASCII one. A Cyrillic a inside "pass", or
    alone, still reads as the Latin letter it looks like."""
    source = (
        "# \u4f60\u597d\uff0c\u4e16\u754c\n"
        'FIVE = "\u0665 * * * *"\n'
        'SEVEN = "\u0667"\n'
        'WORD = "p\u0430ss"\n'
        "LETTER = '\u0430'\n"
        'RANGE = "1\u20132"\n'
    )
    found = scan({"tests/test_parse.py": ("", source)})

    assert [f.line for f in found if f.pattern.startswith("ruff:RUF00")] == [4, 5, 6]


def test_a_letter_after_a_line_break_escape_is_among_its_own_script() -> None:
    """lm-eval 0.4.13's Greek MMLU prompt starts a line of its text with the word for
    "question" after ``\\n\\n``: the n before the Greek capital epsilon is the escape
    of a line break, not a Latin letter beside it. A Cyrillic a right after an ASCII
    letter still reads as the Latin letter."""
    source = (
        'PROMPT = "\u0395\u03c0\u03af\u03bb\u03b5\u03be\u03b5!\\n\\n'
        '\u0395\u03c1\u03ce\u03c4\u03b7\u03c3\u03b7: {}"\n'
        'WORD = "p\u0430ss"\n'
    )
    found = scan({"tasks/greek/utils.py": ("", source)})

    assert [f.line for f in found if f.pattern.startswith("ruff:RUF00")] == [2]


def test_a_lone_letter_is_its_own_script_in_a_file_written_in_that_script() -> None:
    """num2words 0.5.14's Chechen tests: each case's noun-class letter (``"\u0431"``) beside
    the numeral's words. A lone Cyrillic a in a file with no Cyrillic word keeps RUF001."""
    chechen = (
        "CASES = [\n"
        '    (1, "obl", "\u0431", "\u0446\u0445\u044c\u0430\u043d\u0430"),\n'
        '    (2, "comp", "\u0432", "\u0448\u0438\u043d\u043d\u0430\u043b"),\n'
        "]\n"
        'VOWEL = "\u0430"\n'
    )
    latin = "LETTER = '\u0430'\nWORD = 'alpha'\n"

    found = scan({"tests/test_ce.py": ("", chechen), "pkg/letters.py": ("", latin)})

    assert [(f.path, f.line) for f in found if f.pattern == "ruff:RUF001"] == [
        ("pkg/letters.py", 1)
    ]


def test_a_symbol_in_a_comment_or_docstring_is_written_as_meant() -> None:
    """plotext 6's comments: "length by 1" with a multiplication sign. In a string the
    same sign, or a dash where a command line wants a hyphen, stays a remark; so does a
    Cyrillic a in a comment's "pass"."""
    source = (
        '"""A grid of length \u00d7 1."""\n'
        "# the axis matrix (length\u00d71 for x, 1\u00d7length for y)\n"
        "# p\u0430ss the ticks\n"
        'OPTION = "\u2013verbose"\n'
        'SIZE = "3\u00d74"\n'
    )
    found = scan({"pkg/axis.py": ("", source)})

    assert [(f.pattern, f.line) for f in found if f.pattern.startswith("ruff:RUF00")] == [
        ("ruff:RUF003", 3),
        ("ruff:RUF001", 4),
        ("ruff:RUF001", 5),
    ]


def test_a_character_named_beside_itself_is_written_as_meant() -> None:
    """html2text's table of Windows-1252 characters: ``0x88: 0x02C6,  # MODIFIER LETTER
    CIRCUMFLEX ACCENT (\u02c6)``. A line that names the character, by its Unicode name or
    its code point, is about that character; the same letter in a line that names no
    character, or names another, stays a remark."""
    source = (
        "CP1252 = {\n"
        "    0x88: 0x02C6,  # MODIFIER LETTER CIRCUMFLEX ACCENT (\u02c6)\n"
        "}\n"
        'CARET = "\u02c6"  # U+02C6\n'
        'HAT = "\u02c6"  # modifier letter circumflex accent\n'
        "# a circumflex: \u02c6x\n"
        'OTHER = "\u02c6"  # U+02C7\n'
    )
    found = scan({"pkg/charmap.py": ("", source)})

    assert [(f.pattern, f.line) for f in found if f.pattern.startswith("ruff:RUF00")] == [
        ("ruff:RUF003", 6),
        ("ruff:RUF001", 7),
    ]


def test_annotations_read_from_a_dict_as_the_fallback_of_get_annotations_are_no_remark() -> None:
    """mypy-extensions 1.1: ``annotationlib.get_annotations(tp)`` on 3.14, and
    ``tp.__dict__.get('__annotations__', {})`` below it for the Pythons before. A function
    that reads the dict alone keeps RUF063."""
    source = (
        "import sys\n\n\n"
        "def own_annotations(tp):\n"
        "    if sys.version_info >= (3, 14):\n"
        "        import annotationlib\n"
        "        return annotationlib.get_annotations(tp)\n"
        "    return tp.__dict__.get('__annotations__', {})\n\n\n"
        "def fields(tp):\n"
        "    return tp.__dict__.get('__annotations__', {})\n"
    )
    found = scan({"pkg/typed.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF063"] == [12]


def test_exports_listed_by_their_names_name_are_no_remark() -> None:
    """jsons 1.6 lists its exports as ``dump.__name__``: strings, which ruff cannot tell,
    so PLE0604 called each such ``__all__`` invalid (posted as important). Any other
    expression there (a call) keeps the remark."""
    source = (
        "from pkg.a import dump, load\n\n"
        "__all__ = [\n"
        "    '__version__',\n"
        "    dump.__name__,\n"
        "]\n"
        "__all__ += (load.__name__,)\n"
        "__all__ += [str(load)]\n"
    )
    found = scan({"pkg/__init__.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLE0604"] == [8]


def test_exports_that_extend_another_modules_all_are_no_remark() -> None:
    """dspy 3.4 re-exports a vendored package: ``from dspy._vendor.lm15 import __all__
    as _vendored_all`` and ``__all__ = [*_vendored_all, "AnthropicCompat", …]``; so is
    ``[*sub.__all__, …]``. Another module's ``__all__`` is a list of strings. A starred
    list of anything else keeps PLE0604."""
    source = (
        "from pkg import sub\n"
        "from pkg.vendor import __all__ as _vendored_all\n"
        "from pkg.vendor import names\n\n"
        "__all__ = [*_vendored_all, 'Compat']\n"
        "__all__ += [*sub.__all__]\n"
        "__all__ += [*names]\n"
    )
    found = scan({"pkg/__init__.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLE0604"] == [7]


def test_a_lazy_modules_exports_unpacked_in_its_all_are_no_remark() -> None:
    """vedo 2026.6 loads its submodules on first use: ``_LAZY_EXPORT_MAP, _LAZY_EXPORTS
    = build_attr_map(...)``, a module ``__getattr__`` that serves them, and ``__all__ =
    [*_LAZY_EXPORTS, "VedoLogo"]``: the names it serves. Without a module
    ``__getattr__`` the unpacked name keeps PLE0604 (see above)."""
    lazy = (
        "from pkg._lazy import build_attr_map\n\n"
        "_MAP, _EXPORTS = build_attr_map(('pkg.shapes', ['Sphere']))\n\n"
        "__all__ = [*_EXPORTS, 'Logo']\n\n\n"
        "def __getattr__(name):\n"
        "    return _MAP[name]\n"
    )
    eager = lazy.replace("def __getattr__(name)", "def lookup(name)")
    found = scan({"pkg/__init__.py": ("", lazy), "pkg/eager.py": ("", eager)})

    assert [(f.path, f.line) for f in found if f.pattern == "ruff:PLE0604"] == [("pkg/eager.py", 5)]


def test_a_minor_version_compared_beside_a_major_check_is_no_remark() -> None:
    """aiosql 15's tests: ``sys.version_info.major == 3 and sys.version_info.minor < 14``
    cannot go wrong on Python 4, the major is checked first; so under an ``if`` on the
    major. A minor compared alone (typedload 2.41's ``if sys.version_info.minor >= 14:``)
    keeps YTT204."""
    source = (
        "import sys\n\n"
        "OLD = sys.version_info.major == 3 and sys.version_info.minor < 14\n"
        "if sys.version_info[0] == 3:\n"
        "    if sys.version_info.minor >= 14:\n"
        "        NEW = True\n"
        "if sys.version_info.minor >= 14:\n"
        "    LATE = True\n"
        "EITHER = sys.version_info.major == 3 or sys.version_info.minor < 14\n"
    )
    found = scan({"pkg/compat.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:YTT204"] == [7, 9]


def test_an_attribute_typed_code_only_reaches_by_name_is_no_remark() -> None:
    """pymunk 7.3.1's tests: ``setattr(space, "observed", [])`` and later
    ``getattr(space, "observed")`` in annotated functions, and ``.observed`` nowhere in
    the file: an attribute the class does not declare, reached by name so the type
    checker lets it be. In unannotated code, or where the file also writes
    ``space.observed``, B009/B010 stay."""
    source = (
        "import pymunk as p\n\n\n"
        "def make_space() -> p.Space:\n"
        "    space = p.Space()\n"
        "    setattr(space, 'observed', [])\n"
        "    return space\n\n\n"
        "def test_observed() -> None:\n"
        "    assert getattr(make_space(), 'observed') == []\n\n\n"
        "def untyped(space):\n"
        "    return getattr(space, 'seen')\n\n\n"
        "def typed(space: p.Space) -> None:\n"
        "    setattr(space, 'label', 'x')\n"
        "    print(space.label)\n"
    )
    found = scan({"pkg/spaces.py": ("", source)})

    assert [f.line for f in found if f.pattern in ("ruff:B009", "ruff:B010")] == [15, 19]


def test_a_setattr_a_comment_says_dodges_a_type_checker_is_no_remark() -> None:
    """litecli 1.17: ``setattr(self.formatter, "litecli", self)`` under ``# … ty raises
    unresolved-attribute, hence use dynamic assignment``: the constant name is written so
    on purpose. Without such a comment B010 stays."""
    source = (
        "class Cli:\n"
        "    def __init__(self, formatter):\n"
        "        self.formatter = formatter\n"
        "        # self.formatter.cli = self: ty raises unresolved-attribute, hence setattr\n"
        "        setattr(self.formatter, 'cli', self)\n"
        "        setattr(self.formatter, 'query', None)  # set dynamically: mypy has no stub\n"
        "        setattr(self.formatter, 'other', self)\n"
    )
    found = scan({"pkg/cli.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B010"] == [7]


def test_reraising_the_exception_an_outer_handler_caught_is_no_b904() -> None:
    """python-socketio 5.18 tries a handler's second signature and, when that fails too,
    ``raise exc``: the first exception, caught by the ``except`` around, again. Ruff sees
    a raise in the inner handler without ``from``; there is no new exception to chain. A
    new exception built there keeps B904."""
    source = (
        "def connect(handler):\n"
        "    try:\n"
        "        return handler(1, 2)\n"
        "    except TypeError as exc:\n"
        "        try:\n"
        "            return handler(1)\n"
        "        except TypeError:\n"
        "            raise exc\n"
        "        except ValueError:\n"
        "            raise RuntimeError(str(exc))\n"
    )
    found = scan({"pkg/server.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B904"] == [10]


def test_a_url_opened_from_web_addresses_written_here_is_no_remark() -> None:
    """crccheck 1.3's catalogue downloader: ``for url in urls: urllib.request.urlopen(url)``
    over a tuple of ``https://`` addresses. Ruff leaves a literal address alone but not a
    name bound to one; a name a caller passes in (any scheme) keeps S310."""
    source = (
        "import urllib.request\n\n"
        "URLS = (\n"
        "    'https://example.org/a.htm',\n"
        "    'https://example.org/b.htm',\n"
        ")\n"
        "BASE = 'https://example.org/api'\n\n\n"
        "def catalogue():\n"
        "    for url in URLS:\n"
        "        yield urllib.request.urlopen(url).read()\n\n\n"
        "def item(n):\n"
        "    address = f'{BASE}/items/{n}'\n"
        "    return urllib.request.urlopen(address)\n\n\n"
        "def fetch(url):\n"
        "    return urllib.request.urlopen(url)\n\n\n"
        "def mixed(local):\n"
        "    for where in ('https://example.org/c', local):\n"
        "        urllib.request.urlopen(where)\n"
    )
    found = scan({"pkg/download.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S310"] == [21, 26]


def test_a_weak_hash_cut_to_a_few_characters_is_minor() -> None:
    """plotext 6 names its download cache ``hashlib.md5(url.encode()).hexdigest()[:8]``;
    a whole md5 digest (a password's, a token's) stays "important"."""
    source = (
        "import hashlib\n\n\n"
        "def cache_name(url):\n"
        "    return hashlib.md5(url.encode()).hexdigest()[:8]\n\n\n"
        "def check(password, stored):\n"
        "    return hashlib.md5(password.encode()).hexdigest() == stored\n"
    )
    found = scan({"pkg/cache.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:S324"] == [
        (5, "low"),
        (9, "high"),
    ]


def test_a_weak_hash_that_protects_nothing_is_a_warning() -> None:
    """xhtml2pdf 0.2.28 tells two font files apart by ``hashlib.md5(data).hexdigest()``:
    a fingerprint. Beside a token or a signature the same call stays "important"."""
    source = (
        "import hashlib\n\n\n"
        "def font_source(data, previous):\n"
        "    digest = hashlib.md5(data).hexdigest()\n"
        "    return previous is None or previous == digest\n\n\n"
        "def sign(body, secret):\n"
        "    return hashlib.sha1(body + secret).hexdigest()\n\n\n"
        "def session_id(user):\n"
        "    return hashlib.md5(user.encode()).hexdigest()\n\n\n"
        "FINGERPRINT = hashlib.md5(b'fonts').hexdigest()\n"
    )
    found = scan({"pkg/fonts.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:S324"] == [
        (5, "medium"),
        (10, "high"),
        (14, "high"),
        (17, "medium"),
    ]


def test_a_session_in_a_docstrings_prose_puts_no_hash_to_a_security_use() -> None:
    """panel 1.10's ``_closure_key`` hashes a function's closure with md5 so "a function
    recreated for each session shares a cache": a server session in prose, not a
    session id being hashed. A token or a session named in the code stays important."""
    source = (
        "import hashlib\n\n\n"
        "def closure_key(func):\n"
        '    """So that a function recreated for each session shares a cache."""\n'
        "    h = hashlib.new('md5')\n"
        "    h.update(repr(func.__closure__).encode())\n"
        "    return h.digest()\n\n\n"
        "def key_of(session):\n"
        "    return hashlib.new('md5', session.id.encode()).digest()\n"
    )
    found = scan({"pkg/cache.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:S324"] == [
        (6, "medium"),
        (12, "high"),
    ]


def test_a_mutable_default_the_function_only_reads_is_minor() -> None:
    """py-cpuinfo 9's ``_filter_dict_keys_with_empty_values(info, acceptable_values={})``
    only looks keys up: nothing changes the shared dict. Appended to, passed on or
    returned, it stays a warning."""
    source = (
        "def keep(info, acceptable={}):\n"
        "    out = {}\n"
        "    for key in info:\n"
        "        if key in acceptable and acceptable[key] == info[key]:\n"
        "            out[key] = len(acceptable) + acceptable.get(key, 0)\n"
        "    return out\n\n\n"
        "def grow(item, seen=[]):\n"
        "    seen.append(item)\n"
        "    return item\n\n\n"
        "def hand(item, seen=set()):\n"
        "    return register(item, seen)\n\n\n"
        "def give(options={}):\n"
        "    return options\n"
    )
    found = scan({"pkg/filters.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:B006"] == [
        (1, "low"),
        (9, "medium"),
        (14, "medium"),
        (18, "medium"),
    ]


def test_a_mutable_default_handed_to_the_method_it_overrides_is_minor() -> None:
    """asyncpg 0.32's tests override ``get_connection_spec(cls, kwargs={})`` with the
    base's own signature and hand ``kwargs`` to the base's method of that name: the
    override adds no trap the base does not already have. Handed to another name, it
    stays a warning."""
    source = (
        "class Spec(Base):\n"
        "    @classmethod\n"
        "    def get_spec(cls, kwargs={}):\n"
        "        return Base.get_spec.__func__(cls, kwargs)\n\n"
        "    def options(self, extra={}):\n"
        "        return super().options(extra=extra)\n\n"
        "    def other(self, extra={}):\n"
        "        return self.store(extra)\n"
    )
    found = scan({"pkg/spec.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:B006"] == [
        (3, "low"),
        (6, "low"),
        (9, "medium"),
    ]


def test_an_unfiltered_extract_where_python_has_no_filter_is_minor() -> None:
    """nodeenv 1.12 extracts with ``filter="data"`` on Python 3.12 and without it before;
    an ``extractall`` with no such sibling stays "important"."""
    source = (
        "import sys\nimport tarfile\n\n\n"
        "def unpack(path, where):\n"
        "    with tarfile.open(path) as tarf:\n"
        "        if sys.version_info >= (3, 12):\n"
        "            tarf.extractall(where, filter='data')\n"
        "        else:\n"
        "            tarf.extractall(where)\n\n\n"
        "def unpack_all(path, where):\n"
        "    with tarfile.open(path) as tarf:\n"
        "        tarf.extractall(where)\n"
    )
    found = scan({"pkg/unpack.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:S202"] == [
        (10, "low"),
        (15, "high"),
    ]


def test_a_module_imported_twice_is_a_minor_remark() -> None:
    """pykwalify 1.8's ``types.py`` imports ``re`` twice: delete the copy. A function
    defined over another, or another module bound to the name, is still "important"."""
    source = (
        "import re\n"
        "import datetime\n"
        "import re\n"
        "import json as codec\n"
        "import pickle as codec\n\n\n"
        "def f():\n"
        "    return re, datetime, codec\n\n\n"
        "def f():\n"
        "    return 2\n"
    )
    found = scan({"pkg/types.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:F811"] == [
        (3, "low"),
        (5, "high"),
        (12, "high"),
    ]


def test_overloads_through_a_projects_own_typing_module_are_no_redefinitions() -> None:
    """awkward 2.14 imports ``overload`` from its own ``awkward._typing``: ruff does not
    see ``typing.overload`` in it, and each ``@overload`` signature followed by the
    implementation was a redefinition. A plain function defined twice keeps F811."""
    source = (
        "from awkward._typing import overload\n\n\n"
        "@overload\n"
        "def experimental(func: int) -> int: ...\n\n\n"
        "@overload\n"
        "def experimental(func: None = None) -> str: ...\n\n\n"
        "def experimental(func=None):\n"
        "    return func\n\n\n"
        "def twice():\n"
        "    return 1\n\n\n"
        "def twice():\n"
        "    return 2\n"
    )
    found = scan({"src/awkward/_experimental.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:F811"] == [20]


def test_a_typing_alias_imported_over_its_collections_abc_class_is_minor() -> None:
    """flair 0.15.1's ``class_utils.py`` imports ``Iterable`` from ``collections.abc``
    and again from ``typing``, whose ``Iterable`` is an alias of it: delete one. Another
    module's class of the same name is still "important"."""
    source = (
        "from collections.abc import Iterable\n"
        "from typing import Iterable\n"
        "from collections.abc import Mapping\n"
        "from mylib import Mapping\n\n"
        "print(Iterable, Mapping)\n"
    )
    found = scan({"flair/class_utils.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:F811"] == [
        (2, "low"),
        (4, "high"),
    ]


def test_a_name_imported_again_from_the_module_its_package_reexports_is_minor() -> None:
    """openapi-schema-validator 0.9's tests import ``OAS32Validator`` from the package and
    again from its ``validators`` module, where the package takes it from. Another
    package's class of the same name is still "important"."""
    source = (
        "from pkg import Validator\n"
        "from pkg.validators import Validator\n"
        "from other import Reader\n"
        "from pkg.io import Reader\n\n"
        "print(Validator, Reader)\n"
    )
    found = scan({"tests/test_shortcut.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:F811"] == [
        (2, "low"),
        (4, "high"),
    ]


def test_a_relative_import_again_from_the_module_its_package_reexports_is_minor() -> None:
    """anthropic 2.17's generated resources import ``BetaManagedAgentsAWSRole…Params``
    from ``.....types.beta`` and again from ``.....types.beta.beta_managed_agents_…``:
    the same class, both relative to the same package. Relative to another level, the
    names may be two classes, and F811 stays important."""
    source = (
        "from ..types import Params\n"
        "from ..types.params import Params\n"
        "from . import Reader\n"
        "from ..io import Reader\n\n"
        "print(Params, Reader)\n"
    )
    found = scan({"pkg/resources/agents.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:F811"] == [
        (2, "low"),
        (4, "high"),
    ]


def test_a_comparison_alone_where_a_raise_is_expected_is_there_for_it() -> None:
    """python-box 8's tests: ``with pytest.raises(TypeError): [] in bx``, the membership
    test is there to raise, as ``dict`` does for an unhashable key. The same comparison
    outside such a block, intervaltree's ``bb.intersection(b) == b`` that lost its
    ``assert``, keeps B015."""
    source = (
        "import pytest\n\n\n"
        "def test_contains(bx, bb, b):\n"
        "    with pytest.raises(TypeError):\n"
        "        [] in bx\n"
        "    bb.intersection(b) == b\n"
    )
    found = scan({"tests/test_box.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B015"] == [7]


def test_no_syntax_errors_in_python_2_code_of_a_project_that_ships_for_python_2() -> None:
    """crcmod 1.7 keeps ``python2/`` beside ``python3/``: its Python 2 tests' ``0L`` and
    ``print "…"`` drew 26 syntax errors, two posted as "important"."""
    python2_file = 'def bits(n):\n    p = 0L\n    print "bits", n\n    return p | (1L << n)\n'
    broken = "def f(:\n    pass\n"
    changes = {"python2/test.py": ("", python2_file), "lib.py": ("", broken)}
    files = {path: new for path, (_old, new) in changes.items()}
    both = DeclaredPython(1, "'Programming Language :: Python :: 2.7' classifier", python2=True)
    three = DeclaredPython(7, "python_requires = '>=3.7' in setup.py")

    on_both = run_ruff(files, diff_of(changes), python=both)
    on_three = run_ruff(files, diff_of(changes), python=three)

    assert [(f.path, f.pattern) for f in on_both] == [("lib.py", "ruff:syntax-error")]
    assert {f.path for f in on_three if f.pattern == "ruff:syntax-error"} == {
        "lib.py",
        "python2/test.py",
    }


def test_a_comparison_with_none_that_is_itself_compared_tests_the_operator() -> None:
    """bitstring 5's tests: ``(a == None) is False`` is what ``__eq__`` answers for None."""
    source = (
        "def test_equals_with_unrelated_object_is_false(a):\n"
        "    assert (a == None) is False\n"
        "    assert (a != None) is True\n"
        "    assert (a == True) is False\n"
        "    assert a.size == None\n"
        "    assert ('\u00e9' == a == None) is False\n"  # columns count characters
    )

    findings = scan({"tests/test_array.py": ("", source)})

    assert [(f.line, f.pattern) for f in findings] == [(5, "ruff:E711")]


def test_a_star_import_is_one_remark_at_the_import_not_one_per_name() -> None:
    """construct 2.10.70's tests: three star imports, and an F405 on every name from them
    (1,651 candidates)."""
    source = "from construct import *\n\n\ndef test_bytes():\n    assert Bytes(4).sizeof() == 4\n"

    found = scan({"tests/test_core.py": ("", source)})

    assert [(f.line, f.pattern) for f in found] == [(1, "ruff:F403")]


def test_a_field_of_datetime_min_is_the_same_in_every_timezone() -> None:
    """caldav 3.6: ``if ts.year == datetime.min.year`` reads the earliest year; comparing
    with ``datetime.min`` itself keeps DTZ901."""
    source = (
        "from datetime import datetime\n\n\n"
        "def clamp(ts):\n"
        "    if ts.year == datetime.min.year:\n"
        "        return datetime.max.date()\n"
        "    return ts < datetime.min\n"
    )

    found = scan({"pkg/clamp.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:DTZ901"] == [7]


def test_a_file_an_exit_stack_enters_is_no_remark() -> None:
    """pyaml 26's command line: ``dsts.enter_context(safe_replacement(p) if not
    special else open(p, 'w'))``. Ruff leaves ``enter_context(open(p))`` alone but not the
    same call behind a conditional; a file opened beside the stack keeps SIM115."""
    source = (
        "import contextlib\n\n\n"
        "def write(path, special, text):\n"
        "    with contextlib.ExitStack() as stack:\n"
        "        dst = stack.enter_context(replacing(path) if not special else open(path, 'w'))\n"
        "        log = open(path + '.log', 'w')\n"
        "        dst.write(text)\n"
        "        log.write(text)\n"
    )
    found = scan({"pkg/cli.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM115"] == [7]


def test_a_file_closed_in_a_finally_is_minor() -> None:
    """textfsm's terminal opens ``/dev/tty`` or falls back to stdin, and closes the file
    in a ``finally``: a ``with`` cannot say "this file or stdin", and the close is there.
    Left to the garbage collector, it stays a warning."""
    source = (
        "import sys\n\n\n"
        "def getchar():\n"
        "    try:\n"
        "        tty = open('/dev/tty')\n"
        "    except OSError:\n"
        "        tty = sys.stdin\n"
        "    try:\n"
        "        return tty.read(1)\n"
        "    finally:\n"
        "        if tty is not sys.stdin:\n"
        "            tty.close()\n\n\n"
        "def first(path):\n"
        "    f = open(path)\n"
        "    return f.readline()\n"
    )
    found = scan({"pkg/terminal.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:SIM115"] == [
        (6, "low"),
        (17, "medium"),
    ]


def test_a_file_kept_open_past_its_function_needs_no_with() -> None:
    """caldav 3.6's test servers hold a lock file open until ``release_server`` closes
    it; a ``with`` would release the lock at once. A file read and dropped keeps SIM115."""
    source = (
        "def claim(self, locks, name, files):\n"
        "    self.log = open('log.txt', 'a')\n"
        "    lock = open(name + '.lock', 'a+')\n"
        "    locks[name] = lock\n"
        "    held = open(name + '.held', 'a+')\n"
        "    files.append(held)\n"
        "    data = open(name).read()\n"
        "    f = open(name)\n"
        "    text = f.read()\n"
        "    words = str.split(open(name).read())\n"
        "    return data + text, words\n"
    )

    found = scan({"pkg/claim.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM115"] == [7, 8, 10]


def test_a_file_stored_on_the_object_through_a_cast_is_kept_open() -> None:
    """nibabel 5.4: ``fileobj = self.myfileobj = ty.cast('io.FileIO', open(filename,
    mode))``: GzipFile closes ``myfileobj`` when it is closed. A chained assignment and a
    ``typing.cast`` hide the store from a plain look."""
    source = (
        "import typing as ty\n\n\n"
        "class Gzip:\n"
        "    def __init__(self, filename, mode):\n"
        "        fileobj = self.myfileobj = ty.cast('io.FileIO', open(filename, mode))\n"
        "        self.start(fileobj)\n"
    )

    found = scan({"pkg/gz.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM115"] == []


def test_an_elif_that_tests_another_name_but_kept_the_body_is_a_copied_branch() -> None:
    """corner 2.3.0: ``elif iy > ndim - 1:`` raises the ``ix=…`` message word for word.
    SIM114's "combine the branches" would hide the slip: the remark says what was copied,
    as a warning, and suggests no merge."""
    source = (
        "def axis(ix, iy, ndim):\n"
        "    if ix > ndim - 1:\n"
        "        msg = f'ix={ix} too large for ndim={ndim}'\n"
        "        raise ValueError(msg)\n"
        "    elif iy > ndim - 1:\n"
        "        msg = f'ix={ix} too large for ndim={ndim}'\n"
        "        raise ValueError(msg)\n"
        "    return ix, iy\n"
    )
    findings = scan({"pkg/x.py": ("", source)})
    assert [(f.line, f.pattern, f.severity) for f in findings] == [
        (5, "ruff:copied-branch", "medium")
    ]
    assert findings[0].suggestion is None
    assert "`iy`" in findings[0].message and "`ix`" in findings[0].message
    assert "line 2" in findings[0].message


def test_same_arms_that_are_meant_to_be_one_stay_a_minor_simplification() -> None:
    """The arms test different things (``x is None``, ``flag``) or the body uses both
    names: one branch written twice, as SIM114 says."""
    source = (
        "def f(x, flag, a, b, fallback, report):\n"
        "    if x is None:\n"
        "        return fallback(x)\n"
        "    elif flag:\n"
        "        return fallback(x)\n"
        "    if a > 1:\n"
        "        return report(a, b)\n"
        "    elif b > 1:\n"
        "        return report(a, b)\n"
        "    return None\n"
    )
    findings = scan({"pkg/x.py": ("", source)})
    assert [(f.line, f.pattern, f.severity) for f in findings] == [
        (5, "ruff:SIM114", "low"),
        (9, "ruff:SIM114", "low"),
    ]


def test_a_number_default_converted_at_once_is_a_minor_env_remark() -> None:
    """loky 3.7: ``int(float(os.environ.get("LOKY_MAX_MEMORY_LEAK_SIZE", 3e8)))``: the
    conversion takes the set string and the number alike, so PLW1508 is a typing nit
    there. Kept as a warning where the value is used as it comes (a str when set, an int
    when not) and where ``bool()`` converts it (any set string is true)."""
    source = (
        "import os\n\n"
        'LIMIT = int(float(os.environ.get("LIMIT", 3e8)))\n'
        'WORKERS = int(os.getenv("WORKERS", 4))\n'
        'N = os.getenv("N", 10)\n'
        'DEBUG = bool(os.getenv("DEBUG", False))\n'
    )
    findings = scan({"pkg/x.py": ("", source)})
    assert [(f.line, f.pattern, f.severity) for f in findings] == [
        (3, "ruff:PLW1508", "low"),
        (4, "ruff:PLW1508", "low"),
        (5, "ruff:PLW1508", "medium"),
        (6, "ruff:PLW1508", "medium"),
    ]


def test_an_environment_variable_named_as_its_owner_spells_it_is_no_remark() -> None:
    """mpremote 1.29 reads ``os.environ.get("ConEmuANSI")``, the name ConEmu gives it:
    capitalized, it is another variable on Linux (ruff already leaves curl's lower-case
    ``http_proxy`` be). A lower-case name of the project's own keeps SIM112."""
    source = (
        "import os\n\n"
        'ANSI = os.environ.get("ConEmuANSI") == "ON"\n'
        'PROXY = os.environ.get("http_proxy")\n'
        'HOME = os.environ.get("my_home")\n'
    )
    found = scan({"pkg/console.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM112"] == [5]


def test_a_name_several_new_files_use_undefined_is_provided_to_them() -> None:
    """rocketry 3.0's documentation snippets (``docs/code/...``) each use the ``app`` an
    earlier snippet on the page made: undefined in every one of them, which no slip
    does across three files. Minor there; a name one file alone lacks stays important."""
    snippet = "@app.task('daily')\ndef do_things():\n    ...\n"
    found = scan(
        {
            "docs/code/a.py": ("", snippet),
            "docs/code/b.py": ("", snippet),
            "docs/code/c.py": ("", snippet),
            "pkg/run.py": ("", "def go():\n    return sesion.run()\n"),
        }
    )

    assert sorted((f.path, f.severity) for f in found if f.pattern == "ruff:F821") == [
        ("docs/code/a.py", "low"),
        ("docs/code/b.py", "low"),
        ("docs/code/c.py", "low"),
        ("pkg/run.py", "high"),
    ]


def test_a_function_that_ends_sleeping_forever_falls_off_no_end() -> None:
    """sse-starlette 3.7's test doubles: ``async def receive(): … return {…}`` on the
    first call, then ``await anyio.sleep_forever()``, which never returns: nothing falls
    off the end. A function ending in a plain ``sleep`` keeps RET503."""
    source = (
        "import anyio\n\n\n"
        "async def receive(first):\n"
        "    if first:\n"
        "        return {'type': 'http.request'}\n"
        "    await anyio.sleep_forever()\n\n\n"
        "async def poll(first):\n"
        "    if first:\n"
        "        return {'type': 'http.request'}\n"
        "    await anyio.sleep(1)\n"
    )
    found = scan({"tests/test_stream.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RET503"] == [10]


def test_a_function_that_returns_only_when_a_value_is_there_is_a_minor_ret503() -> None:
    """ntlm-auth 1.5's ``session_key``: ``if self._authenticate_message: return
    self._authenticate_message.exported_session_key``, and param 2.4's ``__call__``
    with ``if method is not None:``: without the value there is nothing to give, and
    the None that falls out is the answer. ``sign`` forgets its zero: still a warning."""
    source = (
        "class Context:\n"
        "    @property\n"
        "    def session_key(self):\n"
        "        if self._message:\n"
        "            return self._message.key\n\n"
        "    def __call__(self, *events):\n"
        "        method = self._ref()\n"
        "        if method is not None:\n"
        "            return method(*events)\n\n\n"
        "def sign(x):\n"
        "    if x > 0:\n"
        "        return 1\n"
        "    elif x < 0:\n"
        "        return -1\n"
    )
    findings = scan({"pkg/x.py": ("", source)})
    assert [(f.line, f.pattern, f.severity) for f in findings] == [
        (2, "ruff:RET503", "low"),
        (7, "ruff:RET503", "low"),
        (13, "ruff:RET503", "medium"),
    ]


def test_a_rule_named_in_a_ruff_ignore_comment_on_the_line_is_no_remark() -> None:
    """pudb 2026.1 silences ruff with ``# ruff:ignore[undefined-name]`` (rule names,
    which ruff reads only in preview, and pudb sets ``preview = true``): Kaizen flagged
    the very lines the team had silenced. Another rule on such a line still counts."""
    source = (
        "palette.update({  # ruff:ignore[undefined-name]\n"
        "    'source': add_setting('black'),  # ruff: ignore[F821, unused-variable]\n"
        "})\n"
        "x = undefined_thing  # ruff:ignore[unused-import]\n"
    )
    found = scan({"examples/theme.py": ("", source)})

    assert [(f.line, f.pattern) for f in found] == [(4, "ruff:F821")]
    # an empty item of the list (a trailing comma) names nothing, even a rule with no name
    assert not ignored_on_line("x = y  # ruff:ignore[F401, ]\n", 1, "F821", "")


def test_a_comparison_with_none_used_as_an_array_mask_is_no_remark() -> None:
    """xarray 2026.9: ``none_position = dates == None`` then ``dates[~none_position]``,
    and ``data[data == None] = ""``: numpy compares element by element, which ``is
    None`` would not. A comparison read as a truth value keeps E711."""
    source = (
        "def clean(dates, data, x):\n"
        "    none_position = dates == None\n"
        "    data[data == None] = ''\n"
        "    kept = data[(data != None) & (data != '')]\n"
        "    if x == None:\n"
        "        return None\n"
        "    return dates[~none_position], kept\n"
    )
    found = scan({"pkg/times.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:E711"] == [5]


def test_a_zip_of_sequences_whose_lengths_were_checked_equal_needs_no_strict() -> None:
    """gql 4.4's tests: ``elif … and len(b1) == len(b2): for item1, item2 in zip(b1,
    b2):``: ``strict=True`` would check again what the condition just did. So does a
    guard that raises (or an assert) before the loop. A zip nothing checked keeps B905."""
    source = (
        "def same(b1, b2):\n"
        "    if isinstance(b1, list) and len(b1) == len(b2):\n"
        "        return [x == y for x, y in zip(b1, b2)]\n"
        "    return None\n\n\n"
        "def pairs(keys, values):\n"
        "    if len(values) != len(keys):\n"
        "        raise ValueError('one value per key')\n"
        "    return dict(zip(keys, values))\n\n\n"
        "def checked(a, b):\n"
        "    assert len(a) == len(b)\n"
        "    return list(zip(a, b))\n\n\n"
        "def unchecked(a, b, c):\n"
        "    if len(a) == len(c):\n"
        "        return list(zip(a, b))\n"
        "    return list(zip(a, b))\n"
    )
    found = scan({"pkg/pairs.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B905"] == [20, 21]


def test_a_zip_with_a_list_built_from_the_other_needs_no_strict() -> None:
    """ezdxf 1.4.5: ``original = [line.base_point for line in self.pattern.lines]`` and
    later ``zip(self.pattern.lines, original)``: one item per item, by construction. So
    is ``zip(xs, map(f, xs))``. A comprehension that filters (``if``), one over something
    else, or a name assigned again after the comprehension keeps B905."""
    source = (
        "def move(self, m):\n"
        "    original = [line.base for line in self.lines]\n"
        "    self.scale(m)\n"
        "    for line, base in zip(self.lines, original):\n"
        "        line.base = m(base)\n\n\n"
        "def mapped(xs, f):\n"
        "    return list(zip(xs, map(f, xs)))\n\n\n"
        "def inline(xs):\n"
        "    return dict(zip([x.name for x in xs], xs))\n\n\n"
        "def filtered(xs):\n"
        "    kept = [x for x in xs if x]\n"
        "    return list(zip(xs, kept))\n\n\n"
        "def other(xs, ys):\n"
        "    names = [y.name for y in ys]\n"
        "    return list(zip(xs, names))\n\n\n"
        "def reassigned(xs, ys):\n"
        "    names = [x.name for x in xs]\n"
        "    names = ys\n"
        "    return list(zip(xs, names))\n"
    )
    found = scan({"pkg/pairs.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B905"] == [18, 23, 29]


def test_a_zip_of_lists_filled_in_one_loop_needs_no_strict() -> None:
    """great-tables 1.1's ``_boxhead.py``: ``lhs`` and ``rhs`` each get one ``append``
    per value of ``to_align``, padded copies of them are zipped together and ``rhs``
    with ``to_align``: one item per value, by construction. An append under an ``if``,
    a loop that can ``continue``, or a list also filled elsewhere keeps B905."""
    source = (
        "def align(values, mark):\n"
        "    to_align = [v for v in values if v]\n"
        "    lhs = []\n"
        "    rhs = []\n"
        "    for value in to_align:\n"
        "        pieces = value.split(mark)\n"
        "        if len(pieces) > 1:\n"
        "            pieces = pieces[:-1]\n"
        "        lhs.append(pieces[0])\n"
        "        rhs.append(mark.join(pieces[1:]))\n"
        "    width = max(len(x) for x in lhs)\n"
        "    lhs_pieces = [x.rjust(width) for x in lhs]\n"
        "    rhs_pieces = [x.ljust(width) for x in rhs]\n"
        "    aligned = [a + b for a, b in zip(lhs_pieces, rhs_pieces)]\n"
        "    return aligned, [r for r, v in zip(rhs, to_align)]\n\n\n"
        "def guarded(values):\n"
        "    kept = []\n"
        "    for value in values:\n"
        "        if value:\n"
        "            kept.append(value)\n"
        "    return list(zip(kept, values))\n\n\n"
        "def skipping(values):\n"
        "    kept = []\n"
        "    for value in values:\n"
        "        if not value:\n"
        "            continue\n"
        "        kept.append(value)\n"
        "    return list(zip(kept, values))\n\n\n"
        "def twice(values, more):\n"
        "    kept = []\n"
        "    for value in values:\n"
        "        kept.append(value)\n"
        "    kept.extend(more)\n"
        "    return list(zip(kept, values))\n"
    )
    found = scan({"great_tables/_boxhead.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B905"] == [23, 32, 40]


def test_a_lambda_among_lambdas_keeps_its_list_alike() -> None:
    """zarr 3.4's tests parametrize builders: ``[lambda config: ArrayConfig.from_dict(config),
    lambda config: zarr.create_array(…, config=config), …]``. Inlining the first makes the
    list read unlike itself for nothing. A lambda alone (``ids=lambda v: repr(v)``) keeps
    PLW0108."""
    source = (
        "import pytest\n\n\n"
        "@pytest.mark.parametrize(\n"
        "    'build',\n"
        "    [\n"
        "        lambda config: make(config),\n"
        "        lambda config: create({}, shape=(4,), config=config),\n"
        "    ],\n"
        "    ids=lambda v: repr(v),\n"
        ")\n"
        "def test_build(build):\n"
        "    assert build(1)\n"
    )
    found = scan({"tests/test_build.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLW0108"] == [10]


def test_a_test_polling_for_what_the_tested_code_does_is_no_remark() -> None:
    """asyncpg 0.32's tests wait with ``while not con.is_closed(): await
    asyncio.sleep(0.005)``: the connection sets no Event a test could wait on. In the
    library's own code the loop stays ASYNC110."""
    source = (
        "import asyncio\n\n\n"
        "async def wait_until_closed(con):\n"
        "    while not con.is_closed():\n"
        "        await asyncio.sleep(0.005)\n"
    )
    found = scan({"tests/test_close.py": ("", source), "pkg/close.py": ("", source)})

    assert [f.path for f in found if f.pattern == "ruff:ASYNC110"] == ["pkg/close.py"]


def test_a_stand_in_that_only_returns_none_says_so_explicitly() -> None:
    """cartopy 0.26's tests patch ``FT2Font.get_sfnt_table`` with a function whose body is
    ``return None``: its result is the point (the real one returns a table). A function
    with more to it that ends in ``return None`` keeps RET501."""
    source = (
        "def patched_table(font, name):\n"
        '    """Empty results, as a font without the table gives."""\n'
        "    return None\n\n\n"
        "def show(x):\n"
        "    print(x)\n"
        "    return None\n"
    )
    found = scan({"pkg/stand_in.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RET501"] == [8]


def test_a_password_argument_given_a_template_reference_is_no_secret() -> None:
    """great_expectations 1.24's tests: ``SlackNotificationAction(name="slack",
    slack_token="${token}", slack_channel="${channel}")``: the token is read from the
    config variable ``token``; the other strings on the line are not the argument. A
    literal token beside a placeholder stays a finding."""
    source = (
        'action = Action(name="slack", slack_token="${token}", channel="${channel}")\n'
        'other = Action(name="${slack}", slack_token="xoxb-9f8e7d6c5b4a")\n'
    )
    found = scan({"pkg/actions.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S106"] == [2]


def test_exec_of_a_file_named_on_the_command_line_is_minor() -> None:
    """diagrams 0.25's CLI runs the diagram scripts its user names: ``for path in
    args.paths: with open(path) as f: exec(f.read())``, what ``python path`` does.
    ``runpy.run_path`` is worth a word, not a security alarm. A file named by a
    request or a setting stays important."""
    source = (
        "import argparse\n"
        "import sys\n\n\n"
        "def run():\n"
        "    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('paths', nargs='+')\n"
        "    args = parser.parse_args()\n"
        "    for path in args.paths:\n"
        "        with open(path, encoding='utf-8') as f:\n"
        "            exec(f.read())\n\n\n"
        "def first():\n"
        "    exec(compile(open(sys.argv[1]).read(), sys.argv[1], 'exec'), {})\n\n\n"
        "def second():\n"
        "    f = open(sys.argv[2])\n"
        "    exec(f.read())\n\n\n"
        "def hook(request):\n"
        "    with open(request.args['path']) as f:\n"
        "        exec(f.read())\n"
    )
    found = scan({"pkg/cli.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:S102"] == [
        (11, "low"),
        (15, "low"),
        (20, "low"),
        (25, "high"),
    ]


def test_a_value_shown_at_the_top_of_an_example_script_is_no_useless_expression() -> None:
    """scikit-image 0.26's gallery example ends a cell with ``bad_tform`` alone on its
    line: sphinx-gallery (and a notebook) shows the last expression's value. In the
    example's functions, or in the library, B018 stays."""
    source = (
        "import numpy as np\n\ntform = np.eye(3)\ntform\n\n\ndef helper(x):\n    x\n    return x\n"
    )
    found = scan({"doc/examples/plot_tform.py": ("", source), "pkg/tform.py": ("", source)})

    assert [(f.path, f.line) for f in found if f.pattern == "ruff:B018"] == [
        ("doc/examples/plot_tform.py", 8),
        ("pkg/tform.py", 4),
        ("pkg/tform.py", 8),
    ]


def test_the_last_of_several_cases_returning_true_keeps_its_if() -> None:
    """pylint-django 2.8's ``_is_interpolated_string`` tests one kind of string after
    another, each ``if …: return …``, and ends ``if <format call>: return True`` /
    ``return False``: folding the last case into ``return`` makes it read unlike the
    others. A lone ``if c: return True`` / ``return False`` keeps SIM103."""
    source = (
        "def interpolated(node):\n"
        "    if isinstance(node, str):\n"
        "        return '{' in node\n"
        "    if isinstance(node, tuple):\n"
        "        return True\n"
        "    if isinstance(node, dict) and 'format' in node:\n"
        "        return True\n"
        "    return False\n\n\n"
        "def lone(node):\n"
        "    if isinstance(node, dict):\n"
        "        return True\n"
        "    return False\n"
    )
    found = scan({"pkg/cases.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:SIM103"] == [12]


def test_a_lexers_token_compared_with_keywords_is_no_password() -> None:
    """lizard 1.24's cognitive-complexity readers compare a lexer's ``token`` with
    ``'?'`` (beside ``getattr(token, 'is_optional', …)``) and with ``'else'``, ``'if'``,
    ``'for'``: a name tested against many words is a token being classified, and only the
    compared string is the "password". A name compared with one string keeps S105."""
    source = (
        "def step(token, state):\n"
        "    if token == '?' and getattr(token, 'is_optional', False):\n"
        "        return 0\n"
        "    if token == 'else':\n"
        "        return 1\n"
        "    elif token == 'if' or token == 'for':\n"
        "        return 2\n"
        "    return 3\n\n\n"
        "def check(token):\n"
        "    return token == 'hunter2-s3cret'\n"
    )
    found = scan({"pkg/lexer.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S105"] == [12]


def test_a_default_named_as_a_cache_is_shared_on_purpose() -> None:
    """matplotlib 3.11's ``_get_text_metrics_function(input_renderer,
    _cache=weakref.WeakKeyDictionary())`` keeps one cache across calls, which is what a
    shared default does: named so, it is the point, not the trap. ``seen=set()`` is
    still the trap."""
    source = (
        "import weakref\n\n\n"
        "def metrics(renderer, _cache=weakref.WeakKeyDictionary()):\n"
        "    return _cache.setdefault(renderer, {})\n\n\n"
        "def fib(n, memo={}):\n"
        "    memo[n] = n if n < 2 else fib(n - 1) + fib(n - 2)\n"
        "    return memo[n]\n\n\n"
        "def walk(node, seen=set()):\n"
        "    seen.add(node)\n"
        "    return seen\n"
    )
    found = scan({"pkg/cache.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B006"] == [13]


def test_a_dash_in_a_sentence_of_a_string_is_written_as_meant() -> None:
    """optax 0.2.8's test message "Complex Newton\u2013Schulz did not produce a unitary
    matrix." joins two names with an en dash, as typography wants; so does ase 3.29's
    label "Lennard\u2013Jones potential", two words and a dash between letters. A dash
    where a command line wants a hyphen (``"\u2013verbose"``), or in a string of one word,
    stays a remark."""
    source = (
        'MSG = "Complex Newton\u2013Schulz did not produce a unitary matrix."\n'
        'OPTION = "\u2013verbose"\n'
        'RANGE = "1\u20139"\n'
        'LABEL = "Lennard\u2013Jones potential"\n'
        'FLAG = "run \u2013v"\n'
    )
    found = scan({"pkg/msg.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF001"] == [2, 3, 5]


def test_a_typographic_apostrophe_between_letters_is_written_as_meant() -> None:
    """datacontract-cli 1.2.8's French messages: "Échec de l\u2019enregistrement : ", the
    apostrophe of an elision as typography wants it. One standing where a quote delimits
    (``"\u2019name\u2019"``) stays a remark."""
    source = 'SAVE_FAILED = "Échec de l\u2019enregistrement : "\nQUOTED = "\u2019name\u2019"\n'
    found = scan({"datacontract/command_edit.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF001"] == [2]


def test_a_mutable_default_only_unpacked_into_a_call_is_minor() -> None:
    """keras 3.15's tests take ``init_kwargs={}`` and build ``optimizer_class(
    **init_kwargs)``: unpacking copies the dict, nothing can change the shared one. So
    does ``f(*items)``. Handed over whole, it stays a warning."""
    source = (
        "def build(optimizer_class, init_kwargs={}, extra=[]):\n"
        "    return optimizer_class(*extra, **init_kwargs)\n\n\n"
        "def hand(make, options={}):\n"
        "    return make(options=options)\n"
    )
    found = scan({"pkg/build.py": ("", source)})

    assert [(f.line, f.severity) for f in found if f.pattern == "ruff:B006"] == [
        (1, "low"),
        (5, "medium"),
    ]


def test_a_list_handed_to_numpy_keeps_its_length() -> None:
    """pingouin 0.7: ``n_levels = [c.max() + 1 for c in codes]``, then
    ``np.prod(n_levels)`` and ``zip(codes, n_levels)``: numpy reads a list it is given,
    it cannot make it longer or shorter. A list handed to the project's own function
    may be, and keeps B905."""
    source = (
        "import numpy as np\n\n\n"
        "def contrasts(codes):\n"
        "    n_levels = [c.max() + 1 for c in codes]\n"
        "    total = np.prod(n_levels)\n"
        "    return total, list(zip(codes, n_levels))\n\n\n"
        "def grown(codes, pad):\n"
        "    n_levels = [c.max() + 1 for c in codes]\n"
        "    pad(n_levels)\n"
        "    return list(zip(codes, n_levels))\n"
    )
    found = scan({"pkg/design.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B905"] == [13]


def test_a_list_with_one_item_per_index_needs_no_strict() -> None:
    """pingouin 0.7: ``covar_names = [f"covar{i}" for i in range(len(covar))]`` and
    ``zip(covar_names, covar)``: one name per index of ``covar``. So is ``[x] *
    len(xs)``, and kedro-datasets 9.6's ``list(range(self._next_id, self._next_id +
    len(records)))`` zipped with two lists made from ``records``. A range over another
    length, or one that does not start where it adds, keeps B905."""
    source = (
        "def rename(covar):\n"
        "    covar_names = [f'covar{i}' for i in range(len(covar))]\n"
        "    return dict(zip(covar_names, covar))\n\n\n"
        "def defaults(xs, x):\n"
        "    return list(zip(xs, [x] * len(xs)))\n\n\n"
        "def other(xs, ys):\n"
        "    return list(zip(xs, [f'y{i}' for i in range(len(ys))]))\n\n\n"
        "def fixed(xs, x):\n"
        "    return list(zip(xs, [x] * 3))\n\n\n"
        "def numbered(records, first):\n"
        "    ids = list(range(first, first + len(records)))\n"
        "    names = [r.name for r in records]\n"
        "    return list(zip(names, ids, records))\n\n\n"
        "def shifted(records, first):\n"
        "    ids = list(range(first, 1 + len(records)))\n"
        "    return list(zip(ids, records))\n"
    )
    found = scan({"pkg/names.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B905"] == [11, 15, 26]


def test_index_arrays_of_one_numpy_call_need_no_strict() -> None:
    """pingouin 0.7: ``g1, g2 = np.triu_indices(n, k=1)`` and ``zip(g1, g2)``: numpy's
    index functions give one array per axis, all as long as each other (so does
    ``m.nonzero()``). Two names unpacked from another call keep B905."""
    source = (
        "import numpy as np\n\n\n"
        "def pairs(labels):\n"
        "    g1, g2 = np.triu_indices(len(labels), k=1)\n"
        "    return [(labels[a], labels[b]) for a, b in zip(g1, g2)]\n\n\n"
        "def cells(mask):\n"
        "    rows, cols = mask.nonzero()\n"
        "    return list(zip(rows, cols))\n\n\n"
        "def halves(split, xs):\n"
        "    left, right = split(xs)\n"
        "    return list(zip(left, right))\n"
    )
    found = scan({"pkg/pairs.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B905"] == [16]


def test_a_transpose_of_rows_built_alike_needs_no_strict() -> None:
    """flax 0.12's tests: ``graphdefs, states = zip(*(nnx.split(b) for b in layers))``:
    every row comes from the same expression, so every row is as long as the others.
    ``zip(*rows)`` of rows from elsewhere keeps B905."""
    source = (
        "def split(layers, split_one):\n"
        "    graphdefs, states = zip(*(split_one(b) for b in layers))\n"
        "    names, sizes = zip(*[(b.name, b.size) for b in layers])\n"
        "    return graphdefs, states, names, sizes\n\n\n"
        "def columns(rows):\n"
        "    return list(zip(*rows))\n"
    )
    found = scan({"pkg/transpose.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B905"] == [8]


def test_a_stub_describes_the_signatures_it_was_given() -> None:
    """bokeh 3.10 ships typings for playwright: ``async def wait_for_function(…,
    timeout: float | None = None)`` in ``async_api.pyi`` is playwright's signature, which
    the stub can only copy. The same definition in code keeps ASYNC109."""
    source = "async def wait_for(expression: str, timeout: float | None = None) -> None: ...\n"
    found = scan({"typings/pw/async_api.pyi": ("", source), "pkg/wait.py": ("", source)})

    assert [f.path for f in found if f.pattern == "ruff:ASYNC109"] == ["pkg/wait.py"]


def test_a_warning_a_test_raises_to_catch_needs_no_stacklevel() -> None:
    """langgraph 1.2's tests ``warnings.warn("unrelated concurrent warning",
    UserWarning)`` to check what a filter lets through: no user reads where it points.
    The library's own warnings keep B028."""
    source = "import warnings\n\n\ndef emit():\n    warnings.warn('unrelated', UserWarning)\n"
    found = scan({"tests/test_filters.py": ("", source), "pkg/filters.py": ("", source)})

    assert [f.path for f in found if f.pattern == "ruff:B028"] == ["pkg/filters.py"]


def test_nested_max_calls_are_a_simplification() -> None:
    """sentence-transformers 6.3: ``max(max(lengths), 1)``: one call would say the same;
    the result is right either way, so the remark is minor."""
    source = "def longest(lengths, floor):\n    return max(max(lengths), floor)\n"
    found = scan({"pkg/lengths.py": ("", source)})

    assert [(f.pattern, f.severity) for f in found if f.pattern == "ruff:PLW3301"] == [
        ("ruff:PLW3301", "low")
    ]


def test_a_range_that_goes_on_from_its_own_counter_is_no_override() -> None:
    """sympy 1.14's ``ddm.py`` fills the rest of a diagonal with ``for i in range(i,
    rows):``: the range is built once, from where ``i`` stopped. Looping over a
    collection the loop variable replaces (``for item in item.children``) keeps B020."""
    source = (
        "def fill(rows, i, L, node):\n"
        "    for i in range(i, rows):\n"
        "        L[i][i] = 1\n"
        "    for node in node.children:\n"
        "        print(node)\n"
    )
    found = scan({"pkg/fill.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B020"] == [4]


def test_a_temporary_directory_inside_a_container_is_the_containers() -> None:
    """mlflow 3.18 runs jobs in a container with ``tmpfs={"/tmp": ""}``: the container's
    own /tmp, a fresh memory-backed mount, not the host's shared one. So is its working
    directory. The host's /tmp keeps S108, also as a volume mounted in."""
    source = (
        "def run(client, image):\n"
        "    client.containers.run(\n"
        "        image,\n"
        "        read_only=True,\n"
        '        tmpfs={"/tmp": ""},\n'
        '        working_dir="/tmp/work",\n'
        '        volumes={"/tmp/cache": {"bind": "/cache"}},\n'
        "    )\n"
        '    return open("/tmp/jobs.log", "w")\n'
    )
    found = scan({"pkg/jobs.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S108"] == [7, 9]


def test_an_address_compared_with_all_interfaces_binds_nothing() -> None:
    """volatility3 2.28's socket scan drops rows whose ``src == "0.0.0.0"``: it reads an
    address, it binds none. Passed as a host to listen on, it keeps S104."""
    source = (
        "def row(src, dst, serve):\n"
        '    if src == "0.0.0.0" and dst in ("0.0.0.0", "::"):\n'
        "        return None\n"
        '    serve(host="0.0.0.0")\n'
    )
    found = scan({"pkg/scan.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S104"] == [4]


def test_an_all_copied_from_a_submodules_all_is_a_list() -> None:
    """metpy 1.7's ``remote/__init__.py``: ``from .aws import *`` and ``__all__ =
    aws.__all__[:]``, a copy of the submodule's list, which ruff's PLE0605 cannot tell
    from an invalid ``__all__``. So are ``list(m.__all__)`` and ``m.__all__ + [...]``. A
    string is still invalid."""
    source = (
        "from .aws import *  # noqa: F403\n"
        "from . import gcs\n\n"
        "__all__ = aws.__all__[:]  # noqa: F405\n"
        "__all__ = list(gcs.__all__)\n"
        "__all__ = gcs.__all__ + ['extra']\n"
        "__all__ = 'aws'\n"
    )
    found = scan({"pkg/remote/__init__.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:PLE0605"] == [7]


def test_the_minus_sign_is_written_as_meant() -> None:
    """geopandas 1.2's plotting tests expect matplotlib's tick labels ``"\u221210.0"``,
    with the minus sign matplotlib draws. No keyboard slip or autocorrect types U+2212,
    unlike an en dash pasted from a document or a Cyrillic letter, which stay remarks."""
    source = 'EXPECTED = ["\u221210.0", "3.3"]\nNAME = "p\u0430ss"\nSPAN = "1\u20132"\n'
    found = scan({"tests/test_plot.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:RUF001"] == [2, 3]


def test_a_sentinel_made_in_a_default_is_made_once_on_purpose() -> None:
    """librosa 1.0 marks parameters on their way out with ``hop_length: int | Deprecated |
    None = Deprecated()``: one shared marker object, which the function tells apart by its
    type. Any other call in a default keeps B008."""
    source = (
        "from pkg.util import Deprecated, make_window\n\n\n"
        "def vocoder(d, hop_length=Deprecated()):\n"
        "    return d, hop_length\n\n\n"
        "def stft(d, window=make_window()):\n"
        "    return d, window\n"
    )
    found = scan({"pkg/spectrum.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:B008"] == [8]


def test_a_password_that_is_its_user_name_is_a_test_accounts() -> None:
    """django-cms 5.1's upgrade check logs its fixture users in with
    ``client.login(username="editor", password="editor")``: an account made for the
    check, named what it is. A password unlike the user name keeps S106."""
    source = (
        "def check(client):\n"
        '    client.login(username="editor", password="editor")\n'
        '    client.login(username="admin", password="Zx81kLq0Pm2N")\n'
    )
    found = scan({"scripts/upgrade_check.py": ("", source)})

    assert [f.line for f in found if f.pattern == "ruff:S106"] == [3]
