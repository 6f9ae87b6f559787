"""Structured logging with context fields and secret redaction.

Every process (web app, workers, CLI) calls :func:`configure_logging` once at start-up.
Records are written to stderr as one JSON object per line, which log shippers index
without parsing rules, or as one readable line per record for people at a terminal.

Two things make these logs safe and useful for a GitHub App:

* Context. A webhook delivery fans out into queued tasks and API calls; wrapping the work
  in :func:`log_context` stamps every record inside with ``delivery_id``,
  ``installation_id``, ``repo``, ``event`` and ``task_id``, so one delivery can be followed
  end to end. It is built on :mod:`contextvars`, so it follows asyncio tasks; a new thread
  starts with an empty context (copy it with :func:`contextvars.copy_context` if needed).
* Redaction. Exceptions and third-party messages routinely contain tokens (installation
  tokens in clone URLs, ``Authorization`` headers in HTTP errors, webhook signatures).
  Everything the handler writes, message, extras, context and tracebacks, passes through
  a :class:`Redactor` first. It only protects what goes through this handler; other
  handlers a library installs are not covered.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from types import MappingProxyType

__all__ = [
    "CONTEXT_FIELDS",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "Redactor",
    "configure_logging",
    "current_log_context",
    "is_sensitive_key",
    "log_context",
    "redact",
]

REDACTED = "[REDACTED]"
"""What a secret is replaced with. Recognisable prefixes (``ghs_``, ``sk-``) are kept so
a reader still knows which kind of credential was there."""

CONTEXT_FIELDS: tuple[str, ...] = ("delivery_id", "installation_id", "repo", "event", "task_id")
"""The context fields every part of Kaizen sets; :func:`log_context` accepts others too."""

MIN_SECRET_LENGTH = 6
"""Exact secrets shorter than this are not redacted: replacing a three-letter development
secret everywhere would mangle every log line, and real secrets are long."""

# --- Redaction ------------------------------------------------------------------------

_Replacement = str | Callable[[re.Match[str]], str]

_AUTH_HEADER_RE = re.compile(
    r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|token|basic|digest|jwt)\s+)?[^\s\"',;}]+"
)
# Keys start at a token boundary and the prefix is bounded: an unbounded lazy prefix makes
# the search quadratic on long runs like "a_a_a_..." (a 40 kB line took half a minute).
_SENSITIVE_KEY = (
    r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,40}?(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|token|credentials?|signature|sig)"
)
_KEY_VALUE_RE = re.compile(rf"(?i)({_SENSITIVE_KEY})([\"']?\s*[=:]\s*[\"']?)[^\s\"'&,;)}}]+")


def _keep_auth_scheme(match: re.Match[str]) -> str:
    """``Authorization: Bearer [REDACTED]``: keep the header and scheme for debugging."""
    scheme = f"{match[2]} " if match[2] else ""
    return f"{match[1]}{scheme}{REDACTED}"


_RULES: tuple[tuple[re.Pattern[str], _Replacement], ...] = (
    # PEM private keys, including a block cut off before its END line.
    (
        re.compile(
            r"-----BEGIN ([A-Z0-9 ]*?)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.S
        ),
        rf"-----BEGIN \1PRIVATE KEY-----{REDACTED}-----END \1PRIVATE KEY-----",
    ),
    # Credentials in URLs: https://user:pass@host -> https://[REDACTED]@host
    (re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}://)[^\s/?#@]+@"), rf"\1{REDACTED}@"),
    (_AUTH_HEADER_RE, _keep_auth_scheme),
    # password=..., "api_key": "...", client_secret: ..., ?token=...
    (_KEY_VALUE_RE, rf"\1\2{REDACTED}"),
    # GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh, fine-grained.
    (re.compile(r"\b(gh[pousr]_)[A-Za-z0-9]{16,}"), rf"\1{REDACTED}"),
    (re.compile(r"\b(github_pat_)[A-Za-z0-9_]{16,}"), rf"\1{REDACTED}"),
    (re.compile(r"\b(v1\.)[0-9a-f]{40}\b"), rf"\1{REDACTED}"),
    # JSON Web Tokens (the App's own JWT, OIDC tokens): header.payload.signature
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), REDACTED),
    # Webhook signatures (X-Hub-Signature, X-Hub-Signature-256).
    (re.compile(r"(?i)\b(sha1|sha256)=[0-9a-f]{16,}"), rf"\1={REDACTED}"),
    # OpenAI-style API keys (sk-..., sk-proj-..., sk-ant-...).
    (re.compile(r"\b(sk-)[A-Za-z0-9_-]{16,}"), rf"\1{REDACTED}"),
    # Bare "Bearer <x>" / "token <x>" outside a header. "token" also precedes ordinary
    # words ("token expired"), so there it needs something credential-shaped.
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    (
        re.compile(r"(?i)\b(token)\s+(?=[A-Za-z0-9._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,}"),
        rf"\1 {REDACTED}",
    ),
)

# For each rule in _RULES, lower-case substrings at least one of which every match holds.
_RULE_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("private key-----",),
    ("://",),
    ("authorization",),
    ("pass", "secret", "key", "token", "credential", "sig"),
    ("gh",),
    ("github_pat_",),
    ("v1.",),
    ("eyj",),
    ("sha1=", "sha256="),
    ("sk-",),
    ("bearer",),
    ("token",),
)

_SENSITIVE_WORDS: frozenset[str] = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "signature",
        "jwt",
    }
)
_SENSITIVE_PAIR_RE = re.compile(r"(?:api|access|private|secret)_?key")
_CAMEL_BOUNDARY_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")


class Redactor:
    """Removes credentials from text before it is logged (or posted anywhere).

    Recognises GitHub tokens, ``Authorization``/``Bearer``/``token`` values, JWTs, PEM
    private keys, webhook ``sha256=`` signatures, ``sk-`` API keys, ``password=``-style
    key/value pairs, credentials in URLs (the host is kept), and the exact ``secrets``
    given (the configured webhook secret, LLM key...). Pattern matching is a safety net;
    passing the real secrets is what guarantees they never appear.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        unique = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        # Longest first, so a secret containing another is removed whole.
        self._secrets: tuple[str, ...] = tuple(sorted(unique, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        """``text`` with every recognised secret replaced by :data:`REDACTED`."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        lowered = text.lower()
        for (pattern, replacement), triggers in zip(_RULES, _RULE_TRIGGERS, strict=True):
            # A rule cannot match without its literal trigger; skipping the regex keeps a
            # log line cheap enough for the webhook's hot path.
            if any(t in lowered for t in triggers):
                text = pattern.sub(replacement, text)
        return text

    def value(self, value: object, _depth: int = 0) -> object:
        """A JSON-ready copy of ``value`` with strings redacted, recursively.

        Values under keys that name a credential (``password``, ``token``,
        ``Authorization``, ``api_key``...) are replaced whole, whatever their type.
        Objects that are not JSON types are logged as their redacted ``str()``.
        """
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            return self(value)
        if _depth >= 8:
            return self(str(value))
        if isinstance(value, Mapping):
            return {
                str(key): REDACTED if is_sensitive_key(str(key)) else self.value(item, _depth + 1)
                for key, item in value.items()
            }
        if isinstance(value, (list, tuple, set, frozenset)):
            return [self.value(item, _depth + 1) for item in value]
        return self(str(value))


def is_sensitive_key(name: str) -> bool:
    """Whether a field name says its value is a credential (so it is redacted whole).

    ``webhook_secret``, ``accessToken``, ``Authorization``, ``api-key`` are; ``secrets``
    (e.g. a count of findings) and ``max_tokens`` are not.
    """
    snake = _CAMEL_BOUNDARY_RE.sub("_", name).lower()
    words = [word for word in _NON_ALNUM_RE.split(snake) if word]
    if any(word in _SENSITIVE_WORDS for word in words):
        return True
    return bool(_SENSITIVE_PAIR_RE.search("_".join(words)))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """One-off redaction; build a :class:`Redactor` once when redacting repeatedly."""
    return Redactor(secrets)(text)


# --- Context --------------------------------------------------------------------------

_EMPTY: Mapping[str, object] = MappingProxyType({})
_context: contextvars.ContextVar[Mapping[str, object]] = contextvars.ContextVar(
    "kaizen_log_context", default=_EMPTY
)


@contextmanager
def log_context(**fields: object) -> Iterator[None]:
    """Add fields to every record logged inside the ``with`` block.

    Nested blocks add to (and may override) the outer fields; fields set to ``None``
    are left out. The previous context is restored on exit, even on error.
    """
    merged = {**_context.get(), **{k: v for k, v in fields.items() if v is not None}}
    token = _context.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _context.reset(token)


def current_log_context() -> dict[str, object]:
    """A copy of the current context, e.g. to send along with a queued task."""
    return dict(_context.get())


# --- Formatting -----------------------------------------------------------------------

_RECORD_ATTRS: frozenset[str] = frozenset(
    {
        *logging.LogRecord("", logging.INFO, "", 0, "", None, None).__dict__,
        "message",
        "asctime",
        "taskName",
    }
)
_BASE_FIELDS = ("ts", "level", "logger", "msg", "exc", "stack")


def _timestamp(record: logging.LogRecord) -> str:
    """ISO 8601 in UTC with milliseconds, e.g. ``2024-05-01T12:00:00.123Z``."""
    stamp = datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _message(record: logging.LogRecord) -> str:
    """The rendered message; a broken ``%`` format still shows its parts, not nothing."""
    try:
        return record.getMessage()
    except Exception:
        return f"{record.msg!s} (unformattable args: {record.args!r})"


def _fields(record: logging.LogRecord) -> dict[str, object]:
    """Context fields, then ``extra=`` fields (which win), without clobbering base keys."""
    fields: dict[str, object] = {}
    extras = {k: v for k, v in record.__dict__.items() if k not in _RECORD_ATTRS}
    for key, value in {**_context.get(), **extras}.items():
        fields[f"{key}_" if key in _BASE_FIELDS else key] = value
    return fields


class _JsonFormatter(logging.Formatter):
    """One JSON object per record; JSON escaping keeps every record on one line."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redact = redactor

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, object] = {
            "ts": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "msg": self._redact(_message(record)),
        }
        for key, value in _fields(record).items():
            payload[key] = REDACTED if is_sensitive_key(key) else self._redact.value(value)
        if record.exc_info:
            payload["exc"] = self._redact(self.formatException(record.exc_info))
        if record.stack_info:
            payload["stack"] = self._redact(self.formatStack(record.stack_info))
        return json.dumps(payload, ensure_ascii=False, default=str)


class _TextFormatter(logging.Formatter):
    """``<ts> <LEVEL> <logger>: <msg> key=value ...`` for people reading a terminal.

    The record itself is one line (newlines in the message are escaped so a message
    cannot forge extra records); a traceback follows on the next lines.
    """

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redact = redactor

    def format(self, record: logging.LogRecord) -> str:
        message = self._redact(_message(record)).replace("\r", "\\r").replace("\n", "\\n")
        parts = [f"{_timestamp(record)} {record.levelname:<8} {record.name}: {message}"]
        for key, value in _fields(record).items():
            shown = REDACTED if is_sensitive_key(key) else self._redact.value(value)
            text = shown if isinstance(shown, str) else json.dumps(shown, default=str)
            if not text or any(c.isspace() or c in '"=' for c in text):
                text = json.dumps(text, ensure_ascii=False)
            parts.append(f"{key}={text}")
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self._redact(self.formatException(record.exc_info))
        if record.stack_info:
            line += "\n" + self._redact(self.formatStack(record.stack_info))
        return line


class _KaizenHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at emit time.

    Looking the stream up late means output follows stderr when a test runner or a
    process supervisor swaps it; the type also marks the handler as ours, which is how
    :func:`configure_logging` stays idempotent.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
            stream = sys.stderr
            stream.write(line + "\n")
            stream.flush()
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)


