"""What every sandbox backend promises: run one command on a workspace copy, contained.

Fix attempts run repository code Kaizen did not write, shaped by text anyone can type
into an issue. A backend must keep that code away from the host, the network and every
secret, and must always come back with a result (never hang, never buffer unbounded
output), so the fix agent can turn it into a reward.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

DEFAULT_OUTPUT_LIMIT = 1024 * 1024  # bytes kept per stream; the rest is counted, not kept


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 600.0
    memory_mb: int = 2048
    cpus: float = 1.0
    pids: int = 256
    file_size_mb: int = 512
    # What the run may add to its workspace in all (RLIMIT_FSIZE bounds single files
    # only); past it the run is killed (see workers/sandbox/disk.py).
    workspace_mb: int = 2048
    # And how many files (inodes) it may add: empty files cost no bytes, but a filesystem
    # has only so many inodes (see workers/sandbox/disk.py).
    workspace_files: int = 100_000
    output_bytes: int = DEFAULT_OUTPUT_LIMIT
    network: bool = False  # only an install phase the repo's config allows may set this


@dataclass
class RunResult:
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    oom_killed: bool = False
    # Killed for adding more than ``limits.workspace_mb`` or ``limits.workspace_files`` to
    # its workspace (exit_code is then None, as after a timeout); ``details["disk_limit"]``
    # says which limit and how much it wrote.
    disk_limit_exceeded: bool = False
    output_truncated: bool = False
    backend: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class SandboxUnavailable(RuntimeError):
    """No backend can run here (or the one asked for cannot); the message says why."""


class Sandbox(Protocol):
    name: str

    def run(
        self,
        command: Sequence[str],
        *,
        workspace: Path,
        limits: Limits,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        """Run ``command`` with ``workspace`` (already a private copy) as the only
        writable place, mounted at /workspace, and return when it ends or is killed."""
        ...


# Variables a sandboxed process may see; everything else (tokens, keys, KAIZEN_*) stays out.
SAFE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",  # noqa: S108 - a private tmpfs inside the sandbox
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}


def sandbox_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment a sandboxed process gets: a fixed safe set plus ``extra``,
    from which anything that looks like a credential or a Kaizen setting is refused."""
    env = dict(SAFE_ENV)
    for key, value in (extra or {}).items():
        upper = key.upper()
        if upper.startswith("KAIZEN_") or any(
            word in upper for word in ("TOKEN", "SECRET", "KEY", "PASSWORD", "CREDENTIAL")
        ):
            raise ValueError(f"{key} may not be passed into a sandbox")
        env[key] = value
    return env


def checked_run_args(command: Sequence[str], workspace: Path) -> tuple[list[str], Path]:
    """The checks every backend makes before running anything, with the same errors."""
    argv = list(command)
    if not argv:
        raise ValueError("empty command")
    folder = Path(workspace).resolve()
    if not folder.is_dir():
        raise ValueError(f"workspace {folder} is not a directory")
    return argv, folder
