"""Talking to GitHub as the App, through PyGithub.

Workers see a narrow interface (``RepoClient``): what Kaizen needs, not all of GitHub.
Behind it:

- App JWT and installation tokens come from PyGithub's ``AppAuth``; one authenticated
  client per installation is kept per process, and PyGithub renews its token shortly before
  it expires, so a busy worker asks GitHub for a token about once an hour, not per task.
- Idempotent requests (GET, PUT, PATCH, DELETE) are retried by ``GithubRetry``: backoff on
  5xx, a wait until ``X-RateLimit-Reset`` on primary rate limits, ``Retry-After`` on
  secondary ones.
- POSTs that create things are *not* retried blindly: GitHub can answer 502 after it did
  create the comment. Each created comment carries a hidden idempotency marker, and before
  every retry Kaizen looks for it, so a retried post yields one comment, not two.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast
from urllib.parse import parse_qs, quote, urlparse

from github import Auth, Github, GithubException, GithubIntegration, GithubRetry
from requests import RequestException
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from bot.settings import Settings

log = logging.getLogger(__name__)
# Reactions listed per comment at most; a longer list is cut, so it cannot show removals.
REACTIONS_LISTED = 1000

T = TypeVar("T")

_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
_MARKER_RE = re.compile(r"<!-- kaizen:key=([A-Za-z0-9:._/-]+) -->")


def marker(key: str) -> str:
    """The hidden HTML comment that makes a posted comment findable again."""
    return f"<!-- kaizen:key={key} -->"


def marker_key(body: str | None) -> str | None:
    match = _MARKER_RE.search(body or "")
    return match.group(1) if match else None


@dataclass(frozen=True)
class Permission:
    """A user's access to a repo, as GitHub's collaborator-permission endpoint reports it."""

    permission: str  # admin | write | read | none (maintain → write, triage → read)
    role_name: str | None


class RepoClient(Protocol):
    """What workers may do on one installation's repositories."""

    def get_permission(self, repo: str, username: str) -> Permission: ...

    def post_issue_comment(self, repo: str, number: int, body: str, *, key: str) -> int: ...

    def read_file(self, repo: str, path: str) -> str | None: ...


class GitHubError(Exception):
    """A GitHub call that failed for good (after retries), with the status GitHub gave."""

    def __init__(self, status: int | None, message: str) -> None:
        self.status = status
        super().__init__(f"GitHub answered {status}: {message}" if status else message)


def _retry_policy(settings: Settings) -> GithubRetry:
    return GithubRetry(
        total=5,
        backoff_factor=0.5,
        backoff_max=30,
        allowed_methods=_IDEMPOTENT_METHODS,
        max_rate_limit_wait=settings.github_max_rate_limit_wait_s,
        respect_retry_after_header=True,
    )


