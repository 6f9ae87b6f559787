"""Per-repository configuration: ``.github/kaizen.yml``.

Repositories tune Kaizen with a YAML file on their default branch. When a repository has
none, the owner's ``.github`` repository provides one for the whole organisation (the
Probot convention), and a file may start from another repository's file with
``_extends: <repo>`` or ``_extends: <owner>/<repo>`` (one level). The effective config is
the defaults deep-merged with the file: mappings merge key by key, lists and scalars
replace.

The file is written by anyone who can push to the repository, so it is untrusted input:

* A bad file must never stop Kaizen. Unknown keys, invalid values and YAML errors become
  one-line *problems* the bot can show to the user, and the affected key (or the whole
  file, for a syntax error) falls back to the default.
* A repository must never be able to point Kaizen at another endpoint or make it use or
  reveal a credential. Such settings exist only on the server; keys that look like them
  (see :func:`is_server_only_key`) are refused wherever they appear.

No I/O happens here: the caller supplies a :class:`ConfigSource`, which the GitHub client
implements by reading the default branch, and tests implement with a dict.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol, get_args, get_origin

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic import ValidationError as PydanticValidationError

from bot.commands import validate_pattern

__all__ = [
    "CONFIG_PATH",
    "DEFAULT_EXCLUDES",
    "MAX_CONFIG_BYTES",
    "CommandsConfig",
    "ConfigSource",
    "FixConfig",
    "LearningConfig",
    "LlmConfig",
    "LoadedConfig",
    "PathInstruction",
    "PathsConfig",
    "RepoConfig",
    "ReviewConfig",
    "RuffConfig",
    "SecretsConfig",
    "Severity",
    "deep_merge",
    "is_server_only_key",
    "load_repo_config",
]

CONFIG_PATH = ".github/kaizen.yml"
"""Where the config lives, in the repository itself or in the owner's ``.github`` repo."""

MAX_CONFIG_BYTES = 64 * 1024
"""Files larger than this are refused: a real config is a few hundred bytes, and the limit
bounds the work a hostile file can cause."""

_MAX_DEPTH = 16
_EXTENDS_KEY = "_extends"
_EXTENDS_RE = re.compile(r"^[A-Za-z0-9_.-]{1,100}(?:/[A-Za-z0-9_.-]{1,100})?$")

# --- Schema -------------------------------------------------------------------------

Severity = Literal["info", "low", "medium", "high", "critical"]
"""Finding severities, lowest first. ``review.min_severity`` drops findings below it."""


def _matching(regex: str, explanation: str) -> AfterValidator:
    """A validator that rejects strings not matching ``regex`` with a readable reason.

    Pydantic's own pattern error shows the regex, which means nothing to the person
    editing the YAML file.
    """
    compiled = re.compile(regex)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(explanation)
        return value

    return AfterValidator(check)


def _check_mute(pattern: str) -> str:
    """Validate a mute with the same rule as the ``/kaizen mute`` command."""
    problem = validate_pattern(pattern)
    if problem is not None:
        raise ValueError(problem)
    return pattern


_Glob = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    _matching(r"[^\x00-\x1f]+", "a glob must be a single line of text"),
]
_RuffSelector = Annotated[
    str,
    _matching(
        r"ALL|[A-Z]{1,4}[0-9]{0,4}", "a ruff rule selector looks like E501, B, PLR2004 or ALL"
    ),
]
_ModelName = Annotated[
    str,
    StringConstraints(max_length=100),
    _matching(
        r"[A-Za-z0-9][A-Za-z0-9._:-]*(?:/[A-Za-z0-9][A-Za-z0-9._:-]*)?",
        "a model must be a name such as gpt-4o-mini or org/model, not a URL",
    ),
]
# Run by the fix sandbox with `sh -c`; one line keeps it readable in logs and reports.
_ShellCommand = Annotated[
    str,
    StringConstraints(min_length=1, max_length=1000),
    _matching(r"[^\x00\r\n]+", "a command must be a single line (join steps with &&)"),
]
_MutePattern = Annotated[str, AfterValidator(_check_mute)]

DEFAULT_EXCLUDES: tuple[str, ...] = (
    "**/node_modules/**",
    "**/vendor/**",
    "**/dist/**",
    "**/*.min.js",
    "**/*.lock",
    "**/package-lock.json",
    "**/*.snap",
)
"""Generated or third-party files that are not worth reviewing by default."""


