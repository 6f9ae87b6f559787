"""Fault localisation: which lines of a repository most likely hold the bug.

Evidence comes from three places, each turned into :class:`Suspect` lines:

* the issue's text (:func:`from_issue_text`): Python tracebacks, ``path.py:12`` and
  ``path.py#L12`` mentions, plain file names and symbol names (``func``, ``Class.method``);
* the failing tests' reports (:func:`from_failures`): repository frames in their messages;
* spectrum-based localisation (:func:`ochiai`) over per-test line coverage recorded by
  coverage.py, one context per pytest item (:data:`COVERAGE_RC`, :data:`CONTEXT_PLUGIN`,
  :func:`coverage_argv`, :func:`read_coverage`).

:func:`rank` merges them. Suspects are always repository-relative non-test files.

Test identity - one key on both sides (:func:`case_key`)
-------------------------------------------------------
JUnit (``workers.sandbox.junit``) names a test ``tests/test_x.py::TestC::test_foo[1]``.
Coverage contexts come from :data:`CONTEXT_PLUGIN`, which switches coverage.py's context
to ``kaizen-test:<pytest node id>`` around each test's call: one context per
parametrised case. (coverage.py's own ``dynamic_context = test_function`` gives every
case of a parametrised test one context, so a test with one failing case out of fifty
made every line any case ran look as suspicious as the bug; on click's
``make_default_short_help`` the broken line then came 164th in the repair plan.)
The common key is the dotted repository path of the test file plus the qualname, and
the parameters: ``tests.test_x.TestC.test_foo[1]``. Contexts in coverage.py's
``module.qualname`` form (no parameters, the module name depending on pytest's import
mode: ``test_x.TestC.test_foo`` under ``prepend`` without ``__init__.py``) are still read,
and a case is then matched to its function's context.

* :func:`canonical_test_id` turns a JUnit node id (or ``classname::name``) into that key
  without parameters, :func:`case_key` with them;
* :func:`read_coverage` rewrites each context's module part onto the measured test file
  it names (``test_x`` -> ``tests/test_x.py`` -> ``tests.test_x``), so its keys are the
  same; a context it cannot place is kept as it is;
* :func:`ochiai` looks ids up exactly and otherwise by a unique dotted-suffix match (a
  pytest rootdir below the repository root, an unusual import mode).

The coverage data comes out of a sandbox and is untrusted: it is read with the standard
library's ``sqlite3`` from a private copy, read-only, with ``trusted_schema`` off, after
checking it is a regular file of bounded size (coverage.py need not be installed on the
host - only in the sandbox's Python).
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import math
import os
import posixpath
import re
import shutil
import sqlite3
import stat
import tempfile
import tokenize
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from workers.code_paths import is_test_path
from workers.fix.operators import function_returns
from workers.fix.types import Suspect
from workers.sandbox.junit import TestResult

# --- why-strings: their prefixes are the kinds of evidence rank() weighs -------------
WHY_TRACEBACK = "traceback in the issue"
WHY_LINE = "line named in the issue"
WHY_SYMBOL = "symbol named in the issue"
WHY_FILE = "file named in the issue"
WHY_FAILURE = "failing test traceback"
WHY_OCHIAI = "ochiai"
WHY_COMMENT = "comment shares words with the issue"
WHY_TEST_NAME = "failing test named after it"
WHY_CHECKED = "sets what a failing assert checks"

# Kind -> weight after per-source normalisation: where a test or the issue's traceback
# says the error happened counts most; a file merely named counts least.
KIND_WEIGHTS: dict[str, float] = {
    WHY_TRACEBACK: 3.0,
    WHY_FAILURE: 3.0,
    WHY_LINE: 2.5,
    WHY_OCHIAI: 2.0,
    WHY_TEST_NAME: 2.0,
    WHY_CHECKED: 1.0,
    WHY_SYMBOL: 1.0,
    WHY_COMMENT: 1.0,
    WHY_FILE: 0.5,
}
OTHER_WEIGHT = 1.0
# Symbols are normalised to a best of at least this: a function named exactly scores 1,
# a class 0.5 (an issue names the classes it uses, ``Version('1.2.0')`` passed as an
# argument, more often than where the bug is), and that half must not become a whole
# when the issue names nothing else (semantic_version: a class's 200 lines each got
# ochiai's equal and outranked the comparison it put first).
SYMBOL_FLOOR = 1.0
# The failing tests' tracebacks are normalised to a best of at least this average score:
# a line that only a few of many failing tests passed through says little about the rest
# (transitions: 4 of 218 failing tests crashed in the repository's code, the others
# failed their own asserts, and the lines of those 4 outranked the inverted condition
# that ochiai put first with 0.99).
FAILURE_FLOOR = 0.25
# the kinds normalised to a best of at least so much (see rank)
_FLOORS = {WHY_FAILURE: FAILURE_FLOOR, WHY_SYMBOL: SYMBOL_FLOOR}

_Statement = TypeVar("_Statement", bound=ast.stmt)

FRAME_DECAY = 0.8  # each frame further out from the innermost repository frame
# A frame also points at the test of the ``if`` (or ``while``) that decided to run its
# line, a little less: no edit of ``raise ValueError("value too large")`` fixes it, while
# its guard ``if size >= maxsize:`` may be the bug (cachetools: that guard came 7th of the
# suspects and took 32 sandbox runs to reach). Less than a caller's frame (FRAME_DECAY):
# a caller that passed the wrong values is as likely (a transfer that swapped source and
# target trips a correct balance check), and not when the test calls out
# (``if slot.overlaps(other):``), whose answer comes from elsewhere. When it calls a
# function of its own module (or a ``self.`` method of its class) with a few returns,
# those returns are that answer and take the guard's share: idna's ``if not
# valid_label_length(label): raise IDNAError("Label too long")`` with ``len(label) < 63``
# in the predicate, in no frame, not reached in 60 sandbox runs.
GUARD_SHARE = 0.75
# A recursion that never stops (the innermost frame's line in the traceback again and
# again): the guard that lets the call through is as suspect as the call, which holds the
# bug only if its arguments do not shrink. dotmap's ``__str__`` with ``if id(v) not in
# seen:`` over its cycle check recursed until RecursionError; its guard came after
# every edit of the recursive call, and a wrong one passed the tests first.
RECURSION_GUARD_SHARE = 1.0
# A ``for``'s iterable decides whether, and how often, its body runs: a body line the
# spectrum puts above the rest of its function points at the iterable this much.
LOOP_SHARE = 1.0
MAX_CALLEE_RETURNS = 3
# When the innermost frame is a ``raise`` (the code turned a value down), a caller frame's
# call also points at where that caller computed the names it passed, a little less than
# the call: semver's ``match(">1.0.0")`` sliced the operator off one character too far
# (``match_expr[2:]``) and ``parse`` raised on ".0.0" two frames in; the slice was in no
# frame and took 42 sandbox runs to reach.
ARGUMENT_SHARE = 0.75
MAX_ARGUMENT_SOURCES = 6  # the last assignments before the call, per caller frame
# A chained traceback (``raise X from err``, or an exception raised while another was
# handled) is read one exception at a time, each with its own innermost frame. One whose
# innermost line is in an ``except`` block that raises or passes on what it caught
# translates the earlier exception, and its frames weigh this much: the error began where
# the first was raised. py-ubjson's ``load`` turns every ``DecoderException`` into one
# with a position; read as one traceback, that handler line was the innermost frame and
# outranked the ``len(raw) <= length`` guard that raised "String too short" (24th).
TRANSLATION_SHARE = FRAME_DECAY
# Lines of a method that shows a value (``__repr__``, ``__str__``, …) weigh this much in
# the spectrum: pytest shows the values a failing assertion compared, so those lines run
# in exactly the failing tests and score as high as code can (isodate's
# ``FixedOffset.__repr__`` ranked first, the sign bug in ``build_tzinfo`` tenth).
REPORT_SHARE = 0.5
_SHOWS_A_VALUE = frozenset({"__repr__", "__str__", "__format__", "__rich_repr__"})
# Matcher libraries describe what a failed match wanted and got, and only a failure asks
# them to: PyHamcrest's ``describe_to``/``describe_mismatch``, testtools' ``describe``.
# pyhamcrest's ``close_to`` with ``<=`` made ``<``: the failing test's message lines
# ranked first, the comparison ninth, fixed at the 28th candidate.
_DESCRIBES = re.compile(r"describe(?:_\w+)?")
MAX_SYMBOL_LINES = 200
HELPER_SHARE = 0.8  # a named function's private helpers, against its own lines
MAX_FILE_LINES = 2000

# --- coverage wiring -------------------------------------------------------------------
COVERAGE_RC_NAME = ".kaizen-coveragerc"
COVERAGE_DATA_NAME = ".kaizen-coverage"
MAX_COVERAGE_BYTES = 256 * 1024 * 1024
COVERAGE_SCHEMA_VERSION = 7  # coverage.py 5.0 to 7.x

# Test files are measured on purpose (not omitted): their paths are how read_coverage
# places a context like ``test_x.test_foo`` onto ``tests/test_x.py``. Their lines never
# become suspects.
COVERAGE_RC = f"""\
# Written by Kaizen's fix agent: per-test line coverage for fault localisation.
# (The plugin kaizen_test_context names each test's context.)
[run]
data_file = {COVERAGE_DATA_NAME}
relative_files = True
branch = False
parallel = False
disable_warnings = no-data-collected, module-not-measured, couldnt-parse
"""


KAIZEN_FILES = ".kaizen-"  # what Kaizen writes into the copy starts so (plugins, rc, data)
CONTEXT_PREFIX = "kaizen-test:"
CONTEXT_PLUGIN_MODULE = "kaizen_test_context"
CONTEXT_PLUGIN = f'''"""Written by Kaizen into its copy of the repository: workers/fix/localize.py.

