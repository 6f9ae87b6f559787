"""Tests for per-repository configuration loading in bot.repo_config."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from bot.repo_config import (
    CONFIG_PATH,
    MAX_CONFIG_BYTES,
    LoadedConfig,
    RepoConfig,
    deep_merge,
    is_server_only_key,
    load_repo_config,
)


class MemorySource:
    """A ConfigSource backed by a dict of ``repo -> kaizen.yml text``; records reads."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.reads: list[tuple[str, str]] = []

    def read_file(self, repo: str, path: str) -> str | None:
        self.reads.append((repo, path))
        return self.files.get(repo) if path == CONFIG_PATH else None


def load(text: str, **others: str) -> LoadedConfig:
    """Load ``octo/app`` whose file is ``text``; ``others`` maps repo names to files."""
    files = {"octo/app": text, **{f"octo/{name}": body for name, body in others.items()}}
    return load_repo_config(MemorySource(files), "octo", "app")


# --- defaults and sources -------------------------------------------------------------


def test_defaults_when_no_file_anywhere() -> None:
    source = MemorySource({})
    loaded = load_repo_config(source, "octo", "app")
    assert loaded == LoadedConfig(RepoConfig(), (), "defaults", None)
    assert source.reads == [("octo/app", CONFIG_PATH), ("octo/.github", CONFIG_PATH)]


def test_production_defaults() -> None:
    config = RepoConfig()
    assert config.review.enabled
    assert not config.review.drafts
    assert config.review.incremental
    assert config.review.max_comments == 10
    assert config.review.llm.model is None
    assert config.review.secrets.enabled
    assert not config.fix.allow_network_install
    assert config.fix.test_command is None
    assert config.commands.enabled
    assert config.mutes == ()


def test_repo_file_is_used() -> None:
    loaded = load("review:\n  max_comments: 3\n")
    assert loaded.config.review.max_comments == 3
    assert loaded.source_path == "octo/app:.github/kaizen.yml"
    assert loaded.problems == ()


def test_org_file_is_the_fallback() -> None:
    source = MemorySource({"octo/.github": "review:\n  drafts: true\n"})
    loaded = load_repo_config(source, "octo", "app")
    assert loaded.config.review.drafts is True
    assert loaded.source_path == "octo/.github:.github/kaizen.yml"


def test_repo_file_wins_over_org_file_entirely() -> None:
    source = MemorySource({"octo/app": "fix:\n  max_attempts: 2\n", "octo/.github": "mutes: [a:b]"})
    loaded = load_repo_config(source, "octo", "app")
    assert loaded.config.fix.max_attempts == 2
    assert loaded.config.mutes == ()
    assert source.reads == [("octo/app", CONFIG_PATH)]


def test_the_dot_github_repo_reads_its_own_file_once() -> None:
    source = MemorySource({})
    load_repo_config(source, "octo", ".github")
    assert source.reads == [("octo/.github", CONFIG_PATH)]


@pytest.mark.parametrize("text", ["", "\n", "# just a comment\n", "---\n"])
def test_empty_file_means_defaults_without_problems(text: str) -> None:
    loaded = load(text)
    assert loaded.config == RepoConfig()
    assert loaded.problems == ()


def test_empty_section_is_treated_as_absent() -> None:
    loaded = load("review:\n  # max_comments: 3\nfix:\n")
    assert loaded.config == RepoConfig()
    assert loaded.problems == ()


def test_source_errors_propagate() -> None:
    class Broken:
        def read_file(self, repo: str, path: str) -> str | None:
            raise TimeoutError("GitHub is slow")

    with pytest.raises(TimeoutError):
        load_repo_config(Broken(), "octo", "app")


# --- merging --------------------------------------------------------------------------


def test_deep_merge_merges_mappings_and_replaces_lists_and_scalars() -> None:
    base = {"a": {"x": 1, "y": [1, 2], "z": {"k": 1}}, "b": 1}
    override = {"a": {"y": [3], "z": {"j": 2}}, "b": {"now": "dict"}}
    assert deep_merge(base, override) == {
        "a": {"x": 1, "y": [3], "z": {"k": 1, "j": 2}},
        "b": {"now": "dict"},
    }
    assert base == {"a": {"x": 1, "y": [1, 2], "z": {"k": 1}}, "b": 1}


