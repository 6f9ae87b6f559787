"""One small seam between Kaizen and whatever LLM answers its prompts.

Why a Protocol: the reviewer and the fix agent only need "messages in, text and token counts
out". Tests drive them with a few-line in-process fake, production with :class:`OpenAIChat`,
which speaks the OpenAI chat-completions protocol through the official SDK to *any*
OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama, LiteLLM, ...).

Structured output is a request, not a promise: many compatible servers refuse
``response_format={"type": "json_schema", ...}``. :class:`OpenAIChat` then remembers the
refusal and sends plain requests from then on; callers always validate what comes back.

Errors: the SDK already retries connection errors, 408/409/429 and 5xx (``max_retries``,
honouring ``retry-after``). What still fails becomes one :class:`LlmError` whose message says
what went wrong and never contains the API key.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import openai

if TYPE_CHECKING:
    from bot.settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 2

# A 400/422 whose text names one of these means "this server has no structured output".
_FORMAT_WORDS = ("response_format", "json_schema", "response format", "json schema")
# OpenAI echoes a wrong key partly masked ("Incorrect API key provided: sk-ab***wxyz"); even
# that fragment is left out of Kaizen's messages.
_ECHOED_KEY = re.compile(r"(?i)(api key provided:?\s*)\S+")


@dataclass
class ChatAnswer:
    """What one completion produced and cost."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float


class ChatModel(Protocol):
    """Anything that turns chat messages into an answer; see :class:`OpenAIChat`."""

    model: str

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        json_schema: dict[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
    ) -> ChatAnswer:
        """Answer ``messages``; with ``json_schema``, ask for JSON of that shape (best effort).

        Raises :class:`LlmError` when the endpoint fails for good.
        """
        ...


class LlmError(RuntimeError):
    """The endpoint failed for good (after the SDK's own retries).

    ``status`` is the HTTP status when there was one. The message is safe to log and to show:
    it never holds the API key.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def estimate_tokens(text: str) -> int:
    """About one token per four characters of English or code.

    Why a heuristic and not a tokenizer: Kaizen talks to many models with different
    tokenizers, and budgets only need to be roughly right and stable (this is also how the
    test fake counts). Real usage reported by the endpoint is what gets recorded.
    """
    return math.ceil(len(text) / 4)


def messages_tokens(messages: list[dict[str, str]]) -> int:
    """Estimated prompt size of ``messages``, with the few tokens of per-message framing."""
    return 3 + sum(3 + estimate_tokens(str(m.get("content") or "")) for m in messages)


class OpenAIChat:
    """:class:`ChatModel` over the official ``openai`` SDK, for any compatible ``base_url``.

    ``temperature`` is sent only when given, because some models (reasoning models) refuse
    any value but their default.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        temperature: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.timeout_s = timeout_s
        # Flips to False the first time the endpoint refuses response_format, for good:
        # asking again on every call would double the calls and the latency.
        self.structured_output = True
        self._secret = api_key
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=max_retries
        )

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        json_schema: dict[str, Any] | None = None,
        schema_name: str = "answer",
        max_tokens: int | None = None,
    ) -> ChatAnswer:
        use_schema = json_schema is not None and self.structured_output
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if use_schema:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": False},
            }
        started = time.monotonic()
        try:
            response = self._client.chat.completions.create(**request)
        except openai.APIStatusError as exc:
            if use_schema and exc.status_code in (400, 422) and _mentions_format(exc):
                self.structured_output = False
                logger.warning(
                    "LLM endpoint %s refused structured output (%s); using plain requests",
                    _safe_url(self.base_url),
                    exc.status_code,
                )
                return self.complete(
                    messages,
                    json_schema=json_schema,
                    schema_name=schema_name,
                    max_tokens=max_tokens,
                )
            # ``from None``: the SDK exception carries the request, Authorization header included.
            raise LlmError(self._describe(exc), status=exc.status_code) from None
        except openai.APIError as exc:  # connection errors and timeouts, after the retries
            raise LlmError(self._describe(exc)) from None
        latency = time.monotonic() - started
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content if choice is not None else None) or ""
        usage = response.usage
        prompt = usage.prompt_tokens if usage is not None else messages_tokens(messages)
        completion = usage.completion_tokens if usage is not None else estimate_tokens(text)
        return ChatAnswer(
            text=text,
            model=response.model or self.model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            latency_s=latency,
        )

    def _describe(self, exc: openai.APIError) -> str:
        """One line: which endpoint, what status, what it said; the API key scrubbed out."""
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}" if status is not None else type(exc).__name__
        detail = " ".join(str(exc.message or exc).split())[:500]
        text = (
            f"LLM endpoint {_safe_url(self.base_url)} (model {self.model}) failed: {what}: {detail}"
        )
        text = _ECHOED_KEY.sub(r"\1***", text)
        if self._secret:
            text = text.replace(self._secret, "***")
        return text


def _mentions_format(exc: openai.APIStatusError) -> bool:
    body = exc.body if isinstance(exc.body, dict) else {}
    param = str(body.get("param") or "")
    text = f"{exc.message} {param}".lower()
    return any(word in text for word in _FORMAT_WORDS)


def _safe_url(url: str) -> str:
    """``url`` without user:password@ and query string, which may hold credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def chat_from_settings(
    settings: Settings,
    *,
    timeout_s: float | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> OpenAIChat | None:
    """The configured endpoint, or ``None`` (Kaizen then runs its offline policy).

    The timeout is ``timeout_s`` if given, else the settings' ``llm_timeout_s``.
    """
    if timeout_s is None:
        timeout_s = float(getattr(settings, "llm_timeout_s", DEFAULT_TIMEOUT_S))
    if not settings.llm_base_url or settings.llm_api_key is None:
        return None
    key = settings.llm_api_key.get_secret_value()
    if not key:
        return None
    return OpenAIChat(
        base_url=settings.llm_base_url,
        api_key=key,
        model=settings.llm_model,
        timeout_s=timeout_s,
        max_retries=max_retries,
    )


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
# Reasoning models served without a reasoning parser (DeepSeek-R1, Qwen3 on Ollama or a
# plain vLLM) put their thinking before the answer, drafts of the JSON included: the
# answer is what follows it. Anchored at the start, so it costs one pass.
_REASONING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Strict JSON: NaN, Infinity and numbers that overflow to them would slip into line numbers
# and scores, where every comparison with them is false.
_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_not_json)


def extract_json(text: str) -> tuple[Any, str | None]:
    """The JSON value in a model's answer and None, or None and why there is none.

    Models without structured output wrap JSON in prose or a ```json fence; the first
    object found is taken, after a leading ``<think>…</think>`` block. A model stuck
    repeating ``[`` nests deeper than Python's stack allows: that is a reason to retry
    too, never an exception.
    """
    stripped = _REASONING.sub("", text, count=1).strip()
    if not stripped:
        return None, "the answer was empty"
    too_deep = False
    candidates = [stripped, *(m.group(1) for m in _FENCE.finditer(stripped))]
    for candidate in candidates:
        try:
            return _DECODER.decode(candidate.strip()), None
        except ValueError:
            continue
        except RecursionError:
            too_deep = True
    starts = [i for i, ch in enumerate(stripped) if ch == "{"][:50]
    for start in starts:
        try:
            value, _ = _DECODER.raw_decode(stripped, start)
        except ValueError:
            continue
        except RecursionError:
            too_deep = True
            continue
        if isinstance(value, dict):
            return value, None
    if too_deep:
        return None, "the answer nests too deep to read; answer one flat JSON object"
    return None, "no JSON object found in the answer"
