"""``bot.github`` against the fake GitHub: tokens, retries, idempotent posts, GHES, paging.

Every test here is also a contract test: the fake checks each request Kaizen's client
sends against GitHub's OpenAPI description and fails on ``stop()`` if one was undocumented.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from github import GithubException
from pydantic import SecretStr
from urllib3.util.retry import Retry

from bot.github import GitHubApp, GitHubError, InstallationClient, Permission, marker
from bot.settings import Settings
from tests.fakes.github_api import FakeGitHub, RecordedRequest, generate_private_key_pem

APP_ID = 4242
OWNER = "octo-org"
REPO = "octo-org/app"
PRIVATE_REPO = "octo-org/internal"
OUTSIDE_REPO = "octo-org/secret"  # same owner, not selected for the installation
FILES = {
    "README.md": "# app\n",
    "src/app.py": "print('héllo')\n",
    ".github/kaizen.yml": "commands:\n  enabled: true\n",
}
# GitHub's documented mapping of a role to the legacy ``permission`` field.
DOCUMENTED_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
}


@pytest.fixture(scope="module")
def pem() -> str:
    """One App key for the module: generating one takes ~0.1 s."""
    return generate_private_key_pem()


def make_settings(fake: FakeGitHub, pem: str, tmp_path: Path) -> Settings:
    return Settings(
        app_id=APP_ID,
        private_key=SecretStr(pem),
        github_api_url=fake.base_url,
        github_seconds_between_requests=0,
        github_seconds_between_writes=0,
        data_dir=tmp_path / "data",
    )


@dataclass
class World:
    fake: FakeGitHub
    app: GitHubApp
    installation_id: int

    @property
    def client(self) -> InstallationClient:
        return self.app.installation(self.installation_id)

    def new_issue(self, title: str = "Something broke") -> int:
        return int(self.fake.open_issue(REPO, title=title, user="alice")["number"])


def populate(fake: FakeGitHub, pem: str) -> int:
    fake.register_app(app_id=APP_ID, slug="kaizen", private_key_pem=pem)
    installation = fake.add_installation(OWNER, repos=[])
    fake.add_repo(REPO, files=FILES, installation_id=installation)
    fake.add_repo(PRIVATE_REPO, files={"a.txt": "a\n"}, private=True, installation_id=installation)
    fake.add_repo(OUTSIDE_REPO, files={"README.md": "# secret\n"})
    for login in ("alice", "mallory"):
        fake.add_user(login)
    fake.add_collaborator(REPO, "alice", "write")
    return installation


@pytest.fixture
def world(tmp_path: Path, pem: str) -> Iterator[World]:
    with FakeGitHub(tmp_path / "github") as fake:
        installation = populate(fake, pem)
        app = GitHubApp(make_settings(fake, pem, tmp_path))
        try:
            yield World(fake, app, installation)
        finally:
            app.close()


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib3's exponential backoff (0, 1, 2, 4, 8 s) only slows these tests down."""
    monkeypatch.setattr(Retry, "get_backoff_time", lambda self: 0.0)


def token_requests(fake: FakeGitHub, installation_id: int) -> list[RecordedRequest]:
    path = f"/app/installations/{installation_id}/access_tokens"
    return [r for r in fake.requests if r.method == "POST" and r.path == path]


def comment_requests(fake: FakeGitHub, number: int, method: str) -> list[RecordedRequest]:
    path = f"/repos/{REPO}/issues/{number}/comments"
    return [r for r in fake.requests if r.method == method and r.path == path]


def installation_tokens(fake: FakeGitHub, since: int = 0) -> list[str]:
    """The distinct installation tokens requests carried, in order of first use."""
    seen: list[str] = []
    for r in fake.requests[since:]:
        auth = r.headers.get("authorization", "")
        credential = auth.partition(" ")[2]
        if credential.startswith("ghs_") and credential not in seen:
            seen.append(credential)
    return seen


# --------------------------------------------------------------------------- tokens, GHES


def test_installation_token_is_requested_once_and_reused(world: World) -> None:
    fake, app = world.fake, world.app
    number = world.new_issue()
    first = app.installation(world.installation_id)
    for _ in range(3):
        client = app.installation(world.installation_id)
        assert client is first
        assert client.get_permission(REPO, "alice") == Permission("write", "write")
        assert client.read_file(REPO, "README.md") == "# app\n"
    first.post_issue_comment(REPO, number, "hello", key="token-reuse")
    assert len(token_requests(fake, world.installation_id)) == 1
    assert len(installation_tokens(fake)) == 1
    assert all(r.status < 400 for r in fake.requests)


