from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from memory.trajectories import (
    MAX_TEXT_CHARS,
    Recorder,
    TrajectoryStore,
    Transition,
)


def make(trajectory_id: str = "t1", step: int = 0, **overrides: Any) -> Transition:
    values: dict[str, Any] = {
        "trajectory_id": trajectory_id,
        "step": step,
        "messages": [
            {"role": "system", "content": "You review code."},
            {"role": "user", "content": f"Review step {step}"},
        ],
        "generation": f"answer {step}",
        "model": "gpt-test",
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "latency_s": 0.25,
        "created_at": 1000.0 + step,
        "repo": "acme/app",
        "kind": "review",
        "pattern": "sql-injection",
        "metadata": {"pr": 7},
    }
    values.update(overrides)
    return Transition(**values)


@pytest.fixture
def store(tmp_path: Path) -> TrajectoryStore:
    return TrajectoryStore(tmp_path / "data" / "trajectories.sqlite3")


class FakeClock:
    """Both the wall clock and the timer: each read advances by ``tick``."""

    def __init__(self, start: float = 5000.0, tick: float = 1.5) -> None:
        self.now = start
        self.tick = tick

    def __call__(self) -> float:
        value = self.now
        self.now += self.tick
        return value


def test_record_then_get_round_trips_every_field_in_step_order(store: TrajectoryStore) -> None:
    second = make(step=1, reward=0.5, experience_id="exp-1", metadata={"nested": {"a": [1, 2]}})
    first = make(step=0)
    store.record(second)
    store.record(first)
    assert store.get("t1") == [first, second]
    assert store.get("unknown") == []


def test_re_recording_the_same_step_replaces_it(store: TrajectoryStore) -> None:
    store.record(make(generation="first try"))
    store.record(make(generation="retried", reward=1.0))
    [only] = store.get("t1")
    assert only.generation == "retried"
    assert only.reward == 1.0
    assert store.stats()["transitions"] == 1


def test_set_step_reward_updates_one_step(store: TrajectoryStore) -> None:
    store.record(make(step=0))
    store.record(make(step=1))
    assert store.set_step_reward("t1", 1, 0.8) == 1
    assert store.set_step_reward("t1", 9, 0.8) == 0
    assert [t.reward for t in store.get("t1")] == [None, 0.8]


def test_attach_final_reward_covers_every_step_of_the_trajectory(store: TrajectoryStore) -> None:
    for step in range(3):
        store.record(make(step=step))
    store.record(make("other"))
    assert store.attach_final_reward("t1", 1.0) == 3
    assert [t.final_reward for t in store.get("t1")] == [1.0, 1.0, 1.0]
    assert store.get("other")[0].final_reward is None


def test_attach_final_reward_for_experience_covers_only_linked_steps(
    store: TrajectoryStore,
) -> None:
    store.record(make(step=0, experience_id="exp-a"))
    store.record(make(step=1, experience_id="exp-b"))
    store.record(make("t2", step=0, experience_id="exp-a"))
    assert store.attach_final_reward_for_experience("exp-a", -1.0) == 2
    assert store.attach_final_reward_for_experience("exp-none", 1.0) == 0
    assert [t.final_reward for t in store.get("t1")] == [-1.0, None]
    assert store.get("t2")[0].final_reward == -1.0


def test_non_finite_rewards_are_refused(store: TrajectoryStore) -> None:
    store.record(make())
    with pytest.raises(ValueError, match="finite"):
        store.attach_final_reward("t1", float("nan"))


def test_iter_transitions_filters_combine(store: TrajectoryStore) -> None:
    store.record(make("a", created_at=100.0, repo="acme/app", kind="review"))
    store.record(make("b", created_at=200.0, repo="acme/app", kind="fix"))
    store.record(make("c", created_at=300.0, repo="acme/lib", kind="review"))
    store.record(make("d", created_at=400.0, repo="acme/app", kind="review"))
    store.attach_final_reward("d", 1.0)

    def ids(**filters: Any) -> list[str]:
        return [t.trajectory_id for t in store.iter_transitions(**filters)]

    assert ids() == ["a", "b", "c", "d"]
    assert ids(repo="acme/app") == ["a", "b", "d"]
    assert ids(kind="review") == ["a", "c", "d"]
    assert ids(since=200.0) == ["b", "c", "d"]
    assert ids(with_final_reward=True) == ["d"]
    assert ids(with_final_reward=False) == ["a", "b", "c"]
    assert ids(repo="acme/app", kind="review", since=150.0) == ["d"]


def test_stats_counts_transitions_tokens_and_rewards(store: TrajectoryStore) -> None:
    store.record(make("a", step=0, prompt_tokens=100, completion_tokens=10))
    store.record(make("a", step=1, prompt_tokens=200, completion_tokens=20, reward=0.5))
    store.record(make("b", step=0, prompt_tokens=1, completion_tokens=2, kind="fix"))
    store.attach_final_reward("a", 1.0)
    assert store.stats() == {
        "transitions": 3,
        "trajectories": 2,
        "prompt_tokens": 301,
        "completion_tokens": 32,
        "total_tokens": 333,
        "with_final_reward": 2,
        "without_final_reward": 1,
        "with_step_reward": 1,
        "trajectories_with_final_reward": 1,
        "trajectories_without_final_reward": 1,
        "by_kind": {"fix": 1, "review": 2},
    }


