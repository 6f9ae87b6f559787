"""Leaked credentials on added lines: the one finding learning may never silence.

Only lines a PR adds are scanned (a key already in the base branch is a different
problem, and reporting it on every PR would be noise). The secret itself never leaves this
module: messages, fingerprints and the text embedded into memory carry a redacted line, and
:func:`redact_secrets` is applied to anything sent to an LLM endpoint.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from urllib.parse import unquote

from workers.review.diff_model import DiffModel
from workers.review.findings import Finding


@dataclass(frozen=True)
class SecretRule:
    kind: str  # the pattern is secrets:<kind>
    label: str  # what it is, for the message
    regex: re.Pattern[str]
    group: int = 0  # the part of the match that is the secret
    min_entropy: float = 0.0  # bits per character, for the generic rules


def _rule(kind: str, label: str, regex: str, group: int = 0, entropy: float = 0.0) -> SecretRule:
    return SecretRule(kind, label, re.compile(regex), group, entropy)


RULES: tuple[SecretRule, ...] = (
    _rule(
        "private-key",
        "a private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----(?![`'\"])",
    ),
    # (a marker closed by a quote at once is a constant that looks for keys, not a key;
    # by a backtick, a format named in prose: see also _STUB_KEY)
    _rule(
        "aws-access-key", "an AWS access key id", r"\b((?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})\b", 1
    ),
    _rule(
        "aws-secret-key",
        "an AWS secret access key",
        r"(?i)aws.{0,20}?(?:secret|private).{0,20}?['\"=:\s]\s*['\"]?([A-Za-z0-9/+=]{40})\b",
        1,
        3.5,
    ),
    _rule("github-token", "a GitHub token", r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b", 1),
    _rule("github-token", "a GitHub token", r"\b(github_pat_[A-Za-z0-9_]{60,255})\b", 1),
    _rule("slack-token", "a Slack token", r"\b(xox[abposr]-[A-Za-z0-9-]{10,250})\b", 1),
    _rule(
        "slack-webhook",
        "a Slack webhook URL",
        r"(https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,})",
        1,
    ),
    _rule("stripe-key", "a Stripe secret key", r"\b((?:sk|rk)_live_[A-Za-z0-9]{20,})\b", 1),
    _rule("google-api-key", "a Google API key", r"\b(AIza[0-9A-Za-z_-]{35})\b", 1),
    _rule(
        "openai-key",
        "an OpenAI API key",
        r"\b(sk-(?:proj-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,})\b",
        1,
    ),
    _rule("openai-key", "an OpenAI API key", r"\b(sk-proj-[A-Za-z0-9_-]{40,})\b", 1),
    _rule("npm-token", "an npm token", r"\b(npm_[A-Za-z0-9]{36})\b", 1),
    _rule("pypi-token", "a PyPI token", r"\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})\b", 1),
    _rule(
        "jwt",
        "a JSON Web Token",
        r"\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b",
        1,
    ),
    _rule(
        "url-credentials",
        "a password in a URL",
        # user (may be empty, as in redis://:pw@host), password, host; see _is_template_url
        # (the scheme starts only where a run of scheme characters starts: see below)
        r"(?<![\w+.-])[a-z][a-z0-9+.-]*+://([^/\s:@'\"]*):([^/\s:@'\"]{6,})@"
        r"(\[[^\]\s]*\]|[^\s'\"/?#:\[\]]*)",
        2,
        2.5,
    ),
    _rule(
        "generic-secret",
        "a hard-coded secret",
        # the name (group 1) is checked word by word in names_a_secret
        # (a name starts only where a run of name characters starts, and is at most 80
        # characters either side of the keyword: with a plain \b every "-" in a long
        # "a-a-a-…" line was a start, and a hostile PR line cost time quadratic in its length)
        r"(?i)(?<![\w.-])[.-]*+\b"
        r"([\w.-]{0,80}(?:api[_-]?key|secret|token|passwd|password|auth[_-]?key)[\w.-]{0,80}+)"
        r"['\"]?\]?\s*(?:=|:|:=|=>)\s*['\"]([^'\"\s]{16,})['\"]",  # "password": or ["key"] =
        2,
        3.5,
    ),
    _rule(
        "generic-secret",
        "a hard-coded secret",
        # an environment file's NAME=value, unquoted
        r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9+/=_.~-]{16,})\s*$",
        2,
        3.5,
    ),
)

# A key whose end marker follows on the same line after less than a key's worth of
# base64 (snowflake-connector-python's tests: ``-----BEGIN PRIVATE KEY-----\nMIIFake\n
# -----END PRIVATE KEY-----``): a stand-in. The smallest real key (an Ed25519 one in
# PKCS #8) is 64 characters of base64 with its header.
_STUB_KEY = re.compile(r"(?:\\[nr]|\s)*[A-Za-z0-9+/=]{0,63}(?:\\[nr]|\s)*-----END ")
# Schemes whose addresses put other things where a URL's user and password go: fsspec's
# ``github://org:repo@ref/path`` (universal-pathlib's tests).
_NO_CREDENTIALS_SCHEMES = ("github://",)
# The query parameter a pre-signed S3 URL names its key id with (SigV2, SigV4), just
# before the id: requests-toolbelt 1.0 recorded one in a VCR cassette.
_PRE_SIGNED = re.compile(r"(?i)(?:[?&]AWSAccessKeyId|[?&]X-Amz-Credential)=\Z")
# Values that look like secrets but are placeholders; a warning on them is pure noise.
_PLACEHOLDER = re.compile(
    r"(?i)(x{6,}|(?:^|[_\-.\s])x{3,}(?:$|[_\-.\s])|\*{3,}|example|sample|dummy|placeholder|"
    r"change[_-]?me|your[_-]|<[^>]+>|"
    r"\$\{|\{\{|redacted|test[_-]?(key|token|secret)|fake|0{8,}|1234567|\.\.\.|…|\{[^}]*\}|"
    r"^\$[A-Za-z_]\w*$|^%\w+%$)"  # an environment variable's value handed on: "$API_TOKEN"
)

# Connection strings in docs, docstrings and code that builds them. A security finding is
# never silenced by learning, so each of these would be noise on every PR that adds one:
# "scheme://USER:PASSWORD@HOST" templates, "user:{password}@" or "%(password)s"
# interpolation, the word "password" itself, "guest:guest" style defaults, and hosts that
# are loopback or reserved for documentation (RFC 2606, RFC 6761).
_TEMPLATE_PART = re.compile(
    r"\{[^{}]*\}|\$\{|^\$[A-Za-z_]\w*$|<[^<>]+>|%\(\w+\)s|%[A-Za-z_]\w*%|^%s$|^\["
)
# What the user and password of a URL cannot hold unencoded (RFC 3986: "[", "]", and what
# no URL holds; a "%" that starts no escape). URL libraries vendor WHATWG's parser tests
# (urltestdata.json: "http://&a:foo(b]c@d:2/", "https://user:pass[\u007F@foo/bar") and
# every line of them that has a "password" was a security finding on its PR.
_NOT_IN_USERINFO = re.compile(r"[\[\]\\^`{|}<>\x00-\x20\x7f]|%(?![0-9A-Fa-f]{2})")
MIN_URL_PASSWORD = 6  # characters, once %-escapes are decoded
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAME_OF_A_VALUE = re.compile(r"^[A-Z]+(?:_[A-Z]+)*$")  # PASSWORD, SAS_KEY, HOST
_PLACEHOLDER_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "secretkey",
        "key",
        "token",
        "apikey",
        "accesskey",
        "masterkey",
        "mypassword",
        "yourpassword",
        "credentials",
        # at the top of every list of the most used passwords, and Java's keystore
        # default: known to everyone, so no secret even where a service still takes one
        "abc123",
        "qwerty",
        "letmein",
        "hunter2",
        "passw0rd",
        "password1",
        "password123",
        "changeit",
    }
)
# Files a browser is served whole: a key in one is a client-side key (Datadog's client
# token, a Google Maps browser key), public by design. So is a minified bundle, and its
# source map carries the libraries' own sources: drf-yasg 1.21.18's ``redoc.min.map``
# holds openapi-sampler's ``passwordSymbols = 'qwerty!@#$%^123456'``, the alphabet of
# its sample passwords. A key of a known kind a build inlined is reported all the same.
_WEB_PAGE = re.compile(r"(?i)\.(?:html?|xhtml)$|\.min\.js$|\.(?:js|css|min)\.map$")
# A script or style sheet line this long is a build's output whatever the file is called
# (marimo ships Copilot's language server as ``main.js``, lines of 100,000 characters):
# no one writes or reviews a line of a thousand characters by hand.
_BUNDLED_SUFFIXES = (".js", ".mjs", ".cjs", ".css")
_BUNDLED_LINE = 1000
_DOC_HOST = re.compile(
    r"(?i)^(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]|host|hostname|"
    r"(?:[\w-]+\.)*example(?:\.(?:com|net|org))?|(?:[\w-]+\.)+(?:test|invalid|localhost))$"
)


# The words of a name that say its value is a secret. "tokenizer_class", "token_url" or
# "cache_key_prefix" hold something else.
_SECRET_NAME_ENDINGS = frozenset(
    {"key", "secret", "secrets", "token", "passwd", "password", "pwd", "credential", "credentials"}
)
_SECRET_NAME_WORDS = frozenset({"secret", "password", "passwd", "apikey", "authkey"})


def name_words(name: str) -> list[str]:
    """snake_case, kebab-case, dotted and camelCase names split into lower-case words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w.lower() for w in re.split(r"[\s_.\-]+", spaced) if w]


