"""Handing deliveries to the broker, behind a Protocol so the web app can be tested alone."""

from __future__ import annotations

from typing import Any, Protocol

from celery import Celery


class QueueUnavailable(Exception):
    """The broker did not take the message; the caller must answer 503."""


class Enqueuer(Protocol):
    def enqueue(self, task: str, queue: str, delivery: dict[str, Any], task_id: str) -> None: ...

    def ping(self) -> bool: ...


class CeleryEnqueuer:
    """Publishes by task *name*: the web process never imports the task code."""

    def __init__(self, app: Celery, *, timeout_s: float) -> None:
        self._app = app
        self._timeout = timeout_s

    def enqueue(self, task: str, queue: str, delivery: dict[str, Any], task_id: str) -> None:
        try:
            self._app.send_task(
                task,
                args=[delivery],
                queue=queue,
                routing_key=queue,
                task_id=task_id,
                retry=False,
                # Celery would otherwise repr() the whole payload for its logs, per message.
                argsrepr=f"[delivery {task_id}]",
                kwargsrepr="{}",
            )
        except Exception as exc:  # kombu raises many kinds; all mean "not queued"
            raise QueueUnavailable(f"{type(exc).__name__}: {exc}") from exc

    def ping(self) -> bool:
        try:
            with self._app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=self._timeout)
            return True
        except Exception:
            return False
