"""Small helpers shared by tests and benches: free ports, signed deliveries, waiting."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.webhook import sign

if TYPE_CHECKING:
    import pytest  # benches import these helpers without pytest installed

FIXTURES = Path(__file__).parent / "fixtures"
WEBHOOKS = FIXTURES / "webhooks"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def delivery_headers(
    body: bytes, event: str, secret: str, delivery_id: str | None = None
) -> dict[str, str]:
    """The headers GitHub sends with a delivery."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/test",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(secret.encode(), body),
    }


def encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def load_webhook(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WEBHOOKS / name).read_text())
    return data


def webhook_manifest() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((WEBHOOKS / "manifest.json").read_text())
    return data


def wait_until(predicate: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")


RecentSums = dict[tuple[str, str], tuple[float, float, float]]


def assert_same_recent_sums(actual: RecentSums, expected: RecentSums) -> None:
    """Recent sums equal up to float rounding (added in another order); the newest signal
    times exactly (they are maxima)."""
    import pytest

    assert actual.keys() == expected.keys()
    for key, (ra, rb, last) in expected.items():
        assert actual[key] == (pytest.approx(ra, rel=1e-12), pytest.approx(rb, rel=1e-12), last)


T = TypeVar("T")


def sqlite_or_redis(
    kind: str, request: pytest.FixtureRequest, sqlite: Callable[[], T], redis: Callable[[str], T]
) -> T:
    """The store a test parametrised over both backends asked for (``kind`` ends in
    "sqlite" or "redis"): every local store has a Redis twin for many machines."""
    if kind.endswith("sqlite"):
        return sqlite()
    return redis(request.getfixturevalue("redis_url"))


def review_body_of(posted: int, **lists: Any) -> str:
    """The review body of a full review of two files that posted ``posted`` comments and
    held back none by learning, with the rendered lists given (``repeats``,
    ``conventions``)."""
    from workers.review.render import ReviewSummary, review_body

    summary = ReviewSummary(
        posted=posted,
        suppressed=0,
        incremental=False,
        reviewed_files=2,
        skipped_files=[],
        notes=[],
        moved=[],
        **lists,
    )
    return review_body(summary)


def run_pytest(
    project: Path, extra: list[str], pythonpath: str | None = None
) -> subprocess.CompletedProcess[str]:
    """This Python's pytest on ``project``, in a subprocess as the sandbox runs it, with
    none of the outer run's PYTEST_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
