"""Developers change their minds on GitHub: an edited reply, a reopened thread. What memory
counts follows, once per real change, and a rebuild from the experiences agrees."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.embedding import Embedder
from memory.service import Memory
from memory.types import Experience, Kind, Signal
from tests.integration.test_memory_service import build, embedder  # noqa: F401 - fixture
from workers.review import feedback
from workers.review.findings import Finding
from workers.review.render import comment_body

REPO = "octo-org/app"
BOT = "kaizen[bot]"
PATTERN = "ruff:E722"


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Iterator[Memory]:  # noqa: F811 - fixture
    mem = build(tmp_path, embedder)
    yield mem
    mem.close()


def kaizen_comment(memory: Memory, comment_id: int, *, outdated: bool = False) -> dict[str, Any]:
    """One of Kaizen's review comments, as GitHub returns it, with its experience in memory."""
    exp_id = memory.record_experience(
        Experience(
            kind=Kind.COMMENT,
            repo=REPO,
            pattern=PATTERN,
            fingerprint=f"fp-{comment_id}",
            text="bare except",
        )
    )
    finding = Finding("a.py", 5, "RIGHT", PATTERN, "medium", "Bare except.", "ruff", "except:")
    return {
        "id": comment_id,
        "user": {"login": BOT},
        "body": comment_body(finding, exp_id, app_slug="kaizen"),
        "line": None if outdated else 5,
        "position": None if outdated else 3,
    }


def stamp(minute: int) -> str:
    """An ISO time ``minute`` minutes into the last hour (replies are recent, so their
    evidence has not decayed measurably)."""
    at = datetime.now(UTC) - timedelta(hours=1) + timedelta(minutes=minute)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def reply(reply_id: int, body: str, updated_at: str, user: str = "alice") -> dict[str, Any]:
    return {
        "id": reply_id,
        "user": {"login": user},
        "body": body,
        "created_at": stamp(0),
        "updated_at": updated_at,
    }


def counts(memory: Memory) -> tuple[float, float]:
    return memory.scores.counts(REPO, PATTERN, time.time())


def signal(signal_id: str, kind: str, experience_id: str) -> Signal:
    """A signal on this file's pattern, given now."""
    return Signal(
        id=signal_id,
        kind=kind,
        experience_id=experience_id,
        repo=REPO,
        pattern=PATTERN,
        at=time.time(),
    )


def outcome(memory: Memory, comment: dict[str, Any]) -> str:
    exp_id = feedback._bot_finding(comment, BOT)
    assert exp_id is not None
    stored = memory.experiences.get(exp_id)
    assert stored is not None
    return str(stored.outcome)


def test_a_reopened_thread_stops_counting_and_resolving_again_counts_once(
    memory: Memory,
) -> None:
    first = kaizen_comment(memory, 11)
    thread = {"comments": [first]}

    def resolve(delivery: str) -> str:
        applied = feedback.on_thread_resolved(
            memory, thread, bot_login=BOT, actor="alice", delivery_id=delivery
        )
        assert applied is not None
        return applied.status

    assert resolve("guid-1") == "applied"
    assert counts(memory)[1] > 0.0 and outcome(memory, first) == "dismissed"
    assert resolve("guid-1") == "duplicate"  # GitHub redelivered the same event
    assert resolve("guid-2") == "duplicate"  # still resolved: one resolution counts
    reopened = feedback.on_thread_unresolved(memory, thread, bot_login=BOT)
    assert reopened is not None and reopened.status == "applied"
    assert counts(memory) == pytest.approx((0.0, 0.0), abs=1e-9)
    assert outcome(memory, first) == "pending"
    again = feedback.on_thread_unresolved(memory, thread, bot_login=BOT)
    assert again is not None and again.status == "unknown"  # nothing left to take back
    assert resolve("guid-1") == "duplicate"  # an old resolution redelivered stays taken back
    assert resolve("guid-3") == "applied"  # resolved again: a new word
    assert counts(memory)[1] == pytest.approx(memory.table["dismissed"].beta, rel=1e-6)
    assert memory.rebuild().unchanged


def test_resolving_a_comment_a_push_already_counted_as_addressed_adds_nothing(
    memory: Memory,
) -> None:
    first = kaizen_comment(memory, 12, outdated=True)
    exp_id = feedback._bot_finding(first, BOT)
    assert exp_id is not None
    memory.apply_signal(signal("addressed:12", "addressed", exp_id))
    before = counts(memory)
    applied = feedback.on_thread_resolved(
        memory, {"comments": [first]}, bot_login=BOT, actor="alice", delivery_id="guid-9"
    )
    assert applied is not None and applied.status == "duplicate"
    assert counts(memory) == pytest.approx(before)


