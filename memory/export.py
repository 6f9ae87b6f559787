"""Turn recorded transitions into training files, so Kaizen's own runs can train a model.

Three JSONL formats, one JSON object per line:

``agent-lightning``
    Every transition, with its rewards. Field names follow Agent Lightning's data model
    (microsoft/agent-lightning, ``agentlightning/types/core.py``): a ``Triplet`` is
    ``prompt``, ``response``, ``reward``, ``metadata``, and a ``Rollout`` carries a
    ``final_reward``. Each line is such a triplet, flattened with its trajectory's id and
    step and both rewards: ``reward`` is the final reward when known, else the step reward
    (``step_reward``), so a trainer that reads only ``reward`` learns from outcomes.
    ``metadata`` is the transition's own metadata plus Kaizen's ``repo``, ``kind``,
    ``pattern``, ``experience_id``, ``latency_s`` and ``created_at`` (which win on clashes).

``openai-sft``
    OpenAI chat fine-tuning: ``{"messages": [...prompt, {"role": "assistant",
    "content": generation}]}`` for transitions whose effective reward is at least
    ``min_reward``: only what worked is imitated.

``dpo``
    OpenAI preference fine-tuning (documented at
    developers.openai.com/api/docs/guides/direct-preference-optimization):
    ``{"input": {"messages": [...]}, "preferred_output": [assistant message],
    "non_preferred_output": [assistant message]}``. Kaizen rarely answers the *same*
    prompt twice, so pairs are built from *similar* contexts: same ``kind`` and
    ``pattern``, and prompts similar by at least :data:`DPO_MIN_SIMILARITY`. The input is
    the preferred transition's prompt. Rejected generations must have a known final
    reward (a missing outcome is not a rejection). Each transition is used in at most
    one pair; pairs come out in a deterministic order.

Transitions with an empty generation (the call raised) are left out of ``openai-sft`` and
``dpo``: an empty answer is neither worth imitating nor a meaningful contrast.

Output is written line by line as transitions are read, never built in memory; ``dpo``
keeps a compact summary per candidate (ids, reward, prompt tokens) to find pairs, and
reads the two transitions of a pair back only when writing it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from memory.trajectories import TrajectoryStore, Transition

FORMATS = ("agent-lightning", "openai-sft", "dpo")

DPO_MIN_SIMILARITY = 0.5
"""Prompts less similar than this are different contexts, not a preference pair."""

Similarity = Callable[[str, str], float]

_TOKEN = re.compile(r"\w+")


def export(
    store: TrajectoryStore,
    fmt: str,
    out: TextIO,
    *,
    min_reward: float = 0.5,
    similarity: Similarity | None = None,
) -> int:
    """Write ``store``'s transitions to ``out`` in format ``fmt``; returns lines written.

    ``min_reward`` separates accepted from rejected generations (``openai-sft``, ``dpo``);
    ``similarity(prompt_a, prompt_b)`` compares the last user messages of two prompts for
    ``dpo`` (default: :func:`jaccard`, so no embedder is needed).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; formats: {', '.join(FORMATS)}")
    if not math.isfinite(min_reward):
        raise ValueError(f"min_reward must be finite, got {min_reward!r}")
    lines: Iterator[dict[str, Any]]
    if fmt == "agent-lightning":
        lines = (agent_lightning_record(t) for t in store.iter_transitions())
    elif fmt == "openai-sft":
        lines = _sft_lines(store, min_reward)
    else:
        lines = _dpo_lines(store, min_reward, similarity)
    written = 0
    for line in lines:
        out.write(json.dumps(line, ensure_ascii=False, allow_nan=False))
        out.write("\n")
        written += 1
    return written


def effective_reward(t: Transition) -> float | None:
    """The outcome when known, else the step reward: the best judgement available."""
    return t.final_reward if t.final_reward is not None else t.reward


def agent_lightning_record(t: Transition) -> dict[str, Any]:
    """One transition as an Agent Lightning style triplet line."""
    metadata = {
        **t.metadata,
        "repo": t.repo,
        "kind": t.kind,
        "pattern": t.pattern,
        "experience_id": t.experience_id,
        "latency_s": t.latency_s,
        "created_at": t.created_at,
    }
    return {
        "trajectory_id": t.trajectory_id,
        "step": t.step,
        "prompt": t.messages,
        "response": t.generation,
        "reward": effective_reward(t),
        "step_reward": t.reward,
        "final_reward": t.final_reward,
        "model": t.model,
        "usage": {
            "prompt_tokens": t.prompt_tokens,
            "completion_tokens": t.completion_tokens,
            "total_tokens": t.prompt_tokens + t.completion_tokens,
        },
        "metadata": metadata,
    }


