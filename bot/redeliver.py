"""Bringing back deliveries that failed (for example while the broker was down).

GitHub keeps every delivery attempt for a few days and does not retry by itself. A
delivery is worth redelivering when no attempt of it (same ``guid``) succeeded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

_SINCE_RE = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class DeliveryApi(Protocol):
    def iter_deliveries(self, per_page: int = 100) -> Iterable[dict[str, Any]]: ...

    def redeliver(self, delivery_id: int) -> None: ...


@dataclass
class RedeliveryResult:
    scanned: int = 0
    selected: list[dict[str, Any]] = field(default_factory=list)


def parse_since(text: str) -> float:
    """``30m`` / ``6h`` / ``2d`` → seconds; a clear error for anything else."""
    match = _SINCE_RE.match(text)
    if not match:
        raise ValueError(f"--since takes a number and a unit (s, m, h, d), got {text!r}")
    return float(int(match.group(1)) * _UNITS[match.group(2)])


def _timestamp(value: Any) -> float:
    if not value:
        return 0.0
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def _succeeded(delivery: dict[str, Any]) -> bool:
    code = delivery.get("status_code")
    return isinstance(code, int) and 200 <= code < 300


def select_failed(deliveries: Iterable[dict[str, Any]], *, since_ts: float) -> RedeliveryResult:
    """The newest attempt of each guid that never succeeded within the window."""
    result = RedeliveryResult()
    latest: dict[str, dict[str, Any]] = {}
    ok: set[str] = set()
    for delivery in deliveries:
        if _timestamp(delivery.get("delivered_at")) < since_ts:
            break  # GitHub lists newest first: everything after is older still
        result.scanned += 1
        guid = str(delivery.get("guid"))
        if _succeeded(delivery):
            ok.add(guid)
        current = latest.get(guid)
        if current is None or _timestamp(delivery.get("delivered_at")) > _timestamp(
            current.get("delivered_at")
        ):
            latest[guid] = delivery
    result.selected = [d for guid, d in latest.items() if guid not in ok]
    return result


def redeliver_failed(
    api: DeliveryApi, *, since_s: float, dry_run: bool, now: float
) -> RedeliveryResult:
    result = select_failed(api.iter_deliveries(), since_ts=now - since_s)
    if not dry_run:
        for delivery in result.selected:
            api.redeliver(int(delivery["id"]))
    return result