def test_github_enterprise_server_api_prefix(tmp_path: Path, pem: str) -> None:
    with FakeGitHub(tmp_path / "github", api_prefix="/api/v3") as fake:
        assert fake.base_url.endswith("/api/v3")
        installation = populate(fake, pem)
        number = int(fake.open_issue(REPO, title="On GHES", user="alice")["number"])
        app = GitHubApp(make_settings(fake, pem, tmp_path))
        try:
            info = app.app_info()
            assert (info["id"], info["slug"]) == (APP_ID, "kaizen")
            client = app.installation(installation)
            comment_id = client.post_issue_comment(REPO, number, "hi from GHES", key="ghes:1")
        finally:
            app.close()
        [comment] = fake.issue_comments(REPO, number)
        assert comment["id"] == comment_id
        assert comment["body"] == f"hi from GHES\n\n{marker('ghes:1')}"
        assert comment["user"]["login"] == "kaizen[bot]"
        assert fake.requests and all(r.status < 400 for r in fake.requests)


def test_forgotten_installation_gets_a_fresh_client_and_token(world: World) -> None:
    fake, app = world.fake, world.app
    before = app.installation(world.installation_id)
    before.get_permission(REPO, "alice")
    app.forget_installation(world.installation_id)
    app.forget_installation(999_999)  # unknown: nothing to forget, no error
    after = app.installation(world.installation_id)
    assert after is not before
    assert after.get_permission(REPO, "alice") == Permission("write", "write")
    assert len(token_requests(fake, world.installation_id)) == 2
    assert len(installation_tokens(fake)) == 2


def test_wrong_private_key_is_a_401(tmp_path: Path, pem: str) -> None:
    with FakeGitHub(tmp_path / "github") as fake:
        populate(fake, pem)
        app = GitHubApp(make_settings(fake, generate_private_key_pem(), tmp_path))
        try:
            with pytest.raises((GithubException, GitHubError)) as raised:
                app.app_info()
        finally:
            app.close()
        assert getattr(raised.value, "status", None) == 401
        assert [(r.method, r.path, r.status) for r in fake.requests] == [("GET", "/app", 401)]


# --------------------------------------------------------------------------- permissions


@pytest.mark.parametrize("role", ["admin", "maintain", "write", "triage", "read"])
def test_permission_of_a_collaborator(world: World, role: str) -> None:
    world.fake.add_user("carol")
    world.fake.add_collaborator(REPO, "carol", role)
    permission = world.client.get_permission(REPO, "carol")
    assert permission == Permission(DOCUMENTED_PERMISSION[role], role)
    answer = world.fake.requests[-1].response
    assert (answer["permission"], answer["role_name"]) == (permission.permission, role)


@pytest.mark.parametrize(
    ("repo", "user", "expected"),
    [
        (REPO, "mallory", Permission("read", "read")),  # anyone can read a public repo
        (PRIVATE_REPO, "mallory", Permission("none", "none")),
        (REPO, "nobody-by-that-name", Permission("none", None)),  # GitHub answers 404
    ],
    ids=["public-repo", "private-repo", "unknown-user"],
)
def test_permission_of_a_non_collaborator(
    world: World, repo: str, user: str, expected: Permission
) -> None:
    assert world.client.get_permission(repo, user) == expected


# --------------------------------------------------------------------------- read_file


def test_read_file_returns_content_of_an_existing_file(world: World) -> None:
    client = world.client
    assert client.read_file(REPO, "src/app.py") == "print('héllo')\n"
    assert client.read_file(REPO, ".github/kaizen.yml") == FILES[".github/kaizen.yml"]


@pytest.mark.parametrize(
    ("repo", "path"),
    [(REPO, "missing.md"), (REPO, "src"), (OUTSIDE_REPO, "README.md"), ("nobody/none", "x")],
    ids=["missing-file", "directory", "repo-outside-installation", "no-such-repo"],
)
def test_read_file_returns_none_when_there_is_no_file(world: World, repo: str, path: str) -> None:
    assert world.client.read_file(repo, path) is None
    last = world.fake.requests[-1]
    assert last.path == f"/repos/{repo}/contents/{path}"
    assert last.status == (200 if path == "src" else 404)


