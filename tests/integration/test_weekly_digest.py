"""The optional weekly digest keeps one report issue per active repository up to date."""

from __future__ import annotations

import time
from pathlib import Path

from bot.github import GitHubApp
from bot.settings import Settings
from memory.types import Experience, Kind, Signal
from tests.fakes.github_api import FakeGitHub, generate_private_key_pem
from tests.integration.test_memory_service import build
from tests.integration.test_report_model import HashEmbedder
from workers.digest import TITLE, update_digests

REPO = "octo-org/app"


def test_digest_issue_is_created_once_then_updated(tmp_path: Path) -> None:
    memory = build(tmp_path / "memory", HashEmbedder())
    pem = generate_private_key_pem()
    try:
        eid = memory.record_experience(
            Experience(
                kind=Kind.COMMENT,
                repo=REPO,
                pattern="ruff:E722",
                fingerprint="1:a",
                text="bare except",
                extra={"source": "ruff", "message": "bare except"},
            )
        )
        memory.apply_signal(Signal("r:1", "thumbs_up", eid, REPO, "ruff:E722", time.time()))
        with FakeGitHub(tmp_path / "gh") as fake:
            fake.register_app(app_id=91, slug="kaizen", private_key_pem=pem)
            installation = fake.add_installation("octo-org", repos=[])
            fake.add_repo(REPO, installation_id=installation)
            fake.add_repo("octo-org/quiet", installation_id=installation)  # no activity
            app = GitHubApp(
                Settings(
                    app_id=91,
                    private_key=pem,
                    github_api_url=fake.base_url,
                    github_seconds_between_requests=0,
                    github_seconds_between_writes=0,
                    data_dir=tmp_path / "data",
                )
            )
            try:
                clients = {i: app.installation(i) for i in app.installation_ids()}
                first = update_digests(dict(clients), memory)
                second = update_digests(dict(clients), memory)
            finally:
                app.close()
            assert list(first["updated"]) == [REPO] and first["failed"] == {}
            assert second["updated"] == first["updated"]  # the same issue, updated
            issue = fake.issue(REPO, first["updated"][REPO])
            assert issue["title"] == TITLE and "| `ruff:E722` |" in issue["body"]
            assert issue["user"]["login"] == "kaizen[bot]"
            assert fake.contract_errors == []
    finally:
        memory.close()