class GitHubApp:
    """The App identity: JWT-authenticated calls and per-installation clients."""

    def __init__(self, settings: Settings) -> None:
        settings.require("app_id", "private_key")
        assert settings.app_id is not None and settings.private_key is not None
        self._settings = settings
        self._auth = Auth.AppAuth(settings.app_id, settings.private_key.get_secret_value())
        self._integration = GithubIntegration(
            auth=self._auth,
            base_url=settings.github_api_url,
            timeout=int(settings.github_timeout_s),
            retry=_retry_policy(settings),
            seconds_between_requests=settings.github_seconds_between_requests,
            seconds_between_writes=settings.github_seconds_between_writes,
        )
        self._clients: dict[int, InstallationClient] = {}
        self._lock = threading.Lock()

    def installation(self, installation_id: int) -> InstallationClient:
        """One client per installation per process; its token is renewed before expiry."""
        with self._lock:
            client = self._clients.get(installation_id)
            if client is None:
                gh = Github(
                    auth=self._auth.get_installation_auth(installation_id),
                    base_url=self._settings.github_api_url,
                    timeout=int(self._settings.github_timeout_s),
                    retry=_retry_policy(self._settings),
                    per_page=100,
                    lazy=True,
                    seconds_between_requests=self._settings.github_seconds_between_requests,
                    seconds_between_writes=self._settings.github_seconds_between_writes,
                )
                client = InstallationClient(gh, self._settings)
                self._clients[installation_id] = client
            return client

    def forget_installation(self, installation_id: int) -> None:
        """Drop a cached client (installation deleted or suspended)."""
        with self._lock:
            client = self._clients.pop(installation_id, None)
        if client is not None:
            client.close()

    def app_info(self) -> dict[str, Any]:
        """``GET /app``: proves the App id and key are right."""
        _, data = self._integration.requester.requestJsonAndCheck("GET", "/app")
        return cast(dict[str, Any], data)

    def iter_deliveries(self, per_page: int = 100) -> Iterator[dict[str, Any]]:
        """Every webhook delivery GitHub still remembers, newest first (cursor paging)."""
        params: dict[str, Any] = {"per_page": per_page}
        while True:
            headers, data = self._integration.requester.requestJsonAndCheck(
                "GET", "/app/hook/deliveries", parameters=params
            )
            yield from cast(list[dict[str, Any]], data or [])
            cursor = _next_cursor(headers.get("link") or headers.get("Link"))
            if not cursor:
                return
            params = {"per_page": per_page, "cursor": cursor}

    def installation_ids(self) -> list[int]:
        """Every installation of the App (``GET /app/installations``, paged)."""
        ids: list[int] = []
        page = 1
        while True:
            _, data = self._integration.requester.requestJsonAndCheck(
                "GET", "/app/installations", parameters={"per_page": 100, "page": page}
            )
            batch = list(data or [])
            ids.extend(int(item["id"]) for item in batch)
            if len(batch) < 100:
                return ids
            page += 1

    def redeliver(self, delivery_id: int) -> None:
        self._integration.requester.requestJsonAndCheck(
            "POST", f"/app/hook/deliveries/{delivery_id}/attempts"
        )

    def close(self) -> None:
        for installation_id in list(self._clients):
            self.forget_installation(installation_id)
        self._integration.close()


def _next_cursor(link_header: str | None) -> str | None:
    if not link_header:
        return None
    for part in link_header.split(","):
        if 'rel="next"' in part:
            url = part.split(";")[0].strip().strip("<>")
            values = parse_qs(urlparse(url).query).get("cursor")
            return values[0] if values else None
    return None


