"""Ruff findings on the lines a pull request adds.

Ruff is a static analyser: it parses the files and never imports or runs them, which is
what makes it safe on code from an untrusted pull request. It runs with ``--isolated`` so
the repository's own ``pyproject.toml``/``ruff.toml`` is never read (a hostile config could
point ruff at paths outside the checkout, and a sloppy one would silence everything), over
a temporary copy of just the changed files at the PR head.

Only diagnostics on *added* lines are kept: a problem that already sits in the base branch
is not this PR's doing, and repeating it on every PR would teach people to ignore Kaizen.
When ruff knows a safe fix that touches only added lines of one hunk, the finding carries
it as a GitHub suggestion, so accepting the remark is one click.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from workers.code_paths import is_build_script, is_example_path, is_test_path
from workers.review.bandit_nosec import silenced_by_nosec
from workers.review.base_text import text_before
from workers.review.class_namespaces import in_a_namespace_class, read_from_its_namespace
from workers.review.constant_sql import built_from_constants
from workers.review.copied_branches import copied_branch
from workers.review.def_names import DefNames, def_names
from workers.review.diff_model import DiffModel, FileChange
from workers.review.env_defaults import converted_at_once
from workers.review.false_alarms import (
    a_digest_cut_short,
    a_field_specifier,
    a_literal_value,
    a_local_variable_first,
    a_path_in_a_container,
    a_range_bound,
    a_symbol_in_a_sentence,
    a_symbol_in_prose,
    among_lambdas,
    an_immutable_instance,
    an_operator_dsl,
    changes_what_it_iterates,
    closed_in_a_finally,
    compared_elementwise,
    compared_not_bound,
    compared_with_many,
    compares_a_comparison,
    compares_with_a_supported_python,
    copies_another_all,
    counts_its_items,
    counts_on_from_itself,
    default_only_read,
    defines_names_at_run_time,
    ends_waiting_forever,
    entered_in_a_stack,
    escapes_every_value,
    exports_by_their_names,
    falls_back_from_get_annotations,
    fills_in_a_missing_argument,
    filters_where_python_can,
    formats_with_braces,
    formats_with_its_own_spec,
    formatted_as_one,
    guarded_by_import_error,
    harmless_redefinition,
    hashes_for_no_security,
    imports_the_same_again,
    in_a_lazy_annotation,
    in_a_literal_type,
    in_a_local_class,
    in_a_meta_class,
    in_a_string,
    in_an_assert,
    in_its_own_script,
    in_the_librarys_own_package,
    in_the_main_block,
    in_type_comments,
    joins_two_kinds,
    keeps_the_file_open,
    keyword_strings,
    lengths_checked_equal,
    loads_what_it_pickled,
    loads_with_its_own_loader,
    logs_a_handled_exception,
    loop_variable_read_after,
    made_aware_later,
    major_checked_too,
    mutated_nowhere_in_the_file,
    named_as_a_shared_store,
    names_a_shell,
    names_the_character,
    not_djangos_extra,
    one_value_over_lines,
    only_a_message,
    only_anchored,
    only_returns_none,
    opens_web_addresses_only,
    raised_where_expected,
    raises_a_usage_message,
    raises_on_purpose,
    reached_only_by_name,
    reads_a_calendar_field,
    reads_a_property,
    rebinds_from_itself,
    reexported_by_its_package,
    registered_like_the_rest,
    repeats_a_number_of_times,
    reraises_a_handled_exception,
    reraises_an_outer_exception,
    result_thrown_away,
    return_code_read,
    returns_when_there,
    runs_a_file_the_user_names,
    runs_code_written_here,
    said_to_be_naive,
    said_to_be_shared,
    said_to_dodge_a_type_checker,
    said_why_not_ne,
    self_assigned_builtin,
    shared_on_purpose,
    skips_without_it,
    split_inside_a_sentence,
    splits_a_digest,
    stands_at_module_level,
    string_at,
    strings_on,
    tests_for_nan,
    the_last_of_several_cases,
    the_subject_of_its_function,
    unpacked_beside_used_names,
)
from workers.review.findings import UNCHANGED_PLACES, Finding, Side
from workers.review.flagged_code import flagged_code
from workers.review.loop_closures import used_in_its_iteration
from workers.review.pylint_disables import disabled_by_pylint
from workers.review.python2_code import written_for_python2
from workers.review.ruff_suppressions import ignored_on_line
from workers.review.secrets_scan import (
    is_placeholder,
    is_unsigned_jwt,
    names_a_secret,
    spells_its_name,
)
from workers.review.version_guards import runs_only_where_defined

if TYPE_CHECKING:
    from workers.review.python_version import DeclaredPython

PYTHON_SUFFIXES = (".py", ".pyi")

# Rule families that find bugs and likely mistakes rather than matters of taste: no line
# length, docstrings, naming, quoting or import order. Exact codes where a family is mostly
# style but has a few rules worth saying (RET, ISC, PLR, EXE, NPY, PGH).
DEFAULT_SELECT: tuple[str, ...] = (
    "F",  # pyflakes: undefined names, unused imports, broken format strings, …
    "E9",  # syntax and I/O errors
    "E711",  # comparison to None with ==
    "E712",  # comparison to True/False with ==
    "E713",  # not x in y
    "E714",  # not x is y
    "E721",  # type(x) == T
    "E722",  # bare except
    "B",  # bugbear: mutable defaults, loop-variable closures, useless expressions, …
    "S",  # bandit: shell injection, unsafe deserialisation, weak crypto, …
    "ASYNC",  # blocking calls inside async functions
    "DTZ",  # naive datetimes
    "T10",  # a debugger breakpoint left in
    "YTT",  # sys.version comparisons that break on Python 3.10 / 4
    "LOG",  # logging misuse
    "PLE",  # pylint errors
    "PLW",  # pylint warnings
    "PLR0124",  # comparison with itself
    "PLR0133",  # comparison of two constants
    "PLR0206",  # property with parameters
    "PLR1704",  # argument redefined by a local
    "PLR1711",  # useless return
    "PLR1714",  # x == a or x == b → x in (a, b)
    "PLR1722",  # exit() instead of sys.exit()
    "PGH005",  # assertion on a mock attribute that does not exist
    "RUF",  # ruff's own: dangling asyncio tasks, mutable class defaults, confusables, …
    "PERF",  # performance anti-patterns
    "SIM",  # simplifications
    "C4",  # comprehensions
    "UP",  # outdated syntax
    "PIE",  # unnecessary code, duplicate class fields and enum values
    "RET501",  # explicit return None in a function that returns nothing else
    "RET502",  # bare return in a function that returns a value
    "RET503",  # falling off the end of a function that returns a value
    "ISC001",  # implicit string concatenation on one line (usually a missing comma)
    "EXE003",  # shebang that does not run Python
    "EXE004",  # whitespace before the shebang
    "EXE005",  # shebang not on the first line
)

# Left out of the defaults (a caller's own ``select`` is taken as meant): rules that are
# wrong in this setting (EXE001/EXE002 look at file modes, which the copy does not keep;
# RUF100 calls a ``noqa`` for a rule the repository enables but Kaizen does not "unused",
# RUF102 one for another linter's rule "invalid", and its fix deletes it)
# and rules that flag ordinary, correct code far more often than a mistake.
DEFAULT_IGNORE: tuple[str, ...] = (
    "EXE001",
    "EXE002",
    "RUF100",
    "RUF102",  # a noqa code ruff does not know: another linter's (flake8's B902, pylint's)
    # a noqa code ruff has renamed since (sphinx 7.4 suppresses TCH001 so): the name the team's
    # own, older ruff knows; the new one (TC001) it would call unknown
    "RUF101",
    "S101",  # assert: how pytest tests are written
    # each use of a name a star import may define: construct 2.10.70's tests drew 1,651,
    # where F403 says it once, at the import
    "F405",
    "S404",  # import subprocess
    "S603",  # any subprocess call without shell=True
    "S607",  # a program started by name
    "PLW0603",  # the global statement
    "PLW2901",  # reassigning the loop variable
    "SIM102",  # nested ifs
    "SIM105",  # try/except/pass → contextlib.suppress
    "SIM108",  # if/else → ternary
    "SIM117",  # nested with statements
    "PERF203",  # try/except in a loop (free since Python 3.11)
    "RUF022",  # unsorted __all__
    "RUF023",  # unsorted __slots__
)

# Severity by rule: the longest matching prefix wins. Syntax errors and code that fails as
# soon as it runs are high; likely bugs are medium; everything else is low.
_SEVERITY_BY_PREFIX: dict[str, str] = {
    "F": "low",
    "F402": "medium",  # import shadowed by a loop variable
    "F404": "high",  # late __future__ import: a SyntaxError
    "F5": "medium",  # %-format / str.format mismatches: a runtime error on that path
    "F60": "medium",  # repeated dict keys
    "F62": "high",  # starred-expression errors
    "F63": "high",  # is-literal, assert on a tuple, if on a tuple
    "F7": "high",  # break/continue/return/yield outside their place
    "F811": "high",
    "F821": "high",
    "F822": "high",
    "F823": "high",
    "F9": "medium",  # raise NotImplemented
    "E9": "high",
    "E7": "low",
    "E721": "medium",
    "E722": "medium",
    "PLE": "high",
    "S": "high",
    "S101": "low",
    "S311": "low",  # random for non-cryptographic uses is usually fine
    # what bandit rates medium, not high: a fixed /tmp path in a docs build script
    # (deepdiff), a urlopen of the project's own release URL (omegaconf), flower's
    # shelve of its own state file
    "S104": "medium",  # binding to all interfaces: a server's default (cherrypy's Host)
    "S108": "medium",  # hardcoded temporary file or directory
    "S113": "medium",  # a request without a timeout
    "S301": "medium",  # pickle, shelve, jsonpickle loads
    "S302": "medium",  # marshal loads
    "S303": "medium",  # md5/sha1 (often not for security: ETags, cache keys)
    "S305": "medium",  # ECB cipher mode
    "S306": "medium",  # tempfile.mktemp
    "S308": "medium",  # mark_safe
    "S31": "medium",  # urlopen, XML parsers that are not defusedxml
    "S312": "high",  # telnet: bandit's high
    # what bandit itself rates low: on a cold start "high" let these fill a review's budget
    # (celery's sources: 5 of 10 comments were try/except/pass) ahead of likely bugs
    "S110": "low",  # try/except/pass
    "S112": "low",  # try/except/continue
    "S606": "low",  # os.exec*/spawn* without a shell
    "S404": "low",
    "S603": "low",
    "S607": "low",
    "S105": "medium",  # guessed from variable names; secrets_scan owns real secrets
    "S106": "medium",
    "S107": "medium",
    "B": "medium",
    # getattr/setattr with a constant name: the attribute form is shorter, and the call is
    # how typed code sets what the declared type lacks (allauth's request attributes,
    # tornado's ``getattr(package, "__all__")`` "mypy doesn't know about"): style
    "B009": "low",
    "B010": "low",
    "ASYNC": "medium",
    "DTZ": "medium",
    "T10": "medium",
    "YTT": "medium",
    "LOG": "medium",
    "PLW": "medium",
    # "lambda may be unnecessary": the rewrite looks the name up once, at definition, and
    # late lookup is often why the lambda is there (trio's lambda: select.epoll(), kept
    # for gevent's monkey-patching)
    "PLW0108": "low",
    # nested min/max that could be one call (sentence-transformers' max(max(…), …)):
    # a simplification, the result is the same
    "PLW3301": "low",
    "PLR0124": "medium",
    "PLR0133": "medium",
    "PLR0206": "medium",
    "PLR1704": "medium",
    "PGH005": "medium",
    "RUF006": "medium",  # dangling asyncio task
    "RUF008": "medium",  # mutable dataclass default
    "RUF009": "medium",  # function call as dataclass default
    "RUF012": "medium",  # mutable class default
    "RUF018": "medium",  # assignment inside assert
    "RUF024": "medium",  # dict.fromkeys with a mutable value
    "RUF026": "medium",  # defaultdict(default_factory=…)
    "PIE794": "medium",  # class field defined twice
    "PIE796": "medium",  # duplicate enum value
    "SIM115": "medium",  # open() without a context manager
    "ISC001": "medium",
    "RET503": "medium",
    # a deprecated unittest alias (``assertEquals``, ``assertRaisesRegexp``): Python 3.12
    # removed them all, so the test errors there (parameterized 0.9's own tests)
    "UP005": "medium",
}
# What a rule's message leaves out and the reader needs to weigh it.
CONSEQUENCES: dict[str, str] = {
    "UP005": "Python 3.12 removed these aliases: there this call raises AttributeError.",
}
_DEFAULT_SEVERITY = "low"

RULE_SELECTOR = re.compile(r"[A-Z]+[0-9]*")  # E501, B, PLR2004, ALL
_LETTERS = re.compile(r"[A-Z]+")
_RULE_CODE = re.compile(r"[A-Z]+[0-9]+")
_RULE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# ruff's message for syntax a Python version lacks: "Cannot use `match` statement on
# Python 3.9 (syntax was added in Python 3.10)"
_VERSION_SYNTAX = re.compile(r"\(syntax was (?:added|removed) in Python \d+\.\d+\)")
_ADDED_IN = re.compile(r"\(syntax was added in Python 3\.(\d+)\)")
_PASSWORD_NAME = re.compile(r'hardcoded password assigned to[^"]*"(\w+)"')
# Ruff's guesses at a hardcoded password from a variable, argument or parameter name.
CREDENTIAL_CODES = frozenset({"S105", "S106", "S107"})
# Builtins of Python 2 that Python 3 dropped: a project that still supports Python 2 uses
# them in its Python 2 branches (ruff lints for Python 3 only).
PYTHON2_BUILTINS = frozenset(
    {
        "apply",
        "basestring",
        "buffer",
        "cmp",
        "coerce",
        "execfile",
        "file",
        "intern",
        "long",
        "raw_input",
        "reduce",
        "reload",
        "StandardError",
        "unichr",
        "unicode",
        "xrange",
    }
)
_LOOP_VARIABLE = re.compile(r"Loop control variable `(\w+)`")
_UNDEFINED_NAME = re.compile(r"Undefined name `(\w+)`")
# Builtins newer than the oldest Python ruff lints for, by the minor version that added
# them: linting for 3.8, ruff calls them undefined (F821), though libraries use them
# behind a version check (pytest: ``if sys.version_info > (3, 10): … EncodingWarning``).
NEWER_BUILTINS: dict[str, int] = {
    "aiter": 10,
    "anext": 10,
    "EncodingWarning": 10,
    "BaseExceptionGroup": 11,
    "ExceptionGroup": 11,
    "PythonFinalizationError": 13,
}


class RuffUnavailable(RuntimeError):
    """Ruff could not be run, or did not finish, or said something this module cannot read."""


@dataclass(frozen=True)
class _Edit:
    start: tuple[int, int]  # (row, column), 1-based
    end: tuple[int, int]  # exclusive
    content: str


def run_ruff(
    files: Mapping[str, str],
    diff: DiffModel,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    python: DeclaredPython | None = None,
    test_roots: Sequence[str] = (),
    collected_from: Callable[[str], int | None] | None = None,
    timeout_s: float = 60.0,
) -> list[Finding]:
    """Ruff findings on the added lines of ``files`` (repository path → text at the PR head).

    Non-Python paths, paths that could escape a directory (absolute, ``..``) and files
    without added lines in ``diff`` (or that ``diff`` marks skipped) are not checked; of
    those without added lines, and of the files ``diff`` deletes, what the change took is
    read: code moved from there to an added line keeps its past (see _moved_remarks).
    ``select`` replaces :data:`DEFAULT_SELECT` (and then :data:`DEFAULT_IGNORE` does not
    apply); ``ignore`` is always passed on. ``python`` is the oldest Python the repository
    supports: ruff lints for it (its own default otherwise), and syntax newer than that is
    reported as ``ruff:unsupported-syntax``, naming where the version is declared.
    ``test_roots`` are where the repository keeps tests besides the usual names (pytest's
    ``testpaths``): some remarks weigh less in test code. ``collected_from(path)`` is the
    oldest Python 3 minor pytest collects a test file on (its conftest files' version-
    guarded ``collect_ignore``), asked only of files with syntax or builtins too new.
    Raises :class:`RuffUnavailable` when ruff cannot be found, fails or times out, and
    ``ValueError`` for a selector that is not a rule code.
    """
    wanted: dict[str, tuple[str, FileChange]] = {}
    for path, text in files.items():
        entry = diff.file(path)
        if (
            not path.endswith(PYTHON_SUFFIXES)
            or not _safe_relative(path)
            or entry is None
            or entry.skipped  # excluded by the repository's path filters, too large, …
            or not entry.added
        ):
            continue
        wanted[path] = (text, entry)
    if not wanted:
        return []

    command = _check_command(select, ignore, python)
    with (
        tempfile.TemporaryDirectory(prefix="kaizen-ruff-") as tmp,
        tempfile.TemporaryDirectory(prefix="kaizen-ruff-base-") as base_tmp,
    ):
        root = Path(tmp).resolve()
        written = _write(root, {path: text for path, (text, _entry) in wanted.items()})
        if not written:
            return []
        # the changed files as they were, to tell what the change wrote from what it touched
        before = {
            path: was
            for path, (text, entry) in wanted.items()
            if entry.removed and (was := text_before(text, entry)) is not None
        }
        # and those it only took lines from, whose code may live on in another file
        gone = _donors(files, diff)
        before.update({path: text for path, (text, _entry) in gone.items() if path not in before})
        base = _write(Path(base_tmp).resolve(), before)
        # "--" so that a file named "-x.py" is never read as an option.
        args = [*command, "--", *(os.path.relpath(p, root) for p in written), *base]
        diagnostics = _run(args, root, timeout_s)

        findings: dict[tuple[str, int, str], Finding] = {}
        floor_of = functools.cache(collected_from or _no_floor)  # asked once a file
        # (path, rule code) → places on the lines of that file the PR left alone
        unchanged: Counter[tuple[str, str]] = Counter()
        # path → the newest Python its untouched lines' syntax already needs
        compiles_from: dict[str, int] = {}
        # (path, name): an "undefined" name the untouched lines of the file already use
        used_undefined: set[tuple[str, str]] = set()

        # the same remark, before and after, per function or hunk: see _old_remarks
        @functools.cache
        def where(path: str) -> _Places | None:
            was = before.get(path)
            if was is None or path not in wanted:
                return None
            return _Places(def_names(was), def_names(wanted[path][0]))

        removed_had: dict[_Remark, list[str]] = {}
        added_has: dict[tuple[str, int, str], list[tuple[_Remark, str] | None]] = {}
        for item in diagnostics:
            filename = str(item.get("filename") or "")
            if filename in base:
                entry = (wanted.get(base[filename]) or gone[base[filename]])[1]
                remark = _remark(entry, item, "LEFT", before[base[filename]], where(base[filename]))
                if remark is not None:
                    removed_had.setdefault(remark[0], []).append(remark[1])
                continue
            repo_path = written.get(filename) or written.get(str((root / filename).resolve()))
            if repo_path is None:
                continue
            text, entry = wanted[repo_path]
            in_tests = is_test_path(repo_path, test_roots)
            finding = _finding(repo_path, text, entry, item, python, in_tests, floor_of)
            if finding is not None:
                key = (repo_path, finding.line, finding.pattern)
                findings.setdefault(key, finding)
                remark = _remark(entry, item, "RIGHT", text, where(repo_path))
                added_has.setdefault(key, []).append(remark)
            elif _row_col(item.get("location"))[0] not in entry.added:
                unchanged[repo_path, str(item.get("code") or "")] += 1
                needs = _syntax_needs(str(item.get("message") or ""))
                if needs is not None:
                    compiles_from[repo_path] = max(needs, compiles_from.get(repo_path, 0))
                undefined = _UNDEFINED_NAME.search(str(item.get("message") or ""))
                if item.get("code") == "F821" and undefined:
                    used_undefined.add((repo_path, undefined.group(1)))
    old = _old_remarks(added_has, removed_had)
    old |= _moved_remarks(added_has, removed_had, old)
    kept = [
        _with_unchanged(f, unchanged)
        for key, f in findings.items()
        if key not in old
        and not _no_older_than_the_file(f, compiles_from)
        and not _undefined_here_before(f, used_undefined)
    ]
    return sorted(_provided_names_minor(kept), key=lambda f: (f.path, f.line, f.pattern))


# Files that use one name undefined, past which it is provided to them, not misspelt.
_PROVIDED_IN_FILES = 3


def _provided_names_minor(findings: list[Finding]) -> list[Finding]:
    """``findings`` with an undefined name (F821) that ``_PROVIDED_IN_FILES`` files or
    more use made minor: something gives it to all of them that ruff cannot see
    (rocketry 3.0's documentation snippets each use the ``app`` an earlier snippet on
    the page made; a name a framework puts in builtins). A slip is one file's."""
    names = [_undefined_name(f) for f in findings]
    files: dict[str, set[str]] = {}
    for f, name in zip(findings, names, strict=True):
        if name is not None:
            files.setdefault(name, set()).add(f.path)
    shared = {name for name, paths in files.items() if len(paths) >= _PROVIDED_IN_FILES}
    return [
        replace(f, severity="low") if name in shared else f
        for f, name in zip(findings, names, strict=True)
    ]


