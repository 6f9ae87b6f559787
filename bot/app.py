"""The web process: GitHub's deliveries in, tasks out, and the health endpoints.

The webhook handler never calls GitHub or an LLM: it verifies, deduplicates, routes and
enqueues, then answers, so GitHub's 10-second delivery timeout is never at risk and a slow
model never turns into failed deliveries.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from anyio import to_thread
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.routing import Route as StarletteRoute

from bot import app_manifest
from bot.deliveries import DeliveryLedger, LedgerUnavailable
from bot.log_setup import log_context
from bot.memory_setup import build_memory
from bot.metrics import Metrics, make_metrics
from bot.queueing import Enqueuer, QueueUnavailable
from bot.report_routes import install_report_routes
from bot.routing import Ignore, Route, route
from bot.settings import Settings
from bot.webhook import decode_payload, verify_signature
from memory.service import Memory

log = logging.getLogger(__name__)


@dataclass
class Intake:
    """What the webhook handler needs; built by the CLI, replaced in tests."""

    settings: Settings
    ledger: DeliveryLedger | None
    enqueuer: Enqueuer | None
    metrics: Metrics


def create_app(
    settings: Settings,
    *,
    ledger: DeliveryLedger | None,
    enqueuer: Enqueuer | None,
    metrics: Metrics | None = None,
) -> FastAPI:
    """Build the FastAPI app. ``ledger``/``enqueuer`` are None only with no broker at all."""
    intake = Intake(settings, ledger, enqueuer, metrics or make_metrics())
    app = FastAPI(title="Kaizen", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.intake = intake
    templates = Environment(
        loader=PackageLoader("bot", "templates"),
        autoescape=select_autoescape(["html", "html.j2"]),
    )

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> HTMLResponse:
        configured = settings.github_configured and settings.webhook_secret is not None
        public_url = app_manifest.public_base(settings, str(request.base_url))
        manifest = app_manifest.build_manifest(public_url)
        page = templates.get_template("index.html.j2").render(
            configured=configured,
            app_slug=settings.app_slug,
            webhook_url=public_url + "/webhooks/github",
            broker="Redis" if settings.redis_url else "embedded (file) broker",
            public_url=public_url,
            unreachable=app_manifest.unreachable_by_github(public_url),
            app_name=manifest["name"],
            manifest_json=json.dumps(manifest, indent=2),
            credentials_path=settings.app_credentials_path,
            github_web_url=settings.github_web_url,
        )
        return HTMLResponse(page, headers=None if configured else dict(_SETUP_HEADERS))

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        checks = await to_thread.run_sync(_readiness, intake)
        ready = all(checks.values())
        return JSONResponse(
            {"status": "ready" if ready else "unavailable", "checks": checks},
            status_code=200 if ready else 503,
        )

    @app.get("/metrics")
    async def prometheus_metrics() -> Response:
        body, content_type = intake.metrics.render()
        return Response(body, media_type=content_type)

    async def webhook(request: Request) -> JSONResponse:
        return await _handle_delivery(request, intake)

    # A plain Starlette route: the hot path skips FastAPI's dependency resolution.
    app.router.routes.append(StarletteRoute("/webhooks/github", webhook, methods=["POST"]))

    # Reports read scores, the activity log and trajectories, never embedded Qdrant (the
    # worker's), so memory is built lazily and its experience store is never opened here.
    memories: list[Memory] = []

    def memory() -> Memory:
        if not memories:
            memories.append(build_memory(settings))
        return memories[0]

    install_report_routes(app, settings, memory)
    _install_setup_routes(app, settings, templates)
    return app


# Setup pages carry one-time codes and, in print mode, secrets: never cached or framed, and
# their URLs (with GitHub's code) never sent as a Referer.
_SETUP_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
_MAX_SETUP_FORM_BYTES = 4096


def _install_setup_routes(app: FastAPI, settings: Settings, templates: Environment) -> None:
    """Registering the GitHub App from its manifest (see ``bot/app_manifest.py``)."""
    states = app_manifest.state_store(settings)

    def page(template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        body = templates.get_template(template).render(**context)
        return HTMLResponse(body, status_code=status_code, headers=dict(_SETUP_HEADERS))

    def problem(status_code: int, title: str, message: str, *, retry: bool = False) -> HTMLResponse:
        return page("setup_error.html.j2", status_code, title=title, message=message, retry=retry)

    def already_registered() -> HTMLResponse:
        return problem(
            409,
            "A GitHub App is already configured",
            f"This Kaizen already uses the App {settings.app_slug!r} (id {settings.app_id}); "
            "registering another one from here is switched off.",
        )

    @app.post("/setup", response_class=HTMLResponse)
    async def setup_start(request: Request) -> HTMLResponse:
        if settings.app_id is not None:
            return already_registered()
        body = await request.body()
        fields = parse_qs(body[:_MAX_SETUP_FORM_BYTES].decode("utf-8", "replace"))

        def field(name: str) -> str:
            return (fields.get(name) or [""])[0]

        try:
            name = app_manifest.clean_app_name(field("name"))
            org = (
                app_manifest.clean_org(field("org")) if field("account") == "organization" else None
            )
        except app_manifest.SetupError as exc:
            return problem(400, "That setup form is not right", str(exc))
        public_url = app_manifest.public_base(settings, str(request.base_url))
        manifest = app_manifest.build_manifest(public_url, name=name)
        print_only = field("print_only") not in ("", "0", "false")
        state = await to_thread.run_sync(lambda: states.create(print_only=print_only, org=org))
        log.info("app setup started", extra={"org": org, "print_only": print_only})
        return page(
            "setup_redirect.html.j2",
            action=app_manifest.registration_url(settings.github_web_url, state, org),
            manifest_json=json.dumps(manifest, separators=(",", ":")),
            org=org,
        )

    @app.get("/setup/callback", response_class=HTMLResponse)
    async def setup_callback(request: Request) -> HTMLResponse:
        if settings.app_id is not None:
            return already_registered()
        code = request.query_params.get("code", "")
        state = request.query_params.get("state", "")
        pending = await to_thread.run_sync(states.claim, state)
        if pending is None:
            return problem(
                400,
                "This setup link is not valid",
                "GitHub sent you back with a state this Kaizen did not issue, or one that was "
                "already used or is more than an hour old.",
            )
        try:
            app_credentials = await to_thread.run_sync(app_manifest.exchange_code, settings, code)
        except app_manifest.GitHubUnreachable as exc:
            await to_thread.run_sync(states.restore, state, pending)
            log.warning("app setup: GitHub unreachable", extra={"error": str(exc)})
            return problem(502, "GitHub did not answer", str(exc), retry=True)
        except app_manifest.SetupError as exc:
            log.warning("app setup: code refused", extra={"error": str(exc)})
            return problem(
                400,
                "GitHub refused the registration code",
                f"{exc} The App itself may exist on GitHub already: delete it there (or keep "
                "it and configure it by hand) before registering again.",
            )
        path = settings.app_credentials_path
        stored = exists = False
        if not pending.print_only:
            record = app_credentials.stored_record(settings)
            stored = await to_thread.run_sync(app_manifest.store_credentials, path, record)
            exists = not stored
        log.info(
            "app registered",
            extra={
                "app_id": app_credentials.app_id,
                "slug": app_credentials.slug,
                "stored": stored,
            },
        )
        return page(
            "setup_done.html.j2",
            app=app_credentials,
            stored=stored,
            exists=exists,
            credentials_path=path,
            env_webhook_secret=settings.webhook_secret is not None,
        )

    @app.get("/setup/installed", response_class=HTMLResponse)
    async def setup_installed() -> HTMLResponse:
        configured = settings.github_configured and settings.webhook_secret is not None
        return page("setup_installed.html.j2", configured=configured)


def _readiness(intake: Intake) -> dict[str, bool]:
    return {
        "broker": bool(intake.enqueuer and intake.enqueuer.ping()),
        "ledger": bool(intake.ledger and intake.ledger.ping()),
    }


def _reply(status_code: int, **content: Any) -> JSONResponse:
    return JSONResponse(content, status_code=status_code)


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The raw body, or None once it passes ``limit`` (without buffering the rest)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def _handle_delivery(request: Request, intake: Intake) -> JSONResponse:
    settings = intake.settings
    counter = intake.metrics.deliveries
    event = request.headers.get("x-github-event", "")
    label = event or "unknown"
    if settings.webhook_secret is None:
        counter.labels(label, "rejected").inc()
        return _reply(503, status="error", error="KAIZEN_WEBHOOK_SECRET is not configured")
    body = await _read_body(request, settings.max_body_bytes)
    if body is None:
        counter.labels(label, "rejected").inc()
        return _reply(413, status="error", error="payload too large")
    secret = settings.webhook_secret.get_secret_value().encode()
    if not verify_signature(secret, body, request.headers.get("x-hub-signature-256")):
        counter.labels(label, "rejected").inc()
        return _reply(401, status="error", error="signature missing or invalid")
    delivery_id = request.headers.get("x-github-delivery", "")
    if not event or not delivery_id:
        counter.labels(label, "rejected").inc()
        return _reply(400, status="error", error="X-GitHub-Event and X-GitHub-Delivery required")
    payload = decode_payload(body, request.headers.get("content-type"))
    if payload is None:
        counter.labels(label, "rejected").inc()
        return _reply(
            400,
            status="error",
            error="body is not a JSON object (nor a form whose payload field is one)",
        )

    repo = (payload.get("repository") or {}).get("full_name")
    installation_id = (payload.get("installation") or {}).get("id")
    with log_context(
        delivery_id=delivery_id, event=event, repo=repo, installation_id=installation_id
    ):
        decision = route(event, payload, app_slug=settings.app_slug)
        if isinstance(decision, Ignore):
            counter.labels(event, "ignored").inc()
            log.info("delivery ignored", extra={"reason": decision.reason})
            return _reply(
                200 if event == "ping" else 202,
                status="ignored",
                reason=decision.reason,
                delivery=delivery_id,
            )
        delivery = {
            "id": delivery_id,
            "event": event,
            "action": payload.get("action"),
            "installation_id": installation_id,
            "repo": repo,
            "payload": payload,
        }
        started = time.perf_counter()
        try:
            # Inline, not in a thread: two sub-millisecond Redis round trips cost less than
            # a thread hop and its GIL hand-offs (measured: 530/s with a hop, 1,050/s
            # without). Socket timeouts (KAIZEN_ENQUEUE_TIMEOUT_S) bound a stalled broker.
            status = _claim_and_enqueue(intake, decision, delivery)
        except (LedgerUnavailable, QueueUnavailable) as exc:
            counter.labels(event, "unavailable").inc()
            log.error("delivery refused: broker unavailable", extra={"error": str(exc)})
            return _reply(503, status="error", error="broker unavailable, delivery not queued")
        intake.metrics.enqueue_seconds.observe(time.perf_counter() - started)
        counter.labels(event, status).inc()
        if status == "duplicate":
            return _reply(200, status="duplicate", delivery=delivery_id)
        log.info("delivery queued", extra={"task": decision.task, "queue": decision.queue})
        return _reply(
            202,
            status="queued",
            delivery=delivery_id,
            task=decision.task,
            queue=decision.queue,
        )


def _claim_and_enqueue(intake: Intake, decision: Route, delivery: dict[str, Any]) -> str:
    """Claim first, release if the broker refuses: a refused delivery stays unhandled."""
    if intake.ledger is None or intake.enqueuer is None:
        raise QueueUnavailable("no broker configured")
    delivery_id = str(delivery["id"])
    if not intake.ledger.claim(delivery_id):
        return "duplicate"
    try:
        intake.enqueuer.enqueue(decision.task, decision.queue, delivery, task_id=delivery_id)
    except QueueUnavailable:
        try:
            intake.ledger.release(delivery_id)
        except LedgerUnavailable:
            log.error("could not release claim; redelivery will be seen as duplicate")
        raise
    return "queued"
