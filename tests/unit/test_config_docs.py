"""docs/configuration.md is generated from the settings model and the repo config schema.

The first test is the CI check that the committed page matches the code. When it fails,
regenerate the page and commit it:

    python -m bot.config_docs
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

from bot import config_docs
from bot.config_docs import (
    DOC_PATH,
    SECRET_DEFAULT,
    check,
    is_secret,
    main,
    render,
    render_repo_config_reference,
    render_settings_reference,
)
from bot.repo_config import RepoConfig
from bot.settings import Settings


def test_committed_page_matches_the_code() -> None:
    ok, diff = check(DOC_PATH)
    assert ok, (
        f"{DOC_PATH} is stale: run `python -m bot.config_docs` and commit the result.\n{diff}"
    )


def test_every_setting_has_its_environment_variable() -> None:
    text = render_settings_reference()
    for name in Settings.model_fields:
        assert f"`KAIZEN_{name.upper()}`" in text, name


def test_settings_rows_show_type_default_and_constraints() -> None:
    rows = _rows(render_settings_reference())
    assert rows["`KAIZEN_APP_SLUG`"][1] == "`kaizen`"
    assert "matches `^[a-z0-9][a-z0-9-]{0,33}$`" in rows["`KAIZEN_APP_SLUG`"][2]
    assert rows["`KAIZEN_LEARNING_HALF_LIFE_DAYS`"][2] == "≥ 7; ≤ 3650"
    assert rows["`KAIZEN_SANDBOX`"][0] == "choice"
    assert "one of `auto`, `docker`, `bwrap`, `none`" in rows["`KAIZEN_SANDBOX`"][2]
    assert rows["`KAIZEN_DATA_DIR`"][:2] == ["path", "`.kaizen`"]
    assert rows["`KAIZEN_LOG_JSON`"][:2] == ["boolean", "`true`"]
    assert rows["`KAIZEN_REDIS_URL`"][1] == "unset"
    assert "must be an http(s) URL" in rows["`KAIZEN_QDRANT_URL`"][2]


def test_descriptions_come_from_the_comments_above_a_field() -> None:
    rows = _rows(render_settings_reference())
    assert "Redis visibility timeout" in rows["`KAIZEN_REDELIVERY_MARGIN_S`"][3]
    assert "bearer or login page" in rows["`KAIZEN_REPORTS_TOKEN`"][3]
    # A comment at the end of the field's own line counts too.
    assert "only for embedder=openai" in rows["`KAIZEN_EMBEDDING_MODEL`"][3]
    # A comment that opens a paragraph is a section heading, not a field description.
    assert rows["`KAIZEN_APP_ID`"][3] != "The GitHub App."


def test_sections_follow_the_settings_file() -> None:
    text = render_settings_reference()
    headings = re.findall(r"^### (.+)$", text, flags=re.M)
    assert "The GitHub App" in headings
    assert "Queue and storage" in headings
    assert text.index("`KAIZEN_APP_ID`") < text.index("### Queue and storage")
    assert text.index("### Queue and storage") < text.index("`KAIZEN_REDIS_URL`")


def test_no_secret_value_leaks(monkeypatch: pytest.MonkeyPatch) -> None:
    # The page is built from the model, never from the environment it runs in.
    planted = {
        "KAIZEN_WEBHOOK_SECRET": "planted-webhook-secret-123",
        "KAIZEN_LLM_API_KEY": "sk-planted0123456789abcdef",
        "KAIZEN_REPORTS_TOKEN": "planted-reports-token-456",
        "KAIZEN_QDRANT_API_KEY": "planted-qdrant-key-789",
    }
    for key, value in planted.items():
        monkeypatch.setenv(key, value)
    text = render()
    for value in planted.values():
        assert value not in text
    rows = _rows(render_settings_reference())
    secrets = [n for n, f in Settings.model_fields.items() if is_secret(n, f)]
    assert {"private_key", "webhook_secret", "llm_api_key", "reports_token"} <= set(secrets)
    for name in secrets:
        assert rows[f"`KAIZEN_{name.upper()}`"][1] == SECRET_DEFAULT, name


def test_a_secret_with_a_default_is_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_settings import BaseSettings, SettingsConfigDict

    class Fake(BaseSettings):
        model_config = SettingsConfigDict(env_prefix="KAIZEN_")

        deploy_token: str = "do-not-print-me"
        # Signs things.
        signing_secret: SecretStr = SecretStr("nor-me")

    import bot.settings

    monkeypatch.setattr(bot.settings, "Settings", Fake)
    text = render_settings_reference()
    assert "do-not-print-me" not in text
    assert "nor-me" not in text
    assert "`KAIZEN_DEPLOY_TOKEN`" in text
    assert "Signs things." in text


def test_every_repo_config_key_appears() -> None:
    text = render_repo_config_reference()

    def visit(model: type[BaseModel], path: str) -> None:
        for name, info in model.model_fields.items():
            key = f"{path}.{name}" if path else name
            nested = config_docs._section_model(info.annotation)
            items = config_docs._item_model(info.annotation)
            if nested is not None:
                assert f"### `{key}`" in text, key
                visit(nested, key)
            else:
                assert f"`{key}`" in text, key
                if items is not None:
                    visit(items, f"{key}[]")

    visit(RepoConfig, "")
    # Section docstrings are shown.
    assert "The leaked-credential scanner." in text
    assert "Pull-request review." in text


def test_repo_config_defaults_round_trip() -> None:
    import yaml

    text = render_repo_config_reference()
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert RepoConfig.model_validate(yaml.safe_load(block)) == RepoConfig()


def test_check_reports_a_stale_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "configuration.md"
    assert main(["--out", str(page)]) == 0
    assert main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text().replace("KAIZEN_APP_ID", "KAIZEN_APP_IDENT"))
    capsys.readouterr()
    assert main(["--check", "--out", str(page)]) == 1
    captured = capsys.readouterr()
    assert "+| `KAIZEN_APP_ID`" in captured.out
    assert "python -m bot.config_docs" in captured.err


def _rows(markdown: str) -> dict[str, list[str]]:
    """First cell of each table row -> the other cells."""
    rows = {}
    for line in markdown.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows[cells[0]] = cells[1:]
    return rows


def test_model_validators_are_described() -> None:
    text = render_settings_reference()
    validators = Settings.__pydantic_decorators__.model_validators.values()
    for decorator in validators:
        doc = getattr(decorator.func, "__func__", decorator.func).__doc__
        if doc:
            first_words = " ".join(doc.replace("``", "`").split()[:4])
            assert first_words in text