def _undefined_name(finding: Finding) -> str | None:
    """The name an F821 finding says is undefined; None for any other finding."""
    match = _UNDEFINED_NAME.search(finding.message) if finding.pattern == "ruff:F821" else None
    return match.group(1) if match else None


def _check_command(
    select: Sequence[str], ignore: Sequence[str], python: DeclaredPython | None
) -> list[str]:
    """``ruff check`` with Kaizen's rules (or ``select``) for the repository's Python, up
    to the file names. Raises ``ValueError`` for a selector that is not a rule code."""
    chosen = list(select) or list(DEFAULT_SELECT)
    ignored = list(ignore) + ([] if select else list(DEFAULT_IGNORE))
    if python is not None and python.python2:
        ignored += PYTHON3_ONLY_ADVICE
    for code in [*chosen, *ignored]:
        if not RULE_SELECTOR.fullmatch(code):
            raise ValueError(f"not a ruff rule code or prefix: {code!r}")
    args = [
        *ruff_command(),
        "check",
        "--output-format",
        "json",
        "--no-cache",
        "--isolated",
        "--exit-zero",
        f"--select={','.join(chosen)}",
    ]
    if python is not None:
        args.append(f"--target-version={python.ruff_target}")
    args += ["--config", f"lint.flake8-bugbear.extend-immutable-calls = {_MARKERS}"]
    if ignored:
        args.append(f"--ignore={','.join(ignored)}")
    return args


