"""The bubblewrap backend: one command, a private namespace set, a throwaway uid.

How one run is put together (all as argv, no shell string is built from input)::

    unshare --mount --propagation private            # root, a private mount namespace
      sh -c STAGE                                    # join this run's cgroups, bind the
                                                     # workspace (and interpreter dirs under
                                                     # hidden paths) into a 0711 staging dir
      setpriv --reuid=U --regid=U --clear-groups --no-new-privs
      prlimit --nproc --fsize --cpu --core [--as]
      bwrap --unshare-all --die-with-parent --new-session ...
        -- COMMAND

* **Uid.** Every run gets its own high uid ``U`` from ``uid_range``, never 0: bwrap run by
  root would hand the child full capabilities, and RLIMIT_NPROC is ignored for root. With a
  uid no other process has, RLIMIT_NPROC counts only this run's processes (a fork bomb gets
  "Cannot fork") and root-only files on the host are unreadable anyway. The workspace is
  chowned to ``U`` for the run and given back to its owner afterwards.
* **Filesystem.** The sandbox root is a tmpfs holding read-only binds of the host's
  top-level directories (so the host's interpreters and packages work), a fresh /dev,
  /proc and /tmp, and the workspace at /workspace (the only writable host path). /sys is not
  mounted. Secrets are covered: ``DEFAULT_HIDDEN_PATHS`` plus ``hide_paths`` (the Kaizen
  data dir, the repo's .env, ...) get an empty tmpfs (directories) or a bind of /dev/null
  (files; the bind is nodev, so opening it fails with EACCES).
  The running interpreter's prefixes are bound back read-only when they live under a hidden
  path (e.g. a pyenv Python in /root/.pyenv), so ``sys.executable`` works inside.
* **Network.** ``--unshare-all`` includes the network namespace: only an unconfigured
  loopback, so connections to host services and the internet fail without sending a packet.
  There is no NAT'd network (no slirp4netns/pasta), so ``limits.network=True`` is refused
  unless the sandbox was built with ``allow_host_network=True`` (then: ``--share-net``).
* **Memory.** If the cgroup v1 memory controller is writable (root, as here) each run gets
  its own memory cgroup with ``memory.limit_in_bytes`` (and memsw, so no swapping around it);
  the kernel OOM-kills inside it and ``memory.oom_control``'s ``oom_kill`` counter tells us,
  so ``oom_killed`` is exact. Otherwise RLIMIT_AS is the limit and ``oom_killed`` is inferred
  from the output (MemoryError, ENOMEM, bad_alloc) - see ``details["memory_limit"]``.
  A cgroup v1 cpu controller, when writable, enforces ``limits.cpus`` via CFS quota.
* **Time.** At ``timeout_s`` the whole process group is SIGKILLed; the outer bwrap dying
  takes the namespace's pid 1 with it (``--die-with-parent``), which kills everything in
  the pid namespace. A sweep of the run's cgroup and uid then makes sure nothing is left.
* **Output.** stdout/stderr drain concurrently in threads (``output.py``), at most
  ``limits.output_bytes`` each is kept, the rest is only counted.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workers.sandbox.base import (
    Limits,
    RunResult,
    SandboxUnavailable,
    checked_run_args,
    sandbox_env,
)
from workers.sandbox.output import (
    kill_process_group,
    pids_of_uid,
    start_capped_readers,
    wait_until_gone,
    wait_with_deadline,
)

NAME = "bwrap"
DEFAULT_UID_RANGE = (200000, 265535)
WORKSPACE_MOUNT = "/workspace"
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "kaizen-bwrap"
TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
READER_GRACE_S = 5.0
SWEEP_TIMEOUT_S = 5.0
# Processes the sandbox machinery itself adds under the run's uid: the outer bwrap and the
# pid-namespace init it forks. RLIMIT_NPROC gets this much on top of ``limits.pids``.
BWRAP_OWN_PROCESSES = 2

# Covered with an empty tmpfs (or /dev/null for files) in every run. With the uid switch,
# root-only files are unreadable anyway; this also hides world-readable ones, sockets
# (docker.sock under /run) and service data.
DEFAULT_HIDDEN_PATHS: tuple[str, ...] = (
    "/root",
    "/home",
    "/run",
    "/var/run",
    "/var/lib",
    "/var/log",
    "/var/spool",
    "/var/mail",
    "/var/backups",
    "/var/tmp",  # noqa: S108 - hidden, not used
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/mnt",
    "/media",
    "/srv",
    "/boot",
    "/lost+found",
)
# Top-level host entries that are not bound: replaced by fresh ones or left out.
_SKIPPED_TOP_LEVEL = frozenset({"proc", "dev", "sys", "tmp", "workspace"})

# Without a memory cgroup: what a process that hit RLIMIT_AS typically prints.
_OOM_PATTERNS = re.compile(
    rb"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|"
    rb"failed to allocate|memory allocation of \d+ bytes failed",
    re.IGNORECASE,
)

# Runs as root inside the private mount namespace, then execs setpriv. Arguments:
#   (--cg FILE)* (--bind SRC DST)* -- COMMAND...
_STAGE_SCRIPT = """\
set -e
while [ "$1" = --cg ]; do echo $$ > "$2"; shift 2; done
while [ "$1" = --bind ]; do mount --bind "$2" "$3"; shift 3; done
[ "$1" = -- ] && shift
exec "$@"
"""

_uid_lock = threading.Lock()
_uids_in_use: set[int] = set()


@dataclass
class _Cgroups:
    """This run's cgroup v1 directories (memory, maybe cpu); empty if none could be made."""

    dirs: dict[str, Path] = field(default_factory=dict)

    @property
    def memory(self) -> Path | None:
        return self.dirs.get("memory")

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def pids(self) -> list[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return sorted(found)

    def oom_kills(self) -> int:
        if self.memory is None:
            return 0
        try:
            text = (self.memory / "memory.oom_control").read_text()
        except OSError:
            return 0
        match = re.search(r"^oom_kill (\d+)", text, re.MULTILINE)
        if match:
            return int(match.group(1))
        # Kernels before 4.13 have no counter; a failcnt at the limit is the best hint.
        return 1 if "under_oom 1" in text else 0

    def max_usage(self) -> int | None:
        if self.memory is None:
            return None
        try:
            return int((self.memory / "memory.max_usage_in_bytes").read_text())
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        for d in self.dirs.values():
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # still has (dying) tasks
                    time.sleep(0.05)


def _write(path: Path, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


def _make_cgroups(uid: int, limits: Limits) -> tuple[_Cgroups, str | None]:
    """Per-run memory (and cpu) cgroups; the second value says why memory has none."""
    cgroups = _Cgroups()
    token = f"run-{uid}-{os.getpid()}-{random.randrange(1 << 32):08x}"  # noqa: S311
    reason: str | None = None
    memory_root = CGROUP_ROOT / "memory"
    if os.geteuid() != 0:
        return cgroups, "not root"
    if not (memory_root / "memory.limit_in_bytes").exists():
        reason = "no cgroup v1 memory controller at /sys/fs/cgroup/memory"
    else:
        path = memory_root / CGROUP_PARENT / token
        try:
            path.mkdir(parents=True)
            limit = str(limits.memory_mb * 1024 * 1024)
            _write(path / "memory.limit_in_bytes", limit)
            if (path / "memory.memsw.limit_in_bytes").exists():
                _write(path / "memory.memsw.limit_in_bytes", limit)
            with contextlib.suppress(OSError):
                _write(path / "memory.swappiness", "0")
            cgroups.dirs["memory"] = path
        except OSError as exc:
            reason = f"memory cgroup unusable: {exc}"
            with contextlib.suppress(OSError):
                path.rmdir()
    cpu_root = CGROUP_ROOT / "cpu"
    if limits.cpus > 0 and (cpu_root / "cpu.cfs_quota_us").exists():
        path = cpu_root / CGROUP_PARENT / token
        try:
            path.mkdir(parents=True)
            _write(path / "cpu.cfs_period_us", "100000")
            _write(path / "cpu.cfs_quota_us", str(max(1000, int(limits.cpus * 100000))))
            cgroups.dirs["cpu"] = path
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
    return cgroups, reason


def _interpreter_paths() -> list[Path]:
    """Directories the running Python needs, so ``sys.executable`` works in the sandbox."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    exe = os.path.realpath(sys.executable)
    paths.add(os.path.dirname(os.path.dirname(exe)))
    return [Path(os.path.realpath(p)) for p in sorted(paths) if p]


def _is_under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _allocate_uid(uid_range: tuple[int, int]) -> int:
    low, high = uid_range
    if low <= 0 or high < low:
        raise ValueError(f"bad uid range {uid_range}")
    with _uid_lock:
        for _ in range(200):
            uid = random.randint(low, high)  # noqa: S311 - not a secret, just unused
            if uid in _uids_in_use or pids_of_uid(uid):
                continue
            _uids_in_use.add(uid)
            return uid
    raise RuntimeError(f"no free uid in {uid_range}")


def _release_uid(uid: int) -> None:
    with _uid_lock:
        _uids_in_use.discard(uid)


def _chown_tree(root: Path, uid: int, gid: int, *, only_uid: int | None = None) -> None:
    """lchown ``root`` and everything below (never following symlinks). With ``only_uid``,
    only entries owned by that uid change - so a hard link the sandbox made to some other
    file is never handed to anyone."""

    def one(path: str) -> None:
        try:
            st = os.lstat(path)
            if only_uid is None or st.st_uid == only_uid:
                os.lchown(path, uid, gid)
        except OSError:
            pass

    one(str(root))
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            one(os.path.join(dirpath, name))


def _kill_uid(uid: int) -> None:
    for pid in pids_of_uid(uid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


class BwrapSandbox:
    """Runs commands with bubblewrap under a throwaway uid; see the module docstring."""

    name = NAME

    def __init__(
        self,
        *,
        uid_range: tuple[int, int] = DEFAULT_UID_RANGE,
        hide_paths: Sequence[Path] = (),
        expose_paths: Sequence[Path] | None = None,
        stage_dir: Path | None = None,
        allow_host_network: bool = False,
    ) -> None:
        """``hide_paths`` are covered in addition to ``DEFAULT_HIDDEN_PATHS`` (pass the
        Kaizen data dir and the repository's .env). ``expose_paths`` are host directories
        bound back read-only if they lie under a hidden path (default: the running
        interpreter's prefixes). ``stage_dir`` is where the per-run staging directory is
        made (default: the system temp dir; it must be traversable by any uid).

        ``limits.network`` can only be honoured by sharing the host's network namespace,
        which includes services on the host's loopback (Redis!); that is refused with
        :class:`SandboxUnavailable` unless ``allow_host_network`` is set."""
        self.uid_range = uid_range
        cwd = Path.cwd()
        hidden = [Path(p) for p in DEFAULT_HIDDEN_PATHS]
        # A worker started from a checkout keeps its settings and data there by default.
        hidden += [cwd / ".env", cwd / ".kaizen"]
        hidden += [Path(p).absolute() for p in hide_paths]
        self.hide_paths = hidden
        self.expose_paths = (
            _interpreter_paths()
            if expose_paths is None
            else [Path(os.path.realpath(p)) for p in expose_paths]
        )
        self.stage_dir = stage_dir
        self.allow_host_network = allow_host_network

    # -- layout -------------------------------------------------------------------------

    def _hidden(self) -> list[tuple[Path, bool]]:
        """Existing hidden paths, resolved, parents first: (path, is_dir)."""
        seen: dict[Path, bool] = {}
        for p in self.hide_paths:
            if not os.path.lexists(p):
                continue
            real = Path(os.path.realpath(p))
            if real == Path("/") or not real.exists():
                continue
            if real.parts[1] in _SKIPPED_TOP_LEVEL:
                continue  # not mounted in the sandbox in the first place
            seen[real] = real.is_dir()
        return sorted(seen.items(), key=lambda item: len(item[0].parts))

    def _exposed(self, hidden: Iterable[Path]) -> list[Path]:
        # /tmp is a fresh tmpfs in the sandbox: an interpreter or virtualenv that lives
        # there (a checkout under /tmp) must be bound back like one under a hidden path.
        private_tmp = [Path(os.path.realpath(tempfile.gettempdir())), Path("/tmp")]  # noqa: S108
        hidden_dirs = [*hidden, *private_tmp]
        return [
            p
            for p in self.expose_paths
            if p.is_dir() and any(_is_under(p, h) and p != h for h in hidden_dirs)
        ]

    def _bwrap_args(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        limits: Limits,
        stage: Path,
        exposed: Sequence[tuple[Path, Path]],
        hidden: Sequence[tuple[Path, bool]],
    ) -> list[str]:
        args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
        if limits.network:
            args.append("--share-net")
        args += ["--hostname", "sandbox"]
        for entry in sorted(os.scandir("/"), key=lambda e: e.name):
            if entry.name in _SKIPPED_TOP_LEVEL:
                continue
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry.path), f"/{entry.name}"]
            elif entry.is_dir(follow_symlinks=False):
                args += ["--ro-bind", entry.path, entry.path]
        tmp_size = str(max(64, limits.memory_mb) * 1024 * 1024)
        args += ["--dev", "/dev", "--proc", "/proc"]
        args += ["--size", tmp_size, "--tmpfs", "/tmp"]  # noqa: S108 - the sandbox's own tmpfs
        for path, is_dir in hidden:
            if is_dir:
                args += ["--tmpfs", str(path)]
            else:
                args += ["--ro-bind", "/dev/null", str(path)]
        for staged, target in exposed:
            args += ["--ro-bind", str(staged), str(target)]
        args += ["--bind", str(stage / "ws"), WORKSPACE_MOUNT, "--chdir", WORKSPACE_MOUNT]
        args += ["--remount-ro", "/", "--clearenv"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        return [*args, "--", *command]

    # -- run ----------------------------------------------------------------------------

    def run(
        self,
        command: Sequence[str],
        *,
        workspace: Path,
        limits: Limits,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        command, workspace = checked_run_args(command, workspace)
        if limits.network and not self.allow_host_network:
            raise SandboxUnavailable(
                "the bwrap backend has no isolated network: limits.network would share the "
                "host's (loopback services included); use the docker backend for this phase"
            )
        full_env = sandbox_env(env)
        uid = _allocate_uid(self.uid_range)
        ws_stat = workspace.stat()
        stage = Path(tempfile.mkdtemp(prefix="kaizen-bwrap-", dir=self.stage_dir))
        cgroups = _Cgroups()
        try:
            os.chmod(stage, 0o711)  # noqa: S103 - traversable, not listable
            (stage / "ws").mkdir(mode=0o755)
            hidden = self._hidden()
            exposed: list[tuple[Path, Path]] = []
            for i, target in enumerate(self._exposed(p for p, is_dir in hidden if is_dir)):
                (stage / f"x{i}").mkdir(mode=0o755)
                exposed.append((stage / f"x{i}", target))
            cgroups, memory_reason = _make_cgroups(uid, limits)
            _chown_tree(workspace, uid, uid)
            argv, rlimits = self._argv(
                command, full_env, limits, uid, workspace, stage, cgroups, exposed, hidden
            )
            result = self._execute(argv, limits, uid, cgroups)
            result.details.update(
                {
                    "uid": uid,
                    "rlimits": rlimits,
                    "memory_limit": "cgroup" if cgroups.memory else "rlimit_as",
                    "cgroups": {k: str(v) for k, v in cgroups.dirs.items()},
                    "hidden_paths": [str(p) for p, _ in hidden],
                    "exposed_paths": [str(t) for _, t in exposed],
                }
            )
            if memory_reason:
                result.details["memory_cgroup_unavailable"] = memory_reason
            return result
        finally:
            self._sweep(uid, cgroups)
            cgroups.remove()
            _chown_tree(workspace, ws_stat.st_uid, ws_stat.st_gid, only_uid=uid)
            # rmdir, never rmtree: should a bind ever show through, nothing is deleted.
            for child in sorted(stage.iterdir()):
                with contextlib.suppress(OSError):
                    child.rmdir()
            with contextlib.suppress(OSError):
                stage.rmdir()
            _release_uid(uid)

    def _argv(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        limits: Limits,
        uid: int,
        workspace: Path,
        stage: Path,
        cgroups: _Cgroups,
        exposed: Sequence[tuple[Path, Path]],
        hidden: Sequence[tuple[Path, bool]],
    ) -> tuple[list[str], dict[str, int]]:
        rlimits = {
            "nproc": max(1, limits.pids) + BWRAP_OWN_PROCESSES,
            "fsize": limits.file_size_mb * 1024 * 1024,
            # A backstop only: the wall-clock timeout normally ends the run first.
            "cpu": math.ceil(limits.timeout_s * max(1.0, limits.cpus)) + 5,
            "core": 0,
        }
        if cgroups.memory is None:
            rlimits["as"] = limits.memory_mb * 1024 * 1024
        stage_args: list[str] = []
        for procs in cgroups.procs_files():
            stage_args += ["--cg", procs]
        stage_args += ["--bind", str(workspace.resolve()), str(stage / "ws")]
        for staged, target in exposed:
            stage_args += ["--bind", str(target), str(staged)]
        argv = [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            _STAGE_SCRIPT,
            "kaizen-stage",
            *stage_args,
            "--",
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            "prlimit",
            *(f"--{name}={value}" for name, value in rlimits.items()),
            "--",
            *self._bwrap_args(command, env, limits, stage, exposed, hidden),
        ]
        return argv, rlimits

    def _execute(self, argv: list[str], limits: Limits, uid: int, cgroups: _Cgroups) -> RunResult:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            cwd="/",
            env={"PATH": TOOL_PATH, "LANG": "C.UTF-8"},
        )
        out_reader, err_reader = start_capped_readers(proc, limits.output_bytes)
        try:
            timed_out = wait_with_deadline(proc, limits.timeout_s)
        except BaseException:
            self._kill_all(proc, uid, cgroups)
            raise
        if timed_out:
            self._kill_all(proc, uid, cgroups)
        duration = time.monotonic() - started
        # After a normal end nothing should remain (pid 1 of the namespace is gone); make
        # sure, so a reader is never held open by a straggler.
        self._kill_all(proc, uid, cgroups)
        out = out_reader.result(READER_GRACE_S)
        err = err_reader.result(READER_GRACE_S)

        returncode = proc.returncode
        exit_code: int | None
        if timed_out:
            exit_code = None
        elif returncode is not None and returncode < 0:
            exit_code = 128 - returncode
        else:
            exit_code = returncode
        oom_kills = cgroups.oom_kills()
        if cgroups.memory is not None:
            oom = oom_kills > 0
        else:
            oom = (
                not timed_out
                and exit_code not in (0, None)
                and bool(_OOM_PATTERNS.search(err.text.encode()))
            )
        details: dict[str, Any] = {
            "stdout_bytes": out.total_bytes,
            "stderr_bytes": err.total_bytes,
        }
        if exit_code is not None and exit_code > 128:
            with contextlib.suppress(ValueError):
                details["signal"] = signal.Signals(exit_code - 128).name
        if cgroups.memory is not None:
            details["oom_kills"] = oom_kills
            details["max_memory_bytes"] = cgroups.max_usage()
        return RunResult(
            exit_code=exit_code,
            stdout=out.text,
            stderr=err.text,
            duration_s=duration,
            timed_out=timed_out,
            oom_killed=oom,
            output_truncated=out.truncated or err.truncated,
            backend=NAME,
            details=details,
        )

    @staticmethod
    def _sweep(uid: int, cgroups: _Cgroups) -> None:
        """Nothing of the run may outlive it. With a cgroup its member list is complete
        (the run's uid cannot leave a root-owned cgroup), so the /proc scan by uid, which
        costs milliseconds per run, is only needed without one."""
        if cgroups.dirs:
            for pid in cgroups.pids():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            wait_until_gone(cgroups.pids, SWEEP_TIMEOUT_S)
            return
        _kill_uid(uid)
        wait_until_gone(lambda: pids_of_uid(uid), SWEEP_TIMEOUT_S)

    @classmethod
    def _kill_all(cls, proc: subprocess.Popen[bytes], uid: int, cgroups: _Cgroups) -> None:
        kill_process_group(proc)
        cls._sweep(uid, cgroups)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=SWEEP_TIMEOUT_S)


@functools.lru_cache(maxsize=1)
def bwrap_available() -> str | None:
    """None if :class:`BwrapSandbox` can run here, else why not (checked once, by a real
    run of ``true``)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux, not {sys.platform}"
    if os.geteuid() != 0:
        return "the bwrap backend needs root to run each sandbox under its own uid"
    for tool in ("bwrap", "setpriv", "prlimit", "unshare", "mount", "sh"):
        if shutil.which(tool, path=TOOL_PATH) is None:
            return f"{tool} is not installed"
    with tempfile.TemporaryDirectory(prefix="kaizen-bwrap-check-") as tmp:
        try:
            result = BwrapSandbox(expose_paths=()).run(
                ["/bin/sh", "-c", "echo ok > /workspace/ok"],
                workspace=Path(tmp),
                limits=Limits(timeout_s=30, memory_mb=256, pids=16),
            )
        except (OSError, RuntimeError, ValueError) as exc:
            return f"bwrap smoke test failed: {exc}"
        if result.exit_code != 0 or not (Path(tmp) / "ok").exists():
            detail = (result.stderr or result.stdout).strip()[:500]
            return f"bwrap smoke test failed (exit {result.exit_code}): {detail}"
    return None
