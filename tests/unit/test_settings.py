from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import SettingsError, load_settings
from tests.fakes.github_api import generate_private_key_pem


def test_defaults_need_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert settings.data_dir == Path(".kaizen")
    assert settings.embedded_broker
    assert settings.github_api_url == "https://api.github.com"
    assert settings.bot_login == "kaizen[bot]"


def test_invalid_values_give_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAIZEN_APP_ID", "abc")
    monkeypatch.setenv("KAIZEN_REDIS_URL", "http://localhost")
    monkeypatch.setenv("KAIZEN_GITHUB_API_URL", "ftp://x")
    with pytest.raises(SettingsError) as info:
        load_settings()
    problems = info.value.problems
    assert len(problems) == 3
    assert any(p.startswith("KAIZEN_APP_ID:") for p in problems)
    assert any(p.startswith("KAIZEN_REDIS_URL:") and "redis://" in p for p in problems)
    assert any(p.startswith("KAIZEN_GITHUB_API_URL:") for p in problems)


def test_require_names_each_missing_setting() -> None:
    settings = load_settings()
    with pytest.raises(SettingsError) as info:
        settings.require("app_id", "private_key", "webhook_secret")
    assert [p.split(" ")[0] for p in info.value.problems] == [
        "KAIZEN_APP_ID",
        "KAIZEN_PRIVATE_KEY",
        "KAIZEN_WEBHOOK_SECRET",
    ]


def test_private_key_from_path_or_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pem = generate_private_key_pem()
    key_file = tmp_path / "app.pem"
    key_file.write_text(pem)
    monkeypatch.setenv("KAIZEN_PRIVATE_KEY", str(key_file))
    assert load_settings().private_key.get_secret_value() == pem.strip()  # type: ignore[union-attr]
    monkeypatch.setenv("KAIZEN_PRIVATE_KEY", pem.strip().replace("\n", "\\n"))
    assert load_settings().private_key.get_secret_value() == pem.strip()  # type: ignore[union-attr]


def test_the_sandbox_hides_the_data_dir_and_the_key_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key_file = tmp_path / "keys" / "app.pem"
    key_file.parent.mkdir()
    key_file.write_text(generate_private_key_pem())
    monkeypatch.setenv("KAIZEN_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KAIZEN_PRIVATE_KEY", str(key_file))
    assert load_settings().sandbox_hidden_paths() == [tmp_path / "data", key_file]
    # PEM text in the environment names no file; a relative data dir is made absolute
    monkeypatch.setenv("KAIZEN_PRIVATE_KEY", generate_private_key_pem().replace("\n", "\\n"))
    monkeypatch.setenv("KAIZEN_DATA_DIR", "state")
    monkeypatch.chdir(tmp_path)
    assert load_settings().sandbox_hidden_paths() == [tmp_path / "state"]


def test_private_key_that_is_neither_pem_nor_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAIZEN_PRIVATE_KEY", "/no/such/key.pem")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert info.value.problems == [
        "KAIZEN_PRIVATE_KEY: is neither PEM text, base64 of PEM, nor the path of a readable file"
    ]


def test_secret_values_are_listed_for_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAIZEN_WEBHOOK_SECRET", "s3cret")
    monkeypatch.setenv("KAIZEN_LLM_API_KEY", "sk-abc")
    assert set(load_settings().secret_values()) == {"s3cret", "sk-abc"}


def test_private_key_as_base64_of_pem(monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    pem = generate_private_key_pem()
    monkeypatch.setenv("KAIZEN_PRIVATE_KEY", base64.b64encode(pem.encode()).decode())
    assert load_settings().private_key.get_secret_value() == pem.strip()  # type: ignore[union-attr]