def rules_by_file(
    files: Mapping[str, str],
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    python: DeclaredPython | None = None,
    timeout_s: float = 60.0,
) -> dict[str, set[str]]:
    """The rule codes ruff finds anywhere in each of ``files`` (repository path → text),
    linted as :func:`run_ruff` lints: how the code around a change is written (see
    workers.review.neighbour_convention). Paths that could escape a directory are left
    out. Raises :class:`RuffUnavailable` like :func:`run_ruff`."""
    wanted = {p: t for p, t in files.items() if p.endswith(PYTHON_SUFFIXES) and _safe_relative(p)}
    if not wanted:
        return {}
    command = _check_command(select, ignore, python)
    with tempfile.TemporaryDirectory(prefix="kaizen-ruff-around-") as tmp:
        root = Path(tmp).resolve()
        written = _write(root, wanted)
        if not written:
            return {}
        args = [*command, "--", *(os.path.relpath(p, root) for p in written)]
        found: dict[str, set[str]] = {path: set() for path in written.values()}
        for item in _run(args, root, timeout_s):
            filename = str(item.get("filename") or "")
            path = written.get(filename) or written.get(str((root / filename).resolve()))
            code = str(item.get("code") or "")
            if path is not None and _RULE_CODE.fullmatch(code):
                found[path].add(code)
    return found


