"""Leaked credentials are found on added lines and never repeated back in full."""

from __future__ import annotations

import time

import pytest

from workers.review.diff_model import DiffModel
from workers.review.secrets_scan import (
    find_secrets,
    is_placeholder,
    redact_secrets,
    scan_secrets,
)

AWS = "AKIA" + "Q3EGRTZNVK7XJ4PL"
GH = "ghp_" + "a8Kd93LmQz0PvX7rT2nB5cW1yE6uJ4hF9sGk"


def _diff(
    added: list[str],
    context: list[str] = (),  # type: ignore[assignment]
    path: str = "settings.py",
) -> DiffModel:
    body = [f" {c}" for c in context] + [f"+{a}" for a in added]
    header = f"@@ -1,{len(context)} +1,{len(context) + len(added)} @@"
    return DiffModel.from_github_files(
        [{"filename": path, "status": "modified", "patch": "\n".join([header, *body])}]
    )


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (f'AWS_KEY = "{AWS}"', "aws-access-key"),
        (f"token: {GH}", "github-token"),
        ("-----BEGIN RSA PRIVATE KEY-----", "private-key"),
        ('api_key = "Zx81kLq0Pm2Nv7Rt5Yb3Wc9Xa4Df6Gh"', "generic-secret"),
        ("DB = 'postgres://admin:S3cr3tPassw0rd@db.internal:5432/app'", "url-credentials"),
        ('URL = "postgres://app:Xk9$mQ2vLp7wRz@prod-db.acme.io/app"', "url-credentials"),
        ("REDIS_URL=redis://:9fJ2kLq8ZpX3vN7w@redis-1.cloud.redislabs.com:6379", "url-credentials"),
        ('DB = "postgres://app:Xk9%24mQ2vLp%7E7wRz@db:5432/app"', "url-credentials"),
        ('"password": "Zx81kLq0Pm2Nv7Rt5Yb3Wc9Xa4Df6Gh",', "generic-secret"),
        ('settings["api_key"] = "Zx81kLq0Pm2Nv7Rt5Yb3Wc9Xa4Df6Gh"', "generic-secret"),
        ("GITHUB_TOKEN=0c8f7e6d5c4b3a29180f7e6d5c4b3a2918", "generic-secret"),
        ("export DB_PASSWORD=Zx81kLq0Pm2Nv7Rt5Yb3", "generic-secret"),
        ('apiKey: "Zx81kLq0Pm2Nv7Rt5Yb3Wc9Xa4Df6Gh"', "generic-secret"),
        ('key = "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA"', "private-key"),
        ('{"access_token": "sk-ant-oat01-Xk3Jq9ZpL2mVbR7tYw4NhQ8s"}', "generic-secret"),
        ('refresh_token = "Zx81kLq0Pm2Nv7Rt5Yb3Wc9Xa4Df6Gh"', "generic-secret"),
        (
            'HOOK_TOKEN = "https://hooks.acme.io/t/Zx81kLq0Pm2Nv7Rt5Yb3Wc9Xa4Df6Gh"',
            "generic-secret",
        ),
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


@pytest.mark.parametrize(
    "line",
    [
        '"arangodb://username:password@host:port/database/collection"',
        "azureservicebus://SAS_POLICY_NAME:SAS_KEY@SERVICE_BUSNAMESPACE",
        "amqp://[USER:PASSWORD@]BROKER_ADDRESS[:PORT][/VIRTUALHOST]",
        "pgmq://USERNAME:PASSWORD@HOST:PORT/DATABASE",
        'url = f"postgresql://{user}:{password}@{host}:{port}/{db}"',
        'url = "postgresql://%(user)s:%(password)s@%(host)s/db"',
        'DATABASE_URL = "postgres://user:$DB_PASSWORD@db/app"',
        'x = "postgres://user:%PASSWORD%@db/app"',
        "conn = 'mysql://admin:<password>@db.internal/app'",
        "# e.g. sqla+mysql://root:masterkey@localhost/",
        "pgmq://postgres:postgres@db.internal:5432/postgres",
        "mongodb://reader:D1fficultP%40ssw0rd@mongodb0.example.com:27017/",
        "https://deploy:Zx81kLq0Pm2Nv7@ci.build.test/repo.git",
    ],
)
def test_connection_string_templates_are_not_secrets(line: str) -> None:
    """Docs and code that build URLs show where a password goes; security findings are
    never silenced by learning, so each of these would be noise on every PR."""
    assert find_secrets(line) == []


