"""Turning what developers do with Kaizen's comments into memory signals.

Each signal has an id derived from the GitHub object it comes from (a reaction id, a
reply's comment id, the comment whose thread was resolved, …), so a redelivered webhook
or a poll that sees the same reaction again changes nothing: memory applies a signal id
once.

Sources: replies (``/kaizen good|bad [why]`` or plain words), resolved threads, a
suggestion committed or the commented lines changed (seen on the next push), reactions
(polled: GitHub sends no webhook for them; one taken back is retracted), and silence
until the PR closes (ignored).

Developers change their minds, and what they take back stops counting: a deleted reply
(memory refuses its words even if its creation or an edit is processed after the
deletion), an edited one (its new words count instead), a reopened thread (resolving it
again is a new signal, whose id carries the delivery so a redelivery is still the same
one).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from memory.scores import RETRACT_PREFIX
from memory.service import Memory, UnknownExperience, standing_signals
from memory.types import Outcome, Signal
from workers.review.render import parse_finding_marker

log = logging.getLogger(__name__)

_GOOD_WORDS = re.compile(
    r"(?i)\b(thanks|thank you|good catch|nice catch|fixed|done|agreed|great|helpful|"
    r"will fix|makes sense|lgtm)\b|👍|\+1"
)
_BAD_WORDS = re.compile(
    r"(?i)(not useful|not helpful|false positive|wrong|incorrect|irrelevant|noise|noisy|"
    r"disagree|won'?t fix|wontfix|not an issue|not a bug|intended|on purpose|"
    r"doesn'?t apply|nope|👎|-1\b)"
)


def classify_reply(body: str, app_slug: str) -> tuple[str | None, str | None]:
    """(signal kind, reason) for a reply to a Kaizen comment; (None, None) if unclear.

    ``/kaizen good|bad [why]`` is explicit; plain text counts only when it says so
    plainly. A reply that argues nothing either way teaches nothing.
    """
    text = body.strip()
    command = re.match(
        rf"^\s*/(?:kaizen|{re.escape(app_slug)})\s+(good|bad)\b[ \t]*(.*)",
        text,
        re.IGNORECASE | re.DOTALL,
    )
    if command:
        reason = command.group(2).strip() or None
        return command.group(1).lower(), reason[:2000] if reason else None
    if _BAD_WORDS.search(text):
        return "bad", text[:2000]
    if _GOOD_WORDS.search(text):
        return "good", text[:2000]
    return None, None


def _at(stamp: str | None) -> float:
    if not stamp:
        return time.time()
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return time.time()


@dataclass
class Applied:
    signal: str
    status: str  # applied | duplicate | pending | unknown | deleted


def apply(
    memory: Memory,
    *,
    signal_id: str,
    kind: str,
    experience_id: str,
    at: float,
    reason: str | None = None,
    actor: str | None = None,
) -> Applied:
    """Apply one signal to the experience a Kaizen comment recorded.

    The experience names the pattern the signal teaches; if the store cannot be read the
    error propagates and the task is retried later (its signal ids keep that safe).
    """
    experience = memory.experiences.get(experience_id)
    if experience is None:
        return Applied(signal_id, "unknown")
    signal = Signal(
        id=signal_id,
        kind=kind,
        experience_id=experience_id,
        repo=experience.repo,
        pattern=experience.pattern,
        at=at,
        reason=reason,
        actor=actor,
    )
    try:
        result = memory.apply_signal(signal)
    except UnknownExperience:
        return Applied(signal_id, "unknown")
    return Applied(signal_id, result.status)


def on_reply(
    memory: Memory, parent: dict[str, Any], reply: dict[str, Any], *, bot_login: str, app_slug: str
) -> Applied | None:
    """A reply in the thread of one of Kaizen's review comments."""
    experience_id = _bot_finding(parent, bot_login)
    user = (reply.get("user") or {}).get("login")
    if experience_id is None or user == bot_login:
        return None
    kind, reason = classify_reply(str(reply.get("body") or ""), app_slug)
    if kind is None:
        return None
    base = f"reply:{reply['id']}"
    if _edited_already(memory, experience_id, base):
        # The reply's creation arrived after an edit of it (workers race): the words it
        # carries are the old ones, which the edit already replaced.
        return Applied(base, "duplicate")
    return apply(
        memory,
        signal_id=base,
        kind=kind,
        experience_id=experience_id,
        at=_at(reply.get("created_at")),
        reason=reason,
        actor=user,
    )