def spells_its_name(name: str, value: str) -> bool:
    """Whether a value is its name written out, word for word: a constant that names
    something (pydantic-extra-types' ``APPLICATION_VND_ETSI_TIMESTAMP_TOKEN =
    "application/vnd.etsi.timestamp-token"``, a MIME type) holds a label, not a secret."""
    words = name_words(name)
    return bool(words) and name_words(re.sub(r"[/+:]", " ", value)) == words


# A name that says its value is a digest of something (feast's .secrets.baseline, as
# detect-secrets writes it, lists each finding's ``"hashed_secret"``).
_DIGEST_WORDS = frozenset({"hash", "hashed", "digest", "checksum", "sha1", "sha256", "md5"})


def names_a_secret(name: str) -> bool:
    """Whether a name says its value is a secret: a secret word ends it (``API_KEY``,
    ``githubToken``, ``db.password``) or ``secret`` / ``password`` / ``apikey`` is one of
    its words (``client_secret_value``). ``TOKENIZER_NAME``, ``token_type``, a
    tokenizer's ``unk_token`` and a ``hashed_secret`` are not."""
    words = name_words(name)
    if len(words) >= 2 and words[-1] in ("token", "tokens") and words[-2] in _NO_CREDENTIAL:
        return False  # a tokenizer's special token (unk_token), a cursor (next_page_token)
    if _DIGEST_WORDS.intersection(words):
        return False  # a secret's hash (detect-secrets' "hashed_secret"): no one signs in with it
    return bool(words) and (
        words[-1] in _SECRET_NAME_ENDINGS or any(w in _SECRET_NAME_WORDS for w in words)
    )


