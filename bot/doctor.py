"""``kaizen doctor``: every dependency checked, each ok or with a reason a user can act on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.settings import Settings

# Past this many points embedded Qdrant (qdrant-client's local mode, which filters in
# Python) gets slow enough to notice in every review: bench/memory_scale.py.
EMBEDDED_COMFORT_POINTS = 20_000


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn (works, but needs attention) | fail | skip
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


def run_checks(settings: Settings) -> list[Check]:
    checks: list[Check] = [Check("settings", "ok", "all settings are valid")]
    for name, probe in (
        ("broker", _broker),
        ("qdrant", _qdrant),
        ("github", _github),
        ("llm", _llm),
        ("sandbox", _sandbox),
    ):
        checks.append(_guard(name, probe, settings))
    return checks


def _guard(name: str, probe: Callable[[Settings], Check], settings: Settings) -> Check:
    try:
        return probe(settings)
    except Exception as exc:
        return Check(name, "fail", f"{type(exc).__name__}: {exc}")


def _broker(settings: Settings) -> Check:
    if not settings.redis_url:
        folder = settings.broker_dir
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".doctor"
        probe.write_text("ok")
        probe.unlink()
        return Check("broker", "ok", f"embedded file broker at {folder} (one machine only)")
    import redis

    client = redis.Redis.from_url(settings.redis_url, socket_timeout=3, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        return Check("broker", "fail", f"Redis at {_safe_url(settings.redis_url)}: {exc}")
    finally:
        client.close()
    return Check("broker", "ok", f"Redis at {_safe_url(settings.redis_url)} answers")


def _qdrant(settings: Settings) -> Check:
    from qdrant_client import QdrantClient

    if settings.qdrant_url:
        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        client = QdrantClient(url=settings.qdrant_url, api_key=key, timeout=5)
        where = f"Qdrant server at {settings.qdrant_url}"
    else:
        path = settings.qdrant_local_path
        path.mkdir(parents=True, exist_ok=True)
        try:
            client = QdrantClient(path=str(path))
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                return Check(
                    "qdrant",
                    "ok",
                    f"embedded storage at {path} is open in a running Kaizen process",
                )
            raise
        where = f"embedded storage at {path}"
    try:
        names = [c.name for c in client.get_collections().collections]
        points = (
            sum(client.count(name, exact=True).count for name in names)
            if not settings.qdrant_url
            else 0
        )
    finally:
        client.close()
    if points > EMBEDDED_COMFORT_POINTS:
        return Check(
            "qdrant",
            "warn",
            f"{where} holds {points:,} experiences: embedded search is brute force in Python"
            " (measured: 65 ms at 10,000, 690 ms at 100,000 per filtered search, several per"
            " review); set KAIZEN_QDRANT_URL to a Qdrant server",
        )
    return Check("qdrant", "ok", f"{where}, {len(names)} collections")


def _github(settings: Settings) -> Check:
    if not settings.github_configured:
        return Check(
            "github",
            "skip",
            "no App configured (KAIZEN_APP_ID, KAIZEN_PRIVATE_KEY); `kaizen up` shows how",
        )
    from bot.github import GitHubApp

    gh = GitHubApp(settings)
    try:
        info = gh.app_info()
    finally:
        gh.close()
    slug = info.get("slug")
    detail = f"authenticated as App {info.get('name')!r} (id {info.get('id')}, slug {slug})"
    if slug and slug != settings.app_slug:
        return Check("github", "fail", f"{detail}, but KAIZEN_APP_SLUG is {settings.app_slug!r}")
    if settings.webhook_secret is None:
        return Check("github", "fail", f"{detail}, but KAIZEN_WEBHOOK_SECRET is not set")
    return Check("github", "ok", detail)


def _llm(settings: Settings) -> Check:
    if not settings.llm_base_url and not settings.llm_api_key:
        return Check("llm", "skip", "no LLM endpoint configured: offline policy (static analysis)")
    from openai import OpenAI

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "none"
    client = OpenAI(base_url=settings.llm_base_url, api_key=key, timeout=10, max_retries=1)
    models = [m.id for m in client.models.list()]
    if models and settings.llm_model not in models:
        return Check("llm", "fail", f"endpoint answers but has no model {settings.llm_model!r}")
    return Check("llm", "ok", f"endpoint answers, model {settings.llm_model}")


def _sandbox(settings: Settings) -> Check:
    from workers.sandbox.base import SandboxUnavailable
    from workers.sandbox.select import choose_sandbox

    if settings.sandbox == "none":
        return Check("sandbox", "ok", "UNSANDBOXED (KAIZEN_SANDBOX=none): only for trusted repos")
    try:
        sandbox = choose_sandbox(
            settings.sandbox,
            image=settings.sandbox_image,
            hide_paths=settings.sandbox_hidden_paths(),
        )
    except SandboxUnavailable as exc:
        return Check("sandbox", "fail", str(exc))
    if sandbox.name == "docker":
        return Check("sandbox", "ok", f"Docker engine answers, image {settings.sandbox_image}")
    return bwrap_python_check()


def bwrap_python_check(python: str = "python3") -> Check:
    """Under bubblewrap the tests run with the host's ``python3`` (as the sandbox's PATH
    finds it): without pytest every fix would end at its first test run."""
    from workers.sandbox.base import SAFE_ENV
    from workers.sandbox.interpreter import runner_info

    info = runner_info(python)
    install = (
        "install them for it (Debian: apt-get install python3-pytest python3-pytest-timeout "
        "python3-coverage) or use the Docker sandbox (KAIZEN_SANDBOX=docker)"
    )
    if info.executable is None:
        return Check(
            "sandbox",
            "fail",
            f"bubblewrap available, but there is no {python} on the sandbox's PATH "
            f"({SAFE_ENV['PATH']}): fixes cannot run tests; {install}",
        )
    if info.pytest_version is None:
        return Check(
            "sandbox",
            "fail",
            f"bubblewrap available, but {info.executable}, which runs the tests in it, "
            f"cannot import pytest: fixes cannot run tests; {install}",
        )
    runs = f"{info.executable} (pytest {info.pytest_version})"
    detail = f"bubblewrap available; tests run with {runs}"
    if info.missing:
        lacks = "; ".join(f"no {module}: {cost}" for module, cost in info.missing.items())
        return Check("sandbox", "warn", f"{detail}, but {lacks}; {install}")
    return Check("sandbox", "ok", detail)


def _safe_url(url: str) -> str:
    from urllib.parse import urlparse

    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@")
    return url
