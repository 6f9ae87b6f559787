"""A renamed or transferred repository keeps its activity, transitions, watched PRs and
archived signals: every store moves them to the new name, in SQLite and in Redis alike.
A forgotten repository leaves none of them behind, and nothing of any other repository
goes with it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from memory.activity import ActivityLog, Event, RedisActivityLog, SqliteActivityLog
from memory.archive import ArchiveStore, RedisSignalArchive, SignalArchive
from memory.trajectories import TrajectoryStore, Transition
from memory.types import Experience
from tests.helpers import sqlite_or_redis
from workers.repository_moves import moving_key
from workers.review.state import (
    RedisReviewState,
    ReviewState,
    SqliteReviewState,
)

OLD = "acme/shop"
NEW = "globex/shop"
OTHER = "acme/shop-api"  # starts like OLD: must not move with it

# Seeds a store with records under OLD, NEW and OTHER; returns (move, forget, snapshot).
Seeded = tuple[Callable[[str, str], int], Callable[[str], int], Callable[[], Any]]


def activity_log(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> ActivityLog:
    return sqlite_or_redis(
        kind, request, lambda: SqliteActivityLog(tmp_path / "activity.sqlite3"), RedisActivityLog
    )


def review_state(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> ReviewState:
    return sqlite_or_redis(
        kind, request, lambda: SqliteReviewState(tmp_path / "state.sqlite3"), RedisReviewState
    )


def archive_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> ArchiveStore:
    return sqlite_or_redis(
        kind, request, lambda: SignalArchive(tmp_path / "archive.sqlite3"), RedisSignalArchive
    )


@pytest.fixture(params=["sqlite", "redis"])
def activity(request: pytest.FixtureRequest, tmp_path: Path) -> ActivityLog:
    return activity_log(request.param, request, tmp_path)


@pytest.fixture(params=["sqlite", "redis"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> ReviewState:
    return review_state(request.param, request, tmp_path)


@pytest.fixture
def trajectories(tmp_path: Path) -> TrajectoryStore:
    return TrajectoryStore(tmp_path / "trajectories.sqlite3")


def event(eid: str, repo: str, at: float) -> Event:
    return Event(id=eid, kind="comment", repo=repo, at=at, pattern="ruff:B006", data={"pr": 7})


def transition(tid: str, repo: str, at: float) -> Transition:
    return Transition(
        trajectory_id=tid,
        step=0,
        messages=[{"role": "user", "content": "review"}],
        generation="ok",
        model="m",
        created_at=at,
        repo=repo,
        kind="review",
        metadata={"pr": "7"},
    )


# -- activity ----------------------------------------------------------------------------


def test_moved_events_carry_the_new_name_and_leave_the_old_one_empty(
    activity: ActivityLog,
) -> None:
    activity.add(event("e1", OLD, 1712345678.123456))
    activity.add(event("e2", OLD, 1712345679.5))
    activity.add(event("x1", OTHER, 5.0))

    assert activity.move_repo(OLD, NEW) == 2

    assert activity.events(repo=NEW) == [
        event("e1", NEW, 1712345678.123456),
        event("e2", NEW, 1712345679.5),
    ]
    assert activity.events(repo=OLD) == []
    assert activity.repos() == [OTHER, NEW]
    assert activity.events(repo=OTHER) == [event("x1", OTHER, 5.0)]


def test_moved_events_merge_in_time_order_with_those_already_under_the_new_name(
    activity: ActivityLog,
) -> None:
    activity.add(event("old-1", OLD, 1.0))
    activity.add(event("old-3", OLD, 3.0))
    activity.add(event("new-2", NEW, 2.0))

    assert activity.move_repo(OLD, NEW) == 2

    assert [(e.id, e.repo) for e in activity.events(repo=NEW)] == [
        ("old-1", NEW),
        ("new-2", NEW),
        ("old-3", NEW),
    ]


def test_an_event_id_already_under_the_new_name_keeps_that_copy(redis_url: str) -> None:
    # add() never writes one id twice, so this state is written raw; SQLite's primary key
    # cannot hold it at all.
    log = RedisActivityLog(redis_url)
    log.add(event("e1", NEW, 2.0))
    stale = event("e1", OLD, 1.0)
    payload = json.dumps(asdict(stale))
    log._redis.zadd(f"kaizen:activity:repo:{OLD}", {payload: stale.at})
    log._redis.sadd("kaizen:activity:repos", OLD)

    assert log.move_repo(OLD, NEW) == 0

    assert log.events(repo=NEW) == [event("e1", NEW, 2.0)]
    assert log.repos() == [NEW]


# -- trajectories ------------------------------------------------------------------------


def test_moved_transitions_carry_the_new_name_and_keep_their_trajectory_ids(
    trajectories: TrajectoryStore,
) -> None:
    trajectories.record(transition(f"review:{OLD}#7", OLD, 1.0))
    trajectories.record(transition("review:n", NEW, 2.0))
    trajectories.record(transition("review:x", OTHER, 3.0))

    assert trajectories.move_repo(OLD, NEW) == 1

    assert list(trajectories.iter_transitions(repo=NEW)) == [
        transition(f"review:{OLD}#7", NEW, 1.0),
        transition("review:n", NEW, 2.0),
    ]
    assert list(trajectories.iter_transitions(repo=OLD)) == []
    assert [t.repo for t in trajectories.iter_transitions(repo=OTHER)] == [OTHER]


# -- watched pull requests ---------------------------------------------------------------


def test_watched_prs_are_rekeyed_under_the_new_name(state: ReviewState) -> None:
    state.watch(OLD, 7, 11, 100.0)
    state.watch(OLD, 8, 11, 200.0)
    state.watch(OTHER, 7, 12, 50.0)

    assert state.move_repo(OLD, NEW) == 2

    assert state.watched() == [
        {"repo": NEW, "number": 8, "installation_id": 11, "at": 200.0},
        {"repo": NEW, "number": 7, "installation_id": 11, "at": 100.0},
        {"repo": OTHER, "number": 7, "installation_id": 12, "at": 50.0},
    ]
    state.unwatch(NEW, 8)  # the key moved too, not only the name inside
    state.unwatch(OLD, 7)  # nothing left under the old key
    assert [(w["repo"], w["number"]) for w in state.watched()] == [(NEW, 7), (OTHER, 7)]


def test_a_transfer_into_another_installation_polls_with_that_one(state: ReviewState) -> None:
    state.watch(OLD, 7, 11, 100.0)

    assert state.move_repo(OLD, NEW, installation_id=33) == 1

    assert state.watched() == [{"repo": NEW, "number": 7, "installation_id": 33, "at": 100.0}]


def test_a_pr_already_watched_under_the_new_name_is_kept(state: ReviewState) -> None:
    state.watch(OLD, 7, 11, 100.0)
    state.watch(OLD, 9, 11, 150.0)
    state.watch(NEW, 7, 22, 300.0)

    assert state.move_repo(OLD, NEW) == 1

    assert state.watched() == [
        {"repo": NEW, "number": 7, "installation_id": 22, "at": 300.0},
        {"repo": NEW, "number": 9, "installation_id": 11, "at": 150.0},
    ]


# -- every store -------------------------------------------------------------------------


def archived(sid: str, repo: str) -> Experience:
    signal = {"id": sid, "kind": "thumbs_down", "alpha": 0.0, "beta": 1.0, "at": 5.0}
    return Experience(
        kind="comment",
        repo=repo,
        pattern="ruff:B006",
        fingerprint=sid,
        text="t",
        extra={"signals": [signal]},
    )


@pytest.mark.parametrize("kind", ["archive-sqlite", "archive-redis"])
def test_archived_signals_are_relabelled_for_rebuilds(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    archive = archive_store(kind, request, tmp_path)
    archive.archive([archived("s1", OLD), archived("s2", OTHER), archived("s3", OLD)])

    assert archive.move_repo(OLD, NEW) == 2

    assert list(archive.iter_signals()) == [
        ("s1", NEW, "ruff:B006", 0.0, 1.0, 5.0),
        ("s2", OTHER, "ruff:B006", 0.0, 1.0, 5.0),
        ("s3", NEW, "ruff:B006", 0.0, 1.0, 5.0),
    ]


@pytest.fixture(
    params=[
        "activity-sqlite",
        "activity-redis",
        "trajectories",
        "state-sqlite",
        "state-redis",
        "archive-sqlite",
        "archive-redis",
    ]
)
def seeded(request: pytest.FixtureRequest, tmp_path: Path) -> Seeded:
    kind: str = request.param
    repos = (OLD, NEW, OTHER)
    if kind.startswith("archive"):
        archive = archive_store(kind, request, tmp_path)
        archive.archive([archived(f"s{i}", repo) for i, repo in enumerate(repos)])
        return archive.move_repo, archive.forget_repo, lambda: list(archive.iter_signals())
    if kind.startswith("activity"):
        log = activity_log(kind, request, tmp_path)
        for i, repo in enumerate(repos):
            log.add(event(f"e{i}", repo, float(i)))
        return log.move_repo, log.forget_repo, lambda: (log.repos(), log.events())
    if kind == "trajectories":
        store = TrajectoryStore(tmp_path / "trajectories.sqlite3")
        for i, repo in enumerate(repos):
            store.record(transition(f"t{i}", repo, float(i)))
        return store.move_repo, store.forget_repo, lambda: list(store.iter_transitions())
    st = review_state(kind, request, tmp_path)
    for i, repo in enumerate(repos):
        st.watch(repo, i, 1, float(i))
    return st.move_repo, st.forget_repo, st.watched


def test_moving_again_moves_nothing_and_changes_nothing(seeded: Seeded) -> None:
    move, _, snapshot = seeded
    assert move(OLD, NEW) == 1
    after_first = snapshot()

    assert move(OLD, NEW) == 0
    assert snapshot() == after_first


def test_moving_to_the_same_name_changes_nothing(seeded: Seeded) -> None:
    move, _, snapshot = seeded
    before = snapshot()

    assert move(OLD, OLD) == 0
    assert snapshot() == before


# -- forgetting --------------------------------------------------------------------------


def test_forgetting_takes_the_repos_records_and_nothing_else(seeded: Seeded) -> None:
    _, forget, snapshot = seeded
    before = snapshot()
    assert forget(OLD) == 1
    after = snapshot()
    assert OLD not in json.dumps(after, default=str).replace(OTHER, "")
    assert json.dumps(after, default=str) != json.dumps(before, default=str)

    assert forget(OLD) == 0  # forgetting again finds nothing
    assert forget("nobody/here") == 0
    assert snapshot() == after


def test_forgotten_events_free_their_ids(activity: ActivityLog) -> None:
    activity.add(event("e1", OLD, 1.0))
    activity.add(event("x1", OTHER, 2.0))

    assert activity.forget_repo(OLD) == 1

    assert activity.repos() == [OTHER]
    activity.add(event("e1", OLD, 3.0))  # a new event under a reused id is not swallowed
    assert activity.events(repo=OLD) == [event("e1", OLD, 3.0)]


def test_forgotten_experiences_take_their_llm_calls_under_any_name(
    trajectories: TrajectoryStore,
) -> None:
    before_rename = replace(
        transition("review:old-name#7", "acme/old-name", 1.0), experience_id="x"
    )
    trajectories.record(before_rename)
    trajectories.record(transition("review:k", OLD, 2.0))
    trajectories.record(transition("review:o", OTHER, 3.0))

    assert trajectories.forget_repo(OLD, ["x"]) == 2

    assert [t.trajectory_id for t in trajectories.iter_transitions()] == ["review:o"]


def test_forgetting_drops_every_key_naming_the_repo(state: ReviewState) -> None:
    for repo in (OLD, OTHER):
        state.watch(repo, 7, 11, 100.0)
        state.remember(f"fix-issue-text:{repo}#3", "the issue's words", 3600)
        state.remember(f"reactions:{repo}:99", "1/0", 3600)
        state.set_latest(f"{repo}#7", "abc")
        state.add_tokens(repo, 500)
        assert state.claim(f"fix:{repo}#3", "worker-1", 3600)

    assert state.forget_repo(OLD) == 6  # 1 watched PR and 5 keys

    assert state.recall(f"fix-issue-text:{OLD}#3") is None
    assert state.recall(f"reactions:{OLD}:99") is None
    assert state.latest(f"{OLD}#7") is None
    assert state.add_tokens(OLD, 0) == 0
    assert state.claim(f"fix:{OLD}#3", "worker-2", 3600)
    assert state.recall(f"fix-issue-text:{OTHER}#3") == "the issue's words"
    assert state.latest(f"{OTHER}#7") == "abc" and state.add_tokens(OTHER, 0) == 500
    assert [w["repo"] for w in state.watched()] == [OTHER]


def test_the_moving_mark_is_neither_moved_nor_forgotten_with_the_repo(
    state: ReviewState,
) -> None:
    state.remember(moving_key(OLD), NEW, 3600)
    state.move_repo(OLD, NEW)
    state.forget_repo(OLD)
    assert state.recall(moving_key(OLD)) == NEW  # only the move itself drops it
    assert state.recall(moving_key(NEW)) is None
    state.drop(moving_key(OLD))
    state.drop(moving_key(OLD))  # dropping what is gone is fine
    assert state.recall(moving_key(OLD)) is None


def test_a_failed_fixs_memo_follows_the_repo_and_the_rest_expires(state: ReviewState) -> None:
    state.remember(f"fix-issue-text:{OLD}#3", "the issue's words", 3600)
    state.remember(f"fix-issue-text:{NEW}#4", "already here", 3600)
    state.remember(f"fix-issue-text:{OTHER}#3", "another repo's", 3600)
    state.set_latest(f"{OLD}#7", "abc")

    state.move_repo(OLD, NEW)

    assert state.recall(f"fix-issue-text:{NEW}#3") == "the issue's words"
    assert state.recall(f"fix-issue-text:{OLD}#3") is None
    assert state.recall(f"fix-issue-text:{NEW}#4") == "already here"
    assert state.recall(f"fix-issue-text:{OTHER}#3") == "another repo's"
    assert state.latest(f"{OLD}#7") == "abc"  # short-lived: left to expire
