"""ASGI entry point for ``uvicorn --factory bot.asgi:create`` and multi-process serving.

Each uvicorn worker process calls ``create`` and so builds its own settings, broker
connections and ledger client: nothing is shared between processes but Redis.
"""

from __future__ import annotations

from fastapi import FastAPI

from bot.app_manifest import setup_pending
from bot.cli import build_web_app, setup_logging
from bot.settings import load_settings


def create() -> FastAPI:
    settings = load_settings()
    if not setup_pending(settings):  # with no App at all, / serves the registration page
        settings.require("webhook_secret")
    setup_logging(settings)
    return build_web_app(settings)