Each test's call is recorded under its own coverage context, {CONTEXT_PREFIX}<node id>.
"""

import pytest

try:
    import coverage
except ImportError:  # not run under coverage: nothing to name
    coverage = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    current = coverage.Coverage.current() if coverage is not None else None
    if current is None:
        yield
        return
    current.switch_context("{CONTEXT_PREFIX}" + item.nodeid)
    try:
        yield
    finally:
        current.switch_context("")
'''


def coverage_argv(python: str = "python3") -> list[str]:
    """The prefix that runs pytest under coverage with :data:`COVERAGE_RC` and the context
    plugin (both written into the working directory by :func:`write_coverage_rc`, the
    plugin's folder on ``PYTHONPATH``); append pytest's arguments."""
    return [
        *[python, "-m", "coverage", "run", f"--rcfile={COVERAGE_RC_NAME}", "-m", "pytest"],
        *["-p", CONTEXT_PLUGIN_MODULE],
    ]


def with_coverage(pytest_argv: Sequence[str]) -> list[str]:
    """``[python, "-m", "pytest", *args]`` (as ``pytest_command`` builds it) run under
    coverage instead: ``[python, "-m", "coverage", "run", ..., "-m", "pytest", *args]``."""
    argv = list(pytest_argv)
    if len(argv) < 3 or argv[1:3] != ["-m", "pytest"]:
        raise ValueError(f"not a `python -m pytest` command: {argv[:3]}")
    return [*coverage_argv(argv[0]), *argv[3:]]


def write_coverage_rc(workspace: Path, plugin_dir: str) -> Path:
    """Put :data:`COVERAGE_RC` into ``workspace`` and :data:`CONTEXT_PLUGIN` into its
    ``plugin_dir`` (a folder the run has on ``PYTHONPATH``), replacing whatever the
    repository had under those names, and drop stale coverage data; returns the rc file's
    path."""
    rc = Path(workspace) / COVERAGE_RC_NAME
    _replace(rc, COVERAGE_RC)
    folder = Path(workspace) / plugin_dir
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    folder.mkdir(exist_ok=True)
    _replace(folder / f"{CONTEXT_PLUGIN_MODULE}.py", CONTEXT_PLUGIN)
    data = Path(workspace) / COVERAGE_DATA_NAME
    if data.is_symlink() or data.exists():
        data.unlink()
    return rc


def _replace(path: Path, text: str) -> None:
    """Write ``text`` at ``path`` in place of whatever the (untrusted) copy had there: a
    symlink is removed, never followed; a folder is removed."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()
    path.write_text(text, encoding="utf-8")


# --- paths ---------------------------------------------------------------------------
def _repo_path(path: str) -> str | None:
    """``path`` as a clean repository-relative path, or ``None`` if it leaves the repo."""
    path = path.replace("\\", "/")
    if not path or path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return None
    norm = posixpath.normpath(path)
    if norm in (".", "") or norm == ".." or norm.startswith("../"):
        return None
    return norm


def _suspect_path_ok(path: str) -> bool:
    clean = _repo_path(path)
    return clean is not None and clean == path and not is_test_path(path)


class _PathIndex:
    """Maps a path as some traceback or message spells it onto repository files, by the
    longest run of matching trailing components."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = {p for p in (_repo_path(f) for f in files) if p}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.files):
            self.by_name[path.rsplit("/", 1)[-1]].append(path)

    def resolve(self, text: str) -> list[str]:
        raw = text.strip().strip("'\"").replace("\\", "/")
        while raw.startswith("./"):
            raw = raw[2:]
        clean = _repo_path(raw)
        if clean in self.files:
            return [clean]
        parts = [p for p in raw.split("/") if p not in ("", ".")]
        if not parts:
            return []
        candidates = self.by_name.get(parts[-1], [])
        if not candidates:
            return []
        need = self._needed(parts)
        best: list[str] = []
        best_len = 0
        for cand in candidates:
            cparts = cand.split("/")
            n = 0
            while n < min(len(parts), len(cparts)) and parts[-1 - n] == cparts[-1 - n]:
                n += 1
            if n < need and n < len(cparts):
                continue
            if n > best_len:
                best, best_len = [cand], n
            elif n == best_len:
                best.append(cand)
        return best

    @staticmethod
    def _needed(parts: list[str]) -> int:
        """How many trailing components must match. An installed or standard-library
        file must match from its import root (``site-packages/pkg/mod.py`` needs
        ``pkg/mod.py``); a bare ``__init__.py`` or ``__main__.py`` needs its package."""
        for i in range(len(parts) - 1, -1, -1):
            part = parts[i]
            if part in ("site-packages", "dist-packages") or re.fullmatch(
                r"python\d+(\.\d+)?", part
            ):
                return max(1, len(parts) - 1 - i)
        if parts[-1] in ("__init__.py", "__main__.py") and len(parts) > 1:
            return 2
        return 1


# --- source structure ------------------------------------------------------------------
def _traceback_lines(
    frames: Sequence[tuple[list[str], int]], files: Mapping[str, str]
) -> Iterator[tuple[str, int, float]]:
    """(path, line, score) for the lines a traceback's repository frames (innermost last)
    point at: each frame, :data:`FRAME_DECAY` per frame outward, with a ``raise``'s guard
    (:data:`RECURSION_GUARD_SHARE` for a recursive call's), where the innermost frame's
    guard's names, or the values it indexes, were bound, and, when the innermost frame
    raises or code outside the repository it called did, the callers' argument sources
    (rstr's ``popul`` came empty out of a filter written the wrong way round, and
    ``random.choice`` raised on it, past the repository's frames). A frame with no paths
    is such outside code."""
    # frames with no repository path are code outside it (a library, the standard
    # library) that the repository's innermost frame called: it turned the value down
    left = bool(frames) and not frames[-1][0]
    frames = [frame for frame in frames if frame[0]]
    if not frames:
        return
    inner_paths, inner_line = frames[-1]
    raising = left or any(_raises_at(files.get(path), inner_line) for path in inner_paths)
    recursing = frames.count(frames[-1]) > 1
    for depth, (paths, line) in enumerate(reversed(frames)):
        for path in paths:
            source = files.get(path)
            score = FRAME_DECAY**depth / len(paths)
            guard_share = RECURSION_GUARD_SHARE if recursing and depth == 0 else GUARD_SHARE
            for at, share in _with_guard(source, line, guard_share):
                yield path, at, score * share
            if depth:
                sources = _argument_sources(source, line) if raising else []
            elif raising:
                sources = _checked_sources(source, line)
            else:
                sources = [] if recursing else _indexed_sources(source, line)
            for at in sources:
                if at != line:
                    yield path, at, score * ARGUMENT_SHARE
            for at in _returns_feeding(source, sources):
                yield path, at, score * ARGUMENT_SHARE * FRAME_DECAY


def _chain_lines(
    chain: Sequence[Sequence[tuple[list[str], int]]], files: Mapping[str, str]
) -> Iterator[tuple[str, int, float]]:
    """:func:`_traceback_lines` of each exception of a chain (earliest first), those of an
    exception that translates an earlier one at :data:`TRANSLATION_SHARE`."""
    for number, frames in enumerate(chain):
        inside = [frame for frame in frames if frame[0]]
        translates = number > 0 and bool(inside) and _translates(inside[-1], files)
        share = TRANSLATION_SHARE if translates else 1.0
        for path, at, score in _traceback_lines(frames, files):
            yield path, at, score * share


def _translates(frame: tuple[list[str], int], files: Mapping[str, str]) -> bool:
    """Whether the frame's line is a statement of an ``except`` block that raises, or
    that uses the exception the block caught (``raise_from(Error(…), ex)``)."""
    paths, line = frame
    for path in paths:
        source = files.get(path)
        tree = _parse_source(source) if source is not None else None
        inner = _statement_at(tree, line) if tree is not None else None
        if tree is None or inner is None:
            continue
        for handler in ast.walk(tree):
            if not isinstance(handler, ast.ExceptHandler) or not any(
                s.lineno <= line <= (s.end_lineno or s.lineno) for s in handler.body
            ):
                continue
            if isinstance(inner, ast.Raise) or any(
                isinstance(n, ast.Name) and n.id == handler.name for n in ast.walk(inner)
            ):
                return True
    return False


def _raises_at(source: str | None, line: int) -> bool:
    """Whether ``line`` is in a ``raise``, or an ``assert`` (which raises when its test
    says no: anytree's ``assert common[0] is start.root``)."""
    tree = _parse_source(source) if source is not None else None
    return tree is not None and any(
        isinstance(node, ast.Raise | ast.Assert)
        and node.lineno <= line <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


def _argument_sources(source: str | None, line: int) -> list[int]:
    """The lines before ``line``, in its function, that bind a name a call on ``line``
    passes as an argument (the caller's own parameters have none: their sources are in
    the frame further out)."""
    tree = _parse_source(source) if source is not None else None
    if tree is None:
        return []
    function = _innermost_function(tree, line)
    if function is None:
        return []
    passed: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
            values = [*node.args, *(k.value for k in node.keywords)]
            for value in values:
                inner = value.value if isinstance(value, ast.Starred) else value
                if isinstance(inner, ast.Name):
                    passed.add(inner.id)
    return _bound_before(function, line, passed)


def _checked_sources(source: str | None, line: int) -> list[int]:
    """The lines before the ``if`` that guards the ``raise`` on ``line``, in its function,
    that bind a name the ``if``'s test reads (its parameters have none here: their
    sources are the callers', see :func:`_argument_sources`). bitmath's
    ``parse_string('10MiB')`` raised "The unit iB is not a valid bitmath unit" under
    ``if not hasattr(module, unit)``, and ``unit`` came from ``s[index + 1:]`` three
    lines up, in no frame (37 sandbox runs). They score as a caller's argument sources
    do, as much as the guard: the value is as likely wrong as the test of it."""
    tree = _parse_source(source) if source is not None else None
    if tree is None:
        return []
    function = _innermost_function(tree, line)
    asserted = _assert_at(tree, line)
    guard = asserted or _guard(tree, line)
    if function is None or guard is None or not _test_lines(guard.test):
        return []  # no guard, or one that calls out: its answer is elsewhere
    read = {n.id for n in ast.walk(guard.test) if isinstance(n, ast.Name)}
    return _bound_before(function, guard.lineno, read)


def _indexed_sources(source: str | None, line: int) -> list[int]:
    """The lines before ``line``, in its function, that bind a name ``line`` indexes,
    reads an attribute of (a method it calls aside) or unpacks into a call: where the
    innermost frame failed on ``common[-1]`` (IndexError), ``node.parent``
    (AttributeError) or ``nt(*padded)`` (TypeError) rather than raising, the value was
    as likely wrong as the line. anytree's ``if start is common[-1]:``
    found ``common`` empty, made two lines up by a helper whose ``if si is not ei`` kept
    nothing."""
    tree = _parse_source(source) if source is not None else None
    if tree is None:
        return []
    function = _innermost_function(tree, line)
    statement = _statement_at(tree, line)
    if function is None or statement is None:
        return []
    parts = [
        part
        for part in ast.iter_child_nodes(statement)
        if not isinstance(part, ast.stmt | ast.excepthandler | ast.match_case)
    ]
    called = {
        id(node.func) for part in parts for node in ast.walk(part) if isinstance(node, ast.Call)
    }
    names = {
        node.value.id
        for part in parts
        for node in ast.walk(part)
        if isinstance(node, ast.Subscript | ast.Attribute)
        and isinstance(node.value, ast.Name)
        and id(node) not in called  # a method called: its answer is the method's
    }
    names |= _unpacked_into_calls(parts)
    return _bound_before(function, statement.lineno, names - {"self", "cls"})


def _unpacked_into_calls(parts: Sequence[ast.AST]) -> set[str]:
    """Names unpacked into a call's arguments (``nt(*padded)``, ``f(**options)``): how
    many arguments the call gets, and which, is the value's doing. petl's ``asnamedtuple``
    padded short rows with ``(missing,) * (na - ne)`` for ``(ne - na)``; the TypeError
    came from ``nt(*padded)`` a line below, and the padding was 48th in the plan."""
    found: set[str] = set()
    for part in parts:
        for node in ast.walk(part):
            if not isinstance(node, ast.Call):
                continue
            values = [a.value for a in node.args if isinstance(a, ast.Starred)]
            values += [k.value for k in node.keywords if k.arg is None]
            found.update(v.id for v in values if isinstance(v, ast.Name))
    return found


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement whose own lines (not a nested block's) hold ``line``."""
    return _innermost(tree, line, ast.stmt)


def _innermost(tree: ast.AST, line: int, kind: type[_Statement]) -> _Statement | None:
    """The statement of ``kind`` whose lines hold ``line`` and that starts last: the
    innermost (a nested one starts after the one around it)."""
    found: _Statement | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, kind)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and (found is None or node.lineno >= found.lineno)
        ):
            found = node
    return found


def _assert_at(tree: ast.Module, line: int) -> ast.Assert | None:
    statement = _statement_at(tree, line)
    return statement if isinstance(statement, ast.Assert) else None


def _returns_feeding(source: str | None, lines: Collection[int]) -> list[int]:
    """The ``return`` lines of the module's functions (or its class's methods) whose
    result the statements starting on ``lines`` assign: anytree's ``common =
    Walker.__calc_common(startpath, endpath)`` holds nothing wrong, the generator it
    returns (``if si is not ei`` for ``is``) does."""
    tree = _parse_source(source) if source is not None else None
    if tree is None or not lines:
        return []
    found: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
            and node.lineno in lines
            and node.value is not None
        ):
            found.update(_callee_returns(tree, node.value, node.lineno))
    return sorted(found)


def _bound_before(function: ast.AST, line: int, names: Collection[str]) -> list[int]:
    """The last :data:`MAX_ARGUMENT_SOURCES` lines of ``function`` before ``line`` whose
    statements bind one of ``names``."""
    if not names:
        return []
    found = {
        node.lineno
        for node in ast.walk(function)
        if isinstance(node, ast.stmt) and node.lineno < line and _binds_any(node, names)
    }
    return sorted(found)[-MAX_ARGUMENT_SOURCES:]


def _innermost_function(tree: ast.AST, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and (found is None or node.lineno >= found.lineno)
        ):
            found = node
    return found


def _binds_any(statement: ast.stmt, names: Collection[str]) -> bool:
    """Whether ``statement`` itself (not a nested block) assigns one of ``names``."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        targets = [statement.target]
    elif isinstance(statement, ast.With | ast.AsyncWith):
        targets = [i.optional_vars for i in statement.items if i.optional_vars is not None]
    else:
        return False
    return any(
        isinstance(node, ast.Name) and node.id in names
        for target in targets
        for node in ast.walk(target)
    )


def _with_guard(
    source: str | None, line: int, guard_share: float = GUARD_SHARE
) -> list[tuple[int, float]]:
    """``line`` (share 1) and the lines of the test of the ``if`` or ``while`` around it
    (share :data:`GUARD_SHARE`): the frame's line ran, and whether it should have is the
    test's to say, as the spectrum's lines point at theirs (:func:`_with_deciding_lines`).
    No edit of ``raise ValueError("value too large")`` fixes it; cachetools'
    ``self.popitem()`` under ``while self.currsize + 1 >= maxsize`` and xmltodict's
    ``self.item_callback(self.path, item)`` under ``if len(self.path) >= depth`` ran
    when they should not have, and their lines hold nothing wrong. A test that calls a
    function of the module says it with that function's returns."""
    tree = _parse_source(source) if source is not None else None
    guard = _guard(tree, line) if tree is not None else None
    if tree is None or guard is None:
        return [(line, 1.0)]
    deciding = _test_lines(guard.test) or _callee_returns(tree, guard.test, guard.lineno)
    return [(line, 1.0), *((at, guard_share) for at in deciding if at != line)]


def _guard(tree: ast.Module, line: int) -> ast.If | ast.While | None:
    """The innermost ``if``/``while`` of ``line``'s function (or module) whose body holds
    the statement on ``line``."""
    guard: ast.If | ast.While | None = None
    found = False

    def visit(node: ast.AST, innermost: ast.If | ast.While | None) -> None:
        nonlocal guard, found
        for child in ast.iter_child_nodes(node):
            if found:
                return
            if (
                isinstance(child, ast.stmt)
                and child.lineno <= line <= (child.end_lineno or 0)
                and not any(isinstance(inner, ast.stmt) for inner in ast.iter_child_nodes(child))
            ):
                guard, found = innermost, True
                return
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, None)  # a guard outside a function does not decide inside it
            elif isinstance(child, ast.If | ast.While):
                visit(child, child)
            else:
                visit(child, innermost)

    visit(tree, None)
    return guard


def _callee_returns(tree: ast.Module, expression: ast.AST, line: int) -> tuple[int, ...]:
    """The ``return`` lines of the functions of the module (``name(…)``) or methods of
    the class around ``line`` (``self.name(…)``, ``Class.name(…)``) that ``expression``
    calls, each with at most :data:`MAX_CALLEE_RETURNS` of them."""
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    owner = _innermost(tree, line, ast.ClassDef)
    methods = {
        node.name: node
        for node in (owner.body if owner is not None else [])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    lines: list[int] = []
    receivers = {"self", "cls", owner.name} if owner is not None else set()
    for call in ast.walk(expression):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name):
            callee = functions.get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            callee = methods.get(func.attr) if func.value.id in receivers else None
        else:
            callee = None
        if callee is None:
            continue
        returns = [r.lineno for r in function_returns(callee)]
        if len(returns) <= MAX_CALLEE_RETURNS:
            lines.extend(returns)
    return tuple(sorted(set(lines)))


@functools.lru_cache(maxsize=32)  # the symbol index and the raise guards read the same files
def _parse_source(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # RecursionError: a generated file with a long expression (3,000 terms of one sum
        # is enough) is still a file of the repository, just not one to map.
        return None


def _statement_lines(node: ast.AST) -> list[int]:
    """Lines of the statements inside ``node`` (its own header excluded): each one's
    first line, and the lines where a part of its expressions starts. A call written
    over five lines (semantic_version's ``return Version(major=…, minor=…, patch=…)``)
    has its arguments on lines of their own, and coverage counts each of those lines."""
    lines: set[int] = set()
    for child in ast.walk(node):
        if not isinstance(child, ast.stmt) or child is node:
            continue
        lines.add(child.lineno)
        for part in ast.iter_child_nodes(child):
            if isinstance(part, ast.stmt | ast.excepthandler | ast.match_case):
                continue
            lines.update(
                inner.lineno
                for inner in ast.walk(part)
                if isinstance(inner, ast.expr | ast.keyword)
            )
    return sorted(lines)


class _Symbols:
    """Functions and classes of the Python files, by qualname (``Class.method``)."""

    def __init__(self, files: Mapping[str, str]) -> None:
        # qualname -> [(path, module dotted name, statement lines, is_class)]
        self.defs: dict[str, list[tuple[str, str, list[int], bool]]] = defaultdict(list)
        self.module_lines: dict[str, list[int]] = {}
        # (path, first statement line of a function) -> qualnames of the private helpers
        # of the same module or class it calls: ``_sliding_window_deque`` for
        # ``sliding_window``, ``Class._parse`` for ``Class.parse``
        self.helpers: dict[tuple[str, int], list[str]] = {}
        for path, source in files.items():
            clean = _repo_path(path)
            if clean is None or not clean.endswith(".py"):
                continue
            tree = _parse_source(source)
            if tree is None:
                continue
            self.module_lines[clean] = _statement_lines(tree)
            module = clean[:-3].replace("/", ".")
            if module.endswith(".__init__"):
                module = module[: -len(".__init__")]
            self._collect(tree, "", clean, module)

    def _collect(self, node: ast.AST, prefix: str, path: str, module: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qual = f"{prefix}{child.name}"
                lines = _statement_lines(child)
                self.defs[qual].append((path, module, lines, isinstance(child, ast.ClassDef)))
                if lines and not isinstance(child, ast.ClassDef):
                    called = _private_calls(child, prefix)
                    if called:
                        self.helpers[(path, lines[0])] = called
                self._collect(child, f"{qual}.", path, module)

    def lookup(self, name: str) -> list[tuple[str, list[int], bool, bool]]:
        """Definitions ``name`` may mean: ``func``, ``Class.method``, ``pkg.mod.func``, and
        ``pkg.func`` for a function of a module of ``pkg`` (the package re-exports it:
        ``asyncstdlib.enumerate`` is written in ``asyncstdlib/builtins.py``).
        Returns (path, lines, is_class, exact) - exact when qualified by class or module."""
        found: list[tuple[str, list[int], bool, bool]] = []
        parts = name.split(".")
        for i in range(len(parts)):
            qual = ".".join(parts[i:])
            prefix = ".".join(parts[:i])
            for path, module, lines, is_class in self.defs.get(qual, ()):
                if prefix and f".{prefix}." not in f".{module}.":
                    continue
                found.append((path, lines, is_class, i > 0 or len(parts) > 1))
            if found:
                break
        return found


def _private_calls(function: ast.AST, class_prefix: str) -> list[str]:
    """Qualnames of the private helpers whose result ``function`` uses: ``_helper(...)``
    (a function of the module) and ``self._helper(...)``/``cls._helper(...)`` (a method
    of its class, ``class_prefix`` being ``Class.``). A call whose result is thrown away
    (``_check(shape)`` on a line of its own) is a check or a side effect shared by many
    functions, not the computation an issue about this one is about (on the fix corpus,
    counting those moved tensor_numel's fix from 2nd to 14th). Dunders are not helpers."""
    found: dict[str, None] = {}
    discarded = {id(node.value) for node in ast.walk(function) if isinstance(node, ast.Expr)}
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or id(node) in discarded:
            continue
        func = node.func
        if isinstance(func, ast.Name):
            name, qual = func.id, func.id
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and class_prefix
        ):
            name, qual = func.attr, f"{class_prefix}{func.attr}"
        else:
            continue
        if name.startswith("_") and not name.endswith("__"):
            found[qual] = None
    return list(found)


# --- failing tests' names ----------------------------------------------------------------
MIN_NAME = 4  # characters, once case and underscores are dropped: "add" names too much
# A failing test checks the function it is named after alone when this much of the
# repository code it ran is that function's: see from_test_names.
ALONE_SHARE = 0.8
# ValueError, KeyError, print: named in error messages, not what the issue is about
BUILTIN_NAMES = frozenset(name.replace("_", "").lower() for name in dir(builtins))
_CLASS_SUFFIXES = ("TestCase", "Tests", "Test")


def folded_name(name: str) -> str:
    """A name with case and underscores aside: what a test's name and code share."""
    return name.replace("_", "").lower()


def test_subjects(nodeid: str) -> list[str]:
    """What a test is named for, each a run of its name's words from the start, folded:
    ``TestMaxLen::test_check_valid`` → ``maxlen``, ``check``, ``checkvalid``;
    ``WindowedTests::test_basic`` (unittest's naming, more-itertools) → ``windowed``, …;
    ``test_max_len_bytes`` → ``max``, ``maxlen``, ``maxlenbytes``."""
    parts = nodeid.split("::")[1:] or [nodeid]
    out = []
    for part in parts:
        part = part.split("[", 1)[0]
        suffix = next((x for x in _CLASS_SUFFIXES if part.endswith(x)), "")
        if part.startswith("Test"):
            out.append(folded_name(part[4:]))
        elif suffix and part[:1].isupper():
            out.append(folded_name(part[: -len(suffix)]))  # unittest's WindowedTests
        elif part.startswith("test"):
            words = [w for w in part[4:].split("_") if w]
            out += [folded_name("".join(words[: i + 1])) for i in range(len(words))]
    return [s for s in out if s]


def from_test_names(
    failed: Iterable[str], files: Mapping[str, str], spectrum: Spectrum | None
) -> list[Suspect]:
    """The functions failing unit tests are named after, where a test ran little else of
    the repository (``test_sep_inserter_…`` ran ``sep_inserter`` and nothing more): such
    a test checks that code alone, and its failure says where the bug is even when its
    traceback does not (it compared what a generator gave and never ran it in a frame).

    natsort's ``test_sep_inserter_…`` failed beside six ``test_natsort_keygen_…`` tests
    that run most of the package; ochiai spread the blame over all of it and the bug's
    line was not reached in 60 sandbox runs. A test named after code that calls the bug
    (``test_convert_…`` where ``convert`` looks up the broken ``f_to_c``) ran more than
    that code, and counts for nothing: without coverage, no test counts."""
    if spectrum is None:
        return []
    symbols = _Symbols(files)
    by_name: dict[str, list[tuple[str, list[int]]]] = defaultdict(list)
    for qualname, defs in symbols.defs.items():
        name = folded_name(qualname.rsplit(".", 1)[-1])
        if len(name) >= MIN_NAME and name not in BUILTIN_NAMES:
            by_name[name] += [(p, ln) for p, _m, ln, cls in defs if not cls and _suspect_path_ok(p)]
    named = {
        test: found
        for test in failed
        if (found := [d for s in dict.fromkeys(test_subjects(test)) for d in by_name.get(s, [])])
    }
    scores: dict[tuple[str, int], float] = {}
    for test, key in _match_ids(named, spectrum).items():
        ran = {loc for loc in spectrum[key] if _suspect_path_ok(loc[0])}
        for path, lines in named[test]:
            inside = ran & {(path, line) for line in lines}
            share = len(inside) / len(ran) if ran else 0.0
            if share >= ALONE_SHARE:
                for line in lines[:MAX_SYMBOL_LINES]:
                    scores[(path, line)] = max(scores.get((path, line), 0.0), share)
    return _sorted(Suspect(p, ln, s, WHY_TEST_NAME) for (p, ln), s in scores.items())


# --- issue text --------------------------------------------------------------------------
_TB_HEADER = re.compile(r"^[ \t]*Traceback \(most recent call last\):", re.MULTILINE)
# between the exceptions of a chain, in Python's tracebacks and pytest's reports alike
_CHAIN_SEPARATOR = re.compile(
    r"^[ \t]*(?:The above exception was the direct cause of the following exception"
    r"|During handling of the above exception, another exception occurred):[ \t]*$",
    re.MULTILINE,
)
_PY_FRAME = re.compile(r'File "([^"\n]+?\.py)", line (\d+)(?:, in ([\w<>.]+))?')
_PATH_LINE = re.compile(
    r"(?<![\w/.\\-])((?:[A-Za-z]:)?[\w./\\-]*[\w-]\.py)(?::(\d+)|#L(\d+)(?:-L(\d+))?)"
)
_FILE_NAME = re.compile(r"(?<![\w/.\\-])([\w./\\-]*[\w-]\.py)\b(?![:#]\d|#L)")
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_IDENT_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)*+)\s*\(")
_DOTTED = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b")
_CODE_LIKE = re.compile(r"\b([A-Za-z_]*_\w*|[A-Z][a-z0-9]+[A-Z]\w*|[a-z]+[A-Z]\w*)\b")
_SPAN_LIMIT = 20  # lines a path#L10-L30 range may expand to


def from_issue_text(text: str, files: Mapping[str, str]) -> list[Suspect]:
    """Suspects an issue's text points at. ``files`` maps repository paths to the source
    of its Python files (used to resolve paths and to find symbols with ``ast``)."""
    index = _PathIndex(files)
    symbols = _Symbols(files)
    scores: dict[tuple[str, int, str], float] = {}

    def add(path: str, line: int, why: str, score: float) -> None:
        if line < 1 or not _suspect_path_ok(path):
            return
        key = (path, line, why)
        scores[key] = max(scores.get(key, 0.0), score)

    # Tracebacks: within each, the innermost repository frame scores 1, outer ones decay;
    # one after "The above exception was the direct cause …" continues a chain.
    starts = [m.start() for m in _TB_HEADER.finditer(text)]
    blocks = [text[a:b] for a, b in zip([0, *starts], [*starts, len(text)], strict=True)]
    chains: list[list[list[tuple[list[str], int]]]] = []
    for number, block in enumerate(blocks):
        frames: list[tuple[list[str], int]] = []
        for m in _PY_FRAME.finditer(block):
            paths = index.resolve(m.group(1))
            if paths or frames:  # a frame outside after the repository's: _traceback_lines
                frames.append((paths, int(m.group(2))))
        if chains and _CHAIN_SEPARATOR.search(blocks[number - 1]):
            chains[-1].append(frames)
        else:
            chains.append([frames])
    for chain in chains:
        for path, at, score in _chain_lines(chain, files):
            add(path, at, WHY_TRACEBACK, score)

    # path.py:12, path.py#L12, path.py#L12-L20 (outside "File ..., line" frames).
    frame_spans = [m.span(1) for m in _PY_FRAME.finditer(text)]
    for m in _PATH_LINE.finditer(text):
        if any(a <= m.start(1) < b for a, b in frame_spans):
            continue
        paths = index.resolve(m.group(1))
        if m.group(2):
            lines = [int(m.group(2))]
        else:
            first = int(m.group(3))
            last = int(m.group(4)) if m.group(4) else first
            last = min(max(last, first), first + _SPAN_LIMIT)
            lines = list(range(first, last + 1))
        for path in paths:
            for line in lines:
                add(path, line, WHY_LINE, 1.0 / len(paths))

    # Plain file names: every statement of the file, weakly (a boost for other evidence).
    for m in _FILE_NAME.finditer(text):
        if any(a <= m.start(1) < b for a, b in frame_spans):
            continue
        paths = index.resolve(m.group(1))
        for path in paths:
            for line in symbols.module_lines.get(path, [])[:MAX_FILE_LINES]:
                add(path, line, WHY_FILE, 1.0 / len(paths))

    # Symbols: names written like code, matched against def/class names. The private
    # helpers a named function calls are how it does its work, so their lines count too,
    # a little less: the issue names ``sliding_window``, the bug is in the
    # ``_sliding_window_deque`` it returns.
    # A definition named twice (``hjson.dumpsJSON`` and ``dumpsJSON``) counts once, under
    # the name it was first found by: its lines would otherwise outweigh the spectrum's
    # twice over.
    named_as: dict[tuple[str, int], str] = {}
    for name, strong in symbol_names(text):
        found = symbols.lookup(name)
        for path, lines, is_class, exact in found:
            score = (1.0 if exact or strong else 0.8) * (0.5 if is_class else 1.0) / len(found)
            label = named_as.setdefault((path, lines[0]), name) if lines else name
            for line in lines[:MAX_SYMBOL_LINES]:
                add(path, line, f"{WHY_SYMBOL}: {label}", score)
            for helper in symbols.helpers.get((path, lines[0]), []) if lines else []:
                for where, helper_lines, _, _ in symbols.lookup(helper):
                    if where != path:
                        continue
                    for line in helper_lines[:MAX_SYMBOL_LINES]:
                        add(path, line, f"{WHY_SYMBOL}: {label} ({helper})", score * HELPER_SHARE)

    return _sorted(Suspect(p, ln, s, why) for (p, ln, why), s in scores.items())


_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])")
_STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        """a an and are as at be been but by can could did does doing done for from had has
        have how if in into is it its may might more most much must no nor not now of on once
        only or other our out over own same she should so some such than that the their them
        then there these they this those through too under until up very was we were what
        when where which while who whom why will with would you your any all also after again
        before being both each few here just like make made new one get got instead since
        still even last use used uses see note todo fixme xxx""",
    )
)


