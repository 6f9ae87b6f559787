"""Which failing tests a fix must make pass, when the issue says.

Why: a real project's default branch may already have failing tests that have nothing to
do with the issue. A fix had to make every failing test pass, so one such test made every
issue on that project unfixable. When the issue (or the ``/kaizen fix`` hint) names some
of the failing tests - people paste pytest's ``FAILED tests/x.py::test_y`` lines or a
test's name - those are the targets, and the other failing tests are left as they were:
not targets, and not counted as broken since they failed before. When it names none,
every failing test stays a target.

When it names no test but names code (``max_len``, ``attrs.validators.max_len()``,
``make_default_short_help``), the failing tests *of* that code are the targets: tests
named after it (``test_max_len``, ``test_max_len_of_bytes``, ``TestMaxLen::test_check``,
case and underscores aside). attrs 24.2.0's own suite has a test that fails on Python
3.11 whatever the code does; an issue about ``max_len`` could not be fixed there before.
If no failing test is named after the code, every failing test stays a target.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from workers.fix.localize import (
    BUILTIN_NAMES,
    MIN_NAME,
    Spectrum,
    folded_name,
    frames_of,
    runs_in,
    symbol_names,
    test_subjects,
)


def short_name(nodeid: str) -> str:
    """``tests/x.py::TestK::test_y[1-2]`` -> ``test_y``."""
    return nodeid.rsplit("::", 1)[-1].split("[", 1)[0]


def code_names(issue_text: str) -> set[str]:
    """The names of code the issue writes as code (as the localiser reads them: snake_case,
    CamelCase, dotted, in backticks, called), their last dotted part folded (case and
    underscores aside): what tests are named for."""
    found = set()
    for name, _marked in symbol_names(issue_text):
        folded = folded_name(name.rsplit(".", 1)[-1])
        if len(folded) >= MIN_NAME and folded not in BUILTIN_NAMES:
            found.add(folded)
    return found


def targets_of_named_code(issue_text: str, failing: Iterable[str]) -> tuple[set[str], list[str]]:
    """The failing tests named after code the issue names, and those names (folded)."""
    names = code_names(issue_text)
    if not names:
        return set(), []
    found: set[str] = set()
    used: set[str] = set()
    for nodeid in failing:
        hits = names.intersection(test_subjects(nodeid))
        if hits:
            found.add(nodeid)
            used |= hits
    return found, sorted(used)


def named_in(issue_text: str, failing: Iterable[str]) -> set[str]:
    """The failing node ids the issue names: by node id, or by test name as a whole word."""
    words = set(re.findall(r"\w+", issue_text))
    return {nodeid for nodeid in failing if short_name(nodeid) in words or nodeid in issue_text}


def never_run(
    tests: Iterable[str],
    paths: Collection[str],
    spectrum: Spectrum,
    uncollected: Mapping[str, str] | None = None,
) -> bool:
    """Whether none of ``tests`` ran any line of the files at ``paths`` in the recorded
    coverage (a test the coverage does not know may have). The whole file, not the changed
    lines: a test of the same bug may fail before it reaches them (a branch the bug sends
    it down), and a patch elsewhere in the file would then pass for the fix.

    ``uncollected`` maps the modules pytest could not import to their error's report: such
    a module ran no test, and its import went through the files its traceback names."""
    known = uncollected or {}
    return all(
        not any(_names_path(known[t], path) for path in paths)
        if t in known
        else runs_in(spectrum, t, paths) is False
        for t in tests
    )


def _names_path(report: str, path: str) -> bool:
    """Whether a frame of ``report`` is in the repository file ``path`` (the sandbox's
    reports name it relative to the workspace or under it)."""
    return any(raw == path or raw.endswith("/" + path) for raw, _line in frames_of(report))
