"""Which task, on which queue, a GitHub delivery becomes (the table in DESIGN.md).

Pure: it looks only at the event name and the payload, so every rule is unit-tested and
the webhook handler stays a few lines of I/O around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.commands import contains_command, parse_commands

FIX_LABEL = "kaizen:fix"

# Comment-command verbs → the queue their work belongs on. Slow work (reviews, fixes) must
# not hold up quick replies, and `cancel` must never wait behind the fix it cancels.
_VERB_QUEUES = {"review": "reviews", "fix": "fixes"}


@dataclass(frozen=True)
class Route:
    task: str
    queue: str


@dataclass(frozen=True)
class Ignore:
    reason: str


Decision = Route | Ignore


def route(event: str, payload: dict[str, Any], *, app_slug: str) -> Decision:
    """Decide what a delivery is for; anything not listed is ignored (and logged)."""
    action = payload.get("action")
    if _sent_by_self(payload, app_slug):
        return Ignore("sent by Kaizen itself")
    if event == "ping":
        return Ignore("ping")
    if event == "pull_request":
        return _pull_request(action, payload)
    if event == "issue_comment":
        return _issue_comment(action, payload, app_slug)
    if event == "pull_request_review_comment":
        if action == "created":
            comment = payload.get("comment") or {}
            if comment.get("in_reply_to_id") or contains_command(
                comment.get("body") or "", app_slug
            ):
                return Route("kaizen.record_feedback", "feedback")
            return Ignore("review comment is not a reply or command")
        if action in ("edited", "deleted") and (payload.get("comment") or {}).get("in_reply_to_id"):
            return Route("kaizen.record_feedback", "feedback")  # a reply's word changed or gone
        return Ignore(f"pull_request_review_comment.{action} is not used")
    if event == "pull_request_review_thread":
        if action in ("resolved", "unresolved"):
            return Route("kaizen.record_feedback", "feedback")
        return Ignore(f"pull_request_review_thread.{action} is not used")
    if event == "pull_request_review":
        if action == "submitted":
            return Route("kaizen.record_feedback", "feedback")
        return Ignore(f"pull_request_review.{action} is not used")
    if event == "issues":
        if action == "labeled" and (payload.get("label") or {}).get("name") == FIX_LABEL:
            if (payload.get("issue") or {}).get("pull_request"):
                return Ignore("the fix label works on issues, not pull requests")
            return Route("kaizen.fix_issue", "fixes")
        return Ignore(f"issues.{action} is not used")
    if event in ("installation", "installation_repositories"):
        return Route("kaizen.installation_changed", "feedback")
    if event == "repository":
        if action in ("renamed", "transferred"):
            return Route("kaizen.repository_moved", "feedback")  # memory follows the repo
        if action == "deleted":  # the App's reach shrank: forget, when configured to
            return Route("kaizen.installation_changed", "feedback")
        return Ignore(f"repository.{action} is not used")
    return Ignore(f"{event} is not used")


def _pull_request(action: str | None, payload: dict[str, Any]) -> Decision:
    if action in ("opened", "reopened", "ready_for_review", "synchronize"):
        # Drafts are skipped later, by the repo's config; the router does not read config.
        return Route("kaizen.review_pull_request", "reviews")
    if action == "closed":
        return Route("kaizen.finalize_pull_request", "feedback")
    return Ignore(f"pull_request.{action} is not used")


def _issue_comment(action: str | None, payload: dict[str, Any], app_slug: str) -> Decision:
    if action != "created":
        return Ignore(f"issue_comment.{action} is not used")
    body = (payload.get("comment") or {}).get("body") or ""
    commands = parse_commands(body, app_slug)
    if not commands:
        return Ignore("no command in comment")
    queues = {_VERB_QUEUES.get(command.verb, "feedback") for command in commands}
    # One comment, one task: several commands go where the slowest of them belongs.
    for queue in ("fixes", "reviews"):
        if queue in queues:
            return Route("kaizen.handle_command", queue)
    return Route("kaizen.handle_command", "feedback")


def _sent_by_self(payload: dict[str, Any], app_slug: str) -> bool:
    """Kaizen's own comments come back as events; answering them would loop forever."""
    sender = payload.get("sender") or {}
    login = str(sender.get("login") or "").lower()
    if login == f"{app_slug}[bot]".lower():
        return True
    comment = payload.get("comment") or {}
    via_app = comment.get("performed_via_github_app") or {}
    author = str((comment.get("user") or {}).get("login") or "").lower()
    return bool(via_app.get("slug") == app_slug and author == f"{app_slug}[bot]")