def _words(text: str) -> set[str]:
    """Lower-case words of prose (``maxLength`` split), without stop words and very short
    words."""
    return {w.lower() for w in _WORD.findall(text) if len(w) >= 3 and w.lower() not in _STOP_WORDS}


def _comments(source: str) -> dict[int, str]:
    """Each line's comment (``#`` to the end, outside strings), by line number."""
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # the comments read so far
    return found


def from_issue_comments(
    text: str, files: Mapping[str, str], lines: Iterable[tuple[str, int]]
) -> list[Suspect]:
    """Which of ``lines`` (suspects other evidence found) carry a comment sharing words
    with the issue, a word scoring more the fewer of those comments hold it.

    Why: spectra cannot tell a wrong condition from the code it wrongly lets run. In
    click's ``make_default_short_help`` with ``word[-1] == "."`` broken to ``word[0]``,
    the failing cases run the truncation code that passing ones skip, and that code
    outscores the condition (position 102 in the repair plan); the issue ("no longer stops
    at the end of the first sentence") and the line's comment ("sentence end, truncate
    without ...") say where to look. Only comments: identifiers that share the issue's
    words are everywhere (an issue about pages, a paginator's every line), and scoring
    them moved fix-corpus bugs out of the first tier of the plan. Only lines other
    evidence already names are scored, so a comment never brings in a line on its own.
    """
    wanted = _words(text)
    if not wanted:
        return []
    by_file: dict[str, list[int]] = defaultdict(list)
    for path, line in set(lines):
        by_file[path].append(line)
    words_of: dict[tuple[str, int], set[str]] = {}
    for path, numbers in by_file.items():
        source = files.get(path)
        if source is None:
            continue
        comments = _comments(source)
        for line in numbers:
            words_of[(path, line)] = _words(comments.get(line, "")) & wanted
    counts: dict[str, int] = defaultdict(int)
    for found in words_of.values():
        for word in found:
            counts[word] += 1
    total = len(words_of)
    out = []
    for (path, line), found in words_of.items():
        if found:
            score = sum(math.log(1 + total / counts[w]) for w in found)
            out.append(Suspect(path, line, score, f"{WHY_COMMENT}: {', '.join(sorted(found))}"))
    return _sorted(out)


