"""Choosing a sandbox: Docker if an engine answers, else bubblewrap, else refuse.

Running repository code unsandboxed is never a fallback: it needs an explicit
``KAIZEN_SANDBOX=none``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from workers.sandbox.base import Sandbox, SandboxUnavailable

log = logging.getLogger(__name__)

BACKENDS = ("auto", "docker", "bwrap", "none")


def choose_sandbox(
    backend: str = "auto",
    *,
    image: str = "kaizen-sandbox:latest",
    hide_paths: Sequence[Path] = (),
) -> Sandbox:
    """``hide_paths``: host paths the repository's code must not see (Kaizen's data dir,
    with other repositories' clones and what memory holds, and the App's key file). A
    Docker container sees none of the host anyway; bubblewrap covers them."""
    if backend not in BACKENDS:
        raise SandboxUnavailable(f"unknown sandbox backend {backend!r}; use one of {BACKENDS}")
    if backend == "none":
        from workers.sandbox.unsandboxed import UnsandboxedRunner

        log.warning("KAIZEN_SANDBOX=none: repository code will run without any sandbox")
        return UnsandboxedRunner()
    reasons: list[str] = []
    if backend in ("auto", "docker"):
        from workers.sandbox.docker import DockerSandbox, docker_available

        reason = docker_available(image=image)
        if reason is None:
            return DockerSandbox(image=image)
        if backend == "docker":
            raise SandboxUnavailable(f"Docker sandbox unavailable: {reason}")
        reasons.append(f"Docker: {reason}")
    from workers.sandbox.bwrap import BwrapSandbox, bwrap_available

    reason = bwrap_available()
    if reason is None:
        return BwrapSandbox(hide_paths=hide_paths)
    if backend == "bwrap":
        raise SandboxUnavailable(f"bubblewrap sandbox unavailable: {reason}")
    reasons.append(f"bubblewrap: {reason}")
    raise SandboxUnavailable(
        "no sandbox can run repository code here ("
        + "; ".join(reasons)
        + "). Install docker.io (and build deploy/sandbox) or bubblewrap; "
        "KAIZEN_SANDBOX=none runs unsandboxed, for trusted repositories only."
    )
