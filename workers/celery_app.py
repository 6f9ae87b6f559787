"""The Celery application, built from settings rather than at import time.

Two brokers are supported with the same tasks: Redis for production (many workers on many
machines) and an embedded, file-based broker for a single machine with no services
(``kaizen up`` with no ``KAIZEN_REDIS_URL``).
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from kombu.entity import Exchange, Queue

from bot.settings import Settings

QUEUES = ("reviews", "fixes", "feedback")
DEFAULT_QUEUE = "feedback"

# Task name → queue. Commands pick their queue per verb (see bot.routing), so only the
# tasks with one fixed home are listed here.
TASK_ROUTES: dict[str, dict[str, str]] = {
    "kaizen.review_pull_request": {"queue": "reviews"},
    "kaizen.fix_issue": {"queue": "fixes"},
    "kaizen.record_feedback": {"queue": "feedback"},
    "kaizen.finalize_pull_request": {"queue": "feedback"},
    "kaizen.installation_changed": {"queue": "feedback"},
    "kaizen.repository_moved": {"queue": "feedback"},
    "kaizen.purge_deliveries": {"queue": "feedback"},
    "kaizen.retry_pending_signals": {"queue": "feedback"},
    "kaizen.poll_reactions": {"queue": "feedback"},
    "kaizen.weekly_digest": {"queue": "feedback"},
}

# Long tasks (fixes run test suites) must stay invisible to other workers for longer than
# they may run (``task_time_limit_s`` + ``redelivery_margin_s``); otherwise Redis hands
# the same message to a second worker mid-run.


class KaizenCelery(Celery):
    """A Celery app that carries Kaizen's settings to the tasks that run in it."""

    settings: Settings


def make_celery(settings: Settings, *, publisher: bool = False) -> KaizenCelery:
    """Configure Celery for the broker in settings (Redis, or the embedded file broker).

    ``publisher=True`` is for the web process, which only publishes: it uses the Redis
    transport that reuses one client per channel (see ``workers.redis_transport``).
    """
    app = KaizenCelery("kaizen", set_as_current=False)
    app.settings = settings
    conf: dict[str, Any] = {
        "task_serializer": "json",
        "accept_content": ["json"],
        "result_serializer": "json",
        "task_ignore_result": True,
        "result_backend": None,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_soft_time_limit": settings.task_soft_time_limit_s,
        "task_time_limit": settings.task_time_limit_s,
        "task_default_queue": DEFAULT_QUEUE,
        "task_queues": [
            Queue(q, Exchange(q, type="direct"), routing_key=q)  # type: ignore[no-untyped-call]
            for q in QUEUES
        ],
        "task_routes": TASK_ROUTES,
        "task_create_missing_queues": False,
        "broker_connection_retry_on_startup": True,
        "broker_connection_timeout": settings.enqueue_timeout_s,
        "worker_hijack_root_logger": False,
        "worker_redirect_stdouts": False,
        "imports": ["workers.tasks"],
        "beat_schedule": {
            "purge-deliveries": {"task": "kaizen.purge_deliveries", "schedule": 3600.0},
            "retry-pending-signals": {"task": "kaizen.retry_pending_signals", "schedule": 300.0},
            "weekly-digest": {"task": "kaizen.weekly_digest", "schedule": 7 * 86400.0},
            "poll-reactions": {
                "task": "kaizen.poll_reactions",
                "schedule": settings.reaction_poll_interval_s,
            },
        },
        "beat_schedule_filename": str(settings.data_dir / "celerybeat-schedule"),
        "timezone": "UTC",
    }
    if settings.redis_url:
        conf["broker_url"] = settings.redis_url
        if publisher:
            conf["broker_transport"] = "workers.redis_transport:Transport"
        conf["broker_transport_options"] = {
            "visibility_timeout": settings.task_time_limit_s + settings.redelivery_margin_s,
            "socket_timeout": settings.enqueue_timeout_s,
            "socket_connect_timeout": settings.enqueue_timeout_s,
            "retry_on_timeout": False,
        }
    else:
        folder = settings.broker_dir
        for sub in ("queue", "processed"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        conf["broker_url"] = "filesystem://localhost//"
        conf["broker_transport_options"] = {
            "data_folder_in": str(folder / "queue"),
            "data_folder_out": str(folder / "queue"),
            "processed_folder": str(folder / "processed"),
            "store_processed": False,
        }
        # The file transport has no fan-out exchange, which remote control and events need.
        conf["worker_enable_remote_control"] = False
        conf["worker_send_task_events"] = False
        conf["task_send_sent_event"] = False
    app.conf.update(conf)
    return app
