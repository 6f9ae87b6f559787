"""Webhook → Redis → a real ``celery worker`` process → the fake GitHub, end to end."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT, WEBHOOK_SECRET
from tests.fakes.github_api import FakeGitHub, generate_private_key_pem
from tests.helpers import free_port
from tests.integration.procs import (
    kaizen_cmd,
    kaizen_env,
    private_redis,
    running,
    start_redis,
    wait_http,
    wait_log,
)

pytestmark = pytest.mark.slow

REPO = "octo-org/app"
APP_ID = 4242


@dataclass
class Stack:
    fake: FakeGitHub
    web_url: str
    worker_log: Path
    pem: str


def bot_comments(fake: FakeGitHub, number: int, repo: str = REPO) -> list[dict[str, object]]:
    return [
        c
        for c in fake.issue_comments(repo, number)
        if (c.get("user") or {}).get("login") == "kaizen[bot]"  # type: ignore[union-attr]
    ]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("e2e")
    redis_url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
    redis.Redis.from_url(redis_url).flushdb()
    pem = generate_private_key_pem()
    with FakeGitHub(tmp / "github") as fake:
        fake.register_app(app_id=APP_ID, slug="kaizen", private_key_pem=pem)
        installation = fake.add_installation("octo-org", repos=[])
        fake.add_repo(REPO, files={"README.md": "# app\n"}, installation_id=installation)
        fake.add_repo(
            "octo-org/configured",
            files={".github/kaizen.yml": "review:\n  maxcomments: 3\n"},
            installation_id=installation,
        )
        fake.add_repo(
            "octo-org/quiet",
            files={".github/kaizen.yml": "commands:\n  enabled: false\n"},
            installation_id=installation,
        )
        for login in ("alice", "mallory"):
            fake.add_user(login)
        fake.add_collaborator(REPO, "alice", "write")
        port = free_port()
        common = {"redis_url": redis_url, "data_dir": str(tmp / "data"), "app_slug": "kaizen"}
        web_env = kaizen_env(webhook_secret=WEBHOOK_SECRET, **common)
        worker_env = kaizen_env(
            app_id=str(APP_ID),
            private_key=pem,
            github_api_url=fake.base_url,
            github_seconds_between_requests="0",
            github_seconds_between_writes="0",
            **common,
        )
        web_log, worker_log = tmp / "web.log", tmp / "worker.log"
        with (
            running(kaizen_cmd("serve", "--port", str(port)), web_env, web_log) as web,
            running(kaizen_cmd("worker", "--concurrency", "1"), worker_env, worker_log) as worker,
        ):
            wait_http(f"http://127.0.0.1:{port}/healthz", web, web_log)
            wait_log(worker_log, "ready", worker)
            fake.set_webhook(f"http://127.0.0.1:{port}/webhooks/github", WEBHOOK_SECRET)
            yield Stack(fake, f"http://127.0.0.1:{port}", worker_log, pem)


def metric(stack: Stack, name: str, **labels: str) -> float:
    text = httpx.get(f"{stack.web_url}/metrics").text
    selector = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    match = re.search(rf"^{name}\{{{re.escape(selector)}\}} (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def test_help_command_is_answered_once_and_own_comment_ignored(stack: Stack) -> None:
    fake = stack.fake
    issue = fake.open_issue(REPO, title="How do I use this?", user="alice")
    ignored_before = metric(
        stack, "kaizen_webhook_deliveries_total", event="issue_comment", status="ignored"
    )
    fake.add_issue_comment(REPO, issue["number"], "/kaizen help", user="alice")
    fake.wait_for(lambda: len(bot_comments(fake, issue["number"])) == 1, timeout=30)
    reply = bot_comments(fake, issue["number"])[0]
    assert "/kaizen fix" in str(reply["body"])
    assert "write access" in str(reply["body"])
    # GitHub sends Kaizen's own comment back as a webhook: it must be seen and ignored.
    fake.wait_for(
        lambda: (
            metric(
                stack, "kaizen_webhook_deliveries_total", event="issue_comment", status="ignored"
            )
            == ignored_before + 1
        ),
        timeout=15,
    )
    time.sleep(1.0)
    assert len(bot_comments(fake, issue["number"])) == 1


def test_non_collaborator_fix_gets_a_polite_refusal(stack: Stack) -> None:
    fake = stack.fake
    issue = fake.open_issue(REPO, title="Crash on start", user="mallory")
    fake.add_issue_comment(REPO, issue["number"], "/kaizen fix", user="mallory")
    fake.wait_for(lambda: len(bot_comments(fake, issue["number"])) == 1, timeout=30)
    body = str(bot_comments(fake, issue["number"])[0]["body"])
    assert "Sorry @mallory" in body
    assert "needs write access" in body


def test_collaborator_fix_on_a_repo_without_tests_is_told_why(stack: Stack) -> None:
    fake = stack.fake
    issue = fake.open_issue(REPO, title="Crash on start", user="alice")
    fake.add_issue_comment(REPO, issue["number"], "/kaizen fix", user="alice")
    fake.wait_for(
        lambda: any(
            "No tests found" in str(c["body"]) for c in bot_comments(fake, issue["number"])
        ),
        timeout=120,
    )


def test_502_then_success_posts_one_comment(stack: Stack) -> None:
    fake = stack.fake
    issue = fake.open_issue(REPO, title="Flaky GitHub", user="alice")
    fake.inject_error("POST", rf"/repos/{REPO}/issues/{issue['number']}/comments$", status=502)
    fake.add_issue_comment(REPO, issue["number"], "/kaizen help", user="alice")
    fake.wait_for(lambda: len(bot_comments(fake, issue["number"])) == 1, timeout=30)
    time.sleep(1.5)
    assert len(bot_comments(fake, issue["number"])) == 1
    posts = [
        r
        for r in fake.requests
        if r.method == "POST" and r.path.endswith(f"/issues/{issue['number']}/comments")
    ]
    assert [r.status for r in posts] == [502, 201]


def test_secondary_rate_limit_is_waited_out(stack: Stack) -> None:
    fake = stack.fake
    issue = fake.open_issue(REPO, title="Busy GitHub", user="alice")
    fake.inject_secondary_rate_limit(
        "POST", rf"/repos/{REPO}/issues/{issue['number']}/comments$", retry_after=1
    )
    started = time.monotonic()
    fake.add_issue_comment(REPO, issue["number"], "/kaizen help", user="alice")
    fake.wait_for(lambda: len(bot_comments(fake, issue["number"])) == 1, timeout=30)
    assert time.monotonic() - started >= 1.0
    time.sleep(1.0)
    assert len(bot_comments(fake, issue["number"])) == 1


def test_broker_down_answers_503_and_redeliver_brings_it_back(stack: Stack, tmp_path: Path) -> None:
    """A delivery refused while Redis is down is not lost: `kaizen redeliver` replays it."""
    fake = stack.fake
    with private_redis(tmp_path) as (binary, redis_port):
        url = f"redis://127.0.0.1:{redis_port}/0"
        port = free_port()
        env = kaizen_env(
            webhook_secret=WEBHOOK_SECRET,
            redis_url=url,
            data_dir=str(tmp_path / "d"),
            enqueue_timeout_s="0.5",
        )
        log = tmp_path / "web.log"
        broker = start_redis(binary, redis_port, tmp_path)
        with running(kaizen_cmd("serve", "--port", str(port)), env, log) as web:
            wait_http(f"http://127.0.0.1:{port}/healthz", web, log)
            fake.set_webhook(f"http://127.0.0.1:{port}/webhooks/github", WEBHOOK_SECRET)
            try:
                broker.terminate()
                broker.wait()
                assert httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 503
                issue = fake.open_issue(REPO, title="Lost?", user="alice")
                fake.add_issue_comment(REPO, issue["number"], "/kaizen help", user="alice")
                fake.wait_for(
                    lambda: any(
                        d["event"] == "issue_comment" and d["status_code"] == 503
                        for d in fake.deliveries
                    ),
                    timeout=15,
                )
                broker = start_redis(binary, redis_port, tmp_path)
                client = redis.Redis(port=redis_port)
                assert client.dbsize() == 0  # nothing queued, nothing recorded as handled
                done = subprocess.run(
                    kaizen_cmd("redeliver", "--since", "1h"),
                    env=kaizen_env(
                        app_id=str(APP_ID),
                        private_key=stack.pem,
                        github_api_url=fake.base_url,
                    ),
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
                assert done.returncode == 0, done.stderr
                assert "1 failed deliveries redelivered" in done.stdout
                fake.wait_for(
                    lambda: any(
                        d["event"] == "issue_comment"
                        and d["redelivery"]
                        and d["status_code"] == 202
                        for d in fake.deliveries
                    ),
                    timeout=15,
                )
                assert client.llen("feedback") == 1
            finally:
                broker.terminate()
                broker.wait()
                fake.set_webhook(f"{stack.web_url}/webhooks/github", WEBHOOK_SECRET)


def test_help_lists_problems_in_the_repo_config(stack: Stack) -> None:
    fake, repo = stack.fake, "octo-org/configured"
    issue = fake.open_issue(repo, title="Config", user="alice")
    fake.add_issue_comment(repo, issue["number"], "/kaizen help", user="alice")
    fake.wait_for(lambda: len(bot_comments(fake, issue["number"], repo)) == 1, timeout=30)
    body = str(bot_comments(fake, issue["number"], repo)[0]["body"])
    assert "unknown key review.maxcomments (did you mean review.max_comments?)" in body


def test_commands_disabled_by_repo_config_get_no_reply(stack: Stack) -> None:
    fake, repo = stack.fake, "octo-org/quiet"
    issue = fake.open_issue(repo, title="Quiet", user="alice")
    fake.add_issue_comment(repo, issue["number"], "/kaizen help", user="alice")
    fake.wait_for(
        lambda: "commands are disabled" in stack.worker_log.read_text(errors="replace"),
        timeout=30,
    )
    assert bot_comments(fake, issue["number"], repo) == []


def test_installation_token_is_reused_across_tasks(stack: Stack) -> None:
    fake = stack.fake
    for title in ("one", "two"):
        issue = fake.open_issue(REPO, title=title, user="alice")
        fake.add_issue_comment(REPO, issue["number"], "/kaizen help", user="alice")
        fake.wait_for(lambda n=issue["number"]: len(bot_comments(fake, n)) == 1, timeout=30)
    tokens = [r for r in fake.requests if r.path.endswith("/access_tokens")]
    assert len(tokens) == 1
