"""``workers.llm.OpenAIChat`` against FakeOpenAI over real HTTP, through the official SDK.

Why over HTTP: what matters here is what the SDK really sends (response_format, the key
in the Authorization header, retries) and how real error responses come back; a mocked SDK
would only restate our assumptions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from bot.settings import Settings
from tests.fakes.openai_api import FakeAPIError, FakeOpenAI
from tests.unit.test_llm_reviewer import answer, finding, small_diff
from workers.llm import LlmError, OpenAIChat, chat_from_settings
from workers.review.llm_reviewer import FINDINGS_SCHEMA, llm_review

API_KEY = "sk-kaizen-" + "Hq3ZtV8mK1xLw6RpY2bN"
MESSAGES = [{"role": "user", "content": "Review this."}]
REJECTED = FakeAPIError(
    400,
    "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
    param="response_format",
)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=API_KEY) as server:
        yield server


def make_chat(fake: FakeOpenAI, **kwargs: Any) -> OpenAIChat:
    options: dict[str, Any] = {"timeout_s": 10.0, "max_retries": 0}
    options.update(kwargs)
    return OpenAIChat(base_url=fake.base_url, api_key=fake.api_key, model="fake-gpt", **options)


def no_structured_output(payload: str) -> Any:
    """An endpoint that refuses response_format and answers plain requests with ``payload``."""

    def reply(body: dict[str, Any]) -> Any:
        return REJECTED if "response_format" in body else payload

    return reply


def test_structured_output_is_requested_with_the_schema_and_usage_reported(
    fake: FakeOpenAI,
) -> None:
    fake.script({"content": {"findings": []}})
    chat = make_chat(fake)

    result = chat.complete(MESSAGES, json_schema=FINDINGS_SCHEMA, schema_name="review")

    assert json.loads(result.text) == {"findings": []}
    assert result.model == "fake-gpt" and result.prompt_tokens > 0 < result.completion_tokens
    (body,) = fake.chat_requests
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "review", "schema": FINDINGS_SCHEMA, "strict": False},
    }
    assert fake.requests[0]["headers"]["authorization"] == f"Bearer {API_KEY}"


def test_rejected_response_format_falls_back_to_plain_requests_and_is_remembered(
    fake: FakeOpenAI,
) -> None:
    fake.on(lambda body: True, no_structured_output('Here: {"findings": []}'))
    chat = make_chat(fake)

    first = chat.complete(MESSAGES, json_schema=FINDINGS_SCHEMA)
    second = chat.complete(MESSAGES, json_schema=FINDINGS_SCHEMA)

    assert first.text == second.text == 'Here: {"findings": []}'
    assert ["response_format" in body for body in fake.chat_requests] == [True, False, False]
    assert chat.structured_output is False


def test_transient_errors_are_retried_by_the_sdk(fake: FakeOpenAI) -> None:
    fake.fail_next(503, times=2, retry_after=0.01)
    fake.script("fine")

    assert make_chat(fake, max_retries=2).complete(MESSAGES).text == "fine"
    assert len(fake.chat_requests) == 3


@pytest.mark.parametrize("case", ["echoed-key", "wrong-key", "down"])
def test_llm_error_is_clear_and_never_contains_the_api_key(fake: FakeOpenAI, case: str) -> None:
    chat = make_chat(fake, max_retries=1)
    if case == "echoed-key":  # a misbehaving proxy echoing the Authorization header
        fake.script(FakeAPIError(400, f"bad header 'Authorization: Bearer {API_KEY}'"))
    elif case == "wrong-key":  # OpenAI echoes a wrong key partly masked
        chat = OpenAIChat(base_url=fake.base_url, api_key=API_KEY + "x", model="fake-gpt")
    else:
        fake.fail_next(503, times=3)

    with pytest.raises(LlmError) as raised:
        chat.complete(MESSAGES)

    message = str(raised.value)
    assert API_KEY not in message and API_KEY[-4:] not in message
    assert fake.base_url in message and "fake-gpt" in message
    assert raised.value.status == {"echoed-key": 400, "wrong-key": 401, "down": 503}[case]
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    if case == "down":
        assert len(fake.chat_requests) == 2  # one try plus the one retry allowed


def test_llm_review_end_to_end_over_http_with_a_model_lacking_structured_output(
    fake: FakeOpenAI,
) -> None:
    diff, heads = small_diff()
    payload = "```json\n" + answer(finding("app.py", 40, severity="high")) + "\n```"
    fake.on(lambda body: True, no_structured_output(payload))

    result = llm_review(diff, chat=make_chat(fake), file_text=heads.get)

    assert result.ok, result.errors
    assert [(f.path, f.line, f.severity) for f in result.findings] == [("app.py", 40, "high")]
    assert result.prompt_tokens == fake.usage_total["prompt_tokens"]  # refusals are not billed
    assert API_KEY not in json.dumps(fake.chat_requests)


def test_chat_from_settings_needs_both_url_and_key(fake: FakeOpenAI) -> None:
    assert chat_from_settings(Settings()) is None
    assert chat_from_settings(Settings(llm_base_url=fake.base_url)) is None
    assert chat_from_settings(Settings(llm_api_key=SecretStr(API_KEY))) is None

    chat = chat_from_settings(
        Settings(llm_base_url=fake.base_url, llm_api_key=SecretStr(API_KEY), llm_model="fake-gpt")
    )

    assert isinstance(chat, OpenAIChat) and chat.model == "fake-gpt"
    assert chat.timeout_s == Settings().llm_timeout_s
    fake.script("ok")
    assert chat.complete(MESSAGES).text == "ok"
