"""A faithful fake of the OpenAI HTTP API (chat completions, embeddings, models) for tests.

Why a real HTTP server rather than mocking the SDK: Kaizen's LLM features talk to *any*
OpenAI-compatible endpoint through the official ``openai`` SDK. Mocking the SDK would only test
our assumptions about it. Serving real HTTP on 127.0.0.1 exercises the SDK's request building,
retries, SSE parser and structured-output parsing exactly as in production, while the tests stay
offline, fast and deterministic.

Usage::

    with FakeOpenAI() as fake:
        fake.script("Looks good to me.")
        client = openai.OpenAI(base_url=fake.base_url, api_key=fake.api_key)
        client.chat.completions.create(model="fake-gpt", messages=[...])

Answers (for ``script`` and ``on``) may be:

* a ``str``: the assistant's text;
* a ``dict`` shaped like an assistant message - keys among ``content``, ``tool_calls``,
  ``refusal``, ``finish_reason``. ``content`` may itself be a dict/list (serialised to JSON);
  ``tool_calls`` items are ``{"name": ..., "arguments": {...} | "raw json", "id"?: ...}``;
* a ``dict`` with an integer ``"error"`` key: an HTTP error the way OpenAI sends it, e.g.
  ``{"error": 503}`` or ``{"error": 429, "retry_after": 0.01, "code": "insufficient_quota"}``;
* any other ``dict`` or a pydantic model instance: a structured-output payload, serialised to JSON
  (wrap a payload whose keys look like a message as ``{"content": payload}``);
* a ``FakeAPIError`` (scripted, returned or raised): that HTTP error; any other returned
  exception: a retryable 500 ``server_error``;
* a callable taking the request body (``dict``) and returning one of the above.

Test bugs - an unscripted request, a scripted answer that the real API could not have produced
(invalid JSON in JSON mode, a tool the request did not declare...), a predicate that raises - are
answered with a non-retryable 500 naming the problem, recorded in ``problems``, and re-raised as
``FakeOpenAIError`` when the ``with`` block exits, so they cannot pass silently even if the code
under test swallows API errors.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Annotated, Any, Literal, Self, TypeAlias

import jsonschema
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

__all__ = [
    "Answer",
    "FakeAPIError",
    "FakeOpenAI",
    "FakeOpenAIError",
    "approx_tokens",
    "fake_embedding",
    "last_user_text",
]

JSONDict: TypeAlias = dict[str, Any]
AnswerValue: TypeAlias = str | Mapping[str, Any] | BaseModel | BaseException
Answer: TypeAlias = AnswerValue | Callable[[JSONDict], AnswerValue]
Predicate: TypeAlias = Callable[[JSONDict], bool]

_SYSTEM_FINGERPRINT = "fp_fake0penai"
_ORGANIZATION = "org-fake"
_RATE_LIMIT_REQUESTS = 10_000
_RATE_LIMIT_TOKENS = 2_000_000
_MESSAGE_KEYS = frozenset({"content", "tool_calls", "refusal", "finish_reason"})
_ERROR_KEYS = frozenset({"error", "message", "type", "code", "param", "retry_after"})
_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class FakeOpenAIError(AssertionError):
    """A test bug detected by the fake (unscripted request, impossible scripted answer...).

    Why an ``AssertionError``: it means the *test* is wrong, and pytest reports it as a failure.
    """


class FakeAPIError(Exception):
    """An HTTP error the fake answers with, in OpenAI's JSON error shape.

    Why an exception type: a script or a callable answer can ``return`` or ``raise`` it, which
    reads naturally in a test ("now the model is overloaded").
    """

    def __init__(
        self,
        status: int = 500,
        message: str | None = None,
        *,
        error_type: str | None = None,
        code: str | None = None,
        param: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
    ) -> None:
        default_message, default_type, default_code = _default_error(status)
        self.status = status
        self.message = message or default_message
        self.error_type = error_type or default_type
        self.code = code if code is not None else default_code
        self.param = param
        self.retry_after = retry_after
        self.should_retry = should_retry
        super().__init__(f"{status}: {self.message}")


class _ScriptBug(Exception):
    """Internal: the test's script/rules are wrong; becomes a 500 plus an entry in ``problems``."""


def _default_error(status: int) -> tuple[str, str, str | None]:
    """OpenAI's usual message/type/code per status, so scripted errors look like real ones."""
    table: dict[int, tuple[str, str, str | None]] = {
        400: ("Bad request.", "invalid_request_error", None),
        401: (
            "Incorrect API key provided. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
        ),
        403: ("You are not allowed to sample from this model", "invalid_request_error", None),
        404: ("The requested resource does not exist.", "invalid_request_error", None),
        408: ("Request timed out.", "invalid_request_error", None),
        409: ("Conflict.", "invalid_request_error", None),
        422: ("Unprocessable entity.", "invalid_request_error", None),
        429: (
            "Rate limit reached in organization org-fake on requests per min (RPM): "
            "Limit 60, Used 60, Requested 1. Please try again in 1s. "
            "Visit https://platform.openai.com/account/rate-limits to learn more.",
            "requests",
            "rate_limit_exceeded",
        ),
        500: (
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
        ),
        502: ("Bad gateway.", "server_error", None),
        503: ("The engine is currently overloaded, please try again later.", "server_error", None),
        504: ("Gateway timeout.", "server_error", None),
    }
    if status in table:
        return table[status]
    return (
        f"HTTP {status}",
        "server_error" if status >= 500 else "invalid_request_error",
        None,
    )


def _bad_request(message: str, param: str | None = None, code: str | None = None) -> FakeAPIError:
    """A 400 ``invalid_request_error``: the client sent something the real API would refuse."""
    return FakeAPIError(400, message, error_type="invalid_request_error", code=code, param=param)


# --------------------------------------------------------------------------------------------
# Request schemas: what the SDK sends, validated like the real API does (unknown keys refused)
# --------------------------------------------------------------------------------------------
#
# Unions are discriminated by callables returning tags of the form "key=value"; the "=" lets
# ``_param_path`` drop them from pydantic's error locations, so 400s name the parameter the
# way OpenAI does ("messages[0].content[1].type").


def _tag_by(key: str) -> Callable[[Any], str | None]:
    """Discriminate a union of objects by ``key`` (e.g. ``role``, ``type``)."""

    def pick(value: Any) -> str | None:
        if isinstance(value, Mapping):
            tag = value.get(key)
            return None if tag is None else f"{key}={tag}"
        return f"{key}=<not an object>"

    pick.__name__ = pick.__qualname__ = key  # pydantic reports it: names the missing key
    return pick


