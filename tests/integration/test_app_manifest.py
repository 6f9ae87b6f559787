"""Registering the GitHub App from its manifest: a real ``kaizen serve``, the fake GitHub.

The user's part on github.com (confirming "Create GitHub App") is
``FakeGitHub.create_app_from_manifest``; everything else is the real flow over HTTP: the
setup form, the page that posts the manifest to GitHub, GitHub's redirect back with a
one-time code, its exchange (``POST /app-manifests/{code}/conversions``, checked against
GitHub's OpenAPI description), and the stored credentials authenticating as the App.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from bot.github import GitHubApp
from bot.settings import Settings
from tests.fakes.github_api import FakeGitHub
from tests.helpers import free_port
from tests.integration.procs import kaizen_cmd, kaizen_env, running, wait_http

pytestmark = pytest.mark.slow

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


@dataclass
class Kaizen:
    url: str
    data_dir: Path
    fake: FakeGitHub
    client: httpx.Client

    @property
    def credentials(self) -> Path:
        return self.data_dir / "github-app.json"

    def start_setup(self, **form: str) -> tuple[str, str, dict[str, Any]]:
        """POST the setup form; the auto-submitting page's (action, state, manifest)."""
        answer = self.client.post("/setup", data={"account": "personal", **form})
        assert answer.status_code == 200, answer.text
        assert answer.headers["cache-control"] == "no-store"
        action = html.unescape(_one(r'<form id="to-github" method="post" action="([^"]+)"', answer))
        manifest = json.loads(html.unescape(_one(r'name="manifest" value="([^"]+)"', answer)))
        assert 'document.getElementById("to-github").submit()' in answer.text
        state = parse_qs(urlparse(action).query)["state"][0]
        return action, state, manifest

    def callback(self, code: str | None, state: str | None) -> httpx.Response:
        params = {k: v for k, v in (("code", code), ("state", state)) if v is not None}
        return self.client.get("/setup/callback", params=params)

    def conversions(self) -> int:
        return sum(1 for r in self.fake.requests if r.operation_id == "apps/create-from-manifest")


def _one(pattern: str, answer: httpx.Response) -> str:
    match = re.search(pattern, answer.text, re.S)
    assert match, f"{pattern!r} not in:\n{answer.text}"
    return match.group(1)


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path_factory.mktemp("github")) as gh:
        yield gh


@contextmanager
def serving(fake: FakeGitHub, data_dir: Path, log: Path, **extra: str) -> Iterator[Kaizen]:
    """``kaizen serve`` with no App in its environment (only what is stored, if anything)."""
    port = free_port()
    env = kaizen_env(
        data_dir=str(data_dir),
        github_api_url=fake.base_url,
        github_web_url=fake.web_url,
        **extra,
    )
    with running(kaizen_cmd("serve", "--port", str(port)), env, log) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_http(f"{url}/healthz", proc, log)
        with httpx.Client(base_url=url, timeout=30) as client:
            yield Kaizen(url, data_dir, fake, client)


@pytest.fixture(scope="module")
def shared(fake: FakeGitHub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kaizen]:
    """One Kaizen for the tests that must leave nothing stored (each checks it)."""
    tmp = tmp_path_factory.mktemp("shared")
    with serving(fake, tmp / "data", tmp / "serve.log") as running_kaizen:
        yield running_kaizen


@pytest.fixture
def kaizen(shared: Kaizen) -> Iterator[Kaizen]:
    yield shared
    assert not shared.credentials.exists(), "a test of the shared Kaizen stored credentials"


def test_manifest_flow_end_to_end(fake: FakeGitHub, tmp_path: Path) -> None:
    with serving(fake, tmp_path / "data", tmp_path / "serve.log") as kaizen:
        _manifest_flow(kaizen, fake)