def _write(root: Path, texts: Mapping[str, str]) -> dict[str, str]:
    """The texts written under ``root`` at their repository paths: absolute path →
    repository path, for those that could be written."""
    written: dict[str, str] = {}
    for path, text in texts.items():
        target = root.joinpath(*PurePosixPath(path).parts)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # newline="" keeps the file's own line endings, so ruff's rows and
            # columns match the text the suggestions are computed from.
            with target.open("w", encoding="utf-8", errors="replace", newline="") as fh:
                fh.write(text)
        except OSError:  # a/b.py next to a/b.py/c.py, over-long names, …
            continue
        written[str(target)] = path
    return written


# A remark as it is matched across the change: path, place (see _Places), rule code,
# ruff's message, and for bandit's rules the flagged text as well.
_Remark = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class _Places:
    """Where a changed line stands, to match a remark before and after the change: in
    the function of its name when that function is on both sides (humanize 4.17 hoisted
    ``date.today()`` to the top of ``naturalday``, seven lines up, another hunk), else in
    its hunk (a renamed function, module-level code)."""

    old: DefNames
    new: DefNames

    def of(self, side: Side, row: int, hunk: int) -> str:
        mine, other = (self.old, self.new) if side == "LEFT" else (self.new, self.old)
        name = mine.at(row)
        return f"def {name}" if name is not None and name in other.names else f"hunk {hunk}"


def _remark(
    entry: FileChange, item: Mapping[str, Any], side: Side, text: str, places: _Places | None
) -> tuple[_Remark, str] | None:
    """A diagnostic on a changed line, as it is matched across the change, with the text
    of its line; None for one on a line the change left alone, or a syntax error."""
    row, column = _row_col(item.get("location"))
    end_row, end_column = _row_col(item.get("end_location"))
    code = str(item.get("code") or "")
    line = entry.line(side, row)
    if not _RULE_CODE.fullmatch(code) or line is None or line.kind == " ":
        return None
    flagged = ""
    if _is_bandit(code):  # a security remark stands on the code it flags
        code_at = flagged_code(text.splitlines(), (row, column), (end_row, end_column))
        if code_at is None:
            return None
        flagged = _TYPING_ALIAS.sub(lambda m: m.group(1).lower() + "[", code_at)
    message = str(item.get("message") or "")
    place = f"hunk {line.hunk}" if places is None else places.of(side, row, line.hunk)
    return (entry.path, place, code, message, flagged), line.text


# typing's aliases of builtin generics, which pyupgrade's UP006 rewrites across a release
# (``Dict[str, Any]`` → ``dict[str, Any]``): a security remark's code that only lost one
# is the same code (bpython 0.26's ``eval(…, cast(Dict[str, Any], …))``)
_TYPING_ALIAS = re.compile(r"\b(?:typing\.)?(Dict|List|Set|FrozenSet|Tuple|Type)\[")


def _old_remarks(
    added_has: Mapping[tuple[str, int, str], list[tuple[_Remark, str] | None]],
    removed_had: Mapping[_Remark, list[str]],
) -> set[tuple[str, int, str]]:
    """The findings whose remark a removed line of the same function (or hunk, see
    _Places) already drew: the line changed around it, the code it is about did not.

    tornado 6.6 turned ``List[str]`` into ``list[str]`` across its annotations, and a
    mutable default that had stood in ``ax_attrs: List[str] = ["name", "email", …]`` for
    years became a B006 "on new code" (``_pending_tasks: Set[Future] = set()`` a RUF012,
    ``timeout: Optional[float]`` in an async function an ASYNC109). The team merged them
    long ago; the change did not write them. The same rule with the same message on a
    removed line of the hunk (and, for bandit's rules, on the same code) is the old
    remark; one removed line's remark makes one added line's old, the line most like it.
    A finding is old when every diagnostic behind it is (a second mutable default added
    to the line is new).
    """
    by_remark: dict[_Remark, list[tuple[tuple[str, int, str], str]]] = {}
    for key, remarks in added_has.items():
        for found in remarks:
            if found is not None and found[0] in removed_had:
                by_remark.setdefault(found[0], []).append((key, found[1]))
    excused: Counter[tuple[str, int, str]] = Counter()
    for remark, now in by_remark.items():
        before = removed_had[remark]

        def likeness(pair: tuple[tuple[str, int, str], str], before: list[str] = before) -> float:
            return max(difflib.SequenceMatcher(None, pair[1], b).ratio() for b in before)

        excused.update(key for key, _line in sorted(now, key=likeness, reverse=True)[: len(before)])
    return {key for key, count in excused.items() if count == len(added_has[key])}


def _donors(files: Mapping[str, str], diff: DiffModel) -> dict[str, tuple[str, FileChange]]:
    """The Python files the change only took lines from, each as it was: the deleted
    ones (their removed lines) and those of ``files`` without an added line."""
    donors: dict[str, tuple[str, FileChange]] = {}
    for entry in diff.files:
        if (
            entry.skipped
            or entry.added
            or not entry.removed
            or not entry.path.endswith(PYTHON_SUFFIXES)
            or not _safe_relative(entry.path)
        ):
            continue
        if entry.status == "removed":
            donors[entry.path] = ("".join(f"{line}\n" for line in entry.removed.values()), entry)
        elif entry.path in files and (was := text_before(files[entry.path], entry)) is not None:
            donors[entry.path] = (was, entry)
    return donors


def _moved_remarks(
    added_has: Mapping[tuple[str, int, str], list[tuple[_Remark, str] | None]],
    removed_had: Mapping[_Remark, list[str]],
    old: Collection[tuple[str, int, str]],
) -> set[tuple[str, int, str]]:
    """The findings on lines the change moved: the same rule with the same message on
    the same code (see _moved_key) that a removed line of any file already had.

    uncertainties 3.2.3 split ``core.py`` and moved its operators into a new ``ops.py``;
    the ``eval`` building each derivative and a ``raise`` without ``from`` came along as
    they were, and every remark on them was "new" in a file that had no past. One removed
    line makes one added line old, as in :func:`_old_remarks`.
    """
    moved_out: Counter[tuple[str, str, str, str]] = Counter()
    for remark, lines in removed_had.items():
        moved_out.update(_moved_key(remark, line) for line in lines)
    moved: set[tuple[str, int, str]] = set()
    for key in sorted(added_has):
        remarks = added_has[key]
        if key in old or any(found is None for found in remarks):
            continue
        wanted = Counter(_moved_key(*found) for found in remarks if found is not None)
        if all(moved_out[remark] >= count for remark, count in wanted.items()):
            moved_out.subtract(wanted)
            moved.add(key)
    return moved


_CALL_WITH_ARGUMENTS = re.compile(r"[\w.]+\(.+\)", re.DOTALL)


def _moved_key(remark: _Remark, line: str) -> tuple[str, str, str, str]:
    """What a moved remark is matched on: its rule, message and flagged code, and its
    line unless the flagged code is a whole call with its arguments, which says enough
    on its own. Moved code is often reformatted on the way (uncertainties' moved lines
    went through black: ``derivatives ]`` lost its space, ``'complex'`` became
    ``"complex"``), so spacing and the kind of quotes do not count."""
    _path, _place, code, message, flagged = remark
    if _CALL_WITH_ARGUMENTS.fullmatch(flagged):
        return code, message, flagged, ""
    return code, message, flagged, "".join(line.split()).replace("'", '"')


def _undefined_here_before(finding: Finding, used: Collection[tuple[str, str]]) -> bool:
    """Whether ``finding`` is an undefined name that the lines of its file the PR left
    alone already use: code the team has merged and runs, so something defines it that
    ruff cannot see (IPython's tests use an ``ip`` their test harness puts in builtins;
    star imports of a module ruff was not given; names a plugin injects)."""
    name = _undefined_name(finding)
    return name is not None and (finding.path, name) in used


