from __future__ import annotations

import hashlib
import hmac

from bot.webhook import sign, verify_signature

SECRET = b"It's a Secret to Everybody"
BODY = b"Hello, World!"


def test_matches_githubs_documented_example() -> None:
    # The example from GitHub's "Validating webhook deliveries" documentation.
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign(SECRET, BODY) == expected
    assert verify_signature(SECRET, BODY, expected)


def test_rejects_missing_wrong_or_sha1_signatures() -> None:
    assert not verify_signature(SECRET, BODY, None)
    assert not verify_signature(SECRET, BODY, "sha256=" + "0" * 64)
    sha1 = "sha1=" + hmac.new(SECRET, BODY, hashlib.sha1).hexdigest()
    assert not verify_signature(SECRET, BODY, sha1)
    assert not verify_signature(b"", BODY, sign(b"", BODY))
