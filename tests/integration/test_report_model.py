"""The report model from a memory seeded through the real feedback path."""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from bot.report_markdown import LIMIT, render_markdown
from memory.embedding import Embedder
from memory.report import build_report
from memory.service import Memory
from memory.types import Experience, Kind, Signal
from tests.integration.test_memory_service import build

REPO = "octo-org/app"


class HashEmbedder:
    """Reports never search by similarity, so these tests need vectors, not meaning: a
    deterministic stand-in keeps seeding hundreds of experiences fast."""

    name = "test-hash-16"
    dim = 16

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            vector = [b - 127.5 for b in digest[: self.dim]]
            norm = math.sqrt(sum(v * v for v in vector)) or 1.0
            out.append([v / norm for v in vector])
        return out


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return HashEmbedder()


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Iterator[Memory]:
    mem = build(tmp_path, embedder)
    yield mem
    mem.close()


def post(memory: Memory, pattern: str, n: int, *, pr: str = "1", repo: str = REPO) -> list[str]:
    return [
        memory.record_experience(
            Experience(
                kind=Kind.COMMENT,
                repo=repo,
                pattern=pattern,
                fingerprint=f"{pr}:{pattern}:{i}",
                text=f"{pattern} finding {i}",
                severity="security" if pattern.startswith("secrets:") else "medium",
                extra={
                    "source": pattern.split(":")[0],
                    "message": f"About {pattern} #{i}",
                    "pr": pr,
                },
            )
        )
        for i in range(n)
    ]


def signal(
    memory: Memory,
    eid: str,
    kind: str,
    pattern: str,
    reason: str | None = None,
    at: float | None = None,
) -> None:
    memory.apply_signal(
        Signal(
            id=f"{kind}:{eid}",
            kind=kind,
            experience_id=eid,
            repo=REPO,
            pattern=pattern,
            at=time.time() if at is None else at,
            reason=reason,
            actor="alice",
        )
    )


def report(memory: Memory, repo: str | None = REPO):  # type: ignore[no-untyped-def]
    assert memory.activity is not None
    return build_report(
        scores=memory.scores, activity=memory.activity, trajectories=memory.trajectories, repo=repo
    )


def test_numbers_match_the_signals_given(memory: Memory) -> None:
    a = post(memory, "ruff:B006", 3)
    b = post(memory, "llm:naming", 2)
    signal(memory, a[0], "thumbs_up", "ruff:B006")
    signal(memory, a[1], "applied", "ruff:B006")
    signal(memory, a[2], "thumbs_down", "ruff:B006")
    signal(memory, a[2], "thumbs_down", "ruff:B006")  # redelivered: counts once
    signal(memory, b[0], "ignored", "llm:naming")
    signal(memory, b[1], "bad", "llm:naming", reason="naming is our call")
    rows = {p.pattern: p for p in report(memory).patterns}
    b006, naming = rows["ruff:B006"], rows["llm:naming"]
    assert (b006.posted, b006.accepted, b006.rejected, b006.ignored) == (3, 2, 1, 0)
    assert b006.rate == pytest.approx(2 / 3)
    assert b006.interval is not None and b006.interval[0] < 2 / 3 < b006.interval[1]
    assert (naming.posted, naming.accepted, naming.rejected, naming.ignored) == (2, 0, 1, 1)
    assert any(x.reason == "naming is our call" for x in naming.examples)
    assert naming.status == "suppressed"
    totals = report(memory).totals
    assert (totals["posted"], totals["accepted"], totals["rejected"]) == (5, 2, 2)


def test_a_thumbs_up_taken_back_is_no_longer_reported_as_accepted(memory: Memory) -> None:
    a = post(memory, "ruff:B006", 2)
    signal(memory, a[0], "thumbs_up", "ruff:B006")
    signal(memory, a[1], "thumbs_up", "ruff:B006")
    signal(memory, a[1], "thumbs_down", "ruff:B006")
    memory.retract_signal(f"thumbs_up:{a[0]}", a[0])  # back to no word at all
    memory.retract_signal(f"thumbs_down:{a[1]}", a[1])  # the 👍 stands again
    row = next(p for p in report(memory).patterns if p.pattern == "ruff:B006")
    assert (row.posted, row.accepted, row.rejected, row.ignored) == (2, 1, 0, 0)


def test_mutes_show_who_and_when(memory: Memory) -> None:
    post(memory, "ruff:E501", 1)
    memory.scores.mute(REPO, "ruff:E501", by="maintainer", at=1_760_000_000.0)
    built = report(memory)
    (row,) = [p for p in built.patterns if p.pattern == "ruff:E501"]
    assert row.status == "muted" and row.muted_by == "maintainer"
    assert [(m.pattern, m.by) for m in built.mutes] == [("ruff:E501", "maintainer")]
    assert "by @maintainer" in render_markdown(built)


