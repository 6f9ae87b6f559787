"""Choosing a sandbox: Docker if an engine answers, else bubblewrap, else refuse.

Running repository code unsandboxed is never a fallback: it needs an explicit
``KAIZEN_SANDBOX=none``.
"""

from __future__ import annotations

import logging

from workers.sandbox.base import Sandbox, SandboxUnavailable

log = logging.getLogger(__name__)

BACKENDS = ("auto", "docker", "bwrap", "none")


def choose_sandbox(backend: str = "auto", *, image: str = "kaizen-sandbox:latest") -> Sandbox:
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
        return BwrapSandbox()
    if backend == "bwrap":
        raise SandboxUnavailable(f"bubblewrap sandbox unavailable: {reason}")
    reasons.append(f"bubblewrap: {reason}")
    raise SandboxUnavailable(
        "no sandbox can run repository code here ("
        + "; ".join(reasons)
        + "). Install docker.io (and build deploy/sandbox) or bubblewrap; "
        "KAIZEN_SANDBOX=none runs unsandboxed, for trusted repositories only."
    )
