"""The Docker backend: one throw-away container per command, with no network.

Each run creates a container from the sandbox image (``deploy/sandbox/Dockerfile``,
built by ``deploy/sandbox/build-base.sh``) with:

* ``network_mode="none"`` (only loopback) unless ``limits.network``;
* a read-only root filesystem, a size-limited tmpfs at /tmp, and the workspace copy
  bind-mounted read-write at /workspace as the only writable mount (Docker's private
  /dev/shm aside);
* memory with swap equal to it (no swap), CPU quota, a pids limit, ``RLIMIT_FSIZE`` and
  ``RLIMIT_NOFILE``, every capability dropped, ``no-new-privileges``, a non-root user
  (uid/gid 10001; the workspace copy is chowned to it) and Docker's default seccomp;
* exactly ``sandbox_env(env)`` as environment (plus the image's own ENV, the same safe
  set, and Docker's HOSTNAME);
* the ``none`` log driver: output is never stored by the daemon. We attach to the
  container before starting it and read stdout/stderr off that socket, keeping at most
  ``limits.output_bytes`` per stream and only counting the rest.

A watchdog thread kills the container when the run has added more than
``limits.workspace_mb`` to the workspace (``disk_limit_exceeded``; see
:mod:`workers.sandbox.disk`): the bind mount is a host directory, and ``RLIMIT_FSIZE``
bounds single files only.

The container is killed at the time limit and always removed (``remove(force=True)`` in
a ``finally``). Containers carry the label ``kaizen.sandbox=1`` (and a ``kaizen-sandbox-``
name) so leftovers from a crashed worker can be found: see :func:`prune_leftovers`. A
worker killed mid-run (out of memory, a deploy's SIGKILL) never reaches that ``finally``
and its container runs on, so runs on the engine sweep such leftovers themselves, at most
once every ``SWEEP_EVERY_S`` in a process: containers labelled like the sweeping sandbox
and older than the longest run could be.

The daemon must be local: the workspace is a bind mount of a host path.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.types import Mount, Ulimit
from docker.utils.socket import STDERR, STDOUT, frames_iter
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from workers.sandbox.base import (
    Limits,
    RunResult,
    SandboxUnavailable,
    checked_run_args,
    sandbox_env,
)
from workers.sandbox.disk import DiskWatch
from workers.sandbox.output import CappedOutput, RunWatch, decode_output

DEFAULT_IMAGE = "kaizen-sandbox:latest"
LABEL = "kaizen.sandbox"
LABELS = {LABEL: "1"}
SANDBOX_UID = 10001
SANDBOX_GID = 10001
NOFILE = 4096
TMPFS_MAX_MB = 512
# After the container exits, how long its last output may take to arrive.
DRAIN_GRACE_S = 5.0
API_TIMEOUT_S = 60
REMOVE_ATTEMPTS = 4
# Leftovers of dead workers: looked for at most this often in a process, and removed once
# older than this, or than this many of the sweeping run's time limits if that is longer.
SWEEP_EVERY_S = 600.0
LEFTOVER_AFTER_S = 3600.0
LEFTOVER_AFTER_RUNS = 2


class _Sweeps:
    """When the process last swept, so that one sweep serves every run for a while."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = float("-inf")

    def due(self, now: float, every_s: float) -> bool:
        with self._lock:
            if now < self._next:
                return False
            self._next = now + every_s
            return True


_SWEEPS = _Sweeps()


def _removal_under_way(exc: BaseException) -> bool:
    """The engine's 409 when a removal of the same container already runs (seen after a
    kill at the time limit under load): the container is going away, which is all we ask."""
    return (
        isinstance(exc, docker.errors.APIError)
        and exc.status_code == 409
        and "already in progress" in str(exc.explanation or exc)
    )


def _worth_retrying(exc: BaseException) -> bool:
    return isinstance(exc, docker.errors.APIError | requests.exceptions.RequestException) and not (
        isinstance(exc, docker.errors.NotFound) or _removal_under_way(exc)
    )


def remove_container(api: Any, container_id: str, *, wait_s: float = 0.2) -> str | None:
    """Force-remove a run's container; ``None`` once it is gone or going, else why not.

    Never raises: it runs in the ``finally`` of every run, where an exception would replace
    the run's own result. A container that could not be removed keeps its
    ``kaizen.sandbox=1`` label, so :func:`prune_leftovers` removes it later.
    """
    try:
        for attempt in Retrying(
            retry=retry_if_exception(_worth_retrying),
            stop=stop_after_attempt(REMOVE_ATTEMPTS),
            wait=wait_exponential(multiplier=wait_s, max=2.0),
            reraise=True,
        ):
            with attempt:
                api.remove_container(container_id, force=True, v=True)
    except docker.errors.NotFound:
        return None
    except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
        if _removal_under_way(exc):
            return None
        return f"{type(exc).__name__}: {exc}"
    return None


