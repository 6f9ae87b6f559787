"""Tests of the fake GitHub itself, driven through real clients (PyGithub, httpx, git).

Why through real clients: the fake is only worth something if the libraries Kaizen uses
accept its answers as they accept GitHub's, and if it refuses what GitHub refuses (bad
JWTs, review comments outside the diff, bodies that do not match the description).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import github
import httpx
import jwt
import pytest
from github.PullRequest import ReviewComment

from tests.fakes.github_api import (
    FakeGitHub,
    GitHubAPIError,
    generate_private_key_pem,
    running_fake_github,
)
from tests.fakes.github_git import Symlink
from tests.fakes.github_openapi import SUBSET_PATH, OpenAPIContract

APP_ID = 4242
SLUG = "kaizen-test"
REPO = "acme/shop"
APP_PY = "".join(f"line{i} = {i}\n" for i in range(1, 41))
FILES = {"app.py": APP_PY, "lib/util.py": "def f():\n    return 1\n", "README.md": "# shop\n"}
SECRET = "hook-secret"


@pytest.fixture(scope="module")
def app_pem() -> str:
    """One RSA key for the module: generating one takes ~0.1 s."""
    return generate_private_key_pem()


@dataclass
class World:
    gh: FakeGitHub
    pem: str
    installation_id: int
    tmp: Path


@pytest.fixture
def world(tmp_path: Path, app_pem: str) -> Iterator[World]:
    with running_fake_github(tmp_path) as gh:
        gh.register_app(app_id=APP_ID, slug=SLUG, private_key_pem=app_pem)
        inst = gh.add_installation("acme", repos=[REPO])
        gh.add_repo(REPO, files=FILES, installation_id=inst)
        gh.add_collaborator(REPO, "alice", "maintain")
        gh.add_collaborator(REPO, "tina", "triage")
        gh.add_user("mallory")
        yield World(gh, app_pem, inst, tmp_path)


def app_jwt(pem: str, *, iss: str = str(APP_ID), iat: int = -60, exp: int = 540) -> str:
    now = int(time.time())
    return jwt.encode({"iat": now + iat, "exp": now + exp, "iss": iss}, pem, algorithm="RS256")


def client(gh: FakeGitHub, token: str) -> github.Github:
    """PyGithub as Kaizen would build it, without client-side throttling or retries."""
    return github.Github(
        auth=github.Auth.Token(token),
        base_url=gh.base_url,
        seconds_between_requests=0,
        seconds_between_writes=0,
        retry=None,
    )


def app_client(gh: FakeGitHub, pem: str) -> github.GithubIntegration:
    """PyGithub authenticated as the App (JWT), without client-side throttling."""
    return github.GithubIntegration(
        auth=github.Auth.AppAuth(APP_ID, pem),
        base_url=gh.base_url,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )


def token_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}", "Accept": "application/vnd.github+json"}


def open_feature_pr(gh: FakeGitHub) -> dict[str, Any]:
    """PR #1: changes line5, deletes line20, adds a line after line40."""
    lines = APP_PY.splitlines(keepends=True)
    lines[4] = "line5 = 'five'\n"
    del lines[19]
    lines.append("line41 = 41\n")
    return gh.open_pull_request(
        REPO,
        head="feature",
        changes={"app.py": "".join(lines), "new.py": "x = 1\n"},
        title="Feature",
        body="Adds things",
        user="alice",
    )