# Tokens that are no credentials: a tokenizer's special tokens (``unk_token="[UNK]"``,
# ``mask_token``, nlpaug's ``unknown_token``, flair's ``document_separator_token``: entries
# of a vocabulary, which sentence-transformers' and transformers' code sets everywhere),
# and cursors that say where a listing or a stream resumes
# (``next_page_token``, mcp's ``resumption_token``, a ``continuation_token``).
_NO_CREDENTIAL = frozenset(
    {"unk", "pad", "bos", "eos", "cls", "sep", "mask", "sos", "eot", "eod", "oov", "special"}
    | {"unknown", "separator", "padding", "start", "end", "stop", "delimiter"}
    | {"page", "next", "continuation", "resumption", "cursor", "pagination", "sync"}
)


# A "value" that runs from the end of one string to the start of the next, as in minified
# JavaScript (mlflow's built UI: ``token =",DuplicateBinding:"``): no secret starts with a
# comma, a semicolon or a closing bracket.
_BETWEEN_STRINGS = re.compile(r"[,;)\]}]")
# A web address with no part long enough to be a key (the key docker's config.json files
# a registry's credentials under: ``"https://index.docker.io/v1/"``); a webhook's address
# with its 32-character secret in the path stays a finding.
_PLAIN_ADDRESS = re.compile(r"^https?://[\w.-]+(?::\d+)?(?:/[\w.~-]{0,15})*/?$")

# A password's stored hash (Django's ``algorithm$salt$hash``, a bcrypt or argon2 string):
# what a database keeps instead of the password, as the user fixtures of Django projects'
# tests hold them (wagtail's ``"password": "md5$seasalt$1e9b…"``). Nobody logs in with it.
_PASSWORD_HASH = re.compile(
    r"^(?:(?:pbkdf2_sha256|pbkdf2_sha1|argon2|bcrypt_sha256|bcrypt|scrypt|md5|sha1|crypt)"
    r"\$[^$\s]*\$[^\s]+|\$(?:2[abxy]?|argon2(?:id|i|d)|[156])\$[^\s]+)$"
)