def _str_or_list(value: Any) -> str:
    """Discriminate ``str | list[...]`` without pydantic's branch names in error locations."""
    return "form=str" if isinstance(value, str) else "form=list"


def _tool_choice_kind(value: Any) -> str | None:
    """``tool_choice`` is a mode string or an object discriminated by ``type``."""
    if isinstance(value, Mapping):
        return _tag_by("type")(value)
    return "form=str"


class _Strict(BaseModel):
    """Base for request schemas: unknown keys and loose types are refused, as OpenAI does."""

    model_config = ConfigDict(extra="forbid", strict=True)


class _TextPart(_Strict):
    type: Literal["text"]
    text: str


class _ImageURL(_Strict):
    url: str
    detail: Literal["auto", "low", "high"] | None = None


class _ImagePart(_Strict):
    type: Literal["image_url"]
    image_url: _ImageURL


class _InputAudio(_Strict):
    data: str
    format: Literal["wav", "mp3"]


class _AudioPart(_Strict):
    type: Literal["input_audio"]
    input_audio: _InputAudio


class _FileRef(_Strict):
    file_data: str | None = None
    file_id: str | None = None
    filename: str | None = None


class _FilePart(_Strict):
    type: Literal["file"]
    file: _FileRef


class _RefusalPart(_Strict):
    type: Literal["refusal"]
    refusal: str


_UserPart = Annotated[
    Annotated[_TextPart, Tag("type=text")]
    | Annotated[_ImagePart, Tag("type=image_url")]
    | Annotated[_AudioPart, Tag("type=input_audio")]
    | Annotated[_FilePart, Tag("type=file")],
    Discriminator(_tag_by("type")),
]
_AssistantPart = Annotated[
    Annotated[_TextPart, Tag("type=text")] | Annotated[_RefusalPart, Tag("type=refusal")],
    Discriminator(_tag_by("type")),
]
_TextContent = Annotated[
    Annotated[str, Tag("form=str")] | Annotated[list[_TextPart], Tag("form=list")],
    Discriminator(_str_or_list),
]
_UserContent = Annotated[
    Annotated[str, Tag("form=str")] | Annotated[list[_UserPart], Tag("form=list")],
    Discriminator(_str_or_list),
]
_AssistantContent = Annotated[
    Annotated[str, Tag("form=str")] | Annotated[list[_AssistantPart], Tag("form=list")],
    Discriminator(_str_or_list),
]


class _FunctionCallOut(_Strict):
    name: str
    arguments: str


class _FunctionToolCall(_Strict):
    id: str
    type: Literal["function"]
    function: _FunctionCallOut


class _CustomCallOut(_Strict):
    name: str
    input: str


class _CustomToolCall(_Strict):
    id: str
    type: Literal["custom"]
    custom: _CustomCallOut


_ToolCallIn = Annotated[
    Annotated[_FunctionToolCall, Tag("type=function")]
    | Annotated[_CustomToolCall, Tag("type=custom")],
    Discriminator(_tag_by("type")),
]


class _SystemMessage(_Strict):
    role: Literal["system"]
    content: _TextContent
    name: str | None = None


class _DeveloperMessage(_Strict):
    role: Literal["developer"]
    content: _TextContent
    name: str | None = None


class _UserMessage(_Strict):
    role: Literal["user"]
    content: _UserContent
    name: str | None = None


class _AssistantMessage(_Strict):
    role: Literal["assistant"]
    content: _AssistantContent | None = None
    refusal: str | None = None
    name: str | None = None
    tool_calls: list[_ToolCallIn] | None = None
    function_call: _FunctionCallOut | None = None
    audio: dict[str, Any] | None = None


class _ToolMessage(_Strict):
    role: Literal["tool"]
    content: _TextContent
    tool_call_id: str


class _FunctionMessage(_Strict):
    role: Literal["function"]
    content: str | None
    name: str


_Message = Annotated[
    Annotated[_SystemMessage, Tag("role=system")]
    | Annotated[_DeveloperMessage, Tag("role=developer")]
    | Annotated[_UserMessage, Tag("role=user")]
    | Annotated[_AssistantMessage, Tag("role=assistant")]
    | Annotated[_ToolMessage, Tag("role=tool")]
    | Annotated[_FunctionMessage, Tag("role=function")],
    Discriminator(_tag_by("role")),
]


class _FunctionDef(_Strict):
    name: str = Field(pattern=_NAME_PATTERN)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class _FunctionTool(_Strict):
    type: Literal["function"]
    function: _FunctionDef


class _CustomTool(_Strict):
    type: Literal["custom"]
    custom: dict[str, Any]


_Tool = Annotated[
    Annotated[_FunctionTool, Tag("type=function")] | Annotated[_CustomTool, Tag("type=custom")],
    Discriminator(_tag_by("type")),
]


class _NamedFunction(_Strict):
    name: str


class _NamedFunctionChoice(_Strict):
    type: Literal["function"]
    function: _NamedFunction


class _NamedCustomChoice(_Strict):
    type: Literal["custom"]
    custom: _NamedFunction


class _AllowedTools(_Strict):
    mode: Literal["auto", "required"]
    tools: list[dict[str, Any]]


class _AllowedToolsChoice(_Strict):
    type: Literal["allowed_tools"]
    allowed_tools: _AllowedTools


_ToolChoice = Annotated[
    Annotated[Literal["none", "auto", "required"], Tag("form=str")]
    | Annotated[_NamedFunctionChoice, Tag("type=function")]
    | Annotated[_NamedCustomChoice, Tag("type=custom")]
    | Annotated[_AllowedToolsChoice, Tag("type=allowed_tools")],
    Discriminator(_tool_choice_kind),
]


class _FormatText(_Strict):
    type: Literal["text"]


class _FormatJsonObject(_Strict):
    type: Literal["json_object"]


class _JsonSchemaSpec(_Strict):
    name: str = Field(pattern=_NAME_PATTERN)
    description: str | None = None
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class _FormatJsonSchema(_Strict):
    type: Literal["json_schema"]
    json_schema: _JsonSchemaSpec


_ResponseFormat = Annotated[
    Annotated[_FormatText, Tag("type=text")]
    | Annotated[_FormatJsonObject, Tag("type=json_object")]
    | Annotated[_FormatJsonSchema, Tag("type=json_schema")],
    Discriminator(_tag_by("type")),
]