@pytest.mark.parametrize(
    "line",
    [
        'tokenizer_class_name = "LlamaTokenizerFast"',
        'TOKENIZER_CONFIG_FILE = "tokenizer_config.json"',
        'TOKEN_URL = "https://oauth2.googleapis.com/token9"',
        'ID_TOKEN_INVALID_RESPONSE = "IdTokenInvalidResponse"',
        'PRIVATE_STATE_TOKEN = "private-state-token-issuance"',
        '_ENV_TOKEN_PATH = "KUBEFLOW_TRAINER_SERVER_TOKEN"',
        'cache_key = f"user:{user_id}:profile:{version}"',
        'verify_token="eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."',
        'SECRET_KEY = "django-insecure-CHANGE_ME_IN_PRODUCTION_1234"',
        # an annotation written as a string (dulwich 1.2's signature.py)
        'secret_keys: "Iterable[pysequoia.Tsk]" = (),',
        'auth_token: "Optional[tokens.AccessToken]" = None,',
        # django-oauth-toolkit 3.4's migration test: one of a batch of numbered tokens
        'spot_check = migrated.get(token="batch-token-1049")',
        # detect-secrets' .secrets.baseline (feast 0.67): what it keeps is a hash
        '"hashed_secret": "598319ac6aa4a94e72a9d8a8d405cc7bc9e048ee",',
        'password_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
        # a type named with an acronym (telethon 1.45's generated requests)
        "def __init__(self, password: 'TypeInputCheckPasswordSRP', period: int):",
        # anthropic 2.17's tests: a token's prefix and a word, a header ending in a
        # newline escape to test header injection
        '{"access_token": "sk-ant-oat01-file"},',
        # a tokenizer's special tokens (sentence-transformers, transformers): vocabulary
        'tokenizer = Tokenizer(unk_token="UNK_9f3a7b21c4e5d6a7")',
        # nlpaug's and flair's tests: an out-of-vocabulary word, a corpus' document marker
        'unknown_token = "q8Zr2kLw9PxT4vNb7YcJ"',
        'Corpus(document_separator_token="-DOCSTART-9f3a7b21c4e5")',
        'config["mask_token"] = "MASK_TOKEN_0f9e8d7c6b5a"',
        # where a stream or a listing resumes (mcp's tests): a cursor, not a credential
        'metadata = Meta(resumption_token="evt-1f0e9d8c7b6a5f4e3")',
        'next_page_token = "CgwIABIIc2FtcGxlLTE4GAE"',
        # minified JavaScript (mlflow's built UI): the "value" runs from one string's end to
        # the next one's start
        'DefaultRestParameter:"Unexpected token =",DuplicateBinding:"Duplicate binding %0"',
        # the key docker's config.json files registry credentials under (mlflow)
        '_DOCKER_HUB_AUTH_KEY = "https://index.docker.io/v1/"',
        # a password's stored hash, as Django's user fixtures hold them (wagtail 8's tests):
        # what a database keeps instead of the password, which nobody logs in with
        '"password": "md5$seasalt$1e9bf2bf5606aa5c39852cc30f0f6f22",',
        '"password": "pbkdf2_sha256$600000$Zx81kLq0Pm2N$3dJq9ZpL2mVbR7tYw4NhQ8sKk1Xa4Df6Gh=",',
        'password_hash = "$2b$12$Zx81kLq0Pm2Nv7Rt5Yb3WuQ8sKk1Xa4Df6GhJq9ZpL2mVbR7tYw4N"',
        'default_headers={"X-Secret": "made-up-secret\\n"}',
        # GitHub Copilot's language server, bundled in marimo 0.25: an endpoint's path with
        # its version, a test's made-up token written as key=value words
        'return t==="adfs"?"oauth2/token":"oauth2/v2.0/token"}',
        'return{copilotToken:I7r({token:"tid=valid-copilot-token"})}',
        # fsspec's GitHub paths name the organisation and the repository before the "@"
        '"github": "github://fsspec:universal_pathlib@main/{}",',
        # crawl4ai's README hands the token on from the shell's environment
        '  -e CRAWL4AI_API_TOKEN="$CRAWL4AI_API_TOKEN" \\',
        'set "API_TOKEN=%CRAWL4AI_API_TOKEN%"',
        # lightgbm's binary file marker, underscores around its words
        'const char* Dataset::binary_file_token = "______LightGBM_Binary_File_Token______\\n";',
    ],
)
def test_names_and_values_that_hold_no_secret(line: str) -> None:
    assert find_secrets(line) == []