def symbol_names(text: str) -> list[tuple[str, bool]]:
    """Names in ``text`` that look like code, with whether they were marked as code
    (backticks or a call): ``snake_case``, ``CamelCase``, ``a.b``, `` `x` ``, ``x(``.
    A plain word (``parse``) counts only when marked."""
    names: dict[str, bool] = {}
    for m in _BACKTICK.finditer(text):
        for ident in re.findall(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", m.group(1)):
            names[ident] = True
    for m in _IDENT_CALL.finditer(text):
        names[m.group(1)] = True
    for pattern in (_DOTTED, _CODE_LIKE):
        for m in pattern.finditer(text):
            names.setdefault(m.group(1), False)
    out = []
    for name, strong in names.items():
        if name.endswith(".py") or name.split(".")[-1] in ("py", "self"):
            continue
        if name.startswith(("self.", "cls.")):
            name = name.split(".", 1)[1]
        last = name.rsplit(".", 1)[-1]
        if not strong and (len(last) < 3 or (last.startswith("__") and "." not in name)):
            continue  # "e.g", a bare __init__: too common to mean anything
        out.append((name, strong))
    return out


# --- failing tests -------------------------------------------------------------------
_PYTEST_FRAME = re.compile(r"^[ \t]*(\S+\.py):(\d+):", re.MULTILINE)


def failure_text(test: TestResult) -> str:
    """A failing test's message and the report pytest wrote for it."""
    # TestResult keeps the failure's message; a ``traceback`` field, if junit gains one
    # (the element's text, where pytest writes the long report), is read too.
    extra = getattr(test, "traceback", "") or ""
    return f"{test.message}\n{extra}" if extra else test.message


def frames_of(text: str) -> list[tuple[str, int]]:
    """(path, line) of every frame in ``text``, in order (innermost last), in both the
    Python (``File "x.py", line 3``) and pytest (``x.py:3: in f``) formats."""
    found = [
        (m.start(), m.group(1), int(m.group(2)))
        for pattern in (_PY_FRAME, _PYTEST_FRAME)
        for m in pattern.finditer(text)
    ]
    return [(path, line) for _, path, line in sorted(found)]


def from_failures(tests: Sequence[TestResult], files: Mapping[str, str]) -> list[Suspect]:
    """Repository frames in the reports of the failing (and erroring) tests. A line
    scores by how close it is to the innermost repository frame, averaged over the
    failing tests, so a line every failure passes through ranks first."""
    index = _PathIndex(files)
    failing = [t for t in tests if t.outcome in ("failed", "error")]
    totals: dict[tuple[str, int], float] = defaultdict(float)
    counts: dict[tuple[str, int], int] = defaultdict(int)
    for test in failing:
        chain: list[list[tuple[list[str], int]]] = []
        for part in _CHAIN_SEPARATOR.split(failure_text(test)):
            frames: list[tuple[list[str], int]] = []
            for raw, line in frames_of(part):
                paths = [p for p in index.resolve(raw) if not is_test_path(p)]
                if line >= 1 and (paths or frames):  # a frame outside: see _traceback_lines
                    frames.append((paths, line))
            chain.append(frames)
        best: dict[tuple[str, int], float] = {}
        for path, at, score in _chain_lines(chain, files):
            best[path, at] = max(best.get((path, at), 0.0), score)
        for key, score in best.items():
            totals[key] += score
            counts[key] += 1
    n = len(failing)
    return _sorted(
        Suspect(path, line, total / n, f"{WHY_FAILURE} ({counts[(path, line)]} of {n} failing)")
        for (path, line), total in totals.items()
        if _suspect_path_ok(path)
    )


# An attribute set on more lines than this says nothing about which one is wrong.
MAX_SETTERS = 4


def from_checked_attributes(
    tests: Sequence[TestResult], files: Mapping[str, str], spectrum: Spectrum | None = None
) -> list[Suspect]:
    """The lines that set an attribute a failing test's own assert reads, outside the
    tests, and that the test ran when coverage says: docstring-parser's ``assert
    docstring.blank_after_long_description == expected`` failed where ``endswith("\\n\\n")``
    had lost a newline, on the line of the Google parser that sets it, which every passing
    test runs too (ochiai put it past the 12th); the other parsers' lines that set it did
    not run. A line scores by the share of failing tests whose assert reads what it sets;
    an attribute set on more than :data:`MAX_SETTERS` of those lines, or a method called,
    points nowhere."""
    failing = [t for t in tests if t.outcome in ("failed", "error")]
    if not failing:
        return []
    index = _PathIndex(files)
    keys = _match_ids([t.nodeid for t in failing], spectrum) if spectrum is not None else {}
    setters: dict[str, list[tuple[str, int]]] | None = None
    trees: dict[str, ast.Module | None] = {}  # many failing tests share a test file
    totals: dict[tuple[str, int], float] = defaultdict(float)
    for test in failing:
        names = _asserted_attributes(failure_text(test), files, index, trees)
        if not names:
            continue
        if setters is None:
            setters = _attribute_setters(files)
        key = keys.get(test.nodeid)
        ran = spectrum[key] if spectrum is not None and key is not None else None
        suspected: set[tuple[str, int]] = set()
        for name in names:
            found = [loc for loc in setters.get(name, []) if ran is None or loc in ran]
            if len(found) <= MAX_SETTERS:
                suspected.update(found)
        for loc in suspected:
            totals[loc] += 1.0
    n = len(failing)
    return _sorted(
        Suspect(path, line, total / n, WHY_CHECKED) for (path, line), total in totals.items()
    )


def _asserted_attributes(
    text: str, files: Mapping[str, str], index: _PathIndex, trees: dict[str, ast.Module | None]
) -> set[str]:
    """The attributes (not methods) the innermost test frame's ``assert`` (or
    ``self.assert…(…)`` call) reads; ``trees`` keeps the test files parsed."""
    frames = [
        (path, line)
        for raw, line in frames_of(text)
        for path in index.resolve(raw)[:1]
        if is_test_path(path)
    ]
    if not frames:
        return set()
    path, line = frames[-1]
    if path not in trees:
        trees[path] = _parse_source(files.get(path, ""))
    tree = trees[path]
    statement = _statement_at(tree, line) if tree is not None else None
    if isinstance(statement, ast.Assert):
        checked: ast.AST = statement.test
    elif (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Attribute)
        and statement.value.func.attr.startswith("assert")
    ):
        checked = ast.Module(body=[ast.Expr(a) for a in statement.value.args], type_ignores=[])
    else:
        return set()
    called = {id(n.func) for n in ast.walk(checked) if isinstance(n, ast.Call)}
    return {
        n.attr
        for n in ast.walk(checked)
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Load)
        and id(n) not in called
        and not n.attr.startswith("__")
    }


def _attribute_setters(files: Mapping[str, str]) -> dict[str, list[tuple[str, int]]]:
    """Attribute name → the lines outside the tests that assign it (``x.name = …``)."""
    found: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for path, source in files.items():
        if not _suspect_path_ok(path):  # test files never are
            continue
        tree = _parse_source(source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for part in ast.walk(target):
                        if isinstance(part, ast.Attribute) and isinstance(part.ctx, ast.Store):
                            found[part.attr].append((path, node.lineno))
    return found


# --- spectrum: test ids and ochiai -----------------------------------------------------
def canonical_test_id(test: str | TestResult) -> str:
    """The key a test goes by in coverage data and in :func:`ochiai`'s sets:
    ``tests/test_x.py::TestC::test_foo[1]`` -> ``tests.test_x.TestC.test_foo``.

    Takes a JUnit node id, ``classname::name`` (JUnit without a file), a TestResult, or
    an already dotted key (returned without its parameters)."""
    nodeid = test.nodeid if isinstance(test, TestResult) else test
    if "::" in nodeid:
        head, rest = nodeid.split("::", 1)
        rest = rest.split("[", 1)[0]
        head = head.replace("\\", "/")
        while head.startswith("./"):
            head = head[2:]
        if head.endswith(".py"):
            head = head[:-3].replace("/", ".")
        parts = [head, *rest.split("::")]
    else:
        parts = [nodeid.split("[", 1)[0]]
    return ".".join(p for p in parts if p)


def _params(nodeid: str) -> str:
    """A node id's parameters, brackets included (``test_f[1-a]`` → ``[1-a]``), or "".
    They start at the first ``[`` after the file part, and may hold ``::`` themselves."""
    rest = nodeid.split("::", 1)[-1]
    return rest[rest.index("[") :] if "[" in rest else ""


def case_key(test: str | TestResult) -> str:
    """:func:`canonical_test_id` with the parameters: ``tests/test_x.py::test_f[1]`` →
    ``tests.test_x.test_f[1]``; the key of a case's own coverage context."""
    nodeid = test.nodeid if isinstance(test, TestResult) else test
    return canonical_test_id(nodeid) + _params(nodeid)


def _split_key(key: str) -> tuple[str, str]:
    """``tests.test_x.test_f[1.5]`` → (``tests.test_x.test_f``, ``[1.5]``): parameters may
    hold dots, so they are kept apart from the dotted name."""
    cut = key.find("[")
    return (key, "") if cut < 0 else (key[:cut], key[cut:])


def _dotted_suffix(a: str, b: str) -> int:
    """How many trailing dotted components ``a`` and ``b`` share."""
    pa, pb = a.split("."), b.split(".")
    n = 0
    while n < min(len(pa), len(pb)) and pa[-1 - n] == pb[-1 - n]:
        n += 1
    return n


def _match_ids(ids: Iterable[str], keys: Iterable[str]) -> dict[str, str]:
    """Each id's coverage key: its own case's (the same parameters), else its function's
    (a context without parameters); each exact, else the unique key sharing the longest
    dotted suffix that covers all of the shorter name (``test_x.t`` ~ ``tests.test_x.t``)."""
    by_last: dict[tuple[str, str], list[str]] = defaultdict(list)  # (last name, params)
    keyset = set(keys)
    for key in keyset:
        name, params = _split_key(key)
        by_last[(name.rsplit(".", 1)[-1], params)].append(key)
    out: dict[str, str] = {}
    for raw in ids:
        name, params = _split_key(case_key(raw))
        for wanted in dict.fromkeys((params, "")):
            found = _match_one(name, wanted, keyset, by_last)
            if found is not None:
                out[raw] = found
                break
    return out


def _match_one(
    name: str, params: str, keyset: set[str], by_last: Mapping[tuple[str, str], list[str]]
) -> str | None:
    if name + params in keyset:
        return name + params
    best: list[str] = []
    best_n = 0
    for key in by_last.get((name.rsplit(".", 1)[-1], params), []):
        other = _split_key(key)[0]
        n = _dotted_suffix(name, other)
        if n < min(name.count("."), other.count(".")) + 1:
            continue  # neither is a suffix of the other
        if n > best_n:
            best, best_n = [key], n
        elif n == best_n:
            best.append(key)
    return best[0] if len(best) == 1 else None


Spectrum = Mapping[str, set[tuple[str, int]]]
"""Per-test line coverage: test key (see :func:`case_key`) -> covered (repo path, line)."""


def runs_in(spectrum: Spectrum, test: str, paths: Collection[str]) -> bool | None:
    """Whether ``test`` (a node id) ran any line of the files at ``paths`` in the recorded
    coverage; None when the coverage has no context for it."""
    key = _match_ids([test], spectrum).get(test)
    if key is None:
        return None
    return any(path in paths for path, _line in spectrum[key])


def ochiai(
    coverage: Spectrum,
    failed: set[str],
    passed: set[str],
    files: Mapping[str, str] | None = None,
) -> list[Suspect]:
    """Ochiai suspiciousness of every line a failing test covered:
    ``failed_cov / sqrt(total_failed * (failed_cov + passed_cov))``.

    With the sources (``files``), lines of a method that shows a value score
    :data:`REPORT_SHARE` of theirs (pytest runs it to show a failed assertion), and the
    test of the ``if`` that decides whether a line runs scores at least
    :data:`GUARD_SHARE` of that line: the line may run only in the
    failing tests because its condition is wrong, and the condition itself runs in every
    test, so the spectrum alone cannot single it out (xmltodict with ``if pretty and
    depth > 1:`` before the newline of a closing tag). So does a ``for``'s iterable
    with :data:`LOOP_SHARE` of its body's lines (transitions' ``range(1, …)``).

    ``coverage`` maps test keys to covered (path, line); ``failed``/``passed`` hold JUnit
    node ids or keys (see :func:`case_key`). Each case of a parametrised test has its own
    context; where contexts are per function (coverage.py's ``test_function``), the cases
    share one: each case counts as a test, and a context that any failing case maps to is
    not counted as passing (its coverage is the union of all its cases).
    """
    total_failed = len(failed)
    if not total_failed:
        return []
    fmap = _match_ids(failed, coverage)
    pmap = _match_ids(passed - failed, coverage)
    failing_keys = set(fmap.values())
    failed_cov: dict[tuple[str, int], int] = defaultdict(int)
    passed_cov: dict[tuple[str, int], int] = defaultdict(int)
    for key in fmap.values():
        for loc in coverage[key]:
            failed_cov[loc] += 1
    for key in pmap.values():
        if key in failing_keys:
            continue
        for loc in coverage[key]:
            passed_cov[loc] += 1
    out = []
    for (path, line), ef in failed_cov.items():
        if not _suspect_path_ok(path) or line < 1:
            continue
        score = ef / math.sqrt(total_failed * (ef + passed_cov.get((path, line), 0)))
        out.append(Suspect(path, line, score, f"{WHY_OCHIAI} {score:.2f}"))
    if not files:
        return _sorted(out)
    return _sorted(_with_deciding_lines(_shown_less(out, files), files))


def _shown_less(suspects: list[Suspect], files: Mapping[str, str]) -> list[Suspect]:
    """The suspects, those in a method that shows a value scored :data:`REPORT_SHARE` of
    their spectrum score."""
    out = []
    for s in suspects:
        source = files.get(s.path)
        if source is not None and s.line in _display_lines(source):
            score = s.score * REPORT_SHARE
            s = Suspect(s.path, s.line, score, f"{s.why} (shows a value: {score:.2f})")
        out.append(s)
    return out


@functools.lru_cache(maxsize=32)
def _display_lines(source: str) -> frozenset[int]:
    """The lines of the methods that show a value (``__repr__``, ``__str__``, …) or
    describe a match (:data:`_DESCRIBES`)."""
    tree = _parse_source(source)
    if tree is None:
        return frozenset()
    return frozenset(
        line
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.name in _SHOWS_A_VALUE or _DESCRIBES.fullmatch(node.name))
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    )