class _StreamOptions(_Strict):
    include_usage: bool | None = None
    include_obfuscation: bool | None = None


_Stop = Annotated[
    Annotated[str, Tag("form=str")] | Annotated[list[str], Tag("form=list"), Field(max_length=4)],
    Discriminator(_str_or_list),
]


class ChatCompletionRequest(_Strict):
    """Body of ``POST /v1/chat/completions``: every parameter the SDK can send.

    Why list parameters we ignore: the real API refuses unknown parameters, and a typo such as
    ``max_token`` should fail in tests as it would in production.
    """

    model: str
    messages: list[_Message] = Field(min_length=1)
    audio: dict[str, Any] | None = None
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    function_call: Any = None
    functions: list[dict[str, Any]] | None = None
    logit_bias: dict[str, int] | None = None
    logprobs: bool | None = None
    max_completion_tokens: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    metadata: dict[str, str] | None = None
    modalities: list[Literal["text", "audio"]] | None = None
    moderation: Any = None
    n: int | None = Field(default=None, ge=1, le=128)
    parallel_tool_calls: bool | None = None
    prediction: dict[str, Any] | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    prompt_cache_key: str | None = None
    prompt_cache_options: dict[str, Any] | None = None
    prompt_cache_retention: Literal["in_memory", "24h"] | None = None
    reasoning_effort: str | None = None
    response_format: _ResponseFormat | None = None
    safety_identifier: str | None = None
    seed: int | None = None
    service_tier: Literal["auto", "default", "flex", "scale", "priority", "fast"] | None = None
    stop: _Stop | None = None
    store: bool | None = None
    stream: bool | None = None
    stream_options: _StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    tool_choice: _ToolChoice | None = None
    tools: list[_Tool] | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    top_p: float | None = Field(default=None, ge=0, le=1)
    user: str | None = None
    verbosity: Literal["low", "medium", "high"] | None = None
    web_search_options: dict[str, Any] | None = None


class EmbeddingRequest(_Strict):
    """Body of ``POST /v1/embeddings``."""

    model: str
    input: Any  # str | list[str] | list[int] | list[list[int]]: checked by hand for one message
    dimensions: int | None = Field(default=None, ge=1)
    encoding_format: Literal["float", "base64"] | None = None
    user: str | None = None


# --------------------------------------------------------------------------------------------
# Validation errors -> OpenAI's 400s
# --------------------------------------------------------------------------------------------


def _param_path(loc: Sequence[int | str]) -> str:
    """``("messages", 0, "role=user", "content")`` -> ``"messages[0].content"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "=" in part:
            continue
        else:
            out = f"{out}.{part}" if out else part
    return out


def _json_type(value: Any) -> str:
    """Name a JSON value's type the way OpenAI's messages do."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


_EXPECTED_BY_ERROR = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a decimal",
    "float_parsing": "a decimal",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def _quote_choices(choices: Sequence[str]) -> str:
    """``['a', 'b', 'c']`` -> ``"'a', 'b', and 'c'"`` (OpenAI's wording)."""
    quoted = [f"'{c}'" for c in choices]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


def _error_from_validation(exc: ValidationError) -> FakeAPIError:
    """Translate pydantic's first error into OpenAI's wording, param and code."""
    err = exc.errors(include_url=False)[0]
    kind = err["type"]
    param = _param_path(err["loc"])
    ctx = err.get("ctx") or {}
    value = err.get("input")
    if kind in {"union_tag_invalid", "union_tag_not_found"} and not isinstance(value, Mapping):
        kind = "model_type"
    if kind == "missing":
        return _bad_request(
            f"Missing required parameter: '{param}'.", param, "missing_required_parameter"
        )
    if kind == "union_tag_not_found":
        key = str(ctx.get("discriminator", "")).removesuffix("()")
        key = key if key in {"role", "type"} else "type"
        full = f"{param}.{key}" if param else key
        return _bad_request(
            f"Missing required parameter: '{full}'.", full, "missing_required_parameter"
        )
    if kind == "union_tag_invalid":
        key, _, tag_value = str(ctx.get("tag", "")).partition("=")
        expected = [t.strip().strip("'").partition("=")[2] for t in ctx["expected_tags"].split(",")]
        full = f"{param}.{key}" if param else key
        return _bad_request(
            f"Invalid value: '{tag_value}'. Supported values are: {_quote_choices(expected)}.",
            full,
            "invalid_value",
        )
    if kind == "extra_forbidden":
        if "." not in param and "[" not in param:
            return _bad_request(
                f"Unrecognized request argument supplied: {param}", param, "unknown_parameter"
            )
        return _bad_request(f"Unknown parameter: '{param}'.", param, "unknown_parameter")
    if kind == "literal_error":
        expected = [e.strip().strip("'") for e in re.split(r",| or ", str(ctx.get("expected", "")))]
        choices = _quote_choices([e for e in expected if e])
        return _bad_request(
            f"Invalid value: '{value}'. Supported values are: {choices}.", param, "invalid_value"
        )
    if kind in _EXPECTED_BY_ERROR:
        wanted = _EXPECTED_BY_ERROR[kind]
        if err["loc"] and err["loc"][-1] == "form=list":  # a ``str | list`` union
            wanted = "one of a string or array"
        return _bad_request(
            f"Invalid type for '{param}': expected {wanted}, but got {_json_type(value)} instead.",
            param,
            "invalid_type",
        )
    if kind in {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}:
        below = kind.startswith("greater")
        bound = next(iter(ctx.values()), 0)
        relation = {
            "greater_than": ">",
            "greater_than_equal": ">=",
            "less_than": "<",
            "less_than_equal": "<=",
        }[kind]
        number = "decimal" if isinstance(bound, float) else "integer"
        return _bad_request(
            f"Invalid '{param}': {number} {'below minimum' if below else 'above maximum'} value. "
            f"Expected a value {relation} {bound:g}, but got {value} instead.",
            param,
            f"{number}_{'below_min' if below else 'above_max'}_value",
        )
    if kind == "too_short":
        if isinstance(value, list) and not value:
            return _bad_request(
                f"Invalid '{param}': empty array. Expected an array with minimum length "
                f"{ctx.get('min_length', 1)}, but got an empty array instead.",
                param,
                "empty_array",
            )
        return _bad_request(f"Invalid '{param}': {err['msg']}.", param, "invalid_value")
    if kind == "too_long":
        return _bad_request(
            f"Invalid '{param}': array too long. Expected an array with maximum length "
            f"{ctx.get('max_length')}, but got an array with length {len(value or [])} instead.",
            param,
            "array_above_max_length",
        )
    if kind == "string_pattern_mismatch":
        return _bad_request(
            f"Invalid '{param}': string does not match pattern. Expected a string that matches "
            f"the pattern '{ctx.get('pattern')}'.",
            param,
            "invalid_value",
        )
    return _bad_request(f"Invalid '{param}': {err['msg']}.", param or None, "invalid_value")


