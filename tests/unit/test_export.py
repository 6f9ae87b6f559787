from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memory.export import FORMATS, export, jaccard, last_user_text
from memory.trajectories import TrajectoryStore, Transition

SYSTEM = {"role": "system", "content": "You review pull requests."}


@pytest.fixture
def store(tmp_path: Path) -> TrajectoryStore:
    return TrajectoryStore(tmp_path / "trajectories.sqlite3")


def add(
    store: TrajectoryStore,
    trajectory_id: str,
    prompt: str,
    generation: str,
    *,
    reward: float | None = None,
    final_reward: float | None = None,
    kind: str = "review",
    pattern: str | None = "sql-injection",
    created_at: float = 1000.0,
    step: int = 0,
) -> Transition:
    t = Transition(
        trajectory_id=trajectory_id,
        step=step,
        messages=[SYSTEM, {"role": "user", "content": prompt}],
        generation=generation,
        model="gpt-test",
        prompt_tokens=30,
        completion_tokens=7,
        latency_s=1.5,
        reward=reward,
        final_reward=final_reward,
        created_at=created_at,
        repo="acme/app",
        kind=kind,
        pattern=pattern,
        experience_id=f"exp-{trajectory_id}",
        metadata={"pr": 12},
    )
    store.record(t)
    return t


def run(store: TrajectoryStore, fmt: str, **kwargs: Any) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    written = export(store, fmt, out, **kwargs)
    text = out.getvalue()
    assert text == "" or text.endswith("\n")
    lines = [json.loads(line) for line in text.splitlines()]
    assert written == len(lines)
    return written, lines


QUERY = "query built from user input in db.execute of users table"
QUERY_2 = "query built from user input in db.execute of orders table"
UNRELATED = "spelling mistake in README heading about installation"


