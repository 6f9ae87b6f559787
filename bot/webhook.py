"""Webhook signature verification (GitHub's ``X-Hub-Signature-256``)."""

from __future__ import annotations

import hashlib
import hmac

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
