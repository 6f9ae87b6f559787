"""Kaizen's one settings object.

Every process builds it once from the environment (prefix ``KAIZEN_``) and passes it on;
nothing reads the environment at import time. Each process then asks only for the settings
it really uses (``require``), so that a worker without a webhook secret, or a web process
without the App's private key, still starts, while a missing setting that *is* needed stops
the process with one clear line per problem instead of a stack trace.

The GitHub App may also come from ``<KAIZEN_DATA_DIR>/github-app.json``, the file (mode
0600) that the setup page of ``kaizen serve`` writes after registering the App from its
manifest (``bot/app_manifest.py``). The environment wins: the file's App id, private key
and slug are used only when neither ``KAIZEN_APP_ID`` nor ``KAIZEN_PRIVATE_KEY`` is set, its
webhook secret only without ``KAIZEN_WEBHOOK_SECRET``. A file that other users can read is
refused, as ssh refuses such a key.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SandboxBackend = Literal["auto", "docker", "bwrap", "none"]

APP_CREDENTIALS_FILE = "github-app.json"
"""Where the setup page stores a registered App's credentials, under ``KAIZEN_DATA_DIR``."""

# What each requirement means to a user, so that a missing setting explains itself.
_REQUIREMENT_HELP: dict[str, str] = {
    "webhook_secret": "needed to verify that deliveries come from GitHub",
    "app_id": "needed to authenticate as the GitHub App",
    "private_key": "needed to authenticate as the GitHub App (PEM text or a path to the .pem file)",
    "redis_url": "needed to reach the task broker",
    "llm_api_key": "needed to call the LLM endpoint",
}