def test_an_edited_reply_counts_its_new_words_instead_of_its_old_ones(memory: Memory) -> None:
    parent = kaizen_comment(memory, 13)

    def edit(body: str, at: str) -> feedback.Applied | None:
        return feedback.on_reply_edited(
            memory, parent, reply(31, body, at), bot_login=BOT, app_slug="kaizen"
        )

    first = feedback.on_reply(
        memory,
        parent,
        reply(31, "/kaizen good", stamp(0)),
        bot_login=BOT,
        app_slug="kaizen",
    )
    assert first is not None and first.status == "applied"
    assert counts(memory) == pytest.approx((1.0, 0.0), abs=0.01)

    changed = edit("/kaizen bad we allow bare excepts in scripts", stamp(5))
    assert changed is not None and changed.status == "applied"
    assert counts(memory) == pytest.approx((0.0, 1.0), abs=0.01)
    assert outcome(memory, parent) == "rejected"
    stored = memory.experiences.get(str(feedback._bot_finding(parent, BOT)))
    assert stored is not None and stored.reflection == "we allow bare excepts in scripts"

    again = edit("/kaizen bad we allow bare excepts in scripts", stamp(5))
    assert again is not None and again.status == "duplicate"  # redelivered
    assert counts(memory) == pytest.approx((0.0, 1.0), abs=0.01)

    neutral = edit("Which Python version is this for?", stamp(9))
    assert neutral is not None and neutral.status == "applied"  # taken back, nothing new
    assert counts(memory) == pytest.approx((0.0, 0.0), abs=1e-9)
    assert outcome(memory, parent) == "pending"

    back = edit("/kaizen good", stamp(12))
    assert back is not None and back.status == "applied"
    assert counts(memory) == pytest.approx((1.0, 0.0), abs=0.01)
    assert memory.rebuild().unchanged

    gone = feedback.on_reply_deleted(memory, parent, reply(31, "", ""), bot_login=BOT)
    assert gone is not None and gone.status == "applied"
    assert counts(memory) == pytest.approx((0.0, 0.0), abs=1e-9)
    assert memory.rebuild().unchanged


def test_edits_that_teach_nothing_are_ignored(memory: Memory) -> None:
    parent = kaizen_comment(memory, 14)
    plain = feedback.on_reply_edited(
        memory,
        parent,
        reply(41, "Which Python version?", stamp(5)),
        bot_login=BOT,
        app_slug="kaizen",
    )
    assert plain is None
    ours = feedback.on_reply_edited(
        memory,
        parent,
        reply(42, "/kaizen good", stamp(5), user=BOT),
        bot_login=BOT,
        app_slug="kaizen",
    )
    assert ours is None
    assert counts(memory) == (0.0, 0.0)


def said(
    memory: Memory, parent: dict[str, Any], reply_id: int, body: str, minute: int, *, edit: bool
) -> str | None:
    """The status of a reply's creation (``edit`` False) or edit, as the worker handles it."""
    handler = feedback.on_reply_edited if edit else feedback.on_reply
    applied = handler(
        memory, parent, reply(reply_id, body, stamp(minute)), bot_login=BOT, app_slug="kaizen"
    )
    return None if applied is None else applied.status


def deleted(memory: Memory, parent: dict[str, Any], reply_id: int) -> str | None:
    applied = feedback.on_reply_deleted(memory, parent, reply(reply_id, "", ""), bot_login=BOT)
    return None if applied is None else applied.status


def test_a_reply_created_event_arriving_after_its_edit_changes_nothing(memory: Memory) -> None:
    parent = kaizen_comment(memory, 15)
    assert said(memory, parent, 51, "/kaizen bad", 5, edit=True) == "applied"
    assert said(memory, parent, 51, "/kaizen good", 0, edit=False) == "duplicate"
    assert counts(memory) == pytest.approx((0.0, 1.0), abs=0.01)


def test_a_reply_deleted_before_its_creation_is_processed_never_counts(memory: Memory) -> None:
    parent = kaizen_comment(memory, 16)
    assert deleted(memory, parent, 61) == "unknown"  # nothing had counted yet
    assert said(memory, parent, 61, "/kaizen bad", 0, edit=False) == "deleted"
    assert said(memory, parent, 61, "/kaizen good", 3, edit=True) == "deleted"
    assert counts(memory) == (0.0, 0.0)
    assert outcome(memory, parent) == "pending"
    assert memory.rebuild().unchanged


def test_a_deleted_reply_stays_deleted_when_its_edit_is_processed_after(memory: Memory) -> None:
    parent = kaizen_comment(memory, 17)
    assert said(memory, parent, 71, "/kaizen good", 0, edit=False) == "applied"
    assert deleted(memory, parent, 71) == "applied"
    assert deleted(memory, parent, 71) == "unknown"  # redelivered: nothing more
    assert said(memory, parent, 71, "/kaizen bad noise", 4, edit=True) == "deleted"
    assert counts(memory) == pytest.approx((0.0, 0.0), abs=1e-9)
    assert memory.rebuild().unchanged
    stored = memory.experiences.get(str(feedback._bot_finding(parent, BOT)))
    assert stored is not None
    memory.archive.archive([stored])  # retention keeps the signals, not the deletion note
    assert sorted(row[0] for row in memory.archive.iter_signals()) == [
        "reply:71",
        "retract:reply:71",
    ]


def test_a_reply_written_after_its_deletion_was_marked_is_refused_by_the_store(
    memory: Memory,
) -> None:
    # two workers at once: the deletion's note landed before the creation's write
    parent = kaizen_comment(memory, 18)
    exp_id = str(feedback._bot_finding(parent, BOT))
    assert memory.mark_gone(exp_id, "reply:81")
    assert not memory.mark_gone(exp_id, "reply:81")  # once
    assert memory.apply_signal(signal("reply:81", "bad", exp_id)).status == "deleted"
    assert said(memory, parent, 81, "/kaizen bad", 0, edit=False) == "deleted"
    assert counts(memory) == (0.0, 0.0)
    assert memory.rebuild().unchanged


def test_a_parked_reply_whose_reply_was_deleted_meanwhile_is_dropped(memory: Memory) -> None:
    # Qdrant was down when the reply came (parked); the deletion was processed first
    parent = kaizen_comment(memory, 19)
    exp_id = str(feedback._bot_finding(parent, BOT))
    memory.pending.park(signal("reply:91", "bad", exp_id), "ConnectionError: qdrant down")
    assert deleted(memory, parent, 91) == "unknown"
    assert memory.retry_pending() == 1  # dealt with: dropped, not applied
    assert memory.pending.all() == []
    assert counts(memory) == (0.0, 0.0)