def _client(client: Any | None = None) -> Any:
    return client if client is not None else docker.from_env(timeout=API_TIMEOUT_S)


def docker_available(image: str = DEFAULT_IMAGE, client: Any | None = None) -> str | None:
    """None if a Docker engine answers and has ``image``; otherwise why not."""
    try:
        c = _client(client)
    except docker.errors.DockerException as exc:
        return f"no Docker engine: {exc}"
    try:
        c.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return f"the Docker engine does not answer: {exc}"
    try:
        c.images.get(image)
    except docker.errors.ImageNotFound:
        return f"image {image} is missing (build it with deploy/sandbox/build-base.sh)"
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return f"cannot inspect image {image}: {exc}"
    return None


def prune_leftovers(
    client: Any | None = None,
    *,
    older_than_s: float = 3600.0,
    labels: Mapping[str, str] | None = None,
) -> list[str]:
    """Remove ``kaizen.sandbox=1`` containers created more than ``older_than_s`` ago
    (left by a worker that died mid-run); returns their names. Runs in progress are
    younger than their time limit, so pass at least the longest ``timeout_s`` in use.
    ``labels`` narrows it to the containers that also carry those (the extra labels a
    :class:`DockerSandbox` was given), for a caller sharing the engine with other runs."""
    c = _client(client)
    removed: list[str] = []
    now = time.time()
    wanted = [f"{LABEL}=1", *(f"{key}={value}" for key, value in (labels or {}).items())]
    for container in c.containers.list(all=True, filters={"label": wanted}):
        created = _parse_created(container.attrs.get("Created", ""))
        if created is not None and now - created < older_than_s:
            continue
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            container.remove(force=True)
            removed.append(container.name)
    return removed


def _parse_created(value: str) -> float | None:
    # Docker gives RFC 3339 with nanoseconds: 2026-11-30T09:51:50.123456789Z
    if not value:
        return None
    head = value.rstrip("Z").split(".")[0]
    try:
        return datetime.fromisoformat(head + "+00:00").timestamp()
    except ValueError:
        return None


def _prepare_workspace(workspace: Path) -> str:
    """Make the private workspace copy writable for the container user; returns the
    ``user`` to run as. As root: chown the copy to 10001:10001. Otherwise (a docker-group
    user) the copy is already ours: run as our own uid/gid, still not root."""
    if os.geteuid() != 0:
        return f"{os.getuid()}:{os.getgid()}"
    os.chown(workspace, SANDBOX_UID, SANDBOX_GID)
    for root, dirs, files in os.walk(workspace):
        for name in dirs + files:
            os.chown(os.path.join(root, name), SANDBOX_UID, SANDBOX_GID, follow_symlinks=False)
    return f"{SANDBOX_UID}:{SANDBOX_GID}"


class _DemuxCapture(threading.Thread):
    """Reads Docker's multiplexed attach stream to EOF, keeping the first ``limit`` bytes
    of stdout and of stderr and counting the rest (memory stays O(limit))."""

    def __init__(self, sock: Any, limit: int) -> None:
        super().__init__(name="docker-sandbox-output", daemon=True)
        self._sock = sock
        self._limit = max(0, int(limit))
        self._lock = threading.Lock()
        self._kept = {STDOUT: bytearray(), STDERR: bytearray()}
        self._total = {STDOUT: 0, STDERR: 0}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for stream, data in frames_iter(self._sock, tty=False):
                if stream not in self._kept or not data:
                    continue
                with self._lock:
                    kept = self._kept[stream]
                    room = self._limit - len(kept)
                    if room > 0:
                        kept += data[:room]
                    self._total[stream] += len(data)
        except (OSError, ValueError) as exc:  # socket closed under us
            self.error = exc

    def snapshot(self) -> tuple[CappedOutput, CappedOutput]:
        with self._lock:
            out, err = (
                CappedOutput(
                    decode_output(bytes(self._kept[s])),
                    self._total[s] > len(self._kept[s]),
                    self._total[s],
                )
                for s in (STDOUT, STDERR)
            )
        return out, err