def _standing_from(memory: Memory, experience_id: str, base: str) -> list[dict[str, Any]] | None:
    """The signal records on the experience that still count and came from one GitHub object:
    ``base`` itself (``reply:<id>``, ``resolved:<id>``) or a later word of it
    (``base@...``: an edited reply, a thread resolved again). None: no such experience."""
    experience = memory.experiences.get(experience_id)
    if experience is None:
        return None
    return [
        r
        for r in standing_signals(experience)
        if str(r.get("id")) == base or str(r.get("id")).startswith(base + "@")
    ]


def _edited_already(memory: Memory, experience_id: str, base: str) -> bool:
    """Whether an edit of this reply has been recorded (standing or taken back since)."""
    experience = memory.experiences.get(experience_id)
    records = experience.extra.get("signals", []) if experience is not None else []
    return any(str(r.get("id")).startswith(base + "@") for r in records)


def _take_back(memory: Memory, experience_id: str, records: list[dict[str, Any]]) -> Applied:
    """Retract each record; the result names the last one (they are one object's words)."""
    status, signal_id = "unknown", ""
    for record in records:
        signal_id = str(record["id"])
        try:
            status = memory.retract_signal(signal_id, experience_id).status
        except UnknownExperience:
            status = "unknown"
    return Applied(RETRACT_PREFIX + signal_id, status)


def _bot_finding(parent: dict[str, Any], bot_login: str) -> str | None:
    """The experience id behind one of Kaizen's own comments, else None."""
    if (parent.get("user") or {}).get("login") != bot_login:
        return None
    found = parse_finding_marker(parent.get("body"))
    return None if found is None else found.experience_id


def on_reply_deleted(
    memory: Memory, parent: dict[str, Any], reply: dict[str, Any], *, bot_login: str
) -> Applied | None:
    """A reply that taught something was deleted: what it said (and said in its edits) is
    taken back, and memory refuses its words from now on (:meth:`Memory.mark_gone`), so
    its creation or an edit processed after the deletion (out of order) does not count."""
    experience_id = _bot_finding(parent, bot_login)
    if experience_id is None:
        return None
    base = f"reply:{reply['id']}"
    try:
        memory.mark_gone(experience_id, base)
    except UnknownExperience:
        return Applied(RETRACT_PREFIX + base, "unknown")
    # read after the note: a creation written before it landed is seen here and taken
    # back; one written after it is refused by the store
    standing = _standing_from(memory, experience_id, base)
    if not standing:
        return Applied(RETRACT_PREFIX + base, "unknown")
    return _take_back(memory, experience_id, standing)


def on_reply_edited(
    memory: Memory, parent: dict[str, Any], reply: dict[str, Any], *, bot_login: str, app_slug: str
) -> Applied | None:
    """A reply was edited: its new words count instead of its old ones.

    "/kaizen good" edited to "/kaizen bad, we allow this" takes the acceptance back and
    records the rejection (with its reason); an edit that leaves the verdict and reason as
    they were changes nothing, and one that no longer says either way only takes back.
    The new word's id carries the edit's time and text, so a redelivered webhook is the
    same signal and every real edit a new one.
    """
    experience_id = _bot_finding(parent, bot_login)
    user = (reply.get("user") or {}).get("login")
    if experience_id is None or user == bot_login:
        return None
    base = f"reply:{reply['id']}"
    standing = _standing_from(memory, experience_id, base)
    if standing is None:
        return Applied(base, "unknown")
    kind, reason = classify_reply(str(reply.get("body") or ""), app_slug)
    if kind is None and not standing:
        return None
    if len(standing) == 1 and (standing[0].get("kind"), standing[0].get("reason")) == (
        kind,
        reason,
    ):
        return Applied(str(standing[0]["id"]), "duplicate")
    taken_back = _take_back(memory, experience_id, standing) if standing else None
    if kind is None:
        return taken_back
    body = str(reply.get("body") or "")
    digest = hashlib.sha256(body.encode()).hexdigest()[:12]
    stamp = str(reply.get("updated_at") or "")
    return apply(
        memory,
        signal_id=f"{base}@{stamp}#{digest}",
        kind=kind,
        experience_id=experience_id,
        at=_at(reply.get("updated_at") or reply.get("created_at")),
        reason=reason,
        actor=user,
    )