def test_huge_texts_are_truncated_with_a_marker_not_refused(store: TrajectoryStore) -> None:
    huge = "x" * (MAX_TEXT_CHARS + 50_000)
    store.record(
        make(
            generation=huge,
            messages=[{"role": "user", "content": huge}],
            metadata={"blob": "y" * 500_000, "pr": 7},
        )
    )
    [t] = store.get("t1")
    assert t.generation.startswith("x" * 1000)
    assert len(t.generation) < MAX_TEXT_CHARS + 200
    assert t.generation.endswith(f"kept {MAX_TEXT_CHARS} of {len(huge)} characters]")
    assert len(t.messages[0]["content"]) < MAX_TEXT_CHARS + 200
    assert t.metadata["truncated"] == ["messages[0].content", "generation"]
    assert t.metadata["pr"] == 7
    assert t.metadata["blob"].startswith("[dropped by Kaizen")


def test_odd_values_are_stored_as_json_instead_of_raising(store: TrajectoryStore) -> None:
    store.record(
        make(generation="bad \ud800 surrogate", metadata={"x": float("nan"), "p": Path("a")})
    )
    [t] = store.get("t1")
    assert t.generation == "bad \ufffd surrogate"
    assert t.metadata == {"x": None, "p": "a"}


def test_recorder_records_a_successful_call_with_latency(store: TrajectoryStore) -> None:
    recorder = Recorder(store, clock=FakeClock(start=5000.0), timer=FakeClock(start=0.0, tick=2.0))
    messages = [{"role": "user", "content": "review this"}]
    with recorder.step("run-1", messages, "gpt-test", repo="acme/app", kind="review") as s:
        s.experience_id = "exp-1"
        s.finish("looks fine", prompt_tokens=12, completion_tokens=3, reward=0.7)
    assert s.step == 0
    [t] = store.get("run-1")
    assert t == Transition(
        trajectory_id="run-1",
        step=0,
        messages=messages,
        generation="looks fine",
        model="gpt-test",
        prompt_tokens=12,
        completion_tokens=3,
        latency_s=2.0,
        reward=0.7,
        created_at=5000.0,
        repo="acme/app",
        kind="review",
        experience_id="exp-1",
    )


def test_recorder_records_a_failed_call_and_re_raises(store: TrajectoryStore) -> None:
    recorder = Recorder(store, timer=FakeClock(start=0.0, tick=3.0))
    with (
        pytest.raises(TimeoutError),
        recorder.step("run-1", [{"role": "user", "content": "hi"}], "gpt-test", kind="fix"),
    ):
        raise TimeoutError("model too slow")
    [t] = store.get("run-1")
    assert t.generation == ""
    assert t.metadata == {"error": "TimeoutError: model too slow"}
    assert t.latency_s == 3.0
    assert t.kind == "fix"


def test_recorder_numbers_steps_of_a_trajectory_in_order(store: TrajectoryStore) -> None:
    recorder = Recorder(store)
    for i in range(3):
        with recorder.step("run-1", [{"role": "user", "content": str(i)}], "m") as s:
            s.finish(f"answer {i}", 1, 1)
    assert [(t.step, t.generation) for t in store.get("run-1")] == [
        (0, "answer 0"),
        (1, "answer 1"),
        (2, "answer 2"),
    ]


def test_recorder_never_breaks_the_caller_when_storage_fails(
    store: TrajectoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    store.path.unlink()
    store.path.mkdir()  # a directory where the database should be: every write fails
    recorder = Recorder(store)
    with recorder.step("run-1", [], "m") as s:
        s.finish("fine", 1, 1)
    assert s.step is None
    assert "could not record transition" in caplog.text


def _append_many(path: str, worker: int, count: int) -> None:
    recorder = Recorder(TrajectoryStore(path))
    for i in range(count):
        with recorder.step("shared", [{"role": "user", "content": f"{worker}/{i}"}], "m") as s:
            s.finish(f"{worker}/{i}", 1, 2)


@pytest.mark.slow
def test_four_processes_record_concurrently_without_loss(tmp_path: Path) -> None:
    path = str(tmp_path / "trajectories.sqlite3")
    store = TrajectoryStore(path)
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_append_many, args=(path, w, 100)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(timeout=120)
    assert [p.exitcode for p in workers] == [0, 0, 0, 0]
    stats = store.stats()
    assert stats["transitions"] == 400
    assert stats["completion_tokens"] == 800
    steps = store.get("shared")
    assert [t.step for t in steps] == list(range(400))
    assert sorted(t.generation for t in steps) == sorted(
        f"{w}/{i}" for w in range(4) for i in range(100)
    )
