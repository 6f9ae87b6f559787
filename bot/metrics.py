"""Prometheus metrics for the web process and the workers.

When ``PROMETHEUS_MULTIPROC_DIR`` is set (``kaizen up`` and ``kaizen worker`` set it), the
values live in files shared by every process on the machine, so one ``/metrics`` shows the
web process and all worker processes together.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_TASK_BUCKETS = (0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800)


@dataclass
class Metrics:
    registry: CollectorRegistry
    deliveries: Counter
    enqueue_seconds: Histogram
    task_outcomes: Counter
    task_seconds: Histogram

    def render(self) -> tuple[bytes, str]:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            collector = CollectorRegistry()
            multiprocess.MultiProcessCollector(collector)  # type: ignore[no-untyped-call]
            return generate_latest(collector), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def make_metrics() -> Metrics:
    """A fresh registry per app, so tests and several apps in one process do not clash."""
    registry = CollectorRegistry()
    return Metrics(
        registry=registry,
        deliveries=Counter(
            "kaizen_webhook_deliveries",
            "Webhook deliveries by event and status (queued, duplicate, ignored, rejected).",
            ["event", "status"],
            registry=registry,
        ),
        enqueue_seconds=Histogram(
            "kaizen_enqueue_seconds",
            "Time to hand a delivery to the broker.",
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        ),
        task_outcomes=Counter(
            "kaizen_task_outcomes",
            "Finished tasks by name and outcome (success, failure, retry).",
            ["task", "outcome"],
            registry=registry,
        ),
        task_seconds=Histogram(
            "kaizen_task_seconds",
            "Task run time by name.",
            ["task"],
            buckets=_TASK_BUCKETS,
            registry=registry,
        ),
    )
