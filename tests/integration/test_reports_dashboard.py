"""The reports dashboard in a real headless Chromium, served by `kaizen serve`, from a
memory seeded through the real feedback path."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory.activity import Event, SqliteActivityLog
from memory.archive import SignalArchive
from memory.experiences import open_store
from memory.pending import PendingSignals
from memory.scores import ShadowEntry, SqliteScoreStore
from memory.service import Memory, default_paths
from memory.trajectories import TrajectoryStore, Transition
from memory.types import Experience, Kind, Signal
from tests.browser import Browser, require_browser_or_skip
from tests.helpers import free_port
from tests.integration.procs import kaizen_cmd, kaizen_env, running, wait_http
from tests.integration.test_report_model import HashEmbedder

require_browser_or_skip()
pytestmark = pytest.mark.slow

TOKEN = "reports-token-for-tests"
REPO = "octo-org/shop"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
WEEK = 7 * 86400.0


def seed(data: Path) -> None:
    """Six weeks of a team's reactions, through Memory's own API."""
    paths = default_paths(data)
    memory = Memory(
        scores=SqliteScoreStore(paths["scores"], half_life_days=30),
        trajectories=TrajectoryStore(paths["trajectories"]),
        pending=PendingSignals(paths["pending"]),
        archive=SignalArchive(paths["archive"]),
        open_experiences=lambda: open_store(
            url=None, api_key=None, path=data / "qdrant", embedder=HashEmbedder()
        ),
        activity=SqliteActivityLog(paths["activity"]),
    )
    now = time.time()
    taste = {
        "ruff:E722": ["thumbs_up", "applied", "thumbs_up", "addressed"],
        "ruff:B006": ["thumbs_up", "thumbs_down", "applied", "ignored"],
        "llm:naming": ["thumbs_down", "ignored", "bad", "ignored"],
        "secrets:aws-access-key": ["thumbs_up", "thumbs_up", "thumbs_up", "thumbs_up"],
    }
    try:
        for week in range(6):
            at = now - (5 - week) * WEEK
            for pattern, kinds in taste.items():
                for i, kind in enumerate(kinds):
                    eid = memory.record_experience(
                        Experience(
                            kind=Kind.COMMENT,
                            repo=REPO,
                            pattern=pattern,
                            fingerprint=f"{week}:{pattern}:{i}",
                            text=f"{pattern} {week} {i}",
                            severity="security" if pattern.startswith("secrets") else "medium",
                            created_at=at,
                            extra={
                                "source": pattern.split(":")[0],
                                "pr": str(week * 10 + i),
                                "message": f"A {pattern} remark <b>with markup</b>",
                            },
                        )
                    )
                    memory.apply_signal(
                        Signal(
                            f"s:{eid}",
                            kind,
                            eid,
                            REPO,
                            pattern,
                            at + 3600,
                            reason="not how we name things" if kind == "bad" else None,
                            actor="alice",
                        )
                    )
            memory.scores.log_shadow(
                ShadowEntry(REPO, "llm:naming", f"k{week}", 0.2, "learned", at)
            )
            fix = memory.record_experience(
                Experience(
                    kind=Kind.FIX,
                    repo=REPO,
                    pattern="fix:comparison:AssertionError",
                    fingerprint=f"fix:{week}",
                    text="fix",
                    created_at=at,
                )
            )
            memory.apply_signal(
                Signal(f"t:{fix}", "tests_passed", fix, REPO, "fix:comparison:AssertionError", at)
            )
            memory.note(
                Event(
                    f"fix:{week}",
                    "fix",
                    REPO,
                    at,
                    data={"fixed": week % 2 == 0, "attempts": 4, "sandbox_runs": 6},
                )
            )
            memory.trajectories.record(
                Transition(
                    f"review:{week}",
                    0,
                    [{"role": "user", "content": "diff"}],
                    "{}",
                    "fake-gpt",
                    prompt_tokens=4000 + 500 * week,
                    completion_tokens=300,
                    repo=REPO,
                    kind="review",
                    created_at=at,
                )
            )
        memory.scores.mute(REPO, "ruff:B006", by="maintainer", at=now)
    finally:
        memory.close()


@dataclass
class Site:
    url: str


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("reports")
    seed(tmp / "data")
    port = free_port()
    env = kaizen_env(data_dir=str(tmp / "data"), reports_token=TOKEN, webhook_secret="x")
    log = tmp / "web.log"
    with running(kaizen_cmd("serve", "--port", str(port)), env, log) as web:
        wait_http(f"http://127.0.0.1:{port}/healthz", web, log)
        yield Site(f"http://127.0.0.1:{port}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser(window_size=(1400, 1000)) as b:
        yield b


def test_without_the_token_the_page_answers_401(site: Site, browser: Browser) -> None:
    browser.open(f"{site.url}/reports/{REPO}")
    assert browser.status() == 401
    assert "Reports token" in browser.text()
    assert REPO not in browser.text()


def test_dashboard_renders_table_and_charts_and_stays_on_localhost(
    site: Site, browser: Browser
) -> None:
    browser.open(f"{site.url}/reports/{REPO}", headers={"Authorization": f"Bearer {TOKEN}"})
    assert browser.status() == 200
    rows = browser.find_all("table.kz-patterns tr.kz-pattern")
    assert len(rows) == 4
    text = browser.text()
    assert "held back" in text and "muted" in text and "by @maintainer" in text
    assert "<b>with markup</b>" in text  # user text is shown as text, never as HTML
    assert len(browser.find_all("svg.kz-chart")) >= 6
    assert browser.find_all("svg.kz-line-chart .kz-line")
    assert browser.find_all("svg.kz-bar-chart .kz-bar")
    assert browser.offsite_requests() == []
    shot = browser.screenshot(ARTIFACTS / "reports-dashboard.png")
    assert shot.stat().st_size > 10_000


def test_login_page_remembers_the_browser(site: Site, browser: Browser) -> None:
    browser.open(f"{site.url}/reports/login")
    browser.fill("#token", TOKEN)
    browser.click("button[type=submit]", navigates=True)
    assert browser.status() == 200
    assert browser.find_all("table.kz-patterns")
    assert browser.offsite_requests() == []


def test_a_wrong_token_is_refused(site: Site, browser: Browser) -> None:
    browser.open(f"{site.url}/reports/{REPO}", headers={"Authorization": "Bearer wrong"})
    assert browser.status() in (200, 401)  # the login cookie of the test above may apply
    import httpx

    response = httpx.get(f"{site.url}/reports", headers={"Authorization": "Bearer wrong"})
    assert response.status_code == 401
    assert (
        httpx.get(
            f"{site.url}/reports?format=json", headers={"Authorization": f"Bearer {TOKEN}"}
        ).json()["repo"]
        is None
    )
