"""The webhook endpoint against real Redis and Celery's real publisher."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from fastapi.testclient import TestClient

from bot.cli import build_web_app
from bot.settings import Settings
from tests.conftest import WEBHOOK_SECRET
from tests.helpers import delivery_headers, encode, load_webhook, webhook_manifest

# What each fixture's event.action must become, written out independently of bot.routing.
EXPECTED_TASKS: dict[tuple[str, str | None], tuple[str, str]] = {
    ("pull_request", "opened"): ("kaizen.review_pull_request", "reviews"),
    ("pull_request", "reopened"): ("kaizen.review_pull_request", "reviews"),
    ("pull_request", "ready_for_review"): ("kaizen.review_pull_request", "reviews"),
    ("pull_request", "synchronize"): ("kaizen.review_pull_request", "reviews"),
    ("pull_request", "closed"): ("kaizen.finalize_pull_request", "feedback"),
    ("pull_request_review_thread", "resolved"): ("kaizen.record_feedback", "feedback"),
    ("pull_request_review_thread", "unresolved"): ("kaizen.record_feedback", "feedback"),
    ("pull_request_review", "submitted"): ("kaizen.record_feedback", "feedback"),
}
for _action in ("created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"):
    EXPECTED_TASKS[("installation", _action)] = ("kaizen.installation_changed", "feedback")
for _action in ("added", "removed"):
    EXPECTED_TASKS[("installation_repositories", _action)] = (
        "kaizen.installation_changed",
        "feedback",
    )


def queued_messages(client: redis.Redis, queue: str) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in client.lrange(queue, 0, -1)]


@pytest.fixture
def web(settings: Settings) -> Iterator[TestClient]:
    with TestClient(build_web_app(settings)) as client:
        yield client


@pytest.fixture
def rdb(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def post(web: TestClient, payload: dict[str, Any], event: str, **kw: Any) -> Any:
    body = encode(payload)
    return web.post(
        "/webhooks/github",
        content=body,
        headers=delivery_headers(body, event, WEBHOOK_SECRET, **kw),
    )


def _expected(event: str, action: str | None, payload: dict[str, Any]) -> tuple[str, str] | None:
    if event == "pull_request_review_comment" and action == "created":
        if payload["comment"].get("in_reply_to_id"):
            return ("kaizen.record_feedback", "feedback")
        return None
    return EXPECTED_TASKS.get((event, action))


@pytest.mark.parametrize(
    "entry", webhook_manifest(), ids=lambda e: str(e["file"]).removesuffix(".json")
)
def test_every_fixture_payload_is_routed_or_ignored(
    web: TestClient, rdb: redis.Redis, entry: dict[str, Any]
) -> None:
    payload = load_webhook(entry["file"])
    event, action = entry["event"], entry["action"]
    response = post(web, payload, event)
    assert 200 <= response.status_code < 300, response.text
    expected = _expected(event, action, payload)
    data = response.json()
    if expected is None:
        assert data["status"] == "ignored", data
        assert all(rdb.llen(q) == 0 for q in ("reviews", "fixes", "feedback"))
    else:
        task, queue = expected
        assert data == {
            "status": "queued",
            "delivery": data["delivery"],
            "task": task,
            "queue": queue,
        }
        messages = queued_messages(rdb, queue)
        assert [m["headers"]["task"] for m in messages] == [task]
        assert messages[0]["headers"]["id"] == data["delivery"]


def test_ping_answers_200(web: TestClient) -> None:
    response = post(web, load_webhook("ping.json"), "ping")
    assert response.status_code == 200
    assert response.json()["status"] == "ignored"


def test_missing_signature_is_401(web: TestClient, rdb: redis.Redis) -> None:
    body = encode(load_webhook("pull_request.opened.json"))
    headers = delivery_headers(body, "pull_request", WEBHOOK_SECRET)
    del headers["X-Hub-Signature-256"]
    assert web.post("/webhooks/github", content=body, headers=headers).status_code == 401
    assert rdb.llen("reviews") == 0


def test_wrong_signature_is_401(web: TestClient, rdb: redis.Redis) -> None:
    body = encode(load_webhook("pull_request.opened.json"))
    headers = delivery_headers(body, "pull_request", "another-secret")
    assert web.post("/webhooks/github", content=body, headers=headers).status_code == 401
    assert rdb.llen("reviews") == 0


def test_signature_over_a_different_body_is_401(web: TestClient) -> None:
    body = encode(load_webhook("pull_request.opened.json"))
    headers = delivery_headers(body, "pull_request", WEBHOOK_SECRET)
    tampered = body.replace(b'"opened"', b'"closed"')
    assert web.post("/webhooks/github", content=tampered, headers=headers).status_code == 401


@pytest.mark.parametrize("header", ["X-GitHub-Event", "X-GitHub-Delivery"])
def test_missing_event_or_delivery_header_is_400(web: TestClient, header: str) -> None:
    body = encode(load_webhook("pull_request.opened.json"))
    headers = delivery_headers(body, "pull_request", WEBHOOK_SECRET)
    del headers[header]
    assert web.post("/webhooks/github", content=body, headers=headers).status_code == 400


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b""])
def test_body_that_is_not_a_json_object_is_400(web: TestClient, body: bytes) -> None:
    headers = delivery_headers(body, "pull_request", WEBHOOK_SECRET)
    assert web.post("/webhooks/github", content=body, headers=headers).status_code == 400


def test_a_form_encoded_delivery_is_queued_like_a_json_one(
    web: TestClient, rdb: redis.Redis
) -> None:
    """A repository webhook at its default content type sends the JSON as a form field,
    signed over the form body."""
    payload = load_webhook("pull_request.opened.json")
    body = urlencode({"payload": json.dumps(payload)}).encode()
    headers = delivery_headers(body, "pull_request", WEBHOOK_SECRET)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    response = web.post("/webhooks/github", content=body, headers=headers)
    assert response.status_code == 202, response.text
    (message,) = queued_messages(rdb, "reviews")
    assert message["headers"]["task"] == "kaizen.review_pull_request"
    signed_over_json = delivery_headers(encode(payload), "pull_request", WEBHOOK_SECRET)
    signed_over_json["Content-Type"] = "application/x-www-form-urlencoded"
    refused = web.post("/webhooks/github", content=body, headers=signed_over_json)
    assert refused.status_code == 401


def test_body_over_25_mb_is_413(web: TestClient, rdb: redis.Redis) -> None:
    payload = load_webhook("pull_request.opened.json")
    payload["padding"] = "x" * (25 * 1024 * 1024)
    response = post(web, payload, "pull_request")
    assert response.status_code == 413
    assert rdb.llen("reviews") == 0


def test_same_delivery_twice_is_queued_once(web: TestClient, rdb: redis.Redis) -> None:
    payload = load_webhook("pull_request.opened.json")
    delivery = str(uuid.uuid4())
    first = post(web, payload, "pull_request", delivery_id=delivery)
    second = post(web, payload, "pull_request", delivery_id=delivery)
    assert first.json()["status"] == "queued"
    assert second.status_code == 200
    assert second.json() == {"status": "duplicate", "delivery": delivery}
    assert rdb.llen("reviews") == 1


def test_events_sent_by_kaizen_itself_are_ignored(web: TestClient, rdb: redis.Redis) -> None:
    payload = load_webhook("issue_comment.created.json")
    payload["comment"]["body"] = "/kaizen help"
    payload["sender"] = {**payload["sender"], "login": "kaizen[bot]", "type": "Bot"}
    response = post(web, payload, "issue_comment")
    assert response.json()["status"] == "ignored"
    assert response.json()["reason"] == "sent by Kaizen itself"
    assert rdb.llen("feedback") == 0


def test_command_comment_is_queued_on_the_verbs_queue(web: TestClient, rdb: redis.Redis) -> None:
    payload = load_webhook("issue_comment.created.json")
    payload["comment"]["body"] = "Could you try?\n\n/kaizen fix the off-by-one"
    response = post(web, payload, "issue_comment")
    assert response.json()["queue"] == "fixes"
    assert [m["headers"]["task"] for m in queued_messages(rdb, "fixes")] == [
        "kaizen.handle_command"
    ]


def test_metrics_count_deliveries_by_event_and_status(web: TestClient) -> None:
    post(web, load_webhook("pull_request.opened.json"), "pull_request")
    post(web, load_webhook("ping.json"), "ping")
    text = web.get("/metrics").text
    assert 'kaizen_webhook_deliveries_total{event="pull_request",status="queued"} 1.0' in text
    assert 'kaizen_webhook_deliveries_total{event="ping",status="ignored"} 1.0' in text
    assert "kaizen_enqueue_seconds_count 1.0" in text


def test_health_and_readiness(web: TestClient) -> None:
    assert web.get("/healthz").json() == {"status": "ok"}
    ready = web.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"broker": True, "ledger": True}
