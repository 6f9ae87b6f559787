"""Tests of the fake OpenAI server, driven through the real ``openai`` SDK.

Why through the SDK: the fake is only worth something if the official client accepts its
answers exactly as it accepts OpenAI's (parsing, streaming, retries, error classes).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pydantic
import pytest
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import BaseModel

from tests.fakes.openai_api import (
    FakeAPIError,
    FakeOpenAI,
    FakeOpenAIError,
    fake_embedding,
    last_user_text,
)

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Review this diff please."}]


class Finding(BaseModel):
    """A small structured-output schema, shaped like what the LLM reviewer will ask for."""

    path: str
    line: int
    severity: str
    message: str


class Review(BaseModel):
    summary: str
    findings: list[Finding]


class ReadFile(BaseModel):
    """Arguments of a strict tool, as the fix agent will declare them."""

    path: str


REVIEW = {
    "summary": "One problem.",
    "findings": [{"path": "a.py", "line": 3, "severity": "high", "message": "SQL injection"}],
}


class Verdict(BaseModel):
    verdict: str
    score: int


VERDICT = {"verdict": "approve", "score": 4}
# What the SDK sends for ``Verdict`` in strict mode, written out to test plain ``create`` calls.
VERDICT_FORMAT: ResponseFormatJSONSchema = {
    "type": "json_schema",
    "json_schema": {
        "name": "Verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"verdict": {"type": "string"}, "score": {"type": "integer"}},
            "required": ["verdict", "score"],
            "additionalProperties": False,
        },
    },
}


READ_FILE_TOOL: ChatCompletionFunctionToolParam = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    """One server for the module: starting/stopping uvicorn costs ~0.2 s, ``reset`` is free."""
    with FakeOpenAI() as running:
        yield running


@pytest.fixture
def fake(server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    """A clean fake; leaving a test with unexplained problems fails it on teardown."""
    server.reset()
    yield server
    try:
        server.check()
    finally:
        server.reset()


@pytest.fixture
def client(fake: FakeOpenAI) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0) as sdk:
        yield sdk


# ---- basics ----------------------------------------------------------------------------------


def test_models_and_openai_headers(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    raw = client.models.with_raw_response.list()
    assert [m.id for m in raw.parse()] == ["fake-gpt", "fake-embedding"]
    assert raw.headers["x-request-id"].startswith("req_")
    assert int(raw.headers["openai-processing-ms"]) >= 1
    assert int(raw.headers["x-ratelimit-remaining-requests"]) > 0
    assert int(raw.headers["x-ratelimit-remaining-tokens"]) > 0
    assert fake.base_url.startswith("http://127.0.0.1:")
    assert fake.base_url.endswith("/v1")


def test_plain_chat_counts_tokens_and_records_requests(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script("Looks good to me.")
    completion = client.chat.completions.create(model="fake-gpt", messages=USER, seed=7)
    choice = completion.choices[0]
    assert choice.message.content == "Looks good to me."
    assert choice.message.role == "assistant"
    assert choice.finish_reason == "stop"
    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    assert completion.usage is not None
    # 3 reply priming + (3 + ceil(24 / 4)) for the message; ceil(17 / 4) for the answer.
    assert completion.usage.prompt_tokens == 3 + 3 + 6
    assert completion.usage.completion_tokens == 5
    assert completion.usage.total_tokens == 17
    assert fake.usage_total == {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    assert fake.requests[-1]["path"] == "/v1/chat/completions"
    assert fake.requests[-1]["body"]["seed"] == 7
    assert fake.chat_requests == [fake.requests[-1]["body"]]
    assert fake.pending == 0


def test_script_comes_before_rules_and_callables_see_the_body(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.on(lambda body: "security" in last_user_text(body), "No security issue.")
    fake.on(lambda body: True, lambda body: f"echo: {last_user_text(body)}")
    fake.script("scripted first")

    def ask(text: str) -> str | None:
        messages: list[ChatCompletionMessageParam] = [
            {"role": "user", "content": [{"type": "text", "text": text}]}
        ]
        reply = client.chat.completions.create(model="fake-gpt", messages=messages)
        return reply.choices[0].message.content

    assert ask("a security question") == "scripted first"
    assert ask("a security question") == "No security issue."
    assert ask("something else") == "echo: something else"


# ---- structured outputs -----------------------------------------------------------------------


def test_structured_output_parsed_by_the_sdk(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.script(REVIEW, Review.model_validate(REVIEW))
    for _ in range(2):
        completion = client.chat.completions.parse(
            model="fake-gpt", messages=USER, response_format=Review
        )
        parsed = completion.choices[0].message.parsed
        assert parsed == Review.model_validate(REVIEW)
    sent = fake.chat_requests[-1]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["strict"] is True


def test_answer_outside_strict_schema_is_a_test_problem(fake: FakeOpenAI) -> None:
    fake.script({"summary": "missing findings"})
    with (
        openai.OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=2) as client,
        pytest.raises(openai.InternalServerError) as caught,
    ):
        client.chat.completions.parse(model="fake-gpt", messages=USER, response_format=Review)
    assert "findings" in caught.value.message
    assert caught.value.code == "fake_openai_test_problem"
    assert len(fake.requests) == 1  # marked non-retryable: fails fast
    with pytest.raises(FakeOpenAIError, match="strict response_format schema 'Review'"):
        fake.check()
    fake.problems.clear()


def test_weak_json_returns_the_text_as_given() -> None:
    sloppy = "```json\n" + json.dumps(VERDICT) + "\n```\nHope this helps!"
    with (
        FakeOpenAI(weak_json=True) as fake,
        openai.OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0) as client,
    ):
        fake.script(sloppy, sloppy)
        completion = client.chat.completions.create(
            model="fake-gpt", messages=USER, response_format=VERDICT_FORMAT
        )
        content = completion.choices[0].message.content
        assert content == sloppy
        # What a tolerant client must do: pull the JSON out of the fences.
        match = re.search(r"```json\n(.*?)\n```", content or "", re.DOTALL)
        assert match is not None
        assert Verdict.model_validate_json(match.group(1)) == Verdict.model_validate(VERDICT)
        # The SDK's own parser does not cope, which is the point of this mode.
        with pytest.raises(pydantic.ValidationError):
            client.chat.completions.parse(model="fake-gpt", messages=USER, response_format=Verdict)


def test_strict_mode_json_checks_plain_create_too(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.script(VERDICT, "not json at all")
    completion = client.chat.completions.create(
        model="fake-gpt", messages=USER, response_format=VERDICT_FORMAT
    )
    assert json.loads(completion.choices[0].message.content or "") == VERDICT
    with pytest.raises(openai.InternalServerError, match="not valid JSON"):
        client.chat.completions.create(
            model="fake-gpt", messages=USER, response_format=VERDICT_FORMAT
        )
    fake.problems.clear()


def test_json_object_mode_requires_the_word_json(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="fake-gpt", messages=USER, response_format={"type": "json_object"}
        )
    assert caught.value.param == "messages"
    fake.script({"ok": True})
    completion = client.chat.completions.create(
        model="fake-gpt",
        messages=[{"role": "system", "content": "Answer in JSON."}, *USER],
        response_format={"type": "json_object"},
    )
    assert json.loads(completion.choices[0].message.content or "") == {"ok": True}


def test_non_strict_schema_is_refused_like_openai_does(client: openai.OpenAI) -> None:
    loose: dict[str, object] = {"type": "object", "properties": {"a": {"type": "string"}}}
    with pytest.raises(openai.BadRequestError, match="additionalProperties"):
        client.chat.completions.create(
            model="fake-gpt",
            messages=USER,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "Loose", "schema": loose, "strict": True},
            },
        )


# ---- streaming -------------------------------------------------------------------------------


def test_streaming_with_usage(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.script("The diff adds a retry loop.")
    stream = client.chat.completions.create(
        model="fake-gpt",
        messages=USER,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "The diff adds a retry loop."
    assert len(chunks) > 3
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == math.ceil(len(text) / 4)
    assert all(c.usage is None for c in chunks[:-1])


def test_raw_sse_ends_with_done(fake: FakeOpenAI) -> None:
    fake.script("hi")
    response = httpx.post(
        f"{fake.base_url}/chat/completions",
        headers={"Authorization": "Bearer test-key"},
        json={"model": "fake-gpt", "messages": USER, "stream": True},
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.endswith("data: [DONE]\n\n")
    events = [line for line in response.text.split("\n\n") if line]
    assert all(e.startswith("data: ") for e in events)
    assert '"usage"' not in response.text  # only with stream_options.include_usage


def test_stream_helper_accumulates_tool_calls(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.script({"tool_calls": [{"name": "read_file", "arguments": {"path": "src/app.py"}}]})
    with client.chat.completions.stream(
        model="fake-gpt",
        messages=USER,
        tools=[openai.pydantic_function_tool(ReadFile, name="read_file")],
    ) as stream:
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "read_file"
    assert call.function.parsed_arguments == ReadFile(path="src/app.py")
    assert final.choices[0].finish_reason == "tool_calls"


# ---- tool calls ------------------------------------------------------------------------------


def test_tool_call_round_trip(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.script(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
        "The file is fine.",
    )
    first = client.chat.completions.create(
        model="fake-gpt", messages=USER, tools=[READ_FILE_TOOL], tool_choice="auto"
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls or []
    assert len(calls) == 1
    call = calls[0]
    assert call.type == "function"
    assert call.id.startswith("call_")
    assert call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "a.py"}

    assistant: Any = choice.message.model_dump(exclude_none=True, exclude={"annotations"})
    history: list[ChatCompletionMessageParam] = [
        *USER,
        assistant,
        {"role": "tool", "tool_call_id": call.id, "content": "print('hi')"},
    ]
    second = client.chat.completions.create(
        model="fake-gpt", messages=history, tools=[READ_FILE_TOOL]
    )
    assert second.choices[0].message.content == "The file is fine."
    assert fake.chat_requests[-1]["messages"][-1]["tool_call_id"] == call.id


def test_tool_messages_must_answer_tool_calls(client: openai.OpenAI) -> None:
    call: Any = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path":"a.py"}'},
    }
    unanswered: list[ChatCompletionMessageParam] = [
        *USER,
        {"role": "assistant", "tool_calls": [call]},
        {"role": "user", "content": "and?"},
    ]
    orphan: list[ChatCompletionMessageParam] = [
        *USER,
        {"role": "tool", "tool_call_id": "call_1", "content": "x"},
    ]
    with pytest.raises(openai.BadRequestError, match="did not have response messages: call_1"):
        client.chat.completions.create(
            model="fake-gpt", messages=unanswered, tools=[READ_FILE_TOOL]
        )
    with pytest.raises(openai.BadRequestError, match="must be a response to a preceeding"):
        client.chat.completions.create(model="fake-gpt", messages=orphan, tools=[READ_FILE_TOOL])


def test_undeclared_tool_is_a_test_problem(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.script({"tool_calls": [{"name": "delete_repo", "arguments": {}}]})
    with pytest.raises(openai.InternalServerError, match="delete_repo"):
        client.chat.completions.create(model="fake-gpt", messages=USER, tools=[READ_FILE_TOOL])
    assert len(fake.problems) == 1
    fake.problems.clear()


def test_max_tokens_truncates_with_finish_reason_length(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script("word " * 50)
    completion = client.chat.completions.create(model="fake-gpt", messages=USER, max_tokens=5)
    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.content == ("word " * 50)[:20]
    assert completion.usage is not None
    assert completion.usage.completion_tokens == 5


# ---- embeddings ------------------------------------------------------------------------------


def test_embeddings_shape_and_determinism(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    texts = ["fix the flaky retry test", "fix the flaky retry logic", "update the README"]
    first = client.embeddings.create(model="fake-embedding", input=texts)  # base64 by default
    again = client.embeddings.create(
        model="fake-embedding", input=texts[0], encoding_format="float"
    )
    vectors = [d.embedding for d in first.data]
    assert [d.index for d in first.data] == [0, 1, 2]
    assert all(len(v) == 384 for v in vectors)
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, rel_tol=1e-5) for v in vectors)
    assert again.data[0].embedding == vectors[0] == fake_embedding(texts[0])

    def cosine(a: list[float], b: list[float]) -> float:
        return math.fsum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    assert first.usage.prompt_tokens > 0
    assert fake.usage_total["completion_tokens"] == 0

    short = client.embeddings.create(model="fake-embedding", input="x", dimensions=64)
    assert len(short.data[0].embedding) == 64
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="fake-embedding", input="")


# ---- errors ----------------------------------------------------------------------------------


def test_wrong_or_missing_api_key_is_401(fake: FakeOpenAI) -> None:
    with (
        openai.OpenAI(base_url=fake.base_url, api_key="sk-wrong-0123456789") as bad,
        pytest.raises(openai.AuthenticationError) as caught,
    ):
        bad.chat.completions.create(model="fake-gpt", messages=USER)
    assert caught.value.code == "invalid_api_key"
    assert caught.value.type == "invalid_request_error"
    assert isinstance(caught.value.body, dict)
    assert set(caught.value.body) == {"message", "type", "param", "code"}
    assert "sk-wrong-0123456789" not in caught.value.message  # masked like OpenAI does
    response = httpx.get(f"{fake.base_url}/models")
    assert response.status_code == 401
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_unknown_model_is_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-9", messages=USER)
    assert caught.value.code == "model_not_found"


def test_rate_limit_then_sdk_retry_succeeds(fake: FakeOpenAI) -> None:
    fake.fail_next(429, retry_after=0.01)
    fake.script("after the retry")
    with openai.OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=1) as client:
        completion = client.chat.completions.create(model="fake-gpt", messages=USER)
    assert completion.choices[0].message.content == "after the retry"
    assert len(fake.requests) == 2


def test_rate_limit_error_shape_without_retries(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.fail_next(429, times=2, retry_after=3)
    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="fake-gpt", messages=USER)
        assert caught.value.code == "rate_limit_exceeded"
        assert caught.value.response.headers["retry-after"] == "3"
        assert caught.value.response.headers["x-ratelimit-remaining-requests"] == "0"
    fake.script("ok")
    assert client.chat.completions.create(model="fake-gpt", messages=USER).choices


def test_scripted_server_errors_are_retried(fake: FakeOpenAI) -> None:
    fake.script(
        {"error": 503, "retry_after": 0.01},
        FakeAPIError(500, retry_after=0.01),
        lambda body: FakeAPIError(502, retry_after=0.01),
        "finally",
    )
    with openai.OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=3) as client:
        completion = client.chat.completions.create(model="fake-gpt", messages=USER)
    assert completion.choices[0].message.content == "finally"
    assert len(fake.requests) == 4


@pytest.mark.parametrize(
    ("extra", "param", "code"),
    [
        ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role", "invalid_value"),
        ({"messages": [{"role": "user"}]}, "messages[0].content", "missing_required_parameter"),
        ({"messages": []}, "messages", "empty_array"),
        ({"temperature": 3}, "temperature", "decimal_above_max_value"),
        ({"temperature": "hot"}, "temperature", "invalid_type"),
        ({"max_token": 100}, "max_token", "unknown_parameter"),
        ({"n": 2}, "n", "invalid_value"),
        ({"response_format": {"type": "xml"}}, "response_format.type", "invalid_value"),
        (
            {"messages": [{"role": "user", "content": [{"type": "video", "video": "x"}]}]},
            "messages[0].content[0].type",
            "invalid_value",
        ),
    ],
)
def test_bad_body_is_400_naming_the_param(
    client: openai.OpenAI, extra: dict[str, Any], param: str, code: str
) -> None:
    body = {"model": "fake-gpt", "messages": USER, **extra}
    with pytest.raises(openai.BadRequestError) as caught:
        client.post("/chat/completions", cast_to=object, body=body)
    assert caught.value.param == param
    assert caught.value.code == code
    assert caught.value.type == "invalid_request_error"


def test_unscripted_request_is_a_loud_500(fake: FakeOpenAI) -> None:
    with (
        openai.OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=2) as client,
        pytest.raises(openai.InternalServerError) as caught,
    ):
        client.chat.completions.create(model="fake-gpt", messages=USER)
    assert "unscripted request" in caught.value.message
    assert "Review this diff please." in caught.value.message
    assert len(fake.requests) == 1  # not retried
    with pytest.raises(FakeOpenAIError, match="unscripted"):
        fake.check()
    fake.problems.clear()


def test_context_exit_raises_on_problems() -> None:
    with pytest.raises(FakeOpenAIError, match="unscripted"), FakeOpenAI() as fake:
        response = httpx.post(
            f"{fake.base_url}/chat/completions",
            headers={"Authorization": "Bearer test-key"},
            json={"model": "fake-gpt", "messages": USER},
        )
        assert response.status_code == 500
        assert response.headers["x-should-retry"] == "false"