def _with_deciding_lines(suspects: list[Suspect], files: Mapping[str, str]) -> list[Suspect]:
    best = {(s.path, s.line): s for s in suspects}
    for s in suspects:
        source = files.get(s.path)
        deciding = _deciding_tests(source).get(s.line) if source is not None else None
        if deciding is None:
            continue
        lines, share = deciding
        score = s.score * share
        for at in lines:
            held = best.get((s.path, at))
            if at != s.line and (held is None or held.score < score):
                why = f"{WHY_OCHIAI} {score:.2f} (decides whether line {s.line} runs)"
                best[s.path, at] = Suspect(s.path, at, score, why)
    return list(best.values())


@functools.lru_cache(maxsize=32)
def _deciding_tests(source: str) -> dict[int, tuple[tuple[int, ...], float]]:
    """First line of each statement → the lines of the test of the innermost ``if`` whose
    body or ``else`` holds it, and of the tests of the ``if``/``elif`` before it in its
    chain (u-msgpack-python packed -32 as an int8 under ``elif obj >= -2**(8 - 1):``
    because ``if obj > -32:`` above it said no), within its function (see
    :func:`_test_lines`), with :data:`GUARD_SHARE`; or of the iterable of the
    innermost ``for`` whose body holds it, or the test of the innermost ``while``, with
    :data:`LOOP_SHARE`: webcolors' ``while length > 2 and (red[0] == "0" and green[0] ==
    "0" or blue[0] == "0"):`` strips the zeros its body strips, and only the spectrum of
    the body said so."""
    tree = _parse_source(source)
    found: dict[int, tuple[tuple[int, ...], float]] = {}
    if tree is None:
        return found

    def visit(children: Iterable[ast.AST], deciding: tuple[tuple[int, ...], float]) -> None:
        for child in children:
            if isinstance(child, ast.stmt) and deciding[0]:
                found.setdefault(child.lineno, deciding)
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(ast.iter_child_nodes(child), ((), 0.0))
            elif isinstance(child, ast.If):
                visit_if(child, ())
            elif isinstance(child, ast.For | ast.AsyncFor):
                visit(child.body, (_test_lines(child.iter), LOOP_SHARE))
                visit(child.orelse, deciding)
            elif isinstance(child, ast.While):
                visit(child.body, (_test_lines(child.test), LOOP_SHARE))
                visit(child.orelse, deciding)
            else:
                visit(ast.iter_child_nodes(child), deciding)

    def visit_if(node: ast.If, earlier: tuple[int, ...]) -> None:
        # an ``elif``'s (or ``else``'s) block runs because every test before it failed
        lines = tuple(dict.fromkeys((*_test_lines(node.test), *earlier)))
        visit(node.body, (lines, GUARD_SHARE))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            if lines:
                found.setdefault(node.orelse[0].lineno, (lines, GUARD_SHARE))
            visit_if(node.orelse[0], lines)
        else:
            visit(node.orelse, (lines, GUARD_SHARE))

    visit(ast.iter_child_nodes(tree), ((), 0.0))
    return found