class _Watchdog(threading.Thread):
    """Calls ``kill`` once ``watch`` says the run exceeded its limit, checking when it
    asks to be; :meth:`stop` ends it (the container is gone or going anyway). A thread
    beside ``container.wait``, which blocks on the engine's answer."""

    def __init__(self, watch: RunWatch, kill: Callable[[], None]) -> None:
        super().__init__(name="docker-sandbox-watchdog", daemon=True)
        self._watch = watch
        self._kill = kill
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self._watch.due_in()):
            if self._watch.check():
                self._kill()
                return

    def stop(self) -> None:
        """End the thread and wait for it, so what the watch says is final."""
        self._stopped.set()
        self.join()


def _kill_quietly(container: Any) -> None:
    """Kill ``container``; one that already stopped (or is being removed) is fine."""
    with contextlib.suppress(
        docker.errors.NotFound, docker.errors.APIError, requests.exceptions.RequestException
    ):
        container.kill()


def _disable_timeout(sock: Any) -> None:
    """The attach socket inherits the client's API timeout; a quiet test must not end
    the read, so reads block until data or EOF (the run's own deadline ends it)."""
    for s in (sock, getattr(sock, "_sock", None)):
        if s is not None and hasattr(s, "settimeout"):
            with contextlib.suppress(OSError):
                s.settimeout(None)


def _close_socket(sock: Any) -> None:
    for s in (getattr(sock, "_sock", None), sock):
        if s is None:
            continue
        with contextlib.suppress(OSError):
            if hasattr(s, "shutdown"):
                s.shutdown(2)  # socket.SHUT_RDWR: wakes a reader blocked in recv
        with contextlib.suppress(OSError):
            s.close()