@pytest.mark.parametrize(
    "line",
    [
        # WHATWG's URL parser tests (urltestdata.json), vendored by URL libraries: no
        # client takes these URLs, so no one uses them to log in
        '"input": "http://&a:foo(b]c@d:2/",',
        '"href": "http://&a:foo(b%5Dc@d:2/",',
        '"href": "http://:%3A%40c@d:2/",',
        '"input": "https://user:pass[\\u007F@foo/bar",',
        '"href": "https://user:pass%5B%7F@foo/bar",',
        '"input": "http://us er:pa ss@host/",',
        '"input": "http://user:pa%zzword@host.com/",',
    ],
)
def test_urls_no_client_would_take_are_not_secrets(line: str) -> None:
    assert find_secrets(line) == []


@pytest.mark.parametrize(
    "line",
    [
        # a pre-signed S3 URL recorded in a VCR cassette (requests-toolbelt 1.0): the key
        # id is the URL's public half, the signature beside it expired in 2015
        '"uri": "https://s3.amazonaws.com/b/f.whl?AWSAccessKeyId=AKIAISTNZFOVBIJMK3TQ'
        '&Expires=1426166613&Signature=78anFgNgXLm3TIbo%2FbTEEk7m%2F34%3D"',
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential=AKIAISTNZFOVBIJMK3TQ%2F20260101%2Fus-east-1%2Fs3%2Faws4_request",
    ],
)
def test_the_key_id_of_a_pre_signed_url_is_not_a_leak(line: str) -> None:
    assert find_secrets(line) == []
    # the same id anywhere else still is
    assert [h.rule.kind for h in find_secrets('AWS_ACCESS_KEY_ID = "AKIAISTNZFOVBIJMK3TQ"')] == [
        "aws-access-key"
    ]


SIGNED_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
    "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@pytest.mark.parametrize(
    "line",
    [
        # pyjwt 2.15's tests: a token with an empty signature, to feed the decoder
        'token = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.e30."',
        'token = "eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3Qta2V5In0.e30."',
        # "alg": "none" declares that nothing signs it
        'auth_token = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0'
        '.eyJzdWIiOiIxMjM0NTY3ODkwIiwiYWRtaW4iOnRydWV9."',
    ],
)
def test_an_unsigned_json_web_token_is_no_credential(line: str) -> None:
    assert find_secrets(line) == []
    # a signed one, named as a token or standing alone, still is
    assert [h.rule.kind for h in find_secrets(f'token = "{SIGNED_JWT}"')] == ["jwt"]
    assert [h.rule.kind for h in find_secrets(SIGNED_JWT)] == ["jwt"]


def test_a_constant_that_looks_for_private_keys_is_not_a_key() -> None:
    assert find_secrets('_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"') == []


def test_a_key_format_named_in_prose_or_a_stub_key_is_not_a_key() -> None:
    """snowflake-connector-python 5.2's Rust core: doc comments naming the formats it
    reads (``-----BEGIN EC PRIVATE KEY-----`` in backticks) and a test's stand-in
    ``"-----BEGIN PRIVATE KEY-----\\nMIIFake\\n-----END PRIVATE KEY-----\\n"``. A whole
    key on one line is still one."""
    assert find_secrets("/// `-----BEGIN EC PRIVATE KEY-----`, which openssl ec writes") == []
    stub = 'let pem = "-----BEGIN PRIVATE KEY-----\\nMIIFake\\n-----END PRIVATE KEY-----\\n";'
    assert find_secrets(stub) == []
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" * 3
    whole = f'pem = "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n"'
    assert [h.rule.kind for h in find_secrets(whole)] == ["private-key"]


def test_a_key_in_a_web_page_is_a_client_side_key() -> None:
    """w3lib 2.5 saves web pages for its benchmarks: Datadog's client token and Google's
    browser keys, served to every visitor. What a page holds is public by design; a key of
    a known kind there is still a leak (a live Stripe secret key has no business in one)."""
    page = (
        '<script>window.cfg = {"datadogClientToken":"lcbf57916rm5qnjm3607k233w8392090vls",'
        '"googleMapsApiKey":"CYekEfC9i7NoP7CRpfPtba-LQ0YMlOTLoxHfMV9"};</script>'
    )
    stripe = "<script>Stripe('" + "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcQ3r8')</script>"
    bundles = ("static/redoc.min.js", "static/redoc.min.map", "static/app.js.map")
    for path in ("tests/pages/no-base.html", "site/index.htm", *bundles):
        assert scan_secrets(_diff([page], path=path)) == []
        assert [f.pattern for f in scan_secrets(_diff([stripe], path=path))] == [
            "secrets:stripe-key"
        ]
    assert [f.pattern for f in scan_secrets(_diff([page], path="app/config.js"))] == [
        "secrets:generic-secret"
    ]
    assert redact_secrets(page).count("[REDACTED generic-secret]") == 2  # never sent on


