"""`kaizen feedback`, `kaizen memory stats|rebuild|move|forget` and `kaizen export` as a user
runs them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.memory_setup import build_memory
from bot.settings import Settings
from memory.trajectories import Transition
from memory.types import Experience, Kind
from tests.integration.procs import kaizen_cmd, kaizen_env
from workers.review.state import review_state

pytestmark = pytest.mark.slow

REPO = "octo-org/app"


def run(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        kaizen_cmd(*args),
        env=kaizen_env(data_dir=str(data)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[Path, str]:
    """A memory holding one posted comment and the LLM call that wrote it."""
    data = tmp_path / "data"
    memory = build_memory(Settings(data_dir=data))
    exp_id = memory.record_experience(
        Experience(
            kind=Kind.COMMENT,
            repo=REPO,
            pattern="llm:naming",
            fingerprint="fp-1",
            text="rename `x` to something that says what it holds",
        )
    )
    memory.trajectories.record(
        Transition(
            trajectory_id="review-1",
            step=0,
            messages=[{"role": "user", "content": "review this diff"}],
            generation="rename `x`",
            model="fake-gpt",
            repo=REPO,
            kind="review",
            pattern="llm:naming",
            experience_id=exp_id,
        )
    )
    memory.close()
    return data, exp_id


def test_feedback_then_stats_rebuild_and_export(seeded: tuple[Path, str], tmp_path: Path) -> None:
    data, exp_id = seeded
    done = run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_up", "--reason", "yes")
    assert done.returncode == 0, done.stderr
    assert "applied: llm:naming in octo-org/app is now accepted" in done.stdout

    stats = run(data, "memory", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    payload = json.loads(stats.stdout)
    assert payload["patterns"] == 1
    assert payload["pending_signals"] == 0

    rebuilt = run(data, "memory", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "from 1 signals; scores unchanged" in rebuilt.stdout

    out = tmp_path / "sft.jsonl"
    exported = run(data, "export", "--format", "openai-sft", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    [line] = out.read_text().splitlines()
    assert json.loads(line)["messages"][-1] == {"role": "assistant", "content": "rename `x`"}


def test_a_signal_it_does_not_know_is_named_with_the_ones_it_does(
    seeded: tuple[Path, str],
) -> None:
    data, exp_id = seeded
    for finding in (exp_id, "no-such-finding"):
        done = run(data, "feedback", "--finding", finding, "--signal", "maybe")
        assert done.returncode == 2
        assert "unknown signal 'maybe'; valid signals: " in done.stderr
        assert "thumbs_down" in done.stderr


def test_the_same_feedback_twice_counts_once_another_person_or_signal_counts(
    seeded: tuple[Path, str],
) -> None:
    data, exp_id = seeded
    args = ("feedback", "--finding", exp_id, "--signal", "thumbs_down", "--actor", "ana")
    first, again = run(data, *args), run(data, *args)
    assert first.returncode == again.returncode == 0, again.stderr
    assert first.stdout.startswith("applied:")
    assert again.stdout.startswith("duplicate: ana already gave thumbs_down")
    other = run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_down", "--actor", "bo")
    assert other.stdout.startswith("applied:"), other.stdout
    changed = run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_up", "--actor", "ana")
    assert changed.stdout.startswith("applied:"), changed.stdout

    memory = build_memory(Settings(data_dir=data))
    try:
        totals = memory.scores.totals(REPO, "llm:naming")
    finally:
        memory.close()
    assert totals.n == 3  # ana's 👎, bo's 👎 and ana's 👍; not ana's repeated 👎

    undo = ("feedback", "--finding", exp_id, "--signal", "thumbs_down", "--actor", "bo", "--undo")
    taken_back = run(data, *undo)
    assert taken_back.returncode == 0, taken_back.stderr
    assert taken_back.stdout.startswith("retracted: llm:naming")
    assert run(data, *undo).stdout.startswith("duplicate:")
    never = run(data, "feedback", "--finding", exp_id, "--signal", "applied", "--undo")
    assert never.returncode == 1
    assert "gave no applied" in never.stderr
    memory = build_memory(Settings(data_dir=data))
    try:
        assert memory.scores.totals(REPO, "llm:naming").n == 2
    finally:
        memory.close()
    rebuilt = run(data, "memory", "rebuild")
    assert "scores unchanged" in rebuilt.stdout, rebuilt.stdout


def test_memory_move_carries_a_renamed_repo_and_feedback_still_finds_its_comments(
    seeded: tuple[Path, str],
) -> None:
    data, exp_id = seeded
    assert run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_up").returncode == 0
    review_state(None, data).watch(REPO, 7, 11, 1.0)  # its reactions are still polled
    moved = run(data, "memory", "move", REPO, "octo-org/app-v2")
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.startswith("moved octo-org/app -> octo-org/app-v2: 1 experiences, 1 ")
    assert " 1 LLM calls, 1 watched pull requests" in moved.stdout
    assert [w["repo"] for w in review_state(None, data).watched()] == ["octo-org/app-v2"]
    later = run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_up", "--actor", "bo")
    assert "in octo-org/app-v2 is now accepted" in later.stdout, later.stdout
    memory = build_memory(Settings(data_dir=data))
    try:
        assert memory.scores.totals("octo-org/app-v2", "llm:naming").n == 2
        assert memory.scores.patterns(REPO) == []
    finally:
        memory.close()
    bad = run(data, "memory", "move", REPO, "not a repo")
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert "owner/name" in bad.stderr


def test_memory_forget_erases_a_repo_only_when_told_yes(seeded: tuple[Path, str]) -> None:
    data, exp_id = seeded
    assert run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_down").returncode == 0
    unsure = run(data, "memory", "forget", REPO)
    assert unsure.returncode == 2 and "--yes" in unsure.stderr
    forgot = run(data, "memory", "forget", REPO, "--yes")
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.startswith(f"forgot {REPO}: 1 experiences, 1 patterns,")
    assert " 1 LLM calls" in forgot.stdout
    gone = run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_up")
    assert gone.returncode != 0 and "Traceback" not in gone.stderr
    memory = build_memory(Settings(data_dir=data))
    try:
        assert memory.scores.patterns("*") == []
        assert memory.trajectories.get("review-1") == []
    finally:
        memory.close()
    bad = run(data, "memory", "forget", "not-a-repo", "--yes")
    assert bad.returncode == 2 and "owner/name" in bad.stderr


def test_feedback_with_an_unknown_signal_or_finding_is_a_clear_error(
    seeded: tuple[Path, str],
) -> None:
    data, exp_id = seeded
    bad_signal = run(data, "feedback", "--finding", exp_id, "--signal", "love")
    assert bad_signal.returncode == 2
    assert "Traceback" not in bad_signal.stderr
    assert "thumbs_up" in bad_signal.stderr  # names the valid signals
    missing = run(data, "feedback", "--finding", "0" * 32, "--signal", "thumbs_up")
    assert missing.returncode == 1
    assert "no finding" in missing.stderr


def test_simulate_prints_json_with_every_policys_metrics(tmp_path: Path) -> None:
    png = tmp_path / "curves.png"
    done = subprocess.run(
        kaizen_cmd("simulate", "--prs", "120", "--seed", "3", "--json", "--png", str(png)),
        env=kaizen_env(data_dir=str(tmp_path / "data")),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result["policies"]) >= {"post_all", "eps_greedy", "eps_decay", "kaizen", "oracle"}
    for metrics in result["policies"].values():
        for key in (
            "precision",
            "recall",
            "security_recall",
            "regret",
            "precision_after_100",
            "prs_to_recover_after_drift",
        ):
            assert key in metrics
    assert result["policies"]["oracle"]["regret"] == 0
    assert png.read_bytes().startswith(b"\x89PNG")


def test_feedback_while_another_process_holds_embedded_storage_is_a_clear_error(
    seeded: tuple[Path, str],
) -> None:
    data, exp_id = seeded
    holder = build_memory(Settings(data_dir=data))
    holder.experiences.count()  # this process now holds the embedded store
    try:
        done = run(data, "feedback", "--finding", exp_id, "--signal", "thumbs_up")
    finally:
        holder.close()
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "KAIZEN_QDRANT_URL" in done.stderr