_WORDY_VALUE = re.compile(
    # private-state-token, KUBEFLOW_SERVER_TOKEN, sk-ant-oat01-file (a token's prefix and a
    # word: anthropic's tests), made-up-secret\n (a newline escape: a header-injection test),
    # oauth2/v2.0/token (a version's number), tid=valid-copilot-token (key=value words)
    # (______LightGBM_Binary_File_Token______\n: separators around the words too)
    r"^(?:[_.-]*[A-Za-z]+\d{0,2}(?:[_\-. /:=](?:[A-Za-z]+\d{0,2}|\d{1,2}))+[_.-]*(?:\\[nrt])*"
    # IdTokenHttpNotFound, LlamaTokenizerFast, TypeInputCheckPasswordSRP (telethon's types)
    r"|[A-Za-z][a-z]+(?:[A-Z][a-z]+|[A-Z]{2,6}(?=[A-Z][a-z]|$))+"
    r"|[\w./-]+\.(?:json|ya?ml|toml|ini|cfg|txt|pem|key|crt|env|py|js|ts|html?)"  # file
    # a type written as a string: secret_keys: "Iterable[pysequoia.Tsk]" (dulwich 1.2)
    r"|[A-Za-z_][\w.]*\[[\w.\[\],|]*\])$"
)


def _is_template_url(user: str, password: str, host: str) -> bool:
    """Whether a URL's credentials are a template, a documented default or not for a real
    host: ``user:password@host`` rather than a password someone pasted."""
    if any(_TEMPLATE_PART.search(part) for part in (user, password, host) if part):
        return True
    if _NOT_IN_USERINFO.search(user) or _NOT_IN_USERINFO.search(password):
        return True  # no client takes this URL: a URL parser's test case
    decoded = unquote(password)
    if len(decoded) < MIN_URL_PASSWORD or _CONTROL.search(decoded):
        return True  # ":%3A%40c@": a few characters; "pass%5B%7F": a control character
    if len(host.rsplit(":", 1)[0]) < 2:
        return True  # "@d:2/": a one-letter host
    if _NAME_OF_A_VALUE.match(password) or _NAME_OF_A_VALUE.match(host):
        return True  # PASSWORD, SAS_KEY, @HOST: the names of what goes there
    if is_placeholder(re.sub(r"[^\w\s.-]", " ", decoded)):  # pass@word: two words
        # "password", "secret1" (celery's sentinel://:secret1@h1 tests), "pass%40word"
        # (colander's tests: pass@word, percent-encoded as a URL's userinfo must be)
        return True
    if user and password.lower() == user.lower():
        return True  # guest:guest, postgres:postgres: a service's well-known default
    return bool(_DOC_HOST.match(host))


def is_placeholder(value: str) -> bool:
    """Whether a string is a stand-in for a secret rather than one: ``"secret"``,
    ``"changeme"``, ``"<your key>"``, ``"xxxxxx"``, an empty string (flask-wtf's example
    apps set ``SECRET_KEY = "secret"``), a few words naming what it stands for
    (``"session-token"``), or punctuation alone: nats-py compares a subject ``token``
    with ``">"`` and ``"*"``, its wildcards; a secret has a letter or a digit."""
    return (
        not any(c.isalnum() for c in value)
        or bool(_PLACEHOLDER.search(value))
        or _placeholder_word(re.sub(r"[\s_-]", "", value.lower()))
        or _names_what_it_stands_for(value)
    )


def _placeholder_word(word: str) -> bool:
    """A placeholder word, or one numbered (``secret1``, ``password2``)."""
    return word in _PLACEHOLDER_WORDS or word.rstrip("0123456789") in _PLACEHOLDER_WORDS


# the words a name ends with when it holds a secret, and two a value uses for one
_STAND_IN_WORDS = _SECRET_NAME_ENDINGS | {"pass", "apikey"}


def _names_what_it_stands_for(value: str) -> bool:
    """A few plain words, one of which says what the value stands in for: kombu's tests
    pass ``"fresh_token"``, ``"session-token"``, ``"sts-secret"``, ``"TestPassword"``;
    numbered, one of a batch (django-oauth-toolkit's ``"batch-token-1049"``)."""
    words = name_words(value)
    if len(words) > 1 and words[-1].isdigit():
        words = words[:-1]
    return (
        0 < len(words) <= 4
        and all(word.isalpha() for word in words)
        and any(word in _STAND_IN_WORDS for word in words)
    )