def test_file_is_deep_merged_with_defaults() -> None:
    loaded = load("review:\n  llm:\n    max_tokens_per_pr: 1000\n  paths:\n    exclude: []\n")
    review = loaded.config.review
    assert review.llm.max_tokens_per_pr == 1000
    assert review.llm.enabled is True
    assert review.llm.max_tokens_per_day == RepoConfig().review.llm.max_tokens_per_day
    assert review.paths.exclude == ()
    assert review.paths.include == ("**",)


# --- _extends -------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["base", "octo/base"])
def test_extends_inherits_then_applies_own_keys(target: str) -> None:
    base = "review:\n  max_comments: 5\n  drafts: true\nmutes: [ruff:E501]\n"
    loaded = load(f"_extends: {target}\nreview:\n  max_comments: 7\n", base=base)
    assert loaded.config.review.max_comments == 7
    assert loaded.config.review.drafts is True
    assert loaded.config.mutes == ("ruff:E501",)
    assert loaded.extends_path == "octo/base:.github/kaizen.yml"
    assert loaded.problems == ()


def test_extends_other_owner() -> None:
    source = MemorySource(
        {"octo/app": "_extends: acme/shared\n", "acme/shared": "fix: {enabled: false}"}
    )
    loaded = load_repo_config(source, "octo", "app")
    assert loaded.config.fix.enabled is False
    assert loaded.extends_path == "acme/shared:.github/kaizen.yml"


def test_org_fallback_file_may_extend() -> None:
    source = MemorySource(
        {"octo/.github": "_extends: base\n", "octo/base": "commands: {enabled: false}"}
    )
    loaded = load_repo_config(source, "octo", "app")
    assert loaded.config.commands.enabled is False
    assert loaded.source_path == "octo/.github:.github/kaizen.yml"


def test_extends_is_followed_one_level_only() -> None:
    loaded = load(
        "_extends: base\n",
        base="_extends: root\nreview: {drafts: true}\n",
        root="review: {max_comments: 1}\n",
    )
    assert loaded.config.review.drafts is True
    assert loaded.config.review.max_comments == 10
    assert loaded.problems == (
        "octo/base:.github/kaizen.yml: _extends ignored: only one level of _extends is followed",
    )


def test_extends_cycle_back_to_self_is_not_followed() -> None:
    loaded = load("_extends: base\n", base="_extends: app\nreview: {drafts: true}\n")
    assert loaded.config.review.drafts is True
    assert len(loaded.problems) == 1


def test_extends_self_is_reported() -> None:
    loaded = load("_extends: app\nreview: {drafts: true}\n")
    assert loaded.config.review.drafts is True
    assert loaded.problems == ("_extends: a file cannot extend itself (octo/app); not extended",)


def test_extends_missing_target_is_reported_and_own_keys_apply() -> None:
    loaded = load("_extends: nowhere\nreview: {drafts: true}\n")
    assert loaded.config.review.drafts is True
    assert loaded.extends_path is None
    assert loaded.problems == ("_extends: octo/nowhere:.github/kaizen.yml not found; not extended",)


@pytest.mark.parametrize("value", ["[a, b]", "'https://evil/x'", "a/b/c", "'../x'", "''"])
def test_extends_bad_value_is_reported(value: str) -> None:
    loaded = load(f"_extends: {value}\n")
    assert loaded.config == RepoConfig()
    [problem] = loaded.problems
    assert problem.startswith("_extends")
    assert "not extended" in problem


def test_problems_in_extended_file_name_that_file() -> None:
    loaded = load("_extends: base\n", base="review:\n  maxcomments: 1\n")
    assert loaded.problems == (
        "octo/base:.github/kaizen.yml: unknown key review.maxcomments "
        "(did you mean review.max_comments?)",
    )


def test_broken_extended_file_is_skipped() -> None:
    loaded = load("_extends: base\nreview: {drafts: true}\n", base="review: [\n")
    assert loaded.config.review.drafts is True
    assert loaded.extends_path is None
    [problem] = loaded.problems
    assert problem.startswith("octo/base:.github/kaizen.yml: invalid YAML at line 2")


