"""Memory as one object: signals reach experiences and scores once, survive outages, rebuild."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.activity import SqliteActivityLog
from memory.archive import SignalArchive
from memory.embedding import CachedEmbedder, Embedder, LocalEmbedder
from memory.experiences import ExperienceStore, open_store
from memory.feedback import UnknownSignal
from memory.pending import PendingSignals
from memory.scores import SqliteScoreStore
from memory.service import Memory, UnknownExperience, default_paths
from memory.trajectories import TrajectoryStore, Transition
from memory.types import Experience, Kind, Signal
from tests.helpers import assert_same_recent_sums, free_port

REPO = "octo-org/app"


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return CachedEmbedder(LocalEmbedder(), tmp_path_factory.mktemp("emb") / "cache.sqlite3")


def build(data: Path, embedder: Embedder, *, url: str | None = None) -> Memory:
    paths = default_paths(data)
    return Memory(
        scores=SqliteScoreStore(paths["scores"], half_life_days=60),
        trajectories=TrajectoryStore(paths["trajectories"]),
        pending=PendingSignals(paths["pending"]),
        archive=SignalArchive(paths["archive"]),
        open_experiences=lambda: open_store(
            url=url, api_key=None, path=data / "qdrant", embedder=embedder, timeout=2
        ),
        activity=SqliteActivityLog(paths["activity"]),
    )


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Iterator[Memory]:
    mem = build(tmp_path, embedder)
    yield mem
    mem.close()


def comment(
    fp: str,
    pattern: str = "ruff:B006",
    text: str = "mutable default",
    *,
    repo: str = REPO,
    installation_id: int | None = None,
) -> Experience:
    return Experience(
        kind=Kind.COMMENT,
        repo=repo,
        pattern=pattern,
        fingerprint=fp,
        text=text,
        installation_id=installation_id,
    )


def signal(exp_id: str, sid: str, kind: str = "thumbs_up", pattern: str = "ruff:B006") -> Signal:
    return Signal(
        id=sid, kind=kind, experience_id=exp_id, repo=REPO, pattern=pattern, at=time.time()
    )


def test_same_signal_five_times_changes_the_score_once(memory: Memory) -> None:
    exp_id = memory.record_experience(comment("a"))
    results = [memory.apply_signal(signal(exp_id, "reaction:1")).status for _ in range(5)]
    assert results == ["applied"] + ["duplicate"] * 4
    alpha, beta = memory.scores.counts(REPO, "ruff:B006", time.time())
    assert alpha == pytest.approx(1.0, abs=1e-6)
    assert beta == 0.0
    stored = memory.experiences.get(exp_id)
    assert stored is not None
    assert stored.outcome == "accepted"
    assert len(stored.extra["signals"]) == 1


def test_a_signal_taken_back_stops_counting_once_and_rebuild_agrees(memory: Memory) -> None:
    exp_id = memory.record_experience(comment("t"))
    memory.apply_signal(signal(exp_id, "reaction:1", kind="thumbs_down"))
    memory.apply_signal(signal(exp_id, "reaction:2", kind="thumbs_up"))
    assert memory.experiences.get(exp_id).outcome == "accepted"  # type: ignore[union-attr]
    results = [memory.retract_signal("reaction:2", exp_id) for _ in range(3)]
    assert [r.status for r in results] == ["applied", "duplicate", "duplicate"]
    assert results[0].outcome == "rejected"  # what the remaining 👎 says
    alpha, beta = memory.scores.counts(REPO, "ruff:B006", time.time())
    assert alpha == pytest.approx(0.0, abs=1e-9)
    assert beta == pytest.approx(1.0, abs=1e-6)
    stored = memory.experiences.get(exp_id)
    assert stored is not None and stored.outcome == "rejected"
    assert memory.retract_signal("reaction:404", exp_id).status == "unknown"
    live = memory.scores.snapshot()
    report = memory.rebuild()
    assert report.unchanged, report.differences
    assert memory.scores.snapshot().keys() == live.keys()
    memory.retract_signal("reaction:1", exp_id)
    assert memory.experiences.get(exp_id).outcome == "pending"  # type: ignore[union-attr]
    assert memory.rebuild().unchanged
    assert memory.scores.counts(REPO, "ruff:B006", time.time()) == (0.0, 0.0)


def test_unknown_finding_and_unknown_signal_kind_are_clear_errors(memory: Memory) -> None:
    with pytest.raises(UnknownExperience, match="no finding"):
        memory.apply_signal(signal(comment("nope").id, "s1"))
    exp_id = memory.record_experience(comment("b"))
    with pytest.raises(UnknownSignal):
        memory.apply_signal(signal(exp_id, "s2", kind="heart_eyes"))
    assert memory.scores.applied_count() == 0


def test_qdrant_outage_parks_the_signal_and_a_later_sweep_applies_it_once(
    tmp_path: Path, embedder: Embedder
) -> None:
    seeded = build(tmp_path, embedder)
    exp_id = seeded.record_experience(comment("c"))
    seeded.close()
    # The experience store is a Qdrant server that is down (nothing listens on the port).
    down = build(tmp_path, embedder, url=f"http://127.0.0.1:{free_port()}")
    assert down.apply_signal(signal(exp_id, "reaction:9")).status == "pending"
    assert down.apply_signal(signal(exp_id, "reaction:9")).status == "pending"
    assert down.pending.count() == 1
    assert down.scores.applied_count() == 0
    down.close()
    back = build(tmp_path, embedder)
    assert back.retry_pending() == 1
    assert back.pending.count() == 0
    assert back.scores.applied_count() == 1
    assert back.retry_pending() == 0
    back.close()


def test_a_reaction_taken_back_during_an_outage_is_never_applied(
    tmp_path: Path, embedder: Embedder
) -> None:
    from workers.review.feedback import on_reactions
    from workers.review.render import finding_marker

    seeded = build(tmp_path, embedder)
    exp_id = seeded.record_experience(comment("o"))
    seeded.close()
    down = build(tmp_path, embedder, url=f"http://127.0.0.1:{free_port()}")
    body = "mutable default " + finding_marker(exp_id, "f" * 32)
    assert down.apply_signal(signal(exp_id, "reaction:5")).status == "pending"  # parked
    with pytest.raises(Exception):  # noqa: B017 - the experience store is down: retried later
        on_reactions(down, {"body": body}, [], bot_login="kaizen[bot]")  # ana took it back
    assert down.pending.count() == 0
    down.close()
    back = build(tmp_path, embedder)
    assert back.retry_pending() == 0
    assert back.scores.applied_count() == 0
    back.close()


def test_rebuild_from_experiences_equals_the_live_scores(memory: Memory) -> None:
    kinds = ["thumbs_up", "thumbs_down", "ignored", "applied", "dismissed", "addressed"]
    for i in range(30):
        pattern = f"ruff:E{i % 4}"
        exp_id = memory.record_experience(comment(f"r{i}", pattern=pattern, text=f"finding {i}"))
        memory.apply_signal(signal(exp_id, f"sig:{i}", kind=kinds[i % len(kinds)], pattern=pattern))
    live = memory.scores.snapshot()
    live_recent = memory.scores.recent_snapshot()
    report = memory.rebuild()
    assert report.unchanged, report.differences
    assert report.signals == 30
    assert report.max_difference < 1e-9
    rebuilt = memory.scores.snapshot()
    assert rebuilt.keys() == live.keys()
    for key, (alpha, beta) in live.items():
        assert rebuilt[key] == (pytest.approx(alpha, rel=1e-12), pytest.approx(beta, rel=1e-12))
    # the recent sums that change detection reads are rebuilt to the same numbers too
    assert_same_recent_sums(memory.scores.recent_snapshot(), live_recent)


def test_rebuild_repairs_scores_that_drifted(memory: Memory) -> None:
    exp_id = memory.record_experience(comment("d"))
    memory.apply_signal(signal(exp_id, "sig:d"))
    memory.scores.replace_all({}, [])  # e.g. a lost or wiped score store
    report = memory.rebuild()
    assert not report.unchanged
    alpha, _ = memory.scores.counts(REPO, "ruff:B006", time.time())
    assert alpha == pytest.approx(1.0, abs=1e-6)


def test_outcome_attaches_the_final_reward_to_the_llm_calls(memory: Memory) -> None:
    exp_id = memory.record_experience(comment("e"))
    memory.trajectories.record(
        Transition(
            trajectory_id="t1",
            step=0,
            messages=[{"role": "user", "content": "review this"}],
            generation="use None as the default",
            model="fake-gpt",
            repo=REPO,
            kind="review",
            experience_id=exp_id,
        )
    )
    memory.apply_signal(signal(exp_id, "sig:e", kind="thumbs_down"))
    [step] = memory.trajectories.get("t1")
    assert step.final_reward == -1.0
    memory.retract_signal("sig:e", exp_id)  # taken back: no verdict to train on
    [step] = memory.trajectories.get("t1")
    assert step.final_reward is None


def test_stats_report_every_part(memory: Memory) -> None:
    exp_id = memory.record_experience(comment("f"))
    memory.apply_signal(signal(exp_id, "sig:f"))
    stats = memory.stats()
    assert stats["patterns"] == 1
    assert stats["pending_signals"] == 0
    assert "error" not in stats["experiences"]


def test_experience_store_is_opened_only_when_needed(tmp_path: Path, embedder: Embedder) -> None:
    opened: list[ExperienceStore] = []

    def opener() -> ExperienceStore:
        store = open_store(url=None, api_key=None, path=tmp_path / "q", embedder=embedder)
        opened.append(store)
        return store

    paths = default_paths(tmp_path)
    mem = Memory(
        scores=SqliteScoreStore(paths["scores"], half_life_days=60),
        trajectories=TrajectoryStore(paths["trajectories"]),
        pending=PendingSignals(paths["pending"]),
        archive=SignalArchive(paths["archive"]),
        open_experiences=opener,
    )
    mem.scores.patterns("*")
    assert opened == []
    mem.record_experience(comment("g"))
    assert len(opened) == 1
    mem.close()


def test_rebuild_still_adds_up_after_retention_deleted_old_experiences(
    tmp_path: Path, embedder: Embedder
) -> None:
    paths = default_paths(tmp_path)
    mem = Memory(
        scores=SqliteScoreStore(paths["scores"], half_life_days=60),
        trajectories=TrajectoryStore(paths["trajectories"]),
        pending=PendingSignals(paths["pending"]),
        archive=SignalArchive(paths["archive"]),
        open_experiences=lambda: open_store(
            url=None, api_key=None, path=tmp_path / "q", embedder=embedder, retention_per_repo=3
        ),
    )
    for i in range(6):
        exp_id = mem.record_experience(comment(f"old{i}", text=f"finding number {i}"))
        mem.apply_signal(signal(exp_id, f"sig:old{i}", kind="thumbs_down"))
    mem.record_experience(comment("newest", text="the newest finding"))
    assert mem.experiences.count(REPO) == 3
    assert mem.archive.count() >= 3
    report = mem.rebuild()
    assert report.unchanged, report.differences
    assert report.signals == 6
    mem.close()


def test_the_periodic_task_applies_parked_signals(tmp_path: Path, embedder: Embedder) -> None:
    from bot.settings import Settings
    from workers.celery_app import make_celery

    seeded = build(tmp_path, embedder)
    exp_id = seeded.record_experience(comment("p"))
    seeded.close()
    down = build(tmp_path, embedder, url=f"http://127.0.0.1:{free_port()}")
    assert down.apply_signal(signal(exp_id, "reaction:p")).status == "pending"
    down.close()

    app = make_celery(Settings(data_dir=tmp_path, qdrant_path=tmp_path / "qdrant"))
    import workers.tasks  # noqa: F401 - registers the tasks with the app

    task = app.tasks["kaizen.retry_pending_signals"]
    assert task.apply().get() == {"status": "retried", "applied": 1, "waiting": 1}
    assert task.apply().get() == {"status": "idle"}
    from workers.context import close_contexts

    close_contexts()


def test_a_transferred_repo_keeps_what_it_learned_and_rebuild_agrees(memory: Memory) -> None:
    new, now = "new-org/app", time.time()
    ids = [memory.record_experience(comment(f"m{i}", text=f"mutable default {i}")) for i in (0, 1)]
    liked = memory.record_experience(comment("m2", pattern="ruff:E722", text="bare except"))
    for i, exp_id in enumerate(ids):
        memory.apply_signal(signal(exp_id, f"sig:m{i}", kind="thumbs_down"))
    memory.apply_signal(signal(liked, "sig:m2", kind="thumbs_up", pattern="ruff:E722"))
    before = memory.scores.counts(REPO, "ruff:B006", now)

    report = memory.move_repo(REPO, new)

    assert (report.experiences, report.patterns, report.events) == (3, 2, 6)
    moved = memory.experiences.get(ids[0])
    assert moved is not None
    assert (moved.repo, moved.org, moved.id) == (new, "new-org", ids[0])
    for scope in (new, "new-org"):
        assert memory.scores.counts(scope, "ruff:B006", now) == pytest.approx(before)
    for scope in (REPO, "octo-org"):
        assert memory.scores.counts(scope, "ruff:B006", now) == (0.0, 0.0)
    assert memory.scores.patterns("octo-org") == []
    vote = memory.experiences.neighbour_vote("mutable default 0", repo=new)
    assert vote.rejects == pytest.approx(2.0, rel=1e-3)
    assert memory.experiences.neighbour_vote("mutable default 0", repo=REPO).neighbours == 0
    assert memory.activity is not None
    assert memory.activity.repos() == [new]
    # A signal worded with the old name (parked before the move) counts under the new one.
    memory.apply_signal(signal(ids[1], "sig:late", kind="thumbs_down"))
    assert memory.scores.counts(new, "ruff:B006", now)[1] > before[1]
    assert memory.scores.counts(REPO, "ruff:B006", now) == (0.0, 0.0)
    assert memory.rebuild().unchanged
    again = memory.move_repo(REPO, new)
    assert (again.experiences, again.patterns, again.events) == (0, 0, 0)


def test_the_worker_task_moves_memory_when_github_says_renamed(
    tmp_path: Path, embedder: Embedder
) -> None:
    from bot.settings import Settings
    from tests.helpers import load_webhook
    from workers.celery_app import make_celery
    from workers.context import close_contexts

    old, new = "github/hello-world-old", "github/hello-world"
    seeded = build(tmp_path, embedder)
    exp_id = seeded.record_experience(comment("w", text="x", repo=old))
    seeded.apply_signal(
        Signal(
            id="r:1",
            kind="thumbs_up",
            experience_id=exp_id,
            repo=old,
            pattern="ruff:B006",
            at=time.time(),
        )
    )
    seeded.close()

    app = make_celery(Settings(data_dir=tmp_path, qdrant_path=tmp_path / "qdrant"))
    import workers.tasks  # noqa: F401 - registers the tasks with the app

    payload = load_webhook("crafted-repository.renamed.json")
    delivery = {
        "id": "d-1",
        "event": "repository",
        "action": "renamed",
        "installation_id": payload["installation"]["id"],
        "repo": new,
        "payload": payload,
    }
    result = app.tasks["kaizen.repository_moved"].apply(args=[delivery]).get()
    assert (result["status"], result["old"], result["new"], result["experiences"]) == (
        "moved",
        old,
        new,
        1,
    )
    broken = {**delivery, "payload": {**payload, "changes": {}}}
    assert app.tasks["kaizen.repository_moved"].apply(args=[broken]).get()["status"] == "ignored"
    close_contexts()
    back = build(tmp_path, embedder)
    assert back.scores.counts(new, "ruff:B006", time.time())[0] == pytest.approx(1.0, abs=1e-6)
    assert back.experiences.get(exp_id).repo == new  # type: ignore[union-attr]
    back.close()


def test_a_transfer_into_another_installation_follows_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    from bot.settings import Settings
    from tests.helpers import load_webhook
    from workers.celery_app import make_celery
    from workers.context import close_contexts, context_for

    payload = load_webhook("crafted-repository.transferred.json")
    old, new, into = "octocat/hello-world", "github/hello-world", payload["installation"]["id"]
    seeded = build(tmp_path, embedder)
    exp_id = seeded.record_experience(comment("t", text="x", repo=old, installation_id=into + 100))
    seeded.close()
    settings = Settings(data_dir=tmp_path, qdrant_path=tmp_path / "qdrant")
    app = make_celery(settings)
    import workers.tasks  # noqa: F401 - registers the tasks with the app

    context_for(settings).review_state.watch(old, 5, into + 100, time.time())
    delivery = {
        "id": "d-2",
        "event": "repository",
        "action": "transferred",
        "installation_id": into,
        "repo": new,
        "payload": payload,
    }
    result = app.tasks["kaizen.repository_moved"].apply(args=[delivery]).get()
    assert (result["old"], result["experiences"], result["watched"]) == (old, 1, 1)
    [watched] = context_for(settings).review_state.watched()
    assert (watched["repo"], watched["installation_id"]) == (new, into)
    moved = context_for(settings).memory.experiences.get(exp_id)
    assert moved is not None
    assert (moved.repo, moved.org, moved.installation_id) == (new, "github", into)
    close_contexts()


def test_a_transfer_whose_move_is_still_retrying_is_not_forgotten_under_its_old_name(
    tmp_path: Path, embedder: Embedder
) -> None:
    """A transfer also tells the old installation it lost the repository. If Qdrant is down
    past KAIZEN_FORGET_DELAY_S, the move is still retrying when that removal is forgotten:
    the old name must be left to the move, which carries it over once Qdrant is back."""
    from celery.exceptions import Retry

    from bot.settings import Settings
    from tests.helpers import load_webhook
    from workers.celery_app import make_celery
    from workers.context import close_contexts

    moved = load_webhook("crafted-repository.transferred.json")
    old, new = "octocat/hello-world", "github/hello-world"
    removed = load_webhook("installation_repositories.removed.json")
    removed["repositories_removed"][0].update(name="hello-world", full_name=old)
    seeded = build(tmp_path, embedder)
    exp_id = seeded.record_experience(comment("m", text="x", repo=old, installation_id=2))
    seeded.close()
    move = {
        "id": "d-m",
        "event": "repository",
        "action": "transferred",
        "installation_id": moved["installation"]["id"],
        "repo": new,
        "payload": moved,
    }
    removal = {
        "id": "d-r",
        "event": "installation_repositories",
        "action": "removed",
        "installation_id": 2,
        "repo": None,
        "payload": removed,
    }
    import workers.tasks  # noqa: F401 - registers the tasks with the app

    def app(**overrides: object) -> Any:
        return make_celery(
            Settings(
                data_dir=tmp_path,
                qdrant_path=tmp_path / "qdrant",
                forget_removed_repos=True,
                forget_delay_s=0,
                **overrides,
            )
        )

    down = app(qdrant_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(Retry):  # Qdrant refused: the move will be tried again in 30 s
        down.tasks["kaizen.repository_moved"].apply(args=[move], throw=True).get()
    close_contexts()
    up = app()
    result = up.tasks["kaizen.installation_changed"].apply(args=[removal]).get()
    assert (result["status"], result["repos"], result["moving"]) == ("forgotten", {}, {old: new})
    assert up.tasks["kaizen.repository_moved"].apply(args=[move]).get()["experiences"] == 1
    close_contexts()
    back = build(tmp_path, embedder)
    assert back.experiences.get(exp_id).repo == new  # type: ignore[union-attr]
    back.close()
    again = up.tasks["kaizen.installation_changed"].apply(args=[removal]).get()
    assert again["moving"] == {}  # the move is over: the old name holds nothing to forget
    assert again["repos"][old]["experiences"] == 0
    close_contexts()
    after = build(tmp_path, embedder)
    assert after.experiences.count(new) == 1
    after.close()


def test_a_forgotten_repo_leaves_nothing_behind_and_rebuild_agrees(memory: Memory) -> None:
    sibling, now = "octo-org/lib", time.time()
    ids = [
        memory.record_experience(comment(f"f{i}", text=f"mutable default {i}", installation_id=9))
        for i in (0, 1)
    ]
    kept = memory.record_experience(comment("k", text="mutable default kept", repo=sibling))
    for i, exp_id in enumerate(ids):
        memory.apply_signal(signal(exp_id, f"sig:f{i}", kind="thumbs_down"))
    memory.apply_signal(
        Signal(
            id="sig:k",
            kind="thumbs_up",
            experience_id=kept,
            repo=sibling,
            pattern="ruff:B006",
            at=now,
        )
    )
    memory.trajectories.record(
        Transition(
            trajectory_id="review:f",
            step=0,
            messages=[{"role": "user", "content": "x"}],
            generation="y",
            model="m",
            repo=REPO,
            experience_id=ids[0],
        )
    )
    memory.pending.park(signal(ids[1], "sig:parked", kind="thumbs_up"), "qdrant was down")
    assert memory.repos_of_installation(9) == [REPO]
    assert memory.known_repos() == {REPO, sibling}

    report = memory.forget_repo(REPO)

    assert (report.experiences, report.transitions, report.pending_signals) == (2, 1, 1)
    assert (report.patterns, report.events) == (1, 4)
    assert [memory.experiences.get(i) for i in ids] == [None, None]
    assert memory.experiences.count(REPO) == 0 and memory.experiences.count(sibling) == 1
    assert memory.scores.patterns(REPO) == []
    for scope in ("octo-org", "*"):  # what the sibling taught is all that is left
        assert memory.scores.counts(scope, "ruff:B006", now) == pytest.approx(
            memory.scores.counts(sibling, "ruff:B006", now)
        )
    hits = memory.experiences.search_similar("mutable default 0", repo=sibling, scope="org")
    assert [h.experience.id for h in hits] == [kept]  # nothing of the repo in prompts
    assert memory.activity is not None and memory.activity.repos() == [sibling]
    assert list(memory.trajectories.iter_transitions(repo=REPO)) == []
    assert memory.pending.count() == 0 and memory.repos_of_installation(9) == []
    assert memory.known_repos() == {sibling}
    assert memory.rebuild().unchanged
    again = memory.forget_repo(REPO)
    assert (again.experiences, again.patterns, again.events, again.transitions) == (0, 0, 0, 0)


def test_an_uninstall_forgets_its_repositories_only_when_configured_to(
    tmp_path: Path, embedder: Embedder
) -> None:
    from bot.settings import Settings
    from tests.helpers import load_webhook
    from workers.celery_app import make_celery
    from workers.context import close_contexts

    payload = load_webhook("installation.deleted.json")
    never = {**payload["repositories"][0], "id": 404, "name": "idle", "full_name": "octocat/idle"}
    payload["repositories"].append(never)  # listed, but Kaizen never saw it: not scanned for
    installation = payload["installation"]["id"]
    listed, unlisted, other = "octocat/Hello-World", "octocat/private-tool", "octocat/kept"
    seeded = build(tmp_path, embedder)
    for repo, inst in ((listed, installation), (unlisted, installation), (other, 777)):
        seeded.record_experience(comment(repo, text=repo, repo=repo, installation_id=inst))
    seeded.close()
    delivery = {
        "id": "d-9",
        "event": "installation",
        "action": "deleted",
        "installation_id": installation,
        "repo": None,
        "payload": payload,
    }
    import workers.tasks  # noqa: F401 - registers the tasks with the app

    for forget, status in ((False, "kept"), (True, "forgotten")):
        settings = Settings(
            data_dir=tmp_path, qdrant_path=tmp_path / "qdrant", forget_removed_repos=forget
        )
        app = make_celery(settings)
        result = app.tasks["kaizen.installation_changed"].apply(args=[delivery]).get()
        close_contexts()
        assert result["status"] == status
        if not forget:  # off by default: an accidental uninstall loses nothing
            kept = build(tmp_path, embedder)
            assert kept.experiences.count() == 3
            kept.close()
    assert sorted(result["repos"]) == [listed, unlisted]
    assert result["repos"][listed]["experiences"] == 1
    back = build(tmp_path, embedder)
    assert [back.experiences.count(r) for r in (listed, unlisted, other)] == [0, 0, 1]
    back.close()


def test_forgetting_during_a_qdrant_outage_changes_nothing_until_it_is_run_again(
    tmp_path: Path, embedder: Embedder
) -> None:
    seeded = build(tmp_path, embedder)
    exp_id = seeded.record_experience(comment("q"))
    seeded.apply_signal(signal(exp_id, "sig:q", kind="thumbs_down"))
    before = seeded.scores.snapshot()
    seeded.close()
    down = build(tmp_path, embedder, url=f"http://127.0.0.1:{free_port()}")
    from qdrant_client.http.exceptions import ResponseHandlingException

    with pytest.raises(ResponseHandlingException):  # propagates: the task retries
        down.forget_repo(REPO)
    assert down.scores.snapshot() == before  # experiences go first: nothing half-forgotten
    down.close()
    back = build(tmp_path, embedder)
    assert back.forget_repo(REPO).experiences == 1
    assert back.scores.patterns(REPO) == []
    back.close()