def test_read_file_with_url_special_characters_in_the_path(world: World) -> None:
    world.fake.put_file(REPO, "notes", "the notes\n")
    world.fake.put_file(REPO, "notes#draft.md", "the draft\n")
    world.fake.put_file(REPO, "why?.md", "because\n")
    client = world.client
    assert client.read_file(REPO, "notes#draft.md") == "the draft\n"
    assert client.read_file(REPO, "why?.md") == "because\n"


# --------------------------------------------------------------------------- posting once


def test_502_on_post_is_retried_into_exactly_one_comment(world: World) -> None:
    fake = world.fake
    number = world.new_issue()
    fake.inject_error("POST", rf"/repos/{REPO}/issues/{number}/comments$", status=502)
    comment_id = world.client.post_issue_comment(REPO, number, "Thanks!", key="reply:502")
    [comment] = fake.issue_comments(REPO, number)
    assert comment["id"] == comment_id
    assert comment["body"] == f"Thanks!\n\n{marker('reply:502')}"
    assert [r.status for r in comment_requests(fake, number, "POST")] == [502, 201]
    assert len(comment_requests(fake, number, "GET")) == 2  # looked before each attempt


def test_a_rerun_finds_the_comment_already_posted_with_the_same_key(world: World) -> None:
    """A task run again (worker lost mid-task, late ack) must not post a second reply."""
    fake = world.fake
    number = world.new_issue()
    client = world.client
    existing = client.post_issue_comment(REPO, number, "First answer", key="reply:dup")
    again = client.post_issue_comment(REPO, number, "First answer", key="reply:dup")
    assert again == existing
    assert [c["id"] for c in fake.issue_comments(REPO, number)] == [existing]
    assert [r.status for r in comment_requests(fake, number, "POST")] == [201]


def test_search_matches_the_whole_key_not_a_prefix(world: World) -> None:
    fake = world.fake
    number = world.new_issue()
    client = world.client
    other = client.post_issue_comment(REPO, number, "For delivery 1", key="reply:1-extra")
    fake.inject_error("POST", rf"/repos/{REPO}/issues/{number}/comments$", status=502)
    mine = client.post_issue_comment(REPO, number, "For delivery 2", key="reply:1")
    assert mine != other
    assert [c["id"] for c in fake.issue_comments(REPO, number)] == [other, mine]


def test_secondary_rate_limit_on_post_is_waited_out(world: World) -> None:
    fake = world.fake
    number = world.new_issue()
    client = world.client
    client.get_permission(REPO, "alice")  # the token is in hand before the clock starts
    fake.inject_secondary_rate_limit(
        "POST", rf"/repos/{REPO}/issues/{number}/comments$", retry_after=1
    )
    started = time.monotonic()
    comment_id = client.post_issue_comment(REPO, number, "Patience", key="reply:slow")
    assert time.monotonic() - started >= 1.0
    assert [c["id"] for c in fake.issue_comments(REPO, number)] == [comment_id]
    assert [r.status for r in comment_requests(fake, number, "GET")] == [200, 200]
    assert [r.status for r in comment_requests(fake, number, "POST")] == [403, 201]


def test_primary_rate_limit_on_post_waits_for_the_reset(world: World) -> None:
    fake = world.fake
    number = world.new_issue()
    client = world.client
    client.get_permission(REPO, "alice")  # the token is in hand before the limit hits
    fake.set_rate_limit(remaining=0, reset_in=1)
    comment_id = client.post_issue_comment(REPO, number, "Later", key="reply:primary")
    assert [c["id"] for c in fake.issue_comments(REPO, number)] == [comment_id]
    assert [r.status for r in comment_requests(fake, number, "GET")] == [403, 200]
    assert [r.status for r in comment_requests(fake, number, "POST")] == [201]


def test_post_that_keeps_failing_raises_github_error(world: World) -> None:
    fake = world.fake
    number = world.new_issue()
    fake.inject_secondary_rate_limit(
        "POST", rf"/repos/{REPO}/issues/{number}/comments$", retry_after=0, times=10
    )
    with pytest.raises(GitHubError) as raised:
        world.client.post_issue_comment(REPO, number, "Never", key="reply:never")
    assert raised.value.status == 403
    assert len(comment_requests(fake, number, "POST")) == 5
    assert fake.issue_comments(REPO, number) == []


# --------------------------------------------------------------------------- GET retries, errors


