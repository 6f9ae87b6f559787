"""Running Kaizen's real processes (``kaizen serve``, ``kaizen worker``) for end-to-end tests."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.helpers import free_port


def kaizen_env(**settings: str) -> dict[str, str]:
    """A clean environment: the caller's KAIZEN_* never leak into a test's processes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAIZEN_")}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env.update({f"KAIZEN_{k.upper()}": v for k, v in settings.items()})
    env["KAIZEN_LOG_JSON"] = "true"
    return env


def kaizen_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "bot.cli", *args]


@contextmanager
def running(cmd: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child process whose output goes to ``log`` and which is always stopped."""
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"process exited {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not answer in {timeout}s:\n{log.read_text()[-4000:]}")


def wait_log(log: Path, text: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise AssertionError(f"process exited {proc.returncode}:\n{log.read_text()[-4000:]}")
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not logged in {timeout}s:\n{log.read_text()[-4000:]}")


@contextmanager
def private_redis(tmp: Path) -> Iterator[tuple[str, int]]:
    """A Redis server of the test's own, so a test can stop and restart the broker."""
    binary = shutil.which("redis-server")
    if binary is None:  # pragma: no cover - .ci/run installs it
        raise AssertionError("redis-server is needed for broker-outage tests")
    port = free_port()
    yield binary, port


def start_redis(binary: str, port: int, tmp: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if redis.Redis(port=port, socket_connect_timeout=0.2).ping():
                return proc
        except redis.RedisError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("private redis did not start")
