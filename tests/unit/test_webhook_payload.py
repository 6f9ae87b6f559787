"""The payload inside a delivery's body: JSON, or a form's ``payload`` field."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from bot.webhook import FORM, decode_payload

PAYLOAD = '{"action": "opened", "number": 1, "title": "a & b = c"}'


def test_a_json_body_is_the_payload() -> None:
    assert decode_payload(PAYLOAD.encode(), "application/json") == {
        "action": "opened",
        "number": 1,
        "title": "a & b = c",
    }


def test_a_form_bodys_payload_field_is_the_payload() -> None:
    """What a repository webhook left at its default content type sends."""
    body = urlencode({"payload": PAYLOAD}).encode()
    assert decode_payload(body, f"{FORM}; charset=utf-8") == decode_payload(
        PAYLOAD.encode(), "application/json"
    )


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"not json", "application/json"),
        (b"[1, 2]", "application/json"),
        (b"", None),
        (urlencode({"other": PAYLOAD}).encode(), FORM),
        (urlencode([("payload", PAYLOAD), ("payload", PAYLOAD)]).encode(), FORM),
        (urlencode({"payload": "[1]"}).encode(), FORM),
        (b"payload=%7B%22a%22&&&", FORM),
        (b"\xff\xfe", FORM),
        (PAYLOAD.encode(), FORM),  # JSON sent under the form's content type is not a form
    ],
)
def test_a_body_without_a_json_object_is_refused(body: bytes, content_type: str | None) -> None:
    assert decode_payload(body, content_type) is None
