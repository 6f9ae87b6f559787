"""Which failing tests a fix must make pass, when the issue says.

Why: a real project's default branch may already have failing tests that have nothing to
do with the issue. A fix had to make every failing test pass, so one such test made every
issue on that project unfixable. When the issue (or the ``/kaizen fix`` hint) names some
of the failing tests - people paste pytest's ``FAILED tests/x.py::test_y`` lines or a
test's name - those are the targets, and the other failing tests are left as they were:
not targets, and not counted as broken since they failed before. When it names none,
every failing test stays a target.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def short_name(nodeid: str) -> str:
    """``tests/x.py::TestK::test_y[1-2]`` -> ``test_y``."""
    return nodeid.rsplit("::", 1)[-1].split("[", 1)[0]


def named_in(issue_text: str, failing: Iterable[str]) -> set[str]:
    """The failing node ids the issue names: by node id, or by test name as a whole word."""
    words = set(re.findall(r"\w+", issue_text))
    return {nodeid for nodeid in failing if short_name(nodeid) in words or nodeid in issue_text}