def _manifest_flow(kaizen: Kaizen, fake: FakeGitHub) -> None:
    # / offers the setup form, with the manifest it will send.
    index = kaizen.client.get("/")
    assert index.status_code == 200
    assert "No GitHub App is registered yet" in index.text
    assert '<form id="setup" method="post" action="/setup">' in index.text
    shown = json.loads(html.unescape(_one(r'<pre id="manifest">(.*?)</pre>', index)))
    assert shown["default_permissions"] == PERMISSIONS
    assert shown["hook_attributes"]["url"] == f"{kaizen.url}/webhooks/github"

    # The setup form leads to a page that posts the manifest to github.com at once.
    action, state, manifest = kaizen.start_setup(name="Kaizen E2E")
    assert action == f"{fake.web_url}/settings/apps/new?state={state}"
    assert manifest["name"] == "Kaizen E2E"
    assert manifest["default_permissions"] == PERMISSIONS
    assert manifest["default_events"] == EVENTS
    assert manifest["hook_attributes"] == {"url": f"{kaizen.url}/webhooks/github", "active": True}
    assert manifest["redirect_url"] == f"{kaizen.url}/setup/callback"
    assert manifest["setup_url"] == f"{kaizen.url}/setup/installed"
    assert manifest["url"] == f"{kaizen.url}/"

    # The user confirms on GitHub, which redirects back with a one-time code.
    code = fake.create_app_from_manifest(manifest, owner="alice")
    created = fake.manifest_apps[-1]
    done = kaizen.callback(code, state)
    assert done.status_code == 200, done.text
    assert done.headers["cache-control"] == "no-store"
    assert done.headers["referrer-policy"] == "no-referrer"
    install = html.unescape(_one(r'id="install" href="([^"]+)"', done))
    assert install == f"{fake.web_url}/apps/kaizen-e2e/installations/new"
    assert created["html_url"] == f"{fake.web_url}/apps/kaizen-e2e"
    assert "Restart Kaizen" in done.text
    assert created["pem"].splitlines()[1] not in done.text  # stored, not shown
    assert created["webhook_secret"] not in done.text

    # Stored 0600 in the data dir, and nothing else left behind.
    mode = stat.S_IMODE(kaizen.credentials.stat().st_mode)
    assert mode == 0o600, oct(mode)
    stored = json.loads(kaizen.credentials.read_text())
    assert stored["app_id"] == created["id"]
    assert stored["slug"] == "kaizen-e2e"
    assert stored["private_key"] == created["pem"]
    assert stored["webhook_secret"] == created["webhook_secret"]
    assert stored["client_secret"] == created["client_secret"]
    assert sorted(p.name for p in kaizen.data_dir.glob("*github-app*")) == ["github-app.json"]

    # The stored credentials authenticate as the App (GET /app with a JWT from the key):
    # settings read them from the data dir, with no KAIZEN_APP_ID in sight.
    settings = Settings(data_dir=kaizen.data_dir, github_api_url=fake.base_url)
    assert settings.app_id == created["id"]
    assert settings.app_slug == "kaizen-e2e"
    app = GitHubApp(settings)
    try:
        info = app.app_info()
    finally:
        app.close()
    assert (info["id"], info["slug"]) == (created["id"], "kaizen-e2e")
    assert info["permissions"] == PERMISSIONS
    assert info["owner"]["login"] == "alice"

    # The same callback again: the state was used up; GitHub is not even asked.
    before = kaizen.credentials.read_bytes(), kaizen.credentials.stat().st_mtime_ns
    conversions = kaizen.conversions()
    again = kaizen.callback(code, state)
    assert again.status_code == 400
    assert "setup link is not valid" in again.text
    assert kaizen.conversions() == conversions

    # The used code with a fresh state: GitHub answers 404, nothing is overwritten.
    _, fresh_state, _ = kaizen.start_setup()
    reused = kaizen.callback(code, fresh_state)
    assert reused.status_code == 400
    assert "refused the registration code" in reused.text
    assert "used once and expires after an hour" in reused.text
    assert "Start the registration again" in reused.text
    assert kaizen.conversions() == conversions + 1
    assert (kaizen.credentials.read_bytes(), kaizen.credentials.stat().st_mtime_ns) == before