def _test_lines(test: ast.expr) -> tuple[int, ...]:
    """The lines of an ``if``'s test; none for a test that calls out (``if
    slot.overlaps(other):``), whose answer is elsewhere. A builtin answers nothing of
    the code's own: xmltodict's ``if len(self.path) >= self.item_depth:`` decides."""
    if any(isinstance(node, ast.Call) and not _calls_a_builtin(node) for node in ast.walk(test)):
        return ()
    return tuple(range(test.lineno, (test.end_lineno or test.lineno) + 1))


# --- coverage data ---------------------------------------------------------------------
class CoverageDataError(ValueError):
    """The coverage data is missing, too big or not coverage.py's; the message says why."""


def _numbits_to_lines(numbits: bytes) -> list[int]:
    return [
        byte_i * 8 + bit_i
        for byte_i, byte in enumerate(numbits)
        if byte
        for bit_i in range(8)
        if byte & (1 << bit_i)
    ]


def _private_copy(data_file: Path, folder: str, max_bytes: int) -> str:
    """Copy an untrusted data file (a regular file, not a symlink) into ``folder``."""
    try:
        fd = os.open(data_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError as exc:
        raise CoverageDataError(f"no coverage data at {data_file}") from exc
    except OSError as exc:
        raise CoverageDataError(f"cannot open coverage data {data_file}: {exc}") from exc
    target = os.path.join(folder, "coverage.sqlite")
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(src.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise CoverageDataError(f"coverage data {data_file} is not a regular file")
        if st.st_size > max_bytes:
            raise CoverageDataError(f"coverage data is {st.st_size} bytes, over {max_bytes}")
        with open(target, "xb") as dst:
            shutil.copyfileobj(src, dst)
            if dst.tell() > max_bytes:
                raise CoverageDataError(f"coverage data is over {max_bytes} bytes")
    return target


def _to_repo(path: str, roots: Sequence[str]) -> str | None:
    path = path.replace("\\", "/")
    if path.startswith("/"):
        for root in roots:
            prefix = root.rstrip("/") + "/"
            if path.startswith(prefix):
                return _repo_path(path[len(prefix) :])
        return None
    return _repo_path(path)


def read_coverage(
    data_file: Path,
    root: Path,
    *,
    sandbox_root: str = "/workspace",
    max_bytes: int = MAX_COVERAGE_BYTES,
) -> dict[str, set[tuple[str, int]]]:
    """Per-test line coverage from a coverage.py data file recorded with
    :data:`COVERAGE_RC`: test key (see :func:`case_key`) -> covered (repo path, line).

    Paths are made repository-relative: relative ones (``relative_files``) as they are,
    absolute ones when under ``root`` (the checkout) or ``sandbox_root``. Paths that
    leave the repository (absolute elsewhere, ``..``) and test files are left out, as is
    the empty context (imports, fixtures). Whether a file still exists is not checked
    (``root`` only serves absolute paths). Raises :class:`CoverageDataError` for a file
    that is not coverage.py data.
    """
    root_real = Path(root).resolve()
    roots = [str(root_real), str(Path(root).absolute()), sandbox_root]
    with tempfile.TemporaryDirectory(prefix="kaizen-cov-") as tmp:
        copy = _private_copy(Path(data_file), tmp, max_bytes)
        rows = _query(copy)
    files, contexts, lines = rows

    repo_files: dict[int, str] = {}
    test_modules: list[str] = []
    for file_id, raw in files.items():
        rel = _to_repo(raw, roots)
        if rel is None or not rel.endswith(".py") or rel.startswith(KAIZEN_FILES):
            continue  # outside the repository, or Kaizen's own plugins in the copy
        repo_files[file_id] = rel
        if is_test_path(rel) or _looks_like_test_module(rel):
            module = rel[:-3].replace("/", ".")
            test_modules.append(module.removesuffix(".__init__"))

    keys = {
        cid: case_key(ctx.removeprefix(CONTEXT_PREFIX))
        if ctx.startswith(CONTEXT_PREFIX)
        else _context_key(ctx, test_modules)
        for cid, ctx in contexts.items()
        if ctx and ctx != CONTEXT_PREFIX
    }
    out: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for file_id, context_id, numbers in lines:
        key = keys.get(context_id)
        path = repo_files.get(file_id)
        if key is None or path is None or is_test_path(path):
            continue
        out[key].update((path, n) for n in numbers if n > 0)
    for key in keys.values():
        out.setdefault(key, set())  # a test that covered no repository line still counts
    return dict(out)


def _looks_like_test_module(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test") or name.endswith("_test.py") or "/test" in path


def _context_key(context: str, test_modules: Sequence[str]) -> str:
    """A coverage context ``module.qualname`` with its module part replaced by the
    dotted repository path of the test file it names (the longest unique match)."""
    parts = context.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:i])
        matches = [m for m in test_modules if m == module or m.endswith("." + module)]
        if len(matches) == 1:
            return ".".join([matches[0], *parts[i:]])
        if len(matches) > 1:
            break  # ambiguous: keep the context as recorded
    return context


def _query(
    database: str,
) -> tuple[dict[int, str], dict[int, str], list[tuple[int, int, list[int]]]]:
    try:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise CoverageDataError(f"cannot open coverage data: {exc}") from exc
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        kinds = dict(conn.execute("SELECT name, type FROM sqlite_master").fetchall())
        for table in ("coverage_schema", "meta", "file", "context", "line_bits", "arc"):
            if kinds.get(table) != "table":
                raise CoverageDataError(f"not coverage.py data: no table {table!r}")
        version = conn.execute("SELECT version FROM coverage_schema").fetchone()
        if not version or version[0] != COVERAGE_SCHEMA_VERSION:
            raise CoverageDataError(
                f"coverage data schema {version[0] if version else None}, "
                f"expected {COVERAGE_SCHEMA_VERSION}"
            )
        files = {int(i): str(p) for i, p in conn.execute("SELECT id, path FROM file")}
        contexts = {int(i): str(c) for i, c in conn.execute("SELECT id, context FROM context")}
        lines: list[tuple[int, int, list[int]]] = [
            (int(f), int(c), _numbits_to_lines(bytes(bits)))
            for f, c, bits in conn.execute("SELECT file_id, context_id, numbits FROM line_bits")
        ]
        arcs: dict[tuple[int, int], set[int]] = defaultdict(set)
        for f, c, a, b in conn.execute("SELECT file_id, context_id, fromno, tono FROM arc"):
            arcs[(int(f), int(c))].update(n for n in (int(a), int(b)) if n > 0)
        lines.extend((f, c, sorted(ns)) for (f, c), ns in arcs.items())
    except sqlite3.Error as exc:
        raise CoverageDataError(f"unreadable coverage data: {exc}") from exc
    finally:
        conn.close()
    return files, contexts, lines


# --- merging -------------------------------------------------------------------------
def _kind(why: str) -> str:
    for kind in KIND_WEIGHTS:
        if why.startswith(kind):
            return kind
    return why.split(" ", 1)[0]


def rank(*sources: list[Suspect], limit: int = 20) -> list[Suspect]:
    """Merge suspect lists into one ranking of at most ``limit`` lines.

    Within each source, each kind of evidence (``why`` prefix) is normalised to a best
    of 1 and weighted by :data:`KIND_WEIGHTS` (tracebacks 3, named lines 2.5, ochiai and
    a failing unit test of one function 2, symbols 1, file names 0.5), the failing tests'
    tracebacks to a best of at least :data:`FAILURE_FLOOR` and the symbols to one of at
    least :data:`SYMBOL_FLOOR`; a line's score is the sum
    over sources and kinds, and its ``why`` lists the evidence, strongest first.
    Test files and paths outside the repository never appear.
    """
    merged: dict[tuple[str, int], float] = defaultdict(float)
    whys: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for source in sources:
        best: dict[str, float] = defaultdict(float)
        for s in source:
            kind = _kind(s.why)
            best[kind] = max(best[kind], s.score)
        for s in source:
            if s.line < 1 or s.score <= 0 or not _suspect_path_ok(s.path):
                continue
            kind = _kind(s.why)
            top = max(best[kind], _FLOORS.get(kind, 0.0))
            value = KIND_WEIGHTS.get(kind, OTHER_WEIGHT) * s.score / top
            key = (s.path, s.line)
            merged[key] += value
            whys[key][s.why] = max(whys[key].get(s.why, 0.0), value)
    out = [
        Suspect(
            path,
            line,
            score,
            "; ".join(w for w, _ in sorted(whys[(path, line)].items(), key=lambda kv: -kv[1])),
        )
        for (path, line), score in merged.items()
    ]
    return _sorted(out)[: max(0, limit)]


def _sorted(suspects: Iterable[Suspect]) -> list[Suspect]:
    return sorted(suspects, key=lambda s: (-s.score, s.path, s.line))


_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))


# Methods of the builtin containers and strings that only look something up: a test that
# asks ``self._buf.get(addr) is None`` (intelhex's overlap check) or
# ``name.startswith("_")`` decides with values of the code's own, like ``len``.
_LOOKUP_METHODS = frozenset(
    {"get", "keys", "values", "items", "count", "index", "find", "rfind"}
    | {"startswith", "endswith", "isdigit", "isalpha", "isalnum", "isspace", "isupper"}
    | {"islower", "lower", "upper", "strip", "lstrip", "rstrip"}
)


def _calls_a_builtin(call: ast.Call) -> bool:
    """A builtin function, or a lookup method of a builtin container or string."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr in _LOOKUP_METHODS
    return isinstance(call.func, ast.Name) and call.func.id in _BUILTINS