class SettingsError(Exception):
    """Raised with one human-readable line per problem; the CLI prints them and exits."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class Settings(BaseSettings):
    """All of Kaizen's server-side configuration (never settable from a repository)."""

    model_config = SettingsConfigDict(
        env_prefix="KAIZEN_",
        env_file=None,
        extra="ignore",
        validate_default=True,
    )

    # The GitHub App.
    app_id: int | None = Field(default=None, gt=0)
    private_key: SecretStr | None = None
    webhook_secret: SecretStr | None = None
    app_slug: str = Field(default="kaizen", pattern=r"^[a-z0-9][a-z0-9-]{0,33}$")
    github_api_url: str = "https://api.github.com"
    # The web pages (github.com, or a GitHub Enterprise Server host): App registration.
    github_web_url: str = "https://github.com"
    github_timeout_s: float = Field(default=15.0, gt=0)
    github_max_rate_limit_wait_s: float = Field(default=900.0, ge=0)
    # GitHub asks integrations to pace requests, writes especially, to stay clear of
    # secondary rate limits; PyGithub enforces these gaps per installation client.
    github_seconds_between_requests: float = Field(default=0.25, ge=0)
    github_seconds_between_writes: float = Field(default=1.0, ge=0)

    # Queue and storage.
    redis_url: str | None = None
    data_dir: Path = Path(".kaizen")
    qdrant_url: str | None = None
    qdrant_api_key: SecretStr | None = None
    qdrant_path: Path | None = None

    # LLM (any OpenAI-compatible endpoint); absent means the offline policy.
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = Field(default=120.0, gt=0)
    # What the endpoint charges, for the cost shown in check runs and reports (0 = unknown).
    llm_usd_per_million_prompt_tokens: float = Field(default=0.0, ge=0)
    llm_usd_per_million_completion_tokens: float = Field(default=0.0, ge=0)

    # Reviews: GitHub sends no webhook for reactions, so 👍/👎 are polled on open PRs.
    reaction_poll_interval_s: float = Field(default=600.0, ge=30.0)
    reaction_poll_max_age_days: float = Field(default=30.0, gt=0)
    # Keep one "Kaizen weekly report" issue per active repository up to date (weekly).
    weekly_digest: bool = False

    sandbox: SandboxBackend = "auto"
    sandbox_image: str = "kaizen-sandbox:latest"

    # Memory and learning.
    embedder: Literal["local", "openai"] = "local"
    embedding_model: str = "text-embedding-3-small"  # only for embedder=openai
    learning_half_life_days: float = Field(default=30.0, ge=7.0, le=3650.0)
    retention_per_repo: int = Field(default=20000, ge=100)
    # Erase what was learned about a repository when the App loses it (repository deleted,
    # removed from the installation, or the App uninstalled). Off: memory is kept, so an
    # accidental uninstall loses nothing; `kaizen memory forget` erases on request.
    forget_removed_repos: bool = False
    # How long to wait before forgetting: GitHub tells the old owner's installation that it
    # lost a transferred repository at about the time it sends repository.transferred, and
    # the move must carry the memory over first. Below the broker's redelivery window.
    forget_delay_s: int = Field(default=600, ge=0, le=1800)

    # Webhook intake.
    max_body_bytes: int = Field(default=25 * 1024 * 1024, gt=0)
    delivery_ttl_s: int = Field(default=3 * 24 * 3600, gt=0)
    enqueue_timeout_s: float = Field(default=2.0, gt=0)

    # Task limits: the broker's visibility timeout must stay above the hard limit.
    task_soft_time_limit_s: int = Field(default=1500, gt=0)
    task_time_limit_s: int = Field(default=1800, gt=0)
    # A task whose worker died is handed to another worker this long after its time limit
    # (Redis visibility timeout = time limit + margin).
    redelivery_margin_s: int = Field(default=600, ge=5)

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_json: bool = True
    worker_metrics_port: int = Field(default=0, ge=0, le=65535)
    public_url: str | None = None
    # The reports dashboard (/reports) answers only to this token (bearer or login page).
    reports_token: SecretStr | None = None

    @field_validator("private_key", mode="before")
    @classmethod
    def _load_private_key(cls, value: Any) -> Any:
        """Accept PEM text, PEM with literal ``\\n`` (common in env files), or a path."""
        if value is None or value == "":
            return None
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        text = str(value).strip()
        if "-----BEGIN" in text:
            return text.replace("\\n", "\n")
        decoded = _base64_pem(text)
        if decoded is not None:  # base64 of the PEM, as Kubernetes and CI secrets often hold
            return decoded
        # Never echo the value: it may be a key pasted without its BEGIN/END lines.
        path = _key_file(text)
        if path is None:
            raise ValueError("is neither PEM text, base64 of PEM, nor the path of a readable file")
        content = path.read_text(encoding="utf-8", errors="replace").strip()
        if "-----BEGIN" not in content or "PRIVATE KEY-----" not in content:
            raise ValueError("the file it names does not hold a PEM private key")
        return content

    @model_validator(mode="before")
    @classmethod
    def _stored_app_credentials(cls, data: Any) -> Any:
        """Fill the App from ``<data_dir>/github-app.json`` (written by the setup page).

        The environment wins: the file's App (id, private key, slug) is used only when
        neither ``KAIZEN_APP_ID`` nor ``KAIZEN_PRIVATE_KEY`` is set, and its webhook secret
        only when ``KAIZEN_WEBHOOK_SECRET`` is not.
        """
        if not isinstance(data, dict):
            return data
        data_dir = data.get("data_dir") or Path(".kaizen")
        try:
            path = Path(data_dir) / APP_CREDENTIALS_FILE
        except TypeError:
            return data  # an invalid data_dir: its own validation says so
        stored = read_app_credentials(path)
        if stored is None:
            return data
        data = dict(data)

        def given(name: str) -> bool:
            return data.get(name) not in (None, "")

        if not given("app_id") and not given("private_key"):
            data["app_id"] = stored.get("app_id")
            data["private_key"] = stored.get("private_key")
            if not given("app_slug") and stored.get("slug"):
                data["app_slug"] = stored["slug"]
        if not given("webhook_secret") and stored.get("webhook_secret"):
            data["webhook_secret"] = stored["webhook_secret"]
        return data

    @field_validator("github_api_url", "github_web_url", "llm_base_url", "qdrant_url", "public_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"must be an http(s) URL, got {value!r}")
        return value.rstrip("/")

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if urlparse(value).scheme not in ("redis", "rediss", "unix"):
            raise ValueError(f"must be a redis://, rediss:// or unix:// URL, got {value!r}")
        return value

    @field_validator(
        "webhook_secret", "llm_api_key", "qdrant_api_key", "reports_token", mode="before"
    )
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    # -- derived values -------------------------------------------------------------------

    @property
    def bot_login(self) -> str:
        """The login GitHub gives the App's bot user; its own events carry it as sender."""
        return f"{self.app_slug}[bot]"

    @property
    def embedded_broker(self) -> bool:
        return self.redis_url is None

    @property
    def broker_dir(self) -> Path:
        return self.data_dir / "broker"

    @property
    def qdrant_local_path(self) -> Path:
        return self.qdrant_path or self.data_dir / "qdrant"

    @property
    def app_credentials_path(self) -> Path:
        """The App credentials the setup page stores (mode 0600) and settings read."""
        return self.data_dir / APP_CREDENTIALS_FILE

    @property
    def github_configured(self) -> bool:
        return self.app_id is not None and self.private_key is not None

    def secret_values(self) -> list[str]:
        """Every configured secret, so the log redactor can hide exact occurrences."""
        secrets = [
            self.webhook_secret,
            self.private_key,
            self.llm_api_key,
            self.qdrant_api_key,
            self.reports_token,
        ]
        return [s.get_secret_value() for s in secrets if s is not None]

    def sandbox_hidden_paths(self) -> list[Path]:
        """Host paths that repository code run in the sandbox must not read: the data dir
        (other repositories' fix clones, memory's stores, the App's stored credentials)
        and the private key's file when ``KAIZEN_PRIVATE_KEY`` names one. Covered by
        bubblewrap on top of its defaults, which only know ``./.kaizen`` and system paths;
        a data dir elsewhere (``/srv/kaizen``) would otherwise be readable."""
        paths = [self.data_dir.expanduser().absolute()]
        key_file = _key_file(os.environ.get("KAIZEN_PRIVATE_KEY", "").strip())
        if key_file is not None:
            paths.append(key_file.absolute())
        return paths

    def require(self, *names: str) -> None:
        """Fail with one line per missing setting that this process needs."""
        problems = [
            f"KAIZEN_{name.upper()} is not set ({_REQUIREMENT_HELP.get(name, 'required here')})"
            for name in names
            if getattr(self, name) in (None, "")
        ]
        if problems:
            raise SettingsError(problems)


def _key_file(text: str) -> Path | None:
    """The file ``KAIZEN_PRIVATE_KEY`` names, when it names one rather than holding PEM."""
    if not text or "-----BEGIN" in text or "\n" in text or len(text) >= 1024:
        return None
    try:
        path = Path(text).expanduser()
        return path if path.is_file() else None
    except OSError:
        return None


def _base64_pem(text: str) -> str | None:
    try:
        decoded = base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return decoded.strip() if "PRIVATE KEY-----" in decoded else None


def read_app_credentials(path: Path) -> dict[str, Any] | None:
    """The stored App credentials, None without a file; refuses a file others can read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"stored App credentials {path} cannot be read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ValueError(
                f"stored App credentials {path} are open to other users "
                f"(mode {stat.S_IMODE(mode):04o}); run: chmod 600 {path}"
            )
        raw = handle.read()
    try:
        stored = json.loads(raw)
    except ValueError:
        stored = None
    if not isinstance(stored, dict):
        raise ValueError(f"stored App credentials {path} are not a JSON object")
    return stored


def load_settings(**overrides: Any) -> Settings:
    """Build settings from the environment, turning validation errors into clear lines."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(_describe(exc)) from None


def _describe(exc: ValidationError) -> list[str]:
    lines = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        # Whole-model problems (the stored App credentials) name their file themselves.
        lines.append(f"KAIZEN_{field.upper()}: {message}" if field else message)
    return lines