def test_agent_lightning_line_has_triplet_fields_and_both_rewards(store: TrajectoryStore) -> None:
    add(store, "t1", QUERY, "Use a parameterised query.", reward=0.2, final_reward=1.0)
    add(store, "t2", QUERY, "ok", reward=0.4, created_at=2000.0)
    written, lines = run(store, "agent-lightning")
    assert written == 2
    assert lines[0] == {
        "trajectory_id": "t1",
        "step": 0,
        "prompt": [SYSTEM, {"role": "user", "content": QUERY}],
        "response": "Use a parameterised query.",
        "reward": 1.0,
        "step_reward": 0.2,
        "final_reward": 1.0,
        "model": "gpt-test",
        "usage": {"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37},
        "metadata": {
            "pr": 12,
            "repo": "acme/app",
            "kind": "review",
            "pattern": "sql-injection",
            "experience_id": "exp-t1",
            "latency_s": 1.5,
            "created_at": 1000.0,
        },
    }
    # Without an outcome yet, the step reward is the reward.
    assert (lines[1]["reward"], lines[1]["step_reward"], lines[1]["final_reward"]) == (
        0.4,
        0.4,
        None,
    )


def test_openai_sft_line_is_prompt_plus_assistant_answer(store: TrajectoryStore) -> None:
    add(store, "t1", QUERY, "Use a parameterised query.", final_reward=1.0)
    written, lines = run(store, "openai-sft")
    assert written == 1
    assert lines == [
        {
            "messages": [
                SYSTEM,
                {"role": "user", "content": QUERY},
                {"role": "assistant", "content": "Use a parameterised query."},
            ]
        }
    ]


def test_openai_sft_keeps_only_effective_rewards_at_or_above_min(store: TrajectoryStore) -> None:
    add(store, "final-good", QUERY, "a", reward=0.0, final_reward=1.0)  # outcome wins
    add(store, "final-bad", QUERY, "b", reward=1.0, final_reward=0.0)
    add(store, "step-only", QUERY, "c", reward=0.5)  # boundary: kept
    add(store, "unscored", QUERY, "d")
    add(store, "errored", QUERY, "", final_reward=1.0)  # the call raised: nothing to imitate
    _, lines = run(store, "openai-sft")
    assert [line["messages"][-1]["content"] for line in lines] == ["a", "c"]
    _, strict = run(store, "openai-sft", min_reward=0.9)
    assert [line["messages"][-1]["content"] for line in strict] == ["a"]


def test_dpo_line_has_openai_preference_shape(store: TrajectoryStore) -> None:
    add(store, "good", QUERY, "Use a parameterised query.", final_reward=1.0)
    add(store, "bad", QUERY_2, "Looks good to me.", final_reward=0.0)
    written, lines = run(store, "dpo")
    assert written == 1
    assert lines == [
        {
            "input": {"messages": [SYSTEM, {"role": "user", "content": QUERY}]},
            "preferred_output": [{"role": "assistant", "content": "Use a parameterised query."}],
            "non_preferred_output": [{"role": "assistant", "content": "Looks good to me."}],
        }
    ]


def test_dpo_pairs_only_similar_prompts(store: TrajectoryStore) -> None:
    assert jaccard(QUERY, QUERY_2) >= 0.5
    assert jaccard(QUERY, UNRELATED) < 0.5
    add(store, "good", QUERY, "fix it", final_reward=1.0)
    add(store, "bad-unrelated", UNRELATED, "nit", final_reward=0.0)
    assert run(store, "dpo") == (0, [])
    add(store, "bad-similar", QUERY_2, "meh", final_reward=0.0, created_at=2000.0)
    _, lines = run(store, "dpo")
    assert [line["non_preferred_output"][0]["content"] for line in lines] == ["meh"]


def test_dpo_never_pairs_across_patterns_or_kinds(store: TrajectoryStore) -> None:
    add(store, "good", QUERY, "fix it", final_reward=1.0, pattern="sql-injection")
    add(store, "bad-pattern", QUERY, "meh", final_reward=0.0, pattern="n-plus-one")
    add(store, "bad-kind", QUERY, "meh", final_reward=0.0, kind="fix")
    add(store, "bad-none", QUERY, "meh", final_reward=0.0, pattern=None)
    assert run(store, "dpo") == (0, [])


def test_dpo_needs_a_known_outcome_to_call_an_answer_rejected(store: TrajectoryStore) -> None:
    add(store, "good", QUERY, "fix it", final_reward=1.0)
    add(store, "low-step-only", QUERY, "meh", reward=0.0)
    assert run(store, "dpo") == (0, [])


def test_dpo_uses_each_generation_once_in_deterministic_order(store: TrajectoryStore) -> None:
    # Two accepted, three rejected, all similar: two pairs, the best accepted first,
    # each taking the most similar unused rejection.
    add(store, "good-best", QUERY, "G1", final_reward=1.0, created_at=1.0)
    add(store, "good-ok", QUERY_2, "G2", final_reward=0.6, created_at=2.0)
    add(store, "bad-1", QUERY, "B1", final_reward=0.0, created_at=3.0)
    add(store, "bad-2", QUERY_2, "B2", final_reward=0.0, created_at=4.0)
    add(store, "bad-3", QUERY_2, "B3", final_reward=0.1, created_at=5.0)
    first = run(store, "dpo")
    assert first == run(store, "dpo")
    pairs = [
        (line["preferred_output"][0]["content"], line["non_preferred_output"][0]["content"])
        for line in first[1]
    ]
    assert pairs == [("G1", "B1"), ("G2", "B2")]


def test_dpo_uses_a_given_similarity_on_the_last_user_messages(store: TrajectoryStore) -> None:
    add(store, "good", "alpha", "G", final_reward=1.0)
    add(store, "bad", "omega", "B", final_reward=0.0)
    seen: list[tuple[str, str]] = []

    def always_similar(a: str, b: str) -> float:
        seen.append((a, b))
        return 0.9

    assert run(store, "dpo", similarity=always_similar)[0] == 1
    assert seen == [("alpha", "omega")]


def test_last_user_text_reads_the_last_user_message_and_text_parts() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "old"},
        {"role": "assistant", "content": "reply"},
        {"role": "user", "content": [{"type": "text", "text": "new"}, {"type": "image_url"}]},
        {"role": "assistant", "content": "tool call"},
    ]
    assert last_user_text(messages) == "new"


def test_unknown_format_error_lists_the_formats(store: TrajectoryStore) -> None:
    with pytest.raises(ValueError, match="unknown export format 'csv'") as info:
        export(store, "csv", io.StringIO())
    for fmt in FORMATS:
        assert fmt in str(info.value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_store_writes_nothing(store: TrajectoryStore, fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"{fmt}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        assert export(store, fmt, out) == 0
    assert path.read_text(encoding="utf-8") == ""
