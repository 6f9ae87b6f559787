"""Running a command with no sandbox, for trusted repositories only.

Selected only by an explicit ``KAIZEN_SANDBOX=none``; every run logs a warning. It still
keeps the time limit, the output cap, the process-group kill and the scrubbed
environment, so a runaway test suite cannot hang or flood a worker, but nothing stops
the code from reading files or reaching the network.
"""

from __future__ import annotations

import logging
import resource
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from workers.sandbox.base import Limits, RunResult, checked_run_args, sandbox_env
from workers.sandbox.output import (
    start_capped_readers,
    terminate_process_group,
    wait_with_deadline,
)

log = logging.getLogger(__name__)


class UnsandboxedRunner:
    name = "none"

    def run(
        self,
        command: Sequence[str],
        *,
        workspace: Path,
        limits: Limits,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        command, workspace = checked_run_args(command, workspace)
        log.warning("running WITHOUT a sandbox (KAIZEN_SANDBOX=none): %s", command[0])
        file_size = limits.file_size_mb * 1024 * 1024

        def limit_child() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        started = time.monotonic()
        proc = subprocess.Popen(
            list(command),
            cwd=workspace,
            env=sandbox_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=limit_child,
        )
        out, err = start_capped_readers(proc, limits.output_bytes)
        timed_out = wait_with_deadline(proc, limits.timeout_s)
        terminate_process_group(proc, grace_s=0 if timed_out else 0.5)
        stdout, stderr = out.result(timeout=5), err.result(timeout=5)
        return RunResult(
            exit_code=None if timed_out else proc.returncode,
            stdout=stdout.text,
            stderr=stderr.text,
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            output_truncated=stdout.truncated or stderr.truncated,
            backend=self.name,
            details={"stdout_bytes": stdout.total_bytes, "stderr_bytes": stderr.total_bytes},
        )