class _Section(BaseModel):
    """Base for every config section: immutable, and no keys beyond the declared ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class PathsConfig(_Section):
    """Which changed files are reviewed (glob patterns, ``**`` crosses directories)."""

    include: tuple[_Glob, ...] = Field(default=("**",), max_length=100)
    exclude: tuple[_Glob, ...] = Field(default=DEFAULT_EXCLUDES, max_length=100)


class PathInstruction(_Section):
    """Extra review guidance for files matching ``path``, passed to the LLM reviewer."""

    path: _Glob
    instructions: Annotated[str, StringConstraints(min_length=1, max_length=2000)]


class RuffConfig(_Section):
    """The ruff pass; empty ``select`` means Kaizen's bug-finding rule set, less what the
    repository's own ruff or flake8 config ignores (everywhere or per file)."""

    enabled: bool = Field(default=True, strict=True)
    select: tuple[_RuffSelector, ...] = Field(default=(), max_length=200)
    ignore: tuple[_RuffSelector, ...] = Field(default=(), max_length=200)


class SecretsConfig(_Section):
    """The leaked-credential scanner."""

    enabled: bool = Field(default=True, strict=True)


class LlmConfig(_Section):
    """The LLM reviewer. Endpoint and key are server settings; only a model name and
    budgets can be chosen here. ``model=None`` means the server's default model, and the
    server may still refuse names it does not allow."""

    enabled: bool = Field(default=True, strict=True)
    model: _ModelName | None = None
    max_tokens_per_pr: int = Field(default=50_000, ge=0, le=2_000_000, strict=True)
    max_tokens_per_day: int = Field(default=500_000, ge=0, le=50_000_000, strict=True)


class CriticConfig(_Section):
    """An LLM pass that predicts, from the team's similar past comments, whether each
    candidate will be acted on. Off by default: the learning bench cannot show it beats
    pattern scores plus neighbour votes without a real model. With ``enabled`` its scores
    are kept on every posted comment so they can be judged; with ``decide`` too, candidates
    scoring under ``threshold`` are held back (never security findings)."""

    enabled: bool = Field(default=False, strict=True)
    decide: bool = Field(default=False, strict=True)
    threshold: float = Field(default=0.3, ge=0.0, le=1.0)


class ReviewConfig(_Section):
    """Pull-request review."""

    enabled: bool = Field(default=True, strict=True)
    drafts: bool = Field(default=False, strict=True)
    incremental: bool = Field(default=True, strict=True)
    max_comments: int = Field(default=10, ge=0, le=100, strict=True)
    # Inline comments of one static-analysis rule in one review; its other places are
    # listed in the review body. Security findings (but for credentials in test code, often
    # keys made for the tests) and the LLM's (whose patterns are categories, not rules)
    # are never held back by it. 0: no limit.
    max_per_pattern: int = Field(default=2, ge=0, le=100, strict=True)
    # A static-analysis remark (not high, not security) whose rule the file already breaks
    # in at least this many places the PR did not touch is left out: that is how this
    # code is written, and saying it of the newest place is noise. In a file the PR adds,
    # the same holds when at least two of the unchanged modules beside it (and half of
    # those read, six at most) break the rule. Once the team has accepted the rule in
    # this repository the remark is made again. 0: off.
    convention_places: int = Field(default=3, ge=0, le=1000, strict=True)
    # Python files whose first lines say a tool wrote them (a Django migration's
    # "# Generated by Django", protobuf stubs, "@generated", "DO NOT EDIT") get no remarks;
    # the review body lists them. They are still scanned for leaked credentials.
    skip_generated: bool = Field(default=True, strict=True)
    min_severity: Severity = "low"
    paths: PathsConfig = PathsConfig()
    path_instructions: tuple[PathInstruction, ...] = Field(default=(), max_length=50)
    ruff: RuffConfig = RuffConfig()
    secrets: SecretsConfig = SecretsConfig()
    llm: LlmConfig = LlmConfig()
    critic: CriticConfig = CriticConfig()


