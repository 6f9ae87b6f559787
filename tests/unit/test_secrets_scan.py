"""Leaked credentials are found on added lines and never repeated back in full."""

from __future__ import annotations

import pytest

from workers.review.diff_model import DiffModel
from workers.review.secrets_scan import find_secrets, redact_secrets, scan_secrets

AWS = "AKIA" + "Q3EGRTZNVK7XJ4PL"
GH = "ghp_" + "a8Kd93LmQz0PvX7rT2nB5cW1yE6uJ4hF9sGk"


def _diff(added: list[str], context: list[str] = ()) -> DiffModel:  # type: ignore[assignment]
    body = [f" {c}" for c in context] + [f"+{a}" for a in added]
    header = f"@@ -1,{len(context)} +1,{len(context) + len(added)} @@"
    return DiffModel.from_github_files(
        [{"filename": "settings.py", "status": "modified", "patch": "\n".join([header, *body])}]
    )


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (f'AWS_KEY = "{AWS}"', "aws-access-key"),
        (f"token: {GH}", "github-token"),
        ("-----BEGIN RSA PRIVATE KEY-----", "private-key"),
        ('api_key = "Zx81kLq0Pm2Nv7Rt5Yb3Wc9Xa4Df6Gh"', "generic-secret"),
        ("DB = 'postgres://admin:S3cr3tPassw0rd@db.internal:5432/app'", "url-credentials"),
    ],
)
def test_finds_each_kind(line: str, kind: str) -> None:
    findings = scan_secrets(_diff([line]))
    assert [f.pattern for f in findings] == [f"secrets:{kind}"]
    assert findings[0].severity == "security"


def test_placeholders_and_low_entropy_values_are_not_secrets() -> None:
    assert find_secrets('password = "changeme-changeme-changeme"') == []
    assert find_secrets('api_key = "your-api-key-goes-here-xx"') == []
    assert find_secrets('token = "aaaaaaaaaaaaaaaaaaaaaaaa"') == []


def test_only_added_lines_are_scanned() -> None:
    assert scan_secrets(_diff(["x = 1"], context=[f'KEY = "{AWS}"'])) == []


def test_the_secret_never_appears_in_the_finding() -> None:
    (finding,) = scan_secrets(_diff([f'AWS_KEY = "{AWS}"']))
    assert AWS not in finding.message
    assert AWS not in finding.code and "[REDACTED aws-access-key]" in finding.code
    assert AWS not in finding.context_text()


def test_redaction_keeps_the_rest_of_the_text() -> None:
    assert redact_secrets(f"a {GH} b") == "a [REDACTED github-token] b"
