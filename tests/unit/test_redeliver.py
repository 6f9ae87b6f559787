from __future__ import annotations

from typing import Any

import pytest

from bot.redeliver import parse_since, redeliver_failed, select_failed


def d(id_: int, guid: str, at: str, code: int) -> dict[str, Any]:
    return {"id": id_, "guid": guid, "delivered_at": at, "status_code": code, "event": "issues"}


NOW = "2026-11-30T12:00:00Z"


def ts(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_parse_since() -> None:
    assert parse_since("30m") == 1800
    assert parse_since("6h") == 21600
    assert parse_since("2d") == 172800
    with pytest.raises(ValueError, match="--since"):
        parse_since("yesterday")


def test_selects_newest_attempt_of_guids_that_never_succeeded() -> None:
    deliveries = [  # newest first, as GitHub lists them
        d(5, "a", "2026-11-30T11:50:00Z", 503),
        d(4, "b", "2026-11-30T11:40:00Z", 202),
        d(3, "b", "2026-11-30T11:30:00Z", 503),
        d(2, "a", "2026-11-30T11:20:00Z", 503),
        d(1, "c", "2026-11-30T08:00:00Z", 503),  # outside the window
    ]
    result = select_failed(deliveries, since_ts=ts(NOW) - 3600)
    assert [x["id"] for x in result.selected] == [5]
    assert result.scanned == 4


class Api:
    def __init__(self, deliveries: list[dict[str, Any]]) -> None:
        self.deliveries = deliveries
        self.redelivered: list[int] = []

    def iter_deliveries(self, per_page: int = 100) -> list[dict[str, Any]]:
        return self.deliveries

    def redeliver(self, delivery_id: int) -> None:
        self.redelivered.append(delivery_id)


def test_dry_run_redelivers_nothing() -> None:
    api = Api([d(1, "a", "2026-11-30T11:50:00Z", 500)])
    result = redeliver_failed(api, since_s=3600, dry_run=True, now=ts(NOW))
    assert [x["id"] for x in result.selected] == [1]
    assert api.redelivered == []
    redeliver_failed(api, since_s=3600, dry_run=False, now=ts(NOW))
    assert api.redelivered == [1]