def test_502_on_get_is_retried_by_pygithub(world: World) -> None:
    fake = world.fake
    path = f"/repos/{REPO}/collaborators/alice/permission"
    fake.inject_error("GET", f"{path}$", status=502)
    assert world.client.get_permission(REPO, "alice") == Permission("write", "write")
    assert [r.status for r in fake.requests if r.path == path] == [502, 200]


@pytest.mark.usefixtures("no_backoff")
def test_get_that_keeps_failing_raises_github_error(world: World) -> None:
    fake = world.fake
    path = f"/repos/{REPO}/collaborators/alice/permission"
    fake.inject_error("GET", f"{path}$", status=502, times=10)
    with pytest.raises(GitHubError) as raised:
        world.client.get_permission(REPO, "alice")
    assert raised.value.status == 502
    assert [r.status for r in fake.requests if r.path == path] == [502] * 6


def test_post_to_a_missing_issue_fails_at_once(world: World) -> None:
    fake = world.fake
    with pytest.raises(GitHubError) as raised:
        world.client.post_issue_comment(REPO, 999, "Hello?", key="reply:404")
    assert raised.value.status == 404
    assert [r.status for r in comment_requests(fake, 999, "GET")] == [404]
    assert comment_requests(fake, 999, "POST") == []


def test_422_on_post_fails_at_once(world: World) -> None:
    fake = world.fake
    number = world.new_issue()
    fake.inject_error(
        "POST",
        rf"/repos/{REPO}/issues/{number}/comments$",
        status=422,
        body={"message": "Validation Failed", "documentation_url": "https://docs.github.com"},
    )
    with pytest.raises(GitHubError, match="Validation Failed") as raised:
        world.client.post_issue_comment(REPO, number, "Hello", key="reply:422")
    assert raised.value.status == 422
    assert [r.status for r in comment_requests(fake, number, "POST")] == [422]
    assert [r.status for r in comment_requests(fake, number, "GET")] == [200]
    assert fake.issue_comments(REPO, number) == []


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        (f"/repos/{REPO}/collaborators/alice/permission", 422, "Validation Failed"),
        (f"/repos/{REPO}/contents/README.md", 422, "Validation Failed"),
        (f"/repos/{REPO}/contents/README.md", 403, "Resource not accessible by integration"),
    ],
    ids=["permission-422", "contents-422", "contents-403"],
)
def test_non_transient_error_on_get_fails_at_once(
    world: World, path: str, status: int, message: str
) -> None:
    fake = world.fake
    fake.inject_error(
        "GET",
        f"{path}$",
        status=status,
        body={"message": message, "documentation_url": "https://docs.github.com"},
    )
    client = world.client
    with pytest.raises(GitHubError, match=message) as raised:
        if "/permission" in path:
            client.get_permission(REPO, "alice")
        else:
            client.read_file(REPO, "README.md")
    assert raised.value.status == status
    assert [r.status for r in fake.requests if r.path == path] == [status]


# --------------------------------------------------------------------------- deliveries


class Receiver:
    """A webhook endpoint that answers 202 and remembers each X-GitHub-Delivery."""

    def __init__(self) -> None:
        self.guids: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.guids.append(self.headers["X-GitHub-Delivery"])
                self.send_response(202)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/webhooks/github"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


def test_iter_deliveries_follows_the_cursor_and_redeliver_resends(
    world: World, receiver: Receiver
) -> None:
    fake, app = world.fake, world.app
    fake.set_webhook(receiver.url, "hook-secret")
    number = world.new_issue()
    for i in range(4):
        fake.add_issue_comment(REPO, number, f"comment {i}", user="alice")
    fake.wait_for_webhooks()
    expected = sorted((d["id"] for d in fake.deliveries), reverse=True)
    assert len(expected) == 5

    listed = list(app.iter_deliveries(per_page=2))

    assert [d["id"] for d in listed] == expected  # newest first, each once
    pages = [r for r in fake.requests if r.path == "/app/hook/deliveries"]
    assert len(pages) == 3
    assert "cursor" not in pages[0].query
    assert all(p.query.get("cursor") and p.query["per_page"] == "2" for p in pages[1:])

    oldest = listed[-1]
    app.redeliver(oldest["id"])
    fake.wait_for_webhooks()
    latest = fake.deliveries[-1]
    assert (latest["guid"], latest["redelivery"]) == (oldest["guid"], True)
    assert receiver.guids.count(oldest["guid"]) == 2
    newest = next(app.iter_deliveries())  # GitHub lists the redelivery as a new attempt
    assert (newest["guid"], newest["redelivery"]) == (oldest["guid"], True)
