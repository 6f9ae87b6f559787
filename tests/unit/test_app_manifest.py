"""The App manifest (deploy/app.yml), setup states, credential storage and their loading."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot import app_manifest
from bot.app_manifest import (
    AppCredentials,
    StateStore,
    build_manifest,
    clean_app_name,
    clean_org,
    registration_url,
    store_credentials,
    unreachable_by_github,
)
from bot.settings import Settings, SettingsError, load_settings
from tests.fakes.github_api import _manifest_problems

REPO = Path(__file__).resolve().parents[2]
PERMISSIONS = {
    "contents": "write",
    "issues": "write",
    "pull_requests": "write",
    "checks": "write",
    "metadata": "read",
}
EVENTS = [
    "issues",
    "issue_comment",
    "pull_request",
    "pull_request_review",
    "pull_request_review_comment",
    "pull_request_review_thread",
    "repository",
]
# Sent to every App; GitHub rejects a manifest that lists them in default_events.
AUTOMATIC_EVENTS = ("installation", "installation_repositories")
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"


# -- the manifest ------------------------------------------------------------------------------


def test_deploy_app_yml_is_the_packaged_manifest() -> None:
    deployed = (REPO / "deploy" / "app.yml").read_bytes()
    packaged = (REPO / "bot" / "app_manifest.yml").read_bytes()
    assert deployed == packaged, "copy deploy/app.yml to bot/app_manifest.yml"


def test_manifest_asks_exactly_for_kaizen_s_permissions_and_events() -> None:
    template = yaml.safe_load((REPO / "deploy" / "app.yml").read_text())
    assert template["default_permissions"] == PERMISSIONS
    assert template["default_events"] == EVENTS
    manifest = build_manifest("https://kaizen.example.com")
    assert manifest["default_permissions"] == PERMISSIONS
    assert manifest["default_events"] == EVENTS
    assert not set(AUTOMATIC_EVENTS) & set(manifest["default_events"])
    assert manifest["public"] is False
    assert manifest["name"] == "Kaizen"
    assert "callback_urls" not in manifest  # no user OAuth


def test_manifest_urls_come_from_the_public_url() -> None:
    manifest = build_manifest("https://kaizen.example.com/", name="Acme Kaizen")
    assert manifest["name"] == "Acme Kaizen"
    assert manifest["url"] == "https://kaizen.example.com/"
    assert manifest["hook_attributes"] == {
        "url": "https://kaizen.example.com/webhooks/github",
        "active": True,
    }
    assert manifest["redirect_url"] == "https://kaizen.example.com/setup/callback"
    assert manifest["setup_url"] == "https://kaizen.example.com/setup/installed"
    assert manifest["request_oauth_on_install"] is False


def test_public_url_setting_wins_over_the_request() -> None:
    with_setting = Settings(public_url="https://kaizen.example.com/")
    assert app_manifest.public_base(with_setting, "http://10.0.0.5:8000/") == (
        "https://kaizen.example.com"
    )
    assert app_manifest.public_base(Settings(), "http://10.0.0.5:8000/") == "http://10.0.0.5:8000"


def test_the_fake_github_accepts_the_manifest_and_refuses_automatic_events() -> None:
    manifest = build_manifest("https://kaizen.example.com")
    assert _manifest_problems(manifest) == []
    listed = {**manifest, "default_events": [*EVENTS, *AUTOMATIC_EVENTS]}
    assert "Default events unsupported: installation and installation_repositories" in (
        _manifest_problems(listed)
    )
    without_issues = {
        **manifest,
        "default_permissions": {k: v for k, v in PERMISSIONS.items() if k != "issues"},
        "default_events": ["issues"],
    }
    assert _manifest_problems(without_issues) == [
        "Default events are not supported by permissions: issues"
    ]


def test_registration_url_for_a_person_and_an_organisation() -> None:
    assert registration_url("https://github.com/", "s-1") == (
        "https://github.com/settings/apps/new?state=s-1"
    )
    assert registration_url("https://ghe.example.com", "s-1", "octo-org") == (
        "https://ghe.example.com/organizations/octo-org/settings/apps/new?state=s-1"
    )


@pytest.mark.parametrize("org", ["", "-octo", "octo--org", "octo/org", "a" * 40, "o rg"])
def test_bad_organisation_logins_are_refused(org: str) -> None:
    with pytest.raises(app_manifest.SetupError):
        clean_org(org)


def test_app_names() -> None:
    assert clean_app_name("  Acme   Kaizen ") == "Acme Kaizen"
    assert clean_app_name("") is None
    with pytest.raises(app_manifest.SetupError):
        clean_app_name("x" * 35)


@pytest.mark.parametrize(
    ("url", "unreachable"),
    [
        ("http://127.0.0.1:8000", True),
        ("http://localhost:8000", True),
        ("http://192.168.1.4", True),
        ("http://kaizen.local", True),
        ("https://kaizen.example.com", False),
        ("https://140.82.112.3", False),
    ],
)
def test_addresses_github_cannot_reach_are_spotted(url: str, unreachable: bool) -> None:
    assert unreachable_by_github(url) is unreachable


# -- states ------------------------------------------------------------------------------------


def test_a_state_is_claimed_once(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "states")
    state = store.create(print_only=True, org="octo-org")
    assert len(state) >= 32
    files = list((tmp_path / "states").iterdir())
    assert len(files) == 1 and state not in files[0].name  # stored by hash only
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    pending = store.claim(state)
    assert pending is not None and pending.print_only and pending.org == "octo-org"
    assert store.claim(state) is None
    store.restore(state, pending)
    assert store.claim(state) == pending


@pytest.mark.parametrize("state", [None, "", "short", "../../etc/passwd-xxxxxxxxxxxx", "x" * 200])
def test_unknown_or_malformed_states_are_refused(tmp_path: Path, state: str | None) -> None:
    store = StateStore(tmp_path / "states")
    store.create(print_only=False, org=None)
    assert store.claim(state) is None


def test_an_old_state_is_refused_and_pruned(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "states", ttl_s=60)
    state = store.create(print_only=False, org=None)
    path = next((tmp_path / "states").iterdir())
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "created": time.time() - 61}))
    assert store.claim(state) is None
    stale = store.create(print_only=False, org=None)
    stale_path = next(p for p in (tmp_path / "states").iterdir())
    os.utime(stale_path, (time.time() - 120, time.time() - 120))
    store.create(print_only=False, org=None)  # prunes
    assert store.claim(stale) is None
    assert len(list((tmp_path / "states").iterdir())) == 1


# -- credentials -------------------------------------------------------------------------------


def conversion(**overrides: Any) -> dict[str, Any]:
    data = {
        "id": 77,
        "slug": "acme-kaizen",
        "name": "Acme Kaizen",
        "html_url": "https://github.com/apps/acme-kaizen",
        "owner": {"login": "acme"},
        "client_id": "Iv1.abc",
        "client_secret": "cs",
        "webhook_secret": "whs",
        "pem": PEM,
    }
    return {**data, **overrides}


def test_credentials_from_github_s_answer() -> None:
    app = AppCredentials.from_conversion(conversion())
    assert app.install_url == "https://github.com/apps/acme-kaizen/installations/new"
    assert app.owner == "acme"
    assert "KAIZEN_WEBHOOK_SECRET=whs" in app.env_lines()
    with pytest.raises(app_manifest.GitHubUnreachable):
        AppCredentials.from_conversion({"id": 1})


def test_credentials_are_stored_0600_and_never_overwritten(tmp_path: Path) -> None:
    old_umask = os.umask(0)  # even with a permissive umask
    try:
        path = tmp_path / "data" / "github-app.json"
        assert store_credentials(path, {"app_id": 1})
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"app_id": 1}
    assert not store_credentials(path, {"app_id": 2})
    assert json.loads(path.read_text()) == {"app_id": 1}
    assert [p.name for p in path.parent.iterdir()] == ["github-app.json"]  # no temporaries


def stored(data_dir: Path, **record: Any) -> Path:
    path = data_dir / "github-app.json"
    app = AppCredentials.from_conversion(conversion())
    assert store_credentials(path, {**app.stored_record(Settings(data_dir=data_dir)), **record})
    return path


def test_settings_load_the_stored_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored(tmp_path)
    monkeypatch.setenv("KAIZEN_DATA_DIR", str(tmp_path))
    settings = load_settings()
    assert settings.app_id == 77
    assert settings.app_slug == "acme-kaizen"
    assert settings.private_key is not None and settings.private_key.get_secret_value() == PEM
    assert settings.webhook_secret is not None
    assert settings.webhook_secret.get_secret_value() == "whs"
    assert settings.github_configured
    assert not app_manifest.setup_pending(settings)
    assert "whs" in settings.secret_values()


def test_the_environment_wins_over_the_stored_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored(tmp_path)
    monkeypatch.setenv("KAIZEN_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KAIZEN_APP_ID", "5")
    monkeypatch.setenv("KAIZEN_WEBHOOK_SECRET", "from-env")
    settings = load_settings()
    assert settings.app_id == 5
    assert settings.private_key is None  # never another App's key
    assert settings.app_slug == "kaizen"
    assert settings.webhook_secret is not None
    assert settings.webhook_secret.get_secret_value() == "from-env"


def test_without_a_stored_app_setup_is_pending(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.app_id is None
    assert app_manifest.setup_pending(settings)
    assert settings.github_web_url == "https://github.com"
    assert not app_manifest.setup_pending(Settings(data_dir=tmp_path, webhook_secret="s"))


def test_a_stored_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = stored(tmp_path)
    path.chmod(0o644)
    with pytest.raises(SettingsError) as info:
        load_settings(data_dir=tmp_path)
    assert info.value.problems == [
        f"stored App credentials {path} are open to other users (mode 0644); run: chmod 600 {path}"
    ]


def test_a_corrupt_stored_file_is_one_clear_line(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "github-app.json", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"{not json")
    os.close(fd)
    with pytest.raises(SettingsError) as info:
        load_settings(data_dir=tmp_path)
    assert len(info.value.problems) == 1
    assert "github-app.json are not a JSON object" in info.value.problems[0]