class FixConfig(_Section):
    """``/kaizen fix``: attempts and limits for the sandboxed fixer.

    ``test_command`` of ``None`` means "detect pytest from the repository"; a plain pytest
    call (``.venv/bin/python -m pytest tests``, ``PYTHONPATH=lib pytest -k fast``) is run
    as pytest, so its tests are judged one by one; anything else runs through ``sh -c`` and
    only its exit code counts. ``install_command``, when set, runs once in the sandbox
    before the tests and must install into the workspace (a ``.venv`` the test command
    uses, ``pip install --target``): the sandbox's root is read-only. Network access
    during install is off unless the repository opts in; the tests never have it.
    """

    enabled: bool = Field(default=True, strict=True)
    max_attempts: int = Field(default=3, ge=1, le=10, strict=True)
    max_test_runs: int = Field(default=40, ge=1, le=500, strict=True)
    time_limit_s: int = Field(default=600, ge=30, le=3600, strict=True)
    test_command: _ShellCommand | None = None
    install_command: _ShellCommand | None = None
    allow_network_install: bool = Field(default=False, strict=True)


class LearningConfig(_Section):
    """Learning from feedback. The half-life of evidence is a server setting
    (``KAIZEN_LEARNING_HALF_LIFE_DAYS``): org and global scores are shared by many repos,
    so they cannot each decay at their own rate. Neighbour votes (this repo's near-identical
    past comments, fading with the same half-life) count only once ``min_evidence`` of them
    have been judged, and only where they were judged clearly unlike the pattern as a
    whole."""

    enabled: bool = Field(default=True, strict=True)
    min_evidence: int = Field(default=3, ge=1, le=1000, strict=True)


class CommandsConfig(_Section):
    """Comment commands (``/kaizen ...``)."""

    enabled: bool = Field(default=True, strict=True)


class RepoConfig(_Section):
    """The effective configuration of one repository. ``RepoConfig()`` is the defaults."""

    review: ReviewConfig = ReviewConfig()
    fix: FixConfig = FixConfig()
    learning: LearningConfig = LearningConfig()
    commands: CommandsConfig = CommandsConfig()
    mutes: tuple[_MutePattern, ...] = Field(default=(), max_length=200)


# --- Loading --------------------------------------------------------------------------


class ConfigSource(Protocol):
    """Reads a file from a repository's default branch."""

    def read_file(self, repo: str, path: str) -> str | None:
        """Text of ``path`` in ``repo`` (``owner/name``), or ``None`` if there is no such
        file or repository (or it is not readable). Other failures should raise."""
        ...


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """The result of :func:`load_repo_config`.

    Attributes:
        config: The effective config; always usable, whatever the file contained.
        problems: One line per thing that was ignored or replaced by a default, for
            showing to the repository's maintainers. Empty when the file was clean.
        source_path: ``owner/repo:.github/kaizen.yml`` of the file that was found (even if
            it could not be used; see ``problems``), or ``"defaults"`` when there is none.
        extends_path: The file named by ``_extends`` when it was read and merged.
    """

    config: RepoConfig
    problems: tuple[str, ...] = ()
    source_path: str = "defaults"
    extends_path: str | None = None


