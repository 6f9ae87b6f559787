"""``kaizen doctor`` warns before embedded Qdrant gets slow, and only then."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import doctor
from bot.settings import Settings
from memory.experiences import open_store
from memory.types import Experience, Kind
from tests.integration.test_report_model import HashEmbedder


def seed(settings: Settings, n: int) -> None:
    with open_store(
        url=None, api_key=None, path=settings.qdrant_local_path, embedder=HashEmbedder()
    ) as store:
        store.upsert(
            [
                Experience(
                    kind=Kind.COMMENT,
                    repo="octo-org/app",
                    pattern="ruff:B006",
                    fingerprint=f"fp{i}",
                    text=f"finding {i}",
                )
                for i in range(n)
            ]
        )


def test_a_large_embedded_store_is_a_warning_with_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    seed(settings, 6)
    monkeypatch.setattr(doctor, "EMBEDDED_COMFORT_POINTS", 5)
    check = doctor._qdrant(settings)
    assert check.status == "warn"
    assert "6 experiences" in check.detail and "KAIZEN_QDRANT_URL" in check.detail
    monkeypatch.setattr(doctor, "EMBEDDED_COMFORT_POINTS", 6)
    assert doctor._qdrant(settings).status == "ok"