def _assistant(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def _sft_lines(store: TrajectoryStore, min_reward: float) -> Iterator[dict[str, Any]]:
    for t in store.iter_transitions():
        reward = effective_reward(t)
        if reward is not None and reward >= min_reward and t.generation:
            yield {"messages": [*t.messages, _assistant(t.generation)]}


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message: what the model was asked this time."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(
                str(part.get("text", ""))
                for part in content
                if isinstance(part, dict) and part.get("type", "text") == "text"
            )
        return ""
    return ""


def tokens(text: str) -> frozenset[str]:
    """Lower-cased word tokens, the unit of :func:`jaccard`."""
    return frozenset(_TOKEN.findall(text.lower()))


def _jaccard_sets(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0  # an empty prompt is like nothing, not like another empty prompt
    return len(a & b) / len(a | b)


def jaccard(prompt_a: str, prompt_b: str) -> float:
    """Token-set Jaccard similarity of two texts (0 when either has no tokens)."""
    return _jaccard_sets(tokens(prompt_a), tokens(prompt_b))


@dataclass(frozen=True)
class _Candidate:
    trajectory_id: str
    step: int
    reward: float
    created_at: float
    generation_digest: str
    text: str | None  # only kept for a caller-supplied similarity
    token_set: frozenset[str] | None  # only kept for the default similarity


def _dpo_lines(
    store: TrajectoryStore, min_reward: float, similarity: Similarity | None
) -> Iterator[dict[str, Any]]:
    groups: dict[tuple[str, str | None], tuple[list[_Candidate], list[_Candidate]]] = {}
    for t in store.iter_transitions():
        reward = effective_reward(t)
        if reward is None or not t.generation:
            continue
        accepted = reward >= min_reward
        if not accepted and t.final_reward is None:
            continue  # a low step reward alone is not a known rejection
        text = last_user_text(t.messages)
        candidate = _Candidate(
            trajectory_id=t.trajectory_id,
            step=t.step,
            reward=reward,
            created_at=t.created_at,
            generation_digest=hashlib.sha256(t.generation.encode("utf-8")).hexdigest(),
            text=text if similarity is not None else None,
            token_set=tokens(text) if similarity is None else None,
        )
        group = groups.setdefault((t.kind, t.pattern), ([], []))
        group[0 if accepted else 1].append(candidate)

    for key in sorted(groups, key=lambda k: (k[0], k[1] is not None, k[1] or "")):
        accepted_list, rejected_list = groups[key]
        for good, bad in _pairs(accepted_list, rejected_list, similarity):
            preferred = store.get_step(good.trajectory_id, good.step)
            rejected = store.get_step(bad.trajectory_id, bad.step)
            if preferred is None or rejected is None:  # deleted while exporting
                continue
            yield {
                "input": {"messages": preferred.messages},
                "preferred_output": [_assistant(preferred.generation)],
                "non_preferred_output": [_assistant(rejected.generation)],
            }


def _pairs(
    accepted: list[_Candidate], rejected: list[_Candidate], similarity: Similarity | None
) -> Iterator[tuple[_Candidate, _Candidate]]:
    """Greedy pairing: best-rewarded accepted first, each with its most similar unused
    rejected (ties: the worst-rewarded, then the oldest). Deterministic for a given store."""
    accepted = sorted(accepted, key=lambda c: (-c.reward, c.created_at, c.trajectory_id, c.step))
    rejected = sorted(rejected, key=lambda c: (c.reward, c.created_at, c.trajectory_id, c.step))
    used = [False] * len(rejected)
    for good in accepted:
        best, best_score = -1, DPO_MIN_SIMILARITY
        for i, bad in enumerate(rejected):
            if used[i] or bad.generation_digest == good.generation_digest:
                continue  # the same answer on both sides teaches nothing
            score = _similar(good, bad, similarity)
            if score > best_score or (best < 0 and score >= best_score):
                best, best_score = i, score
        if best >= 0:
            used[best] = True
            yield good, rejected[best]


def _similar(a: _Candidate, b: _Candidate, similarity: Similarity | None) -> float:
    if similarity is None:
        assert a.token_set is not None and b.token_set is not None
        return _jaccard_sets(a.token_set, b.token_set)
    assert a.text is not None and b.text is not None
    return float(similarity(a.text, b.text))