def _kaizen_thread(
    memory: Memory, thread: dict[str, Any], bot_login: str
) -> tuple[dict[str, Any], str, str, list[dict[str, Any]] | None] | None:
    """For a thread Kaizen started: its first comment, the experience behind it, the id
    base of its resolutions and those that still count (None: no such experience)."""
    comments = thread.get("comments") or []
    if not comments:
        return None
    first = comments[0]
    experience_id = _bot_finding(first, bot_login)
    if experience_id is None:
        return None
    base = f"resolved:{first['id']}"
    return first, experience_id, base, _standing_from(memory, experience_id, base)


def on_thread_resolved(
    memory: Memory,
    thread: dict[str, Any],
    *,
    bot_login: str,
    actor: str | None,
    delivery_id: str,
) -> Applied | None:
    """Resolved after the lines changed → addressed; resolved as is → dismissed.

    One resolution counts while it stands: resolving again after an unresolve is a new
    signal (its id carries the delivery, which a redelivery keeps), resolving a thread
    whose resolution still counts is not. Resolving a comment a push already counted as
    addressed confirms it and adds nothing.
    """
    found = _kaizen_thread(memory, thread, bot_login)
    if found is None:
        return None
    first, experience_id, base, standing = found
    if standing is None:
        return Applied(base, "unknown")
    if standing:
        return Applied(str(standing[0]["id"]), "duplicate")
    outdated = first.get("line") is None and first.get("position") is None
    if outdated and _standing_from(memory, experience_id, f"addressed:{first['id']}"):
        return Applied(f"addressed:{first['id']}", "duplicate")
    return apply(
        memory,
        signal_id=f"{base}@{delivery_id}",
        kind="addressed" if outdated else "dismissed",
        experience_id=experience_id,
        at=time.time(),
        actor=actor,
    )


def on_thread_unresolved(
    memory: Memory, thread: dict[str, Any], *, bot_login: str
) -> Applied | None:
    """A thread reopened: its resolution (dismissed or addressed) stops counting."""
    found = _kaizen_thread(memory, thread, bot_login)
    if found is None:
        return None
    _, experience_id, base, standing = found
    if not standing:
        return Applied(RETRACT_PREFIX + base, "unknown")
    return _take_back(memory, experience_id, standing)


class FileReader(Protocol):
    def file_at(self, repo: str, path: str, ref: str) -> str | None: ...


_SUGGESTION = re.compile(r"(?<!`)(`{3,})suggestion\n(.*?)\1", re.DOTALL)


def suggestion_of(body: str | None) -> str | None:
    match = _SUGGESTION.search(body or "")
    return match.group(2) if match else None


def on_push(
    memory: Memory,
    gh: FileReader,
    repo: str,
    head: str,
    bot_comments: Iterable[dict[str, Any]],
) -> list[Applied]:
    """After a push: a suggestion whose text is now in the file → applied; a commented line
    that changed (GitHub marks the comment outdated) → addressed."""
    out = []
    files: dict[str, str | None] = {}
    for comment in bot_comments:
        found = parse_finding_marker(comment.get("body"))
        if found is None:
            continue
        suggestion = suggestion_of(comment.get("body"))
        path = str(comment.get("path") or "")
        if suggestion is not None and path:
            if path not in files:
                files[path] = gh.file_at(repo, path, head)
            text = files[path]
            if text is not None and _contains_lines(text, suggestion):
                out.append(
                    apply(
                        memory,
                        signal_id=f"applied:{comment['id']}",
                        kind="applied",
                        experience_id=found.experience_id,
                        at=time.time(),
                    )
                )
                continue
        if comment.get("line") is None and comment.get("position") is None:
            out.append(
                apply(
                    memory,
                    signal_id=f"addressed:{comment['id']}",
                    kind="addressed",
                    experience_id=found.experience_id,
                    at=time.time(),
                )
            )
    return out