# --- unknown keys -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "review:\n  maxcomments: 3\n",
            "unknown key review.maxcomments (did you mean review.max_comments?)",
        ),
        (
            "review:\n  max-comments: 3\n",
            "unknown key review.max-comments (did you mean review.max_comments?)",
        ),
        ("reveiw:\n  enabled: false\n", "unknown key reveiw (did you mean review?)"),
        ("max_attempts: 2\n", "unknown key max_attempts (did you mean fix.max_attempts?)"),
        (
            "review:\n  llm:\n    modle: x\n",
            "unknown key review.llm.modle (did you mean review.llm.model?)",
        ),
        ("colour: blue\n", "unknown key colour"),
        (
            "review:\n  path_instructions:\n    - path: a\n      instructions: b\n      note: c\n",
            "unknown key review.path_instructions[0].note",
        ),
        ("on: true\n", "unknown key true (YAML reads an unquoted on/off/yes/no as true/false)"),
        ("1: x\n", "unknown key 1"),
        ("review:\n  ruff:\n    _extends: x\n", "unknown key review.ruff._extends"),
    ],
)
def test_unknown_keys_are_reported_with_suggestions(text: str, problem: str) -> None:
    loaded = load(text)
    assert loaded.problems == (problem,)


def test_unknown_keys_do_not_affect_known_siblings() -> None:
    loaded = load("review:\n  maxcomments: 3\n  drafts: true\n")
    assert loaded.config.review.drafts is True
    assert loaded.config.review.max_comments == 10


# --- invalid values -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "review:\n  max_comments: 500\n",
            "invalid value for review.max_comments: Input should be less than or equal to 100, "
            "got 500 (using default: 10)",
        ),
        (
            "review:\n  max_comments: -1\n",
            "invalid value for review.max_comments: Input should be greater than or equal to 0, "
            "got -1 (using default: 10)",
        ),
        (
            "review:\n  max_comments: '5'\n",
            'invalid value for review.max_comments: Input should be a valid integer, got "5" '
            "(using default: 10)",
        ),
        (
            "review:\n  enabled: maybe\n",
            'invalid value for review.enabled: Input should be a valid boolean, got "maybe" '
            "(using default: true)",
        ),
        (
            "review:\n  min_severity: urgent\n",
            "invalid value for review.min_severity: Input should be 'info', 'low', 'medium', "
            "'high' or 'critical', got \"urgent\" (using default: \"low\")",
        ),
        (
            "review:\n  llm:\n    model: https://evil.example/v1\n",
            "invalid value for review.llm.model: a model must be a name such as gpt-4o-mini or "
            "org/model, not a URL (using default: null)",
        ),
        (
            "fix:\n  test_command: |\n    pytest\n    rm -rf /\n",
            "invalid value for fix.test_command: a command must be a single line (join steps "
            "with &&) (using default: null)",
        ),
        (
            "fix:\n  time_limit_s: 99999\n",
            "invalid value for fix.time_limit_s: Input should be less than or equal to 3600, "
            "got 99999 (using default: 600)",
        ),
        (
            "learning:\n  min_evidence: 0\n",
            "invalid value for learning.min_evidence: Input should be greater than or equal "
            "to 1, got 0 (using default: 3)",
        ),
        (
            "review: 5\n",
            "invalid value for review: Input should be a mapping, got 5 (using the defaults)",
        ),
        (
            "review:\n  paths:\n    exclude: vendor/**\n",
            'invalid value for review.paths.exclude: Input should be a list, got "vendor/**" '
            "(using the defaults)",
        ),
    ],
)
def test_invalid_values_fall_back_to_default(text: str, problem: str) -> None:
    loaded = load(text)
    assert loaded.config == RepoConfig()
    assert loaded.problems == (problem,)


def test_invalid_value_keeps_valid_siblings() -> None:
    loaded = load(
        "review:\n  max_comments: 500\n  drafts: true\n  llm:\n    max_tokens_per_pr: 9\n"
    )
    assert loaded.config.review.drafts is True
    assert loaded.config.review.llm.max_tokens_per_pr == 9
    assert loaded.config.review.max_comments == 10


