from __future__ import annotations

from typing import Any

import pytest

from bot.routing import Ignore, Route, route
from tests.helpers import load_webhook


def comment_payload(body: str, login: str = "octocat") -> dict[str, Any]:
    payload = load_webhook("issue_comment.created.json")
    payload["comment"]["body"] = body
    payload["comment"]["user"]["login"] = login
    payload["sender"]["login"] = login
    return payload


@pytest.mark.parametrize(
    ("body", "queue"),
    [
        ("/kaizen help", "feedback"),
        ("/kaizen review", "reviews"),
        ("/kaizen fix please", "fixes"),
        ("/kaizen cancel", "feedback"),
        ("/kaizen mute ruff:E501", "feedback"),
        ("@kaizen report", "feedback"),
        ("/kaizen review\n/kaizen fix", "fixes"),
        ("/kaizen frobnicate", "feedback"),
    ],
)
def test_comment_commands_go_to_their_verbs_queue(body: str, queue: str) -> None:
    assert route("issue_comment", comment_payload(body), app_slug="kaizen") == Route(
        "kaizen.handle_command", queue
    )


@pytest.mark.parametrize(
    "body",
    ["thanks!", "> /kaizen fix", "```\n/kaizen fix\n```", "please run `/kaizen fix`"],
)
def test_comments_without_commands_are_ignored(body: str) -> None:
    assert isinstance(route("issue_comment", comment_payload(body), app_slug="kaizen"), Ignore)


def test_own_comments_are_ignored_even_with_commands() -> None:
    payload = comment_payload("/kaizen help", login="kaizen[bot]")
    assert route("issue_comment", payload, app_slug="kaizen") == Ignore("sent by Kaizen itself")


def test_other_apps_commands_are_answered() -> None:
    payload = comment_payload("/kaizen help", login="dependabot[bot]")
    assert isinstance(route("issue_comment", payload, app_slug="kaizen"), Route)


def test_fix_label_on_issue_routes_to_fixes() -> None:
    payload = load_webhook("issues.labeled.json")
    payload["label"]["name"] = "kaizen:fix"
    payload["issue"].pop("pull_request", None)
    assert route("issues", payload, app_slug="kaizen") == Route("kaizen.fix_issue", "fixes")


def test_other_labels_are_ignored() -> None:
    payload = load_webhook("issues.labeled.json")
    payload["label"]["name"] = "bug"
    assert isinstance(route("issues", payload, app_slug="kaizen"), Ignore)


def test_review_comment_reply_is_feedback() -> None:
    payload = load_webhook("pull_request_review_comment.created.json")
    payload["comment"]["in_reply_to_id"] = 1
    assert route("pull_request_review_comment", payload, app_slug="kaizen") == Route(
        "kaizen.record_feedback", "feedback"
    )


def test_a_deleted_reply_is_feedback_a_deleted_comment_is_not() -> None:
    payload = load_webhook("pull_request_review_comment.deleted.json")
    assert isinstance(route("pull_request_review_comment", payload, app_slug="kaizen"), Ignore)
    payload["comment"]["in_reply_to_id"] = 1
    assert route("pull_request_review_comment", payload, app_slug="kaizen") == Route(
        "kaizen.record_feedback", "feedback"
    )


def test_an_edited_reply_is_feedback_an_edited_comment_is_not() -> None:
    payload = load_webhook("pull_request_review_comment.edited.json")
    payload["comment"].pop("in_reply_to_id", None)
    assert isinstance(route("pull_request_review_comment", payload, app_slug="kaizen"), Ignore)
    payload["comment"]["in_reply_to_id"] = 1
    assert route("pull_request_review_comment", payload, app_slug="kaizen") == Route(
        "kaizen.record_feedback", "feedback"
    )


def test_a_reopened_thread_is_feedback() -> None:
    payload = load_webhook("pull_request_review_thread.unresolved.json")
    assert route("pull_request_review_thread", payload, app_slug="kaizen") == Route(
        "kaizen.record_feedback", "feedback"
    )


def test_unknown_events_are_ignored() -> None:
    assert route("workflow_run", {"action": "completed"}, app_slug="kaizen") == Ignore(
        "workflow_run is not used"
    )
