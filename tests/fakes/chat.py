"""An in-process ChatModel for unit tests of what reads model answers (reviewer, critic,
fixer): it answers from a queue, then with a default, and keeps every prompt it was shown.
Integration tests talk to the fake OpenAI-compatible server instead (``openai_api.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from workers.llm import ChatAnswer, estimate_tokens, messages_tokens

Answer = str | Exception | Callable[[list[dict[str, str]]], str]
"""A text, an endpoint failure to raise, or a function of the prompt."""


class FakeChat:
    """A ChatModel answering from a queue, then with ``default``; records every prompt."""

    model = "fake-model"

    def __init__(self, *answers: Answer, default: Answer) -> None:
        self.answers = list(answers)
        self.default = default
        self.requests: list[list[dict[str, str]]] = []
        self.schemas: list[dict[str, Any] | None] = []

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        json_schema: dict[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
    ) -> ChatAnswer:
        self.requests.append([dict(m) for m in messages])
        self.schemas.append(json_schema)
        answer = self.answers.pop(0) if self.answers else self.default
        if callable(answer) and not isinstance(answer, Exception):
            answer = answer(messages)
        if isinstance(answer, Exception):
            raise answer
        prompt = messages_tokens(messages) + estimate_tokens(json.dumps(json_schema))
        return ChatAnswer(answer, self.model, prompt, estimate_tokens(answer), 0.01)