class InstallationClient:
    """GitHub, as one installation sees it. Implements ``RepoClient``."""

    def __init__(self, gh: Github, settings: Settings) -> None:
        self._gh = gh
        self._settings = settings

    def close(self) -> None:
        self._gh.close()

    def get_permission(self, repo: str, username: str) -> Permission:
        try:
            _, data = self._gh.requester.requestJsonAndCheck(
                "GET", f"/repos/{repo}/collaborators/{quote(username, safe='')}/permission"
            )
        except GithubException as exc:
            if exc.status == 404:
                return Permission("none", None)
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc
        return Permission(str(data.get("permission") or "none"), data.get("role_name"))

    def post_issue_comment(self, repo: str, number: int, body: str, *, key: str) -> int:
        """Post once: a retry after an ambiguous failure finds the first post instead."""
        issue = self._gh.get_repo(repo).get_issue(number)
        text = f"{body}\n\n{marker(key)}"

        bot_login = self._settings.bot_login

        def find() -> int | None:
            for comment in issue.get_comments():
                if comment.user.login == bot_login and marker_key(comment.body) == key:
                    return int(comment.id)
            return None

        def create() -> int:
            return int(issue.create_comment(text).id)

        return self._create_once(create, find)

    def read_file(self, repo: str, path: str) -> str | None:
        """A file from the default branch, or None when it (or the repo) does not exist."""
        data = self._contents(repo, path, None)
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        content = data.get("content") or ""
        return base64.b64decode(content).decode("utf-8", errors="replace")

    # -- pull requests and reviews -----------------------------------------------------

    def _get(self, url: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], Any]:
        try:
            headers, data = self._gh.requester.requestJsonAndCheck("GET", url, parameters=params)
        except GithubException as exc:
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc
        return headers, data

    def _paged(self, url: str, limit: int, params: dict[str, Any] | None = None) -> list[Any]:
        """Every item of a list endpoint up to ``limit``, following ``Link: rel=next``."""
        items: list[Any] = []
        page = 1
        while len(items) < limit:
            query = {**(params or {}), "per_page": 100, "page": page}
            headers, data = self._get(url, query)
            batch = list(data or [])
            items.extend(batch)
            link = headers.get("link") or headers.get("Link") or ""
            if len(batch) < 100 or 'rel="next"' not in link:
                break
            page += 1
        return items[:limit]

    def get_pull(self, repo: str, number: int) -> dict[str, Any]:
        return cast(dict[str, Any], self._get(f"/repos/{repo}/pulls/{number}")[1])

    def list_pull_files(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The PR's changed files with their patches (GitHub lists at most 3,000)."""
        return self._paged(f"/repos/{repo}/pulls/{number}/files", 3000)

    def compare(self, repo: str, base: str, head: str) -> dict[str, Any]:
        """``GET /compare/base...head``: status (ahead, diverged, …) and changed files."""
        basehead = f"{quote(base, safe='')}...{quote(head, safe='')}"
        return cast(dict[str, Any], self._get(f"/repos/{repo}/compare/{basehead}")[1])

    def file_at(self, repo: str, path: str, ref: str) -> str | None:
        """A file's text at ``ref``; None when absent, a directory, not text, a symbolic
        link (GitHub answers with the file it points at), or over the 1 MB that the
        contents API serves (GitHub answers 403 ``too_large``: a generated module or a data
        file, whose review is not worth fetching it another way)."""
        data = self._contents(repo, path, ref, too_large=True)
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("path") not in (None, path.strip("/")):
            return None  # a symlink: GitHub answered with the file it points at
        raw = base64.b64decode(data.get("content") or "")
        if b"\0" in raw[:8000]:
            return None
        return raw.decode("utf-8", errors="replace")

    def _contents(self, repo: str, path: str, ref: str | None, *, too_large: bool = False) -> Any:
        """``GET /contents/{path}`` (at ``ref``, else the default branch): a file's or a
        folder's entry, or None when there is none (or, with ``too_large``, when the file
        is over the 1 MB the contents API serves: GitHub answers 403 ``too_large``)."""
        parameters = {"ref": ref} if ref is not None else None
        try:
            _, data = self._gh.requester.requestJsonAndCheck(
                "GET", f"/repos/{repo}/contents/{quote(path, safe='/')}", parameters=parameters
            )
        except GithubException as exc:
            if exc.status == 404 or (too_large and _too_large(exc)):
                return None
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc
        return data

    def folder_at(self, repo: str, path: str, ref: str) -> list[str] | None:
        """The paths of the files directly in the folder ``path`` at ``ref`` (its
        folders, symbolic links and submodules left out); None when there is no such
        folder, and for the root, which a review does not list."""
        folder = path.strip("/")
        if not folder:
            return None
        data = self._contents(repo, folder, ref)
        if not isinstance(data, list):
            return None  # a file, not a folder
        return [
            str(item["path"])
            for item in data
            if isinstance(item, dict) and item.get("type") == "file" and item.get("path")
        ]

    def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        return self._paged(f"/repos/{repo}/pulls/{number}/reviews", 1000)

    def list_review_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return self._paged(f"/repos/{repo}/pulls/{number}/comments", 5000)

    def get_review_comment(self, repo: str, comment_id: int) -> dict[str, Any] | None:
        try:
            return cast(dict[str, Any], self._get(f"/repos/{repo}/pulls/comments/{comment_id}")[1])
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise

    def list_review_comment_reactions(self, repo: str, comment_id: int) -> list[dict[str, Any]]:
        return self._paged(f"/repos/{repo}/pulls/comments/{comment_id}/reactions", REACTIONS_LISTED)

    def create_review(
        self,
        repo: str,
        number: int,
        *,
        commit_id: str,
        body: str,
        comments: list[dict[str, Any]],
        key: str,
    ) -> int:
        """One review with its inline comments, posted once (found again by its marker).

        A 422 is raised as ``GitHubError(422, …)`` for the caller to repair and retry.
        """
        text = f"{body}\n\n{marker(key)}"
        bot_login = self._settings.bot_login

        def find() -> int | None:
            for review in self.list_reviews(repo, number):
                user = (review.get("user") or {}).get("login")
                if user == bot_login and marker_key(review.get("body")) == key:
                    return int(review["id"])
            return None

        def create() -> int:
            _, data = self._gh.requester.requestJsonAndCheck(
                "POST",
                f"/repos/{repo}/pulls/{number}/reviews",
                input={
                    "commit_id": commit_id,
                    "body": text,
                    "event": "COMMENT",
                    "comments": comments,
                },
            )
            return int(data["id"])

        return self._create_once(create, find)

    def create_check_run(
        self, repo: str, *, name: str, head_sha: str, external_id: str, title: str, summary: str
    ) -> int:
        """A queued check run, or the one an earlier attempt of this task created."""

        def find() -> int | None:
            _, data = self._get(
                f"/repos/{repo}/commits/{quote(head_sha, safe='')}/check-runs",
                {"check_name": name, "per_page": 100},
            )
            for run in (data or {}).get("check_runs", []):
                if run.get("external_id") == external_id:
                    return int(run["id"])
            return None

        def create() -> int:
            _, data = self._gh.requester.requestJsonAndCheck(
                "POST",
                f"/repos/{repo}/check-runs",
                input={
                    "name": name,
                    "head_sha": head_sha,
                    "external_id": external_id,
                    "status": "queued",
                    "output": {"title": title, "summary": summary},
                },
            )
            return int(data["id"])

        return self._create_once(create, find)

    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> None:
        """PATCH a check run (status, conclusion, output, …); idempotent, so retried."""
        try:
            self._gh.requester.requestJsonAndCheck(
                "PATCH", f"/repos/{repo}/check-runs/{check_run_id}", input=fields
            )
        except GithubException as exc:
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc

    # -- issues (the weekly report) ------------------------------------------------------

    def installation_repos(self) -> list[str]:
        """Full names of the repositories this installation can see."""
        names: list[str] = []
        page = 1
        while True:
            _, data = self._get("/installation/repositories", {"per_page": 100, "page": page})
            batch = list((data or {}).get("repositories") or [])
            names.extend(str(r["full_name"]) for r in batch)
            if len(batch) < 100:
                return names
            page += 1

    def upsert_issue(self, repo: str, *, title: str, body: str, key: str) -> int:
        """Keep one open issue found by its marker up to date; its number."""
        text = f"{body}\n\n{marker(key)}"
        bot_login = self._settings.bot_login

        def find() -> int | None:
            issues = self._paged(
                f"/repos/{repo}/issues", 500, {"state": "open", "creator": bot_login}
            )
            for issue in issues:
                if marker_key(issue.get("body")) == key and not issue.get("pull_request"):
                    return int(issue["number"])
            return None

        def create() -> int:
            _, data = self._gh.requester.requestJsonAndCheck(
                "POST", f"/repos/{repo}/issues", input={"title": title, "body": text}
            )
            return int(data["number"])

        number = find()
        if number is None:
            return self._create_once(create, find)
        try:
            self._gh.requester.requestJsonAndCheck(
                "PATCH", f"/repos/{repo}/issues/{number}", input={"title": title, "body": text}
            )
        except GithubException as exc:
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc
        return number

    # -- fixes -------------------------------------------------------------------------

    def get_repo(self, repo: str) -> dict[str, Any]:
        return cast(dict[str, Any], self._get(f"/repos/{repo}")[1])

    def git_token(self) -> str:
        """The installation token, for git over HTTPS (passed as a header, never stored)."""
        auth = self._gh.requester.auth
        token = getattr(auth, "token", None)
        if not token:
            raise GitHubError(None, "no installation token available for git")
        return str(token)

    def edit_issue_comment(self, repo: str, comment_id: int, body: str) -> None:
        try:
            self._gh.requester.requestJsonAndCheck(
                "PATCH", f"/repos/{repo}/issues/comments/{comment_id}", input={"body": body}
            )
        except GithubException as exc:
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc

    def list_pull_commits(self, repo: str, number: int) -> list[dict[str, Any]]:
        return self._paged(f"/repos/{repo}/pulls/{number}/commits", 250)

    def open_pull(
        self, repo: str, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> dict[str, Any]:
        """Open a PR from ``head``, or return the one already open from it (a retried
        task after a crash must not open a second)."""
        owner = repo.split("/", 1)[0]

        def existing() -> dict[str, Any] | None:
            _, data = self._get(
                f"/repos/{repo}/pulls", {"head": f"{owner}:{head}", "state": "open"}
            )
            found = list(data or [])
            return cast(dict[str, Any], found[0]) if found else None

        current = existing()
        if current is not None:
            return current
        try:
            _, data = self._gh.requester.requestJsonAndCheck(
                "POST",
                f"/repos/{repo}/pulls",
                input={"title": title, "head": head, "base": base, "body": body, "draft": draft},
            )
        except GithubException as exc:
            again = existing() if exc.status in (422,) or exc.status >= 500 else None
            if again is not None:
                return again
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc
        return cast(dict[str, Any], data)

    def _create_once(self, create: Callable[[], int], find: Callable[[], int | None]) -> int:
        """Create unless a previous attempt did: a task re-run after a worker crash (late
        acks) or a retry after an ambiguous 5xx finds the first post instead."""
        try:
            return self._create_retrying(create, find)
        except GitHubError:
            raise
        except GithubException as exc:
            raise GitHubError(exc.status, _message(exc)) from exc
        except RequestException as exc:
            raise _unreachable(exc) from exc

    def _create_retrying(self, create: Callable[[], int], find: Callable[[], int | None]) -> int:
        for attempt in Retrying(
            stop=stop_after_attempt(5),
            retry=retry_if_exception(_is_transient),
            wait=_wait_for,
            reraise=True,
            before_sleep=_log_retry,
        ):
            with attempt:
                existing = find()
                if existing is not None:
                    return existing
                try:
                    return create()
                except GithubException as exc:
                    if _is_transient(exc):
                        raise
                    raise GitHubError(exc.status, _message(exc)) from exc
        raise AssertionError("unreachable")  # pragma: no cover


def _unreachable(exc: RequestException) -> GitHubError:
    """Retries exhausted inside urllib3: keep the last status GitHub gave, if any."""
    found = re.search(r"too many (\d{3}) error responses", str(exc))
    if found:
        return GitHubError(int(found.group(1)), f"still failing after retries: {exc}")
    return GitHubError(None, f"GitHub unreachable: {exc}")


def _too_large(exc: GithubException) -> bool:
    """GitHub's refusal of a file over the contents API's 1 MB limit."""
    errors = exc.data.get("errors") if isinstance(exc.data, dict) else None
    return exc.status == 403 and any(
        isinstance(e, dict) and e.get("code") == "too_large" for e in errors or []
    )


def _message(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict):
        return str(data.get("message") or data)
    return str(data)


def _is_transient(exc: BaseException) -> bool:
    if not isinstance(exc, GithubException):
        return False
    if exc.status >= 500:
        return True
    return exc.status in (403, 429) and _rate_limit_wait(exc) is not None


def _rate_limit_wait(exc: GithubException) -> float | None:
    """Seconds to wait for a rate limit, or None when the 403 is not one."""
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    if "retry-after" in headers:
        try:
            return max(0.0, float(headers["retry-after"]))
        except ValueError:
            return 60.0
    if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
        reset = float(headers["x-ratelimit-reset"])
        return max(0.0, reset - time.time()) + 1.0
    message = _message(exc).lower()
    if "secondary rate limit" in message or "abuse" in message:
        return 60.0
    return None


def _wait_for(state: RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome else None
    if isinstance(exc, GithubException):
        wait = _rate_limit_wait(exc)
        if wait is not None:
            return wait
    return float(min(30.0, 0.5 * 2 ** (state.attempt_number - 1)))


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    status = getattr(exc, "status", None)
    log.warning(
        "GitHub POST failed, retrying",
        extra={"status": status, "attempt": state.attempt_number},
    )