def test_a_line_of_minified_script_is_a_bundle_whatever_its_name() -> None:
    """marimo 0.25 ships Copilot's language server as ``_lsp/copilot/main.js``, lines of
    100,000 characters: a bundle, like a ``.min.js``. A script written by hand keeps the
    generic rule, and a key of a known kind in the bundle is still a leak."""
    key = '"apiKey":"lcbf57916rm5qnjm3607k233w8392090vls"'
    bundled = "var a=1;" * 200 + key + ";"
    stripe = "var a=1;" * 200 + "Stripe('" + "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcQ3r8');"

    assert scan_secrets(_diff([bundled], path="pkg/copilot/main.js")) == []
    assert [f.pattern for f in scan_secrets(_diff([stripe], path="pkg/copilot/main.js"))] == [
        "secrets:stripe-key"
    ]
    assert [f.pattern for f in scan_secrets(_diff([key], path="pkg/copilot/main.js"))] == [
        "secrets:generic-secret"
    ]
    assert [f.pattern for f in scan_secrets(_diff([bundled], path="pkg/settings.json"))] == [
        "secrets:generic-secret"
    ]


@pytest.mark.parametrize(
    "url",
    [
        # w3lib's URL test cases; passwords at the top of every list of the most used ones
        "http://Åsa:abc123@➡.ws:81/admin",
        "ftp://user:qwerty@files.acme.io/",
        "https://bob:letmein@intranet.acme.io/",
        "https://tomcat:changeit@keystore.acme.io/",
        # celery 5.7's tests: the placeholder word numbered per host
        "sentinel://:secret1@h1:26379;sentinel://:secret2@h2:26379/0",
        # colander 2.0's tests: "pass@word", percent-encoded as a URL must
        "http://user:pass%40word@mysite.com",
    ],
)
def test_a_password_everyone_knows_is_not_a_leak(url: str) -> None:
    assert find_secrets(url) == []


def test_only_added_lines_are_scanned() -> None:
    assert scan_secrets(_diff(["x = 1"], context=[f'KEY = "{AWS}"'])) == []


def test_the_secret_never_appears_in_the_finding() -> None:
    (finding,) = scan_secrets(_diff([f'AWS_KEY = "{AWS}"']))
    assert AWS not in finding.message
    assert AWS not in finding.code and "[REDACTED aws-access-key]" in finding.code
    assert AWS not in finding.context_text()


def test_redaction_keeps_the_rest_of_the_text() -> None:
    assert redact_secrets(f"a {GH} b") == "a [REDACTED github-token] b"


@pytest.mark.parametrize("piece", ["a-", "a.", "{", "<", "a://", "\n", "x:", "password=", '="'])
def test_a_megabyte_long_hostile_line_is_scanned_in_linear_time(piece: str) -> None:
    # Anyone can open a pull request: a line of "a-a-a-…" made the generic-secret rule
    # try every "-" as the start of a name (3.7 s at 8 KB, hours at 1 MB).
    line = piece * (1_000_000 // len(piece))
    started = time.monotonic()
    assert find_secrets(line) == []
    assert redact_secrets(line) == line
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        ("secret", True),
        ("change-me", True),
        ("<your key>", True),
        ("", True),
        ("Pass Word", True),
        # pony 0.7.20's example apps: SECRET_KEY="secret_xxx", password="***"
        ("secret_xxx", True),
        ("***", True),
        # nats-py 2.16: a subject token compared with its wildcards
        (">", True),
        ("*", True),
        ("#!", True),
        ("p4", False),
        ("api-key-XXX", True),
        ("maxxxi", False),
        ("password2", True),
        # kombu 5.7's tests: words that name what the value stands in for
        ("fresh_token", True),
        ("session-token", True),
        ("TestPassword", True),
        ("sts-secret", True),
        ("Tr0ub4dor-token", False),
        ("correct horse battery staple", False),
        ("hunter2-but-longer", False),
        ("s3cr3t-Production-Key-9f2", False),
    ],
)
def test_placeholders_are_told_from_values(value: str, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder
