"""Tests for structured logging and redaction in bot.log_setup."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from bot.log_setup import (
    REDACTED,
    Redactor,
    configure_logging,
    current_log_context,
    is_sensitive_key,
    log_context,
    redact,
)

GHS = "ghs_" + "A1b2C3d4" * 5
LOG = logging.getLogger("kaizen.test")


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    """configure_logging changes process-wide state; put it back after each test."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def records(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    """The JSON records written to stderr since the last call."""
    err = capsys.readouterr().err
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


def one_record(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    [record] = records(capsys)
    return record


# --- redaction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"token is {GHS}", "token is ghs_[REDACTED]"),
        ("ghp_" + "x" * 36, "ghp_[REDACTED]"),
        ("gho_" + "x" * 36, "gho_[REDACTED]"),
        ("ghu_" + "x" * 36, "ghu_[REDACTED]"),
        ("ghr_" + "x" * 36, "ghr_[REDACTED]"),
        ("github_pat_11ABCDEFG_" + "y" * 60, "github_pat_[REDACTED]"),
        ("v1." + "0a" * 20, "v1.[REDACTED]"),
        (f"Authorization: token {GHS}", "Authorization: token [REDACTED]"),
        ("authorization: Bearer abc.def", "authorization: Bearer [REDACTED]"),
        ("Authorization=Basic dXNlcjpwYXNz", "Authorization=Basic [REDACTED]"),
        (
            "{'Authorization': 'Bearer abc', 'Accept': 'json'}",
            "{'Authorization': 'Bearer [REDACTED]', 'Accept': 'json'}",
        ),
        ('"authorization": "opaque-value"', '"authorization": "[REDACTED]"'),
        ("sent Bearer abcdefghijkl", "sent Bearer [REDACTED]"),
        ("using token 0123456789abcdef0123", "using token [REDACTED]"),
        (
            "jwt eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOjEyMzQ1fQ.c2lnbmF0dXJl-_x end",
            f"jwt {REDACTED} end",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc==\n"
            "-----END RSA PRIVATE KEY-----\nok",
            "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nok",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\\nMIIE\\nabc\\n-----END PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----",
        ),
        (
            "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n(truncated",
            "key: -----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----",
        ),
        ("X-Hub-Signature-256: sha256=" + "ab" * 32, "X-Hub-Signature-256: sha256=[REDACTED]"),
        ("X-Hub-Signature: sha1=" + "cd" * 20, "X-Hub-Signature: [REDACTED]"),
        ("key sk-" + "Z9" * 24, "key sk-[REDACTED]"),
        ("key sk-proj-" + "Q" * 48, "key sk-[REDACTED]"),
        ("GET /x?api_key=abc123&page=2", "GET /x?api_key=[REDACTED]&page=2"),
        ("db password=hunter2 user=bob", "db password=[REDACTED] user=bob"),
        ("client_secret: shh-quiet", "client_secret: [REDACTED]"),
        (
            '{"webhook_secret": "s3cr3t", "count": 2}',
            '{"webhook_secret": "[REDACTED]", "count": 2}',
        ),
        ("--password=hunter2", "--password=[REDACTED]"),
        (
            "?access_token=abc&refresh_token=def",
            "?access_token=[REDACTED]&refresh_token=[REDACTED]",
        ),
        (
            f"git clone https://x-access-token:{GHS}@github.com/o/r.git",
            "git clone https://[REDACTED]@github.com/o/r.git",
        ),
        ("redis://:hunter2@redis:6379/0", "redis://[REDACTED]@redis:6379/0"),
        ("https://user:pass@example.com/path", "https://[REDACTED]@example.com/path"),
    ],
)
def test_redaction_kinds(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "muted secrets:aws-key and pattern=ruff:B006",
        "tokens_used=1234 max_tokens=500 secrets=3",
        "the token expired; token verification failed",
        "author=alice pwd=/home/alice",
        "mail a@b.com or see https://example.com/p?e=a@b.com",
        "https://github.com/octo/app/pull/1",
        "sha256 of the file is 0123",
        "task-abcdefghijklmnopqrstuvwxyz",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_exact_secrets_are_redacted_longest_first() -> None:
    redactor = Redactor(["hook-secret-value", "hook-secret"])
    assert redactor("a hook-secret-value b hook-secret") == f"a {REDACTED} b {REDACTED}"


def test_short_exact_secrets_are_ignored() -> None:
    assert redact("dev mode", secrets=["dev", ""]) == "dev mode"


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", ["a_" * 50_000, "a-" * 50_000, "a://" * 25_000, "token " * 20_000])
def test_redaction_is_linear_on_adversarial_input(text: str) -> None:
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("password", True),
        ("webhook_secret", True),
        ("accessToken", True),
        ("Authorization", True),
        ("api-key", True),
        ("apiKey", True),
        ("private_key", True),
        ("Cookie", True),
        ("secrets", False),
        ("max_tokens", False),
        ("repo", False),
        ("keyword", False),
    ],
)
def test_is_sensitive_key(name: str, expected: bool) -> None:
    assert is_sensitive_key(name) is expected


def test_redactor_value_walks_structures() -> None:
    value = {
        "headers": {"Authorization": "token abc", "Accept": "json"},
        "items": [GHS, 3, None, True],
        "obj": ValueError(f"bad {GHS}"),
    }
    assert Redactor().value(value) == {
        "headers": {"Authorization": REDACTED, "Accept": "json"},
        "items": ["ghs_[REDACTED]", 3, None, True],
        "obj": "bad ghs_[REDACTED]",
    }


# --- JSON output ----------------------------------------------------------------------


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("DEBUG")
    LOG.info("hello %s", "world")
    record = one_record(capsys)
    assert list(record) == ["ts", "level", "logger", "msg"]
    assert record["level"] == "INFO"
    assert record["logger"] == "kaizen.test"
    assert record["msg"] == "hello world"
    assert isinstance(record["ts"], str)
    assert record["ts"].endswith("Z")
    parsed = datetime.fromisoformat(record["ts"].replace("Z", "+00:00"))
    assert parsed.utcoffset() is not None
    assert parsed.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_one_record_per_line_even_with_newlines(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    LOG.warning("line one\nline two")
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert json.loads(err)["msg"] == "line one\nline two"


def test_level_filters_records(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("warning")
    LOG.info("quiet")
    LOG.error("loud")
    assert [r["msg"] for r in records(capsys)] == ["loud"]


def test_unknown_level_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("LOUD")


def test_extra_fields_are_included_and_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    LOG.info(
        "called",
        extra={"status": 201, "url": f"https://x:{GHS}@h/p", "api_key": "k", "ts": "mine"},
    )
    record = one_record(capsys)
    assert record["status"] == 201
    assert record["url"] == "https://[REDACTED]@h/p"
    assert record["api_key"] == REDACTED
    assert record["ts_"] == "mine"
    assert record["ts"] != "mine"


def test_message_and_args_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(secrets=["the-webhook-secret"])
    LOG.info("token %s and %r", GHS, {"secret": "the-webhook-secret"})
    record = one_record(capsys)
    assert GHS not in json.dumps(record)
    assert "the-webhook-secret" not in json.dumps(record)
    assert record["msg"] == "token ghs_[REDACTED] and {'secret': '[REDACTED]'}"


def test_bad_format_args_still_log(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    [ours] = [h for h in logging.getLogger().handlers if type(h).__name__ == "_KaizenHandler"]
    # Handled directly: pytest's own capture handler re-raises formatting errors.
    ours.handle(LOG.makeRecord(LOG.name, logging.INFO, __file__, 1, "%d items", ("x",), None))
    record = one_record(capsys)
    assert "%d items" in str(record["msg"])


def test_exception_is_rendered_and_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    try:
        raise RuntimeError(f"clone failed for https://x-access-token:{GHS}@github.com/o/r")
    except RuntimeError:
        LOG.exception("fix failed")
    record = one_record(capsys)
    assert record["level"] == "ERROR"
    assert record["msg"] == "fix failed"
    exc = str(record["exc"])
    assert exc.startswith("Traceback (most recent call last):")
    assert "RuntimeError: clone failed for https://[REDACTED]@github.com/o/r" in exc
    assert GHS not in exc


def test_stack_info_is_rendered(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    LOG.info("here", stack_info=True)
    assert "Stack (most recent call last)" in str(one_record(capsys)["stack"])


# --- context --------------------------------------------------------------------------


def test_context_fields(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    with log_context(delivery_id="d-1", installation_id=42, repo="octo/app", event="push"):
        with log_context(task_id="t-9", repo="octo/other", event=None):
            LOG.info("inner")
        LOG.info("outer")
    LOG.info("outside")
    inner, outer, outside = records(capsys)
    assert inner["delivery_id"] == "d-1"
    assert inner["installation_id"] == 42
    assert inner["repo"] == "octo/other"
    assert inner["event"] == "push"
    assert inner["task_id"] == "t-9"
    assert outer["repo"] == "octo/app"
    assert "task_id" not in outer
    assert "delivery_id" not in outside


def test_extra_overrides_context(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    with log_context(repo="octo/app"):
        LOG.info("x", extra={"repo": "octo/extra"})
    assert one_record(capsys)["repo"] == "octo/extra"


def test_context_is_restored_after_errors() -> None:
    with pytest.raises(KeyError), log_context(delivery_id="d-1"):
        raise KeyError("boom")
    assert current_log_context() == {}


def test_current_log_context_is_a_copy() -> None:
    with log_context(delivery_id="d-1"):
        ctx = current_log_context()
        ctx["delivery_id"] = "changed"
        assert current_log_context() == {"delivery_id": "d-1"}


def test_context_does_not_leak_into_new_threads(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    with log_context(delivery_id="d-1"):
        thread = threading.Thread(target=lambda: LOG.info("thread"))
        thread.start()
        thread.join()
    assert "delivery_id" not in one_record(capsys)


def test_context_values_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    with log_context(repo=f"https://x:{GHS}@github.com/o/r"):
        LOG.info("x")
    assert one_record(capsys)["repo"] == "https://[REDACTED]@github.com/o/r"


# --- text output ----------------------------------------------------------------------


def test_text_output_is_one_readable_line(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(json_output=False)
    with log_context(repo="octo/app", delivery_id="d-1"):
        LOG.warning("got %s\nand more", GHS, extra={"note": "two words", "n": 3})
    line = capsys.readouterr().err
    assert line.count("\n") == 1
    assert "WARNING  kaizen.test: got ghs_[REDACTED]\\nand more" in line
    assert 'repo=octo/app delivery_id=d-1 note="two words" n=3' in line
    assert GHS not in line


def test_text_output_includes_redacted_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(json_output=False, secrets=["llm-api-key-123"])
    try:
        raise ValueError("key llm-api-key-123 rejected")
    except ValueError:
        LOG.exception("llm call failed")
    err = capsys.readouterr().err
    assert "llm call failed" in err.splitlines()[0]
    assert "Traceback" in err
    assert "ValueError: key [REDACTED] rejected" in err
    assert "llm-api-key-123" not in err


# --- idempotency ----------------------------------------------------------------------


def test_configure_twice_does_not_duplicate_output(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    before = len(root.handlers)
    configure_logging()
    configure_logging()
    assert len(root.handlers) == before + 1
    LOG.info("once")
    assert [r["msg"] for r in records(capsys)] == ["once"]


def test_reconfigure_switches_format_and_secrets(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    configure_logging(json_output=False, secrets=["rotated-secret"])
    LOG.info("rotated-secret")
    err = capsys.readouterr().err
    assert not err.startswith("{")
    assert "rotated-secret" not in err


def test_other_handlers_are_left_alone() -> None:
    root = logging.getLogger()
    other = logging.NullHandler()
    root.addHandler(other)
    try:
        configure_logging()
        configure_logging()
        assert other in root.handlers
    finally:
        root.removeHandler(other)
