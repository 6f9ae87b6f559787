"""The files a repository's own linters never look at, so Kaizen's ruff pass skips them too.

A formatter's or linter's test cases (black's ``tests/data/cases/*.py``: code written to
be odd on purpose), vendored or generated modules: a team excludes them from its lint in
its ruff config, its flake8 config or its pre-commit config (or keeps black off them),
and never sees a remark on them. Kaizen did: on black's 24.1 → 24.8 changes all 10
comments it would have posted were F811/F821 in ``tests/data/``. Each such comment is
noise, and worse, the 👎 it earns teaches learning that undefined names are unwanted
everywhere.

Read as data, like :mod:`workers.review.ruff_team_config`: TOML, INI and YAML (safe
loader) parsers, and pre-commit's ``exclude`` regexes run by :mod:`regex` with a time
limit (a repository's regex may backtrack without end). Secrets are still scanned
everywhere: a key in a test folder is still a leaked key.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex
import yaml

from workers.review.repo_files import (
    MAX_FILE_CHARS,
    clean_glob,
    flake8_config,
    flake8_list,
    glob_variants,
    load_toml,
)
from workers.review.ruff_team_config import ruff_config

MAX_PATTERNS = 200
MAX_REGEXES = (
    20  # at most one REGEX_TIMEOUT_S each per review: a regex that times out once is dropped
)
MAX_PATTERN_CHARS = 500
REGEX_TIMEOUT_S = 0.05
# What ruff leaves out unless the config's own ``exclude`` replaces it: the defaults of
# the ruff Kaizen runs (``ruff check --show-settings``; a test compares them). Not
# ``build``, which older ruff versions had: pip's ``src/pip/_internal/operations/build``
# is source code.
RUFF_DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
PRE_COMMIT_FILE = ".pre-commit-config.yaml"
PYPROJECT = "pyproject.toml"
# pre-commit hooks whose exclusions say what the team lints
LINT_HOOKS = frozenset({"ruff", "ruff-check", "flake8", "pyflakes", "pylint"})


@dataclass(frozen=True)
class LintExcludes:
    """Globs (ruff, flake8) and regexes (pre-commit) of paths the team does not lint."""

    globs: tuple[str, ...] = ()
    regexes: tuple[regex.Pattern[str], ...] = ()
    sources: tuple[str, ...] = ()  # the files they come from, for the review's note
    # globs written with a folder (``./build``, ``tests/data``): from the root only
    rooted: frozenset[str] = frozenset()
    # black's: matched against "/" + the path, as black matches them
    rooted_regexes: tuple[regex.Pattern[str], ...] = ()
    _timed_out: set[int] = field(default_factory=set, compare=False, repr=False)

    def excludes(self, path: str) -> bool:
        """Whether ``path`` (from the repository root) is left out: it, or a folder it is
        in, matches a glob, or a regex finds a match in it (as pre-commit does). As ruff
        and flake8 match: a glob written with a folder in it (``./build``,
        ``tests/data/*.py``) from the root, a bare name (``build``, ``*_pb2.py``)
        anywhere in the tree."""
        parts = path.split("/")
        for end in range(len(parts), 0, -1):
            here, name = "/".join(parts[:end]), parts[end - 1]
            for glob in self.globs:
                if fnmatch.fnmatchcase(here, glob) or (
                    glob not in self.rooted and fnmatch.fnmatchcase(name, glob)
                ):
                    return True
        return any(self._search(i, pattern, path) for i, pattern in enumerate(self.regexes)) or any(
            self._search(-1 - i, pattern, "/" + path)
            for i, pattern in enumerate(self.rooted_regexes)
        )

    def _search(self, index: int, pattern: regex.Pattern[str], path: str) -> bool:
        if index in self._timed_out:
            return False
        try:
            return pattern.search(path, timeout=REGEX_TIMEOUT_S) is not None
        except TimeoutError:
            # it excludes nothing, and is not tried again: 3,000 changed files would
            # otherwise cost a hostile regex's time limit 3,000 times
            self._timed_out.add(index)
            return False


def lint_excludes(file_text: Callable[[str], str | None]) -> LintExcludes:
    """Everything the repository's root lint configs exclude. Ruff's default excludes
    count whether or not the repository has a ruff config: they are what ``ruff check .``
    skips."""
    globs: list[Glob] = []
    sources: list[str] = []
    found = ruff_config(file_text)
    table: Mapping[str, Any] = found[1] if found else {}
    own = _globs(table.get("exclude"))
    defaults = [(g, False) for g in RUFF_DEFAULT_EXCLUDE]
    globs += own if isinstance(table.get("exclude"), list) else defaults
    lint = table.get("lint")
    extra = _globs(table.get("extend-exclude"))
    extra += _globs(lint.get("exclude") if isinstance(lint, Mapping) else None)
    globs += extra
    if found and (own or extra):
        sources.append(found[0])
    flake8 = _flake8_excludes(file_text)
    if flake8 is not None:
        globs += flake8[1]
        sources.append(flake8[0])
    regexes = _pre_commit_excludes(file_text(PRE_COMMIT_FILE))
    if regexes:
        sources.append(PRE_COMMIT_FILE)
    black = _black_excludes(file_text(PYPROJECT))
    if black:
        sources.append(PYPROJECT)
    kept = tuple(dict.fromkeys(g for g, _ in globs))[:MAX_PATTERNS]
    rooted_globs = {g for g, from_root in globs if from_root and g in kept}
    # as ruff reads them: ``{a,b}`` alternatives, and ``**/`` matching no folder too
    variants = {g: glob_variants(g) for g in kept}
    matched = tuple(dict.fromkeys(v for g in kept for v in variants[g]))
    rooted = frozenset(v for g in rooted_globs for v in variants[g])
    return LintExcludes(
        matched,
        tuple(regexes[:MAX_REGEXES]),
        tuple(dict.fromkeys(sources)),
        rooted,
        rooted_regexes=tuple(black[:MAX_REGEXES]),
    )


Glob = tuple[str, bool]  # (cleaned glob, written with a folder in it: from the root only)


def _glob(raw: str) -> Glob | None:
    """``clean_glob`` drops a leading ``./``, so ``./build`` (pip: its top-level build
    folder) must be remembered as rooted or it would read as ``build`` anywhere."""
    cleaned = clean_glob(raw)
    return None if cleaned is None else (cleaned, "/" in raw.strip().rstrip("/"))


def _globs(values: object) -> list[Glob]:
    if not isinstance(values, list):
        return []
    cleaned = (_glob(v) for v in values[:MAX_PATTERNS] if isinstance(v, str))
    return [g for g in cleaned if g]


def _flake8_excludes(file_text: Callable[[str], str | None]) -> tuple[str, list[Glob]] | None:
    """flake8's ``exclude`` and ``extend-exclude`` (comma- or line-separated globs) from the
    first of its config files that has a ``[flake8]`` section."""
    found = flake8_config(file_text)
    if found is None:
        return None
    name, options = found
    globs: list[Glob] = []
    for key in ("exclude", "extend-exclude"):
        globs += [g for g in (_glob(p) for p in flake8_list(options.get(key, ""))) if g]
    return (name, globs) if globs else None


def _pre_commit_excludes(text: str | None) -> list[regex.Pattern[str]]:
    """pre-commit's top-level ``exclude`` and the ``exclude`` of its lint hooks."""
    if text is None or len(text) > MAX_FILE_CHARS:
        return []
    try:
        document = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        return []
    if not isinstance(document, Mapping):
        return []
    found = [document.get("exclude")]
    repos = document.get("repos")
    for repo in repos[:MAX_PATTERNS] if isinstance(repos, list) else []:
        hooks = repo.get("hooks") if isinstance(repo, Mapping) else None
        found += [
            hook.get("exclude")
            for hook in (hooks[:MAX_PATTERNS] if isinstance(hooks, list) else [])
            if isinstance(hook, Mapping) and hook.get("id") in LINT_HOOKS
        ]
    return _compiled(found)


def _black_excludes(text: str | None) -> list[regex.Pattern[str]]:
    """black's ``exclude``, ``extend-exclude`` and ``force-exclude`` from ``[tool.black]``:
    what the team keeps its formatter off is code written odd on purpose. flake8-bugbear
    keeps its checks' cases in ``tests/eval_files/`` (``force-exclude =
    '^/tests/eval_files/.*'``): 10 comments on them before, F821s and F811s on
    code that is there to be wrong. A regex written over several lines is verbose, as
    black reads it."""
    table = load_toml(text) if text is not None and len(text) <= MAX_FILE_CHARS else None
    tool = table.get("tool") if table else None
    black = tool.get("black") if isinstance(tool, Mapping) else None
    if not isinstance(black, Mapping):
        return []
    values = [black.get(key) for key in ("exclude", "extend-exclude", "force-exclude")]
    return _compiled(values, verbose_when_multiline=True)


def _compiled(
    values: Sequence[object], *, verbose_when_multiline: bool = False
) -> list[regex.Pattern[str]]:
    out = []
    for value in values:
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_PATTERN_CHARS:
            continue
        if value.strip() == "^$":
            continue  # pre-commit's own default: excludes nothing
        flags = regex.VERSION0
        if verbose_when_multiline and "\n" in value:
            flags |= regex.VERBOSE
        try:
            out.append(regex.compile(value, flags))
        except (regex.error, RecursionError, OverflowError):
            continue
    return out
