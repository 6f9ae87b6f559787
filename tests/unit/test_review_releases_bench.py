"""The release bench finds a cached sdist under either spelling of the project's name."""

from __future__ import annotations

from pathlib import Path

from bench.review_releases import _cached


def test_a_cached_sdist_is_found_whatever_the_spelling_of_its_name(tmp_path: Path) -> None:
    for name in ("pytest_xdist-3.6.1.tar.gz", "pytest-xdist-3.5.0.tar.gz", "Flask-3.0.3.tar.gz"):
        (tmp_path / name).write_bytes(b"")

    assert _cached("pytest-xdist", "3.6.1", tmp_path) == tmp_path / "pytest_xdist-3.6.1.tar.gz"
    assert _cached("pytest_xdist", "3.5.0", tmp_path) == tmp_path / "pytest-xdist-3.5.0.tar.gz"
    assert _cached("flask", "3.0.3", tmp_path) == tmp_path / "Flask-3.0.3.tar.gz"
    assert _cached("pytest-xdist", "3.6", tmp_path) is None  # 3.6 is not 3.6.1
    assert _cached("pytest", "3.6.1", tmp_path) is None  # another project