def load_repo_config(source: ConfigSource, owner: str, repo: str) -> LoadedConfig:
    """Load the effective config of ``owner/repo``.

    Looks for ``.github/kaizen.yml`` in the repository, then in ``owner/.github``; follows
    one ``_extends``; reports problems instead of failing. Exceptions raised by
    ``source`` propagate (a transient read error should be retried, not silently turned
    into defaults).
    """
    full_name = f"{owner}/{repo}"
    candidates = [full_name]
    if repo.lower() != ".github":
        candidates.append(f"{owner}/.github")
    for candidate in candidates:
        text = source.read_file(candidate, CONFIG_PATH)
        if text is not None:
            break
    else:
        return LoadedConfig(RepoConfig())

    origin = f"{candidate}:{CONFIG_PATH}"
    problems: list[str] = []
    data = _parse_file(text, origin, problems)
    if data is None:
        return LoadedConfig(RepoConfig(), _unique(problems), origin)

    base: dict[str, Any] = {}
    extends_path: str | None = None
    if _EXTENDS_KEY in data:
        target = _extends_target(data.pop(_EXTENDS_KEY), owner, candidate, problems)
        if target is not None:
            extends_origin = f"{target}:{CONFIG_PATH}"
            base_text = source.read_file(target, CONFIG_PATH)
            if base_text is None:
                problems.append(f"{_EXTENDS_KEY}: {extends_origin} not found; not extended")
            else:
                prefix = f"{extends_origin}: "
                base_problems: list[str] = []
                parsed = _parse_file(base_text, extends_origin, base_problems)
                problems.extend(base_problems)
                if parsed is not None:
                    if parsed.pop(_EXTENDS_KEY, None) is not None:
                        problems.append(
                            f"{prefix}{_EXTENDS_KEY} ignored: only one level of "
                            f"{_EXTENDS_KEY} is followed"
                        )
                    base = _sanitise(parsed, prefix, problems)
                    extends_path = extends_origin

    own = _sanitise(data, "", problems)
    config = _validate(deep_merge(base, own), problems)
    return LoadedConfig(config, _unique(problems), origin, extends_path)


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` on top of ``base``: mappings merge recursively, anything else replaces.

    Lists replace rather than concatenate so a repository can always shrink a list it
    inherited (e.g. ``paths.exclude``) instead of only growing it.
    """
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged


# --- Server-only keys ---------------------------------------------------------------

_SERVER_ONLY_WORDS: frozenset[str] = frozenset(
    {
        "url",
        "urls",
        "uri",
        "endpoint",
        "endpoints",
        "host",
        "hosts",
        "hostname",
        "port",
        "proxy",
        "dsn",
        "key",
        "keys",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "cert",
        "certificate",
        "webhook",
        "webhooks",
        "sandbox",
    }
)
_SERVER_ONLY_FRAGMENTS: tuple[str, ...] = (
    "url",
    "password",
    "passwd",
    "endpoint",
    "webhook",
    "apikey",
    "credential",
    "hostname",
)
_SERVER_ONLY_SUFFIXES: tuple[str, ...] = ("token", "secret", "key")
_CAMEL_BOUNDARY_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT_RE = re.compile(r"[^a-z0-9]+")


def is_server_only_key(name: str) -> bool:
    """Whether a key name looks like an endpoint, credential or backend setting.

    Such keys (``base_url``, ``api_key``, ``token``, ``webhook_secret``, ``redis_url``,
    ``qdrant_url``, ``github.api_url``, ``sandbox``, ``host``...) are refused at any depth
    of a repository file, whatever section they are in, because a repository must never
    redirect Kaizen or touch its credentials. The key is split into words (``snake``,
    ``kebab`` and ``camelCase``); it matches when a word is in the denylist, contains a
    fragment like ``url``/``password``, or ends in ``token``/``secret``/``key``. Plural
    words that name features, like ``secrets`` (the scanner) or ``max_tokens_per_pr``, are
    not matched; a unit test checks that no schema key is.
    """
    spaced = _CAMEL_BOUNDARY_RE.sub("_", name).lower()
    for word in _WORD_SPLIT_RE.split(spaced):
        if not word:
            continue
        if word in _SERVER_ONLY_WORDS:
            return True
        if any(fragment in word for fragment in _SERVER_ONLY_FRAGMENTS):
            return True
        if word.endswith(_SERVER_ONLY_SUFFIXES):
            return True
    return False


# --- Internals ----------------------------------------------------------------------


def _unique(problems: list[str]) -> tuple[str, ...]:
    """Problems in order, each once."""
    return tuple(dict.fromkeys(problems))


def _parse_file(text: str, origin: str, problems: list[str]) -> dict[str, Any] | None:
    """The top-level mapping of a config file, or ``None`` (with a problem) if unusable.

    An empty file (or only comments) is an empty mapping. YAML aliases are refused: they
    let a small file expand into a huge structure ("billion laughs"), and a config has no
    use for them.
    """
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_CONFIG_BYTES:
        problems.append(
            f"{origin}: file is {size} bytes, over the {MAX_CONFIG_BYTES} byte limit; "
            "using defaults"
        )
        return None
    if _flow_depth(text) > _MAX_DEPTH:
        problems.append(f"{origin}: nested more than {_MAX_DEPTH} levels deep; using defaults")
        return None
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                where = f"line {mark.line + 1}" if mark is not None else "somewhere"
                problems.append(
                    f"{origin}: YAML aliases (*name) are not supported ({where}); using defaults"
                )
                return None
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = exc.problem or exc.context or "syntax error"
        problems.append(f"{origin}: invalid YAML{where}: {reason}; using defaults")
        return None
    except (yaml.YAMLError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        problems.append(f"{origin}: invalid YAML: {_one_line(reason)}; using defaults")
        return None
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(
            f"{origin}: the top level must be a mapping of settings, not "
            f"{_type_name(data)}; using defaults"
        )
        return None
    if _depth(data) > _MAX_DEPTH:
        problems.append(f"{origin}: nested more than {_MAX_DEPTH} levels deep; using defaults")
        return None
    return data


def _extends_target(value: object, owner: str, current: str, problems: list[str]) -> str | None:
    """``owner/name`` named by ``_extends``, or ``None`` (with a problem) if unusable."""
    if not isinstance(value, str) or not _EXTENDS_RE.fullmatch(value.strip()):
        problems.append(
            f"{_EXTENDS_KEY} must be <repo> or <owner>/<repo>, got {_show(value)}; not extended"
        )
        return None
    name = value.strip()
    target = name if "/" in name else f"{owner}/{name}"
    if any(part in {".", ".."} for part in target.split("/")):
        problems.append(f"{_EXTENDS_KEY}: {_show(value)} is not a repository; not extended")
        return None
    if target.lower() == current.lower():
        problems.append(f"{_EXTENDS_KEY}: a file cannot extend itself ({target}); not extended")
        return None
    return target


def _sanitise(data: dict[str, Any], prefix: str, problems: list[str]) -> dict[str, Any]:
    """A copy of ``data`` without server-only and unknown keys, each reported once."""
    cleaned = _drop_server_only(data, "", prefix, problems)
    assert isinstance(cleaned, dict)
    _drop_unknown(cleaned, RepoConfig, "", prefix, problems)
    return cleaned


def _drop_server_only(value: object, path: str, prefix: str, problems: list[str]) -> object:
    """Copy of ``value`` with every server-only key removed, at any depth."""
    if isinstance(value, dict):
        kept: dict[Any, Any] = {}
        for key, item in value.items():
            key_path = _join(path, key)
            if isinstance(key, str) and is_server_only_key(key):
                problems.append(
                    f"{prefix}{key_path} cannot be set from a repository (server setting)"
                )
                continue
            kept[key] = _drop_server_only(item, key_path, prefix, problems)
        return kept
    if isinstance(value, list):
        return [
            _drop_server_only(item, f"{path}[{index}]", prefix, problems)
            for index, item in enumerate(value)
        ]
    return value


def _drop_unknown(
    data: dict[Any, Any], model: type[BaseModel], path: str, prefix: str, problems: list[str]
) -> None:
    """Remove (in place) keys ``model`` does not declare, suggesting the likely intent.

    Recurses into sub-sections and lists of sub-sections. A section left empty in YAML
    (``review:`` with everything commented out) reads as null and is treated as absent.
    """
    fields = model.model_fields
    for key in list(data):
        key_path = _join(path, key)
        field = fields.get(key) if isinstance(key, str) else None
        if field is None:
            del data[key]
            if isinstance(key, bool):
                problems.append(
                    f"{prefix}unknown key {_join(path, str(key).lower())} (YAML reads an "
                    "unquoted on/off/yes/no as true/false)"
                )
            else:
                problems.append(f"{prefix}unknown key {key_path}{_suggest(key, model, path)}")
            continue
        value = data[key]
        section = _section_model(field.annotation)
        if section is not None:
            if value is None:
                del data[key]
            elif isinstance(value, dict):
                _drop_unknown(value, section, key_path, prefix, problems)
            continue
        item_model = _item_model(field.annotation)
        if item_model is not None and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    _drop_unknown(item, item_model, f"{key_path}[{index}]", prefix, problems)


def _section_model(annotation: object) -> type[BaseModel] | None:
    """The model class when a field holds a nested section."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _item_model(annotation: object) -> type[BaseModel] | None:
    """The model class when a field holds a list of sections (``tuple[Model, ...]``)."""
    if get_origin(annotation) in (tuple, list):
        for arg in get_args(annotation):
            model = _section_model(arg)
            if model is not None:
                return model
    return None


def _suggest(key: object, model: type[BaseModel], path: str) -> str:
    """`` (did you mean X?)`` for a misspelt or misplaced key, or ``""``."""
    if not isinstance(key, str):
        return ""
    wanted = key.strip().lower().replace("-", "_")
    close = difflib.get_close_matches(wanted, list(model.model_fields), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {_join(path, close[0])}?)"
    elsewhere = _schema_paths().get(wanted)
    if elsewhere is not None:
        return f" (did you mean {elsewhere}?)"
    return ""


def _schema_paths() -> dict[str, str]:
    """Each field name in the schema mapped to its first full dotted path."""
    found: dict[str, str] = {}

    def visit(model: type[BaseModel], path: str) -> None:
        for name, field in model.model_fields.items():
            full = _join(path, name)
            found.setdefault(name, full)
            nested = _section_model(field.annotation) or _item_model(field.annotation)
            if nested is not None:
                visit(nested, full)

    visit(RepoConfig, "")
    return found


_MAX_REPAIRS = 20
_INSTANCE_OF_RE = re.compile(r" or instance of \w+")
_REMOVED = object()


def _validate(data: dict[str, Any], problems: list[str]) -> RepoConfig:
    """Build the config, replacing each invalid value by its default (with a problem).

    Pydantic reports every invalid location; those are removed (a bad list item drops
    just that item) and validation is retried until it succeeds. Each round removes at
    least one key, so the loop is short; the cap is only a backstop.
    """
    defaults = RepoConfig().model_dump(mode="json")
    for _ in range(_MAX_REPAIRS):
        try:
            return RepoConfig.model_validate(data)
        except PydanticValidationError as exc:
            problems.extend(
                _remove_invalid(data, tuple(error["loc"]), error, defaults)
                for error in exc.errors(include_url=False)
            )
            _purge_removed(data)
    problems.append("configuration could not be repaired; using defaults")
    return RepoConfig()


def _remove_invalid(
    data: dict[str, Any], loc: tuple[int | str, ...], error: Any, defaults: dict[str, Any]
) -> str:
    """Remove the value at ``loc`` (or the list item containing it); describe it."""
    reason = _one_line(str(error.get("msg", "invalid value")))
    reason = reason.removeprefix("Value error, ").rstrip(".")
    reason = reason.replace("a valid tuple", "a list").replace("Tuple should", "List should")
    reason = reason.replace("a valid dictionary", "a mapping")
    reason = _INSTANCE_OF_RE.sub("", reason)
    if error.get("type") not in {"missing", "value_error"} and _is_scalar(error.get("input")):
        reason += f", got {_show(error.get('input'))}"
    container: Any = data
    default: Any = defaults
    for depth, step in enumerate(loc):
        if isinstance(container, list):
            if isinstance(step, int) and 0 <= step < len(container):
                container[step] = _REMOVED
                return f"invalid value for {_loc(loc)}: {reason} (item ignored)"
            break
        if not isinstance(container, dict) or step not in container:
            break
        child = container[step]
        if depth == len(loc) - 1 or not isinstance(child, (dict, list)):
            del container[step]
            fallback = default.get(step) if isinstance(default, dict) else None
            shown = json.dumps(fallback)
            suffix = f"using default: {shown}" if len(shown) <= 60 else "using the defaults"
            return f"invalid value for {_loc(loc[: depth + 1])}: {reason} ({suffix})"
        container = child
        default = default.get(step) if isinstance(default, dict) else None
    return f"invalid value for {_loc(loc)}: {reason}"


def _purge_removed(value: object) -> None:
    """Drop the items :func:`_remove_invalid` marked, from every list in ``value``."""
    if isinstance(value, dict):
        for item in value.values():
            _purge_removed(item)
    elif isinstance(value, list):
        value[:] = [item for item in value if item is not _REMOVED]
        for item in value:
            _purge_removed(item)


def _join(path: str, key: object) -> str:
    """Dotted path of ``key`` under ``path``."""
    return f"{path}.{key}" if path else str(key)


def _loc(loc: tuple[int | str, ...]) -> str:
    """``review.path_instructions[2].path`` from a pydantic location."""
    text = ""
    for step in loc:
        text = f"{text}[{step}]" if isinstance(step, int) else _join(text, step)
    return text


def _flow_depth(text: str) -> int:
    """Upper bound on ``[``/``{`` nesting, counted without parsing.

    PyYAML's scanner slows down quadratically with flow nesting (a 64 KiB file of
    brackets takes minutes), so deep nesting is refused before YAML sees it. Brackets in
    strings and comments are counted too; that can only over-estimate, and no real
    config comes close to the limit.
    """
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def _depth(value: object) -> int:
    """Nesting depth of mappings and lists (a scalar is 0), stopping past the limit."""
    stack: list[tuple[object, int]] = [(value, 0)]
    deepest = 0
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > _MAX_DEPTH:
            break
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return deepest


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _show(value: object) -> str:
    """A short, single-line rendering of a user value for a problem line."""
    text = json.dumps(value) if _is_scalar(value) else _type_name(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(value: object) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), f"a {type(value).__name__}")


def _one_line(text: str) -> str:
    return " ".join(text.split())