def _level_number(level: str) -> int:
    """``"info"``/``"INFO"``/``"20"`` -> 20; anything else is a configuration error."""
    name = level.strip().upper()
    if name.isdigit():
        return int(name)
    mapping = logging.getLevelNamesMapping()
    if name not in mapping:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(mapping)}")
    return mapping[name]


def configure_logging(
    level: str = "INFO", *, json_output: bool = True, secrets: Iterable[str] = ()
) -> None:
    """Install Kaizen's stderr handler on the root logger and set the root level.

    Safe to call again (e.g. once settings are loaded, or in tests): the previous Kaizen
    handler is replaced, never duplicated, and handlers installed by others are left
    alone. ``json_output=False`` selects the human-readable format; both redact the same
    way. ``secrets`` are exact strings that must never be logged.

    Raises:
        ValueError: ``level`` is not a logging level name or number.
    """
    number = _level_number(level)
    redactor = Redactor(secrets)
    handler = _KaizenHandler()
    handler.setFormatter(_JsonFormatter(redactor) if json_output else _TextFormatter(redactor))
    root = logging.getLogger()
    for existing in list(root.handlers):
        if isinstance(existing, _KaizenHandler):
            root.removeHandler(existing)
            existing.close()
    root.addHandler(handler)
    root.setLevel(number)