def test_security_patterns_are_never_shown_as_held_back(memory: Memory) -> None:
    ids = post(memory, "secrets:aws-access-key", 3)
    for eid in ids:
        signal(memory, eid, "thumbs_down", "secrets:aws-access-key")
    (row,) = report(memory).patterns
    assert row.status == "active"


def test_fix_strategies_and_runs_are_reported(memory: Memory) -> None:
    from memory.activity import Event

    eid = memory.record_experience(
        Experience(
            kind=Kind.FIX,
            repo=REPO,
            pattern="fix:comparison:AssertionError",
            fingerprint="7:abc",
            text="fix",
        )
    )
    signal(memory, eid, "tests_passed", "fix:comparison:AssertionError")
    signal(memory, eid, "fix_merged", "fix:comparison:AssertionError")
    memory.note(
        Event(
            "fix:1",
            "fix",
            REPO,
            time.time(),
            data={"fixed": True, "attempts": 3, "sandbox_runs": 4},
        )
    )
    built = report(memory)
    (strategy,) = built.strategies
    assert (strategy.tried, strategy.passed, strategy.merged) == (1, 1, 1)
    assert built.totals["fix_runs"] == 1 and built.totals["fixed"] == 1
    assert built.patterns == []  # fixes are not review comments


def test_five_hundred_patterns_fit_one_comment(memory: Memory) -> None:
    for i in range(500):
        post(memory, f"llm:pattern-number-{i:03d}-with-a-long-name", 1, pr=str(i))
    text = render_markdown(report(memory))
    assert len(text) <= LIMIT
    assert "more patterns" in text or text.count("| `llm:") == 500


def test_empty_memory_gives_a_friendly_report(memory: Memory) -> None:
    built = report(memory)
    assert built.empty
    assert "Nothing learned yet" in render_markdown(built)
    assert report(memory, repo=None).empty


def test_kaizen_report_cli_writes_markdown_html_and_json(tmp_path: Path) -> None:
    import json
    import subprocess

    from tests.integration.procs import kaizen_cmd, kaizen_env

    data = tmp_path / "data"
    mem = build(data, HashEmbedder())
    try:
        ids = post(mem, "ruff:E722", 2)
        signal(mem, ids[0], "thumbs_up", "ruff:E722")
    finally:
        mem.close()
    env = kaizen_env(data_dir=str(data), learning_half_life_days="60")  # as build() made it
    out = tmp_path / "report.html"
    runs = {
        "md": ["report", "--repo", REPO],
        "json": ["report", "--format", "json"],
        "html": ["report", "--format", "html", "--out", str(out)],
    }
    done = {
        name: subprocess.run(
            kaizen_cmd(*args), env=env, capture_output=True, text=True, timeout=120, check=False
        )
        for name, args in runs.items()
    }
    assert all(d.returncode == 0 for d in done.values()), {k: d.stderr for k, d in done.items()}
    assert "| `ruff:E722` |" in done["md"].stdout
    assert json.loads(done["json"].stdout)["totals"]["posted"] == 2
    page = out.read_text()
    assert "<svg" in page and "ruff:E722" in page
    fetched = re.findall(r'(?:src|href)="(https?://[^"]+)"', page)
    assert fetched == []  # self-contained: nothing to load from anywhere
    bad = subprocess.run(
        kaizen_cmd("report", "--repo", "not a repo"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2 and "--repo" in bad.stderr


def test_a_change_of_mind_shows_as_suppressed_in_both_views(memory: Memory) -> None:
    # liked for four months (a 👍 a day), turned down for the last three weeks; the store
    # here has a 60-day half-life, so the recent sums have 15 days
    day = 86_400.0
    now = time.time()
    ids = post(memory, "ruff:SIM108", 141)
    for i, eid in enumerate(ids):
        kind = "thumbs_up" if i < 120 else "thumbs_down"
        signal(memory, eid, kind, "ruff:SIM108", at=now - (141 - i) * day)
    long_only = memory.scores.counts("*", "ruff:SIM108", now)
    assert long_only[0] / sum(long_only) > 0.5  # one decayed sum alone still says "liked"
    for view in (REPO, None):
        row = next(p for p in report(memory, view).patterns if p.pattern == "ruff:SIM108")
        assert row.score is not None and row.score < 0.5
        assert row.status == "suppressed"
