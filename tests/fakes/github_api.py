"""A faithful, in-process fake of GitHub's REST API, webhooks and git hosting, for tests.

Why: Kaizen is a GitHub App. Its hard bugs live at the seams with GitHub — JWTs and
installation tokens, review comments anchored to lines that are not in the diff (GitHub
answers 422 and drops the whole review), pagination, secondary rate limits, webhooks that
arrive for the bot's own comments, redeliveries. Mocks written from memory agree with the
code under test by construction; this fake instead keeps real state, computes diffs with
real git, and checks every request, response and webhook against GitHub's own OpenAPI
description (see ``github_openapi.py``), so a mismatch fails the test that caused it.

Usage::

    from tests.fakes.github_api import FakeGitHub, generate_private_key_pem

    pem = generate_private_key_pem()
    with FakeGitHub(tmp_path) as gh:                    # starts uvicorn on 127.0.0.1:<free>
        gh.register_app(app_id=42, slug="kaizen", private_key_pem=pem)
        inst = gh.add_installation("acme", repos=["acme/shop"])
        gh.add_repo("acme/shop", files={"app.py": "print('hi')\\n"})
        gh.set_webhook("http://127.0.0.1:8000/webhook", secret="s3cret")
        pr = gh.open_pull_request("acme/shop", head="feat", changes={"app.py": "x = 1\\n"},
                                  title="Feat", user="alice")
        ...                                             # the bot talks to gh.base_url
    # stop() raises AssertionError listing contract errors (strict=True)

Public API (all methods are thread-safe):

Lifecycle
    ``FakeGitHub(data_dir, *, api_prefix="", strict=True, webhook_timeout=10.0)``
    ``start()``, ``stop()``, context manager; ``running_fake_github(tmp_path, **kw)``.
    ``base_url`` — REST root (``http://127.0.0.1:PORT`` + ``api_prefix``; use
    ``api_prefix="/api/v3"`` to look like GitHub Enterprise Server). ``web_url`` — the
    "github.com" root: ``html_url``s and git over HTTP (``{web_url}/{owner}/{repo}.git``).

Setup
    ``register_app(*, app_id, slug, private_key_pem, name="Kaizen", permissions=None,
    events=None, owner="kaizen-dev", owner_type="Organization")``; ``app_bot_login``
    (``"<slug>[bot]"``).
    ``set_webhook(url, secret, *, events=None)`` — ``url=None`` disables delivery.
    ``add_user(login, *, type="User") -> dict``.
    ``add_installation(account, *, account_type="Organization", repos=None,
    permissions=None) -> int`` — ``repos=None`` means "all repositories".
    ``add_repo(full_name, *, files=None, default_branch="main", private=False,
    installation_id=None, description=None) -> dict`` — a repo belongs to the
    installation on its owner that has "all" repositories or lists it (``installation_id``
    adds it to that installation's list); unknown owners are created as organizations.
    ``rename_repo(full_name, new_name, *, user) -> dict`` and
    ``transfer_repo(full_name, new_owner, *, user) -> dict`` — the repository keeps its id
    and everything in it under the new full name and ``repository.renamed`` /
    ``repository.transferred`` is sent; the old name answers 404 (GitHub: 301).
    ``add_collaborator(full_name, login, permission)`` — admin|maintain|write|triage|read.
    ``put_file(full_name, path, content, *, branch=None, message="update", user=None)
    -> sha`` (``content=None`` deletes).
    ``create_installation_token(installation_id) -> str`` (shortcut, no HTTP);
    ``expire_token(token)``.
    ``create_app_from_manifest(manifest, owner, *, owner_type="User") -> code`` — the user
    confirming GitHub's "Create GitHub App" page for a posted manifest: validates it as
    GitHub does (e.g. ``installation`` in ``default_events`` is refused), registers the App
    (replacing any other; a fresh private key, webhook secret and client secret; the
    webhook pointed at ``hook_attributes.url``) and returns the one-time code that
    ``POST /app-manifests/{code}/conversions`` exchanges once, within an hour, for its
    credentials (404 afterwards, as GitHub). ``expire_manifest_code(code)`` ages a code.
    ``manifest_apps: list[dict]`` — every App created so far, with its manifest and pem.

User actions (each sends the webhook GitHub would send and returns GitHub's JSON)
    ``open_issue(full_name, *, title, body="", user, labels=None) -> dict``
    ``add_issue_comment(full_name, number, body, *, user) -> dict``
    ``edit_issue_comment(full_name, comment_id, body, *, user) -> dict``
    ``add_label(full_name, number, label, *, user)`` / ``remove_label(...)``
    ``open_pull_request(full_name, *, head, changes, title, body="", user, draft=False,
    base=None) -> dict``
    ``push_to_pull_request(full_name, number, changes, *, user, message=...) -> sha``
    ``close_pull_request(full_name, number, *, merged, user)``
    ``submit_review(full_name, number, *, user, event="COMMENT", body="", comments=None)
    -> dict`` (same rules and 422s as the REST endpoint; raises ``GitHubAPIError``)
    ``add_reaction(kind, full_name, comment_id, content, *, user)`` — kind
    ``"issue_comment"`` | ``"review_comment"``; no webhook (GitHub sends none).
    ``reply_to_review_comment(full_name, number, comment_id, body, *, user) -> dict``
    ``resolve_review_thread(full_name, number, comment_id, *, user)`` and
    ``unresolve_review_thread(...)`` — any comment of the thread identifies it.

Inspection (GitHub's JSON, as the REST API would return it)
    ``issue(full_name, number)``, ``pull_request(full_name, number)``,
    ``issue_comments(full_name, number)``, ``review_comments(full_name, number)``,
    ``reviews(full_name, number)``, ``check_runs(full_name, head_sha=None)``,
    ``review_threads(full_name, number)`` (``{"node_id", "resolved", "comment_ids"}``),
    ``branch_sha(full_name, branch)``, ``file_content(full_name, path, ref=None)``.
    ``requests: list[RecordedRequest]``; ``deliveries: list[dict]`` (id, guid, event,
    action, status_code, status, redelivery, delivered_at, duration, payload);
    ``contract_errors: list[str]``; ``clear_contract_errors()``.
    ``wait_for(predicate, timeout=20.0, message="")``; ``wait_for_webhooks(timeout=10.0)``.

Fault injection
    ``inject_error(method, path_regex, *, status=502, times=1, headers=None, body=None)``
    ``inject_secondary_rate_limit(method, path_regex, *, retry_after=1, times=1)``
    ``set_rate_limit(*, remaining, reset_in, limit=5000)`` — ``path_regex`` is searched in
    the path without ``api_prefix``; ``method="*"`` matches any method.

What is validated: App JWTs (RS256 with the registered key, ``iss`` = app id or client
id, ``iat``, ``exp`` at most 10 minutes after ``iat``), installation tokens (expiry,
repository scope, permission per operation → 401/404/403 as GitHub answers), a
``User-Agent`` header (403 without, as GitHub), routes, query parameters, request bodies,
response bodies and webhook payloads against the OpenAPI subset (``contract_errors``),
review-comment anchors against the real diff (422s in GitHub's words), primary and
secondary rate limits.

Deliberate simplifications (documented so tests do not rely on them): one rate-limit
bucket for all callers; no GraphQL; org membership is not modelled (collaborators are
``COLLABORATOR``, the owning account ``OWNER``); ``check_run`` and ``push`` webhooks
are not sent; ``close_pull_request(merged=True)`` always makes a merge commit; after a
push, comment anchors move with their line (``git diff`` old head → new head) and become
outdated (``line``/``position`` null) when the line changed, as on GitHub, but
multi-line ranges only track their last line.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import hmac
import itertools
import json
import posixpath
import queue
import re
import secrets
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool

from tests.fakes.github_git import (
    BareRepo,
    FileDiff,
    GitError,
    Identity,
    Symlink,
    TreeEntry,
    hunk_header_index,
    patch_lines,
)
from tests.fakes.github_git import http_backend as git_http_backend
from tests.fakes.github_openapi import OpenAPIContract, Operation

__all__ = [
    "FakeGitHub",
    "GitHubAPIError",
    "RecordedRequest",
    "generate_private_key_pem",
    "running_fake_github",
]

DOCS = "https://docs.github.com/rest"
HOOKSHOT_UA = "GitHub-Hookshot/fake"
DEFAULT_APP_PERMISSIONS = {
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
}
DEFAULT_APP_EVENTS = [
    "issue_comment",
    "issues",
    "pull_request",
    "pull_request_review",
    "pull_request_review_comment",
    "pull_request_review_thread",
    "repository",
]
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
ROLE_TO_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
}
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again. If you reach out to GitHub Support for help, please include the request ID {rid}."
)
# Response fields that GitHub really sends as null although the description says integer.
_TOLERATED_NULLS = re.compile(r"\.(line|position|original_position|original_line)$")

# Which installation permission each operation needs: any one of the alternatives.
_READ_ISSUES = (("issues", "read"), ("pull_requests", "read"))
_WRITE_ISSUES = (("issues", "write"), ("pull_requests", "write"))
OPERATION_PERMISSIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "apps/list-repos-accessible-to-installation": (("metadata", "read"),),
    "repos/get": (("metadata", "read"),),
    "repos/get-collaborator-permission-level": (("metadata", "read"),),
    "repos/get-content": (("contents", "read"),),
    "repos/compare-commits-with-basehead": (("contents", "read"),),
    "repos/get-commit": (("contents", "read"),),
    "git/get-ref": (("contents", "read"),),
    "git/create-ref": (("contents", "write"),),
    "git/update-ref": (("contents", "write"),),
    "issues/get": _READ_ISSUES,
    "issues/list-comments": _READ_ISSUES,
    "issues/get-comment": _READ_ISSUES,
    "reactions/list-for-issue-comment": _READ_ISSUES,
    "issues/update": _WRITE_ISSUES,
    "issues/list-for-repo": (("issues", "read"),),
    "issues/create": (("issues", "write"),),
    "issues/create-comment": _WRITE_ISSUES,
    "issues/update-comment": _WRITE_ISSUES,
    "issues/delete-comment": _WRITE_ISSUES,
    "reactions/create-for-issue-comment": _WRITE_ISSUES,
    "issues/add-labels": _WRITE_ISSUES,
    "issues/remove-label": _WRITE_ISSUES,
    "pulls/list": (("pull_requests", "read"),),
    "pulls/get": (("pull_requests", "read"),),
    "pulls/list-files": (("pull_requests", "read"),),
    "pulls/list-commits": (("pull_requests", "read"),),
    "pulls/list-review-comments": (("pull_requests", "read"),),
    "pulls/get-review-comment": (("pull_requests", "read"),),
    "pulls/list-reviews": (("pull_requests", "read"),),
    "reactions/list-for-pull-request-review-comment": (("pull_requests", "read"),),
    "pulls/create": (("pull_requests", "write"),),
    "pulls/update": (("pull_requests", "write"),),
    "pulls/create-review-comment": (("pull_requests", "write"),),
    "pulls/create-reply-for-review-comment": (("pull_requests", "write"),),
    "pulls/update-review-comment": (("pull_requests", "write"),),
    "pulls/create-review": (("pull_requests", "write"),),
    "reactions/create-for-pull-request-review-comment": (("pull_requests", "write"),),
    "checks/create": (("checks", "write"),),
    "checks/update": (("checks", "write"),),
    "checks/get": (("checks", "read"),),
    "checks/list-for-ref": (("checks", "read"),),
}
# Operations GitHub answers without any authentication.
ANONYMOUS_OPERATIONS = frozenset({"apps/create-from-manifest"})
MANIFEST_CODE_TTL_S = 3600.0
# Events a manifest may subscribe to, each with the permissions (any one) it needs;
# GitHub refuses others ("Default events unsupported") and events whose permission the
# manifest does not ask for ("Default events are not supported by permissions").
MANIFEST_EVENT_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "check_run": ("checks",),
    "check_suite": ("checks",),
    "commit_comment": ("contents",),
    "create": ("contents",),
    "delete": ("contents",),
    "issue_comment": ("issues", "pull_requests"),
    "issues": ("issues",),
    "label": ("metadata",),
    "public": ("metadata",),
    "pull_request": ("pull_requests",),
    "pull_request_review": ("pull_requests",),
    "pull_request_review_comment": ("pull_requests",),
    "pull_request_review_thread": ("pull_requests",),
    "push": ("contents",),
    "repository": ("metadata",),
    "status": ("statuses",),
}
# Operations authenticated as the App itself (JWT), not as an installation.
JWT_OPERATIONS = frozenset(
    {
        "apps/get-authenticated",
        "apps/list-installations",
        "apps/get-installation",
        "apps/create-installation-access-token",
        "apps/get-repo-installation",
        "apps/get-org-installation",
        "apps/get-user-installation",
        "apps/list-webhook-deliveries",
        "apps/get-webhook-delivery",
        "apps/redeliver-webhook-delivery",
    }
)


def _now() -> float:
    return time.time()


def _iso(ts: float | None = None) -> str:
    moment = datetime.fromtimestamp(_now() if ts is None else ts, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_id(prefix: str, ident: int) -> str:
    raw = base64.b64encode(f"{prefix}{ident}".encode()).decode().rstrip("=")
    return f"{prefix}_kw{raw}"


def generate_private_key_pem() -> str:
    """A fresh RSA-2048 private key in PEM (PKCS#1), as GitHub hands out for an App."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


# --------------------------------------------------------------------------- records


@dataclass
class RecordedRequest:
    """One REST (or git) request the fake answered."""

    method: str
    path: str  # without api_prefix
    query: dict[str, str]
    status: int
    json: Any
    headers: dict[str, str]
    operation_id: str | None = None
    response: Any = None


CONTENTS_LIMIT_BYTES = 1024 * 1024
"""The contents API serves a file's text up to 1 MB; larger blobs are refused (403,
``too_large``) on the default media type."""


class GitHubAPIError(Exception):
    """An error answer in GitHub's shape; raised by handlers and by user-action helpers."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        documentation_url: str = DOCS,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {message} {errors or ''}".strip())
        self.status = status
        self.body: dict[str, Any] = {"message": message, "documentation_url": documentation_url}
        if errors is not None:
            self.body["errors"] = errors
        self.body["status"] = str(status)
        self.headers = headers or {}


def _not_found(op: Operation | None = None) -> GitHubAPIError:
    return GitHubAPIError(404, "Not Found", documentation_url=op.documentation_url if op else DOCS)


# --------------------------------------------------------------------------- state


@dataclass
class _User:
    login: str
    id: int
    type: str  # User | Organization | Bot
    node_id: str


@dataclass
class _App:
    id: int
    slug: str
    name: str
    node_id: str
    client_id: str
    owner: str
    public_key: Any
    permissions: dict[str, str]
    events: list[str]
    created_at: str
    hook_id: int
    bot: _User


@dataclass
class _Installation:
    id: int
    account: str
    target_type: str
    repos: set[str] | None  # None: all repositories of the account
    permissions: dict[str, str]
    created_at: str


@dataclass
class _Token:
    token: str
    installation_id: int
    expires_at: float
    permissions: dict[str, str]
    repos: set[str] | None


@dataclass
class _Label:
    id: int
    name: str
    color: str
    description: str | None = None


@dataclass
class _Reaction:
    id: int
    user: str
    content: str
    created_at: str


@dataclass
class _Pull:
    id: int
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    draft: bool
    merged: bool = False
    merged_at: str | None = None
    merged_by: str | None = None
    merge_commit_sha: str | None = None


@dataclass
class _Issue:
    number: int
    id: int
    title: str
    body: str | None
    user: str
    created_at: str
    updated_at: str
    state: str = "open"
    state_reason: str | None = None
    closed_at: str | None = None
    closed_by: str | None = None
    labels: list[str] = field(default_factory=list)
    via_app: bool = False
    pull: _Pull | None = None


@dataclass
class _IssueComment:
    id: int
    repo: str
    number: int
    body: str
    user: str
    created_at: str
    updated_at: str
    via_app: bool
    reactions: list[_Reaction] = field(default_factory=list)


@dataclass
class _ReviewComment:
    id: int
    repo: str
    number: int
    review_id: int
    thread_id: int
    path: str
    commit_id: str
    original_commit_id: str
    side: str | None
    line: int | None
    original_line: int | None
    start_line: int | None
    original_start_line: int | None
    start_side: str | None
    position: int | None
    original_position: int | None
    diff_hunk: str
    subject_type: str
    body: str
    user: str
    created_at: str
    updated_at: str
    via_app: bool
    in_reply_to_id: int | None = None
    reactions: list[_Reaction] = field(default_factory=list)


@dataclass
class _Thread:
    id: int
    repo: str
    number: int
    comment_ids: list[int]
    resolved: bool = False
    resolved_by: str | None = None


@dataclass
class _Review:
    id: int
    repo: str
    number: int
    user: str
    body: str
    state: str
    commit_id: str
    submitted_at: str | None
    via_app: bool


@dataclass
class _CheckRun:
    id: int
    repo: str
    head_sha: str
    name: str
    status: str
    conclusion: str | None
    started_at: str | None
    completed_at: str | None
    external_id: str | None
    details_url: str | None
    output: dict[str, Any]
    suite_id: int


@dataclass
class _Repo:
    id: int
    owner: str
    name: str
    private: bool
    default_branch: str
    git: BareRepo
    description: str | None
    created_at: str
    pushed_at: str
    collaborators: dict[str, str] = field(default_factory=dict)
    labels: dict[str, _Label] = field(default_factory=dict)
    issues: dict[int, _Issue] = field(default_factory=dict)
    next_number: int = 1

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class _Delivery:
    id: int
    guid: str
    event: str
    action: str | None
    installation_id: int | None
    repository_id: int | None
    payload: dict[str, Any]
    redelivery: bool
    delivered_at: str = ""
    duration: float = 0.0
    status: str = "pending"
    status_code: int = 0
    url: str = ""
    request_headers: dict[str, str] = field(default_factory=dict)
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str | None = None


@dataclass
class _Injection:
    method: str
    path: re.Pattern[str]
    status: int
    remaining: int
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class _Ctx:
    """Everything a handler needs about the request it answers."""

    op: Operation
    params: dict[str, str]
    query: dict[str, str]
    body: Any
    headers: dict[str, str]
    path: str
    actor: str | None  # login acting (the App's bot user for installation tokens)
    token: _Token | None
    via_app: bool


@dataclass
class _Resp:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    text: str | None = None
    media_type: str = "application/json; charset=utf-8"


_HANDLERS: dict[str, str] = {}


def _handles(operation_id: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a FakeGitHub method as the handler of an OpenAPI operation."""

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        _HANDLERS[operation_id] = func.__name__
        return func

    return register


def _manifest_problems(manifest: Any) -> list[str]:
    """What GitHub's "Create GitHub App" page objects to in a posted manifest."""
    if not isinstance(manifest, dict):
        return ["The configuration does not appear to be a valid GitHub App manifest."]
    problems = []
    if not str(manifest.get("url") or "").startswith(("http://", "https://")):
        problems.append("Url must be a valid URL")
    name = str(manifest.get("name") or "").strip()
    if not name or len(name) > 34:
        problems.append("Name must be between 1 and 34 characters")
    hook = manifest.get("hook_attributes") or {}
    if hook.get("active", True) and not str(hook.get("url") or "").startswith("http"):
        problems.append("Hook url cannot be blank")
    permissions = manifest.get("default_permissions") or {}
    bad_levels = [k for k, v in permissions.items() if v not in ("read", "write", "admin")]
    if bad_levels:
        problems.append(f"Default permissions are invalid: {', '.join(sorted(bad_levels))}")
    events = list(manifest.get("default_events") or [])
    unsupported = [e for e in events if e not in MANIFEST_EVENT_PERMISSIONS]
    if unsupported:
        problems.append(f"Default events unsupported: {' and '.join(unsupported)}")
    granted = {"metadata", *permissions}
    unbacked = [
        e
        for e in events
        if e in MANIFEST_EVENT_PERMISSIONS
        and not granted.intersection(MANIFEST_EVENT_PERMISSIONS[e])
    ]
    if unbacked or unsupported:
        problems.append(
            "Default events are not supported by permissions: "
            + " and ".join([*unsupported, *unbacked])
        )
    return problems


class FakeGitHub:
    """GitHub for one test: REST API + webhooks + git over HTTP, on 127.0.0.1."""

    def __init__(
        self,
        data_dir: Path,
        *,
        api_prefix: str = "",
        strict: bool = True,
        webhook_timeout: float = 10.0,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.api_prefix = api_prefix.rstrip("/")
        self.strict = strict
        self.webhook_timeout = webhook_timeout
        self.contract = OpenAPIContract.load()
        missing = {op.operation_id for op in self.contract.operations} - set(_HANDLERS)
        if missing:
            raise RuntimeError(f"operations without a handler: {sorted(missing)}")

        self.requests: list[RecordedRequest] = []
        self.contract_errors: list[str] = []
        self._lock = threading.RLock()
        self._ids = itertools.count(1001)
        self._users: dict[str, _User] = {}
        self._app: _App | None = None
        self._installations: dict[int, _Installation] = {}
        self._tokens: dict[str, _Token] = {}
        self._repos: dict[str, _Repo] = {}
        self._comments: dict[int, _IssueComment] = {}
        self._review_comments: dict[int, _ReviewComment] = {}
        self._threads: dict[int, _Thread] = {}
        self._reviews: dict[int, _Review] = {}
        self._check_runs: dict[int, _CheckRun] = {}
        self._injections: list[_Injection] = []
        self._rate_limit = 5000
        self._rate_remaining = 5000
        self._rate_reset = int(_now()) + 3600
        self._manifest_codes: dict[str, tuple[float, dict[str, Any]]] = {}
        self.manifest_apps: list[dict[str, Any]] = []

        self._webhook_url: str | None = None
        self._webhook_secret = ""
        self._webhook_events: set[str] | None = None
        self._deliveries: list[_Delivery] = []
        self._delivery_queue: queue.Queue[_Delivery | None] = queue.Queue()
        self._pending_deliveries = 0
        self._delivery_done = threading.Condition(self._lock)
        self._delivery_thread: threading.Thread | None = None

        self._server: uvicorn.Server | None = None
        self._server_thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.port = 0
        self.asgi_app = self._build_asgi_app()

    # ================================================================== lifecycle

    @property
    def web_url(self) -> str:
        """Root of the fake "github.com": html_url links and git over HTTP live here."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """REST API root to hand to clients (PyGithub's ``base_url``)."""
        return self.web_url + self.api_prefix

    def start(self) -> None:
        """Bind a free port, serve in a background thread, start webhook delivery."""
        if self._server is not None:
            return
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.asgi_app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_keep_alive=30,
        )
        self._server = uvicorn.Server(config)
        self._server_thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True, name="fake-github"
        )
        self._server_thread.start()
        deadline = _now() + 10
        while not self._server.started:
            if _now() > deadline or not self._server_thread.is_alive():
                raise RuntimeError("fake GitHub server did not start")
            time.sleep(0.01)
        self._delivery_thread = threading.Thread(
            target=self._deliver_loop, daemon=True, name="fake-github-hookshot"
        )
        self._delivery_thread.start()

    def stop(self) -> None:
        """Stop serving; with ``strict=True`` fail if any contract error was recorded."""
        if self._delivery_thread is not None:
            self._delivery_queue.put(None)
            self._delivery_thread.join(timeout=self.webhook_timeout + 5)
            self._delivery_thread = None
        if self._server is not None:
            self._server.should_exit = True
            if self._server_thread is not None:
                self._server_thread.join(timeout=10)
            self._server = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self.strict and self.contract_errors:
            errors = "\n  ".join(self.contract_errors)
            raise AssertionError(
                f"fake GitHub recorded {len(self.contract_errors)} contract error(s):\n  {errors}"
            )

    def __enter__(self) -> FakeGitHub:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self.strict = False  # the test already failed; do not mask its error
        self.stop()

    def clear_contract_errors(self) -> None:
        """Forget contract errors a test provoked on purpose."""
        with self._lock:
            self.contract_errors.clear()

    # ================================================================== setup

    def register_app(
        self,
        *,
        app_id: int,
        slug: str,
        private_key_pem: str,
        name: str = "Kaizen",
        permissions: dict[str, str] | None = None,
        events: list[str] | None = None,
        owner: str = "kaizen-dev",
        owner_type: str = "Organization",
    ) -> None:
        """Register the GitHub App whose JWTs and installations the fake accepts."""
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
        with self._lock:
            self._ensure_user(owner, owner_type)
            bot = self._ensure_user(f"{slug}[bot]", "Bot")
            self._app = _App(
                id=app_id,
                slug=slug,
                name=name,
                node_id=_node_id("A", app_id),
                client_id=f"Iv1.{hashlib.sha1(slug.encode()).hexdigest()[:16]}",  # noqa: S324
                owner=owner,
                public_key=key.public_key(),
                permissions=dict(permissions or DEFAULT_APP_PERMISSIONS),
                events=list(events or DEFAULT_APP_EVENTS),
                created_at=_iso(),
                hook_id=next(self._ids),
                bot=bot,
            )

    @property
    def app_bot_login(self) -> str:
        return self._require_app().bot.login

    def set_webhook(self, url: str | None, secret: str, *, events: list[str] | None = None) -> None:
        """Point the App's webhook at ``url`` (None disables), signed with ``secret``.

        ``events`` are the App's subscriptions; by default the App's registered events.
        """
        with self._lock:
            self._webhook_url = url
            self._webhook_secret = secret
            self._webhook_events = set(events) if events is not None else None

    @property
    def webhook_url(self) -> str | None:
        with self._lock:
            return self._webhook_url

    def redeliver(self, delivery_id: int) -> None:
        """What "Redeliver" in the App's settings does (and ``POST /app/hook/deliveries/{id}/
        attempts``): queue the delivery again, same GUID and payload, marked a redelivery."""
        with self._lock:
            original = next(
                (d for d in self._deliveries if d.id == delivery_id and d.status != "pending"),
                None,
            )
            if original is None:
                raise KeyError(f"no finished webhook delivery {delivery_id}")
            self._queue_delivery(self._redelivery_of(original))

    def add_user(self, login: str, *, type: str = "User") -> dict[str, Any]:
        with self._lock:
            return self._user_json(self._ensure_user(login, type).login)

    def add_installation(
        self,
        account: str,
        *,
        account_type: str = "Organization",
        repos: list[str] | None = None,
        permissions: dict[str, str] | None = None,
    ) -> int:
        """Install the App on ``account``; ``repos=None`` means all its repositories."""
        with self._lock:
            app = self._require_app()
            self._ensure_user(account, account_type)
            inst = _Installation(
                id=next(self._ids),
                account=account,
                target_type=account_type,
                repos=set(repos) if repos is not None else None,
                permissions=dict(permissions or app.permissions),
                created_at=_iso(),
            )
            self._installations[inst.id] = inst
            return inst.id

    def add_repo(
        self,
        full_name: str,
        *,
        files: dict[str, str] | None = None,
        default_branch: str = "main",
        private: bool = False,
        installation_id: int | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Create a repository with an initial commit of ``files`` on ``default_branch``."""
        owner, name = full_name.split("/", 1)
        with self._lock:
            if full_name in self._repos:
                raise ValueError(f"repository {full_name} exists")
            if owner not in self._users:
                self._ensure_user(owner, "Organization")
            git = BareRepo.create(self._repo_dir(owner, name), default_branch)
            now = _iso()
            repo = _Repo(
                id=next(self._ids),
                owner=owner,
                name=name,
                private=private,
                default_branch=default_branch,
                git=git,
                description=description,
                created_at=now,
                pushed_at=now,
            )
            self._repos[full_name] = repo
            sha = git.commit(
                dict(files or {"README.md": f"# {name}\n"}),
                message="Initial commit",
                author=self._identity(owner),
                parent=None,
            )
            git.update_ref(f"refs/heads/{default_branch}", sha)
            if installation_id is not None:
                inst = self._installations[installation_id]
                if inst.repos is not None:
                    inst.repos.add(full_name)
            return self._repo_json(repo)

    def rename_repo(self, full_name: str, new_name: str, *, user: str) -> dict[str, Any]:
        """``user`` renames the repository in its settings; sends ``repository.renamed``.

        Why: GitHub keeps everything of a renamed repository — its id, issues, pull
        requests, comments, reviews, check runs, git data, collaborators and installation
        access — and only the name changes, so a bot that keys its own state by
        ``owner/name`` must follow the webhook. Here the repository is served under the new
        name at once (REST and git over HTTP; the bare repository stays where it is on
        disk). Known simplification: requests under the old name answer 404, as for an
        unknown repository, where GitHub answers them with a 301 redirect.
        Raises ``ValueError`` if ``new_name`` is the current name or already taken.
        """
        if not new_name or "/" in new_name:
            raise ValueError(f"invalid repository name {new_name!r}")
        with self._lock:
            repo = self._get_repo(full_name)
            if new_name == repo.name:
                raise ValueError(f"repository {full_name} is already called {new_name}")
            if f"{repo.owner}/{new_name}" in self._repos:
                raise ValueError(f"repository {repo.owner}/{new_name} exists")
            self._ensure_user(user, "User")
            old_name = repo.name
            self._move_repo(repo, repo.owner, new_name)
            self._emit(
                "repository",
                "renamed",
                repo,
                user,
                {"changes": {"repository": {"name": {"from": old_name}}}},
            )
            return self._repo_json(repo)

    def transfer_repo(self, full_name: str, new_owner: str, *, user: str) -> dict[str, Any]:
        """``user`` transfers the repository to ``new_owner``; sends ``repository.transferred``.

        Why: a transfer keeps the repository (id, issues, pull requests, git data,
        collaborators) under ``new_owner/name``, takes it out of the old owner's
        installation and into the new owner's (an installation with selected repositories
        gets it added; one on all repositories covers it anyway). GitHub sends the webhook
        to the new owner's installation, with the old owner under ``changes.owner.from``;
        the old owner's installation first hears ``installation_repositories.removed``
        (under the old name), as GitHub sends it.
        Unknown owners are created as organizations, as ``add_repo`` does. Known
        simplification: requests under the old name answer 404, as for an unknown
        repository, where GitHub answers them with a 301 redirect.
        Raises ``ValueError`` if ``new_owner`` already owns it or has a repository of that
        name.
        """
        with self._lock:
            repo = self._get_repo(full_name)
            old_owner = repo.owner
            if new_owner == old_owner:
                raise ValueError(f"repository {full_name} already belongs to {new_owner}")
            if f"{new_owner}/{repo.name}" in self._repos:
                raise ValueError(f"repository {new_owner}/{repo.name} exists")
            if new_owner not in self._users:
                self._ensure_user(new_owner, "Organization")
            self._ensure_user(user, "User")
            old = self._users[old_owner]
            was = (
                {"organization": self._org_json(old_owner)}
                if old.type == "Organization"
                else {"user": self._user_json(old_owner)}
            )
            losing = self._installation_for(repo)
            lost = self._repo_brief(repo)
            for inst in self._installations.values():
                if inst.repos is not None:
                    inst.repos.discard(full_name)
            self._move_repo(repo, new_owner, repo.name)
            for inst in self._installations.values():
                if inst.account == new_owner and inst.repos is not None:
                    inst.repos.add(repo.full_name)
            if losing is not None and losing is not self._installation_for(repo):
                self._emit_repositories_removed(losing, [lost], user)
            self._emit(
                "repository", "transferred", repo, user, {"changes": {"owner": {"from": was}}}
            )
            return self._repo_json(repo)

    def delete_repo(self, full_name: str, *, user: str) -> None:
        """``user`` deletes the repository; sends ``repository.deleted``.

        Why: GitHub sends the event to the installation that covered the repository, with
        the repository as it was, and from then on the repository, its issues, pull
        requests and comments answer 404 and it leaves every installation and token. A
        bot keeping state per repository hears of it only through this webhook. The bare
        repository stays on disk, unreachable, as a renamed one's old place does; a new
        repository of the same name gets its own.
        """
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            self._emit("repository", "deleted", repo, user, {})
            del self._repos[full_name]
            scopes = [inst.repos for inst in self._installations.values()]
            scopes += [token.repos for token in self._tokens.values()]
            for scope in scopes:
                if scope is not None:
                    scope.discard(full_name)
            for records in (
                self._comments,
                self._review_comments,
                self._threads,
                self._reviews,
                self._check_runs,
            ):
                for key in [k for k, r in records.items() if r.repo == full_name]:
                    del records[key]

    def add_collaborator(self, full_name: str, login: str, permission: str) -> None:
        """Give ``login`` a role on the repository (admin|maintain|write|triage|read)."""
        if permission not in ROLE_TO_PERMISSION:
            raise ValueError(f"unknown role {permission}")
        with self._lock:
            self._ensure_user(login, "User")
            self._get_repo(full_name).collaborators[login] = permission

    def put_file(
        self,
        full_name: str,
        path: str,
        content: str | None,
        *,
        branch: str | None = None,
        message: str = "update",
        user: str | None = None,
    ) -> str:
        """Commit one file change on ``branch``; returns the sha.

        ``branch`` defaults to the default branch; a missing branch is created from it.
        """
        with self._lock:
            repo = self._get_repo(full_name)
            return self._commit_on_branch(
                repo, branch or repo.default_branch, {path: content}, message, user or repo.owner
            )

    def create_app_from_manifest(
        self, manifest: dict[str, Any], owner: str, *, owner_type: str = "User"
    ) -> str:
        """The user confirms GitHub's "Create GitHub App" page; returns the one-time code."""
        problems = _manifest_problems(manifest)
        if problems:
            raise GitHubAPIError(
                422,
                "Invalid GitHub App configuration",
                errors=problems,
                documentation_url="https://docs.github.com/apps/sharing-github-apps/"
                "registering-a-github-app-from-a-manifest",
            )
        name = str(manifest.get("name") or "").strip()
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:34] or "app"
        pem = generate_private_key_pem()
        permissions = {"metadata": "read", **dict(manifest.get("default_permissions") or {})}
        hook = manifest.get("hook_attributes") or {}
        with self._lock:
            if self._app is not None and self._app.slug == slug:
                raise GitHubAPIError(
                    422, "Invalid GitHub App configuration", errors=["Name is already in use"]
                )
            app_id = next(self._ids)
            self.register_app(
                app_id=app_id,
                slug=slug,
                private_key_pem=pem,
                name=name,
                permissions=permissions,
                events=list(manifest.get("default_events") or []),
                owner=owner,
                owner_type=owner_type,
            )
            webhook_secret = secrets.token_hex(20)
            if hook.get("url") and hook.get("active", True):
                self.set_webhook(str(hook["url"]), webhook_secret)
            conversion = {
                **self._app_json(),
                "client_secret": secrets.token_hex(20),
                "webhook_secret": webhook_secret,
                "pem": pem,
            }
            code = secrets.token_hex(20)
            self._manifest_codes[code] = (_now() + MANIFEST_CODE_TTL_S, conversion)
            self.manifest_apps.append(
                {"manifest": manifest, "code": code, "pem": pem, **conversion}
            )
        return code

    def expire_manifest_code(self, code: str) -> None:
        """Age a manifest code past GitHub's hour: the conversion then answers 404."""
        with self._lock:
            if code in self._manifest_codes:
                _, conversion = self._manifest_codes[code]
                self._manifest_codes[code] = (_now() - 1, conversion)

    def create_installation_token(self, installation_id: int) -> str:
        """An installation token without going through HTTP (for test setup)."""
        with self._lock:
            inst = self._installations[installation_id]
            return self._new_token(inst, dict(inst.permissions), None).token

    def expire_token(self, token: str) -> None:
        """Make an installation token expire now (as if its hour had passed)."""
        with self._lock:
            self._tokens[token].expires_at = _now() - 1

    # ================================================================== user actions

    def open_issue(
        self,
        full_name: str,
        *,
        title: str,
        body: str = "",
        user: str,
        labels: list[str] | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            issue = self._new_issue(repo, title, body, user, via_app=False)
            for name in labels or []:
                issue.labels.append(self._ensure_label(repo, name).name)
            self._emit("issues", "opened", repo, user, {"issue": self._issue_json(repo, issue)})
            return self._issue_json(repo, issue)

    def add_issue_comment(
        self, full_name: str, number: int, body: str, *, user: str
    ) -> dict[str, Any]:
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            issue = self._get_issue(repo, number)
            comment = self._create_issue_comment(repo, issue, body, user, via_app=False)
            return self._issue_comment_json(repo, comment)

    def edit_issue_comment(
        self, full_name: str, comment_id: int, body: str, *, user: str
    ) -> dict[str, Any]:
        with self._lock:
            repo = self._get_repo(full_name)
            comment = self._comments[comment_id]
            self._edit_issue_comment(repo, comment, body, user)
            return self._issue_comment_json(repo, comment)

    def add_label(self, full_name: str, number: int, label: str, *, user: str) -> None:
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            self._add_labels(repo, self._get_issue(repo, number), [label], user)

    def remove_label(self, full_name: str, number: int, label: str, *, user: str) -> None:
        with self._lock:
            repo = self._get_repo(full_name)
            self._remove_label(repo, self._get_issue(repo, number), label, user)

    def open_pull_request(
        self,
        full_name: str,
        *,
        head: str,
        changes: Mapping[str, str | Symlink | None],
        title: str,
        body: str = "",
        user: str,
        draft: bool = False,
        base: str | None = None,
    ) -> dict[str, Any]:
        """Commit ``changes`` on a new branch ``head`` (from ``base``) and open a PR."""
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            base = base or repo.default_branch
            base_sha = repo.git.rev_parse(f"refs/heads/{base}")
            if base_sha is None:
                raise ValueError(f"no branch {base}")
            if repo.git.rev_parse(f"refs/heads/{head}") is None:
                repo.git.update_ref(f"refs/heads/{head}", base_sha)
            self._commit_on_branch(repo, head, changes, title, user, notify=False)
            issue = self._open_pull(repo, head, base, title, body, user, draft, via_app=False)
            return self._pull_json(repo, issue)

    def push_to_pull_request(
        self,
        full_name: str,
        number: int,
        changes: Mapping[str, str | Symlink | None],
        *,
        user: str,
        message: str = "Address review comments",
    ) -> str:
        """Commit ``changes`` on the PR's head branch; sends ``pull_request.synchronize``."""
        with self._lock:
            repo = self._get_repo(full_name)
            pull = self._get_pull(repo, number).pull
            assert pull is not None
            return self._commit_on_branch(repo, pull.head_ref, changes, message, user)

    def close_pull_request(self, full_name: str, number: int, *, merged: bool, user: str) -> None:
        """Close the PR, merging it first (a real merge commit on the base) if ``merged``."""
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            issue = self._get_pull(repo, number)
            if merged:
                self._merge_pull(repo, issue, user)
            else:
                self._set_state(repo, issue, "closed", user, reason=None)

    def submit_review(
        self,
        full_name: str,
        number: int,
        *,
        user: str,
        event: str = "COMMENT",
        body: str = "",
        comments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A user submits a review (raises ``GitHubAPIError`` where the API would 422)."""
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            issue = self._get_pull(repo, number)
            payload: dict[str, Any] = {"event": event, "body": body}
            if comments:
                payload["comments"] = comments
            review = self._create_review(repo, issue, payload, user, via_app=False)
            return self._review_json(repo, review)

    def add_reaction(
        self, kind: str, full_name: str, comment_id: int, content: str, *, user: str
    ) -> None:
        """React to a comment. GitHub sends no webhook for reactions, so neither do we."""
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content}")
        with self._lock:
            self._ensure_user(user, "User")
            self._react(self._reactable(kind, full_name, comment_id), user, content)

    def remove_reaction(
        self, kind: str, full_name: str, comment_id: int, content: str, *, user: str
    ) -> bool:
        """Take a reaction back, as its author does by clicking it again; False if ``user``
        had not reacted with ``content``. No webhook, as for adding one."""
        with self._lock:
            target = self._reactable(kind, full_name, comment_id)
            kept = [r for r in target.reactions if (r.user, r.content) != (user, content)]
            removed = len(kept) != len(target.reactions)
            target.reactions[:] = kept
            return removed

    def reply_to_review_comment(
        self, full_name: str, number: int, comment_id: int, body: str, *, user: str
    ) -> dict[str, Any]:
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            issue = self._get_pull(repo, number)
            comment = self._reply(repo, issue, comment_id, body, user, via_app=False)
            return self._review_comment_json(repo, comment)

    def _own_review_comment(
        self, full_name: str, number: int, comment_id: int, user: str
    ) -> tuple[_Repo, _Issue, _ReviewComment]:
        """A review comment ``user`` wrote on that PR, as only its author may change it."""
        repo = self._get_repo(full_name)
        issue = self._get_pull(repo, number)
        comment = self._review_comments.get(comment_id)
        if comment is None or comment.repo != full_name or comment.number != number:
            raise KeyError(f"no review comment {comment_id} on {full_name}#{number}")
        if comment.user != user:
            raise PermissionError(f"{user} did not write comment {comment_id}")
        return repo, issue, comment

    def edit_review_comment(
        self, full_name: str, number: int, comment_id: int, body: str, *, user: str
    ) -> dict[str, Any]:
        """Its author edits a review comment: GitHub sends ``pull_request_review_comment.edited``
        with the old body under ``changes``."""
        with self._lock:
            repo, issue, comment = self._own_review_comment(full_name, number, comment_id, user)
            old = comment.body
            comment.body = body
            comment.updated_at = _iso()
            self._emit(
                "pull_request_review_comment",
                "edited",
                repo,
                user,
                {
                    "changes": {"body": {"from": old}},
                    "comment": self._review_comment_json(repo, comment, True),
                    "pull_request": self._pull_json(repo, issue, webhook=True),
                },
            )
            return self._review_comment_json(repo, comment)

    def delete_review_comment(
        self, full_name: str, number: int, comment_id: int, *, user: str
    ) -> None:
        """Its author deletes a reply: GitHub sends ``pull_request_review_comment.deleted``
        with the comment as it was."""
        with self._lock:
            repo, issue, comment = self._own_review_comment(full_name, number, comment_id, user)
            thread = self._threads[comment.thread_id]
            if thread.comment_ids[0] == comment_id:
                raise ValueError("only replies can be deleted here, not a thread's first comment")
            as_it_was = self._review_comment_json(repo, comment)
            del self._review_comments[comment_id]
            thread.comment_ids.remove(comment_id)
            self._emit(
                "pull_request_review_comment",
                "deleted",
                repo,
                user,
                {"comment": as_it_was, "pull_request": self._pull_json(repo, issue, webhook=True)},
            )

    def resolve_review_thread(
        self, full_name: str, number: int, comment_id: int, *, user: str
    ) -> None:
        self._set_thread_resolved(full_name, number, comment_id, user, resolved=True)

    def unresolve_review_thread(
        self, full_name: str, number: int, comment_id: int, *, user: str
    ) -> None:
        self._set_thread_resolved(full_name, number, comment_id, user, resolved=False)

    # ================================================================== inspection

    def issue(self, full_name: str, number: int) -> dict[str, Any]:
        with self._lock:
            repo = self._get_repo(full_name)
            return self._issue_json(repo, self._get_issue(repo, number))

    def pull_request(self, full_name: str, number: int) -> dict[str, Any]:
        with self._lock:
            repo = self._get_repo(full_name)
            return self._pull_json(repo, self._get_pull(repo, number))

    def issue_comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            repo = self._get_repo(full_name)
            return [
                self._issue_comment_json(repo, c)
                for c in self._comments.values()
                if c.repo == full_name and c.number == number
            ]

    def review_comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            repo = self._get_repo(full_name)
            return [
                self._review_comment_json(repo, c)
                for c in self._review_comments.values()
                if c.repo == full_name and c.number == number
            ]

    def reviews(self, full_name: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            repo = self._get_repo(full_name)
            return [
                self._review_json(repo, r)
                for r in self._reviews.values()
                if r.repo == full_name and r.number == number
            ]

    def review_threads(self, full_name: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [
                {
                    "node_id": _node_id("PRRT", t.id),
                    "resolved": t.resolved,
                    "resolved_by": t.resolved_by,
                    "comment_ids": list(t.comment_ids),
                }
                for t in self._threads.values()
                if t.repo == full_name and t.number == number
            ]

    def check_runs(self, full_name: str, head_sha: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            repo = self._get_repo(full_name)
            return [
                self._check_run_json(repo, run)
                for run in self._check_runs.values()
                if run.repo == full_name and head_sha in (None, run.head_sha)
            ]

    def branch_sha(self, full_name: str, branch: str) -> str | None:
        with self._lock:
            return self._get_repo(full_name).git.rev_parse(f"refs/heads/{branch}")

    def file_content(self, full_name: str, path: str, ref: str | None = None) -> str | None:
        with self._lock:
            repo = self._get_repo(full_name)
            sha = repo.git.rev_parse(ref or f"refs/heads/{repo.default_branch}")
            if sha is None:
                return None
            entry = repo.git.object_at(sha, path)
            if entry is None or entry.type != "blob":
                return None
            return repo.git.read_blob(entry.sha).decode()

    @property
    def deliveries(self) -> list[dict[str, Any]]:
        """Every webhook attempt so far, oldest first."""
        with self._lock:
            return [
                {
                    "id": d.id,
                    "guid": d.guid,
                    "event": d.event,
                    "action": d.action,
                    "status": d.status,
                    "status_code": d.status_code,
                    "redelivery": d.redelivery,
                    "delivered_at": d.delivered_at,
                    "duration": d.duration,
                    "installation_id": d.installation_id,
                    "repository_id": d.repository_id,
                    "payload": d.payload,
                }
                for d in self._deliveries
                if d.status != "pending"
            ]

    def wait_for(
        self, predicate: Callable[[], bool], timeout: float = 20.0, message: str = ""
    ) -> None:
        """Poll ``predicate`` until true; on timeout fail with what the fake saw."""
        deadline = _now() + timeout
        while True:
            if predicate():
                return
            if _now() > deadline:
                break
            time.sleep(0.02)
        with self._lock:
            recent = [f"{r.method} {r.path} -> {r.status}" for r in self.requests[-15:]]
            hooks = [f"{d.event}.{d.action} -> {d.status}" for d in self._deliveries[-10:]]
            errors = list(self.contract_errors)
        raise AssertionError(
            f"timed out after {timeout}s waiting for {message or predicate!r}\n"
            f"last requests: {recent}\nlast deliveries: {hooks}\ncontract errors: {errors}"
        )

    def wait_for_webhooks(self, timeout: float = 10.0) -> None:
        """Block until every queued webhook has been attempted."""
        deadline = _now() + timeout
        with self._delivery_done:
            while self._pending_deliveries:
                left = deadline - _now()
                if left <= 0:
                    raise AssertionError(f"{self._pending_deliveries} webhook(s) still pending")
                self._delivery_done.wait(left)

    # ================================================================== fault injection

    def inject_error(
        self,
        method: str,
        path_regex: str,
        *,
        status: int = 502,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status`` instead."""
        with self._lock:
            self._injections.append(
                _Injection(
                    method.upper(), re.compile(path_regex), status, times, dict(headers or {}), body
                )
            )

    def inject_secondary_rate_limit(
        self, method: str, path_regex: str, *, retry_after: int = 1, times: int = 1
    ) -> None:
        """GitHub's secondary rate limit: 403, ``Retry-After`` and its message."""
        rid = self._request_id()
        self.inject_error(
            method,
            path_regex,
            status=403,
            times=times,
            headers={"Retry-After": str(retry_after)},
            body={
                "message": SECONDARY_RATE_LIMIT_MESSAGE.format(rid=rid),
                "documentation_url": "https://docs.github.com/free-pro-team@latest/rest/"
                "overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
                "status": "403",
            },
        )

    def set_rate_limit(self, *, remaining: int, reset_in: int, limit: int = 5000) -> None:
        """Set the primary rate limit; at 0 every API call gets 403 until the reset."""
        with self._lock:
            self._rate_limit = limit
            self._rate_remaining = remaining
            self._rate_reset = int(_now()) + reset_in

    # ================================================================== internals: state

    def _repo_dir(self, owner: str, name: str) -> Path:
        """A free directory for a new bare repository: ``git/<owner>/<name>.git``, or with
        a suffix while a renamed or transferred repository still lives there (a bare
        repository never moves; git over HTTP finds it through ``_Repo.git``)."""
        path = self.data_dir / "git" / owner / f"{name}.git"
        suffix = itertools.count(2)
        while path.exists():
            path = path.with_name(f"{name}~{next(suffix)}.git")
        return path

    def _move_repo(self, repo: _Repo, owner: str, name: str) -> None:
        """Re-key ``repo`` as ``owner/name`` everywhere the fake names it by full name."""
        old, new = repo.full_name, f"{owner}/{name}"
        del self._repos[old]
        repo.owner, repo.name = owner, name
        self._repos[new] = repo
        scopes = [inst.repos for inst in self._installations.values()]
        scopes += [token.repos for token in self._tokens.values()]
        for scope in scopes:
            if scope is not None and old in scope:
                scope.discard(old)
                scope.add(new)
        records: list[_IssueComment | _ReviewComment | _Thread | _Review | _CheckRun] = [
            *self._comments.values(),
            *self._review_comments.values(),
            *self._threads.values(),
            *self._reviews.values(),
            *self._check_runs.values(),
        ]
        for record in records:
            if record.repo == old:
                record.repo = new

    def _require_app(self) -> _App:
        if self._app is None:
            raise RuntimeError("call register_app() first")
        return self._app

    def _ensure_user(self, login: str, type: str) -> _User:
        user = self._users.get(login)
        if user is None:
            ident = next(self._ids)
            prefix = {"Organization": "O", "Bot": "BOT"}.get(type, "U")
            user = _User(login=login, id=ident, type=type, node_id=_node_id(prefix, ident))
            self._users[login] = user
        return user

    def _identity(self, login: str) -> Identity:
        user = self._users.get(login)
        uid = user.id if user else 0
        return Identity(login, f"{uid}+{login}@users.noreply.github.com")

    def _get_repo(self, full_name: str) -> _Repo:
        repo = self._repos.get(full_name)
        if repo is None:
            raise KeyError(f"no repository {full_name}")
        return repo

    def _get_issue(self, repo: _Repo, number: int) -> _Issue:
        issue = repo.issues.get(number)
        if issue is None:
            raise KeyError(f"no issue #{number} in {repo.full_name}")
        return issue

    def _get_pull(self, repo: _Repo, number: int) -> _Issue:
        issue = self._get_issue(repo, number)
        if issue.pull is None:
            raise KeyError(f"#{number} in {repo.full_name} is not a pull request")
        return issue

    def _installation_for(self, repo: _Repo) -> _Installation | None:
        for inst in self._installations.values():
            if inst.account == repo.owner and (inst.repos is None or repo.full_name in inst.repos):
                return inst
        return None

    def _ensure_label(self, repo: _Repo, name: str) -> _Label:
        label = repo.labels.get(name)
        if label is None:
            color = hashlib.sha1(name.encode()).hexdigest()[:6]  # noqa: S324
            label = _Label(id=next(self._ids), name=name, color=color)
            repo.labels[name] = label
        return label

    def _new_issue(
        self, repo: _Repo, title: str, body: str | None, user: str, *, via_app: bool
    ) -> _Issue:
        now = _iso()
        issue = _Issue(
            number=repo.next_number,
            id=next(self._ids),
            title=title,
            body=body,
            user=user,
            created_at=now,
            updated_at=now,
            via_app=via_app,
        )
        repo.next_number += 1
        repo.issues[issue.number] = issue
        return issue

    def _new_token(
        self, inst: _Installation, permissions: dict[str, str], repos: set[str] | None
    ) -> _Token:
        alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        value = "ghs_" + "".join(secrets.choice(alphabet) for _ in range(36))
        token = _Token(value, inst.id, _now() + 3600, permissions, repos)
        self._tokens[value] = token
        return token

    def _token_repos(self, token: _Token) -> list[_Repo]:
        inst = self._installations[token.installation_id]
        return [
            repo
            for repo in self._repos.values()
            if self._installation_for(repo) is inst
            and (token.repos is None or repo.full_name in token.repos)
        ]

    def _commit_on_branch(
        self,
        repo: _Repo,
        branch: str,
        changes: Mapping[str, str | Symlink | None],
        message: str,
        user: str,
        *,
        notify: bool = True,
    ) -> str:
        before = repo.git.rev_parse(f"refs/heads/{branch}")
        # A new branch starts from the default branch, as a push of a local branch would.
        parent = before or repo.git.rev_parse(f"refs/heads/{repo.default_branch}")
        sha = repo.git.commit(
            dict(changes), message=message, author=self._identity(user), parent=parent
        )
        repo.git.update_ref(f"refs/heads/{branch}", sha)
        repo.pushed_at = _iso()
        if notify:
            self._branch_moved(repo, branch, before, sha, user)
        return sha

    def _branch_moved(
        self, repo: _Repo, branch: str, before: str | None, after: str | None, user: str
    ) -> None:
        """A branch changed (push, API, merge): update PRs whose head it is."""
        for issue in repo.issues.values():
            pull = issue.pull
            if pull is None or issue.state != "open":
                continue
            if pull.head_ref == branch and after is not None and pull.head_sha != after:
                old = pull.head_sha
                pull.head_sha = after
                base_tip = repo.git.rev_parse(f"refs/heads/{pull.base_ref}")
                if base_tip:
                    pull.base_sha = base_tip
                repo.git.update_ref(f"refs/pull/{issue.number}/head", after)
                issue.updated_at = _iso()
                self._move_anchors(repo, issue, old, after)
                self._emit(
                    "pull_request",
                    "synchronize",
                    repo,
                    user,
                    {
                        "number": issue.number,
                        "before": old,
                        "after": after,
                        "pull_request": self._pull_json(repo, issue, webhook=True),
                    },
                )

    # ---- diffs and anchors

    def _pr_base(self, repo: _Repo, pull: _Pull, head: str | None = None) -> str:
        """The merge base a PR diff starts from (GitHub's three-dot diff)."""
        head = head or pull.head_sha
        base_tip = repo.git.rev_parse(f"refs/heads/{pull.base_ref}") or pull.base_sha
        return repo.git.merge_base(base_tip, head) or base_tip

    def _pr_files(self, repo: _Repo, pull: _Pull, head: str | None = None) -> list[FileDiff]:
        head = head or pull.head_sha
        return repo.git.file_diffs(self._pr_base(repo, pull, head), head)

    def _anchor(
        self,
        files: list[FileDiff],
        spec: dict[str, Any],
    ) -> tuple[dict[str, Any] | None, list[str]]:
        """Resolve a review comment anchor against a PR diff.

        Returns the anchor (line, side, start_line, start_side, position, diff_hunk,
        subject_type) or a list of problems named the way GitHub names them:
        ``path``, ``line``, ``start_line``, ``start_order`` or ``missing_line``.
        """
        path = spec.get("path")
        entry = next((f for f in files if f.filename == path), None)
        if entry is None:
            return None, ["path"]
        if spec.get("subject_type") == "file":
            return {
                "line": None,
                "side": None,
                "start_line": None,
                "start_side": None,
                "position": None,
                "diff_hunk": entry.patch or "",
                "subject_type": "file",
            }, []
        lines = patch_lines(entry.patch or "")
        target = None
        if spec.get("line") is None and spec.get("position") is not None:
            target = next((x for x in lines if x.position == spec["position"]), None)
            if target is None:
                return None, ["line"]
            side = "LEFT" if target.kind == "-" else "RIGHT"
        elif spec.get("line") is None:
            return None, ["missing_line"]
        else:
            side = spec.get("side") or "RIGHT"
            target = _find_line(lines, side, int(spec["line"]))
            if target is None:
                return None, ["line"]
        problems: list[str] = []
        start_line = spec.get("start_line")
        start_side = spec.get("start_side") or (side if start_line is not None else None)
        if start_line is not None:
            start = _find_line(lines, start_side or side, int(start_line))
            if start is None or start.hunk != target.hunk:
                problems.append("start_line")
            elif start.position >= target.position:
                problems.append("start_order")
        if problems:
            return None, problems
        assert entry.patch is not None
        # diff_hunk: the hunk's header down to the commented line. Row i of a file patch
        # is GitHub position i (the first header is row 0), so slicing by position works.
        rows = entry.patch.split("\n")
        first = hunk_header_index(entry.patch, target.hunk)
        hunk_text = "\n".join(rows[first : target.position + 1])
        return {
            "line": target.new if side == "RIGHT" else target.old,
            "side": side,
            "start_line": int(start_line) if start_line is not None else None,
            "start_side": start_side,
            "position": target.position,
            "diff_hunk": hunk_text,
            "subject_type": "line",
        }, []

    def _move_anchors(self, repo: _Repo, issue: _Issue, old_head: str, new_head: str) -> None:
        """After a push, follow each comment's line to the new head, or mark it outdated."""
        pull = issue.pull
        assert pull is not None
        files = self._pr_files(repo, pull, new_head)
        by_name = {f.filename: f for f in files}
        for comment in self._review_comments.values():
            if comment.repo != repo.full_name or comment.number != issue.number:
                continue
            comment.commit_id = new_head
            if comment.line is None or comment.subject_type == "file":
                continue
            new_line: int | None = comment.line
            if comment.side == "RIGHT":
                new_line = _map_line(repo.git, old_head, new_head, comment.path, comment.line)
            entry = by_name.get(comment.path)
            found = None
            if new_line is not None and entry is not None and entry.patch:
                found = _find_line(patch_lines(entry.patch), comment.side or "RIGHT", new_line)
            if found is None or new_line is None:
                comment.line = None
                comment.position = None
                comment.start_line = None
            else:
                if comment.start_line is not None:
                    comment.start_line += new_line - comment.line
                comment.line = new_line
                comment.position = found.position

    # ---- issue/PR mutations shared by the API and user actions

    def _create_issue_comment(
        self, repo: _Repo, issue: _Issue, body: str, user: str, *, via_app: bool
    ) -> _IssueComment:
        now = _iso()
        comment = _IssueComment(
            id=next(self._ids),
            repo=repo.full_name,
            number=issue.number,
            body=body,
            user=user,
            created_at=now,
            updated_at=now,
            via_app=via_app,
        )
        self._comments[comment.id] = comment
        issue.updated_at = now
        self._emit(
            "issue_comment",
            "created",
            repo,
            user,
            {
                "issue": self._issue_json(repo, issue, webhook=True),
                "comment": self._issue_comment_json(repo, comment),
            },
        )
        return comment

    def _edit_issue_comment(
        self, repo: _Repo, comment: _IssueComment, body: str, user: str
    ) -> None:
        old = comment.body
        comment.body = body
        comment.updated_at = _iso()
        issue = self._get_issue(repo, comment.number)
        self._emit(
            "issue_comment",
            "edited",
            repo,
            user,
            {
                "changes": {"body": {"from": old}},
                "issue": self._issue_json(repo, issue, webhook=True),
                "comment": self._issue_comment_json(repo, comment),
            },
        )

    def _add_labels(self, repo: _Repo, issue: _Issue, names: list[str], user: str) -> None:
        for name in names:
            if name in issue.labels:
                continue
            label = self._ensure_label(repo, name)
            issue.labels.append(name)
            issue.updated_at = _iso()
            if issue.pull is not None:
                self._emit(
                    "pull_request",
                    "labeled",
                    repo,
                    user,
                    {
                        "number": issue.number,
                        "pull_request": self._pull_json(repo, issue, webhook=True),
                        "label": self._label_json(repo, label),
                    },
                )
            else:
                self._emit(
                    "issues",
                    "labeled",
                    repo,
                    user,
                    {
                        "issue": self._issue_json(repo, issue, webhook=True),
                        "label": self._label_json(repo, label),
                    },
                )

    def _remove_label(self, repo: _Repo, issue: _Issue, name: str, user: str) -> None:
        if name not in issue.labels:
            raise GitHubAPIError(
                404,
                "Label does not exist",
                documentation_url="https://docs.github.com/rest/issues/labels"
                "#remove-a-label-from-an-issue",
            )
        issue.labels.remove(name)
        issue.updated_at = _iso()
        label = repo.labels[name]
        if issue.pull is not None:
            self._emit(
                "pull_request",
                "unlabeled",
                repo,
                user,
                {
                    "number": issue.number,
                    "pull_request": self._pull_json(repo, issue, webhook=True),
                    "label": self._label_json(repo, label),
                },
            )
        else:
            self._emit(
                "issues",
                "unlabeled",
                repo,
                user,
                {
                    "issue": self._issue_json(repo, issue, webhook=True),
                    "label": self._label_json(repo, label),
                },
            )

    def _set_state(
        self, repo: _Repo, issue: _Issue, state: str, user: str, *, reason: str | None
    ) -> None:
        if issue.state == state:
            return
        now = _iso()
        issue.state = state
        issue.updated_at = now
        if state == "closed":
            issue.closed_at = now
            issue.closed_by = user
            issue.state_reason = reason or ("completed" if issue.pull is None else None)
        else:
            issue.closed_at = None
            issue.closed_by = None
            issue.state_reason = "reopened" if issue.pull is None else None
        action = "closed" if state == "closed" else "reopened"
        if issue.pull is not None:
            self._emit(
                "pull_request",
                action,
                repo,
                user,
                {
                    "number": issue.number,
                    "pull_request": self._pull_json(repo, issue, webhook=True),
                },
            )
        else:
            self._emit("issues", action, repo, user, {"issue": self._issue_json(repo, issue, True)})

    def _merge_pull(self, repo: _Repo, issue: _Issue, user: str) -> None:
        pull = issue.pull
        assert pull is not None
        if pull.merged or issue.state != "open":
            raise GitHubAPIError(405, "Pull Request is not mergeable")
        base_tip = repo.git.rev_parse(f"refs/heads/{pull.base_ref}")
        assert base_tip is not None
        merge = repo.git.merge(
            base_tip,
            pull.head_sha,
            message=f"Merge pull request #{issue.number} from {repo.owner}/{pull.head_ref}\n\n"
            f"{issue.title}",
            committer=self._identity(user),
        )
        if merge is None:
            raise GitHubAPIError(405, "Pull Request is not mergeable")
        repo.git.update_ref(f"refs/heads/{pull.base_ref}", merge, base_tip)
        now = _iso()
        pull.merged = True
        pull.merged_at = now
        pull.merged_by = user
        pull.merge_commit_sha = merge
        issue.state = "closed"
        issue.closed_at = now
        issue.closed_by = user
        issue.updated_at = now
        self._emit(
            "pull_request",
            "closed",
            repo,
            user,
            {"number": issue.number, "pull_request": self._pull_json(repo, issue, webhook=True)},
        )
        self._branch_moved(repo, pull.base_ref, base_tip, merge, user)

    def _open_pull(
        self,
        repo: _Repo,
        head: str,
        base: str,
        title: str,
        body: str | None,
        user: str,
        draft: bool,
        *,
        via_app: bool,
    ) -> _Issue:
        head_sha = repo.git.rev_parse(f"refs/heads/{head}")
        base_sha = repo.git.rev_parse(f"refs/heads/{base}")
        doc = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
        if head_sha is None:
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "field": "head", "code": "invalid"}],
                documentation_url=doc,
            )
        if base_sha is None:
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "field": "base", "code": "invalid"}],
                documentation_url=doc,
            )
        for other in repo.issues.values():
            if (
                other.pull
                and other.state == "open"
                and other.pull.head_ref == head
                and other.pull.base_ref == base
            ):
                raise GitHubAPIError(
                    422,
                    "Validation Failed",
                    errors=[
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"A pull request already exists for {repo.owner}:{head}.",
                        }
                    ],
                    documentation_url=doc,
                )
        if not repo.git.commits_between(base_sha, head_sha):
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"No commits between {base} and {head}",
                    }
                ],
                documentation_url=doc,
            )
        issue = self._new_issue(repo, title, body, user, via_app=via_app)
        issue.pull = _Pull(
            id=next(self._ids),
            head_ref=head,
            head_sha=head_sha,
            base_ref=base,
            base_sha=base_sha,
            draft=draft,
        )
        repo.git.update_ref(f"refs/pull/{issue.number}/head", head_sha)
        self._emit(
            "pull_request",
            "opened",
            repo,
            user,
            {"number": issue.number, "pull_request": self._pull_json(repo, issue, webhook=True)},
        )
        return issue

    def _new_review(
        self, repo: _Repo, issue: _Issue, user: str, body: str, state: str, commit: str, app: bool
    ) -> _Review:
        review = _Review(
            id=next(self._ids),
            repo=repo.full_name,
            number=issue.number,
            user=user,
            body=body,
            state=state,
            commit_id=commit,
            submitted_at=None if state == "PENDING" else _iso(),
            via_app=app,
        )
        self._reviews[review.id] = review
        return review

    def _new_review_comment(
        self,
        repo: _Repo,
        issue: _Issue,
        review: _Review,
        anchor: dict[str, Any],
        path: str,
        body: str,
        user: str,
        commit: str,
        *,
        via_app: bool,
        reply_to: _ReviewComment | None = None,
    ) -> _ReviewComment:
        now = _iso()
        if reply_to is not None:
            thread = self._threads[reply_to.thread_id]
        else:
            thread = _Thread(next(self._ids), repo.full_name, issue.number, [])
            self._threads[thread.id] = thread
        comment = _ReviewComment(
            id=next(self._ids),
            repo=repo.full_name,
            number=issue.number,
            review_id=review.id,
            thread_id=thread.id,
            path=path,
            commit_id=commit,
            original_commit_id=commit,
            side=anchor["side"],
            line=anchor["line"],
            original_line=anchor["line"],
            start_line=anchor["start_line"],
            original_start_line=anchor["start_line"],
            start_side=anchor["start_side"],
            position=anchor["position"],
            original_position=anchor["position"],
            diff_hunk=anchor["diff_hunk"],
            subject_type=anchor["subject_type"],
            body=body,
            user=user,
            created_at=now,
            updated_at=now,
            via_app=via_app,
            in_reply_to_id=reply_to.id if reply_to else None,
        )
        thread.comment_ids.append(comment.id)
        self._review_comments[comment.id] = comment
        return comment

    def _emit_review_comment(self, repo: _Repo, issue: _Issue, comment: _ReviewComment) -> None:
        self._emit(
            "pull_request_review_comment",
            "created",
            repo,
            comment.user,
            {
                "comment": self._review_comment_json(repo, comment),
                "pull_request": self._pull_json(repo, issue, webhook=True),
            },
        )

    def _emit_review(self, repo: _Repo, issue: _Issue, review: _Review) -> None:
        self._emit(
            "pull_request_review",
            "submitted",
            repo,
            review.user,
            {
                "review": self._review_json(repo, review, webhook=True),
                "pull_request": self._pull_json(repo, issue, webhook=True),
            },
        )

    def _create_single_comment(
        self, repo: _Repo, issue: _Issue, body: dict[str, Any], user: str, *, via_app: bool
    ) -> _ReviewComment:
        """POST .../pulls/{n}/comments: one comment, anchored or a reply."""
        doc = (
            "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request"
        )
        if body.get("in_reply_to") is not None:
            return self._reply(
                repo, issue, int(body["in_reply_to"]), body["body"], user, via_app=via_app
            )
        pull = issue.pull
        assert pull is not None
        commit = body["commit_id"]
        in_pr = commit == pull.head_sha or (
            repo.git.rev_parse(commit) is not None
            and commit in repo.git.commits_between(self._pr_base(repo, pull), pull.head_sha)
        )
        if not in_pr:
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[
                    {
                        "resource": "PullRequestReviewComment",
                        "code": "custom",
                        "field": "pull_request_review_thread.end_commit_oid",
                        "message": "pull_request_review_thread.end_commit_oid is not part of the "
                        "pull request",
                    }
                ],
                documentation_url=doc,
            )
        anchor, problems = self._anchor(self._pr_files(repo, pull, commit), body)
        if anchor is None:
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[_single_comment_error(p) for p in problems],
                documentation_url=doc,
            )
        review = self._new_review(repo, issue, user, "", "COMMENTED", commit, via_app)
        comment = self._new_review_comment(
            repo, issue, review, anchor, body["path"], body["body"], user, commit, via_app=via_app
        )
        self._emit_review_comment(repo, issue, comment)
        self._emit_review(repo, issue, review)
        return comment

    def _reply(
        self, repo: _Repo, issue: _Issue, comment_id: int, body: str, user: str, *, via_app: bool
    ) -> _ReviewComment:
        parent = self._review_comments.get(comment_id)
        if parent is None or parent.repo != repo.full_name or parent.number != issue.number:
            raise GitHubAPIError(
                404,
                "Not Found",
                documentation_url="https://docs.github.com/rest/pulls/comments"
                "#create-a-reply-for-a-review-comment",
            )
        root = self._review_comments[self._threads[parent.thread_id].comment_ids[0]]
        review = self._new_review(repo, issue, user, "", "COMMENTED", root.commit_id, via_app)
        anchor = {
            "line": root.line,
            "side": root.side,
            "start_line": root.start_line,
            "start_side": root.start_side,
            "position": root.position,
            "diff_hunk": root.diff_hunk,
            "subject_type": root.subject_type,
        }
        comment = self._new_review_comment(
            repo,
            issue,
            review,
            anchor,
            root.path,
            body,
            user,
            root.commit_id,
            via_app=via_app,
            reply_to=root,
        )
        comment.original_line = root.original_line
        comment.original_position = root.original_position
        comment.original_commit_id = root.original_commit_id
        self._emit_review_comment(repo, issue, comment)
        self._emit_review(repo, issue, review)
        return comment

    def _create_review(
        self, repo: _Repo, issue: _Issue, body: dict[str, Any], user: str, *, via_app: bool
    ) -> _Review:
        """POST .../pulls/{n}/reviews: all comments are checked first; any bad one → 422."""
        pull = issue.pull
        assert pull is not None
        doc = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
        event = body.get("event")
        commit = body.get("commit_id") or pull.head_sha
        if event in ("APPROVE", "REQUEST_CHANGES") and user == issue.user:
            verb = "approve" if event == "APPROVE" else "request changes on"
            raise GitHubAPIError(
                422,
                "Unprocessable Entity",
                errors=[f"Can not {verb} your own pull request"],
                documentation_url=doc,
            )
        if event == "REQUEST_CHANGES" and not body.get("body"):
            raise GitHubAPIError(
                422,
                "Unprocessable Entity",
                errors=["Review Body is required when requesting changes"],
                documentation_url=doc,
            )
        files = self._pr_files(repo, pull, commit)
        anchors: list[dict[str, Any]] = []
        sentences: list[str] = []
        for spec in body.get("comments") or []:
            anchor, problems = self._anchor(files, spec)
            if anchor is None:
                sentences.extend(_review_comment_error(p) for p in problems)
            else:
                anchors.append(anchor)
        if sentences:
            raise GitHubAPIError(
                422, "Unprocessable Entity", errors=[_to_sentence(sentences)], documentation_url=doc
            )
        state = {
            "APPROVE": "APPROVED",
            "REQUEST_CHANGES": "CHANGES_REQUESTED",
            "COMMENT": "COMMENTED",
        }.get(event or "", "PENDING")
        review = self._new_review(repo, issue, user, body.get("body") or "", state, commit, via_app)
        comments = [
            self._new_review_comment(
                repo,
                issue,
                review,
                anchor,
                spec["path"],
                spec["body"],
                user,
                commit,
                via_app=via_app,
            )
            for spec, anchor in zip(body.get("comments") or [], anchors, strict=True)
        ]
        if state != "PENDING":
            for comment in comments:
                self._emit_review_comment(repo, issue, comment)
            self._emit_review(repo, issue, review)
        return review

    def _reactable(
        self, kind: str, full_name: str, comment_id: int
    ) -> _IssueComment | _ReviewComment:
        """The comment a reaction goes on (``kind``: issue_comment or review_comment)."""
        target: _IssueComment | _ReviewComment
        if kind == "issue_comment":
            target = self._comments[comment_id]
        elif kind == "review_comment":
            target = self._review_comments[comment_id]
        else:
            raise ValueError("kind must be 'issue_comment' or 'review_comment'")
        if target.repo != full_name:
            raise KeyError(f"comment {comment_id} is not in {full_name}")
        return target

    def _react(self, target: _IssueComment | _ReviewComment, user: str, content: str) -> bool:
        """Add a reaction; False if ``user`` already reacted with ``content``."""
        for existing in target.reactions:
            if existing.user == user and existing.content == content:
                return False
        target.reactions.append(_Reaction(next(self._ids), user, content, _iso()))
        return True

    def _set_thread_resolved(
        self, full_name: str, number: int, comment_id: int, user: str, *, resolved: bool
    ) -> None:
        with self._lock:
            repo = self._get_repo(full_name)
            self._ensure_user(user, "User")
            issue = self._get_pull(repo, number)
            comment = self._review_comments[comment_id]
            thread = self._threads[comment.thread_id]
            if thread.resolved == resolved:
                return
            thread.resolved = resolved
            thread.resolved_by = user if resolved else None
            self._emit(
                "pull_request_review_thread",
                "resolved" if resolved else "unresolved",
                repo,
                user,
                {
                    "pull_request": self._pull_json(repo, issue, webhook=True),
                    "thread": {
                        "node_id": _node_id("PRRT", thread.id),
                        "comments": [
                            self._review_comment_json(repo, self._review_comments[cid], True)
                            for cid in thread.comment_ids
                        ],
                    },
                },
            )

    # ================================================================== internals: JSON

    def _api(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def _web(self, path: str) -> str:
        return f"{self.web_url}{path}"

    def _user_json(self, login: str) -> dict[str, Any]:
        user = self._users.get(login) or self._ensure_user(login, "User")
        api = self._api(f"/users/{urllib.parse.quote(login)}")
        html = self._web(
            f"/apps/{login[:-5]}" if user.type == "Bot" else f"/{urllib.parse.quote(login)}"
        )
        return {
            "login": login,
            "id": user.id,
            "node_id": user.node_id,
            "avatar_url": f"{self.web_url}/avatars/u/{user.id}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": html,
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": user.type,
            "user_view_type": "public",
            "site_admin": False,
        }

    def _org_json(self, login: str) -> dict[str, Any]:
        user = self._users[login]
        api = self._api(f"/orgs/{login}")
        return {
            "login": login,
            "id": user.id,
            "node_id": user.node_id,
            "url": api,
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events",
            "hooks_url": f"{api}/hooks",
            "issues_url": f"{api}/issues",
            "members_url": f"{api}/members{{/member}}",
            "public_members_url": f"{api}/public_members{{/member}}",
            "avatar_url": f"{self.web_url}/avatars/u/{user.id}?v=4",
            "description": None,
        }

    def _app_json(self) -> dict[str, Any]:
        app = self._require_app()
        return {
            "id": app.id,
            "slug": app.slug,
            "node_id": app.node_id,
            "client_id": app.client_id,
            "owner": self._user_json(app.owner),
            "name": app.name,
            "description": "Reviews pull requests and fixes issues; learns from feedback.",
            "external_url": self._web(f"/{app.owner}"),
            "html_url": self._web(f"/apps/{app.slug}"),
            "created_at": app.created_at,
            "updated_at": app.created_at,
            "permissions": dict(app.permissions),
            "events": list(app.events),
            "installations_count": len(self._installations),
        }

    def _installation_json(self, inst: _Installation) -> dict[str, Any]:
        app = self._require_app()
        account = self._users[inst.account]
        settings = "organizations" if inst.target_type == "Organization" else "settings"
        owner_part = f"{inst.account}/" if inst.target_type == "Organization" else ""
        return {
            "id": inst.id,
            "client_id": app.client_id,
            "account": self._user_json(inst.account),
            "repository_selection": "all" if inst.repos is None else "selected",
            "access_tokens_url": self._api(f"/app/installations/{inst.id}/access_tokens"),
            "repositories_url": self._api("/installation/repositories"),
            "html_url": self._web(f"/{settings}/{owner_part}installations/{inst.id}"),
            "app_id": app.id,
            "app_slug": app.slug,
            "target_id": account.id,
            "target_type": inst.target_type,
            "permissions": dict(inst.permissions),
            "events": list(app.events),
            "created_at": inst.created_at,
            "updated_at": inst.created_at,
            "single_file_name": None,
            "has_multiple_single_files": False,
            "single_file_paths": [],
            "suspended_by": None,
            "suspended_at": None,
        }

    def _repo_json(
        self, repo: _Repo, *, full: bool = False, webhook: bool = False
    ) -> dict[str, Any]:
        api = self._api(f"/repos/{repo.full_name}")
        html = self._web(f"/{repo.full_name}")
        open_issues = sum(1 for i in repo.issues.values() if i.state == "open")
        host = urllib.parse.urlparse(self.web_url).hostname
        data: dict[str, Any] = {
            "id": repo.id,
            "node_id": _node_id("R", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self._user_json(repo.owner),
            "html_url": html,
            "description": repo.description,
            "fork": False,
            "url": api,
            "forks_url": f"{api}/forks",
            "keys_url": f"{api}/keys{{/key_id}}",
            "collaborators_url": f"{api}/collaborators{{/collaborator}}",
            "teams_url": f"{api}/teams",
            "hooks_url": f"{api}/hooks",
            "issue_events_url": f"{api}/issues/events{{/number}}",
            "events_url": f"{api}/events",
            "assignees_url": f"{api}/assignees{{/user}}",
            "branches_url": f"{api}/branches{{/branch}}",
            "tags_url": f"{api}/tags",
            "blobs_url": f"{api}/git/blobs{{/sha}}",
            "git_tags_url": f"{api}/git/tags{{/sha}}",
            "git_refs_url": f"{api}/git/refs{{/sha}}",
            "trees_url": f"{api}/git/trees{{/sha}}",
            "statuses_url": f"{api}/statuses/{{sha}}",
            "languages_url": f"{api}/languages",
            "stargazers_url": f"{api}/stargazers",
            "contributors_url": f"{api}/contributors",
            "subscribers_url": f"{api}/subscribers",
            "subscription_url": f"{api}/subscription",
            "commits_url": f"{api}/commits{{/sha}}",
            "git_commits_url": f"{api}/git/commits{{/sha}}",
            "comments_url": f"{api}/comments{{/number}}",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "contents_url": f"{api}/contents/{{+path}}",
            "compare_url": f"{api}/compare/{{base}}...{{head}}",
            "merges_url": f"{api}/merges",
            "archive_url": f"{api}/{{archive_format}}{{/ref}}",
            "downloads_url": f"{api}/downloads",
            "issues_url": f"{api}/issues{{/number}}",
            "pulls_url": f"{api}/pulls{{/number}}",
            "milestones_url": f"{api}/milestones{{/number}}",
            "notifications_url": f"{api}/notifications{{?since,all,participating}}",
            "labels_url": f"{api}/labels{{/name}}",
            "releases_url": f"{api}/releases{{/id}}",
            "deployments_url": f"{api}/deployments",
            "created_at": repo.created_at,
            "updated_at": repo.pushed_at,
            "pushed_at": repo.pushed_at,
            "git_url": f"git://{host}/{repo.full_name}.git",
            "ssh_url": f"git@{host}:{repo.full_name}.git",
            "clone_url": f"{html}.git",
            "svn_url": html,
            "homepage": None,
            "size": 1,
            "stargazers_count": 0,
            "watchers_count": 0,
            "language": None,
            "has_issues": True,
            "has_projects": True,
            "has_downloads": True,
            "has_wiki": True,
            "has_pages": False,
            "has_discussions": False,
            "forks_count": 0,
            "mirror_url": None,
            "archived": False,
            "disabled": False,
            "open_issues_count": open_issues,
            "license": None,
            "allow_forking": True,
            "is_template": False,
            "web_commit_signoff_required": False,
            "topics": [],
            "visibility": "private" if repo.private else "public",
            "forks": 0,
            "open_issues": open_issues,
            "watchers": 0,
            "default_branch": repo.default_branch,
        }
        if webhook:
            data["custom_properties"] = {}
        if full:
            data.update(
                {
                    "network_count": 0,
                    "subscribers_count": 0,
                    "temp_clone_token": None,
                    "allow_squash_merge": True,
                    "allow_merge_commit": True,
                    "allow_rebase_merge": True,
                    "allow_auto_merge": False,
                    "delete_branch_on_merge": False,
                    "allow_update_branch": False,
                    "permissions": {
                        "admin": False,
                        "maintain": False,
                        "push": False,
                        "triage": False,
                        "pull": True,
                    },
                }
            )
            owner = self._users[repo.owner]
            if owner.type == "Organization":
                data["organization"] = self._user_json(repo.owner)
        return data

    def _label_json(self, repo: _Repo, label: _Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": _node_id("LA", label.id),
            "url": self._api(
                f"/repos/{repo.full_name}/labels/{urllib.parse.quote(label.name, safe='')}"
            ),
            "name": label.name,
            "description": label.description,
            "color": label.color,
            "default": False,
        }

    def _association(self, repo: _Repo, login: str) -> str:
        if login == repo.owner:
            return "OWNER"
        if login in repo.collaborators:
            return "COLLABORATOR"  # org membership is not modelled
        authored = any(i.user == login and i.pull and i.pull.merged for i in repo.issues.values())
        return "CONTRIBUTOR" if authored else "NONE"

    def _reactions_json(self, url: str, reactions: list[_Reaction]) -> dict[str, Any]:
        rollup: dict[str, Any] = {"url": url, "total_count": len(reactions)}
        for kind in REACTIONS:
            rollup[kind] = sum(1 for r in reactions if r.content == kind)
        return rollup

    def _issue_json(self, repo: _Repo, issue: _Issue, webhook: bool = False) -> dict[str, Any]:
        api = self._api(f"/repos/{repo.full_name}/issues/{issue.number}")
        kind = "pull" if issue.pull else "issues"
        html = self._web(f"/{repo.full_name}/{kind}/{issue.number}")
        comments = sum(
            1
            for c in self._comments.values()
            if c.repo == repo.full_name and c.number == issue.number
        )
        data: dict[str, Any] = {
            "url": api,
            "repository_url": self._api(f"/repos/{repo.full_name}"),
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": html,
            "id": issue.id,
            "node_id": _node_id("I", issue.id),
            "number": issue.number,
            "title": issue.title,
            "user": self._user_json(issue.user),
            "labels": [self._label_json(repo, repo.labels[n]) for n in issue.labels],
            "state": issue.state,
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": comments,
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
            "author_association": self._association(repo, issue.user),
            "active_lock_reason": None,
            "body": issue.body,
            "closed_by": self._user_json(issue.closed_by) if issue.closed_by else None,
            "reactions": self._reactions_json(f"{api}/reactions", []),
            "timeline_url": f"{api}/timeline",
            "performed_via_github_app": self._app_json() if issue.via_app else None,
            "state_reason": issue.state_reason,
        }
        if issue.pull is not None:
            pr_api = self._api(f"/repos/{repo.full_name}/pulls/{issue.number}")
            data["draft"] = issue.pull.draft
            data["pull_request"] = {
                "url": pr_api,
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": issue.pull.merged_at,
            }
        if webhook:
            data.pop("closed_by")
        return data

    def _issue_comment_json(self, repo: _Repo, comment: _IssueComment) -> dict[str, Any]:
        api = self._api(f"/repos/{repo.full_name}/issues/comments/{comment.id}")
        issue = repo.issues[comment.number]
        kind = "pull" if issue.pull else "issues"
        return {
            "id": comment.id,
            "node_id": _node_id("IC", comment.id),
            "url": api,
            "html_url": self._web(
                f"/{repo.full_name}/{kind}/{comment.number}#issuecomment-{comment.id}"
            ),
            "body": comment.body,
            "user": self._user_json(comment.user),
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "issue_url": self._api(f"/repos/{repo.full_name}/issues/{comment.number}"),
            "author_association": self._association(repo, comment.user),
            "performed_via_github_app": self._app_json() if comment.via_app else None,
            "reactions": self._reactions_json(f"{api}/reactions", comment.reactions),
        }

    def _branch_json(self, repo: _Repo, ref: str, sha: str, user: str) -> dict[str, Any]:
        return {
            "label": f"{repo.owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self._user_json(user),
            "repo": self._repo_json(repo, webhook=True),
        }

    def _pull_json(
        self, repo: _Repo, issue: _Issue, webhook: bool = False, simple: bool = False
    ) -> dict[str, Any]:
        pull = issue.pull
        assert pull is not None
        api = self._api(f"/repos/{repo.full_name}/pulls/{issue.number}")
        issue_api = self._api(f"/repos/{repo.full_name}/issues/{issue.number}")
        html = self._web(f"/{repo.full_name}/pull/{issue.number}")
        data: dict[str, Any] = {
            "url": api,
            "id": pull.id,
            "node_id": _node_id("PR", pull.id),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_api,
            "commits_url": f"{api}/commits",
            "review_comments_url": f"{api}/comments",
            "review_comment_url": self._api(f"/repos/{repo.full_name}/pulls/comments{{/number}}"),
            "comments_url": f"{issue_api}/comments",
            "statuses_url": self._api(f"/repos/{repo.full_name}/statuses/{pull.head_sha}"),
            "number": issue.number,
            "state": issue.state,
            "locked": False,
            "title": issue.title,
            "user": self._user_json(issue.user),
            "body": issue.body,
            "labels": [self._label_json(repo, repo.labels[n]) for n in issue.labels],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
            "merged_at": pull.merged_at,
            "merge_commit_sha": pull.merge_commit_sha,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": self._branch_json(repo, pull.head_ref, pull.head_sha, repo.owner),
            "base": self._branch_json(repo, pull.base_ref, pull.base_sha, repo.owner),
            "_links": {
                "self": {"href": api},
                "html": {"href": html},
                "issue": {"href": issue_api},
                "comments": {"href": f"{issue_api}/comments"},
                "review_comments": {"href": f"{api}/comments"},
                "review_comment": {
                    "href": self._api(f"/repos/{repo.full_name}/pulls/comments{{/number}}")
                },
                "commits": {"href": f"{api}/commits"},
                "statuses": {
                    "href": self._api(f"/repos/{repo.full_name}/statuses/{pull.head_sha}")
                },
            },
            "author_association": self._association(repo, issue.user),
            "auto_merge": None,
            "draft": pull.draft,
        }
        if simple:
            return data
        files = self._pr_files(repo, pull)
        merge_base = self._pr_base(repo, pull)
        mergeable: bool | None = None
        if issue.state == "open":
            base_tip = repo.git.rev_parse(f"refs/heads/{pull.base_ref}") or pull.base_sha
            mergeable = (
                repo.git.merge(
                    base_tip, pull.head_sha, message="probe", committer=Identity("x", "x@x")
                )
                is not None
            )
        data.update(
            {
                "merged": pull.merged,
                "mergeable": mergeable,
                "rebaseable": mergeable,
                "mergeable_state": "unknown"
                if mergeable is None
                else ("clean" if mergeable else "dirty"),
                "merged_by": self._user_json(pull.merged_by) if pull.merged_by else None,
                "comments": sum(
                    1
                    for c in self._comments.values()
                    if c.repo == repo.full_name and c.number == issue.number
                ),
                "review_comments": sum(
                    1
                    for c in self._review_comments.values()
                    if c.repo == repo.full_name and c.number == issue.number
                ),
                "maintainer_can_modify": False,
                "commits": len(repo.git.commits_between(merge_base, pull.head_sha)),
                "additions": sum(f.additions for f in files),
                "deletions": sum(f.deletions for f in files),
                "changed_files": len(files),
            }
        )
        return data

    def _review_comment_json(
        self, repo: _Repo, comment: _ReviewComment, webhook: bool = False
    ) -> dict[str, Any]:
        api = self._api(f"/repos/{repo.full_name}/pulls/comments/{comment.id}")
        pr_api = self._api(f"/repos/{repo.full_name}/pulls/{comment.number}")
        html = self._web(f"/{repo.full_name}/pull/{comment.number}#discussion_r{comment.id}")
        data: dict[str, Any] = {
            "url": api,
            "pull_request_review_id": comment.review_id,
            "id": comment.id,
            "node_id": _node_id("PRRC", comment.id),
            "diff_hunk": comment.diff_hunk,
            "path": comment.path,
            "position": comment.position,
            "original_position": comment.original_position,
            "commit_id": comment.commit_id,
            "original_commit_id": comment.original_commit_id,
            "user": self._user_json(comment.user),
            "body": comment.body,
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "html_url": html,
            "pull_request_url": pr_api,
            "author_association": self._association(repo, comment.user),
            "_links": {
                "self": {"href": api},
                "html": {"href": html},
                "pull_request": {"href": pr_api},
            },
            "reactions": self._reactions_json(f"{api}/reactions", comment.reactions),
            "start_line": comment.start_line,
            "original_start_line": comment.original_start_line,
            "start_side": comment.start_side,
            "line": comment.line,
            "original_line": comment.original_line,
            "side": comment.side or "RIGHT",
            "subject_type": comment.subject_type,
        }
        if comment.in_reply_to_id is not None:
            data["in_reply_to_id"] = comment.in_reply_to_id
        if comment.via_app and not webhook:
            data["performed_via_github_app"] = self._app_json()
        return data

    def _review_json(self, repo: _Repo, review: _Review, webhook: bool = False) -> dict[str, Any]:
        pr_api = self._api(f"/repos/{repo.full_name}/pulls/{review.number}")
        html = self._web(f"/{repo.full_name}/pull/{review.number}#pullrequestreview-{review.id}")
        data: dict[str, Any] = {
            "id": review.id,
            "node_id": _node_id("PRR", review.id),
            "user": self._user_json(review.user),
            "body": review.body,
            "state": review.state.lower() if webhook else review.state,
            "html_url": html,
            "pull_request_url": pr_api,
            "author_association": self._association(repo, review.user),
            "_links": {"html": {"href": html}, "pull_request": {"href": pr_api}},
            "commit_id": review.commit_id,
        }
        if webhook and not review.body:
            data["body"] = None
        if review.submitted_at is not None:
            data["submitted_at"] = review.submitted_at
        return data

    def _commit_json(self, repo: _Repo, sha: str, *, files: bool = False) -> dict[str, Any]:
        info = repo.git.commit_info(sha)
        api = self._api(f"/repos/{repo.full_name}/commits/{sha}")
        git_api = self._api(f"/repos/{repo.full_name}/git/commits/{sha}")

        def who(name: str) -> dict[str, Any] | None:
            return self._user_json(name) if name in self._users else None

        data: dict[str, Any] = {
            "sha": sha,
            "node_id": _node_id("C", int(sha[:7], 16)),
            "commit": {
                "author": {
                    "name": info.author_name,
                    "email": info.author_email,
                    "date": info.author_date,
                },
                "committer": {
                    "name": info.committer_name,
                    "email": info.committer_email,
                    "date": info.committer_date,
                },
                "message": info.message,
                "tree": {
                    "sha": info.tree,
                    "url": self._api(f"/repos/{repo.full_name}/git/trees/{info.tree}"),
                },
                "url": git_api,
                "comment_count": 0,
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            },
            "url": api,
            "html_url": self._web(f"/{repo.full_name}/commit/{sha}"),
            "comments_url": f"{api}/comments",
            "author": who(info.author_name),
            "committer": who(info.committer_name),
            "parents": [
                {
                    "sha": p,
                    "url": self._api(f"/repos/{repo.full_name}/commits/{p}"),
                    "html_url": self._web(f"/{repo.full_name}/commit/{p}"),
                }
                for p in info.parents
            ],
        }
        if files:
            parent = info.parents[0] if info.parents else None
            diffs = (
                repo.git.file_diffs(parent, sha)
                if parent
                else repo.git.file_diffs("4b825dc642cb6eb9a060e54bf8d69288fbee4904", sha)
            )
            data["stats"] = {
                "additions": sum(f.additions for f in diffs),
                "deletions": sum(f.deletions for f in diffs),
                "total": sum(f.additions + f.deletions for f in diffs),
            }
            data["files"] = [self._diff_entry_json(repo, sha, f) for f in diffs]
        return data

    def _diff_entry_json(self, repo: _Repo, head: str, entry: FileDiff) -> dict[str, Any]:
        quoted = urllib.parse.quote(entry.filename)
        data: dict[str, Any] = {
            "sha": entry.blob_sha,
            "filename": entry.filename,
            "status": entry.status,
            "additions": entry.additions,
            "deletions": entry.deletions,
            "changes": entry.additions + entry.deletions,
            "blob_url": self._web(f"/{repo.full_name}/blob/{head}/{quoted}"),
            "raw_url": self._web(f"/{repo.full_name}/raw/{head}/{quoted}"),
            "contents_url": self._api(f"/repos/{repo.full_name}/contents/{quoted}?ref={head}"),
        }
        if entry.patch is not None:
            data["patch"] = entry.patch
        if entry.previous_filename is not None:
            data["previous_filename"] = entry.previous_filename
        return data

    def _check_run_json(self, repo: _Repo, run: _CheckRun) -> dict[str, Any]:
        api = self._api(f"/repos/{repo.full_name}/check-runs/{run.id}")
        pulls = [
            {
                "id": i.pull.id,
                "number": i.number,
                "url": self._api(f"/repos/{repo.full_name}/pulls/{i.number}"),
                "head": {
                    "ref": i.pull.head_ref,
                    "sha": i.pull.head_sha,
                    "repo": {
                        "id": repo.id,
                        "url": self._api(f"/repos/{repo.full_name}"),
                        "name": repo.name,
                    },
                },
                "base": {
                    "ref": i.pull.base_ref,
                    "sha": i.pull.base_sha,
                    "repo": {
                        "id": repo.id,
                        "url": self._api(f"/repos/{repo.full_name}"),
                        "name": repo.name,
                    },
                },
            }
            for i in repo.issues.values()
            if i.pull is not None and i.state == "open" and i.pull.head_sha == run.head_sha
        ]
        output = {
            "title": run.output.get("title"),
            "summary": run.output.get("summary"),
            "text": run.output.get("text"),
            "annotations_count": len(run.output.get("annotations", [])),
            "annotations_url": f"{api}/annotations",
        }
        return {
            "id": run.id,
            "head_sha": run.head_sha,
            "node_id": _node_id("CR", run.id),
            "external_id": run.external_id,
            "url": api,
            "html_url": self._web(f"/{repo.full_name}/runs/{run.id}"),
            "details_url": run.details_url,
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": run.started_at,
            "completed_at": run.completed_at,
            "output": output,
            "name": run.name,
            "check_suite": {"id": run.suite_id},
            "app": self._app_json(),
            "pull_requests": pulls,
        }

    def _reaction_json(self, reaction: _Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id,
            "node_id": _node_id("REA", reaction.id),
            "user": self._user_json(reaction.user),
            "content": reaction.content,
            "created_at": reaction.created_at,
        }

    def _content_json(self, repo: _Repo, ref: str, entry: Any) -> dict[str, Any]:
        quoted = urllib.parse.quote(entry.path)
        api = self._api(f"/repos/{repo.full_name}/contents/{quoted}?ref={ref}")
        kind = {"blob": "file", "tree": "dir", "commit": "submodule"}[entry.type]
        if entry.mode == "120000":
            kind = "symlink"
        git_kind = "trees" if entry.type == "tree" else "blobs"
        git_url = self._api(f"/repos/{repo.full_name}/git/{git_kind}/{entry.sha}")
        html = self._web(
            f"/{repo.full_name}/{'tree' if entry.type == 'tree' else 'blob'}/{ref}/{quoted}"
        )
        return {
            "type": kind,
            "size": entry.size,
            "name": entry.path.rsplit("/", 1)[-1],
            "path": entry.path,
            "sha": entry.sha,
            "url": api,
            "git_url": git_url,
            "html_url": html,
            "download_url": self._web(f"/{repo.full_name}/raw/{ref}/{quoted}")
            if kind == "file"
            else None,
            "_links": {"self": api, "git": git_url, "html": html},
        }

    # ================================================================== internals: webhooks

    def _emit(
        self, event: str, action: str | None, repo: _Repo, sender: str, body: dict[str, Any]
    ) -> None:
        """Build, check and queue the webhook GitHub would send for a state change."""
        app = self._app
        if app is None:
            return
        payload: dict[str, Any] = {}
        if action is not None:
            payload["action"] = action
        payload.update(body)
        payload["repository"] = self._repo_json(repo, webhook=True)
        if self._users[repo.owner].type == "Organization":
            payload["organization"] = self._org_json(repo.owner)
        inst = self._installation_for(repo)
        if inst is not None:
            legacy = base64.b64encode(f"023:IntegrationInstallation{inst.id}".encode()).decode()
            payload["installation"] = {"id": inst.id, "node_id": legacy}
        payload["sender"] = self._user_json(sender)
        name = event.replace("_", "-") + (f"-{action.replace('_', '-')}" if action else "")
        for problem in self.contract.check_webhook(name, payload):
            if not _tolerated(problem):
                self.contract_errors.append(f"webhook {event}.{action}: {problem}")
        if inst is None or self._webhook_url is None:
            return
        subscribed = self._webhook_events if self._webhook_events is not None else set(app.events)
        if event not in subscribed:
            return
        delivery = _Delivery(
            id=next(self._ids),
            guid=str(uuid.uuid4()),
            event=event,
            action=action,
            installation_id=inst.id,
            repository_id=repo.id,
            payload=payload,
            redelivery=False,
        )
        self._queue_delivery(delivery)

    @staticmethod
    def _repo_brief(repo: _Repo) -> dict[str, Any]:
        """A repository as installation events list it."""
        node_id = base64.b64encode(f"010:Repository{repo.id}".encode()).decode()
        return {
            "id": repo.id,
            "node_id": node_id,
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
        }

    def _emit_repositories_removed(
        self, inst: _Installation, repos: list[dict[str, Any]], sender: str
    ) -> None:
        """``installation_repositories.removed``: sent to every App, subscribed or not."""
        payload: dict[str, Any] = {
            "action": "removed",
            "installation": self._installation_json(inst),
            "repository_selection": "all" if inst.repos is None else "selected",
            "repositories_added": [],
            "repositories_removed": repos,
            "requester": None,
            "sender": self._user_json(sender),
        }
        for problem in self.contract.check_webhook("installation-repositories-removed", payload):
            if not _tolerated(problem):
                self.contract_errors.append(f"webhook installation_repositories.removed: {problem}")
        if self._webhook_url is None:
            return
        self._queue_delivery(
            _Delivery(
                id=next(self._ids),
                guid=str(uuid.uuid4()),
                event="installation_repositories",
                action="removed",
                installation_id=inst.id,
                repository_id=None,
                payload=payload,
                redelivery=False,
            )
        )

    def _queue_delivery(self, delivery: _Delivery) -> None:
        self._deliveries.append(delivery)
        self._pending_deliveries += 1
        self._delivery_queue.put(delivery)

    def _deliver_loop(self) -> None:
        """One thread, in order, like GitHub's hookshot for one hook; no automatic retries."""
        with httpx.Client(timeout=self.webhook_timeout) as client:
            while True:
                delivery = self._delivery_queue.get()
                if delivery is None:
                    return
                try:
                    self._deliver(client, delivery)
                finally:
                    with self._delivery_done:
                        self._pending_deliveries -= 1
                        self._delivery_done.notify_all()

    def _deliver(self, client: httpx.Client, delivery: _Delivery) -> None:
        with self._lock:
            url = self._webhook_url
            secret = self._webhook_secret.encode()
            app = self._app
        raw = json.dumps(delivery.payload, separators=(",", ":")).encode()
        headers = {
            "Accept": "*/*",
            "Content-Type": "application/json",
            "User-Agent": HOOKSHOT_UA,
            "X-GitHub-Delivery": delivery.guid,
            "X-GitHub-Event": delivery.event,
            "X-GitHub-Hook-ID": str(app.hook_id if app else 0),
            "X-GitHub-Hook-Installation-Target-ID": str(app.id if app else 0),
            "X-GitHub-Hook-Installation-Target-Type": "integration",
            "X-Hub-Signature": "sha1=" + hmac.new(secret, raw, hashlib.sha1).hexdigest(),
            "X-Hub-Signature-256": "sha256=" + hmac.new(secret, raw, hashlib.sha256).hexdigest(),
        }
        started = time.monotonic()
        status_code = 0
        response_headers: dict[str, str] = {}
        response_body: str | None = None
        if url is None:
            status = "No webhook URL configured"
        else:
            try:
                response = client.post(url, content=raw, headers=headers)
                status_code = response.status_code
                response_headers = dict(response.headers)
                response_body = response.text[:4096]
                status = (
                    "OK" if 200 <= status_code < 300 else f"Invalid HTTP Response: {status_code}"
                )
            except httpx.TimeoutException:
                status = "timed out"
            except httpx.HTTPError as exc:
                status = f"failed to connect to host: {type(exc).__name__}"
        with self._lock:
            delivery.url = url or ""
            delivery.delivered_at = _iso()
            delivery.duration = round(time.monotonic() - started, 3)
            delivery.status = status
            delivery.status_code = status_code
            delivery.request_headers = headers
            delivery.response_headers = response_headers
            delivery.response_body = response_body

    def _delivery_item(self, d: _Delivery) -> dict[str, Any]:
        return {
            "id": d.id,
            "guid": d.guid,
            "delivered_at": d.delivered_at,
            "redelivery": d.redelivery,
            "duration": d.duration,
            "status": d.status,
            "status_code": d.status_code,
            "event": d.event,
            "action": d.action,
            "installation_id": d.installation_id,
            "repository_id": d.repository_id,
            "throttled_at": None,
        }

    # ================================================================== internals: HTTP

    def _build_asgi_app(self) -> FastAPI:
        app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
        methods = ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"]

        @app.api_route("/{full_path:path}", methods=methods)
        async def catch_all(request: Request) -> Response:
            body = await request.body()
            return await run_in_threadpool(self._handle_http, request, body)

        return app

    @staticmethod
    def _request_id() -> str:
        return f"{secrets.token_hex(2).upper()}:{secrets.token_hex(3).upper()}:" + (
            f"{secrets.token_hex(4).upper()}:{secrets.token_hex(4).upper()}:"
            f"{secrets.token_hex(4).upper()}"
        )

    def _handle_http(self, request: Request, body: bytes) -> Response:
        path = request.url.path
        git = _GIT_PATH.match(path)
        if git is not None:
            return self._handle_git(request, body, git)
        headers = {k.lower(): v for k, v in request.headers.items()}
        query_pairs = urllib.parse.parse_qsl(request.url.query, keep_blank_values=True)
        query = dict(query_pairs)
        parsed: Any = None
        json_error = False
        if body:
            try:
                parsed = json.loads(body)
            except ValueError:
                json_error = True
        record = RecordedRequest(request.method, path, query, 0, parsed, headers)
        rid = self._request_id()
        try:
            resp = self._dispatch(
                request.method, path, query_pairs, headers, parsed, json_error, record
            )
        except GitHubAPIError as err:
            resp = _Resp(err.status, err.body, dict(err.headers))
        except Exception as exc:  # a bug in the fake: answer like GitHub and record it
            with self._lock:
                self.contract_errors.append(f"{request.method} {path}: fake crashed: {exc!r}")
            resp = _Resp(500, {"message": "Server Error", "documentation_url": DOCS})
        with self._lock:
            self._refill_rate_limit()
            out_headers = {
                "X-GitHub-Request-Id": rid,
                "X-GitHub-Media-Type": "github.v3; format=json",
                "X-GitHub-Api-Version-Selected": "2022-11-28",
                "X-RateLimit-Limit": str(self._rate_limit),
                "X-RateLimit-Remaining": str(max(self._rate_remaining, 0)),
                "X-RateLimit-Reset": str(self._rate_reset),
                "X-RateLimit-Used": str(self._rate_limit - max(self._rate_remaining, 0)),
                "X-RateLimit-Resource": "core",
                "Server": "GitHub.com",
            }
            out_headers.update(resp.headers)
            record.status = resp.status
            record.response = resp.body
            self.requests.append(record)
        if resp.text is not None:
            content = resp.text.encode()
        elif resp.body is None:
            content = b""
        else:
            content = json.dumps(resp.body).encode()
            if request.method == "GET" and resp.status == 200:
                out_headers["ETag"] = 'W/"' + hashlib.sha256(content).hexdigest()[:32] + '"'
        media = resp.media_type if content else None
        return Response(
            content=content, status_code=resp.status, headers=out_headers, media_type=media
        )

    def _refill_rate_limit(self) -> None:
        if _now() >= self._rate_reset:
            self._rate_remaining = self._rate_limit
            self._rate_reset = int(_now()) + 3600

    def _dispatch(
        self,
        method: str,
        raw_path: str,
        query_pairs: list[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        json_error: bool,
        record: RecordedRequest,
    ) -> _Resp:
        if not headers.get("user-agent"):
            raise GitHubAPIError(
                403,
                "Request forbidden by administrative rules. Please make sure your request has "
                "a User-Agent header (https://docs.github.com/en/rest/overview/"
                "resources-in-the-rest-api#user-agent-required). Check "
                "https://developer.github.com for other possible causes.",
            )
        if self.api_prefix and not raw_path.startswith(self.api_prefix + "/"):
            with self._lock:
                self.contract_errors.append(
                    f"{method} {raw_path}: outside the API prefix {self.api_prefix}"
                )
            raise _not_found()
        path = raw_path[len(self.api_prefix) :]
        record.path = path
        matched = self.contract.match(method, path)
        if matched is None:
            with self._lock:
                known = self.contract.path_documented(path)
                what = "method not documented for" if known else "no documented operation for"
                self.contract_errors.append(f"{method} {path}: {what} this path (404)")
            raise _not_found()
        op, params = matched
        record.operation_id = op.operation_id
        with self._lock:
            injected = self._take_injection(method, path)
        if injected is not None:
            return injected
        for problem in self.contract.check_query(op, query_pairs):
            with self._lock:
                self.contract_errors.append(f"{method} {path}: {problem}")
        with self._lock:
            ctx = self._authenticate(op, params, dict(query_pairs), headers, body, path)
            if op.operation_id != "rate-limit/get":
                self._refill_rate_limit()
                if self._rate_remaining <= 0:
                    who = (
                        f"installation ID {ctx.token.installation_id}" if ctx.token else "this app"
                    )
                    raise GitHubAPIError(
                        403,
                        f"API rate limit exceeded for {who}. If you reach out to GitHub Support "
                        "for help, please include the request ID.",
                        documentation_url="https://docs.github.com/rest/overview/"
                        "rate-limits-for-the-rest-api#about-the-primary-rate-limit",
                        # the exhausted window's reset: the response's own headers are
                        # built later, when the window may already have been refilled
                        headers={
                            "X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset": str(self._rate_reset),
                        },
                    )
                self._rate_remaining -= 1
        if json_error:
            raise GitHubAPIError(
                400, "Problems parsing JSON", documentation_url=op.documentation_url
            )
        if method in ("POST", "PATCH", "PUT") or body is not None:
            messages = self.contract.check_request_body(op, body)
            if messages:
                with self._lock:
                    self.contract_errors.append(
                        f"{method} {path}: invalid request body: {'; '.join(messages)}"
                    )
                raise GitHubAPIError(
                    422,
                    "Invalid request.\n\n" + "\n".join(messages),
                    documentation_url=op.documentation_url,
                )
        handler = getattr(self, _HANDLERS[op.operation_id])
        with self._lock:
            resp: _Resp = handler(ctx)
            is_json = resp.text is None and resp.body is not None
            for problem in self.contract.check_response(op, resp.status, resp.body, is_json):
                if not _tolerated(problem):
                    self.contract_errors.append(
                        f"{method} {path}: response {resp.status}: {problem}"
                    )
        return resp

    def _take_injection(self, method: str, path: str) -> _Resp | None:
        for rule in self._injections:
            if rule.remaining > 0 and rule.method in ("*", method) and rule.path.search(path):
                rule.remaining -= 1
                body = rule.body
                if body is None:
                    body = {"message": "Server Error", "documentation_url": DOCS}
                return _Resp(rule.status, body, dict(rule.headers))
        return None

    # ---- authentication

    def _authenticate(
        self,
        op: Operation,
        params: dict[str, str],
        query: dict[str, str],
        headers: dict[str, str],
        body: Any,
        path: str,
    ) -> _Ctx:
        auth = headers.get("authorization", "")
        scheme, _, credential = auth.partition(" ")
        credential = credential.strip()
        ctx = _Ctx(op, params, query, body, headers, path, None, None, False)
        needs_jwt = op.operation_id in JWT_OPERATIONS
        looks_jwt = credential.count(".") == 2 and scheme.lower() == "bearer"
        if op.operation_id == "rate-limit/get" and not auth:
            return ctx
        if op.operation_id in ANONYMOUS_OPERATIONS:
            return ctx
        if needs_jwt:
            if not looks_jwt:
                raise GitHubAPIError(
                    401,
                    "A JSON web token could not be decoded",
                    documentation_url=op.documentation_url,
                )
            self._verify_jwt(credential, op)
            ctx.actor = None
            return ctx
        if not auth:
            repo = self._repos.get(f"{params.get('owner')}/{params.get('repo')}")
            if repo is not None and not repo.private and op.method == "GET":
                return ctx  # anonymous read of a public repository
            if repo is None or repo.private:
                raise _not_found(op)
            raise GitHubAPIError(
                401, "Requires authentication", documentation_url=op.documentation_url
            )
        if looks_jwt:
            raise GitHubAPIError(
                403,
                "Resource not accessible by integration",
                documentation_url=op.documentation_url,
            )
        if scheme.lower() not in ("token", "bearer"):
            raise GitHubAPIError(401, "Bad credentials", documentation_url=DOCS)
        token = self._tokens.get(credential)
        if token is None or token.expires_at <= _now():
            raise GitHubAPIError(401, "Bad credentials", documentation_url=DOCS)
        ctx.token = token
        ctx.actor = self._require_app().bot.login
        ctx.via_app = True
        if "owner" in params and "repo" in params:
            full = f"{params['owner']}/{params['repo']}"
            repo = self._repos.get(full)
            if repo is None or repo not in self._token_repos(token):
                raise _not_found(op)
        needed = OPERATION_PERMISSIONS.get(op.operation_id, ())
        if needed and not any(_grants(token.permissions, p, lvl) for p, lvl in needed):
            raise GitHubAPIError(
                403,
                "Resource not accessible by integration",
                documentation_url=op.documentation_url,
                headers={
                    "X-Accepted-GitHub-Permissions": "; ".join(f"{p}={lvl}" for p, lvl in needed)
                },
            )
        return ctx

    def _verify_jwt(self, credential: str, op: Operation) -> _App:
        doc = op.documentation_url

        def fail(message: str) -> GitHubAPIError:
            return GitHubAPIError(401, message, documentation_url=doc)

        app = self._app
        try:
            header = jwt.get_unverified_header(credential)
            claims = jwt.decode(credential, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise fail("A JSON web token could not be decoded") from None
        if header.get("alg") != "RS256":
            raise fail("A JSON web token could not be decoded")
        iss = claims.get("iss")
        # GitHub accepts the App's id or, since 2024, its client id as the issuer.
        if app is None or str(iss) not in (str(app.id), app.client_id):
            raise fail(
                "Integration not found"
                if iss is not None
                else "'Issuer' claim ('iss') must be an Integer"
            )
        try:
            jwt.decode(
                credential,
                app.public_key,
                algorithms=["RS256"],
                options={"verify_exp": False, "verify_iat": False, "verify_nbf": False},
            )
        except jwt.PyJWTError:
            raise fail("A JSON web token could not be decoded") from None
        iat, exp = claims.get("iat"), claims.get("exp")
        now = _now()
        if not isinstance(iat, int | float) or isinstance(iat, bool) or iat > now + 60:
            raise fail(
                "'Issued at' claim ('iat') must be an Integer representing the time that the "
                "assertion was issued."
            )
        if not isinstance(exp, int | float) or isinstance(exp, bool) or exp <= now:
            raise fail(
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires."
            )
        if exp - iat > 600 or exp > now + 600 + 60:
            raise fail("'Expiration time' claim ('exp') is too far in the future")
        return app

    # ---- git over HTTP

    def _handle_git(self, request: Request, body: bytes, match: re.Match[str]) -> Response:
        full = f"{match.group('owner')}/{match.group('repo')}"
        rest = match.group("rest") or ""
        query = request.url.query
        headers = {k.lower(): v for k, v in request.headers.items()}
        pushing = rest == "/git-receive-pack" or "service=git-receive-pack" in query
        challenge = {"WWW-Authenticate": 'Basic realm="GitHub"'}
        with self._lock:
            # An unknown repository (or an old name after a rename) is answered as a private
            # repository the caller cannot see: 401 without credentials, else 404.
            repo = self._repos.get(full)
            token_value = _git_credential(headers.get("authorization", ""))
            token = self._tokens.get(token_value) if token_value else None
            record = RecordedRequest(
                request.method,
                request.url.path,
                dict(urllib.parse.parse_qsl(query)),
                0,
                None,
                headers,
                "git",
            )
            status = 0
            bad_token = bool(token_value) and (token is None or token.expires_at <= _now())
            if bad_token or (token is None and (repo is None or repo.private or pushing)):
                status = 401
            elif token is not None and (repo is None or repo not in self._token_repos(token)):
                status = 404 if repo is None or repo.private else 403
            elif (
                token is not None
                and pushing
                and not _grants(token.permissions, "contents", "write")
            ):
                status = 403
            if status:
                record.status = status
                self.requests.append(record)
                message = {
                    401: "Invalid username or token.",
                    403: f"Permission to {full}.git denied.",
                    404: "Repository not found.",
                }[status]
                return Response(
                    message + "\n",
                    status_code=status,
                    headers=challenge if status == 401 else {},
                    media_type="text/plain",
                )
            assert repo is not None
            before = repo.git.branches() if pushing and request.method == "POST" else {}
            actor = self._require_app().bot.login if token else "anonymous"
            # The bare repository stays where it was created, whatever the repository's name.
            project_root = self.data_dir / "git"
            path_info = "/" + repo.git.path.relative_to(project_root).as_posix() + rest
        status, cgi_headers, payload = git_http_backend(
            project_root,
            path_info=path_info,
            method=request.method,
            query=query,
            headers=headers,
            body=body,
            remote_user=actor if token else None,
        )
        if pushing and request.method == "POST":
            with self._lock:
                after = repo.git.branches()
                repo.pushed_at = _iso()
                for branch in sorted(set(before) | set(after)):
                    if before.get(branch) != after.get(branch):
                        self._branch_moved(
                            repo, branch, before.get(branch), after.get(branch), actor
                        )
        with self._lock:
            record.status = status
            self.requests.append(record)
        out = {k: v for k, v in cgi_headers if k.lower() != "content-length"}
        return Response(payload, status_code=status, headers=out)

    # ================================================================== handlers: app

    def _repo_from(self, ctx: _Ctx) -> _Repo:
        repo = self._repos.get(f"{ctx.params['owner']}/{ctx.params['repo']}")
        if repo is None:
            raise _not_found(ctx.op)
        return repo

    def _paginate(
        self, ctx: _Ctx, items: list[Any], *, default: int = 30
    ) -> tuple[list[Any], dict[str, str]]:
        """Slice ``items`` by ``page``/``per_page`` and build GitHub's ``Link`` header."""
        per_page = max(1, min(_int_query(ctx.query, "per_page", default), 100))
        page = max(1, _int_query(ctx.query, "page", 1))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def url(n: int) -> str:
            query = dict(ctx.query)
            query["per_page"] = str(per_page)
            query["page"] = str(n)
            return f"<{self._api(ctx.path)}?{urllib.parse.urlencode(query)}>"

        links = []
        if page > 1:
            links += [f'{url(page - 1)}; rel="prev"']
        if page < last:
            links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
        if page > 1:
            links += [f'{url(1)}; rel="first"']
        return chunk, ({"Link": ", ".join(links)} if links else {})

    @_handles("apps/create-from-manifest")
    def _h_create_from_manifest(self, ctx: _Ctx) -> _Resp:
        # Single use: a code is gone once exchanged, and dead after an hour.
        entry = self._manifest_codes.pop(ctx.params["code"], None)
        if entry is None or entry[0] <= _now():
            raise _not_found(ctx.op)
        return _Resp(201, copy.deepcopy(entry[1]))

    @_handles("apps/get-authenticated")
    def _h_get_app(self, ctx: _Ctx) -> _Resp:
        return _Resp(200, self._app_json())

    @_handles("apps/list-installations")
    def _h_list_installations(self, ctx: _Ctx) -> _Resp:
        items = [self._installation_json(i) for i in self._installations.values()]
        chunk, headers = self._paginate(ctx, items)
        return _Resp(200, chunk, headers)

    @_handles("apps/get-installation")
    def _h_get_installation(self, ctx: _Ctx) -> _Resp:
        inst = self._installations.get(int(ctx.params["installation_id"]))
        if inst is None:
            raise _not_found(ctx.op)
        return _Resp(200, self._installation_json(inst))

    @_handles("apps/create-installation-access-token")
    def _h_create_token(self, ctx: _Ctx) -> _Resp:
        inst = self._installations.get(int(ctx.params["installation_id"]))
        if inst is None:
            raise _not_found(ctx.op)
        body = ctx.body or {}
        permissions = dict(inst.permissions)
        if body.get("permissions"):  # an empty map means "everything installed"
            for name, level in body["permissions"].items():
                if not _grants(inst.permissions, name, level):
                    raise GitHubAPIError(
                        422,
                        "The permissions requested are not granted to this installation.",
                        documentation_url=ctx.op.documentation_url,
                    )
            permissions = dict(body["permissions"])
        repos: set[str] | None = None
        available = {
            r.full_name: r for r in self._repos.values() if self._installation_for(r) is inst
        }
        if "repositories" in body or "repository_ids" in body:
            repos = set()
            for name in body.get("repositories", []):
                full = name if "/" in name else f"{inst.account}/{name}"
                if full not in available:
                    raise GitHubAPIError(
                        422,
                        "There is at least one repository that does not exist or is not "
                        "accessible to the parent installation.",
                        documentation_url=ctx.op.documentation_url,
                    )
                repos.add(full)
            by_id = {r.id: r.full_name for r in available.values()}
            for rid in body.get("repository_ids", []):
                if rid not in by_id:
                    raise GitHubAPIError(
                        422,
                        "There is at least one repository that does not exist or is not "
                        "accessible to the parent installation.",
                        documentation_url=ctx.op.documentation_url,
                    )
                repos.add(by_id[rid])
        token = self._new_token(inst, permissions, repos)
        data: dict[str, Any] = {
            "token": token.token,
            "expires_at": _iso(token.expires_at),
            "permissions": permissions,
            "repository_selection": "all" if inst.repos is None and repos is None else "selected",
        }
        if repos is not None or inst.repos is not None:
            data["repositories"] = [self._repo_json(r) for r in self._token_repos(token)]
        return _Resp(201, data)

    def _installation_of_account(self, account: str, op: Operation) -> _Resp:
        for inst in self._installations.values():
            if inst.account == account:
                return _Resp(200, self._installation_json(inst))
        raise _not_found(op)

    @_handles("apps/get-repo-installation")
    def _h_repo_installation(self, ctx: _Ctx) -> _Resp:
        repo = self._repos.get(f"{ctx.params['owner']}/{ctx.params['repo']}")
        inst = self._installation_for(repo) if repo else None
        if inst is None:
            raise _not_found(ctx.op)
        return _Resp(200, self._installation_json(inst))

    @_handles("apps/get-org-installation")
    def _h_org_installation(self, ctx: _Ctx) -> _Resp:
        return self._installation_of_account(ctx.params["org"], ctx.op)

    @_handles("apps/get-user-installation")
    def _h_user_installation(self, ctx: _Ctx) -> _Resp:
        return self._installation_of_account(ctx.params["username"], ctx.op)

    @_handles("apps/list-repos-accessible-to-installation")
    def _h_installation_repos(self, ctx: _Ctx) -> _Resp:
        assert ctx.token is not None
        repos = [self._repo_json(r) for r in self._token_repos(ctx.token)]
        chunk, headers = self._paginate(ctx, repos)
        inst = self._installations[ctx.token.installation_id]
        return _Resp(
            200,
            {
                "total_count": len(repos),
                "repositories": chunk,
                "repository_selection": "all" if inst.repos is None else "selected",
            },
            headers,
        )

    @_handles("apps/list-webhook-deliveries")
    def _h_list_deliveries(self, ctx: _Ctx) -> _Resp:
        per_page = max(1, min(_int_query(ctx.query, "per_page", 30), 100))
        items = sorted((d for d in self._deliveries if d.status != "pending"), key=lambda d: -d.id)
        if "status" in ctx.query:
            want_ok = ctx.query["status"] == "success"
            items = [d for d in items if (d.status == "OK") == want_ok]
        cursor = ctx.query.get("cursor")
        if cursor:
            match = re.fullmatch(r"v1_(\d+)", cursor)
            if match is None:
                raise GitHubAPIError(
                    422, "Invalid cursor", documentation_url=ctx.op.documentation_url
                )
            items = [d for d in items if d.id < int(match.group(1))]
        chunk = items[:per_page]
        headers = {}
        if len(items) > per_page:
            query = {"per_page": str(per_page), "cursor": f"v1_{chunk[-1].id}"}
            if "status" in ctx.query:
                query["status"] = ctx.query["status"]
            headers["Link"] = f'<{self._api(ctx.path)}?{urllib.parse.urlencode(query)}>; rel="next"'
        return _Resp(200, [self._delivery_item(d) for d in chunk], headers)

    def _find_delivery(self, ctx: _Ctx) -> _Delivery:
        wanted = int(ctx.params["delivery_id"])
        for d in self._deliveries:
            if d.id == wanted and d.status != "pending":
                return d
        raise _not_found(ctx.op)

    @_handles("apps/get-webhook-delivery")
    def _h_get_delivery(self, ctx: _Ctx) -> _Resp:
        d = self._find_delivery(ctx)
        data = self._delivery_item(d)
        data["url"] = d.url
        data["request"] = {"headers": d.request_headers, "payload": d.payload}
        data["response"] = {"headers": d.response_headers, "payload": d.response_body}
        return _Resp(200, data)

    @_handles("apps/redeliver-webhook-delivery")
    def _h_redeliver(self, ctx: _Ctx) -> _Resp:
        self._queue_delivery(self._redelivery_of(self._find_delivery(ctx)))
        return _Resp(202, {})

    def _redelivery_of(self, original: _Delivery) -> _Delivery:
        return _Delivery(
            id=next(self._ids),
            guid=original.guid,
            event=original.event,
            action=original.action,
            installation_id=original.installation_id,
            repository_id=original.repository_id,
            payload=original.payload,
            redelivery=True,
        )

    @_handles("rate-limit/get")
    def _h_rate_limit(self, ctx: _Ctx) -> _Resp:
        self._refill_rate_limit()
        core = {
            "limit": self._rate_limit,
            "remaining": max(self._rate_remaining, 0),
            "reset": self._rate_reset,
            "used": self._rate_limit - max(self._rate_remaining, 0),
            "resource": "core",
        }
        other = {"limit": 5000, "remaining": 5000, "reset": self._rate_reset, "used": 0}
        return _Resp(
            200,
            {
                "resources": {
                    "core": core,
                    "graphql": {**other, "resource": "graphql"},
                    "search": {**other, "limit": 30, "remaining": 30, "resource": "search"},
                },
                "rate": core,
            },
        )

    # ================================================================== handlers: repos

    @_handles("repos/get")
    def _h_get_repo(self, ctx: _Ctx) -> _Resp:
        return _Resp(200, self._repo_json(self._repo_from(ctx), full=True))

    def _resolve_ref(self, repo: _Repo, ref: str | None) -> str | None:
        if ref is None:
            return repo.git.rev_parse(f"refs/heads/{repo.default_branch}")
        for candidate in (f"refs/heads/{ref}", f"refs/tags/{ref}", ref):
            sha = repo.git.rev_parse(candidate)
            if sha is not None:
                return sha
        return None

    @_handles("repos/get-content")
    def _h_get_content(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        ref = ctx.query.get("ref")
        sha = self._resolve_ref(repo, ref)
        if sha is None:
            raise GitHubAPIError(
                404,
                f"No commit found for the ref {ref}",
                documentation_url=ctx.op.documentation_url,
            )
        path = ctx.params["path"].strip("/")
        entry = repo.git.object_at(sha, path)
        if entry is None:
            raise _not_found(ctx.op)
        ref_name = ref or repo.default_branch
        if entry.type == "tree":
            items = [self._content_json(repo, ref_name, e) for e in repo.git.ls_tree(sha, path)]
            return _Resp(200, items)
        target = self._symlinked_file(repo, sha, entry)
        if target is not None:  # GitHub answers with the file a symlink points at
            entry = target
        data = self._content_json(repo, ref_name, entry)
        if entry.type == "blob":
            raw = repo.git.read_blob(entry.sha)
            if len(raw) > CONTENTS_LIMIT_BYTES and entry.mode != "120000":
                # GitHub's answer for a blob over 1 MB (its custom media types, which serve
                # up to 100 MB, are not faked: Kaizen asks for the default one)
                raise GitHubAPIError(
                    403,
                    "This API returns blobs up to 1 MB in size. The requested blob is too "
                    "large to fetch via the API, but you can use the Git Data API to request "
                    "blobs up to 100 MB in size.",
                    errors=[{"resource": "Blob", "field": "data", "code": "too_large"}],
                    documentation_url=ctx.op.documentation_url,
                )
            encoded = base64.b64encode(raw).decode()
            data["content"] = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60))
            data["content"] += "\n" if encoded else ""
            data["encoding"] = "base64"
            if entry.mode == "120000":
                data["target"] = raw.decode()
                data.pop("content")
                data.pop("encoding")
        return _Resp(200, data)

    def _symlinked_file(self, repo: _Repo, sha: str, entry: TreeEntry) -> TreeEntry | None:
        """The regular file of the repository that a symlink entry points at, if any."""
        if entry.mode != "120000":
            return None
        target = repo.git.read_blob(entry.sha).decode("utf-8", "replace")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(entry.path), target))
        if target.startswith("/") or resolved.startswith("..") or resolved == ".":
            return None
        found = repo.git.object_at(sha, resolved)
        if found is None or found.type != "blob" or found.mode == "120000":
            return None
        return found

    @_handles("repos/get-collaborator-permission-level")
    def _h_permission(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        login = ctx.params["username"]
        user = self._users.get(login)
        if user is None or user.type == "Organization":
            raise _not_found(ctx.op)
        if login == repo.owner:
            role = "admin"
        elif login in repo.collaborators:
            role = repo.collaborators[login]
        else:
            role = "none" if repo.private else "read"
        permission = ROLE_TO_PERMISSION.get(role, "none")
        user_json = self._user_json(login)
        user_json["role_name"] = role
        levels = ["read", "triage", "write", "maintain", "admin"]
        rank = levels.index(role) if role in levels else -1
        user_json["permissions"] = {
            "pull": rank >= 0,
            "triage": rank >= 1,
            "push": rank >= 2,
            "maintain": rank >= 3,
            "admin": rank >= 4,
        }
        return _Resp(200, {"permission": permission, "role_name": role, "user": user_json})

    def _diff_response(self, ctx: _Ctx, repo: _Repo, base: str, head: str) -> _Resp | None:
        """Serve ``application/vnd.github[.v3].diff|patch`` if the client asked for it."""
        accept = ctx.headers.get("accept", "")
        kind = re.search(r"application/vnd\.github(?:\.v3)?\.(diff|patch)", accept)
        if kind is None:
            return None
        if kind.group(1) == "diff":
            text = repo.git.raw_diff(base, head)
        else:
            text = repo.git.git("format-patch", "--stdout", f"{base}..{head}")
        return _Resp(
            200,
            None,
            {"X-GitHub-Media-Type": f"github.v3; param={kind.group(1)}"},
            text,
            media_type=f"application/vnd.github.{kind.group(1)}; charset=utf-8",
        )

    @_handles("repos/compare-commits-with-basehead")
    def _h_compare(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        basehead = ctx.params["basehead"]
        base_name, sep, head_name = basehead.partition("...")
        if not sep:
            base_name, sep, head_name = basehead.partition("..")
        base = self._resolve_ref(repo, base_name) if sep else None
        head = self._resolve_ref(repo, head_name) if sep else None
        if base is None or head is None:
            raise _not_found(ctx.op)
        merge_base = repo.git.merge_base(base, head) or base
        diff = self._diff_response(ctx, repo, merge_base, head)
        if diff is not None:
            return diff
        ahead = repo.git.commits_between(base, head)
        behind = repo.git.commits_between(head, base)
        status = (
            "identical"
            if not ahead and not behind
            else "ahead"
            if not behind
            else "behind"
            if not ahead
            else "diverged"
        )
        files = repo.git.file_diffs(merge_base, head)
        html = self._web(f"/{repo.full_name}/compare/{basehead}")
        return _Resp(
            200,
            {
                "url": self._api(f"/repos/{repo.full_name}/compare/{basehead}"),
                "html_url": html,
                "permalink_url": self._web(
                    f"/{repo.full_name}/compare/{repo.owner}:{base[:7]}...{repo.owner}:{head[:7]}"
                ),
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "base_commit": self._commit_json(repo, base),
                "merge_base_commit": self._commit_json(repo, merge_base),
                "status": status,
                "ahead_by": len(ahead),
                "behind_by": len(behind),
                "total_commits": len(ahead),
                "commits": [self._commit_json(repo, s) for s in ahead[:250]],
                "files": [self._diff_entry_json(repo, head, f) for f in files[:300]],
            },
        )

    @_handles("repos/get-commit")
    def _h_get_commit(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        ref = ctx.params["ref"]
        sha = self._resolve_ref(repo, ref)
        if sha is None:
            raise GitHubAPIError(
                422, f"No commit found for SHA: {ref}", documentation_url=ctx.op.documentation_url
            )
        info = repo.git.commit_info(sha)
        parent = info.parents[0] if info.parents else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        diff = self._diff_response(ctx, repo, parent, sha)
        if diff is not None:
            return diff
        return _Resp(200, self._commit_json(repo, sha, files=True))

    def _ref_json(self, repo: _Repo, ref: str, sha: str) -> dict[str, Any]:
        return {
            "ref": ref,
            "node_id": _node_id("REF", int(sha[:7], 16)),
            "url": self._api(f"/repos/{repo.full_name}/git/{ref}"),
            "object": {
                "type": "commit",
                "sha": sha,
                "url": self._api(f"/repos/{repo.full_name}/git/commits/{sha}"),
            },
        }

    @_handles("git/get-ref")
    def _h_get_ref(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        ref = "refs/" + ctx.params["ref"]
        sha = repo.git.refs().get(ref)
        if sha is None:
            raise _not_found(ctx.op)
        return _Resp(200, self._ref_json(repo, ref, sha))

    @_handles("git/create-ref")
    def _h_create_ref(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        ref, sha = ctx.body["ref"], ctx.body["sha"]
        doc = ctx.op.documentation_url
        if not ref.startswith("refs/") or ref.count("/") < 2:
            raise GitHubAPIError(
                422,
                "Reference name must start with 'refs/' and have at least two slashes.",
                documentation_url=doc,
            )
        if ref in repo.git.refs():
            raise GitHubAPIError(422, "Reference already exists", documentation_url=doc)
        if repo.git.rev_parse(sha) != sha:
            raise GitHubAPIError(422, "Object does not exist", documentation_url=doc)
        repo.git.update_ref(ref, sha)
        if ref.startswith("refs/heads/"):
            self._branch_moved(repo, ref[len("refs/heads/") :], None, sha, ctx.actor or "")
        return _Resp(
            201,
            self._ref_json(repo, ref, sha),
            {"Location": self._api(f"/repos/{repo.full_name}/git/{ref}")},
        )

    @_handles("git/update-ref")
    def _h_update_ref(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        ref = "refs/" + ctx.params["ref"]
        doc = ctx.op.documentation_url
        old = repo.git.refs().get(ref)
        if old is None:
            raise GitHubAPIError(422, "Reference does not exist", documentation_url=doc)
        sha = ctx.body["sha"]
        if repo.git.rev_parse(sha) != sha:
            raise GitHubAPIError(422, "Object does not exist", documentation_url=doc)
        if not ctx.body.get("force") and not repo.git.is_ancestor(old, sha):
            raise GitHubAPIError(422, "Update is not a fast forward", documentation_url=doc)
        repo.git.update_ref(ref, sha)
        repo.pushed_at = _iso()
        if ref.startswith("refs/heads/"):
            self._branch_moved(repo, ref[len("refs/heads/") :], old, sha, ctx.actor or "")
        return _Resp(200, self._ref_json(repo, ref, sha))

    # ================================================================== handlers: issues

    def _issue_from(self, ctx: _Ctx, repo: _Repo) -> _Issue:
        issue = repo.issues.get(int(ctx.params["issue_number"]))
        if issue is None:
            raise _not_found(ctx.op)
        return issue

    @_handles("issues/get")
    def _h_get_issue(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return _Resp(200, self._issue_json(repo, self._issue_from(ctx, repo)))

    @_handles("issues/list-for-repo")
    def _h_list_issues(self, ctx: _Ctx) -> _Resp:
        """Issues and pull requests, newest first (as GitHub lists them), filtered."""
        repo = self._repo_from(ctx)
        state = ctx.query.get("state", "open")
        creator = ctx.query.get("creator")
        items = []
        for issue in sorted(repo.issues.values(), key=lambda i: -i.number):
            if state != "all" and issue.state != state:
                continue
            if creator is not None and issue.user != creator:
                continue
            items.append(self._issue_json(repo, issue))
        chunk, headers = self._paginate(ctx, items)
        return _Resp(200, chunk, headers)

    @_handles("issues/create")
    def _h_create_issue(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        body = ctx.body or {}
        title = body.get("title")
        if title in (None, ""):
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[{"resource": "Issue", "code": "missing_field", "field": "title"}],
                documentation_url="https://docs.github.com/rest/issues/issues#create-an-issue",
            )
        actor = ctx.actor or ""
        issue = self._new_issue(repo, str(title), body.get("body"), actor, via_app=ctx.via_app)
        self._emit("issues", "opened", repo, actor, {"issue": self._issue_json(repo, issue)})
        return _Resp(201, self._issue_json(repo, issue))

    @_handles("issues/update")
    def _h_update_issue(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._issue_from(ctx, repo)
        actor = ctx.actor or ""
        body = ctx.body or {}
        changes: dict[str, Any] = {}
        if "title" in body and body["title"] != issue.title:
            changes["title"] = {"from": issue.title}
            issue.title = str(body["title"])
        if "body" in body and body["body"] != issue.body:
            changes["body"] = {"from": issue.body}
            issue.body = body["body"]
        if changes:
            issue.updated_at = _iso()
            if issue.pull is not None:
                self._emit(
                    "pull_request",
                    "edited",
                    repo,
                    actor,
                    {
                        "number": issue.number,
                        "changes": changes,
                        "pull_request": self._pull_json(repo, issue, webhook=True),
                    },
                )
            else:
                self._emit(
                    "issues",
                    "edited",
                    repo,
                    actor,
                    {"changes": changes, "issue": self._issue_json(repo, issue, True)},
                )
        if "labels" in body:
            wanted = [x if isinstance(x, str) else x["name"] for x in body["labels"]]
            for name in list(issue.labels):
                if name not in wanted:
                    self._remove_label(repo, issue, name, actor)
            self._add_labels(repo, issue, wanted, actor)
        if body.get("state") in ("open", "closed"):
            self._set_state(repo, issue, body["state"], actor, reason=body.get("state_reason"))
        return _Resp(200, self._issue_json(repo, issue))

    @_handles("issues/list-comments")
    def _h_list_comments(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._issue_from(ctx, repo)
        since = ctx.query.get("since")
        items = [
            self._issue_comment_json(repo, c)
            for c in self._comments.values()
            if c.repo == repo.full_name
            and c.number == issue.number
            and (since is None or c.updated_at >= since)
        ]
        chunk, headers = self._paginate(ctx, items)
        return _Resp(200, chunk, headers)

    @_handles("issues/create-comment")
    def _h_create_comment(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._issue_from(ctx, repo)
        comment = self._create_issue_comment(
            repo, issue, ctx.body["body"], ctx.actor or "", via_app=ctx.via_app
        )
        data = self._issue_comment_json(repo, comment)
        return _Resp(201, data, {"Location": data["url"]})

    def _comment_from(self, ctx: _Ctx, repo: _Repo) -> _IssueComment:
        comment = self._comments.get(int(ctx.params["comment_id"]))
        if comment is None or comment.repo != repo.full_name:
            raise _not_found(ctx.op)
        return comment

    @_handles("issues/get-comment")
    def _h_get_comment(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return _Resp(200, self._issue_comment_json(repo, self._comment_from(ctx, repo)))

    @_handles("issues/update-comment")
    def _h_update_comment(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        comment = self._comment_from(ctx, repo)
        self._edit_issue_comment(repo, comment, ctx.body["body"], ctx.actor or "")
        return _Resp(200, self._issue_comment_json(repo, comment))

    @_handles("issues/delete-comment")
    def _h_delete_comment(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        comment = self._comment_from(ctx, repo)
        data = self._issue_comment_json(repo, comment)
        del self._comments[comment.id]
        issue = self._get_issue(repo, comment.number)
        self._emit(
            "issue_comment",
            "deleted",
            repo,
            ctx.actor or "",
            {"issue": self._issue_json(repo, issue, True), "comment": data},
        )
        return _Resp(204)

    def _list_reactions(self, ctx: _Ctx, target: _IssueComment | _ReviewComment) -> _Resp:
        content = ctx.query.get("content")
        items = [
            self._reaction_json(r)
            for r in target.reactions
            if content is None or r.content == content
        ]
        chunk, headers = self._paginate(ctx, items)
        return _Resp(200, chunk, headers)

    def _create_reaction(self, ctx: _Ctx, target: _IssueComment | _ReviewComment) -> _Resp:
        content = ctx.body["content"]
        created = self._react(target, ctx.actor or "", content)
        reaction = next(
            r for r in target.reactions if r.user == (ctx.actor or "") and r.content == content
        )
        return _Resp(201 if created else 200, self._reaction_json(reaction))

    @_handles("reactions/list-for-issue-comment")
    def _h_list_issue_comment_reactions(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return self._list_reactions(ctx, self._comment_from(ctx, repo))

    @_handles("reactions/create-for-issue-comment")
    def _h_create_issue_comment_reaction(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return self._create_reaction(ctx, self._comment_from(ctx, repo))

    @_handles("issues/add-labels")
    def _h_add_labels(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._issue_from(ctx, repo)
        raw = ctx.body.get("labels", []) if isinstance(ctx.body, dict) else ctx.body or []
        names = [x if isinstance(x, str) else x["name"] for x in raw]
        self._add_labels(repo, issue, names, ctx.actor or "")
        return _Resp(200, [self._label_json(repo, repo.labels[n]) for n in issue.labels])

    @_handles("issues/remove-label")
    def _h_remove_label(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._issue_from(ctx, repo)
        self._remove_label(repo, issue, ctx.params["name"], ctx.actor or "")
        return _Resp(200, [self._label_json(repo, repo.labels[n]) for n in issue.labels])

    # ================================================================== handlers: pulls

    def _pull_from(self, ctx: _Ctx, repo: _Repo) -> _Issue:
        issue = repo.issues.get(int(ctx.params["pull_number"]))
        if issue is None or issue.pull is None:
            raise _not_found(ctx.op)
        return issue

    @_handles("pulls/list")
    def _h_list_pulls(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        state = ctx.query.get("state", "open")
        head = ctx.query.get("head")
        base = ctx.query.get("base")
        items = []
        for issue in sorted(repo.issues.values(), key=lambda i: -i.number):
            pull = issue.pull
            if pull is None or (state != "all" and issue.state != state):
                continue
            if head is not None and head not in (f"{repo.owner}:{pull.head_ref}", pull.head_ref):
                continue
            if base is not None and pull.base_ref != base:
                continue
            items.append(self._pull_json(repo, issue, simple=True))
        if ctx.query.get("direction") == "asc":
            items.reverse()
        chunk, headers = self._paginate(ctx, items)
        return _Resp(200, chunk, headers)

    @_handles("pulls/create")
    def _h_create_pull(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        body = ctx.body
        head = str(body["head"]).split(":", 1)[-1]
        if "title" not in body and "issue" not in body:
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "code": "missing_field", "field": "title"}],
                documentation_url=ctx.op.documentation_url,
            )
        issue = self._open_pull(
            repo,
            head,
            body["base"],
            body.get("title", ""),
            body.get("body"),
            ctx.actor or "",
            bool(body.get("draft", False)),
            via_app=ctx.via_app,
        )
        data = self._pull_json(repo, issue)
        return _Resp(201, data, {"Location": data["url"]})

    @_handles("pulls/get")
    def _h_get_pull(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        assert issue.pull is not None
        diff = self._diff_response(ctx, repo, self._pr_base(repo, issue.pull), issue.pull.head_sha)
        if diff is not None:
            return diff
        return _Resp(200, self._pull_json(repo, issue))

    @_handles("pulls/update")
    def _h_update_pull(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        body = ctx.body or {}
        actor = ctx.actor or ""
        changes: dict[str, Any] = {}
        if "title" in body and body["title"] != issue.title:
            changes["title"] = {"from": issue.title}
            issue.title = body["title"]
        if "body" in body and body["body"] != issue.body:
            changes["body"] = {"from": issue.body}
            issue.body = body["body"]
        assert issue.pull is not None
        if "base" in body and body["base"] != issue.pull.base_ref:
            if repo.git.rev_parse(f"refs/heads/{body['base']}") is None:
                raise GitHubAPIError(
                    422,
                    "Validation Failed",
                    errors=[{"resource": "PullRequest", "field": "base", "code": "invalid"}],
                    documentation_url=ctx.op.documentation_url,
                )
            changes["base"] = {
                "ref": {"from": issue.pull.base_ref},
                "sha": {"from": issue.pull.base_sha},
            }
            issue.pull.base_ref = body["base"]
            issue.pull.base_sha = repo.git.rev_parse(f"refs/heads/{body['base']}") or ""
        if changes:
            issue.updated_at = _iso()
            self._emit(
                "pull_request",
                "edited",
                repo,
                actor,
                {
                    "number": issue.number,
                    "changes": changes,
                    "pull_request": self._pull_json(repo, issue, webhook=True),
                },
            )
        if body.get("state") in ("open", "closed"):
            self._set_state(repo, issue, body["state"], actor, reason=None)
        return _Resp(200, self._pull_json(repo, issue))

    @_handles("pulls/list-files")
    def _h_list_files(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        assert issue.pull is not None
        files = [
            self._diff_entry_json(repo, issue.pull.head_sha, f)
            for f in self._pr_files(repo, issue.pull)
        ][:3000]
        chunk, headers = self._paginate(ctx, files)
        return _Resp(200, chunk, headers)

    @_handles("pulls/list-commits")
    def _h_list_commits(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        assert issue.pull is not None
        shas = repo.git.commits_between(self._pr_base(repo, issue.pull), issue.pull.head_sha)
        chunk, headers = self._paginate(ctx, shas[:250])
        return _Resp(200, [self._commit_json(repo, s) for s in chunk], headers)

    @_handles("pulls/list-review-comments")
    def _h_list_review_comments(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        since = ctx.query.get("since")
        comments = [
            c
            for c in self._review_comments.values()
            if c.repo == repo.full_name
            and c.number == issue.number
            and (since is None or c.updated_at >= since)
        ]
        if ctx.query.get("sort") == "updated":
            comments.sort(key=lambda c: c.updated_at)
        if ctx.query.get("direction") == "desc":
            comments.reverse()
        items = [self._review_comment_json(repo, c) for c in comments]
        chunk, headers = self._paginate(ctx, items)
        return _Resp(200, chunk, headers)

    @_handles("pulls/create-review-comment")
    def _h_create_review_comment(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        comment = self._create_single_comment(
            repo, issue, ctx.body, ctx.actor or "", via_app=ctx.via_app
        )
        data = self._review_comment_json(repo, comment)
        return _Resp(201, data, {"Location": data["url"]})

    @_handles("pulls/create-reply-for-review-comment")
    def _h_reply(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        comment = self._reply(
            repo,
            issue,
            int(ctx.params["comment_id"]),
            ctx.body["body"],
            ctx.actor or "",
            via_app=ctx.via_app,
        )
        data = self._review_comment_json(repo, comment)
        return _Resp(201, data, {"Location": data["url"]})

    def _review_comment_from(self, ctx: _Ctx, repo: _Repo) -> _ReviewComment:
        comment = self._review_comments.get(int(ctx.params["comment_id"]))
        if comment is None or comment.repo != repo.full_name:
            raise _not_found(ctx.op)
        return comment

    @_handles("pulls/get-review-comment")
    def _h_get_review_comment(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return _Resp(200, self._review_comment_json(repo, self._review_comment_from(ctx, repo)))

    @_handles("pulls/update-review-comment")
    def _h_update_review_comment(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        comment = self._review_comment_from(ctx, repo)
        old = comment.body
        comment.body = ctx.body["body"]
        comment.updated_at = _iso()
        issue = self._get_issue(repo, comment.number)
        self._emit(
            "pull_request_review_comment",
            "edited",
            repo,
            ctx.actor or "",
            {
                "changes": {"body": {"from": old}},
                "comment": self._review_comment_json(repo, comment, True),
                "pull_request": self._pull_json(repo, issue, webhook=True),
            },
        )
        return _Resp(200, self._review_comment_json(repo, comment))

    @_handles("reactions/list-for-pull-request-review-comment")
    def _h_list_review_comment_reactions(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return self._list_reactions(ctx, self._review_comment_from(ctx, repo))

    @_handles("reactions/create-for-pull-request-review-comment")
    def _h_create_review_comment_reaction(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return self._create_reaction(ctx, self._review_comment_from(ctx, repo))

    @_handles("pulls/list-reviews")
    def _h_list_reviews(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        items = [
            self._review_json(repo, r)
            for r in self._reviews.values()
            if r.repo == repo.full_name and r.number == issue.number
        ]
        chunk, headers = self._paginate(ctx, items)
        return _Resp(200, chunk, headers)

    @_handles("pulls/create-review")
    def _h_create_review(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        issue = self._pull_from(ctx, repo)
        review = self._create_review(
            repo, issue, ctx.body or {}, ctx.actor or "", via_app=ctx.via_app
        )
        return _Resp(200, self._review_json(repo, review))

    # ================================================================== handlers: checks

    @_handles("checks/create")
    def _h_create_check_run(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        body = ctx.body
        if repo.git.rev_parse(body["head_sha"]) != body["head_sha"]:
            raise GitHubAPIError(
                422,
                "Validation Failed",
                errors=[{"resource": "CheckRun", "code": "invalid", "field": "head_sha"}],
                documentation_url=ctx.op.documentation_url,
            )
        status = body.get("status", "queued")
        conclusion = body.get("conclusion")
        if conclusion is not None:
            status = "completed"
        now = _iso()
        run = _CheckRun(
            id=next(self._ids),
            repo=repo.full_name,
            head_sha=body["head_sha"],
            name=body["name"],
            status=status,
            conclusion=conclusion,
            started_at=body.get("started_at", now),
            completed_at=body.get("completed_at", now if status == "completed" else None),
            external_id=body.get("external_id", ""),
            details_url=body.get("details_url"),
            output=dict(body.get("output", {})),
            suite_id=next(self._ids),
        )
        self._check_runs[run.id] = run
        return _Resp(201, self._check_run_json(repo, run))

    def _check_run_from(self, ctx: _Ctx, repo: _Repo) -> _CheckRun:
        run = self._check_runs.get(int(ctx.params["check_run_id"]))
        if run is None or run.repo != repo.full_name:
            raise _not_found(ctx.op)
        return run

    @_handles("checks/get")
    def _h_get_check_run(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        return _Resp(200, self._check_run_json(repo, self._check_run_from(ctx, repo)))

    @_handles("checks/update")
    def _h_update_check_run(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        run = self._check_run_from(ctx, repo)
        body = ctx.body or {}
        for key in ("name", "details_url", "external_id", "started_at", "completed_at"):
            if key in body:
                setattr(run, key, body[key])
        if "status" in body:
            run.status = body["status"]
        if body.get("conclusion") is not None:
            run.conclusion = body["conclusion"]
            run.status = "completed"
            run.completed_at = body.get("completed_at", _iso())
        if "output" in body:
            run.output.update(body["output"])
        return _Resp(200, self._check_run_json(repo, run))

    @_handles("checks/list-for-ref")
    def _h_list_check_runs(self, ctx: _Ctx) -> _Resp:
        repo = self._repo_from(ctx)
        sha = self._resolve_ref(repo, ctx.params["ref"])
        runs = [
            self._check_run_json(repo, r)
            for r in self._check_runs.values()
            if r.repo == repo.full_name
            and r.head_sha == sha
            and ctx.query.get("check_name") in (None, r.name)
        ]
        chunk, headers = self._paginate(ctx, runs)
        return _Resp(200, {"total_count": len(runs), "check_runs": chunk}, headers)


# --------------------------------------------------------------------------- helpers

_GIT_PATH = re.compile(
    r"^/(?P<owner>[^/]+)/(?P<repo>[^/]+?)\.git"
    r"(?P<rest>/info/refs|/git-upload-pack|/git-receive-pack|/HEAD|/objects/.+)?$"
)


def _git_credential(header: str) -> str | None:
    """The token in a git HTTP ``Authorization`` header (Basic user:token, or Bearer)."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "basic":
        try:
            user, _, password = base64.b64decode(value.strip()).decode().partition(":")
        except ValueError:
            return None
        return password or user or None
    if scheme.lower() in ("bearer", "token"):
        return value.strip() or None
    return None


def _int_query(query: dict[str, str], name: str, default: int) -> int:
    """An integer query parameter; GitHub ignores unparsable values."""
    try:
        return int(query.get(name, default))
    except ValueError:
        return default


def _grants(permissions: dict[str, str], name: str, level: str) -> bool:
    order = {"read": 1, "write": 2, "admin": 3}
    have = permissions.get(name)
    return have is not None and order.get(have, 0) >= order.get(level, 0)


def _tolerated(problem: str) -> bool:
    """Deviations of the published description from GitHub's real answers."""
    location, _, detail = problem.partition(": ")
    return detail.startswith("None is not of type") and bool(_TOLERATED_NULLS.search(location))


def _find_line(lines: list[Any], side: str, number: int) -> Any:
    for line in lines:
        if side == "RIGHT" and line.kind != "-" and line.new == number:
            return line
        if side == "LEFT" and line.kind != "+" and line.old == number:
            return line
    return None


def _map_line(git: BareRepo, old: str, new: str, path: str, line: int) -> int | None:
    """Where ``line`` of ``path`` at ``old`` is at ``new``; None if the line changed."""
    try:
        text = git.git("diff", "-U0", "--no-color", old, new, "--", path)
    except GitError:
        return None
    shift = 0
    for header in re.findall(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", text, re.M):
        old_start, old_count = int(header[0]), int(header[1] or 1)
        new_count = int(header[3] or 1)
        if old_count == 0:  # pure insertion after old_start
            if line > old_start:
                shift += new_count
            continue
        if old_start <= line < old_start + old_count:
            return None
        if line >= old_start + old_count:
            shift += new_count - old_count
    return line + shift


def _single_comment_error(problem: str) -> dict[str, Any]:
    """422 ``errors`` entry for POST .../pulls/{n}/comments, in GitHub's words."""
    base = {"resource": "PullRequestReviewComment", "code": "custom"}
    if problem == "path":
        return {
            **base,
            "field": "pull_request_review_thread.path",
            "message": "could not be resolved",
        }
    if problem == "line":
        return {
            **base,
            "field": "pull_request_review_thread.line",
            "message": "could not be resolved",
        }
    if problem == "start_line":
        return {
            **base,
            "field": "pull_request_review_thread.start_line",
            "message": "pull_request_review_thread.start_line must be part of the same hunk as "
            "the line.",
        }
    if problem == "start_order":
        return {
            **base,
            "field": "pull_request_review_thread.start_line",
            "message": "pull_request_review_thread.start_line must precede the end line.",
        }
    return {
        "resource": "PullRequestReviewComment",
        "code": "missing_field",
        "field": "pull_request_review_thread.line",
    }


def _review_comment_error(problem: str) -> str:
    """Sentence for one bad comment of POST .../pulls/{n}/reviews, in GitHub's words."""
    return {
        "path": "Path could not be resolved",
        "line": "Line could not be resolved",
        "missing_line": "Line could not be resolved",
        "start_line": "Pull request review thread start line must be part of the same hunk as "
        "the line.",
        "start_order": "Pull request review thread start line must precede the end line.",
    }[problem]


def _to_sentence(parts: list[str]) -> str:
    """Rails' ``to_sentence``: GitHub joins several review errors this way."""
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return f"{parts[0]} and {parts[1]}"
    return ", ".join(parts[:-1]) + f", and {parts[-1]}"


@contextlib.contextmanager
def running_fake_github(tmp_path: Path, **kwargs: Any) -> Iterator[FakeGitHub]:
    """``with running_fake_github(tmp_path) as gh:`` — started, stopped (strict) after."""
    fake = FakeGitHub(tmp_path / "fake-github", **kwargs)
    fake.start()
    try:
        yield fake
    except BaseException:
        fake.strict = False
        fake.stop()
        raise
    fake.stop()
