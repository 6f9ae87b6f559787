"""The plugin that lets a project's pytest config name plugins the sandbox lacks, run with
the real pytest on a small project (in a subprocess, as the sandbox runs it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import run_pytest as run_pytest_in
from workers.fix.pytest_shim import SHIM_DIR, install_shim

CONFIG = """\
[tool.pytest.ini_options]
addopts = [
    "--cov=pkg", "--cov-report=term-missing", "--cov-branch", "-n", "auto", "--dist=loadfile",
    "--reruns", "2", "--strict-markers", "--strict-config", "-ra",
    "--benchmark-autosave", "--benchmark-group-by=name", "--benchmark-compare",
    "--benchmark-min-rounds", "3",
]
timeout = 30
"""
TESTS = """\
import pytest


@pytest.mark.flaky(reruns=2)
def test_one():
    assert 1 + 1 == 2


@pytest.mark.timeout(5)
@pytest.mark.benchmark(group="strings")
def test_two():
    assert "a" * 2 == "aa"
"""


def run_pytest(project: Path, extra: list[str]) -> subprocess.CompletedProcess[str]:
    return run_pytest_in(project, extra, pythonpath=SHIM_DIR)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    (tmp_path / "test_things.py").write_text(TESTS)
    return tmp_path


def test_without_the_shim_pytest_refuses_the_plugins_options(project: Path) -> None:
    done = run_pytest(project, [])
    assert done.returncode == 4 and "unrecognized arguments: --cov=pkg" in done.stderr


def test_with_the_shim_the_tests_run(project: Path) -> None:
    # pytest-timeout is installed here (its options and marker stay its own); pytest-cov,
    # xdist and rerunfailures are not.
    done = run_pytest(project, install_shim(project))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_the_shim_replaces_whatever_the_repository_had_under_its_name(project: Path) -> None:
    (project / SHIM_DIR).mkdir()
    (project / SHIM_DIR / "kaizen_absent_plugins.py").symlink_to("/etc/hostname")
    install_shim(project)
    written = project / SHIM_DIR / "kaizen_absent_plugins.py"
    assert not written.is_symlink() and "pytest_addoption" in written.read_text()


ASYNC_CONFIG = """\
[tool.pytest.ini_options]
addopts = ["--strict-markers", "--strict-config", "-p", "no:asyncio"]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
"""
ASYNC_TESTS = """\
import asyncio

import pytest


@pytest.fixture
def numbers():
    return [1, 2, 3]


@pytest.fixture
async def later():
    return 5


async def test_sums(numbers):
    await asyncio.sleep(0)
    assert sum(numbers) == 6


@pytest.mark.asyncio
async def test_marked_and_wrong():
    await asyncio.sleep(0)
    assert 1 + 1 == 3


class TestInAClass:
    async def test_method(self):
        assert await asyncio.sleep(0, result=4) == 4


async def test_takes_an_async_fixture(later):
    assert later == 5
"""


@pytest.fixture
def async_project(tmp_path: Path) -> Path:
    # `-p no:asyncio` blocks pytest-asyncio where it is installed, as in a sandbox without it.
    (tmp_path / "pyproject.toml").write_text(ASYNC_CONFIG)
    (tmp_path / "test_async.py").write_text(ASYNC_TESTS)
    return tmp_path


def test_without_pytest_asyncio_its_config_stops_the_run(async_project: Path) -> None:
    done = run_pytest(async_project, [])
    assert done.returncode != 0 and "passed" not in done.stdout
    assert "Unknown config option: asyncio_" in done.stderr


def test_the_shim_runs_async_tests_with_plain_fixtures_and_leaves_async_fixtures_to_pytest(
    async_project: Path,
) -> None:
    done = run_pytest(async_project, [*install_shim(async_project), "-rA"])
    out = done.stdout
    assert "PASSED test_async.py::test_sums" in out, out + done.stderr
    assert "PASSED test_async.py::TestInAClass::test_method" in out
    assert "FAILED test_async.py::test_marked_and_wrong" in out and "assert (1 + 1) == 3" in out
    # pytest's own verdict on an async test it cannot run (skipped or failed, by version).
    assert "PASSED test_async.py::test_takes_an_async_fixture" not in out


CACHE_CONFIG = """\
[pytest]
addopts = -s --keep-duplicates --cache-clear --lf --ff --strict-config
cache_dir = .cache/pytest
"""


def test_the_caches_options_are_ignored_where_the_sandbox_runs_without_the_cache(
    tmp_path: Path,
) -> None:
    """async-lru 2.4's ``addopts`` carry ``--cache-clear``: the sandbox runs pytest with
    ``-p no:cacheprovider`` (each run starts clean), which took the option away, and
    pytest stopped before one test. ``--lf`` there would have run only the last failures."""
    (tmp_path / "pytest.ini").write_text(CACHE_CONFIG)
    (tmp_path / "test_things.py").write_text(TESTS)

    refused = run_pytest(tmp_path, [])
    done = run_pytest(tmp_path, install_shim(tmp_path))

    assert refused.returncode == 4 and "--cache-clear" in refused.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert not (tmp_path / ".cache").exists()