def _syntax_needs(message: str) -> int | None:
    """The Python 3 minor a syntax diagnostic says its syntax needs, if it says so."""
    match = _ADDED_IN.search(message)
    return int(match.group(1)) if match else None


def _no_older_than_the_file(finding: Finding, compiles_from: Mapping[str, int]) -> bool:
    """Whether ``finding`` is newer syntax that the rest of its file already outdoes.

    A module is compiled whole: one ``match`` statement already merged makes the file a
    SyntaxError before 3.10, so a new walrus in it shuts out no Python that could import
    it before (the project's metadata, often its classifiers, is older than its code)."""
    if finding.pattern != "ruff:unsupported-syntax":
        return False
    needs = _syntax_needs(finding.message)
    return needs is not None and needs <= compiles_from.get(finding.path, 0)


def _no_floor(path: str) -> int | None:
    return None


def _with_unchanged(finding: Finding, unchanged: Counter[tuple[str, str]]) -> Finding:
    """The finding with ``extra["unchanged_places"]``: how often its rule fires on the lines
    of its file that the PR did not touch, code the team has already merged. One file, not
    all the changed ones: a ``per-file-ignores`` entry then covers both or neither."""
    code = finding.pattern.removeprefix("ruff:")
    alike = next((family for family in _SPELLINGS if code in family), (code,))
    count = sum(unchanged.get((finding.path, c), 0) for c in alike)
    return replace(finding, extra={**finding.extra, UNCHANGED_PLACES: count})


# Rules that say one spelling two ways: an import of ``typing.Tuple`` (UP035) in a file
# whose untouched annotations say ``Dict[str, …]`` (UP006) is written like its file
# (argilla 2.8 added ``Tuple`` to such an import), as is ``Optional`` beside ``Union``.
_SPELLINGS = (("UP006", "UP035"), ("UP007", "UP045"))


def _safe_relative(path: str) -> bool:
    """A path from a PR may only name a file inside the temporary copy."""
    if not path or "\x00" in path or "\\" in path or path.startswith("/"):
        return False
    parts = path.split("/")
    return all(part not in ("", ".", "..") for part in parts)


def ruff_command() -> list[str]:
    """The ruff of this environment first, so the version is the one Kaizen was tested with."""
    beside = Path(sys.executable).parent / "ruff"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("ruff")
    if found:
        return [found]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    raise RuffUnavailable(
        "ruff is not installed: no ruff next to the Python interpreter, none on PATH and "
        "no ruff module (pip install ruff)"
    )