class DockerSandbox:
    name = "docker"

    def __init__(
        self,
        *,
        image: str = DEFAULT_IMAGE,
        client: Any | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.image = image
        self._client = client
        # Extra labels on every container (e.g. which worker or test run started it), so a
        # caller can find its own containers on an engine other Kaizens share.
        self.labels = {**dict(labels or {}), **LABELS}

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = _client()
        return self._client

    def _sweep_now_and_then(self, limits: Limits) -> None:
        """Remove dead workers' containers labelled like ours (every Kaizen sandbox unless
        the sandbox was given labels of its own), never failing the run for it."""
        if not _SWEEPS.due(time.monotonic(), SWEEP_EVERY_S):
            return
        extra = {key: value for key, value in self.labels.items() if key != LABEL}
        older_than_s = max(LEFTOVER_AFTER_S, LEFTOVER_AFTER_RUNS * limits.timeout_s)
        with contextlib.suppress(
            docker.errors.DockerException, requests.exceptions.RequestException
        ):
            prune_leftovers(self.client, older_than_s=older_than_s, labels=extra)

    def container_config(
        self,
        command: Sequence[str],
        *,
        workspace: Path,
        limits: Limits,
        env: Mapping[str, str] | None,
        user: str,
        name: str,
    ) -> dict[str, Any]:
        """Keyword arguments for ``containers.create`` (separate so it can be inspected)."""
        memory = f"{int(limits.memory_mb)}m"
        tmpfs_mb = max(16, min(TMPFS_MAX_MB, limits.file_size_mb, limits.memory_mb // 2))
        fsize = int(limits.file_size_mb) * 1024 * 1024
        return {
            "image": self.image,
            "command": list(command),
            "name": name,
            "labels": dict(self.labels),
            "detach": True,
            "auto_remove": False,
            "stdin_open": False,
            "tty": False,
            "user": user,
            "working_dir": "/workspace",
            "hostname": "sandbox",
            "environment": sandbox_env(env),
            "network_mode": "bridge" if limits.network else "none",
            "read_only": True,
            # exec: test suites run scripts they write under tmp_path; the workspace is
            # writable and executable anyway, so noexec here would only break them.
            "tmpfs": {"/tmp": f"rw,exec,nosuid,nodev,size={tmpfs_mb}m,mode=1777"},  # noqa: S108
            "mounts": [
                Mount(target="/workspace", source=str(workspace), type="bind", read_only=False)
            ],
            "mem_limit": memory,
            "memswap_limit": memory,
            "nano_cpus": max(1, int(limits.cpus * 1e9)),
            "pids_limit": int(limits.pids),
            "ulimits": [
                Ulimit(name="nofile", soft=NOFILE, hard=NOFILE),
                Ulimit(name="fsize", soft=fsize, hard=fsize),
                Ulimit(name="core", soft=0, hard=0),
            ],
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "privileged": False,
            "ipc_mode": "private",
            "oom_score_adj": 1000,  # under host memory pressure, the sandbox goes first
            "init": True,  # docker-init as pid 1 reaps zombies and forwards signals
            "log_config": {"type": "none", "config": {}},
            # Docker turns IPv6 off in a container whose network has none, yet its
            # /etc/hosts names ::1 "localhost": a test server on "localhost" (asyncio,
            # aiohttp) then fails to bind ::1, where it works on the developer's machine.
            # Loopback only: nothing leaves the container either way.
            "sysctls": {"net.ipv6.conf.lo.disable_ipv6": "0"} if _host_has_ipv6() else {},
        }

    def run(
        self,
        command: Sequence[str],
        *,
        workspace: Path,
        limits: Limits,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        command, workspace = checked_run_args(command, workspace)
        sandbox_env(env)  # refuse credentials before touching anything
        user = _prepare_workspace(workspace)
        disk = DiskWatch(workspace, limits.workspace_mb, limit_files=limits.workspace_files)
        name = f"kaizen-sandbox-{uuid.uuid4().hex[:16]}"
        config = self.container_config(
            command, workspace=workspace, limits=limits, env=env, user=user, name=name
        )
        self._sweep_now_and_then(limits)
        api = self.client.api
        started = time.monotonic()
        container_id: str | None = None
        sock: Any = None
        reader: _DemuxCapture | None = None
        watchdog: _Watchdog | None = None
        timed_out = False
        exit_code: int | None = None
        oom_killed = False
        details: dict[str, Any] = {"container": name, "image": self.image, "user": user}
        duration = 0.0
        try:
            try:
                container = self.client.containers.create(**config)
            except docker.errors.ImageNotFound as exc:
                raise SandboxUnavailable(
                    f"image {self.image} is missing (deploy/sandbox/build-base.sh builds it)"
                ) from exc
            except requests.exceptions.ConnectionError as exc:
                raise SandboxUnavailable(f"the Docker engine does not answer: {exc}") from exc
            container_id = container.id
            # Attach before start so not a byte is lost (the log driver keeps nothing).
            sock = api.attach_socket(
                container_id, params={"stdout": 1, "stderr": 1, "stream": 1, "logs": 0}
            )
            _disable_timeout(sock)
            reader = _DemuxCapture(sock, limits.output_bytes)
            reader.start()
            started = time.monotonic()
            container.start()
            watchdog = _Watchdog(disk, functools.partial(_kill_quietly, container))
            watchdog.start()
            try:
                status = container.wait(timeout=max(0.001, limits.timeout_s))
                exit_code = status.get("StatusCode")
                if status.get("Error"):
                    details["wait_error"] = status["Error"]
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout):
                if time.monotonic() - started < limits.timeout_s:
                    raise  # the engine went away; not our time limit
                timed_out = True
                _kill_quietly(container)
                with contextlib.suppress(
                    docker.errors.DockerException, requests.exceptions.RequestException
                ):
                    exit_code = container.wait(timeout=30).get("StatusCode")
            duration = time.monotonic() - started
            watchdog.stop()
            reader.join(DRAIN_GRACE_S)
            if reader.is_alive():
                details["output_incomplete"] = True
            with contextlib.suppress(docker.errors.DockerException):
                container.reload()
                state = container.attrs.get("State", {})
                oom_killed = bool(state.get("OOMKilled"))
                if state.get("Error"):
                    details["state_error"] = state["Error"]
        finally:
            if watchdog is not None:
                watchdog.stop()
            if sock is not None:
                _close_socket(sock)
            if reader is not None:
                reader.join(1.0)
            if container_id is not None:
                failed = remove_container(api, container_id)
                if failed is not None:
                    details["remove_error"] = failed
        assert reader is not None
        out, err = reader.snapshot()
        details["stdout_bytes"] = out.total_bytes
        details["stderr_bytes"] = err.total_bytes
        details.update(disk.details())
        if disk.exceeded:
            timed_out = False  # the watchdog's kill came first: that is why it ended
        if timed_out or disk.exceeded:
            exit_code = None
        return RunResult(
            exit_code=exit_code,
            stdout=out.text,
            stderr=err.text,
            duration_s=duration,
            timed_out=timed_out,
            oom_killed=oom_killed,
            disk_limit_exceeded=disk.exceeded,
            output_truncated=out.truncated or err.truncated,
            backend=self.name,
            details=details,
        )


@functools.cache
def _host_has_ipv6() -> bool:
    """Whether the kernel has IPv6 at all (``ipv6.disable=1`` removes it, and a container
    asking for an IPv6 sysctl would then fail to start). The daemon is local, so its
    kernel is this one."""
    return os.path.exists("/proc/sys/net/ipv6/conf/lo/disable_ipv6")
