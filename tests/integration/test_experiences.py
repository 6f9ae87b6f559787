"""The experience store on embedded Qdrant with the real local embedding model.

Why real: retrieval is the point of this store, so the tests check that the *right* past
experience comes back for a near-duplicate finding, with real similarities, real Qdrant
filters and real on-disk storage. The model is loaded once per session and its vectors
are cached on disk for the session, so each test costs milliseconds.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from memory.embedding import CachedEmbedder, LocalEmbedder, OpenAIEmbedder
from memory.experiences import (
    ExperienceStore,
    ExperienceStoreError,
    StoreLocked,
    open_store,
)
from memory.types import Experience, Kind, Outcome, fingerprint
from tests.fakes.openai_api import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]

MUTABLE_A = (
    "Mutable default argument in a.py: `def add(item, items=[])` shares one list between "
    "calls, so items leak from one call to the next. Use `items=None` and create the list "
    "inside the function."
)
MUTABLE_B = (
    "Mutable default argument in b.py: `def register(handler, handlers=[])` shares one list "
    "between calls, so handlers leak from one call to the next. Use `handlers=None` and "
    "create the list inside the function."
)
OTHERS = [
    (
        "sql-injection",
        "SQL built with an f-string in db.py: `cursor.execute(f'SELECT * FROM "
        "users WHERE id={user_id}')` is open to SQL injection; pass parameters instead.",
    ),
    (
        "bare-except",
        "A bare `except:` in worker.py swallows KeyboardInterrupt and SystemExit; "
        "catch `Exception` or the specific error.",
    ),
    (
        "docstring",
        "The public function `parse_config` in config.py has no docstring explaining "
        "the accepted keys.",
    ),
    (
        "timeout",
        "requests.get without a timeout in client.py can hang the worker forever; pass timeout=10.",
    ),
]


def exp(
    repo: str,
    text: str,
    *,
    pattern: str = "py.mutable-default",
    key: str | None = None,
    kind: str = Kind.COMMENT,
    outcome: str = Outcome.PENDING,
    created_at: float = 1000.0,
    **extra: object,
) -> Experience:
    return Experience(
        kind=kind,
        repo=repo,
        pattern=pattern,
        fingerprint=fingerprint(repo, key or text),
        text=text,
        installation_id=7,
        outcome=outcome,
        created_at=created_at,
        extra=dict(extra),
    )


def signal(
    sid: str, kind: str = "thumbs_up", alpha: float = 1.0, beta: float = 0.0
) -> dict[str, object]:
    return {"id": sid, "kind": kind, "alpha": alpha, "beta": beta, "at": 1700.0, "reason": None}


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> CachedEmbedder:
    """One loaded model and one vector cache for the whole session."""
    cached = CachedEmbedder(LocalEmbedder(), tmp_path_factory.mktemp("emb") / "cache.sqlite3")
    cached.embed([MUTABLE_A])
    return cached


@pytest.fixture
def store(tmp_path: Path, embedder: CachedEmbedder) -> Iterator[ExperienceStore]:
    with open_store(url=None, api_key=None, path=tmp_path / "qdrant", embedder=embedder) as s:
        yield s


# ---- writing ---------------------------------------------------------------------------------


def test_same_experience_twice_is_one_point(store: ExperienceStore) -> None:
    first = exp("acme/api", MUTABLE_A)
    store.upsert([first])
    store.upsert([exp("acme/api", MUTABLE_A)])
    store.upsert([first, exp("acme/api", MUTABLE_A)])  # duplicates within one batch too
    assert store.count() == 1
    assert store.count("acme/api") == 1
    assert store.count("acme/other") == 0
    got = store.get(first.id)
    assert got is not None
    assert (got.repo, got.pattern, got.text, got.installation_id) == (
        "acme/api",
        "py.mutable-default",
        MUTABLE_A,
        7,
    )
    assert got.outcome == Outcome.PENDING and got.extra["signals"] == []


def test_get_unknown_or_malformed_ids(store: ExperienceStore) -> None:
    assert store.get("2f0b6e1e-0000-4000-8000-000000000000") is None
    assert store.get("not-a-uuid") is None


def test_record_signal_is_idempotent(store: ExperienceStore) -> None:
    e = exp("acme/api", MUTABLE_A)
    store.upsert([e])
    assert store.record_signal(e.id, signal("r1"), Outcome.ACCEPTED, "useful catch")
    assert store.record_signal(e.id, signal("r1"), Outcome.ACCEPTED, "useful catch")
    assert store.record_signal(e.id, signal("r2", "reply_bad", 0, 1), Outcome.REJECTED, None)
    got = store.get(e.id)
    assert got is not None
    assert [s["id"] for s in got.extra["signals"]] == ["r1", "r2"]
    assert got.extra["signals"][0] == signal("r1")
    assert got.extra["reflections"] == ["useful catch"]
    assert got.reflection == "useful catch"
    assert got.outcome == Outcome.REJECTED


def test_record_signal_on_unknown_experience(store: ExperienceStore) -> None:
    unknown = exp("acme/api", "never stored").id
    assert store.record_signal(unknown, signal("x"), Outcome.ACCEPTED, None) is False
    assert store.record_signal("nonsense", signal("x"), Outcome.ACCEPTED, None) is False
    with pytest.raises(ValueError, match="id"):
        store.record_signal(unknown, {"kind": "thumbs_up"}, Outcome.ACCEPTED, None)


def test_reupsert_keeps_the_history(store: ExperienceStore) -> None:
    e = exp("acme/api", MUTABLE_A, created_at=111.0, note="first")
    store.upsert([e])
    store.record_signal(e.id, signal("r1"), Outcome.ACCEPTED, "good one")
    # The same finding re-posted on the next push: new text, default (pending) outcome.
    refreshed = exp("acme/api", MUTABLE_B, key=MUTABLE_A, created_at=999.0, note="second")
    assert refreshed.id == e.id
    store.upsert([refreshed])
    got = store.get(e.id)
    assert got is not None
    assert got.outcome == Outcome.ACCEPTED
    assert [s["id"] for s in got.extra["signals"]] == ["r1"]
    assert got.extra["reflections"] == ["good one"]
    assert got.text == MUTABLE_B and got.extra["note"] == "second"
    assert got.created_at == 111.0  # first seen
    # The vector follows the new text.
    [hit] = store.search_similar(MUTABLE_B, repo="acme/api", limit=1)
    assert hit.experience.text == MUTABLE_B and hit.score > 0.99
    # Round trip: upserting what get() returned (signals in extra) changes nothing.
    store.upsert([got])
    again = store.get(e.id)
    assert again is not None and again.extra["signals"] == got.extra["signals"]
    assert store.count() == 1


def test_upsert_may_finalise_a_pending_outcome_only(store: ExperienceStore) -> None:
    e = exp("acme/api", MUTABLE_A)
    store.upsert([e])
    store.upsert([exp("acme/api", MUTABLE_A, outcome=Outcome.IGNORED)])
    got = store.get(e.id)
    assert got is not None and got.outcome == Outcome.IGNORED
    store.upsert([exp("acme/api", MUTABLE_A, outcome=Outcome.ACCEPTED)])
    got = store.get(e.id)
    assert got is not None and got.outcome == Outcome.IGNORED


def test_concurrent_signals_from_threads_are_all_kept(store: ExperienceStore) -> None:
    e = exp("acme/api", MUTABLE_A)
    store.upsert([e])

    def record(i: int) -> None:
        for j in range(5):
            store.record_signal(e.id, signal(f"t{i}-{j}"), Outcome.ACCEPTED, None)
            store.record_signal(e.id, signal(f"t{i}-{j}"), Outcome.ACCEPTED, None)

    threads = [threading.Thread(target=record, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    got = store.get(e.id)
    assert got is not None
    assert len(got.extra["signals"]) == 20
    assert len({s["id"] for s in got.extra["signals"]}) == 20


def test_huge_text_is_stored_capped_and_searchable(store: ExperienceStore) -> None:
    huge = MUTABLE_A + "\n" + "    x = x + 1  # padding line of a giant diff\n" * 100_000
    e = exp("acme/api", huge)
    store.upsert([e, exp("acme/api", "")])
    got = store.get(e.id)
    assert got is not None
    assert len(got.text) == store.max_text_chars and got.extra["text_truncated"] is True
    hits = store.search_similar(MUTABLE_B, repo="acme/api", limit=1)
    assert hits[0].experience.fingerprint == e.fingerprint
    assert store.count() == 2


def test_iter_all_and_stats(store: ExperienceStore) -> None:
    experiences = [exp("acme/api", t, pattern=p) for p, t in OTHERS]
    experiences.append(exp("acme/api", "Fix for issue 12", kind=Kind.FIX, key="fix12"))
    store.upsert(experiences)
    store.record_signal(experiences[0].id, signal("s1"), Outcome.ACCEPTED, None)
    store.record_signal(
        experiences[1].id, signal("s2", "thumbs_down", 0, 1), Outcome.REJECTED, None
    )
    seen = list(store.iter_all(batch=2))
    assert sorted(e.id for e in seen) == sorted(e.id for e in experiences)
    signals = {e.pattern: [s["id"] for s in e.extra["signals"]] for e in seen}
    assert signals["sql-injection"] == ["s1"] and signals["bare-except"] == ["s2"]
    stats = store.stats()
    assert stats["total"] == 5
    assert stats["by_kind"] == {"comment": 4, "fix": 1}
    assert stats["by_outcome"] == {"pending": 3, "accepted": 1, "rejected": 1}
    assert stats["by_kind_outcome"]["fix"] == {"pending": 1}


# ---- retrieval -------------------------------------------------------------------------------


def test_near_duplicate_on_another_file_retrieves_the_past_comment(store: ExperienceStore) -> None:
    past = exp("acme/api", MUTABLE_A, outcome=Outcome.ACCEPTED)
    store.upsert([past, *(exp("acme/api", t, pattern=p) for p, t in OTHERS)])
    hits = store.search_similar(MUTABLE_B, repo="acme/api", kind=Kind.COMMENT, limit=3)
    assert hits[0].experience.id == past.id
    assert hits[0].experience.outcome == Outcome.ACCEPTED
    assert hits[0].score > 0.6 > 0.3 > hits[1].score  # same issue, other words and file
    assert hits[0].scope == "repo"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert store.search_similar(MUTABLE_B, repo="acme/api", kind=Kind.FIX) == []
    assert len(store.search_similar(MUTABLE_B, repo="acme/api", min_score=0.6)) == 1
    only_accepted = store.search_similar(MUTABLE_B, repo="acme/api", outcome=["accepted"])
    assert [h.experience.id for h in only_accepted] == [past.id]


def test_scopes_never_leak_another_orgs_experience(store: ExperienceStore) -> None:
    acme = exp("acme/api", MUTABLE_A)
    acme_shared = exp("acme/oss", MUTABLE_A + " (open source)", shareable=True)
    globex = exp("globex/app", MUTABLE_A.replace("a.py", "g.py"))
    store.upsert([acme, acme_shared, globex])

    def repos(**kwargs: object) -> list[str]:
        return [h.experience.repo for h in store.search_similar(MUTABLE_B, limit=10, **kwargs)]  # type: ignore[arg-type]

    # auto: repo, then org; never another org by default.
    assert repos(repo="globex/app") == ["globex/app"]
    assert sorted(repos(repo="acme/web")) == ["acme/api", "acme/oss"]
    assert repos(repo="globex/web", scope="org") == ["globex/app"]
    assert repos(repo="globex/web", scope="repo") == []
    assert repos(repo="initech/app") == []
    # auto repo-first ordering even when an org hit scores higher.
    assert repos(repo="acme/oss")[0] == "acme/oss"
    # allow_global / global: only another org's *shareable* experiences.
    hits = store.search_similar(MUTABLE_B, repo="globex/web", limit=10, allow_global=True)
    assert [(h.experience.repo, h.scope) for h in hits] == [
        ("globex/app", "org"),
        ("acme/oss", "global"),
    ]
    assert sorted(repos(repo="globex/web", scope="global")) == ["acme/oss", "globex/app"]
    assert repos(repo="initech/app", allow_global=True) == ["acme/oss"]


def test_auto_scope_fills_from_the_org(store: ExperienceStore) -> None:
    own = exp("acme/api", MUTABLE_A)
    siblings = [exp("acme/web", MUTABLE_A + f" (copy {i})") for i in range(3)]
    store.upsert([own, *siblings])
    hits = store.search_similar(MUTABLE_B, repo="acme/api", limit=3)
    assert [h.scope for h in hits] == ["repo", "org", "org"]
    assert len({h.experience.id for h in hits}) == 3


def test_balanced_returns_accepted_and_rejected(store: ExperienceStore) -> None:
    accepted = [
        exp("acme/api", MUTABLE_A + f" Seen in module {i}.", outcome=Outcome.ACCEPTED)
        for i in range(4)
    ]
    rejected = [
        exp(
            "acme/api",
            f"Mutable default argument nitpick number {i} in tests.",
            outcome=Outcome.REJECTED,
        )
        for i in range(3)
    ]
    pending = exp("acme/api", MUTABLE_A + " pending")
    store.upsert([*accepted, *rejected, pending])
    plain = store.search_similar(MUTABLE_B, repo="acme/api", limit=4)
    assert sum(h.experience.outcome == Outcome.REJECTED for h in plain) < 2
    balanced = store.search_similar(MUTABLE_B, repo="acme/api", limit=4, balanced=True)
    outcomes = sorted(h.experience.outcome for h in balanced)
    assert outcomes == ["accepted", "accepted", "rejected", "rejected"]
    assert [h.score for h in balanced] == sorted((h.score for h in balanced), reverse=True)
    # Only one rejected available: the rest is filled with accepted ones.
    store.enforce_retention("acme/api")
    one_side = store.search_similar(
        MUTABLE_B, repo="acme/api", limit=5, balanced=True, outcome=["accepted", "rejected"]
    )
    assert len(one_side) == 5
    assert sum(h.experience.outcome == Outcome.REJECTED for h in one_side) == 2
    few = store.search_similar(
        MUTABLE_B, repo="acme/api", limit=6, balanced=True, outcome=["accepted", "dismissed"]
    )
    assert [h.experience.outcome for h in few] == ["accepted"] * 4


def test_neighbour_vote_counts_final_outcomes(store: ExperienceStore) -> None:
    def near(i: int, outcome: str, repo: str = "acme/api", kind: str = Kind.COMMENT) -> Experience:
        return exp(repo, MUTABLE_A.replace("a.py", f"mod{i}.py"), outcome=outcome, kind=kind)

    store.upsert(
        [
            near(1, Outcome.ACCEPTED),
            near(2, Outcome.ADDRESSED),
            near(3, Outcome.REJECTED),
            near(4, Outcome.IGNORED),
            near(5, Outcome.PENDING),  # not evidence yet
            near(6, Outcome.REJECTED, repo="acme/web"),  # another repo
            near(7, Outcome.REJECTED, kind=Kind.FIX),  # another kind
            exp("acme/api", OTHERS[0][1], outcome=Outcome.REJECTED),  # not similar
        ]
    )
    vote = store.neighbour_vote(MUTABLE_A.replace("a.py", "new.py"), repo="acme/api")
    assert vote.neighbours == 4
    assert vote.accepts == pytest.approx(2.0)
    assert vote.rejects == pytest.approx(1.3)
    assert len(vote.examples) == 4
    assert all(h.score >= 0.85 for h in vote.examples)
    assert store.neighbour_vote(MUTABLE_A, repo="acme/api", threshold=0.999).neighbours <= 1
    assert store.neighbour_vote(MUTABLE_A, repo="globex/app").neighbours == 0
    fixes = store.neighbour_vote(MUTABLE_A, repo="acme/api", kind=Kind.FIX)
    assert (fixes.neighbours, fixes.rejects) == (1, 1.0)


def test_neighbour_votes_fade_with_the_time_since_the_team_judged_them(
    store: ExperienceStore,
) -> None:
    day, now = 86_400.0, 1_800_000_000.0

    def near(i: int, outcome: str, created_at: float) -> Experience:
        text = MUTABLE_A.replace("a.py", f"mod{i}.py")
        return exp("acme/api", text, outcome=outcome, created_at=created_at)

    long_ago = near(1, Outcome.REJECTED, now - 200 * day)  # beyond four half-lives
    judged_late = near(2, Outcome.PENDING, now - 40 * day)
    recent = near(3, Outcome.ACCEPTED, now - 3 * day)
    store.upsert([long_ago, judged_late, recent])
    # commented 40 days ago, turned down 30 days ago: its age counts from the 👎
    record = {**signal("s1", "thumbs_down", 0.0, 1.0), "at": now - 30 * day}
    assert store.record_signal(judged_late.id, record, Outcome.REJECTED, None)

    query = MUTABLE_A.replace("a.py", "new.py")
    vote = store.neighbour_vote(query, repo="acme/api", now=now, half_life_days=30.0)
    assert sorted(h.experience.id for h in vote.examples) == sorted([judged_late.id, recent.id])
    assert vote.rejects == pytest.approx(0.5)
    assert vote.accepts == pytest.approx(0.5 ** (3 / 30))
    undecayed = store.neighbour_vote(query, repo="acme/api")
    assert (undecayed.neighbours, undecayed.accepts, undecayed.rejects) == (3, 1.0, 2.0)


# ---- retention, locking, configuration ---------------------------------------------------------


def test_retention_deletes_the_oldest(tmp_path: Path, embedder: CachedEmbedder) -> None:
    with open_store(
        url=None, api_key=None, path=tmp_path / "q", embedder=embedder, retention_per_repo=5
    ) as store:
        older = [
            exp("acme/api", t, pattern=p, created_at=1.0 + i) for i, (p, t) in enumerate(OTHERS)
        ]
        newer = [exp("acme/api", MUTABLE_A + f" v{i}", created_at=10.0 + i) for i in range(4)]
        elsewhere = [exp("acme/web", t, pattern=p, created_at=0.0) for p, t in OTHERS]
        store.upsert(older + elsewhere)
        store.upsert(newer)  # 8 in acme/api: the 3 oldest go
        assert store.count("acme/api") == 5
        assert store.count("acme/web") == 4
        assert [store.get(e.id) is None for e in older] == [True, True, True, False]
        assert all(store.get(e.id) is not None for e in newer)
        assert store.enforce_retention("acme/api") == 0


def test_enforce_retention_returns_deleted_count(tmp_path: Path, embedder: CachedEmbedder) -> None:
    with open_store(url=None, api_key=None, path=tmp_path / "q", embedder=embedder) as store:
        items = [
            exp("acme/api", t, pattern=p, created_at=1.0 + i) for i, (p, t) in enumerate(OTHERS)
        ]
        store.upsert(items)
        store.retention_per_repo = 1
        assert store.enforce_retention("acme/api") == 3
        assert [e.id for e in store.iter_all()] == [items[-1].id]


def test_second_opener_gets_store_locked(tmp_path: Path, embedder: CachedEmbedder) -> None:
    path = tmp_path / "q"
    first = open_store(url=None, api_key=None, path=path, embedder=embedder)
    e = exp("acme/api", MUTABLE_A)
    first.upsert([e])
    with pytest.raises(StoreLocked, match="KAIZEN_QDRANT_URL"):
        open_store(url=None, api_key=None, path=path, embedder=embedder)
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from memory.embedding import LocalEmbedder
        from memory.experiences import StoreLocked, open_store
        try:
            open_store(url=None, api_key=None, path=Path({str(path)!r}), embedder=LocalEmbedder())
        except StoreLocked as exc:
            print("locked:", exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("locked:")
    assert "KAIZEN_QDRANT_URL" in out.stdout and "stop the other" in out.stdout
    first.close()
    # Once closed, another instance opens it, with the data intact.
    with open_store(url=None, api_key=None, path=path, embedder=embedder) as second:
        got = second.get(e.id)
        assert got is not None and got.text == MUTABLE_A


def test_changing_the_embedding_dimension_is_refused(
    tmp_path: Path, embedder: CachedEmbedder
) -> None:
    path = tmp_path / "q"
    with open_store(url=None, api_key=None, path=path, embedder=embedder) as store:
        store.upsert([exp("acme/api", MUTABLE_A)])
    with FakeOpenAI() as fake:
        small = OpenAIEmbedder(
            fake.base_url, "test-key", "fake-embedding", dim=64, request_dimensions=True
        )
        with (
            open_store(url=None, api_key=None, path=path, embedder=small) as store,
            pytest.raises(ExperienceStoreError, match="384-dim"),
        ):
            store.count()


def test_rejects_vectors_of_the_wrong_size(store: ExperienceStore) -> None:
    with pytest.raises(ValueError, match="384-dim"):
        store.upsert([exp("acme/api", MUTABLE_A)], vectors=[[1.0, 0.0]])
    with pytest.raises(ValueError, match="one vector per"):
        store.upsert([exp("acme/api", MUTABLE_A)], vectors=[])
    with pytest.raises(ValueError, match="scope"):
        store.search_similar("x", repo="acme/api", scope="galaxy")


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_server_path_compare_and_set_keeps_a_concurrent_signal(
    tmp_path: Path, embedder: CachedEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a server, another worker may write between our read and our write.

    The server code path (revision compare-and-set) runs here on embedded storage with
    ``local`` switched off; a second writer sneaks in right after our first read.
    """
    with open_store(url=None, api_key=None, path=tmp_path / "q", embedder=embedder) as store:
        store.local = False
        e = exp("acme/api", MUTABLE_A)
        store.upsert([e])
        real_retrieve = store.client.retrieve
        sneaked = False

        def retrieve(*args: object, **kwargs: object) -> object:
            nonlocal sneaked
            records = real_retrieve(*args, **kwargs)  # type: ignore[arg-type]
            if not sneaked and kwargs.get("with_payload") == ["signals", "reflections", "revision"]:
                sneaked = True
                other = {**signal("other-worker"), "kind": "thumbs_down"}
                store.client.set_payload(
                    store.collection, {"signals": [other], "revision": 1}, points=[e.id]
                )
            return records

        monkeypatch.setattr(store.client, "retrieve", retrieve)
        assert store.record_signal(e.id, signal("mine"), Outcome.ACCEPTED, "why")
        monkeypatch.undo()
        got = store.get(e.id)
        assert got is not None
        assert [s["id"] for s in got.extra["signals"]] == ["other-worker", "mine"]
        assert got.extra["reflections"] == ["why"]
        # The conditional outcome promotion only touches pending points.
        store.upsert([exp("acme/api", MUTABLE_A, outcome=Outcome.IGNORED)])
        got = store.get(e.id)
        assert got is not None and got.outcome == Outcome.ACCEPTED
        other = exp("acme/api", MUTABLE_B)
        store.upsert([other])
        store.upsert([exp("acme/api", MUTABLE_B, outcome=Outcome.IGNORED)])
        promoted = store.get(other.id)
        assert promoted is not None and promoted.outcome == Outcome.IGNORED


def test_embedded_storage_commits_in_wal_mode(store: ExperienceStore) -> None:
    """Without WAL every point waits for an fsync (see ``_tune_embedded_storage``)."""
    store.upsert([exp("acme/api", MUTABLE_A)])
    [sqlite_file] = Path(store.client.init_options["path"]).rglob("storage.sqlite")
    with closing(sqlite3.connect(sqlite_file)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_changing_the_embedding_model_is_refused(tmp_path: Path, embedder: CachedEmbedder) -> None:
    path = tmp_path / "q"
    with open_store(url=None, api_key=None, path=path, embedder=embedder) as store:
        store.upsert([exp("acme/api", MUTABLE_A)])
    same_size = LocalEmbedder(name="some-other-384-dim-model")
    with (
        open_store(url=None, api_key=None, path=path, embedder=same_size) as store,
        pytest.raises(ExperienceStoreError, match="some-other-384-dim-model"),
    ):
        store.get(exp("acme/api", MUTABLE_A).id)