def _run(args: list[str], cwd: Path, timeout_s: float) -> list[dict[str, Any]]:
    try:
        # A fixed program; file names come after "--", never as options.
        done = subprocess.run(
            args,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:  # run() has killed it
        raise RuffUnavailable(f"ruff did not finish within {timeout_s:g}s") from exc
    except OSError as exc:
        raise RuffUnavailable(f"ruff could not be started ({args[0]}): {exc}") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()[-2000:]
        raise RuffUnavailable(f"ruff failed with exit code {done.returncode}: {detail}")
    try:
        data = json.loads(done.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise RuffUnavailable(f"ruff's output is not JSON: {exc}") from exc
    if not isinstance(data, list):
        raise RuffUnavailable("ruff's JSON output is not a list of diagnostics")
    return [item for item in data if isinstance(item, dict)]


def _finding(
    path: str,
    text: str,
    entry: FileChange,
    item: Mapping[str, Any],
    python: DeclaredPython | None = None,
    in_tests: bool = False,
    collected_from: Callable[[str], int | None] = _no_floor,
) -> Finding | None:
    """One ruff diagnostic as a finding, or None when its row is not an added line.
    ``collected_from(path)`` is the oldest Python 3 minor pytest collects a test file on."""
    row, column = _row_col(item.get("location"))
    added = entry.added
    if row not in added:
        return None
    raw_code = str(item.get("code") or "")
    # Syntax errors have no rule code: null before ruff 0.12, "invalid-syntax" since.
    code = raw_code if _RULE_CODE.fullmatch(raw_code) else None
    message = str(item.get("message") or "").strip()
    if (
        (code == "PLW0127" and self_assigned_builtin(message, frozenset(NEWER_BUILTINS)))
        or (code == "S610" and not_djangos_extra(text, row))
        or (code in ("B015", "B018") and raises_on_purpose(text, row))
        or (code == "B015" and an_operator_dsl(text, row))
        or (code == "F821" and a_literal_value(text, row, column))
        # the debugger's import: a call that stops in it is a T100 of its own, and a module
        # that uses pdb otherwise (asyncclick's CliRunner patches ``pdb.Pdb.__init__``)
        # stops nothing
        or (code == "T100" and message.startswith("Import for"))
        or (code == "B018" and reads_a_property(text, row, in_tests))
        or (code == "PLE0704" and reraises_a_handled_exception(text, row))
        or (code == "LOG004" and logs_a_handled_exception(text, row))
        or (code == "F401" and in_tests and skips_without_it(text, row))
        or (code in ("S102", "S307") and runs_code_written_here(text, row))
        or (code == "B007" and _loop_variable_kept(text, row, message))
        or (code == "F821" and _defined_elsewhere(text, row, message, python))
        or (code in CREDENTIAL_CODES and _names_no_secret(text, row, column, message))
        or (code in CREDENTIAL_CODES and _only_placeholders(text, row, column, message))
        or (code == "S105" and compared_with_many(text, row, column))
        or (code == "RUF012" and in_a_meta_class(text, row))
        or (code == "RUF012" and said_to_be_shared(text, row))
        or (code == "RUF012" and named_as_a_shared_store(text, row))
        or (code is not None and code.startswith("DTZ") and said_to_be_naive(text, row))
        or (code in ("DTZ001", "DTZ005", "DTZ006") and made_aware_later(text, row, column))
        or (code == "F401" and in_type_comments(text, message))
        or (code in ("RUF001", "RUF002", "RUF003") and in_its_own_script(text, row, message))
        or (code in ("RUF002", "RUF003") and a_symbol_in_prose(message))
        or (code == "S310" and opens_web_addresses_only(text, row))
        or (code == "RUF063" and falls_back_from_get_annotations(text, row))
        or (code == "PLE0604" and exports_by_their_names(text, row))
        or (code == "RET503" and ends_waiting_forever(text, row))
        or (code == "PLE0605" and copies_another_all(text, row))
        or (code == "B904" and reraises_an_outer_exception(text, row))
        or (code in ("YTT203", "YTT204") and major_checked_too(text, row))
        or (
            code in ("B009", "B010")
            and (said_to_dodge_a_type_checker(text, row) or reached_only_by_name(text, row))
        )
        or (code in _CHARACTER_CODES and names_the_character(text, row, message))
        or (code == "F722" and in_a_literal_type(text, row, column))
        or (code == "F401" and reexported_by_its_package(path, message))
        or (code == "F811" and harmless_redefinition(text, row, message))
        or (code == "F811" and in_a_namespace_class(text, row))
        or (code == "F811" and registered_like_the_rest(text, row, message, added))
        or (code == "PLW1510" and return_code_read(text, row))
        or (code == "S604" and names_a_shell(text, row))
        or (code == "SIM118" and changes_what_it_iterates(text, row))
        or (code in ("SIM201", "SIM202") and said_why_not_ne(text, row))
        or (code == "RUF043" and only_anchored(text, row, column))
        or (code == "PLE1300" and formats_with_its_own_spec(text, row, column, in_tests))
        or (code == "PLR0124" and tests_for_nan(text, row, message))
        or (code == "S704" and escapes_every_value(text, row))
        or (
            code in OPERATOR_TESTS
            and in_tests
            and (in_an_assert(text, row) or result_thrown_away(text, row))
        )
        or (
            code == "SIM300"
            and (
                a_local_variable_first(text, row, column)
                or a_range_bound(text, row, column)
                or the_subject_of_its_function(text, row, column)
            )
        )
        or (
            code in ("E711", "E712")
            and (
                compares_a_comparison(text, row, column) or compared_elementwise(text, row, column)
            )
        )
        or (code == "DTZ901" and reads_a_calendar_field(text, row, column))
        or (code == "SIM115" and keeps_the_file_open(text, row, column))
        or (code == "SIM115" and entered_in_a_stack(text, row, column))
        or (code == "S301" and loads_what_it_pickled(text, row))
        or (
            code == "B904"
            and (raises_a_usage_message(text, row) or raised_where_expected(text, row))
        )
        or (code == "RUF009" and a_field_specifier(text, row, column))
        or (code in ("UP026", "UP035") and guarded_by_import_error(text, row))
        or (code is not None and in_the_librarys_own_package(path, code))
        or (code == "S608" and built_from_constants(text, row, column))
        or (code == "S608" and only_a_message(text, row, column))
        or (code == "PLE1205" and formats_with_braces(text, row, column))
        or (code == "B023" and _run_in_its_iteration(text, row, in_tests))
        or (code == "B905" and lengths_checked_equal(text, row, column))
        or (code == "PLW0108" and among_lambdas(text, row, column))
        or (code == "RET501" and only_returns_none(text, row))
        or (code == "SIM103" and the_last_of_several_cases(text, row))
        or (code == "B006" and shared_on_purpose(text, row))
        or (code == "RUF001" and a_symbol_in_a_sentence(text, row, message))
        # the minus sign (U+2212) comes from no keyboard slip or autocorrect, only on
        # purpose: geopandas' tests expect matplotlib's tick labels, which draw it
        or (code == "RUF001" and "(MINUS SIGN)" in message)
        or (code == "B018" and is_example_path(path) and stands_at_module_level(text, row))
        # a test polls for what the code it tests does (asyncpg's ``while not
        # con.is_closed(): await asyncio.sleep(…)``): that code sets no Event to wait on
        or (code == "ASYNC110" and in_tests)
        # a stub copies the signatures of the API it describes (bokeh's playwright typings)
        or (code == "ASYNC109" and path.endswith(".pyi"))
        # stacklevel points a user at their own line; a test's warning is for the test
        # to catch (langgraph's tests check what a filter lets through)
        or (code == "B028" and in_tests)
        or (code == "B020" and counts_on_from_itself(text, row))
        or (code in WRONG_RETURN_TYPES and in_tests and in_a_local_class(text, row))
        or (code == "S108" and a_path_in_a_container(text, row, column))
        or (code == "S104" and compared_not_bound(text, row, column))
        or (code == "B008" and _makes_a_sentinel(message))
        or (code == "S103" and _only_the_owner_writes(message))
        or (code == "SIM112" and _spelled_in_mixed_case(message))
        or (code in ("B008", "B039") and an_immutable_instance(text, row, column))
        or (code is not None and disabled_by_pylint(text, row, code))
        or (code is not None and silenced_by_nosec(text, row, code))
        or (code is not None and ignored_on_line(text, row, code, str(item.get("name") or "")))
        or (code is None and python is not None and python.python2 and written_for_python2(text))
        or (
            code == "UP036"
            and python is not None
            and compares_with_a_supported_python(text, row, python.minor)
        )
    ):
        return None  # see workers.review.false_alarms
    newer = _newer_builtin(message, python) if code == "F821" and python else None
    if newer is not None and runs_only_where_defined(text, row, column, newer[1]):
        return None  # a version check (or a caught NameError) keeps older Pythons out
    added_in = _ADDED_IN.search(message) if code is None else None
    needs = newer[1] if newer is not None else int(added_in.group(1)) if added_in else None
    if needs is not None and in_tests and (collected_from(path) or 0) >= needs:
        return None  # a conftest.py has pytest skip this file on the older versions
    if needs is not None and python is not None and (python.installs_from or 0) >= needs:
        return None  # pip installs the project on no Python this fails on
    if code is None and _VERSION_SYNTAX.search(message):
        # valid Python, but not on every version the project supports: a bug for the
        # users of the oldest, unless the declaration is out of date
        pattern, severity = "ruff:unsupported-syntax", "medium"
        if is_example_path(path):
            severity = "low"  # readers run an example on their own Python (pynmea2's)
        declared = f" (the oldest this repository supports: {python.source})" if python else ""
        title = f"**Unsupported syntax** {message}{declared}"
    elif code is None:
        pattern, severity = "ruff:syntax-error", "high"
        title = f"**Syntax error** {message}"
    elif code == "SIM114" and (copied := copied_branch(text, row)) is not None:
        # one arm copied from the other and half edited: merging them keeps the slip
        pattern, severity = "ruff:copied-branch", "medium"
        title = (
            f"**Copied branch?** This `elif` tests `{copied.instead}` the way line "
            f"{copied.first_line} tests `{copied.kept}`, but its body is the first "
            f"branch's word for word and still uses `{copied.kept}`. If it should use "
            f"`{copied.instead}` here, combining the branches (as SIM114 suggests) would "
            "keep the slip."
        )
        if copied.line in added:
            row = copied.line
        item = {key: value for key, value in item.items() if key != "fix"}
    elif newer is not None and python is not None:
        # a NameError on the older versions, and no version check around it that this can
        # read: a likely bug, not a certain one
        pattern, severity = "ruff:newer-builtin", "medium"
        title = (
            f"**Newer builtin** `{newer[0]}` is a builtin since Python 3.{newer[1]}, and "
            f"this repository supports {python.version} ({python.source}): there this line "
            "raises NameError, unless something keeps it from running there."
        )
    else:
        pattern, severity = f"ruff:{code}", rule_severity(code)
        title = f"**{code}** {message}"
        if code in CONSEQUENCES:
            title += f" {CONSEQUENCES[code]}"
        end_row, end_column = _row_col(item.get("end_location"))
        if (
            code == "ISC001"
            and end_row == row
            and (
                split_inside_a_sentence(text, row, column, end_column)
                or formatted_as_one(text, row, column)
                or joins_two_kinds(text, row, column, end_column)
                or one_value_over_lines(text, row, column)
                or splits_a_digest(text, row, column, end_column)
            )
        ):
            severity = "low"  # one text written in pieces: not a missing comma
        elif (in_tests or is_example_path(path)) and _minor_in_tests(code):
            severity = "low"  # bandit on example code: a password in a demo's settings
        elif _is_bandit(code) and is_build_script(path) and code not in BUILD_SCRIPT_RISKS:
            severity = "low"  # setup.py's eval of its own version line (mccabe)
        elif code == "F821" and (
            in_a_string(text, row, column) or in_a_lazy_annotation(text, row, column)
        ):
            # a forward reference ("Mapped[List['Page']]"), or any annotation under
            # ``from __future__ import annotations``: nothing looks it up until something
            # asks for the hints, and SQLAlchemy's registry resolves it by name
            severity = "low"
        elif code == "RUF012" and mutated_nowhere_in_the_file(text, row):
            severity = "low"  # declarative data: pygments' aliases, arrow's locale tables
        elif code == "S324" and a_digest_cut_short(text, row):
            severity = "low"  # a cache file's name from a few characters of md5
        elif code == "S324" and hashes_for_no_security(text, row):
            severity = "medium"  # a fingerprint: xhtml2pdf's font files told apart
        elif code == "F811" and imports_the_same_again(text, row, message):
            severity = "low"  # ``import re`` twice
        elif code == "S102" and runs_a_file_the_user_names(text, row):
            severity = "low"  # a CLI running the script its user names (diagrams)
        elif code == "B006" and default_only_read(text, row):
            severity = "low"  # a shared default nothing changes
        elif code == "S202" and filters_where_python_can(text, row):
            severity = "low"  # the fallback where ``filter=`` is missing
        elif code == "PLR1704" and (
            rebinds_from_itself(text, row, message)
            or fills_in_a_missing_argument(text, row, message)
        ):
            severity = "low"  # the argument resolved to the value to use
        elif code == "B007" and (
            repeats_a_number_of_times(text, row)
            or counts_its_items(text, row)
            or unpacked_beside_used_names(text, row, column)
        ):
            severity = "low"  # for _ in range(n): the count is the point
        elif code == "SIM115" and (
            in_the_main_block(text, row)
            or is_build_script(path)
            or closed_in_a_finally(text, row, column)
        ):
            # a script's one run, or setup.py's ``open("README.md").read()``: its exit
            # closes the file
            severity = "low"
        elif code == "S506" and loads_with_its_own_loader(text, row):
            severity = "low"  # a Loader ruff cannot see into: omegaconf's is a BaseLoader
        elif code == "RET503" and returns_when_there(text, row):
            severity = "low"  # ``if x is not None: return x()``: None when there is none
        elif code == "PLW1508" and converted_at_once(text, row, column):
            severity = "low"  # int(os.getenv("N", 10)): either way an int
    parts = [title]
    fix = item.get("fix") if isinstance(item.get("fix"), Mapping) else None
    fix_title = str(fix.get("message") or "").strip() if fix else ""
    if fix_title:
        parts.append(f"Fix: {fix_title}")
    url = str(item.get("url") or "")
    if url and code:
        name = str(item.get("name") or "") or url.rstrip("/").rsplit("/", 1)[-1]
        if _RULE_NAME.fullmatch(name):
            parts.append(f"[{name}](https://docs.astral.sh/ruff/rules/{name}/)")
    line, start_line, suggestion = row, None, None
    span = _suggestion(text, entry, row, fix) if fix else None
    if span is not None:
        start, end, suggestion = span
        line, start_line = end, (start if start < end else None)
    return Finding(
        path=path,
        line=line,
        side="RIGHT",
        pattern=pattern,
        severity=severity,
        message="\n\n".join(parts),
        source="ruff",
        # The diagnostic's own line, even when a suggestion stretches the anchor over
        # several: that is the code the remark is about, and it keeps fingerprints stable.
        code=added[row].rstrip("\r\n"),
        suggestion=suggestion,
        start_line=start_line,
    )


def _defined_elsewhere(text: str, row: int, message: str, python: DeclaredPython | None) -> bool:
    """An "undefined" name that a Python the project supports has as a builtin, one in
    a module that defines names as it runs (see workers.review.false_alarms), or one a
    class body reads from the namespace its metaclass makes (workers.review.class_namespaces)."""
    match = _UNDEFINED_NAME.search(message)
    if match is None:
        return False
    if python is not None and python.python2 and match.group(1) in PYTHON2_BUILTINS:
        return True
    return defines_names_at_run_time(text) or read_from_its_namespace(text, row, match.group(1))


_B008_CALL = re.compile(r"function call `([\w.]+)`")
# Classes whose one instance in a default is a marker the function tells apart by its
# type or identity (librosa's ``hop_length=Deprecated()``): made once on purpose.
_SENTINELS = frozenset(
    {"deprecated", "missing", "unset", "notset", "sentinel", "undefined", "nodefault"}
    | {"notgiven", "omitted", "unspecified", "nothing"}
)


_ENV_NAME = re.compile(r"instead of `([^`]+)`")


def _spelled_in_mixed_case(message: str) -> bool:
    """Whether SIM112's variable is written in mixed case (``ConEmuANSI``): the name
    its owner gave it, typed with care; capitalized it is another variable on Linux."""
    found = _ENV_NAME.search(message)
    name = found.group(1) if found else ""
    return any(c.isupper() for c in name) and any(c.islower() for c in name)


_MASK = re.compile(r"mask `(0o[0-7]+|\d+)`")
_OTHERS_WRITE = 0o022


def _only_the_owner_writes(message: str) -> bool:
    """Whether S103's mask lets nobody but the owner write: ``0o755``, the mode of every
    installed program and folder (xonsh's and pyinstaller's tests make a script
    executable). Bandit flags any group execute bit; the danger is a file others can
    change."""
    found = _MASK.search(message)
    if found is None:
        return False
    mask = int(found.group(1), 0)
    return mask & _OTHERS_WRITE == 0


def _makes_a_sentinel(message: str) -> bool:
    """Whether B008's call in a default makes a marker object (see ``_SENTINELS``)."""
    found = _B008_CALL.search(message)
    if found is None:
        return False
    name = found.group(1).rsplit(".", 1)[-1]
    return name.lstrip("_").replace("_", "").lower() in _SENTINELS


def _credential_values(text: str, row: int, column: int, message: str) -> list[str]:
    """The value a hardcoded-password rule is about: the string literal ruff points at
    (S105, S107), the named argument's (S106: great_expectations passes
    ``slack_token="${token}"`` beside ``name="slack"``), else every string on the row."""
    here = string_at(text, row, column)
    if here is not None:
        return [here]
    match = _PASSWORD_NAME.search(message)
    return (keyword_strings(text, row, match.group(1)) if match else []) or strings_on(text, row)


def _only_placeholders(text: str, row: int, column: int, message: str) -> bool:
    """Ruff's hardcoded-password rules on a value that is a placeholder
    (``SECRET_KEY = "secret"`` in an example app) or a token nothing signed, as the secret
    scanner reads values; or a code of a character or two: asyncssh compares a config
    ``token`` with ``"u"``, the letter of its ``%u`` substitution; or the user name the
    same call gives (a test account's, see ``_USER_ARGUMENTS``)."""
    values = _credential_values(text, row, column, message)
    users = {v for name in _USER_ARGUMENTS for v in keyword_strings(text, row, name)}
    return bool(values) and all(
        len(v) <= 2 or is_placeholder(v) or is_unsigned_jwt(v) or v in users for v in values
    )


# A password the same call gives as the user name (django-cms' ``client.login(
# username="editor", password="editor")``): a test account named what it is, as guest:guest.
_USER_ARGUMENTS = ("username", "user", "login", "user_name")


def _names_no_secret(text: str, row: int, column: int, message: str) -> bool:
    """Ruff's hardcoded-password rules on a name that, read word by word as the secret
    scanner reads names, does not say it holds a secret (``token_placement``), or whose
    value only spells the name out."""
    match = _PASSWORD_NAME.search(message)
    if match is None:
        return False
    name = match.group(1)
    values = _credential_values(text, row, column, message)
    return not names_a_secret(name) or (
        bool(values) and all(spells_its_name(name, v) for v in values)
    )


def _run_in_its_iteration(text: str, row: int, in_tests: bool) -> bool:
    """B023 on a function only called in the iteration that made it (or returned from
    it, which ends the loop), or in test code also handed to helpers that run it then
    (see workers.review.loop_closures)."""
    use = used_in_its_iteration(text, row)
    return use in ("called", "returned") or (use == "passed" and in_tests)


def _loop_variable_kept(text: str, row: int, message: str) -> bool:
    match = _LOOP_VARIABLE.search(message)
    return match is not None and loop_variable_read_after(text, row, match.group(1))


def _newer_builtin(message: str, python: DeclaredPython) -> tuple[str, int] | None:
    match = _UNDEFINED_NAME.search(message)
    added = NEWER_BUILTINS.get(match.group(1)) if match else None
    if match is None or added is None or python.minor >= added:
        return None
    return match.group(1), added


def _is_bandit(code: str) -> bool:
    letters = _LETTERS.match(code)
    return letters is not None and letters.group() == "S"


def _minor_in_tests(code: str) -> bool:
    """Bandit's rules (S), naive datetimes (DTZ), blocking calls in async functions
    (ASYNC), B011, RUF012, PLW1641, E721, SIM115, B033 and LOG015 in test or example
    code: minor remarks, whatever they are elsewhere.

    Test code runs on developers' machines and in CI, on inputs the tests write:
    requests unpickles its own objects, jinja2 and starlette build template environments
    without autoescape to test them, a test helper starts a shell. A test takes the
    local time for an expiry it checks a second later (redis-py), and an ``open`` in an
    async test blocks no one's requests. "``python -O`` strips this ``assert False``"
    (B011) holds for every assert in a test. A test class's list of cases
    (``invalid_names = [...]``, Django's tests) is data each test reads, not state its
    instances share, and a helper class with ``__eq__`` and no ``__hash__`` (babel's) is
    compared, never put in a set. ``assert type(a) == type(b)`` (justext's tests) asks
    for the exact type, as ``is`` would; the subclass ``isinstance`` lets through is what
    such a test is there to catch. A file a test opens without ``with`` (line_profiler's
    ``ast.parse(open(path).read())``) is closed when the test process ends, if not
    sooner. Worth a word, not an "important" label ahead of the
    likely bugs in the code that ships.
    """
    letters = _LETTERS.match(code)
    return (letters is not None and letters.group() in _MINOR_IN_TESTS) or code in (
        "B011",
        "RUF012",
        "PLW1641",
        "E721",
        "SIM115",
        # a set literal that repeats an item: in a test, to see it kept once (pottery's
        # ``{'apple', 'orange', 'apple', …}``, the tutorial's basket)
        "B033",
        # the root logger: a demo or a test has no module logger to configure apart
        # (flasgger's examples log their warnings so)
        "LOG015",
    )


_MINOR_IN_TESTS = frozenset({"S", "DTZ", "ASYNC"})
# Rules about one character: look-alikes (RUF001-3) and invisible ones (PLE2510-5)
_CHARACTER_CODES = frozenset(
    {"RUF001", "RUF002", "RUF003", "PLE2510", "PLE2512", "PLE2513", "PLE2514", "PLE2515"}
)
# a special method returning the wrong type: __len__, __bool__, __index__, __str__,
# __bytes__, __hash__
WRONG_RETURN_TYPES = frozenset({"PLE0303", "PLE0304", "PLE0305", "PLE0307", "PLE0308", "PLE0309"})
# Bandit's rules that still weigh in a build script (see workers.code_paths): what it
# reads is the project's own, so eval, pickle, a shell or a temporary path there add no
# risk; but a credential in setup.py ships in every sdist, and a download without
# verified TLS or over plain FTP or telnet lets the network write into the build.
BUILD_SCRIPT_RISKS = frozenset(
    {"S105", "S106", "S107", "S113", "S310", "S312", "S321", "S323"}
    | {"S501", "S502", "S503", "S504", "S507"}
)
# Calls in a parameter's default that declare the parameter to a framework, which reads
# the object they return and never mutates it: B008 ("function call in argument
# defaults") on each was a "warning" on every FastAPI endpoint (``db = Depends(get_db)``)
# and taskiq task (taskiq 0.13's ``progress = Depends()``). Ruff knows typer's and
# pydantic's on its own.
_FASTAPI_PARAMS = ("Depends", "Security", "Query", "Path", "Body", "Cookie", "Header", "Form")
DEPENDENCY_MARKERS = (
    *(f"fastapi.{name}" for name in (*_FASTAPI_PARAMS, "File")),
    "fastapi.params.Depends",
    "fastapi.params.Security",
    "fast_depends.Depends",
    "taskiq_dependencies.Depends",
    "taskiq.TaskiqDepends",
    # django-ninja's, as FastAPI's (wagtail 8's ``filters: PageFilterSchema = Query(...)``)
    *(f"ninja.{name}" for name in ("Query", "Path", "Body", "Cookie", "Header", "Form", "File")),
    *(f"ninja.params.{name}" for name in ("Query", "Path", "Body", "Form", "File")),
)
_MARKERS = json.dumps(list(DEPENDENCY_MARKERS))  # a TOML array, as ruff's --config takes
# Advice whose rewrite breaks Python 2, which ruff cannot lint for: every pyupgrade rule,
# ``raise … from err`` (B904; pyserial 3.5 got two), ``[*a, b]`` (RUF005) and
# ``contextlib.suppress`` (SIM105).
PYTHON3_ONLY_ADVICE = ("UP", "B904", "RUF005", "SIM105")
# Rewrites of a comparison or a concatenation, which an ``assert`` in a test means as
# written (see workers.review.false_alarms): bitstring 5's ``[True] + BitArray('0b1')``
# tests ``__radd__``, and ``[True, *BitArray('0b1')]`` (RUF005) would be a list. So does
# a test that runs one and throws the result away (pikepdf's ``_ = d == d`` on threads).
OPERATOR_TESTS = frozenset({"SIM201", "SIM202", "SIM208", "SIM300", "PLR0124", "RUF005"})


def rule_severity(code: str) -> str:
    """Severity of a ruff rule code: the entry for its longest listed prefix.

    A prefix never cuts through the letters, so "S" (bandit) does not claim "SIM118".
    """
    letters = _LETTERS.match(code)
    shortest = letters.end() if letters else 1
    for length in range(len(code), shortest - 1, -1):
        severity = _SEVERITY_BY_PREFIX.get(code[:length])
        if severity is not None:
            return severity
    return _DEFAULT_SEVERITY


def _row_col(location: object) -> tuple[int, int]:
    if not isinstance(location, Mapping):
        return (0, 0)
    try:
        return (int(location.get("row") or 0), int(location.get("column") or 0))
    except (TypeError, ValueError):
        return (0, 0)


def _suggestion(
    text: str, entry: FileChange, row: int, fix: Mapping[str, Any]
) -> tuple[int, int, str] | None:
    """``(start, end, replacement)`` for a safe fix confined to added lines around ``row``.

    The replacement is the text of lines ``start..end`` after the fix, without the final
    line break; ``""`` means "delete these lines", which is what GitHub makes of an empty
    suggestion. Anything this cannot express exactly (an unsafe fix, an edit on a context
    line or in another hunk, a fix that would leave a blank line) gives None: a wrong
    one-click suggestion is worse than none.
    """
    if str(fix.get("applicability") or "").lower() != "safe":
        return None
    raw_edits = fix.get("edits")
    if not isinstance(raw_edits, list) or not raw_edits:
        return None
    edits = []
    for raw in raw_edits:
        if not isinstance(raw, Mapping):
            return None
        start, end = _row_col(raw.get("location")), _row_col(raw.get("end_location"))
        if min(*start, *end) < 1 or end < start:
            return None
        edits.append(_Edit(start, end, str(raw.get("content") or "")))

    starts = [0]  # offset of each line's first character; one more for the end of text
    starts += [m.end() for m in _LINE_BREAK.finditer(text)]
    if starts[-1] != len(text):
        starts.append(len(text))
    last_row = len(starts) - 1

    def offset(row_col: tuple[int, int]) -> int | None:
        row_, col = row_col
        if row_ > last_row:  # the end of a text without a final newline, or past it
            return len(text) if row_ == last_row + 1 and col == 1 else None
        position = starts[row_ - 1] + col - 1
        return position if position <= starts[row_] else None

    first = min(e.start[0] for e in edits)
    # An edit ending at column 1 stops before that row (it took the previous line break).
    last = max(e.end[0] - 1 if e.end[1] == 1 and e.end[0] > e.start[0] else e.end[0] for e in edits)
    new_text = text
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        begin, stop = offset(edit.start), offset(edit.end)
        if begin is None or stop is None:
            return None
        new_text = new_text[:begin] + edit.content + new_text[stop:]

    while True:
        if not first <= row <= last or last > last_row:
            return None
        head, tail = starts[first - 1], len(text) - starts[last]
        replacement = new_text[head : len(new_text) - tail]
        original = text[head : starts[last]]
        if (
            replacement
            and original.endswith(("\n", "\r"))
            and not replacement.endswith(("\n", "\r"))
        ):
            last += 1  # the fix joins the next line onto these: include it
            continue
        break

    added = entry.added
    if any(r not in added for r in range(first, last + 1)):
        return None
    if first < last and not entry.can_comment("RIGHT", last, first):
        return None
    if replacement == original:
        return None
    suggestion = _strip_break(replacement)
    if suggestion and all(_ONLY_NOQA.match(line) for line in suggestion.splitlines()):
        suggestion = ""  # a noqa comment the fix left behind silences nothing: delete it
    elif replacement and not suggestion.strip():
        return None  # the lines would become blank ones; "" would delete them instead
    return first, last, suggestion


# a line that is nothing but a noqa comment (pymoo's ``pass`` followed by one for E701,
# once PIE790's fix took the ``pass``)
_ONLY_NOQA = re.compile(r"^\s*#\s*noqa\b.*$", re.IGNORECASE)


def _strip_break(text: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if text.endswith(ending):
            return text[: -len(ending)]
    return text