# --------------------------------------------------------------------------------------------
# Text helpers, tokens, embeddings, schemas
# --------------------------------------------------------------------------------------------


def _content_text(content: Any) -> str:
    """Plain text of a message ``content`` (string or content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(part.get("text") or part.get("refusal") or "")
            for part in content
            if isinstance(part, Mapping)
        ]
        return "\n".join(t for t in texts if t)
    return str(content)


def _message_text(message: Mapping[str, Any]) -> str:
    """Everything in a message that costs prompt tokens: text plus tool-call names/arguments."""
    text = _content_text(message.get("content"))
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or call.get("custom") or {}
        text += str(fn.get("name", "")) + str(fn.get("arguments", fn.get("input", "")))
    return text


def last_user_text(body: Mapping[str, Any]) -> str:
    """Text of the last ``user`` message of a chat request - the usual thing rules match on."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def approx_tokens(text: str) -> int:
    """About one token per four characters.

    Why not tiktoken: it is not a dependency, and tests need counts that are stable and
    plausible, not exact.
    """
    return math.ceil(len(text) / 4)


def _prompt_tokens(body: Mapping[str, Any]) -> int:
    """OpenAI-like accounting: 3 tokens per message of overhead plus 3 to prime the reply."""
    total = 3
    for message in body.get("messages") or []:
        total += 3 + approx_tokens(_message_text(message))
        if message.get("name"):
            total += 1
    if body.get("tools"):
        total += approx_tokens(json.dumps(body["tools"]))
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        total += approx_tokens(json.dumps(response_format.get("json_schema", {})))
    return total


def _unit(vector: list[float]) -> list[float]:
    """Scale to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


def _float32(vector: list[float]) -> list[float]:
    """Round to float32, what OpenAI actually serves (and what base64 encoding carries)."""
    return list(struct.unpack(f"<{len(vector)}f", struct.pack(f"<{len(vector)}f", *vector)))


_WORD = re.compile(r"\w+")


def fake_embedding(text: str, dim: int = 384) -> list[float]:
    """The deterministic unit vector the fake serves for ``text``.

    Why feature hashing and not a bare hash of the text: retrieval tests want "texts that share
    words are closer". Each lower-cased word is hashed into a signed bucket; a small component
    derived from the hash of the whole text keeps distinct texts distinct. Values are rounded to
    float32 so that ``float`` and ``base64`` responses decode to the same numbers.
    """
    words = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        words[digest % dim] += 1.0 if (digest >> 32) & 1 else -1.0
    raw = hashlib.shake_256(text.encode()).digest(4 * dim)
    noise = [n / 2**31 - 1.0 for n in struct.unpack(f"<{dim}I", raw)]
    words, noise = _unit(words), _unit(noise)
    if any(words):
        return _float32(_unit([w + 0.15 * n for w, n in zip(words, noise, strict=True)]))
    return _float32(noise)


def _is_token_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, int) and not isinstance(t, bool) for t in value)
    )


def _embedding_items(value: Any) -> list[str | list[int]]:
    """Normalise ``input`` (str, list of str, token ids, list of token ids) to a list of items.

    Why by hand: OpenAI answers every malformed ``input`` with the same terse 400, and a
    pydantic union would produce a noisier message than the real API.
    """
    items: list[Any]
    if isinstance(value, str) or _is_token_list(value):
        items = [value]
    elif isinstance(value, list):
        items = value
    else:
        items = []
    valid = all((isinstance(i, str) and i) or _is_token_list(i) for i in items)
    if not items or len(items) > 2048 or not valid:
        raise _bad_request(
            "'$.input' is invalid. Please check the API reference: "
            "https://platform.openai.com/docs/api-reference."
        )
    return items


def _strict_schema_problem(schema: Any, context: tuple[str, ...] = ()) -> str | None:
    """Why a strict schema would be refused by OpenAI, or ``None``.

    Strict mode requires every object to close ``additionalProperties`` and to list all its
    properties as ``required``; a client that forgets this fails in production, so it must
    fail in tests too.
    """
    if not isinstance(schema, Mapping):
        return None
    types = schema.get("type")
    if types == "object" or (isinstance(types, list) and "object" in types):
        if schema.get("additionalProperties") is not False:
            return (
                f"In context={context}, 'additionalProperties' is required to be supplied "
                "and to be false."
            )
        required = schema.get("required") or []
        missing = [key for key in schema.get("properties") or {} if key not in required]
        if missing:
            return (
                f"In context={context}, 'required' is required to be supplied and to be an "
                f"array including every key in properties. Missing '{missing[0]}'."
            )
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (schema.get(key) or {}).items():
            if problem := _strict_schema_problem(sub, (*context, key, name)):
                return problem
    for key in ("items", "not"):
        if problem := _strict_schema_problem(schema.get(key), (*context, key)):
            return problem
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        for index, sub in enumerate(schema.get(key) or []):
            if problem := _strict_schema_problem(sub, (*context, key, str(index))):
                return problem
    return None


def _check_schema(schema: Mapping[str, Any] | None, strict: bool, what: str, param: str) -> None:
    """Refuse invalid JSON Schemas (and non-strict-compatible ones in strict mode) with a 400."""
    if schema is None:
        return
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise _bad_request(f"Invalid schema for {what}: {exc.message}", param) from exc
    if strict and (problem := _strict_schema_problem(schema)):
        raise _bad_request(f"Invalid schema for {what}: {problem}", param)


def _schema_error(schema: Mapping[str, Any], value: Any) -> str | None:
    """First reason ``value`` does not fit ``schema``, or ``None``."""
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "<root>"
    return f"{error.message} (at {where})"


def _compact_json(value: Any) -> str:
    """JSON as models emit it: compact, UTF-8 kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


@dataclass
class _Reply:
    """An assistant reply ready to be served (non-streamed or streamed)."""

    content: str | None
    refusal: str | None = None
    tool_calls: list[JSONDict] = field(default_factory=list)
    finish_reason: str = "stop"


@dataclass
class _Failure:
    status: int
    retry_after: float | None
    path: str | None