def test_invalid_list_items_are_dropped_individually() -> None:
    loaded = load(
        "mutes: [ruff:B006, nope, 'secrets:*']\n"
        "review:\n"
        "  ruff:\n    select: [E, 'rm -rf', B006]\n"
        "  path_instructions:\n"
        "    - {path: 'src/**', instructions: Prefer pathlib}\n"
        "    - {path: 'tests/**'}\n"
    )
    config = loaded.config
    assert config.mutes == ("ruff:B006", "secrets:*")
    assert config.review.ruff.select == ("E", "B006")
    assert [(p.path, p.instructions) for p in config.review.path_instructions] == [
        ("src/**", "Prefer pathlib")
    ]
    first, second, third = sorted(loaded.problems)
    assert first.startswith("invalid value for mutes[1]: `nope` is not a valid pattern")
    assert first.endswith("(item ignored)")
    assert second == (
        "invalid value for review.path_instructions[1].instructions: Field required (item ignored)"
    )
    assert second.endswith("(item ignored)")
    assert third.startswith("invalid value for review.ruff.select[1]: a ruff rule selector")


def test_range_limits_on_lists() -> None:
    mutes = ", ".join(f"ruff:E{i}" for i in range(201))
    loaded = load(f"mutes: [{mutes}]\n")
    assert loaded.config.mutes == ()
    [problem] = loaded.problems
    assert problem.startswith("invalid value for mutes: List should have at most 200 items")


def test_schema_itself_rejects_out_of_range_values() -> None:
    with pytest.raises(ValidationError):
        RepoConfig.model_validate({"review": {"max_comments": 101}})
    with pytest.raises(ValidationError):
        RepoConfig.model_validate({"review": {"url": "x"}})


def test_config_is_immutable() -> None:
    config = RepoConfig()
    with pytest.raises(ValidationError):
        config.review.max_comments = 50  # type: ignore[misc]


# --- server-only keys -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("review:\n  llm:\n    base_url: https://evil.example\n", "review.llm.base_url"),
        ("review:\n  llm:\n    api_key: sk-xxx\n", "review.llm.api_key"),
        ("review:\n  llm:\n    apiKey: sk-xxx\n", "review.llm.apiKey"),
        ("review:\n  llm:\n    baseURL: x\n", "review.llm.baseURL"),
        ("token: x\n", "token"),
        ("github:\n  api_url: https://evil.example\n", "github.api_url"),
        ("webhook_secret: x\n", "webhook_secret"),
        ("redis_url: redis://evil\n", "redis_url"),
        ("qdrant-url: x\n", "qdrant-url"),
        ("fix:\n  sandbox: docker\n", "fix.sandbox"),
        ("fix:\n  sandbox_backend: local\n", "fix.sandbox_backend"),
        ("review:\n  llm:\n    endpoint: x\n", "review.llm.endpoint"),
        ("review:\n  llm:\n    host: evil\n", "review.llm.host"),
        ("db:\n  password: hunter2\n", "db.password"),
        ("proxy: http://evil:3128\n", "proxy"),
        (
            "review:\n  path_instructions:\n    - {path: a, instructions: b, secret: c}\n",
            "review.path_instructions[0].secret",
        ),
        ("deep:\n  deeper:\n    - x:\n        access_token: y\n", "deep.deeper[0].x.access_token"),
    ],
)
def test_server_only_keys_are_refused_at_any_depth(text: str, path: str) -> None:
    loaded = load(text)
    assert f"{path} cannot be set from a repository (server setting)" in loaded.problems
    assert not any(problem.startswith(f"unknown key {path}") for problem in loaded.problems)
    dumped = str(loaded.config.model_dump())
    assert "evil" not in dumped
    assert "sk-xxx" not in dumped


@pytest.mark.parametrize(
    "name",
    [
        "url",
        "base_url",
        "baseUrl",
        "redisurl",
        "api-key",
        "apikey",
        "ApiKey",
        "token",
        "github_token",
        "accesstoken",
        "secret",
        "client_secret",
        "password",
        "db_password",
        "endpoint",
        "host",
        "hostname",
        "webhook",
        "credentials",
        "sandbox",
        "private_key",
        "dsn",
        "port",
    ],
)
def test_is_server_only_key(name: str) -> None:
    assert is_server_only_key(name)


