"""git for fixes: clone and push with the installation token in a header, never on disk.

The token is handed to git through ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_0``/
``GIT_CONFIG_VALUE_0`` (``http.extraHeader``) in git's own environment: it is not in the
command line (other users can read that), not in the clone's ``.git/config``, and not in
the remote URL, so the copy the sandbox gets has nothing to find.
"""

from __future__ import annotations

import base64
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from workers.fix.types import Patch, check_edit_path


class GitError(RuntimeError):
    """A git command failed; the message never contains the token."""


def _env(token: str | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", tempfile.gettempdir()),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LANG": "C",
        "LC_ALL": "C",
    }
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(
            {
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "http.extraHeader",
                "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
            }
        )
    return env


def git(cwd: Path | None, *args: str, token: str | None = None, timeout: float = 300) -> str:
    cmd = ["git", *(["-C", str(cwd)] if cwd else []), *args]
    try:
        done = subprocess.run(
            cmd, env=_env(token), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} timed out after {timeout:.0f} s") from exc
    if done.returncode != 0:
        message = done.stderr.strip()
        if token:
            message = message.replace(token, "***")
        raise GitError(f"git {args[0]} failed: {message[-800:]}")
    return done.stdout


def clone(url: str, dest: Path, *, branch: str, token: str | None, depth: int = 50) -> Path:
    """A shallow clone of ``branch``; the remote URL carries no credentials."""
    if "@" in url.split("://", 1)[-1].split("/", 1)[0]:
        raise GitError("refusing a clone URL with credentials in it")
    git(
        None,
        "clone",
        "--quiet",
        "--depth",
        str(depth),
        "--branch",
        branch,
        "--",
        url,
        str(dest),
        token=token,
    )
    return dest


def commit_and_push(
    checkout: Path,
    patches: Sequence[Patch],
    *,
    branch: str,
    message: str,
    author: tuple[str, str],
    token: str | None,
) -> str:
    """Write the patches on a new branch, commit as ``author`` and force-push; the sha.

    Force: a retried task rebuilds the same branch from the same base, so the push
    replaces its own earlier attempt instead of failing.
    """
    git(checkout, "checkout", "--quiet", "-B", branch)
    for patch in patches:
        target = checkout / check_edit_path(patch.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(patch.after, encoding="utf-8")
        git(checkout, "add", "--", check_edit_path(patch.path))
    name, email = author
    git(
        checkout,
        "-c",
        f"user.name={name}",
        "-c",
        f"user.email={email}",
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        message,
    )
    sha = git(checkout, "rev-parse", "HEAD").strip()
    git(checkout, "push", "--quiet", "--force", "origin", f"HEAD:refs/heads/{branch}", token=token)
    return sha