def is_unsigned_jwt(value: str) -> bool:
    """Whether a value is a JSON Web Token that nothing signed: an empty signature, or a
    header that says ``"alg": "none"``. No correct verifier accepts it, so it grants
    nothing; tests build them to feed a decoder (pyjwt 2.15: ``"eyJhbGciOiJub25lIi…e30."``)."""
    parts = value.split(".")
    if len(parts) != 3:
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
    except (binascii.Error, ValueError):
        return False
    if not isinstance(header, dict) or "alg" not in header:
        return False
    return not parts[2] or str(header["alg"]).lower() == "none"


def shannon_entropy(text: str) -> float:
    """Bits per character: random keys score high, words and placeholders low."""
    if not text:
        return 0.0
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


@dataclass(frozen=True)
class SecretHit:
    rule: SecretRule
    start: int
    end: int


def find_secrets(text: str) -> list[SecretHit]:
    """Every credential-looking span in ``text`` (non-overlapping, first rule wins)."""
    hits: list[SecretHit] = []
    for rule in RULES:
        for match in rule.regex.finditer(text):
            start, end = match.span(rule.group)
            value = match.group(rule.group) or ""
            if rule.min_entropy and shannon_entropy(value) < rule.min_entropy:
                continue
            if rule.kind not in ("private-key",) and _PLACEHOLDER.search(value):
                continue
            if rule.kind in ("jwt", "generic-secret") and is_unsigned_jwt(value):
                continue
            if rule.kind == "private-key" and _STUB_KEY.match(text, end):
                continue
            if rule.kind == "aws-access-key" and _PRE_SIGNED.search(
                text, max(0, start - 40), start
            ):
                continue  # a pre-signed URL's key id: public by design, no secret beside it
            if rule.kind == "generic-secret" and (
                not names_a_secret(match.group(1))
                or _WORDY_VALUE.match(value)
                or _names_what_it_stands_for(value)
                or _BETWEEN_STRINGS.match(value)
                or _PLAIN_ADDRESS.match(value)
                or _PASSWORD_HASH.match(value)
            ):
                continue
            if rule.kind == "url-credentials" and (
                _is_template_url(match.group(1), value, match.group(3))
                or match.group(0).lower().startswith(_NO_CREDENTIALS_SCHEMES)
            ):
                continue
            if any(h.start < end and start < h.end for h in hits):
                continue
            hits.append(SecretHit(rule, start, end))
    return sorted(hits, key=lambda h: h.start)


def redact_secrets(text: str) -> str:
    """``text`` with every detected secret replaced by a marker naming its kind."""
    hits = find_secrets(text)
    if not hits:
        return text
    out = []
    last = 0
    for hit in hits:
        out.append(text[last : hit.start])
        out.append(f"[REDACTED {hit.rule.kind}]")
        last = hit.end
    out.append(text[last:])
    return "".join(out)


def scan_secrets(diff: DiffModel) -> list[Finding]:
    """One ``secrets:<kind>`` finding per added line that holds a credential; in a web
    page or a minified bundle (or a bundled line of script), only keys of a known kind (a
    generic ``apiKey`` there is a client-side key)."""
    findings: list[Finding] = []
    for entry in diff.reviewable():
        web_page = bool(_WEB_PAGE.search(entry.path))
        script = entry.path.lower().endswith(_BUNDLED_SUFFIXES)
        for number, text in sorted(entry.added.items()):
            public = web_page or (script and len(text) >= _BUNDLED_LINE)
            hits = [
                h for h in find_secrets(text) if not (public and h.rule.kind == "generic-secret")
            ]
            if not hits:
                continue
            hit = hits[0]
            labels = sorted({h.rule.label for h in hits})
            findings.append(
                Finding(
                    path=entry.path,
                    line=number,
                    side="RIGHT",
                    pattern=f"secrets:{hit.rule.kind}",
                    severity="security",
                    message=(
                        f"This line appears to contain {' and '.join(labels)}. "
                        "Anything pushed to the repository should be treated as leaked: "
                        "revoke and rotate it, then load it from the environment or a "
                        "secret store instead of the source."
                    ),
                    source="secrets",
                    code=redact_secrets(text),
                )
            )
    return findings