@pytest.mark.parametrize(
    "name",
    ["secrets", "max_tokens_per_pr", "report", "monitor", "hosting_notes", "keyword", "model"],
)
def test_feature_names_are_not_server_only(name: str) -> None:
    assert not is_server_only_key(name)


def _schema_keys(model: type[BaseModel]) -> set[str]:
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        keys.add(name)
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        for candidate in candidates:
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                keys |= _schema_keys(candidate)
    return keys


def test_no_schema_key_is_server_only() -> None:
    """Adding e.g. ``review.llm.api_key`` to the schema must fail here, by design."""
    keys = _schema_keys(RepoConfig)
    assert {"max_comments", "path_instructions", "instructions", "secrets"} <= keys
    assert [key for key in keys if is_server_only_key(key)] == []


# --- file-level problems ------------------------------------------------------------


def test_yaml_syntax_error_reports_line_and_uses_defaults() -> None:
    loaded = load("review:\n  max_comments: 3\n  drafts: [true\nfix: {}\n")
    assert loaded.config == RepoConfig()
    [problem] = loaded.problems
    assert problem.startswith("octo/app:.github/kaizen.yml: invalid YAML at line ")
    assert problem.endswith("; using defaults")
    assert loaded.source_path == "octo/app:.github/kaizen.yml"


def test_yaml_error_line_number_points_at_the_mistake() -> None:
    loaded = load("review:\n  drafts: true\n bad indentation: x\n")
    [problem] = loaded.problems
    assert "at line 3, column 2" in problem


def test_unsafe_yaml_tags_are_refused() -> None:
    loaded = load("review: !!python/object/apply:os.system ['echo hi']\n")
    assert loaded.config == RepoConfig()
    [problem] = loaded.problems
    assert "invalid YAML" in problem


def test_yaml_aliases_are_refused() -> None:
    text = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"
    loaded = load(text)
    assert loaded.config == RepoConfig()
    assert loaded.problems == (
        "octo/app:.github/kaizen.yml: YAML aliases (*name) are not supported (line 2); "
        "using defaults",
    )


@pytest.mark.parametrize(
    ("text", "kind"), [("- a\n- b\n", "a list"), ("hello\n", "a string"), ("3\n", "a int")]
)
def test_top_level_must_be_a_mapping(text: str, kind: str) -> None:
    loaded = load(text)
    assert loaded.config == RepoConfig()
    assert loaded.problems == (
        f"octo/app:.github/kaizen.yml: the top level must be a mapping of settings, not {kind}; "
        "using defaults",
    )


def test_file_over_size_limit_is_refused() -> None:
    text = "review:\n  drafts: true\n" + "#" * MAX_CONFIG_BYTES
    loaded = load(text)
    assert loaded.config == RepoConfig()
    [problem] = loaded.problems
    assert problem.startswith("octo/app:.github/kaizen.yml: file is ")
    assert f"over the {MAX_CONFIG_BYTES} byte limit" in problem


def test_file_at_size_limit_is_accepted() -> None:
    head = "review:\n  drafts: true\n"
    loaded = load(head + "#" * (MAX_CONFIG_BYTES - len(head)))
    assert loaded.config.review.drafts is True
    assert loaded.problems == ()


@pytest.mark.parametrize(
    "text", ["[" * 3000 + "]" * 3000, "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 40))]
)
def test_deeply_nested_files_are_refused(text: str) -> None:
    loaded = load(text)
    assert loaded.config == RepoConfig()
    assert len(loaded.problems) == 1


@pytest.mark.timeout(10)
def test_pathological_flow_nesting_is_refused_quickly() -> None:
    half = MAX_CONFIG_BYTES // 2
    loaded = load("[" * half + "]" * half)
    assert loaded.config == RepoConfig()
    assert len(loaded.problems) == 1


def test_problems_are_single_lines_and_unique() -> None:
    loaded = load('review:\n  maxcomments: 1\n  maxcomments: 2\n  llm:\n    model: "a\\nb"\n')
    assert len(set(loaded.problems)) == len(loaded.problems)
    assert len(loaded.problems) == 2  # the repeated key once, and the model
    assert all("\n" not in problem for problem in loaded.problems)
