"""Celery task entry points: thin wrappers that load, call the domain, and save.

Tasks are registered by name (``kaizen.*``) so the web process can enqueue them without
importing this module. Every task receives the *delivery* the webhook built: ``id``,
``event``, ``action``, ``installation_id``, ``repo`` and the GitHub ``payload``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import Task, shared_task
from celery.signals import (
    task_failure,
    task_postrun,
    task_prerun,
    task_retry,
    worker_process_shutdown,
    worker_shutdown,
)

from bot.commands import parse_commands
from bot.deliveries import SqliteLedger
from bot.log_setup import log_context
from bot.metrics import Metrics, make_metrics
from bot.repo_config import load_repo_config
from workers.celery_app import KaizenCelery
from workers.command_handler import compose_reply
from workers.context import WorkerContext, close_contexts, context_for

log = logging.getLogger(__name__)

Delivery = dict[str, Any]


def _context(task: Task) -> WorkerContext:
    app = task.app
    assert isinstance(app, KaizenCelery), "tasks run only in a Kaizen Celery app"
    return context_for(app.settings)


def _delivery_context(delivery: Delivery) -> Any:
    return log_context(
        delivery_id=delivery.get("id"),
        event=delivery.get("event"),
        repo=delivery.get("repo"),
        installation_id=delivery.get("installation_id"),
    )


@shared_task(bind=True, name="kaizen.handle_command")
def handle_command(self: Task, delivery: Delivery) -> dict[str, Any]:
    """Reply to ``/kaizen …`` comments: one reply per comment, posted exactly once."""
    ctx = _context(self)
    settings = ctx.settings
    with _delivery_context(delivery):
        payload = delivery["payload"]
        comment = payload.get("comment") or {}
        issue = payload.get("issue") or {}
        user = str((comment.get("user") or {}).get("login") or "")
        commands = parse_commands(str(comment.get("body") or ""), settings.app_slug)
        if not commands:
            return {"status": "ignored", "reason": "no command"}
        repo = str(delivery["repo"])
        github = ctx.github.installation(int(delivery["installation_id"]))
        owner, _, name = repo.partition("/")
        loaded = load_repo_config(github, owner, name)
        if not loaded.config.commands.enabled:
            log.info("commands are disabled by %s", loaded.source_path)
            return {"status": "ignored", "reason": "commands disabled by repo config"}
        reply = compose_reply(
            commands,
            user=user,
            app_slug=settings.app_slug,
            permission=lambda: github.get_permission(repo, user),
            config_problems=loaded.problems,
            config_path=loaded.source_path,
        )
        if reply is None:
            return {"status": "ignored", "reason": "no command"}
        comment_id = github.post_issue_comment(
            repo, int(issue["number"]), reply.body, key=f"reply:{delivery['id']}"
        )
        log.info(
            "answered command",
            extra={"verbs": [c.verb for c in commands], "refused": reply.refused},
        )
        return {"status": "refused" if reply.refused else "answered", "comment_id": comment_id}


def _not_yet(feature: str, delivery: Delivery) -> dict[str, Any]:
    """Events for features that have not shipped: acknowledged and logged, nothing faked."""
    with _delivery_context(delivery):
        log.info("%s is not available yet; delivery acknowledged", feature)
    return {"status": "unavailable", "feature": feature}


@shared_task(bind=True, name="kaizen.review_pull_request")
def review_pull_request(self: Task, delivery: Delivery) -> dict[str, Any]:
    return _not_yet("pull request review", delivery)


@shared_task(bind=True, name="kaizen.fix_issue")
def fix_issue(self: Task, delivery: Delivery) -> dict[str, Any]:
    return _not_yet("issue fixing", delivery)


@shared_task(bind=True, name="kaizen.record_feedback")
def record_feedback(self: Task, delivery: Delivery) -> dict[str, Any]:
    return _not_yet("feedback learning", delivery)


@shared_task(bind=True, name="kaizen.finalize_pull_request")
def finalize_pull_request(self: Task, delivery: Delivery) -> dict[str, Any]:
    return _not_yet("pull request finalisation", delivery)


@shared_task(bind=True, name="kaizen.installation_changed")
def installation_changed(self: Task, delivery: Delivery) -> dict[str, Any]:
    """Bookkeeping: a removed or suspended installation loses its cached client."""
    ctx = _context(self)
    with _delivery_context(delivery):
        action = delivery.get("action")
        installation_id = delivery.get("installation_id")
        if action in ("deleted", "suspend") and installation_id and ctx.settings.github_configured:
            ctx.github.forget_installation(int(installation_id))
        log.info("installation %s", action)
    return {"status": "recorded", "action": action}


@shared_task(bind=True, name="kaizen.purge_deliveries")
def purge_deliveries(self: Task) -> dict[str, Any]:
    """Expire old delivery claims in the embedded ledger (Redis expires its own keys)."""
    settings = _context(self).settings
    if settings.redis_url:
        return {"status": "skipped", "reason": "redis expires claims itself"}
    ledger = SqliteLedger(settings.data_dir / "deliveries.sqlite3", ttl_s=settings.delivery_ttl_s)
    return {"status": "purged", "count": ledger.purge()}


@shared_task(bind=True, name="kaizen.retry_pending_signals")
def retry_pending_signals(self: Task) -> dict[str, Any]:
    """Apply feedback parked while the experience store was unreachable."""
    memory = _context(self).memory
    waiting = memory.pending.count()
    if not waiting:  # cheap: never opens (and locks) embedded Qdrant for nothing
        return {"status": "idle"}
    applied = memory.retry_pending()
    log.info("applied %d of %d parked signals", applied, waiting)
    return {"status": "retried", "applied": applied, "waiting": waiting}


# -- task metrics ------------------------------------------------------------------------

_metrics: Metrics | None = None
_started: dict[str, float] = {}


def _task_metrics() -> Metrics:
    global _metrics
    if _metrics is None:
        _metrics = make_metrics()
    return _metrics


def _on_prerun(task_id: str | None = None, **_: Any) -> None:
    if task_id:
        _started[task_id] = time.perf_counter()


def _on_postrun(
    task_id: str | None = None, task: Task | None = None, state: str | None = None, **_: Any
) -> None:
    started = _started.pop(task_id or "", None)
    if task is None:
        return
    metrics = _task_metrics()
    if started is not None:
        metrics.task_seconds.labels(task.name).observe(time.perf_counter() - started)
    if state == "SUCCESS":
        metrics.task_outcomes.labels(task.name, "success").inc()


def _on_failure(
    sender: Task | None = None, exception: BaseException | None = None, **_: Any
) -> None:
    name = sender.name if sender else "unknown"
    _task_metrics().task_outcomes.labels(name, "failure").inc()
    log.error("task failed", extra={"task": name, "error": repr(exception)})


def _on_retry(sender: Task | None = None, **_: Any) -> None:
    _task_metrics().task_outcomes.labels(sender.name if sender else "unknown", "retry").inc()


def install_task_metrics() -> None:
    """Record task outcomes and durations; called by the worker command, not at import."""
    task_prerun.connect(_on_prerun, weak=False, dispatch_uid="kaizen-prerun")
    task_postrun.connect(_on_postrun, weak=False, dispatch_uid="kaizen-postrun")
    task_failure.connect(_on_failure, weak=False, dispatch_uid="kaizen-failure")
    task_retry.connect(_on_retry, weak=False, dispatch_uid="kaizen-retry")


def _on_shutdown(**_: Any) -> None:
    close_contexts()


def install_worker_lifecycle() -> None:
    """Close memory and GitHub clients when a worker (or a pool process) stops, so the
    embedded Qdrant lock is released and nothing is torn down half-way at exit."""
    worker_process_shutdown.connect(_on_shutdown, weak=False, dispatch_uid="kaizen-proc-stop")
    worker_shutdown.connect(_on_shutdown, weak=False, dispatch_uid="kaizen-worker-stop")
