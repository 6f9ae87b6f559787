"""Failing tests that fail because of where they run, not because of the code.

Why: a fix is judged by making every failing test pass. In the offline sandbox some tests
of a real project fail whatever the code does - they import a dependency nothing
installed, or reach a host on the internet - and with them among the targets no patch
could ever succeed, however right. Such failures are set aside (not targets, never
"broken") and named in what Kaizen reports, so the team can add an ``install_command``.

Only unambiguous signs count: ``No module named 'x'`` for a top-level module the
repository does not have (an ImportError of its own modules is a bug to fix) and that is
not a misspelling of one of its own or the standard library's (``colections``,
``datetme``: a letter dropped or swapped, which no popular package's name is), or a
``NameError`` for a name that a file the failure passes through imports under ``try:``
... ``except ImportError`` (mccabe 0.7's test module imports hypothesmith and
hypothesis' ``settings`` so, and then decorates a test with ``@settings(...)`` at
import: without them the project's one test module does not load), and a host name that
cannot be resolved or a network that cannot be reached, and a fixture pytest cannot find
that no file of the repository defines (a plugin's: humanize's benchmarks take
pytest-codspeed's ``benchmark``), a locale the machine does not have (``locale.Error:
unsupported locale setting``: natsort's tests switch to ``de_DE.UTF-8`` and
``en_US.UTF-8`` in their fixtures; the sandbox has ``C.UTF-8``), and a program it does
not have, which ``subprocess`` could not start by its bare name (pycparser's tests run
``cpp``, the C preprocessor; a path or a file ``open`` could not find is not one). A
refused connection is not one of them: a test's own server on the loopback refusing is
as likely to be the bug.
"""

from __future__ import annotations

import ast
import difflib
import re
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from workers.sandbox.junit import TestResult

_NO_MODULE = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")
_NO_NETWORK = re.compile(
    r"Temporary failure in name resolution|Name or service not known"
    r"|nodename nor servname provided|NameResolutionError|getaddrinfo failed"
    r"|Network is unreachable|\[Errno -(?:2|3|5)\]|\[Errno 101\]"
)
_NO_FIXTURE = re.compile(r"fixture '(\w+)' not found")
_WORD = re.compile(r"[A-Za-z_]\w{2,}")
_NO_NAME = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_NOT_DEFINED = re.compile(r"NameError: name '(\w+)' is not defined")
_NO_LOCALE = re.compile(r"locale\.Error: unsupported locale setting")
# subprocess found no program of that bare name on PATH: pytest's long traceback ends
# the exception's lines with subprocess.py's location; a native one names _execute_child
_NO_SUCH_PROGRAM = r"FileNotFoundError: \[Errno 2\] No such file or directory: '([\w.+-]+)'"
_NO_PROGRAM = re.compile(
    rf"{_NO_SUCH_PROGRAM}\s+\S*subprocess\.py:\d+: FileNotFoundError"
    rf"|in _execute_child\n[\s\S]{{0,600}}?{_NO_SUCH_PROGRAM}"
)
# what a repository's own code may define a fixture as: a function, a fixture's
# ``name=``, or an assignment (``client = pytest.fixture(make_client)``)
_DEFINED = re.compile(
    r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)|\bname[ \t]*=[ \t]*['\"](\w+)['\"]|^[ \t]*(\w+)[ \t]*=",
    re.MULTILINE,
)
# difflib's ratio at which a missing module reads as a misspelling of an existing one:
# one dropped or swapped letter in a name of six or more letters. No name on a list of
# 200 popular packages is that close to (and no longer than) a standard module's.
_TYPO_SIMILARITY = 0.9
# How much of a failure's text is looked at: the end of a traceback holds the cause.
_TAIL_CHARS = 4000


def _misspelt(name: str, own_modules: Collection[str]) -> bool:
    """Whether ``name`` is one letter short of, or a swap away from, a module that exists:
    a typo in an import is a bug the code can be fixed for. Longer names (``urllib3``,
    ``ujson``, ``httpx``) are the packages built on a standard module, not typos of it."""
    known = [*sys.stdlib_module_names, *own_modules]
    return any(
        len(name) <= len(other)
        for other in difflib.get_close_matches(name, known, n=3, cutoff=_TYPO_SIMILARITY)
        if other != name
    )


def repository_modules(paths: Iterable[str]) -> set[str]:
    """Top-level names the repository's own code can be imported as: each Python file's
    first folder or module name, and the same below ``src/``."""
    names: set[str] = set()
    for path in paths:
        parts = path.replace("\\", "/").split("/")
        if parts and parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        head = parts[0]
        names.add(head[:-3] if len(parts) == 1 and head.endswith(".py") else head)
    return names


def fixture_names(files: Mapping[str, str]) -> set[str]:
    """Every name the repository's Python files could define a fixture as (see
    :data:`_DEFINED`): more than the fixtures, which only makes a missing one rarer."""
    return {
        name
        for text in files.values()
        for match in _DEFINED.finditer(text)
        for name in match.groups()
        if name
    }