class Receiver:
    """A tiny webhook endpoint: records deliveries and answers the statuses it is given."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.received: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append(({k.lower(): v for k, v in self.headers.items()}, raw))
                status = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/webhook"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def events(self) -> list[str]:
        out = []
        for headers, raw in self.received:
            action = json.loads(raw).get("action")
            out.append(headers["x-github-event"] + (f".{action}" if action else ""))
        return out

    def payloads(self, event: str) -> list[dict[str, Any]]:
        return [json.loads(raw) for h, raw in self.received if h["x-github-event"] == event]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


# --------------------------------------------------------------------------- App auth


def test_app_jwt_and_installation_token_through_pygithub(world: World) -> None:
    gh = world.gh
    integration = app_client(gh, world.pem)
    installations = list(integration.get_installations())
    assert [i.id for i in installations] == [world.installation_id]
    assert integration.get_repo_installation("acme", "shop").id == world.installation_id
    assert integration.get_app().slug == SLUG

    auth = integration.get_access_token(world.installation_id)
    assert auth.token.startswith("ghs_") and len(auth.token) == 40
    assert 3500 < (auth.expires_at.timestamp() - time.time()) <= 3600
    assert auth.permissions["pull_requests"] == "write"

    repo = client(gh, auth.token).get_repo(REPO)
    assert repo.default_branch == "main"
    assert repo.get_contents("app.py").decoded_content.decode() == APP_PY  # type: ignore[union-attr]
    assert [c.path for c in repo.get_contents("lib")] == ["lib/util.py"]  # type: ignore[union-attr]
    with pytest.raises(github.UnknownObjectException):
        repo.get_contents("missing.py")
    assert repo.get_collaborator_permission("alice") == "write"  # maintain -> write
    assert repo.get_collaborator_permission("tina") == "read"  # triage -> read
    assert repo.get_collaborator_permission("mallory") == "read"  # public repo
    raw = httpx.get(
        f"{gh.base_url}/repos/{REPO}/collaborators/alice/permission",
        headers=token_headers(auth.token),
    ).json()
    assert (raw["permission"], raw["role_name"]) == ("write", "maintain")


def test_bad_jwts_are_rejected_with_githubs_401(world: World) -> None:
    gh = world.gh
    other_key = generate_private_key_pem()
    cases = {
        "garbage.not.ajwt": "A JSON web token could not be decoded",
        app_jwt(other_key): "A JSON web token could not be decoded",
        app_jwt(world.pem, iat=-60, exp=900): "'Expiration time' claim ('exp') is too far",
        app_jwt(world.pem, iat=-700, exp=-10): "'Expiration time' claim ('exp') must be",
        app_jwt(world.pem, iss="999"): "Integration not found",
    }
    for token, message in cases.items():
        resp = httpx.get(f"{gh.base_url}/app", headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 401, token
        assert resp.json()["message"].startswith(message)
        assert "documentation_url" in resp.json()
    ok = httpx.get(f"{gh.base_url}/app", headers={"Authorization": f"Bearer {app_jwt(world.pem)}"})
    assert ok.status_code == 200 and ok.json()["id"] == APP_ID
    # an installation token is not a JWT
    token = gh.create_installation_token(world.installation_id)
    resp = httpx.get(f"{gh.base_url}/app/installations", headers=token_headers(token))
    assert resp.status_code == 401


def test_installation_token_scope_expiry_and_permissions(world: World) -> None:
    gh = world.gh
    other = gh.add_installation("globex", repos=None)
    gh.add_repo("globex/secret", private=True)
    token = gh.create_installation_token(world.installation_id)
    assert httpx.get(f"{gh.base_url}/repos/{REPO}", headers=token_headers(token)).status_code == 200
    # another installation's repository does not exist for this token
    resp = httpx.get(f"{gh.base_url}/repos/globex/secret", headers=token_headers(token))
    assert resp.status_code == 404 and resp.json()["message"] == "Not Found"
    other_token = gh.create_installation_token(other)
    assert (
        httpx.get(f"{gh.base_url}/repos/globex/secret", headers=token_headers(other_token))
    ).status_code == 200
    # unknown and expired tokens: 401 Bad credentials
    resp = httpx.get(f"{gh.base_url}/repos/{REPO}", headers=token_headers("ghs_" + "x" * 36))
    assert resp.status_code == 401 and resp.json()["message"] == "Bad credentials"
    gh.expire_token(token)
    assert httpx.get(f"{gh.base_url}/repos/{REPO}", headers=token_headers(token)).status_code == 401
    # a token narrowed to read-only issues cannot comment
    jwt_headers = {"Authorization": f"Bearer {app_jwt(world.pem)}"}
    narrowed = httpx.post(
        f"{gh.base_url}/app/installations/{world.installation_id}/access_tokens",
        headers=jwt_headers,
        json={"permissions": {"issues": "read", "metadata": "read"}, "repositories": ["shop"]},
    )
    assert narrowed.status_code == 201
    body = narrowed.json()
    assert body["repository_selection"] == "selected"
    assert [r["full_name"] for r in body["repositories"]] == [REPO]
    gh.open_issue(REPO, title="Bug", user="alice")
    resp = httpx.post(
        f"{gh.base_url}/repos/{REPO}/issues/1/comments",
        headers=token_headers(body["token"]),
        json={"body": "hi"},
    )
    assert resp.status_code == 403
    assert resp.json()["message"] == "Resource not accessible by integration"
    assert "issues=write" in resp.headers["x-accepted-github-permissions"]


# --------------------------------------------------------------------------- contract


def test_undocumented_route_is_404_and_a_contract_error(world: World) -> None:
    gh = world.gh
    token = gh.create_installation_token(world.installation_id)
    resp = httpx.get(f"{gh.base_url}/repos/{REPO}/issues/1/timeline", headers=token_headers(token))
    assert resp.status_code == 404
    resp = httpx.put(f"{gh.base_url}/repos/{REPO}/pulls/1", headers=token_headers(token))
    assert resp.status_code == 404
    assert len(gh.contract_errors) == 2
    assert "GET /repos/acme/shop/issues/1/timeline" in gh.contract_errors[0]
    assert "method not documented" in gh.contract_errors[1]
    gh.clear_contract_errors()


def test_invalid_body_is_422_in_githubs_words_and_a_contract_error(world: World) -> None:
    gh = world.gh
    gh.open_issue(REPO, title="Bug", user="alice")
    token = gh.create_installation_token(world.installation_id)
    url = f"{gh.base_url}/repos/{REPO}/issues/1/comments"
    resp = httpx.post(url, headers=token_headers(token), json={"bdy": "typo"})
    assert resp.status_code == 422
    assert resp.json()["message"] == (
        'Invalid request.\n\n"body" wasn\'t supplied.\n"bdy" is not a permitted key.'
    )
    resp = httpx.post(url, headers=token_headers(token), json={"body": 5})
    assert resp.json()["message"] == "Invalid request.\n\nFor 'properties/body', 5 is not a string."
    resp = httpx.post(url, headers=token_headers(token))
    assert resp.json()["message"] == (
        "Invalid request.\n\nFor 'links/0/schema', nil is not an object."
    )
    resp = httpx.post(url, headers=token_headers(token), content=b"{not json")
    assert resp.status_code == 400 and resp.json()["message"] == "Problems parsing JSON"
    assert len(gh.contract_errors) == 3
    assert all("invalid request body" in e for e in gh.contract_errors)
    assert gh.issue_comments(REPO, 1) == []
    gh.clear_contract_errors()


def test_strict_stop_fails_on_contract_errors(tmp_path: Path) -> None:
    gh = FakeGitHub(tmp_path)
    gh.start()
    httpx.get(f"{gh.base_url}/no/such/route")
    with pytest.raises(AssertionError, match="no documented operation"):
        gh.stop()


def test_subset_is_self_contained() -> None:
    """Every reference in the committed subset resolves, without ../shared."""
    document = json.loads(SUBSET_PATH.read_text())
    text = json.dumps(document)
    contract = OpenAPIContract(document)
    for ref in set(part.split('"')[0] for part in text.split('"$ref": "')[1:]):
        assert contract.resolve({"$ref": ref}) is not None
    templates = {(op.method, op.template) for op in contract.operations}
    assert ("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews") in templates


# --------------------------------------------------------------------------- pull requests


def test_pull_request_diff_files_and_commits(world: World) -> None:
    gh = world.gh
    pr = open_feature_pr(gh)
    token = gh.create_installation_token(world.installation_id)
    pull = client(gh, token).get_repo(REPO).get_pull(pr["number"])
    assert (pull.additions, pull.deletions, pull.changed_files) == (3, 2, 2)
    files = {f.filename: f for f in pull.get_files()}
    assert files["new.py"].status == "added"
    assert "+line41 = 41" in files["app.py"].patch
    assert files["app.py"].patch.startswith("@@ -2,7 +2,7 @@")
    assert [c.commit.message for c in pull.get_commits()] == ["Feature"]
    for accept in ("application/vnd.github.diff", "application/vnd.github.v3.diff"):
        resp = httpx.get(
            f"{gh.base_url}/repos/{REPO}/pulls/{pr['number']}",
            headers={**token_headers(token), "Accept": accept},
        )
        assert resp.status_code == 200
        assert resp.text.startswith("diff --git a/app.py b/app.py\n")
        assert "+line5 = 'five'" in resp.text
    compare = httpx.get(
        f"{gh.base_url}/repos/{REPO}/compare/main...feature", headers=token_headers(token)
    ).json()
    assert (compare["status"], compare["ahead_by"]) == ("ahead", 1)
    ref = httpx.get(
        f"{gh.base_url}/repos/{REPO}/git/ref/heads/feature", headers=token_headers(token)
    ).json()
    assert ref["object"]["sha"] == pr["head"]["sha"]


def test_file_contents_over_1_mb_are_refused_as_github_does(world: World) -> None:
    gh = world.gh
    small, big = "x = 1\n" * 10, "x = 1\n" * 200_000  # 60 B and 1.2 MB
    pr = gh.open_pull_request(
        REPO, head="big", changes={"small.py": small, "big.py": big}, title="Big", user="alice"
    )
    token = gh.create_installation_token(world.installation_id)

    def contents(path: str) -> httpx.Response:
        return httpx.get(
            f"{gh.base_url}/repos/{REPO}/contents/{path}",
            params={"ref": pr["head"]["sha"]},
            headers=token_headers(token),
        )

    ok = contents("small.py")
    assert ok.status_code == 200 and base64.b64decode(ok.json()["content"]).decode() == small
    refused = contents("big.py")
    assert refused.status_code == 403
    assert refused.json()["errors"] == [{"resource": "Blob", "field": "data", "code": "too_large"}]
    assert refused.json()["message"].startswith("This API returns blobs up to 1 MB in size.")


def test_a_symlink_to_a_file_is_answered_with_the_file_as_github_does(world: World) -> None:
    gh = world.gh
    changes = {"alias.py": Symlink("lib/util.py"), "dangling": Symlink("../outside")}
    pr = gh.open_pull_request(REPO, head="links", changes=changes, title="L", user="alice")
    token = gh.create_installation_token(world.installation_id)

    def contents(path: str) -> dict[str, Any]:
        return httpx.get(
            f"{gh.base_url}/repos/{REPO}/contents/{path}",
            params={"ref": pr["head"]["sha"]},
            headers=token_headers(token),
        ).json()

    followed = contents("alias.py")
    assert (followed["type"], followed["path"]) == ("file", "lib/util.py")
    assert base64.b64decode(followed["content"]).decode() == FILES["lib/util.py"]
    link = contents("dangling")
    assert (link["type"], link["target"]) == ("symlink", "../outside")


def test_review_with_a_line_outside_the_diff_is_422_and_creates_nothing(world: World) -> None:
    gh = world.gh
    pr = open_feature_pr(gh)
    pull = (
        client(gh, gh.create_installation_token(world.installation_id))
        .get_repo(REPO)
        .get_pull(pr["number"])
    )
    good: ReviewComment = {"path": "app.py", "line": 5, "body": "nice"}
    with pytest.raises(github.GithubException) as caught:
        pull.create_review(
            body="Review",
            event="COMMENT",
            comments=[good, {"path": "app.py", "line": 30, "body": "x"}],
        )
    assert caught.value.status == 422
    assert caught.value.data["message"] == "Unprocessable Entity"
    assert caught.value.data["errors"] == ["Line could not be resolved"]
    with pytest.raises(github.GithubException) as caught:
        pull.create_review(event="COMMENT", comments=[{"path": "nope.py", "line": 1, "body": "x"}])
    assert caught.value.data["errors"] == ["Path could not be resolved"]
    assert gh.reviews(REPO, pr["number"]) == [] and gh.review_comments(REPO, pr["number"]) == []

    review = pull.create_review(
        body="Review",
        event="COMMENT",
        comments=[
            good,
            {"path": "app.py", "line": 20, "side": "LEFT", "body": "why delete?"},
            {"path": "app.py", "start_line": 4, "line": 6, "body": "range"},
            {"path": "new.py", "position": 1, "body": "by position"},
        ],
    )
    assert review.state == "COMMENTED"
    comments = {c["body"]: c for c in gh.review_comments(REPO, pr["number"])}
    assert comments["nice"]["diff_hunk"].endswith("+line5 = 'five'")
    assert comments["why delete?"]["side"] == "LEFT"
    assert (comments["range"]["start_line"], comments["range"]["line"]) == (4, 6)
    assert comments["by position"]["line"] == 1
    assert all(c["user"]["login"] == f"{SLUG}[bot]" for c in comments.values())
    assert all(c["pull_request_review_id"] == review.id for c in comments.values())


def test_single_review_comment_outside_the_diff_is_422(world: World) -> None:
    gh = world.gh
    pr = open_feature_pr(gh)
    token = gh.create_installation_token(world.installation_id)
    url = f"{gh.base_url}/repos/{REPO}/pulls/{pr['number']}/comments"
    body = {"body": "x", "commit_id": pr["head"]["sha"], "path": "app.py", "line": 30}
    resp = httpx.post(url, headers=token_headers(token), json=body)
    assert resp.status_code == 422
    error = resp.json()["errors"][0]
    assert resp.json()["message"] == "Validation Failed"
    assert (error["resource"], error["field"]) == (
        "PullRequestReviewComment",
        "pull_request_review_thread.line",
    )
    resp = httpx.post(url, headers=token_headers(token), json={**body, "commit_id": "0" * 40})
    assert resp.json()["errors"][0]["field"] == "pull_request_review_thread.end_commit_oid"
    resp = httpx.post(url, headers=token_headers(token), json={**body, "line": 40})
    assert resp.status_code == 201
    created = resp.json()
    assert created["line"] == 40 and created["side"] == "RIGHT"
    assert created["performed_via_github_app"]["slug"] == SLUG
    reply = httpx.post(
        f"{url}/{created['id']}/replies", headers=token_headers(token), json={"body": "again"}
    )
    assert reply.status_code == 201 and reply.json()["in_reply_to_id"] == created["id"]


def test_push_moves_comment_anchors_or_outdates_them(world: World) -> None:
    gh = world.gh
    pr = open_feature_pr(gh)
    token = gh.create_installation_token(world.installation_id)
    url = f"{gh.base_url}/repos/{REPO}/pulls/{pr['number']}/comments"
    sha = pr["head"]["sha"]
    for line in (5, 40):
        body = {"body": f"on {line}", "commit_id": sha, "path": "app.py", "line": line}
        assert httpx.post(url, headers=token_headers(token), json=body).status_code == 201
    current = gh.file_content(REPO, "app.py", "feature")
    assert current is not None
    lines = current.splitlines(keepends=True)
    lines[4] = "line5 = 'FIVE'\n"  # the commented line changes: outdated
    new = "header = 0\n" + "".join(lines)  # everything else moves down one line
    gh.push_to_pull_request(REPO, pr["number"], {"app.py": new}, user="alice")
    after = {c["body"]: c for c in gh.review_comments(REPO, pr["number"])}
    assert after["on 5"]["line"] is None and after["on 5"]["position"] is None
    assert after["on 5"]["original_line"] == 5
    assert after["on 40"]["line"] == 41 and after["on 40"]["original_line"] == 40


def test_pagination_link_headers_and_pygithub_iteration(world: World) -> None:
    gh = world.gh
    gh.open_issue(REPO, title="Bug", user="alice")
    for i in range(5):
        gh.add_issue_comment(REPO, 1, f"c{i}", user="alice")
    token = gh.create_installation_token(world.installation_id)
    resp = httpx.get(
        f"{gh.base_url}/repos/{REPO}/issues/1/comments",
        params={"per_page": 2, "page": 2},
        headers=token_headers(token),
    )
    assert [c["body"] for c in resp.json()] == ["c2", "c3"]
    links = httpx.Response(200, headers={"link": resp.headers["link"]}).links
    assert set(links) == {"prev", "next", "last", "first"}
    assert "page=3" in links["next"]["url"] and links["next"]["url"].startswith(gh.base_url)
    g = github.Github(
        auth=github.Auth.Token(token),
        base_url=gh.base_url,
        per_page=2,
        retry=None,
        seconds_between_requests=0,
    )
    bodies = [c.body for c in g.get_repo(REPO).get_issue(1).get_comments()]
    assert bodies == [f"c{i}" for i in range(5)]


def test_reactions_have_no_webhook_and_roll_up(world: World, receiver: Receiver) -> None:
    gh = world.gh
    gh.set_webhook(receiver.url, SECRET)
    gh.open_issue(REPO, title="Bug", user="alice")
    token = gh.create_installation_token(world.installation_id)
    comment = client(gh, token).get_repo(REPO).get_issue(1).create_comment("fix incoming")
    gh.add_reaction("issue_comment", REPO, comment.id, "+1", user="alice")
    gh.add_reaction("issue_comment", REPO, comment.id, "+1", user="alice")  # idempotent
    gh.add_reaction("issue_comment", REPO, comment.id, "-1", user="mallory")
    gh.wait_for_webhooks()
    assert receiver.events() == ["issues.opened", "issue_comment.created"]
    [stored] = gh.issue_comments(REPO, 1)
    assert stored["reactions"]["+1"] == 1 and stored["reactions"]["total_count"] == 2
    listed = httpx.get(
        f"{gh.base_url}/repos/{REPO}/issues/comments/{comment.id}/reactions",
        params={"content": "+1"},
        headers=token_headers(token),
    ).json()
    assert [r["user"]["login"] for r in listed] == ["alice"]


# --------------------------------------------------------------------------- faults


def test_injected_error_then_recovery(world: World) -> None:
    gh = world.gh
    token = gh.create_installation_token(world.installation_id)
    gh.inject_error("GET", r"^/repos/acme/shop$", status=502, times=2)
    url = f"{gh.base_url}/repos/{REPO}"
    assert [httpx.get(url, headers=token_headers(token)).status_code for _ in range(3)] == [
        502,
        502,
        200,
    ]


def test_secondary_rate_limit_has_retry_after(world: World) -> None:
    gh = world.gh
    token = gh.create_installation_token(world.installation_id)
    gh.open_issue(REPO, title="Bug", user="alice")
    gh.inject_secondary_rate_limit("POST", r"/issues/\d+/comments$", retry_after=7)
    url = f"{gh.base_url}/repos/{REPO}/issues/1/comments"
    resp = httpx.post(url, headers=token_headers(token), json={"body": "hi"})
    assert resp.status_code == 403
    assert resp.headers["retry-after"] == "7"
    assert resp.json()["message"].startswith("You have exceeded a secondary rate limit")
    assert gh.issue_comments(REPO, 1) == []
    assert httpx.post(url, headers=token_headers(token), json={"body": "hi"}).status_code == 201


def test_primary_rate_limit_headers_and_exhaustion(world: World) -> None:
    gh = world.gh
    token = gh.create_installation_token(world.installation_id)
    gh.set_rate_limit(remaining=1, reset_in=60)
    url = f"{gh.base_url}/repos/{REPO}"
    first = httpx.get(url, headers=token_headers(token))
    assert first.status_code == 200
    assert first.headers["x-ratelimit-remaining"] == "0"
    assert first.headers["x-ratelimit-resource"] == "core"
    assert int(first.headers["x-ratelimit-reset"]) >= int(time.time()) + 59
    assert first.headers["x-github-request-id"]
    second = httpx.get(url, headers=token_headers(token))
    assert second.status_code == 403
    assert second.headers["x-ratelimit-remaining"] == "0"
    assert "API rate limit exceeded" in second.json()["message"]
    rate = httpx.get(f"{gh.base_url}/rate_limit", headers=token_headers(token)).json()
    assert rate["resources"]["core"]["remaining"] == 0


# --------------------------------------------------------------------------- webhooks


def _verify(headers: dict[str, str], raw: bytes) -> bool:
    expected = "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(headers["x-hub-signature-256"], expected)


def test_webhooks_are_signed_and_shaped_like_githubs(world: World, receiver: Receiver) -> None:
    gh = world.gh
    gh.set_webhook(receiver.url, SECRET)
    gh.open_issue(REPO, title="Bug", body="It breaks", user="alice")
    gh.add_label(REPO, 1, "kaizen:fix", user="alice")
    pr = open_feature_pr(gh)
    gh.add_issue_comment(REPO, pr["number"], "/kaizen review", user="alice")
    token = gh.create_installation_token(world.installation_id)
    client(gh, token).get_repo(REPO).get_issue(1).create_comment("On it")
    gh.close_pull_request(REPO, pr["number"], merged=True, user="alice")
    gh.wait_for_webhooks()
    assert receiver.events() == [
        "issues.opened",
        "issues.labeled",
        "pull_request.opened",
        "issue_comment.created",
        "issue_comment.created",
        "pull_request.closed",
    ]
    for headers, raw in receiver.received:
        assert _verify(headers, raw)
        expected_sha1 = "sha1=" + hmac.new(SECRET.encode(), raw, hashlib.sha1).hexdigest()
        assert headers["x-hub-signature"] == expected_sha1
        assert headers["user-agent"].startswith("GitHub-Hookshot/")
        assert headers["x-github-hook-installation-target-type"] == "integration"
        assert headers["x-github-hook-installation-target-id"] == str(APP_ID)
        assert headers["content-type"] == "application/json"
        payload = json.loads(raw)
        assert payload["installation"]["id"] == world.installation_id
        assert payload["organization"]["login"] == "acme"
        assert payload["repository"]["full_name"] == REPO
    on_pr, by_bot = receiver.payloads("issue_comment")
    assert on_pr["issue"]["pull_request"]["url"].endswith(f"/pulls/{pr['number']}")
    assert "pull_request" not in by_bot["issue"]
    assert by_bot["sender"] == {**by_bot["sender"], "login": f"{SLUG}[bot]", "type": "Bot"}
    assert by_bot["comment"]["performed_via_github_app"]["id"] == APP_ID
    closed = receiver.payloads("pull_request")[-1]
    assert closed["pull_request"]["merged"] is True
    assert gh.branch_sha(REPO, "main") == closed["pull_request"]["merge_commit_sha"]


def app_review_comment(world: World, receiver: Receiver) -> tuple[dict[str, Any], dict[str, Any]]:
    """A feature PR with one review comment by the app, webhooks going to ``receiver``."""
    gh = world.gh
    gh.set_webhook(receiver.url, SECRET)
    pr = open_feature_pr(gh)
    token = gh.create_installation_token(world.installation_id)
    pull = client(gh, token).get_repo(REPO).get_pull(pr["number"])
    pull.create_review(event="COMMENT", comments=[{"path": "app.py", "line": 5, "body": "hmm"}])
    [comment] = gh.review_comments(REPO, pr["number"])
    return pr, comment


def test_review_events_and_thread_resolution(world: World, receiver: Receiver) -> None:
    gh = world.gh
    pr, comment = app_review_comment(world, receiver)
    reply = gh.reply_to_review_comment(
        REPO, pr["number"], comment["id"], "good point", user="alice"
    )
    gh.resolve_review_thread(REPO, pr["number"], comment["id"], user="alice")
    with pytest.raises(GitHubAPIError, match="Can not approve your own pull request"):
        gh.submit_review(REPO, pr["number"], user="alice", event="APPROVE")
    gh.wait_for_webhooks()
    assert receiver.events()[1:] == [
        "pull_request_review_comment.created",
        "pull_request_review.submitted",
        "pull_request_review_comment.created",
        "pull_request_review.submitted",
        "pull_request_review_thread.resolved",
    ]
    replies = receiver.payloads("pull_request_review_comment")
    assert replies[1]["comment"]["in_reply_to_id"] == comment["id"] == reply["in_reply_to_id"]
    assert receiver.payloads("pull_request_review")[0]["review"]["state"] == "commented"
    thread = receiver.payloads("pull_request_review_thread")[0]["thread"]
    assert [c["id"] for c in thread["comments"]] == [comment["id"], reply["id"]]


def test_a_reply_edited_and_deleted_and_a_thread_reopened_send_their_webhooks(
    world: World, receiver: Receiver
) -> None:
    gh = world.gh
    pr, comment = app_review_comment(world, receiver)
    reply = gh.reply_to_review_comment(REPO, pr["number"], comment["id"], "good", user="alice")
    with pytest.raises(PermissionError):
        gh.edit_review_comment(REPO, pr["number"], reply["id"], "bad", user="bob")
    edited = gh.edit_review_comment(REPO, pr["number"], reply["id"], "bad", user="alice")
    assert edited["body"] == "bad"
    gh.resolve_review_thread(REPO, pr["number"], comment["id"], user="alice")
    gh.unresolve_review_thread(REPO, pr["number"], comment["id"], user="alice")
    gh.delete_review_comment(REPO, pr["number"], reply["id"], user="alice")
    gh.wait_for_webhooks()
    assert receiver.events()[-6:] == [
        "pull_request_review_comment.created",
        "pull_request_review.submitted",  # a reply is a review of its own, as on GitHub
        "pull_request_review_comment.edited",
        "pull_request_review_thread.resolved",
        "pull_request_review_thread.unresolved",
        "pull_request_review_comment.deleted",
    ]
    comments = receiver.payloads("pull_request_review_comment")
    assert comments[-2]["changes"] == {"body": {"from": "good"}}
    assert comments[-2]["comment"]["body"] == "bad"
    assert comments[-2]["comment"]["in_reply_to_id"] == comment["id"]
    assert comments[-1]["comment"]["id"] == reply["id"]
    reopened = receiver.payloads("pull_request_review_thread")[-1]["thread"]
    assert [c["id"] for c in reopened["comments"]] == [comment["id"], reply["id"]]
    assert gh.contract_errors == []


def test_failed_delivery_is_not_retried_but_can_be_redelivered(
    world: World, receiver: Receiver
) -> None:
    gh = world.gh
    receiver.statuses = [503]
    gh.set_webhook(receiver.url, SECRET)
    gh.open_issue(REPO, title="One", user="alice")
    gh.open_issue(REPO, title="Two", user="alice")
    gh.wait_for_webhooks()
    assert len(receiver.received) == 2  # GitHub does not retry on its own
    jwt_headers = {"Authorization": f"Bearer {app_jwt(world.pem)}"}
    page = httpx.get(f"{gh.base_url}/app/hook/deliveries?per_page=1", headers=jwt_headers)
    assert page.status_code == 200
    assert page.json()[0]["status"] == "OK"  # newest first
    next_url = page.links["next"]["url"]
    assert "cursor=" in next_url
    [failed] = httpx.get(next_url, headers=jwt_headers).json()
    assert (failed["status"], failed["status_code"]) == ("Invalid HTTP Response: 503", 503)
    assert "next" not in httpx.get(next_url, headers=jwt_headers).links
    detail = httpx.get(f"{gh.base_url}/app/hook/deliveries/{failed['id']}", headers=jwt_headers)
    assert detail.json()["request"]["payload"]["issue"]["title"] == "One"
    attempt = httpx.post(
        f"{gh.base_url}/app/hook/deliveries/{failed['id']}/attempts", headers=jwt_headers
    )
    assert attempt.status_code == 202
    gh.wait_for_webhooks()
    first_headers, first_raw = receiver.received[0]
    again_headers, again_raw = receiver.received[2]
    assert again_headers["x-github-delivery"] == first_headers["x-github-delivery"]
    assert again_raw == first_raw
    latest = gh.deliveries[-1]
    assert latest["redelivery"] is True and latest["status"] == "OK"
    assert latest["guid"] == failed["guid"]


# --------------------------------------------------------------------------- git, GHE


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd or Path.cwd()),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_git_clone_and_push_over_http_with_the_installation_token(
    world: World, receiver: Receiver
) -> None:
    gh = world.gh
    gh.set_webhook(receiver.url, SECRET)
    pr = open_feature_pr(gh)
    token = gh.create_installation_token(world.installation_id)
    clone_url = gh.pull_request(REPO, pr["number"])["head"]["repo"]["clone_url"]
    assert clone_url == f"{gh.web_url}/{REPO}.git"
    work = world.tmp / "work"
    auth_url = clone_url.replace("http://", f"http://x-access-token:{token}@")
    done = _git("clone", "-q", "--branch", "feature", auth_url, str(work))
    assert done.returncode == 0, done.stderr
    assert (work / "new.py").read_text() == "x = 1\n"
    # extraheader auth, as actions/checkout does it
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    header = f"http.extraHeader=Authorization: Basic {basic}"
    assert _git("-c", header, "ls-remote", clone_url).returncode == 0
    assert (
        _git(
            "-c", f"http.extraHeader=Authorization: Bearer {token}", "ls-remote", clone_url
        ).returncode
        == 0
    )
    # anonymous clone of a public repo works; a bad token is refused
    assert _git("ls-remote", clone_url).returncode == 0
    bad = base64.b64encode(b"x-access-token:ghs_bad").decode()
    assert (
        _git(
            "-c", f"http.extraHeader=Authorization: Basic {bad}", "ls-remote", clone_url
        ).returncode
        != 0
    )
    # pushing to the PR branch updates the PR and sends pull_request.synchronize
    (work / "new.py").write_text("x = 2\n")
    ident = ["-c", "user.name=Kaizen", "-c", "user.email=kaizen@example.com"]
    assert _git(*ident, "commit", "-qam", "Fix", cwd=work).returncode == 0
    pushed = _git("push", "-q", "origin", "feature", cwd=work)
    assert pushed.returncode == 0, pushed.stderr
    head = _git("rev-parse", "HEAD", cwd=work).stdout.strip()
    assert gh.pull_request(REPO, pr["number"])["head"]["sha"] == head
    gh.wait_for_webhooks()
    sync = receiver.payloads("pull_request")[-1]
    assert (sync["action"], sync["after"]) == ("synchronize", head)
    # pushing anonymously is refused
    anon = _git("push", "-q", clone_url, "HEAD:refs/heads/anon", cwd=work)
    assert anon.returncode != 0 and gh.branch_sha(REPO, "anon") is None


def test_ghe_style_api_prefix_with_pygithub(tmp_path: Path, app_pem: str) -> None:
    with running_fake_github(tmp_path, api_prefix="/api/v3") as gh:
        assert gh.base_url.endswith("/api/v3")
        gh.register_app(app_id=APP_ID, slug=SLUG, private_key_pem=app_pem)
        inst = gh.add_installation("acme", account_type="User")
        gh.add_repo("acme/tool", files={"a.py": "a = 1\n"})
        integration = app_client(gh, app_pem)
        assert integration.get_user_installation("acme").id == inst
        token = integration.get_access_token(inst).token
        repo = client(gh, token).get_repo("acme/tool")
        assert repo.url == f"{gh.base_url}/repos/acme/tool"
        gh.open_issue("acme/tool", title="Bug", user="acme")
        repo.get_issue(1).create_comment("hello from GHES")
        assert [c["body"] for c in gh.issue_comments("acme/tool", 1)] == ["hello from GHES"]
        assert gh.requests
        assert all(r.status < 400 for r in gh.requests)
        assert httpx.get(f"{gh.web_url}/repos/acme/tool").status_code == 404
        gh.clear_contract_errors()  # the request outside the prefix was recorded on purpose


def test_wait_for_explains_what_it_saw(world: World) -> None:
    gh = world.gh
    httpx.get(f"{gh.base_url}/repos/{REPO}")
    with pytest.raises(AssertionError, match=r"last requests: \['GET /repos/acme/shop -> 200'\]"):
        gh.wait_for(lambda: False, timeout=0.05, message="a comment from the bot")


def test_bot_opens_a_fix_pull_request_and_reports_a_check_run(world: World) -> None:
    gh = world.gh
    token = gh.create_installation_token(world.installation_id)
    repo = client(gh, token).get_repo(REPO)
    main_sha = gh.branch_sha(REPO, "main")
    assert main_sha is not None
    ref = repo.create_git_ref("refs/heads/kaizen/fix-1", main_sha)
    assert ref.object.sha == main_sha
    with pytest.raises(github.GithubException) as caught:
        repo.create_git_ref("refs/heads/kaizen/fix-1", main_sha)
    assert caught.value.data["message"] == "Reference already exists"
    with pytest.raises(github.GithubException) as caught:
        repo.create_pull(title="Fix", body="", head="kaizen/fix-1", base="main")
    assert caught.value.data["errors"][0]["message"] == "No commits between main and kaizen/fix-1"
    head = gh.put_file(REPO, "app.py", "fixed = True\n", branch="kaizen/fix-1", user="acme")
    pull = repo.create_pull(title="Fix #1", body="Fixes #1", head="kaizen/fix-1", base="main")
    assert pull.user.login == f"{SLUG}[bot]" and pull.head.sha == head
    assert pull.get_files()[0].filename == "app.py"
    run = repo.create_check_run(name="kaizen", head_sha=head, status="in_progress")
    run.edit(conclusion="success", output={"title": "Done", "summary": "3 findings"})
    [listed] = repo.get_commit(head).get_check_runs()
    assert (listed.status, listed.conclusion) == ("completed", "success")
    assert listed.pull_requests[0].number == pull.number
    assert gh.check_runs(REPO, head)[0]["output"]["summary"] == "3 findings"


# --------------------------------------------------------------------------- rename, transfer


def test_rename_sends_repository_renamed(world: World, receiver: Receiver) -> None:
    gh = world.gh
    gh.set_webhook(receiver.url, SECRET)
    before = httpx.get(f"{gh.base_url}/repos/{REPO}").json()
    renamed = gh.rename_repo(REPO, "store", user="alice")
    assert (renamed["id"], renamed["full_name"]) == (before["id"], "acme/store")
    gh.wait_for_webhooks()
    [payload] = receiver.payloads("repository")
    assert payload["action"] == "renamed"
    assert payload["repository"]["full_name"] == "acme/store"
    assert payload["repository"]["id"] == before["id"]
    assert payload["changes"] == {"repository": {"name": {"from": "shop"}}}
    assert payload["installation"]["id"] == world.installation_id
    assert payload["sender"]["login"] == "alice"
    assert gh.contract_errors == []


def test_renamed_repo_is_served_under_its_new_name_only(world: World, receiver: Receiver) -> None:
    gh = world.gh
    pr, comment = app_review_comment(world, receiver)
    gh.add_issue_comment(REPO, pr["number"], "looks good", user="alice")
    token = gh.create_installation_token(world.installation_id)
    jwt_headers = {"Authorization": f"Bearer {app_jwt(world.pem)}"}
    scoped = httpx.post(
        f"{gh.base_url}/app/installations/{world.installation_id}/access_tokens",
        headers=jwt_headers,
        json={"repositories": ["shop"]},
    ).json()["token"]
    gh.rename_repo(REPO, "store", user="alice")
    for value in (token, scoped):  # tokens made before the rename keep working
        repo = client(gh, value).get_repo("acme/store")
        assert repo.full_name == "acme/store"
        pull = repo.get_pull(pr["number"])
        assert pull.base.repo.full_name == "acme/store"
        assert [f.filename for f in pull.get_files()] == ["app.py", "new.py"]
        assert [c.id for c in pull.get_review_comments()] == [comment["id"]]
        assert [c.body for c in repo.get_issue(pr["number"]).get_comments()] == ["looks good"]
    repo = client(gh, token).get_repo("acme/store")
    repo.get_issue(pr["number"]).create_comment("after the rename")
    bodies = [c["body"] for c in gh.issue_comments("acme/store", pr["number"])]
    assert bodies == ["looks good", "after the rename"]
    assert gh.review_comments("acme/store", pr["number"])[0]["id"] == comment["id"]
    for path in ("", f"/pulls/{pr['number']}", f"/issues/{pr['number']}/comments"):
        old = httpx.get(f"{gh.base_url}/repos/{REPO}{path}", headers=token_headers(token))
        assert old.status_code == 404  # GitHub answers 301 here; the fake does not redirect
    with pytest.raises(KeyError):
        gh.issue(REPO, pr["number"])
    assert gh.contract_errors == []


def test_renamed_repo_is_cloned_under_its_new_name_and_frees_the_old(world: World) -> None:
    gh = world.gh
    token = gh.create_installation_token(world.installation_id)
    main_sha = gh.branch_sha(REPO, "main")
    gh.rename_repo(REPO, "store", user="alice")
    auth = f"http.extraHeader=Authorization: Bearer {token}"
    listed = _git("-c", auth, "ls-remote", f"{gh.web_url}/acme/store.git", "refs/heads/main")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[0] == main_sha
    gone = _git("-c", auth, "ls-remote", f"{gh.web_url}/{REPO}.git")
    assert gone.returncode != 0 and "not found" in gone.stderr
    gh.add_repo(REPO, files={"other.py": "y = 2\n"})  # a new repository, with its own git
    assert gh.file_content(REPO, "other.py") == "y = 2\n"
    assert gh.file_content("acme/store", "other.py") is None
    assert gh.branch_sha("acme/store", "main") == main_sha
    assert gh.contract_errors == []


def test_transfer_from_an_organization_sends_repository_transferred(
    world: World, receiver: Receiver
) -> None:
    gh = world.gh
    gh.set_webhook(receiver.url, SECRET)
    new_inst = gh.add_installation("globex", repos=[])
    gh.open_issue(REPO, title="Bug", user="alice")
    moved = gh.transfer_repo(REPO, "globex", user="acme")
    assert moved["full_name"] == "globex/shop"
    gh.wait_for_webhooks()
    [payload] = receiver.payloads("repository")
    assert payload["action"] == "transferred"
    assert payload["repository"]["full_name"] == "globex/shop"
    assert payload["changes"]["owner"]["from"]["organization"]["login"] == "acme"
    assert payload["installation"]["id"] == new_inst
    assert payload["organization"]["login"] == "globex"
    [removed] = receiver.payloads("installation_repositories")  # the old owner's App lost it
    assert (removed["action"], removed["installation"]["id"]) == ("removed", world.installation_id)
    assert [r["full_name"] for r in removed["repositories_removed"]] == [REPO]
    old_token = gh.create_installation_token(world.installation_id)
    new_token = gh.create_installation_token(new_inst)
    url = f"{gh.base_url}/repos/globex/shop/issues/1"
    assert httpx.get(url, headers=token_headers(old_token)).status_code == 404
    assert httpx.get(url, headers=token_headers(new_token)).json()["title"] == "Bug"
    assert gh.contract_errors == []


def test_transfer_from_a_user_names_the_user(
    tmp_path: Path, app_pem: str, receiver: Receiver
) -> None:
    with running_fake_github(tmp_path) as gh:
        gh.register_app(app_id=APP_ID, slug=SLUG, private_key_pem=app_pem)
        gh.set_webhook(receiver.url, SECRET)
        gh.add_user("bob")
        gh.add_repo("bob/tool")
        inst = gh.add_installation("globex")  # all repositories: covers it at once
        gh.transfer_repo("bob/tool", "globex", user="bob")
        gh.wait_for_webhooks()
        [payload] = receiver.payloads("repository")
        assert payload["changes"]["owner"]["from"]["user"]["login"] == "bob"
        assert payload["installation"]["id"] == inst
        assert gh.contract_errors == []
        [repo] = httpx.get(
            f"{gh.base_url}/installation/repositories",
            headers=token_headers(gh.create_installation_token(inst)),
        ).json()["repositories"]
        assert repo["full_name"] == "globex/tool"


def test_delete_sends_repository_deleted_and_the_repo_is_gone(
    world: World, receiver: Receiver
) -> None:
    gh = world.gh
    gh.set_webhook(receiver.url, SECRET)
    pr, _ = app_review_comment(world, receiver)
    token = gh.create_installation_token(world.installation_id)
    gh.delete_repo(REPO, user="acme")
    gh.wait_for_webhooks()
    [payload] = receiver.payloads("repository")
    assert (payload["action"], payload["repository"]["full_name"]) == ("deleted", REPO)
    assert payload["installation"]["id"] == world.installation_id
    for path in ("", f"/pulls/{pr['number']}", f"/issues/{pr['number']}/comments"):
        gone = httpx.get(f"{gh.base_url}/repos/{REPO}{path}", headers=token_headers(token))
        assert gone.status_code == 404
    listed = httpx.get(f"{gh.base_url}/installation/repositories", headers=token_headers(token))
    assert REPO not in [r["full_name"] for r in listed.json()["repositories"]]
    gh.add_repo(REPO, files={"other.py": "y = 2\n"})  # the name is free again
    assert gh.file_content(REPO, "app.py") is None
    assert gh.contract_errors == []


def test_rename_onto_an_existing_name_is_refused(world: World) -> None:
    gh = world.gh
    gh.add_repo("acme/store")
    with pytest.raises(ValueError, match="exists"):
        gh.rename_repo(REPO, "store", user="alice")
    with pytest.raises(ValueError, match="already called"):
        gh.rename_repo(REPO, "shop", user="alice")
    assert httpx.get(f"{gh.base_url}/repos/{REPO}").json()["full_name"] == REPO
    assert gh.file_content("acme/store", "app.py") is None  # untouched
    assert [d for d in gh.deliveries if d["event"] == "repository"] == []
