"""``/reports``: the dashboard, behind a token.

Reports show code, review comments and the reasons developers gave, so nothing is shown
without ``KAIZEN_REPORTS_TOKEN``: sent as ``Authorization: Bearer …`` (scripts) or entered
once on the login page (browsers get an HttpOnly, SameSite=Strict cookie holding an HMAC
of the token, never the token itself). Without a configured token the dashboard is off.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from urllib.parse import parse_qs

from anyio import to_thread
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from bot.report_html import render_html, render_login
from bot.settings import Settings
from memory.report import Report, build_report
from memory.service import Memory

COOKIE = "kaizen_reports"
MAX_FORM_BYTES = 4096


def _cookie_value(token: str) -> str:
    return hmac.new(token.encode(), b"kaizen-reports-session", hashlib.sha256).hexdigest()


def authorised(request: Request, settings: Settings) -> bool:
    if settings.reports_token is None:
        return False
    token = settings.reports_token.get_secret_value()
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer ") and hmac.compare_digest(
        header[7:].strip().encode(), token.encode()
    ):
        return True
    cookie = request.cookies.get(COOKIE, "")
    return bool(cookie) and hmac.compare_digest(cookie.encode(), _cookie_value(token).encode())


def install_report_routes(app: FastAPI, settings: Settings, memory: Callable[[], Memory]) -> None:
    def unauthorised() -> HTMLResponse:
        page = render_login(error=None, configured=settings.reports_token is not None)
        return HTMLResponse(page, status_code=401, headers={"WWW-Authenticate": "Bearer"})

    def build(repo: str | None) -> tuple[Report, list[str]]:
        mem = memory()
        assert mem.activity is not None
        report = build_report(
            scores=mem.scores,
            activity=mem.activity,
            trajectories=mem.trajectories,
            repo=repo,
            usd_per_million_tokens=(
                settings.llm_usd_per_million_prompt_tokens,
                settings.llm_usd_per_million_completion_tokens,
            ),
        )
        return report, mem.activity.repos()

    async def page(request: Request, repo: str | None) -> Response:
        if not authorised(request, settings):
            return unauthorised()
        report, repos = await to_thread.run_sync(build, repo)
        if repo is not None and repo not in repos:
            return HTMLResponse(render_html(report, repos=repos), status_code=404)
        if request.query_params.get("format") == "json":
            return JSONResponse(report.as_dict())
        return HTMLResponse(
            render_html(report, repos=repos),
            headers={
                "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                "img-src data:; form-action 'self'",
                "Cache-Control": "no-store",
            },
        )

    @app.get("/reports")
    async def all_repos(request: Request) -> Response:
        return await page(request, None)

    @app.get("/reports/login", response_class=HTMLResponse)
    async def login_form() -> HTMLResponse:
        return HTMLResponse(render_login(error=None, configured=settings.reports_token is not None))

    @app.post("/reports/login")
    async def login(request: Request) -> Response:
        body = await request.body()
        fields = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
        given = (fields.get("token") or [""])[0]
        token = settings.reports_token.get_secret_value() if settings.reports_token else None
        if token is None or not hmac.compare_digest(given.encode(), token.encode()):
            return HTMLResponse(
                render_login(error="That token is not right.", configured=token is not None),
                status_code=401,
            )
        response = RedirectResponse("/reports", status_code=303)
        secure = bool(settings.public_url and settings.public_url.startswith("https://"))
        response.set_cookie(
            COOKIE,
            _cookie_value(token),
            httponly=True,
            samesite="strict",
            secure=secure,
            max_age=30 * 86400,
            path="/reports",
        )
        return response

    @app.get("/reports/{owner}/{name}")
    async def one_repo(request: Request, owner: str, name: str) -> Response:
        return await page(request, f"{owner}/{name}")