def optional_imports(files: Mapping[str, str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Path -> name -> the modules a ``try:`` imports up to the one that binds the name,
    for every ``try`` with an ``except ImportError`` (or ``ModuleNotFoundError``): if the
    name is not defined later, one of those did not import."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for path, text in files.items():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        names: dict[str, tuple[str, ...]] = {}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try) or not any(map(_catches_import, node.handlers)):
                continue
            modules: list[str] = []
            for statement in node.body:
                if isinstance(statement, ast.Import):
                    modules += [a.name.split(".")[0] for a in statement.names]
                    bound = [(a.asname or a.name).split(".")[0] for a in statement.names]
                elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
                    modules.append((statement.module or "").split(".")[0])
                    bound = [a.asname or a.name for a in statement.names]
                else:
                    continue
                for name in bound:
                    names.setdefault(name, tuple(dict.fromkeys(modules)))
        if names:
            found[path] = names
    return found


def _catches_import(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    kinds = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(
        isinstance(kind, ast.Name) and kind.id in ("ImportError", "ModuleNotFoundError")
        for kind in kinds
    )


def environment_cause(
    test: TestResult,
    own_modules: Collection[str],
    own_names: Collection[str] = frozenset(),
    optional: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
    identifiers: Collection[str] = frozenset(),
) -> str | None:
    """Why ``test`` fails whatever the code does, in a few words, or ``None``.
    ``own_names`` are the repository's :func:`fixture_names`, ``optional`` its
    :func:`optional_imports`, ``identifiers`` every word of its code (:func:`identifiers`)."""
    if test.outcome not in ("failed", "error"):
        return None
    text = f"{test.message}\n{test.traceback[-_TAIL_CHARS:]}"
    for match in _NO_MODULE.finditer(text):
        top = match.group(1).split(".")[0]
        if top and top not in own_modules and not _misspelt(top, own_modules):
            return f"missing dependency '{top}'"
    for match in _NO_NAME.finditer(text):
        name, top = match.group(1), match.group(2).split(".")[0]
        if _another_version_installed(name, top, own_modules, identifiers):
            return f"installed '{top}' has no '{name}' (another version)"
    undefined = _NOT_DEFINED.search(text)
    if undefined is not None and optional:
        missing = _optionally_imported(undefined.group(1), test, text, optional, own_modules)
        if missing:
            return "missing dependency " + " or ".join(f"'{m}'" for m in missing)
    if _NO_NETWORK.search(text):
        return "no network"
    if _NO_LOCALE.search(text):
        return "locale not installed"
    # the whole traceback: the failed start sits above what a wrapper raised from it
    program = _NO_PROGRAM.search(test.traceback) or _NO_PROGRAM.search(test.message)
    if program is not None:
        return f"missing program '{program.group(1) or program.group(2)}'"
    fixture = _NO_FIXTURE.search(text)
    if fixture is not None and fixture.group(1) not in own_names:
        return f"missing pytest plugin (fixture '{fixture.group(1)}')"
    return None


def identifiers(files: Mapping[str, str]) -> frozenset[str]:
    """Every identifier-like word of the repository's files."""
    return frozenset(word for text in files.values() for word in _WORD.findall(text))


def _another_version_installed(
    name: str, top: str, own_modules: Collection[str], identifiers: Collection[str]
) -> bool:
    """Whether ``from top import name`` failed because the installed ``top`` is not the
    version the code was written for: another project's module (the standard
    library's own changes, such as ``collections.Mapping`` gone in 3.10, are the
    code's to follow), and ``name`` no misspelling of a word the repository writes
    elsewhere (``Sesion`` beside ``Session``). asyncstdlib 3.14 imports
    ``get_annotations`` from typing_extensions, which Debian's older
    typing_extensions lacks."""
    if not top or top in own_modules or top in sys.stdlib_module_names:
        return False
    near = difflib.get_close_matches(name, list(identifiers), n=3, cutoff=_TYPO_SIMILARITY)
    return all(other == name for other in near)


def _optionally_imported(
    name: str,
    test: TestResult,
    text: str,
    optional: Mapping[str, Mapping[str, tuple[str, ...]]],
    own_modules: Collection[str],
) -> tuple[str, ...]:
    """The other projects' modules one of which did not import, if ``name`` is imported
    under ``try`` in the test's file or a file its report names; else nothing (a name
    defined nowhere near is a bug)."""
    test_file = test.nodeid.split("::", 1)[0]
    for path, names in optional.items():
        if name in names and (path == test_file or path in text):
            return tuple(m for m in names[name] if m and m not in own_modules)
    return ()


def environment_failures(
    tests: Iterable[TestResult],
    own_modules: Collection[str],
    own_names: Collection[str] = frozenset(),
    optional: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
    identifiers: Collection[str] = frozenset(),
) -> dict[str, str]:
    """Node id -> cause, for the failing tests the code cannot be blamed for."""
    found: dict[str, str] = {}
    for test in tests:
        cause = environment_cause(test, own_modules, own_names, optional, identifiers)
        if cause is not None:
            found[test.nodeid] = cause
    return found


def describe(failures: Mapping[str, str]) -> str:
    """``3 test(s) fail in the sandbox whatever the code does (no network: 2, missing
    dependency 'requests': 1)`` - for comments and PR bodies."""
    counts = Counter(failures.values())
    parts = ", ".join(f"{cause}: {n}" for cause, n in counts.most_common())
    return f"{len(failures)} test(s) fail in the sandbox whatever the code does ({parts})"
