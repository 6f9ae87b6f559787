"""A condition copied from the one beside it and edited half-way (volatility3, scipy)."""

from __future__ import annotations

import difflib

from workers.review.copied_conditions import (
    PATTERN,
    CopiedCondition,
    copied_condition_findings,
    copied_conditions,
)
from workers.review.diff_model import DiffModel

VOLATILITY = (
    "def row(src, dst, renderers):\n"
    '    if (src == "0.0.0.0" or isinstance(src, renderers.NotAvailableValue)) and (\n'
    '        dst == "0.0.0.0" or isinstance(src, renderers.NotAvailableValue)\n'
    "    ):\n"
    "        return None\n"
    "    return src, dst\n"
)


def diff_of(path: str, old: str, new: str) -> DiffModel:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return DiffModel.from_unified("".join(lines))


def test_the_test_that_kept_the_old_name_is_found() -> None:
    """volatility3 2.28's socket scan: the destination's half tests ``src`` for being
    unavailable; scipy's arpack: ``not is_pydata_spmatrix(A)`` in the half about ``M``."""
    scipy = (
        "def op(A, M):\n"
        "    if ((not isdense(A) and not issparse(A) and not is_pydata_spmatrix(A)) or\n"
        "            (not isdense(M) and not issparse(M) and not is_pydata_spmatrix(A))):\n"
        "        return None\n"
    )
    assert copied_conditions(VOLATILITY) == [CopiedCondition(3, "src", "dst")]
    assert copied_conditions(scipy) == [CopiedCondition(3, "A", "M")]


def test_conditions_meant_as_written_are_left_alone() -> None:
    """Both halves renamed throughout; one test comparing two values' types; a list of
    cases that differ in the functions they call (sqlglot's simplifier); halves that
    swap two names; halves of different shapes; a name the first half also uses."""
    sources = [
        "x = (src == 0 or isinstance(src, N)) and (dst == 0 or isinstance(dst, N))\n",
        "x = isinstance(a, type(a)) and isinstance(b, type(a))\n",
        "x = (is_null(left) and is_null(right)) or (is_null(left) and always_true(right))\n",
        "x = (a.x == b.x and a.y == b.y) or (b.x == a.x and b.y == a.y)\n",
        "x = (a > 0 and b > 0) or (a < w and b < h)\n",
        "x = (f(a, cfg) and g(a)) or (f(b, cfg) and g(b))\n",
        "x = (lo <= i and j < hi) or (lo <= j and j < hi)\n",
        "x = (a == 1 or a == 2) and b == 3\n",
    ]
    assert [copied_conditions(s) for s in sources] == [[]] * len(sources)


def test_a_slip_the_pr_added_is_a_finding_and_an_old_one_is_not() -> None:
    new = diff_of("scan.py", "", VOLATILITY)
    (finding,) = copied_condition_findings({"scan.py": VOLATILITY}, new)
    assert (finding.path, finding.line, finding.pattern) == ("scan.py", 3, PATTERN)
    assert (finding.severity, finding.side, finding.source) == ("medium", "RIGHT", "static")
    assert "`src` changed to `dst`" in finding.message
    assert finding.code.strip().startswith('dst == "0.0.0.0"')

    touched = VOLATILITY.replace("return src, dst", "return dst, src")
    assert (
        copied_condition_findings({"scan.py": touched}, diff_of("scan.py", VOLATILITY, touched))
        == []
    )
    moved = "import os\n\n\n" + VOLATILITY
    assert (
        copied_condition_findings({"scan.py": moved}, diff_of("scan.py", VOLATILITY, moved)) == []
    )


def test_a_file_that_does_not_parse_has_none() -> None:
    assert copied_conditions("def broken(:\n    pass\n") == []