def test_restarted_kaizen_uses_the_stored_app(fake: FakeGitHub, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with serving(fake, data_dir, tmp_path / "first.log") as first:
        _, state, manifest = first.start_setup(name="Kaizen Restart")
        code = fake.create_app_from_manifest(manifest, owner="octo-org", owner_type="Organization")
        assert first.callback(code, state).status_code == 200
    secret = json.loads((data_dir / "github-app.json").read_text())["webhook_secret"]

    with serving(fake, data_dir, tmp_path / "second.log") as second:
        index = second.client.get("/")
        assert "registered as the GitHub App <code>kaizen-restart</code>" in index.text
        # Deliveries signed with the stored webhook secret are accepted...
        body = json.dumps({"zen": "Keep it simple.", "hook_id": 1}).encode()
        signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {
            "X-GitHub-Event": "ping",
            "X-GitHub-Delivery": "d-1",
            "X-Hub-Signature-256": signature,
            "Content-Type": "application/json",
        }
        assert (
            second.client.post("/webhooks/github", content=body, headers=headers).status_code == 200
        )
        headers["X-Hub-Signature-256"] = "sha256=" + "0" * 64
        assert (
            second.client.post("/webhooks/github", content=body, headers=headers).status_code == 401
        )
        # ...and registering a second App from this Kaizen is switched off.
        refused = second.client.post("/setup", data={"account": "personal"})
        assert refused.status_code == 409
        assert "already configured" in refused.text
        installed = second.client.get("/setup/installed")
        assert "/kaizen help" in installed.text
        assert "restart it" not in installed.text


def test_expired_code_is_refused_and_nothing_stored(kaizen: Kaizen, fake: FakeGitHub) -> None:
    _, state, manifest = kaizen.start_setup(name="Kaizen Expired")
    code = fake.create_app_from_manifest(manifest, owner="alice")
    fake.expire_manifest_code(code)
    answer = kaizen.callback(code, state)
    assert 400 <= answer.status_code < 500
    assert "refused the registration code" in answer.text
    assert "Start the registration again" in answer.text
    assert not kaizen.credentials.exists()


def test_wrong_or_missing_state_is_a_400_and_github_is_not_asked(
    kaizen: Kaizen, fake: FakeGitHub
) -> None:
    # Print mode, so that the final success leaves the shared Kaizen's data dir empty.
    _, state, manifest = kaizen.start_setup(name="Kaizen State", print_only="1")
    code = fake.create_app_from_manifest(manifest, owner="alice")
    conversions = kaizen.conversions()
    # tampered: the last character changed (appending "AA" over the last two was the
    # state itself once in 4,096 runs, when it already ended so)
    tampered = state[:-1] + ("B" if state.endswith("A") else "A")
    for bad in ("not-a-state-kaizen-issued-xyz", "", None, tampered):
        answer = kaizen.callback(code, bad)
        assert answer.status_code == 400, bad
        assert "setup link is not valid" in answer.text
        assert "Start the registration again" in answer.text
    assert kaizen.conversions() == conversions
    assert not kaizen.credentials.exists()
    # The code was never spent: with the right state it still works.
    done = kaizen.callback(code, state)
    assert done.status_code == 200
    assert "Nothing was written to disk" in done.text


def test_missing_code_uses_up_the_state(kaizen: Kaizen) -> None:
    _, state, _ = kaizen.start_setup()
    conversions = kaizen.conversions()
    answer = kaizen.callback(None, state)
    assert answer.status_code == 400
    assert "refused the registration code" in answer.text
    assert kaizen.conversions() == conversions
    assert kaizen.callback("a-code", state).status_code == 400  # the state is gone


def test_print_instead_of_store_writes_nothing(kaizen: Kaizen, fake: FakeGitHub) -> None:
    _, state, manifest = kaizen.start_setup(name="Kaizen Print", print_only="1")
    code = fake.create_app_from_manifest(manifest, owner="alice")
    created = fake.manifest_apps[-1]
    answer = kaizen.callback(code, state)
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    assert html.unescape(_one(r'<pre id="private-key">(.*?)</pre>', answer).strip()) == (
        created["pem"].strip()
    )
    settings_block = html.unescape(_one(r'<pre id="settings">(.*?)</pre>', answer))
    assert f"KAIZEN_APP_ID={created['id']}" in settings_block
    assert f"KAIZEN_WEBHOOK_SECRET={created['webhook_secret']}" in settings_block
    assert "KAIZEN_APP_SLUG=kaizen-print" in settings_block
    assert "Nothing was written to disk" in answer.text
    assert not kaizen.credentials.exists()
    assert sorted(p.name for p in kaizen.data_dir.glob("*github-app*")) == []


def test_organisation_registration_posts_to_the_organisation(
    kaizen: Kaizen, fake: FakeGitHub
) -> None:
    action, state, _ = kaizen.start_setup(account="organization", org="octo-org")
    assert action == f"{fake.web_url}/organizations/octo-org/settings/apps/new?state={state}"
    bad = kaizen.client.post("/setup", data={"account": "organization", "org": "no/such org"})
    assert bad.status_code == 400
    assert "organisation" in bad.text