class FakeOpenAI:
    """OpenAI-compatible HTTP server on 127.0.0.1 with scripted, deterministic answers.

    Why scripted answers rather than canned per-prompt fixtures: tests of the reviewer and the
    fix agent care about *sequences* (tool call, then final answer; failure, then retry), which a
    queue expresses directly; ``on`` covers order-independent calls.
    """

    def __init__(
        self,
        *,
        api_key: str = "test-key",
        models: Sequence[str] = ("fake-gpt",),
        embedding_models: Sequence[str] = ("fake-embedding",),
        embedding_dim: int = 384,
        weak_json: bool = False,
    ) -> None:
        self.api_key = api_key
        self.models = list(models)
        self.embedding_models = list(embedding_models)
        self.embedding_dim = embedding_dim
        self.weak_json = weak_json
        self.requests: list[JSONDict] = []
        self.usage_total: dict[str, int] = {
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "total_tokens": 0,
        }
        self.problems: list[str] = []
        self._script: deque[Answer] = deque()
        self._rules: list[tuple[Predicate, Answer]] = []
        self._failures: list[_Failure] = []
        self._lock = threading.RLock()
        self._ids = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self.app = self._build_app()

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Serve on a free 127.0.0.1 port from a daemon thread; returns once it accepts."""
        if self._server is not None:
            raise RuntimeError("FakeOpenAI is already started")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="fake-openai", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                raise RuntimeError("FakeOpenAI server failed to start")
            time.sleep(0.005)
        self._server, self._thread = server, thread

    def stop(self) -> None:
        """Shut the server down; safe to call twice. Never raises about test problems."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc_type is None:
            self.check()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what ``openai.OpenAI(base_url=...)`` expects."""
        if self._port is None:
            raise RuntimeError("FakeOpenAI is not started")
        return f"http://127.0.0.1:{self._port}/v1"

    # ---- scripting ---------------------------------------------------------------------------

    def script(self, *answers: Answer) -> None:
        """Queue answers for the next chat completions, consumed in order (retries included)."""
        with self._lock:
            self._script.extend(answers)

    def on(self, predicate: Predicate, answer: Answer) -> None:
        """Answer any chat request matching ``predicate`` (body dict) when the queue is empty.

        Rules are reusable and tried in registration order.
        """
        with self._lock:
            self._rules.append((predicate, answer))

    def fail_next(
        self,
        status: int = 429,
        times: int = 1,
        retry_after: float | None = None,
        *,
        path: str | None = None,
    ) -> None:
        """Fail the next ``times`` authenticated requests (optionally only to ``path``, e.g.
        ``"/v1/embeddings"``) with ``status``, before any scripted answer is consumed.

        ``retry_after`` (seconds, may be fractional) is sent as ``retry-after`` and
        ``retry-after-ms``, which the SDK honours - keep it small to keep tests fast.
        """
        with self._lock:
            self._failures.extend(_Failure(status, retry_after, path) for _ in range(times))

    def reset(self) -> None:
        """Forget scripts, rules, failures, recorded requests, usage and problems."""
        with self._lock:
            self._script.clear()
            self._rules.clear()
            self._failures.clear()
            self.requests.clear()
            self.problems.clear()
            for key in self.usage_total:
                self.usage_total[key] = 0

    @property
    def pending(self) -> int:
        """Scripted answers not consumed yet."""
        with self._lock:
            return len(self._script)

    @property
    def chat_requests(self) -> list[JSONDict]:
        """Bodies of the chat completion requests received, in order."""
        return [
            r["body"]
            for r in self.requests
            if r["path"] == "/v1/chat/completions" and isinstance(r["body"], dict)
        ]

    def check(self) -> None:
        """Raise ``FakeOpenAIError`` if a test bug was detected (see module docstring)."""
        with self._lock:
            problems = list(self.problems)
        if problems:
            raise FakeOpenAIError("FakeOpenAI detected test problems:\n- " + "\n- ".join(problems))

    # ---- HTTP plumbing -----------------------------------------------------------------------

    def _build_app(self) -> FastAPI:
        app = FastAPI(title="FakeOpenAI", docs_url=None, redoc_url=None, openapi_url=None)

        @app.get("/v1/models")
        async def list_models(request: Request) -> Response:
            return await self._handle(request, self._list_models)

        @app.get("/v1/models/{model_id:path}")
        async def retrieve_model(request: Request) -> Response:
            return await self._handle(request, self._retrieve_model)

        @app.post("/v1/chat/completions")
        async def chat_completions(request: Request) -> Response:
            return await self._handle(request, self._chat_completions)

        @app.post("/v1/embeddings")
        async def embeddings(request: Request) -> Response:
            return await self._handle(request, self._embeddings)

        @app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
        async def unknown(request: Request) -> Response:
            return await self._handle(request, self._unknown_route)

        return app

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _headers(self, started: float) -> dict[str, str]:
        """The informational headers OpenAI sends on every response."""
        with self._lock:
            served = len(self.requests)
            used_tokens = self.usage_total["total_tokens"]
        return {
            "x-request-id": f"req_{uuid.uuid4().hex}",
            "openai-processing-ms": str(max(1, round((time.perf_counter() - started) * 1000))),
            "openai-version": "2020-10-01",
            "openai-organization": _ORGANIZATION,
            "x-ratelimit-limit-requests": str(_RATE_LIMIT_REQUESTS),
            "x-ratelimit-limit-tokens": str(_RATE_LIMIT_TOKENS),
            "x-ratelimit-remaining-requests": str(max(0, _RATE_LIMIT_REQUESTS - served)),
            "x-ratelimit-remaining-tokens": str(max(0, _RATE_LIMIT_TOKENS - used_tokens)),
            "x-ratelimit-reset-requests": "6ms",
            "x-ratelimit-reset-tokens": "0s",
        }

    def _error_response(self, error: FakeAPIError, started: float) -> JSONResponse:
        headers = self._headers(started)
        if error.retry_after is not None:
            headers["retry-after"] = f"{error.retry_after:g}"
            headers["retry-after-ms"] = f"{error.retry_after * 1000:g}"
        if error.status == 429:
            headers["x-ratelimit-remaining-requests"] = "0"
        if error.should_retry is not None:
            headers["x-should-retry"] = "true" if error.should_retry else "false"
        body = {
            "error": {
                "message": error.message,
                "type": error.error_type,
                "param": error.param,
                "code": error.code,
            }
        }
        return JSONResponse(body, status_code=error.status, headers=headers)

    def _problem(self, message: str) -> FakeAPIError:
        """Record a test bug and turn it into a loud, non-retryable 500."""
        with self._lock:
            self.problems.append(message)
        return FakeAPIError(
            500,
            f"FakeOpenAI: {message}",
            error_type="server_error",
            code="fake_openai_test_problem",
            should_retry=False,
        )

    async def _handle(
        self,
        request: Request,
        route: Callable[[Request, Any, float], Response],
    ) -> Response:
        """Shared pipeline: record, authenticate, inject failures, parse JSON, route."""
        started = time.perf_counter()
        raw = await request.body()
        body: Any = None
        invalid_json = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body, invalid_json = raw.decode("utf-8", "replace"), True
        with self._lock:
            self.requests.append(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "headers": dict(request.headers),
                    "body": body,
                }
            )
        try:
            self._authenticate(request)
            self._maybe_fail(request.url.path)
            if invalid_json:
                raise _bad_request(
                    "We could not parse the JSON body of your request. (HINT: This likely means "
                    "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
                    "payload, but what was sent was not valid JSON.)"
                )
            return route(request, body, started)
        except FakeAPIError as error:
            return self._error_response(error, started)
        except _ScriptBug as bug:
            return self._error_response(self._problem(str(bug)), started)
        except Exception as exc:  # a bug in the fake itself: loud, not retried
            detail = "".join(traceback.format_exception_only(exc)).strip()
            return self._error_response(self._problem(f"internal error: {detail}"), started)

    def _authenticate(self, request: Request) -> None:
        header = request.headers.get("authorization", "")
        if not header:
            raise FakeAPIError(
                401,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY). "
                "You can obtain an API key from https://platform.openai.com/account/api-keys.",
                error_type="invalid_request_error",
                code=None,
            )
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or key.strip() != self.api_key:
            key = key.strip()
            masked = key[:3] + "*" * max(0, len(key) - 7) + key[-4:] if len(key) > 8 else "***"
            raise FakeAPIError(
                401,
                f"Incorrect API key provided: {masked}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                error_type="invalid_request_error",
                code="invalid_api_key",
            )

    def _maybe_fail(self, path: str) -> None:
        with self._lock:
            index = next((i for i, f in enumerate(self._failures) if f.path in (None, path)), None)
            if index is None:
                return
            failure = self._failures.pop(index)
        raise FakeAPIError(failure.status, retry_after=failure.retry_after)

    # ---- routes ------------------------------------------------------------------------------

    def _model_object(self, model_id: str) -> JSONDict:
        return {"id": model_id, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}

    def _list_models(self, request: Request, body: Any, started: float) -> Response:
        data = [self._model_object(m) for m in [*self.models, *self.embedding_models]]
        return JSONResponse({"object": "list", "data": data}, headers=self._headers(started))

    def _retrieve_model(self, request: Request, body: Any, started: float) -> Response:
        model_id = request.path_params["model_id"]
        if model_id not in self.models and model_id not in self.embedding_models:
            raise self._model_not_found(model_id)
        return JSONResponse(self._model_object(model_id), headers=self._headers(started))

    def _unknown_route(self, request: Request, body: Any, started: float) -> Response:
        problem = f"route {request.method} {request.url.path} is not implemented by the fake"
        with self._lock:
            self.problems.append(problem)
        raise FakeAPIError(
            404,
            f"Invalid URL ({request.method} {request.url.path})",
            error_type="invalid_request_error",
            code=None,
        )

    @staticmethod
    def _model_not_found(model: str) -> FakeAPIError:
        return FakeAPIError(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            error_type="invalid_request_error",
            code="model_not_found",
        )

    def _add_usage(self, prompt: int, completion: int) -> None:
        with self._lock:
            self.usage_total["prompt_tokens"] += prompt
            self.usage_total["completion_tokens"] += completion
            self.usage_total["total_tokens"] += prompt + completion

    # ---- embeddings --------------------------------------------------------------------------

    def _embeddings(self, request: Request, body: Any, started: float) -> Response:
        if not isinstance(body, dict):
            raise _bad_request("Invalid body: expected a JSON object.")
        try:
            req = EmbeddingRequest.model_validate(body)
        except ValidationError as exc:
            raise _error_from_validation(exc) from exc
        if req.model not in self.embedding_models:
            if req.model in self.models:
                raise _bad_request(
                    f"The model `{req.model}` does not support embeddings.", "model", None
                )
            raise self._model_not_found(req.model)
        items = _embedding_items(req.input)
        dim = req.dimensions or self.embedding_dim
        if dim > self.embedding_dim:
            raise _bad_request(
                f"This model's maximum dimensions is {self.embedding_dim}, but {dim} were "
                "requested.",
                "dimensions",
                "invalid_value",
            )
        data: list[JSONDict] = []
        prompt = 0
        for index, item in enumerate(items):
            text = item if isinstance(item, str) else "tokens:" + ",".join(map(str, item))
            prompt += approx_tokens(item) if isinstance(item, str) else len(item)
            vector = fake_embedding(text, dim)
            encoded: list[float] | str = vector
            if req.encoding_format == "base64":
                encoded = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        self._add_usage(prompt, 0)
        payload = {
            "object": "list",
            "data": data,
            "model": req.model,
            "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
        }
        return JSONResponse(payload, headers=self._headers(started))

    # ---- chat completions --------------------------------------------------------------------

    def _chat_completions(self, request: Request, body: Any, started: float) -> Response:
        if not isinstance(body, dict):
            raise _bad_request("Invalid body: expected a JSON object.")
        try:
            req = ChatCompletionRequest.model_validate(body)
        except ValidationError as exc:
            raise _error_from_validation(exc) from exc
        if req.model not in self.models:
            if req.model in self.embedding_models:
                raise FakeAPIError(
                    404,
                    "This is not a chat model and thus not supported in the "
                    "v1/chat/completions endpoint.",
                    error_type="invalid_request_error",
                    param="model",
                )
            raise self._model_not_found(req.model)
        self._check_chat_semantics(req, body)

        reply = self._reply_for(req, body)
        prompt = _prompt_tokens(body)
        completion = self._completion_tokens(reply)
        limit = min(
            (x for x in (req.max_tokens, req.max_completion_tokens) if x is not None),
            default=None,
        )
        if limit is not None and completion > limit:
            reply = self._truncate(reply, limit)
            completion = limit
        self._add_usage(prompt, completion)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        completion_id = f"chatcmpl-fake{self._next_id():020d}"
        created = int(time.time())
        headers = self._headers(started)
        if req.stream:
            include_usage = bool(req.stream_options and req.stream_options.include_usage)
            chunks = self._stream_chunks(
                completion_id, created, req.model, reply, usage if include_usage else None
            )
            return StreamingResponse(chunks, media_type="text/event-stream", headers=headers)
        message: JSONDict = {
            "role": "assistant",
            "content": reply.content,
            "refusal": reply.refusal,
            "annotations": [],
        }
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        payload = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
            "service_tier": "default",
            "system_fingerprint": _SYSTEM_FINGERPRINT,
        }
        return JSONResponse(payload, headers=headers)

    def _check_chat_semantics(self, req: ChatCompletionRequest, body: JSONDict) -> None:
        """Cross-field rules the real API enforces beyond the per-field schema."""
        if req.n not in (None, 1):
            raise _bad_request(
                "FakeOpenAI only supports n=1 (one choice per completion).", "n", "invalid_value"
            )
        if req.stream_options is not None and not req.stream:
            raise _bad_request(
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                "stream_options",
            )
        self._check_conversation(req)
        function_names = {t.function.name for t in req.tools or [] if isinstance(t, _FunctionTool)}
        if req.tool_choice is not None and not req.tools:
            raise _bad_request(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' "
                "are specified.",
                "tool_choice",
            )
        if req.parallel_tool_calls is not None and not req.tools:
            raise _bad_request(
                "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only "
                "allowed when 'tools' are specified.",
                "parallel_tool_calls",
            )
        if (
            isinstance(req.tool_choice, _NamedFunctionChoice)
            and req.tool_choice.function.name not in function_names
        ):
            raise _bad_request(
                f"Invalid value for 'tool_choice': function '{req.tool_choice.function.name}' "
                "is not in 'tools'.",
                "tool_choice",
            )
        for index, tool in enumerate(req.tools or []):
            if isinstance(tool, _FunctionTool):
                _check_schema(
                    tool.function.parameters,
                    bool(tool.function.strict),
                    f"function '{tool.function.name}'",
                    f"tools[{index}].function.parameters",
                )
        fmt = req.response_format
        if isinstance(fmt, _FormatJsonObject):
            texts = " ".join(_message_text(m) for m in body["messages"])
            if "json" not in texts.lower():
                raise _bad_request(
                    "'messages' must contain the word 'json' in some form, to use "
                    "'response_format' of type 'json_object'.",
                    "messages",
                )
        if isinstance(fmt, _FormatJsonSchema):
            _check_schema(
                fmt.json_schema.json_schema,
                bool(fmt.json_schema.strict),
                f"response_format '{fmt.json_schema.name}'",
                "response_format",
            )

    @staticmethod
    def _check_conversation(req: ChatCompletionRequest) -> None:
        """Tool-call bookkeeping the real API enforces, a classic bug of agent loops.

        Every assistant ``tool_calls`` must be answered by ``tool`` messages (one per id) before
        the conversation goes on, and a ``tool`` message must answer such a call.
        """
        open_ids: set[str] = set()
        opened_at = 0
        for index, message in enumerate(req.messages):
            if isinstance(message, _ToolMessage):
                if message.tool_call_id not in open_ids:
                    raise _bad_request(
                        "Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.",
                        f"messages.[{index}].role",
                    )
                open_ids.discard(message.tool_call_id)
                continue
            if open_ids:
                break
            if isinstance(message, _AssistantMessage):
                if message.tool_calls:
                    open_ids, opened_at = {c.id for c in message.tool_calls}, index
                elif message.content is None and not (
                    message.refusal or message.function_call or message.audio
                ):
                    raise _bad_request(
                        f"Missing required parameter: 'messages[{index}].content'.",
                        f"messages[{index}].content",
                        "missing_required_parameter",
                    )
        if open_ids:
            raise _bad_request(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(sorted(open_ids))}",
                f"messages.[{opened_at}].role",
            )

    def _next_answer(self, body: JSONDict) -> Answer:
        """Scripted answer first, then the first matching rule, else a loud test problem."""
        with self._lock:
            if self._script:
                return self._script.popleft()
            rules = list(self._rules)
        for predicate, answer in rules:
            try:
                matched = predicate(body)
            except Exception as exc:
                raise _ScriptBug(f"rule predicate {predicate!r} raised {exc!r}") from exc
            if matched:
                return answer
        last = last_user_text(body) or _message_text((body.get("messages") or [{}])[-1])
        raise _ScriptBug(
            "unscripted request: no scripted answer left and no rule matched "
            f"POST /v1/chat/completions (model={body.get('model')!r}, "
            f"{len(body.get('messages') or [])} messages, last user message: "
            f"{_shorten(last)!r}). Add fake.script(...) or fake.on(...)."
        )

    def _reply_for(self, req: ChatCompletionRequest, body: JSONDict) -> _Reply:
        """Resolve the next answer and check it is one the real API could have produced."""
        answer: Any = self._next_answer(body)
        if callable(answer) and not isinstance(answer, BaseModel | BaseException):
            try:
                answer = answer(body)
            except FakeAPIError as error:
                answer = error
            except Exception as exc:
                raise _ScriptBug(f"answer callable {answer!r} raised {exc!r}") from exc
        if isinstance(answer, FakeAPIError):
            raise answer
        if isinstance(answer, BaseException):
            raise FakeAPIError(500, str(answer) or None, error_type="server_error")
        if isinstance(answer, BaseModel):
            answer = {"content": answer.model_dump(mode="json")}
        if isinstance(answer, str):
            answer = {"content": answer}
        if not isinstance(answer, Mapping):
            raise _ScriptBug(f"unsupported answer {answer!r}: use str, dict, or a callable")
        if isinstance(answer.get("error"), int) and set(answer) <= _ERROR_KEYS:
            raise FakeAPIError(
                answer["error"],
                answer.get("message"),
                error_type=answer.get("type"),
                code=answer.get("code"),
                param=answer.get("param"),
                retry_after=answer.get("retry_after"),
            )
        is_message = set(answer) <= _MESSAGE_KEYS and bool(
            set(answer) & {"content", "tool_calls", "refusal"}
        )
        if not is_message:
            answer = {"content": answer}
        return self._build_reply(req, answer)

    def _build_reply(self, req: ChatCompletionRequest, answer: Mapping[str, Any]) -> _Reply:
        content: Any = answer.get("content")
        if isinstance(content, BaseModel):
            content = content.model_dump(mode="json")
        if content is not None and not isinstance(content, str):
            content = _compact_json(content)
        refusal = answer.get("refusal")
        tool_calls = [
            self._build_tool_call(req, call, i)
            for i, call in enumerate(answer.get("tool_calls") or [])
        ]
        if content is not None and refusal is None and not tool_calls:
            self._check_json_content(req, content)
        self._check_tool_choice(req, tool_calls)
        finish_reason = answer.get("finish_reason") or ("tool_calls" if tool_calls else "stop")
        return _Reply(content, refusal, tool_calls, finish_reason)

    def _check_json_content(self, req: ChatCompletionRequest, content: str) -> None:
        """In JSON modes the real API only emits valid (and, if strict, schema-valid) JSON."""
        fmt = req.response_format
        if self.weak_json or not isinstance(fmt, _FormatJsonObject | _FormatJsonSchema):
            return
        hint = "Fix the script, or use FakeOpenAI(weak_json=True) to emulate a weak model."
        try:
            parsed = json.loads(content)
        except ValueError:
            raise _ScriptBug(
                f"scripted answer {_shorten(content)!r} is not valid JSON but the request asked "
                f"for response_format {fmt.type!r}. {hint}"
            ) from None
        if not isinstance(parsed, dict):
            raise _ScriptBug(f"scripted answer must be a JSON object in {fmt.type!r} mode. {hint}")
        if isinstance(fmt, _FormatJsonSchema) and fmt.json_schema.strict:
            schema = fmt.json_schema.json_schema
            if schema is not None and (problem := _schema_error(schema, parsed)):
                raise _ScriptBug(
                    f"scripted answer does not match the strict response_format schema "
                    f"{fmt.json_schema.name!r}: {problem}. {hint}"
                )

    def _build_tool_call(self, req: ChatCompletionRequest, call: Any, index: int) -> JSONDict:
        """``{"name", "arguments"}`` (or OpenAI's own shape) -> a proper tool call with an id."""
        if not isinstance(call, Mapping):
            raise _ScriptBug(f"tool_calls[{index}] must be a dict, got {call!r}")
        nested = call.get("function")
        spec: Mapping[str, Any] = nested if isinstance(nested, Mapping) else call
        name = spec.get("name")
        arguments: Any = spec.get("arguments", {})
        if not isinstance(name, str):
            raise _ScriptBug(f"tool_calls[{index}] needs a 'name'")
        if isinstance(arguments, BaseModel):
            arguments = arguments.model_dump(mode="json")
        args_text = arguments if isinstance(arguments, str) else _compact_json(arguments)
        tools = {
            t.function.name: t.function for t in req.tools or [] if isinstance(t, _FunctionTool)
        }
        if name not in tools:
            raise _ScriptBug(
                f"scripted tool call {name!r} but the request declares "
                f"{sorted(tools) or 'no tools'}; the real API cannot call undeclared tools"
            )
        definition = tools[name]
        if definition.strict and definition.parameters is not None:
            try:
                parsed = json.loads(args_text)
            except ValueError:
                raise _ScriptBug(
                    f"arguments of strict tool {name!r} are not valid JSON: {args_text!r}"
                ) from None
            if problem := _schema_error(definition.parameters, parsed):
                raise _ScriptBug(f"arguments of strict tool {name!r} do not fit: {problem}")
        call_id = call.get("id") or f"call_fake{self._next_id():015d}"
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": args_text},
        }

    def _check_tool_choice(self, req: ChatCompletionRequest, calls: list[JSONDict]) -> None:
        """A scripted answer must obey tool_choice / parallel_tool_calls like the real API."""
        choice = req.tool_choice
        if calls and choice == "none":
            raise _ScriptBug("scripted tool calls but the request set tool_choice='none'")
        if not calls and (choice == "required" or isinstance(choice, _NamedFunctionChoice)):
            raise _ScriptBug(f"request forces a tool call (tool_choice={choice!r}), script one")
        if isinstance(choice, _NamedFunctionChoice) and any(
            c["function"]["name"] != choice.function.name for c in calls
        ):
            raise _ScriptBug(f"request forces tool {choice.function.name!r}, script that one")
        if len(calls) > 1 and req.parallel_tool_calls is False:
            raise _ScriptBug("scripted several tool calls but parallel_tool_calls is false")

    @staticmethod
    def _completion_tokens(reply: _Reply) -> int:
        total = approx_tokens(reply.content or "") + approx_tokens(reply.refusal or "")
        for call in reply.tool_calls:
            total += approx_tokens(call["function"]["name"] + call["function"]["arguments"])
        return total

    @staticmethod
    def _truncate(reply: _Reply, limit: int) -> _Reply:
        """Cut the completion at ``limit`` tokens, as ``max_tokens`` does: finish_reason length."""
        budget = limit * 4
        content = reply.content
        if content is not None:
            content = content[:budget]
            budget -= len(content)
        calls: list[JSONDict] = []
        for call in reply.tool_calls:
            if budget <= 0:
                break
            arguments = call["function"]["arguments"][:budget]
            budget -= len(arguments)
            calls.append({**call, "function": {**call["function"], "arguments": arguments}})
        return _Reply(content, reply.refusal, calls, "length")

    @staticmethod
    def _stream_chunks(
        completion_id: str,
        created: int,
        model: str,
        reply: _Reply,
        usage: JSONDict | None,
    ) -> Iterator[bytes]:
        """SSE chunks like OpenAI's: role, deltas, finish_reason, optional usage, ``[DONE]``."""
        base: JSONDict = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "service_tier": "default",
            "system_fingerprint": _SYSTEM_FINGERPRINT,
        }

        def event(delta: JSONDict, finish_reason: str | None = None) -> bytes:
            chunk = {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
                ],
            }
            if usage is not None:
                chunk["usage"] = None
            return f"data: {json.dumps(chunk)}\n\n".encode()

        first: JSONDict = {"role": "assistant", "content": "", "refusal": None}
        if reply.content is None:
            first["content"] = None
        yield event(first)
        for piece in re.findall(r"\s*\S+|\s+", reply.content or ""):
            yield event({"content": piece})
        for piece in re.findall(r"\s*\S+|\s+", reply.refusal or ""):
            yield event({"refusal": piece})
        for index, call in enumerate(reply.tool_calls):
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            yield event({"tool_calls": [head]})
            arguments = call["function"]["arguments"]
            for start in range(0, len(arguments), 16):
                piece = arguments[start : start + 16]
                yield event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield event({}, reply.finish_reason)
        if usage is not None:
            yield f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
        yield b"data: [DONE]\n\n"