def _contains_lines(text: str, suggestion: str) -> bool:
    """Whether the suggested lines now appear, in order, as whole lines of the file."""
    wanted = [ln.rstrip() for ln in suggestion.rstrip("\n").split("\n")]
    if not any(wanted):
        return False  # a deletion can't be told apart from the line moving elsewhere
    lines = [ln.rstrip() for ln in text.split("\n")]
    n = len(wanted)
    return any(lines[i : i + n] == wanted for i in range(len(lines) - n + 1))


def on_reactions(
    memory: Memory,
    comment: dict[str, Any],
    reactions: Iterable[dict[str, Any]],
    *,
    bot_login: str,
    complete: bool = True,
) -> list[Applied]:
    """👍/👎 on a Kaizen comment, as GitHub lists them now.

    Each reaction is a signal (its id makes a repeated look harmless). A reaction that
    counted before and is gone from a ``complete`` list was taken back (a mis-click, a
    change of mind): it is retracted, so what a developer un-says stops teaching.
    """
    found = parse_finding_marker(comment.get("body"))
    if found is None:
        return []
    out = []
    present: set[str] = set()
    for reaction in reactions:
        present.add(f"reaction:{reaction.get('id')}")
        content = reaction.get("content")
        user = (reaction.get("user") or {}).get("login")
        if content not in ("+1", "-1") or not user or user == bot_login:
            continue
        out.append(
            apply(
                memory,
                signal_id=f"reaction:{reaction['id']}",
                kind="thumbs_up" if content == "+1" else "thumbs_down",
                experience_id=found.experience_id,
                at=_at(reaction.get("created_at")),
                actor=user,
            )
        )
    if complete:
        out += _retract_removed(memory, found.experience_id, present)
    return out


def _retract_removed(memory: Memory, experience_id: str, present: set[str]) -> list[Applied]:
    """Retract the reaction signals of an experience that GitHub no longer lists; one still
    parked from a storage outage is dropped instead of applied later."""
    for parked in memory.pending.all():
        if (
            parked.experience_id == experience_id
            and parked.id.startswith("reaction:")
            and parked.id not in present
        ):
            memory.pending.done(parked.id)
    experience = memory.experiences.get(experience_id)
    if experience is None:
        return []
    gone = [
        str(r["id"])
        for r in standing_signals(experience)
        if str(r.get("id", "")).startswith("reaction:") and str(r["id"]) not in present
    ]
    out: list[Applied] = []
    for signal_id in gone:
        try:
            result = memory.retract_signal(signal_id, experience_id)
        except UnknownExperience:
            return out
        out.append(Applied(RETRACT_PREFIX + signal_id, result.status))
    return out


def on_close(memory: Memory, bot_comments: Iterable[dict[str, Any]]) -> list[Applied]:
    """Silence until the PR closed: every comment nobody reacted to counts as ignored."""
    out = []
    for comment in bot_comments:
        found = parse_finding_marker(comment.get("body"))
        if found is None:
            continue
        try:
            experience = memory.experiences.get(found.experience_id)
        except Exception as exc:
            log.warning("experience store unavailable at close", extra={"error": str(exc)})
            experience = None
        if experience is not None and experience.outcome != Outcome.PENDING:
            continue
        out.append(
            apply(
                memory,
                signal_id=f"ignored:{found.experience_id}",
                kind="ignored",
                experience_id=found.experience_id,
                at=time.time(),
            )
        )
    return out
