"""Webhook deliveries: signature verification (GitHub's ``X-Hub-Signature-256``) and the
payload inside the body."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import parse_qs

_PREFIX = "sha256="


def sign(secret: bytes, body: bytes) -> str:
    """The header value GitHub sends for ``body``; used by tests, benches and the fake."""
    return _PREFIX + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    """HMAC-SHA256 of the *raw* body, compared in constant time."""
    if not secret or not header or not header.startswith(_PREFIX):
        return False
    expected = sign(secret, body)
    return hmac.compare_digest(expected.encode(), header.strip().encode())


FORM = "application/x-www-form-urlencoded"


def decode_payload(body: bytes, content_type: str | None) -> dict[str, Any] | None:
    """The event payload of a delivery, or None when the body holds no JSON object.

    A GitHub App always sends JSON, but a repository or organization webhook pointed at
    Kaizen is form-encoded unless someone changed its default content type: the JSON is
    then the ``payload`` field (the signature still covers the raw body, so this is read
    only after :func:`verify_signature`).
    """
    text: str | bytes = body
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media == FORM:
        try:
            fields = parse_qs(body.decode("utf-8"), strict_parsing=True, max_num_fields=16)
        except (UnicodeDecodeError, ValueError):
            return None
        values = fields.get("payload") or []
        if len(values) != 1:
            return None
        text = values[0]
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None
