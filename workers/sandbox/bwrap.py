"""The bubblewrap backend: one command, a private namespace set, a throwaway uid.

How one run is put together (all as argv, no shell string is built from input)::

    take the run's slot: uid U, its cgroups and a thread already in them, made ahead
    that thread, as root: unshare(CLONE_NEWNS), / made private (a mount namespace of
      its own), binds the workspace (and interpreter dirs under hidden paths) onto mount
      points in a 0711 staging dir, then forks; in the child (preexec - no helper
      program is exec'd):
      set RLIMIT_NPROC/FSIZE/CPU/CORE[/AS], PR_SET_NO_NEW_PRIVS
      setgroups([]), setresgid(U), setresuid(U)
    exec bwrap --info-fd I --unshare-all --die-with-parent --new-session ... -- COMMAND
    parent: read the sandbox's pid from I (to wait for its pid 1 at the end), drain
      stdout/stderr and wait, in one poll loop

  The child's setup is a few syscalls with arguments built beforehand (no imports, no
  library lookups, nothing another thread could have held locked at the fork); a failure
  is written to a pipe the parent reads, and the run raises without executing anything
  (as it does when a bind fails in the thread). The child inherits the forking thread's
  cgroups and mount namespace, so bwrap and all it starts are in the run's cgroups from
  the start and see the binds, which the host never does. Moving a task into a cgroup
  waits for an RCU grace period (5-20 ms here); the slot's thread paid that before the
  run began (see :class:`_Slot`). Should that thread not have got into the cgroups, the
  run moves them itself as before: bwrap gets ``--block-fd B``, the parent moves bwrap
  and the sandbox's first process once I reports it, then writes to B - only then may
  the sandbox exec COMMAND.

  fork copies the page tables, which for a big worker (a model loaded) costs more than
  helper programs; above ``FORK_SETUP_MAX_RSS`` the child's part is made by programs
  started with vfork instead (the binds stay the thread's): ``sh`` (``ulimit`` each) ->
  ``unshare --setgid U --setuid U`` -> bwrap (which sets PR_SET_NO_NEW_PRIVS itself).
  Either way bwrap failing before it made the sandbox is a setup failure: the run
  raises.

* **Uid.** Every run gets its own high uid ``U`` from ``uid_range``, never 0: bwrap run by
  root would hand the child full capabilities, and RLIMIT_NPROC is ignored for root. With a
  uid no other process has, RLIMIT_NPROC counts only this run's processes (a fork bomb gets
  "Cannot fork") and root-only files on the host are unreadable anyway. The workspace is
  chowned to ``U`` for the run and given back to its owner afterwards. With cgroups the
  run's memory cgroup is named after ``U`` (``kaizen-bwrap/u<U>``): its mkdir is an atomic
  claim on the uid across worker processes, and it cannot be removed while any process of
  an earlier run with that uid lives. The next run's uid and cgroups are claimed while a
  run's command is starting (``SPARE_SLOTS``), so the claim costs a run nothing. Foreign
  processes in the uid range are looked for by a /proc scan, repeated at most every
  ``FOREIGN_UID_SCAN_S``; without cgroups every run scans for its uid, as a leftover of an
  earlier run would otherwise go unseen.
* **Filesystem.** The sandbox root is a tmpfs holding read-only binds of the host's
  top-level directories (so the host's interpreters and packages work), a fresh /dev,
  /proc and /tmp, and the workspace at /workspace (the only writable host path). /sys is not
  mounted. Secrets are covered: ``DEFAULT_HIDDEN_PATHS`` plus ``hide_paths`` (the Kaizen
  data dir, the repo's .env, ...) get an empty tmpfs (directories) or a bind of /dev/null
  (files; the bind is nodev, so opening it fails with EACCES); a hidden top-level
  directory (/root, /home, /run, ...) is not bound in the first place, just an empty
  directory of the read-only root.
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
* **Disk.** RLIMIT_FSIZE bounds each file; a run that adds more than
  ``limits.workspace_mb`` to its workspace in all is killed the same way
  (``disk_limit_exceeded``). The waiting thread checks it between reads
  (``disk.DiskWatch``: a statvfs every 20-250 ms, a walk of the workspace only when the
  filesystem lost that much), so no thread is started and a short run waits for nothing.
* **Output.** stdout/stderr are drained by the waiting thread in one poll loop with the
  exit pidfd (``output.PolledOutput``; reader threads cost a short run more than they
  save), at most ``limits.output_bytes`` each is kept, the rest is only counted.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import dataclasses
import functools
import json
import math
import os
import queue
import random
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
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
from workers.sandbox.disk import DiskWatch
from workers.sandbox.output import (
    PolledOutput,
    kill_process_group,
    pids_of_uid,
    wait_until_gone,
)

NAME = "bwrap"
DEFAULT_UID_RANGE = (200000, 265535)
WORKSPACE_MOUNT = "/workspace"
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "kaizen-bwrap"
TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
READER_GRACE_S = 5.0
SWEEP_TIMEOUT_S = 5.0
# How long a scan of /proc for processes with uids in ``uid_range`` stays valid. Kaizen's
# own runs never need it (see the module docstring); it keeps a foreign process that
# happens to have a uid in the range (another tool's subuid range) from sharing one.
FOREIGN_UID_SCAN_S = 30.0
# The run's setup in the child (rlimits, uid switch) is made by the forked child itself
# while this process is smaller than this: fork copies the page tables, a few ms for a
# small interpreter but tens of ms for a worker with a model loaded (~45 ms at 900 MB).
# Above it the setup is done by helper programs (sh, unshare) started with vfork, which
# costs the same at any size (~2 ms more than a small fork).
FORK_SETUP_MAX_RSS = 128 * 1024 * 1024
# How many runs' uids and cgroups are made ahead, each with a thread already in its
# cgroups (see _Slot): a run then waits for no cgroup move. 0: each run makes its own.
SPARE_SLOTS = 1
# A ``u<uid>`` cgroup without processes, older than this, whose uid no process has, is
# left over from a worker that died mid-run (a live run has its outer bwrap in it from
# the first milliseconds on) and is reclaimed.
STALE_CGROUP_S = 60.0
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

# The helper-program way (see FORK_SETUP_MAX_RSS): runs as root in the slot thread's
# private mount namespace (binds made), sets the rlimits, then execs the uid switch.
# Arguments: (--ulimit FLAG VALUE)* -- COMMAND...
# dash's ulimit sets the soft and the hard limit.
_STAGE_SCRIPT = """\
set -e
while [ "$1" = --ulimit ]; do ulimit "$2" "$3"; shift 3; done
[ "$1" = -- ] && shift
exec "$@"
"""
# Resource -> (dash ulimit flag, unit in bytes or 1).
_ULIMIT_FLAGS = {
    resource.RLIMIT_NPROC: ("-p", 1),
    resource.RLIMIT_FSIZE: ("-f", 512),
    resource.RLIMIT_CPU: ("-t", 1),
    resource.RLIMIT_CORE: ("-c", 512),
    resource.RLIMIT_AS: ("-v", 1024),
}

# Linux constants the child setup needs (not in the os module of Python 3.11).
_CLONE_NEWNS = 0x00020000
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_PR_SET_NO_NEW_PRIVS = 38
_PIDFD_THREAD = os.O_EXCL  # pidfd_open(2): a pidfd of a thread, not a process
_RLIMITS = {
    "nproc": resource.RLIMIT_NPROC,
    "fsize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
    "core": resource.RLIMIT_CORE,
    "as": resource.RLIMIT_AS,
}


@dataclass(frozen=True)
class _Libc:
    unshare: Any
    mount: Any
    prctl: Any


@functools.lru_cache(maxsize=1)
def _libc() -> _Libc:
    """libc's unshare/mount/prctl, looked up once in the parent: the forked child must not
    dlsym (another thread may have held the loader lock at fork time)."""
    libc = ctypes.CDLL(None, use_errno=True)
    unshare, mount, prctl = libc.unshare, libc.mount, libc.prctl
    unshare.argtypes = [ctypes.c_int]
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong]
    mount.argtypes += [ctypes.c_void_p]
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.argtypes += [ctypes.c_ulong]
    for fn in (unshare, mount, prctl):
        fn.restype = ctypes.c_int
    return _Libc(unshare, mount, prctl)


@dataclass(frozen=True)
class _ChildSetup:
    """What is done as root before bwrap is exec'd, computed in the parent.

    ``binds`` (the workspace and the exposed directories onto the staging dir's mount
    points) are made by the slot's thread in its private mount namespace, which the child
    inherits (see :class:`_Slot`). The forked child (``preexec_fn``) then only makes
    syscalls, in this order: the rlimits, no-new-privs, then the switch to the run's uid
    and gid (no supplementary groups). Any failure is written to ``error_fd`` and the
    child exits without running anything."""

    uid: int
    binds: tuple[tuple[bytes, bytes], ...]
    rlimits: tuple[tuple[int, int], ...]
    error_fd: int
    libc: _Libc

    def __call__(self) -> None:
        step = "setup"
        try:
            libc = self.libc
            step = "setrlimit"
            for which, value in self.rlimits:
                resource.setrlimit(which, (value, value))
            step = "PR_SET_NO_NEW_PRIVS"
            self._check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
            step = f"switch to uid {self.uid}"
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                os.write(self.error_fd, f"{step}: {exc}".encode(errors="replace")[:4000])
            os._exit(127)

    @staticmethod
    def _check(ret: int) -> None:
        _check(ret)


def _check(ret: int) -> None:
    """Raise the errno of a failed libc call (``ret`` != 0)."""
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


_uid_lock = threading.Lock()
_uids_in_use: set[int] = set()


@dataclass
class _Cgroups:
    """This run's cgroup v1 directories (memory, maybe cpu); empty if none could be made.
    ``unused`` are ones made but not usable for their limit (still removed at the end)."""

    dirs: dict[str, Path] = field(default_factory=dict)
    unused: list[Path] = field(default_factory=list)

    @property
    def memory(self) -> Path | None:
        return self.dirs.get("memory")

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def pids(self) -> list[int]:
        """The processes in the run's cgroups, never this one: the thread of a
        :class:`_Slot` puts this process in ``cgroup.procs`` until it ends, and the sweep
        kills what this returns."""
        found: set[int] = set()
        for d in [*self.dirs.values(), *self.unused]:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        found.discard(os.getpid())
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
        for d in [*self.dirs.values(), *self.unused]:
            pause = 0.0005  # a task that just ended is usually out within a millisecond
            deadline = time.monotonic() + 2.5
            while True:
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # still has (dying) tasks
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(pause)
                    pause = min(0.05, pause * 2)


def _write(path: Path, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


class _UidBusy(Exception):
    """The uid's cgroup exists: another run (maybe in another worker process) holds it."""


def _claim_cgroup(path: Path, uid: int) -> None:
    """mkdir ``path``; :class:`_UidBusy` if it exists and is not a stale leftover."""
    try:
        path.mkdir(parents=True)
        return
    except FileExistsError:
        pass
    try:
        tasks = (path / "cgroup.procs").read_text().split()
        age = time.time() - path.stat().st_mtime
    except OSError:
        raise _UidBusy(str(path)) from None
    if tasks or age < STALE_CGROUP_S or pids_of_uid(uid):
        raise _UidBusy(str(path))
    try:  # left behind by a worker that died mid-run: nothing of it runs any more
        path.rmdir()
        path.mkdir()
    except OSError:
        raise _UidBusy(str(path)) from None


def _make_cgroups(uid: int, limits: Limits | None) -> tuple[_Cgroups, str | None]:
    """Per-run memory (and cpu) cgroups named after ``uid``; the second value says why
    memory has none. Raises :class:`_UidBusy` if the uid is taken. With ``limits=None``
    the cgroups are only claimed (a :class:`_Slot` made ahead of its run): the cpu one
    whenever the controller exists, and :func:`_limit_cgroups` sets the limits later."""
    cgroups = _Cgroups()
    name = f"u{uid}"
    reason: str | None = None
    memory_root = CGROUP_ROOT / "memory"
    if os.geteuid() != 0:
        return cgroups, "not root"
    if not (memory_root / "memory.limit_in_bytes").exists():
        reason = "no cgroup v1 memory controller at /sys/fs/cgroup/memory"
    else:
        path = memory_root / CGROUP_PARENT / name
        try:
            _claim_cgroup(path, uid)
        except OSError as exc:
            reason = f"memory cgroup unusable: {exc}"
        else:
            cgroups.dirs["memory"] = path
    cpu_root = CGROUP_ROOT / "cpu"
    if (limits is None or limits.cpus > 0) and (cpu_root / "cpu.cfs_quota_us").exists():
        path = cpu_root / CGROUP_PARENT / name
        try:
            _claim_cgroup(path, uid)
        except _UidBusy:
            cgroups.remove()
            raise
        except OSError:
            pass
        else:
            cgroups.dirs["cpu"] = path
    if limits is not None:
        reason = _limit_cgroups(cgroups, limits) or reason
    return cgroups, reason


def _limit_cgroups(cgroups: _Cgroups, limits: Limits) -> str | None:
    """Write the run's limits into its cgroups; the reason if the memory limit could not
    be set. A cgroup whose limit cannot be set is moved to ``unused`` (still removed at
    the end, no longer counted on): without a memory limit, RLIMIT_AS takes over."""
    reason: str | None = None
    memory = cgroups.dirs.get("memory")
    if memory is not None:
        try:
            limit = str(limits.memory_mb * 1024 * 1024)
            _write(memory / "memory.limit_in_bytes", limit)
            if (memory / "memory.memsw.limit_in_bytes").exists():
                _write(memory / "memory.memsw.limit_in_bytes", limit)
            with contextlib.suppress(OSError):
                _write(memory / "memory.swappiness", "0")
        except OSError as exc:
            reason = f"memory cgroup unusable: {exc}"
            cgroups.unused.append(cgroups.dirs.pop("memory"))
    cpu = cgroups.dirs.get("cpu")
    if cpu is not None:
        try:
            _write(cpu / "cpu.cfs_period_us", "100000")
            # -1: no quota (a slot's cpu cgroup exists even for a run with cpus=0).
            quota = max(1000, int(limits.cpus * 100000)) if limits.cpus > 0 else -1
            _write(cpu / "cpu.cfs_quota_us", str(quota))
        except OSError:
            cgroups.unused.append(cgroups.dirs.pop("cpu"))
    return reason


_stage_lock = threading.Lock()
_stages: dict[Path | None, Path] = {}


def _is_own_dir(path: Path, mode: int | None = None) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.geteuid()
        and (mode is None or stat.S_IMODE(st.st_mode) == mode)
    )


def _staging_dir(parent: Path | None, exposed: int) -> Path:
    """The mount points the slot's thread binds the workspace (``ws``) and the exposed
    directories (``x0``, ...) on, inside its private mount namespace. On the host they are
    empty directories of ours in a 0711 one (other users can neither list nor change
    them), so one set serves every run, concurrent ones too; it is checked each time and
    made anew if anything about it is off (a temp cleaner removed it, ...)."""
    names = ["ws", *(f"x{i}" for i in range(exposed))]
    with _stage_lock:
        stage = _stages.get(parent)
        if stage is not None and _is_own_dir(stage, 0o711):
            for name in names:
                with contextlib.suppress(FileExistsError):
                    (stage / name).mkdir(mode=0o755)
            if all(_is_own_dir(stage / name) for name in names):
                return stage
        stage = Path(tempfile.mkdtemp(prefix="kaizen-bwrap-", dir=parent))
        os.chmod(stage, 0o711)  # noqa: S103 - traversable, not listable
        for name in names:
            (stage / name).mkdir(mode=0o755)
        _stages[parent] = stage
        atexit.register(_remove_staging_dir, stage)
        return stage


def _remove_staging_dir(stage: Path) -> None:
    # rmdir, never rmtree: should a bind ever show through, nothing is deleted.
    with contextlib.suppress(OSError):
        for child in stage.iterdir():
            with contextlib.suppress(OSError):
                child.rmdir()
    with contextlib.suppress(OSError):
        stage.rmdir()


def _interpreter_paths() -> list[Path]:
    """Directories the running Python needs, so ``sys.executable`` works in the sandbox."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    exe = os.path.realpath(sys.executable)
    paths.add(os.path.dirname(os.path.dirname(exe)))
    return [Path(os.path.realpath(p)) for p in sorted(paths) if p]


_foreign_scan: dict[tuple[int, int], tuple[float, frozenset[int]]] = {}


def _uids_seen_in_range(low: int, high: int) -> frozenset[int]:
    """Real uids in ``[low, high]`` of live processes, from a /proc scan at most
    ``FOREIGN_UID_SCAN_S`` old (it costs milliseconds; runs come much more often)."""
    now = time.monotonic()
    cached = _foreign_scan.get((low, high))
    if cached is not None and now - cached[0] < FOREIGN_UID_SCAN_S:
        return cached[1]
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as f:
                status = f.read()
        except OSError:
            continue
        start = status.find(b"\nUid:")
        if start < 0 or b"\nState:\tZ" in status:
            continue
        fields = status[start + 5 : status.find(b"\n", start + 5)].split()
        if fields and low <= int(fields[0]) <= high:
            found.add(int(fields[0]))
    result = frozenset(found)
    _foreign_scan[(low, high)] = (now, result)
    return result


def _reserve_uid(
    uid_range: tuple[int, int], limits: Limits | None
) -> tuple[int, _Cgroups, str | None]:
    """A uid no live process has, with this run's cgroups (see the module docstring;
    ``limits=None``: claimed without limits yet, see :func:`_make_cgroups`)."""
    low, high = uid_range
    if low <= 0 or high < low:
        raise ValueError(f"bad uid range {uid_range}")
    seen = _uids_seen_in_range(low, high)
    for _ in range(200):
        uid = random.randint(low, high)  # noqa: S311 - not a secret, just unused
        with _uid_lock:
            if uid in _uids_in_use or uid in seen:
                continue
            _uids_in_use.add(uid)
        try:
            cgroups, reason = _make_cgroups(uid, limits)
        except _UidBusy:
            _release_uid(uid)
            continue
        except BaseException:
            _release_uid(uid)
            raise
        # Without a cgroup nothing claims the uid across processes or proves that no
        # leftover of an earlier run has it: look at /proc for this very uid.
        if not cgroups.dirs and pids_of_uid(uid):
            _release_uid(uid)
            continue
        return uid, cgroups, reason
    raise RuntimeError(f"no free uid in {uid_range}")


def _release_uid(uid: int) -> None:
    with _uid_lock:
        _uids_in_use.discard(uid)


class _Slot:
    """A run's uid and cgroups, made before the run, with a thread of this process already
    inside the cgroups: the process that thread starts is born in them.

    Moving a task into a cgroup waits for an RCU grace period on the kernel's global
    cgroup threadgroup rwsem (unless no other move happened within the last one): here
    5-20 ms, more than everything else this backend adds to a run. A slot made ahead (by
    the previous run, once its command was started) has paid that wait before its run
    begins: its thread wrote itself into each cgroup's ``tasks`` (cgroup v1 moves single
    threads), then waits. The run hands it the ``Popen`` call; fork (or vfork) copies the
    calling thread's cgroups, so bwrap and all it starts are in the run's cgroups from
    their first instruction - no window outside them, no --block-fd handshake. The thread
    waits until the run is over (it is bwrap's parent) and ends before the cgroups are
    removed.

    Just before the fork the thread also unshares a mount namespace of its own (a thread
    can: only CLONE_FS goes with CLONE_NEWNS), private, and makes the run's binds into
    the staging dir there; the child inherits it, so it needs no mount syscalls and the
    helper-program way no ``unshare --mount`` and ``mount`` programs.

    The thread being in the run's cgroups changes nothing for this process: user memory
    is charged to the memory cgroup of the mm's owner (the main thread), and the memory
    cgroup's OOM killer only picks thread-group leaders; ``_Cgroups.pids`` leaves this
    process out of every sweep. Without cgroups a slot is still made (for the namespace),
    just not ahead of its run."""

    def __init__(self, uid: int, cgroups: _Cgroups, memory_reason: str | None) -> None:
        self.uid = uid
        self.cgroups = cgroups
        self.memory_reason = memory_reason
        self.owner_pid = os.getpid()
        self.join_error: str | None = None  # why the thread is not in all the cgroups
        self._ready = threading.Event()
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._main, name=f"kaizen-bwrap-u{uid}", daemon=True)
        self._thread.start()
        # Readable once the thread is gone from the kernel too (and so from the cgroups):
        # join() returns a little earlier, and an rmdir then fails and has to retry.
        self._exit_fd = -1
        native_id = self._thread.native_id
        if native_id is not None:
            with contextlib.suppress(OSError):  # PIDFD_THREAD needs Linux 6.9
                self._exit_fd = os.pidfd_open(native_id, _PIDFD_THREAD)

    @property
    def joined(self) -> bool:
        """Whether a process started by :meth:`spawn` is born in all the run's cgroups."""
        return bool(self.cgroups.dirs) and self._ready.is_set() and self.join_error is None

    def _main(self) -> None:
        try:
            for path in self.cgroups.dirs.values():
                _write(path / "tasks", "0")  # "0": the writing thread itself
        except OSError as exc:
            self.join_error = f"joining {path}: {exc}"
        finally:
            self._ready.set()
        # Alive until released: it is the parent of what it started, and bwrap's
        # --die-with-parent (PR_SET_PDEATHSIG) fires when the parent *thread* ends.
        while (job := self._jobs.get()) is not None:
            job()

    def wait_ready(self) -> None:
        self._ready.wait()

    def spawn(
        self,
        start: Callable[[], subprocess.Popen[bytes]],
        binds: Sequence[tuple[bytes, bytes]],
    ) -> subprocess.Popen[bytes]:
        """In the slot's thread: give it a private mount namespace of its own with
        ``binds``, then call ``start()`` there (in the cgroups, if joined); its result
        here. A failed step raises RuntimeError before anything is started.

        A thread may unshare CLONE_NEWNS (only CLONE_FS goes with it); made private,
        nothing propagates between it and the host's, and what the thread starts
        inherits it. It is made now rather than with the slot, so the run sees the
        host's mounts as they are when it starts."""
        result: list[subprocess.Popen[bytes] | BaseException] = []
        done = threading.Event()

        def job() -> None:
            try:
                libc = _libc()
                steps: list[tuple[str, Callable[[], int]]] = [
                    ("unshare(CLONE_NEWNS)", lambda: libc.unshare(_CLONE_NEWNS)),
                    (
                        "make / private",
                        lambda: libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None),
                    ),
                ]
                for source, target in binds:
                    steps.append(
                        (
                            f"bind {source!r} on {target!r}",
                            functools.partial(libc.mount, source, target, None, _MS_BIND, None),
                        )
                    )
                for step, call in steps:
                    try:
                        _check(call())
                    except OSError as exc:
                        raise RuntimeError(f"bwrap sandbox setup failed: {step}: {exc}") from None
                result.append(start())
            except BaseException as exc:  # handed to the caller
                result.append(exc)
            finally:
                done.set()

        self._jobs.put(job)
        try:
            done.wait()
        except BaseException:
            done.wait()  # interrupted: a started child must not be left running
            if result and isinstance(result[0], subprocess.Popen):
                kill_process_group(result[0])
                result[0].wait()
            raise
        value = result[0]
        if isinstance(value, BaseException):
            raise value
        return value

    def end(self) -> None:
        """Let the thread end, once the run's bwrap is gone (or being killed anyway)."""
        self._jobs.put(None)

    def release(self) -> None:
        """End the thread and wait until it is gone, so it is out of the cgroups before
        they are removed."""
        self.end()
        self._thread.join()
        if self._exit_fd >= 0:
            select.select([self._exit_fd], [], [], SWEEP_TIMEOUT_S)
            os.close(self._exit_fd)
            self._exit_fd = -1


_slot_lock = threading.Lock()
# Slots made ahead, by uid range and cgroup root (tests point CGROUP_ROOT elsewhere).
_spares: dict[tuple[tuple[int, int], Path], list[_Slot]] = {}


def _slot_key(uid_range: tuple[int, int]) -> tuple[tuple[int, int], Path]:
    return uid_range, CGROUP_ROOT


def _make_slot(uid_range: tuple[int, int]) -> _Slot:
    uid, cgroups, reason = _reserve_uid(uid_range, None)
    try:
        return _Slot(uid, cgroups, reason)
    except BaseException:
        cgroups.remove()
        _release_uid(uid)
        raise


def _take_slot(uid_range: tuple[int, int]) -> _Slot:
    """A spare slot for ``uid_range`` if there is one, else a new one; ready to spawn."""
    with _slot_lock:
        spares = _spares.get(_slot_key(uid_range))
        slot = spares.pop(0) if spares else None
    if slot is None:
        slot = _make_slot(uid_range)
    slot.wait_ready()
    return slot


def _prepare_spares(uid_range: tuple[int, int]) -> None:
    """Make slots ahead, up to ``SPARE_SLOTS``. Only with cgroups (the caller checks):
    without one nothing claims a uid across processes, so a run must check its uid in
    /proc when it starts. Best effort: a run that finds no spare makes its own slot (and
    reports errors)."""
    key = _slot_key(uid_range)
    with _slot_lock:
        missing = SPARE_SLOTS - len(_spares.get(key, ()))
    for _ in range(missing):
        try:
            slot = _make_slot(uid_range)
        except (OSError, RuntimeError, ValueError):
            return
        if not slot.cgroups.dirs:
            _discard_slot(slot)
            return
        with _slot_lock:
            _spares.setdefault(key, []).append(slot)


def _discard_slot(slot: _Slot) -> None:
    slot.release()
    slot.cgroups.remove()
    _release_uid(slot.uid)


def _discard_spares() -> None:
    """Give up every spare slot (at exit; tests that need runs to pick their uid)."""
    with _slot_lock:
        slots = [slot for spares in _spares.values() for slot in spares]
        _spares.clear()
    for slot in slots:
        if slot.owner_pid == os.getpid():
            _discard_slot(slot)


def _forget_spares_after_fork() -> None:
    """In a forked child the slots' threads do not exist and their cgroups are the
    parent's: forget them (and a lock another thread may have held at the fork)."""
    global _slot_lock, _spares
    _slot_lock = threading.Lock()
    _spares = {}


atexit.register(_discard_spares)
os.register_at_fork(after_in_child=_forget_spares_after_fork)


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
        interpreter's prefixes). ``stage_dir`` is where the staging directory (mount
        points only) is made (default: the system temp dir; it must be traversable by any
        uid).

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
        # None: chosen per run by this process's size (FORK_SETUP_MAX_RSS).
        self._setup_in_child: bool | None = None

    # -- layout -------------------------------------------------------------------------

    def _hidden(self) -> list[tuple[Path, bool]]:
        """Existing hidden paths, resolved, parents first: (path, is_dir)."""
        seen: dict[str, bool] = {}
        for p in self.hide_paths:
            real = os.path.realpath(p)
            try:
                st = os.stat(real)
            except OSError:
                continue  # nothing there (or a dangling link): nothing to hide
            top = real.split("/", 2)[1]
            if not top or top in _SKIPPED_TOP_LEVEL:
                continue  # "/" itself, or not mounted in the sandbox in the first place
            seen[real] = stat.S_ISDIR(st.st_mode)
        ordered = sorted(seen.items(), key=lambda item: item[0].count("/"))
        return [(Path(real), is_dir) for real, is_dir in ordered]

    def _exposed(self, hidden: Iterable[Path]) -> list[Path]:
        # /tmp is a fresh tmpfs in the sandbox: an interpreter or virtualenv that lives
        # there (a checkout under /tmp) must be bound back like one under a hidden path.
        private_tmp = [os.path.realpath(tempfile.gettempdir()), "/tmp"]  # noqa: S108
        # Strictly below a hidden directory (all are absolute, none is "/").
        prefixes = tuple(f"{h}/" for h in [*map(str, hidden), *private_tmp])
        return [p for p in self.expose_paths if str(p).startswith(prefixes) and p.is_dir()]

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
        # A hidden top-level directory (/root, /home, /run, ...) is not bound at all, just
        # made empty in the sandbox's root (read-only with it): nothing of the host is
        # underneath, and it costs no mounts.
        covered = {path for path, is_dir in hidden if is_dir and len(path.parts) == 2}
        for entry in sorted(os.scandir("/"), key=lambda e: e.name):
            if entry.name in _SKIPPED_TOP_LEVEL:
                continue
            if Path(entry.path) in covered and not entry.is_symlink():
                continue
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry.path), f"/{entry.name}"]
            elif entry.is_dir(follow_symlinks=False):
                args += ["--ro-bind", entry.path, entry.path]
        tmp_size = str(max(64, limits.memory_mb) * 1024 * 1024)
        args += ["--dev", "/dev", "--proc", "/proc"]
        args += ["--size", tmp_size, "--tmpfs", "/tmp"]  # noqa: S108 - the sandbox's own tmpfs
        for path, is_dir in hidden:
            if path in covered:
                args += ["--dir", str(path)]  # empty, and read-only with the root
            elif is_dir:
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
        ws_stat = workspace.stat()
        slot = _take_slot(self.uid_range)
        uid, cgroups = slot.uid, slot.cgroups
        try:
            memory_reason = _limit_cgroups(cgroups, limits) or slot.memory_reason
            hidden = self._hidden()
            targets = self._exposed(p for p, is_dir in hidden if is_dir)
            stage = _staging_dir(self.stage_dir, len(targets))
            exposed = [(stage / f"x{i}", target) for i, target in enumerate(targets)]
            _chown_tree(workspace, uid, uid)
            argv, setup, rlimits = self._argv(
                command, full_env, limits, uid, workspace, stage, cgroups, exposed, hidden
            )
            disk = DiskWatch(workspace, limits.workspace_mb, limit_files=limits.workspace_files)
            result = self._execute(argv, setup, limits, slot, disk)
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
            slot.end()  # its exit overlaps with the sweep
            self._sweep(uid, cgroups)
            slot.release()
            cgroups.remove()
            _chown_tree(workspace, ws_stat.st_uid, ws_stat.st_gid, only_uid=uid)
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
    ) -> tuple[list[str], _ChildSetup, dict[str, int]]:
        rlimits = {
            "nproc": max(1, limits.pids) + BWRAP_OWN_PROCESSES,
            "fsize": limits.file_size_mb * 1024 * 1024,
            # A backstop only: the wall-clock timeout normally ends the run first.
            "cpu": math.ceil(limits.timeout_s * max(1.0, limits.cpus)) + 5,
            "core": 0,
        }
        if cgroups.memory is None:
            rlimits["as"] = limits.memory_mb * 1024 * 1024
        # The child inherits our hard limits and cannot raise them (no CAP_SYS_RESOURCE in
        # some containers): never ask for more, a lower limit is only stricter.
        applied: list[tuple[int, int]] = []
        for name, value in rlimits.items():
            which = _RLIMITS[name]
            hard = resource.getrlimit(which)[1]
            if hard != resource.RLIM_INFINITY and value > hard:
                rlimits[name] = value = hard
            applied.append((which, value))
        binds = [(workspace.resolve(), stage / "ws")]
        binds += [(target, staged) for staged, target in exposed]
        setup = _ChildSetup(
            uid=uid,
            binds=tuple((os.fsencode(src), os.fsencode(dst)) for src, dst in binds),
            rlimits=tuple(applied),
            error_fd=-1,
            libc=_libc(),
        )
        argv = self._bwrap_args(command, env, limits, stage, exposed, hidden)
        argv[0] = _bwrap_path()
        return argv, setup, rlimits

    def _execute(
        self, argv: list[str], setup: _ChildSetup, limits: Limits, slot: _Slot, disk: DiskWatch
    ) -> RunResult:
        started = time.monotonic()
        deadline = started + limits.timeout_s
        uid, cgroups = slot.uid, slot.cgroups
        # Born in the cgroups (the slot's thread starts it), or moved there by us.
        join = [] if slot.joined else cgroups.procs_files()
        if self._setup_in_child is None:
            in_child = _rss_bytes() < FORK_SETUP_MAX_RSS
        else:
            in_child = self._setup_in_child
        ours: list[int] = []  # pipe ends the parent keeps
        theirs: list[int] = []  # pipe ends for the child, closed here once it is started
        preexec: _ChildSetup | None = None
        try:
            # bwrap reports the sandbox's pid on ``info`` as soon as it has made it (before
            # the command runs); with cgroups to join, the sandbox execs the command only
            # once ``block`` is readable, and the parent moves it in between.
            info_r, info_w = os.pipe()
            ours.append(info_r)
            theirs.append(info_w)
            options = ["--info-fd", str(info_w)]
            if join:
                block_r, block_w = os.pipe()
                ours.append(block_w)
                theirs.append(block_r)
                options += ["--block-fd", str(block_r)]
            bwrap_argv = [argv[0], *options, *argv[1:]]
            if in_child:
                # The child reports a failed setup here; the write end closes at the exec.
                error_r, error_w = os.pipe()
                ours.append(error_r)
                preexec = dataclasses.replace(setup, error_fd=error_w)
                popen_argv = bwrap_argv
            else:
                popen_argv = [*_helper_argv(setup), *bwrap_argv]

            def start() -> subprocess.Popen[bytes]:
                return subprocess.Popen(
                    popen_argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    cwd="/",
                    env={"PATH": TOOL_PATH, "LANG": "C.UTF-8"},
                    pass_fds=tuple(theirs),
                    preexec_fn=preexec,
                )

            proc = slot.spawn(start, setup.binds)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
            if preexec is not None:
                os.close(preexec.error_fd)
        output = PolledOutput(proc, limits.output_bytes)
        init_fds: list[int] = []
        try:
            failure = "interrupted"
            try:
                # The next run's slot is made while bwrap builds this one's sandbox.
                if cgroups.dirs:
                    _prepare_spares(self.uid_range)
                failure = ""
                if in_child:
                    failure = _read_all(error_r, deadline).decode(errors="replace")
                if not failure:
                    failure = self._join_cgroups(
                        proc, info_r, join, deadline, init_fds, uid if cgroups.dirs else None
                    )
                if not failure and join:
                    with contextlib.suppress(OSError):
                        os.write(block_w, b"x")  # go
            except BaseException:
                failure = failure or "interrupted"
                raise
            finally:
                if failure:
                    # Blocked or born in its cgroups, the command never runs outside them;
                    # bwrap's death takes the sandbox with it (--die-with-parent) and the
                    # sweep gets whatever is left.
                    kill_process_group(proc)
                    proc.wait()
                for fd in ours:
                    os.close(fd)
            if failure:
                output.drain(READER_GRACE_S)
                detail = output.results()[1].text.strip()[-2000:]
                raise RuntimeError(
                    f"bwrap sandbox setup failed: {failure}" + (f": {detail}" if detail else "")
                )
            try:
                killed = output.wait(deadline, disk)
            except BaseException:
                self._kill_all(proc, uid, cgroups, init_fds)
                raise
            if killed:
                self._kill_all(proc, uid, cgroups, init_fds)
            timed_out = killed and not disk.exceeded
            duration = time.monotonic() - started
            # After a normal end nothing should remain (pid 1 of the namespace is gone); make
            # sure, so the pipes are never held open by a straggler.
            self._kill_all(proc, uid, cgroups, init_fds)
            output.drain(READER_GRACE_S)
            out, err = output.results()

            returncode = proc.returncode
            exit_code: int | None
            if killed:
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
                "setup": "forked child" if in_child else "helper programs",
                "cgroups_joined": "at birth" if slot.joined else "moved",
                **disk.details(),
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
                disk_limit_exceeded=disk.exceeded,
                output_truncated=out.truncated or err.truncated,
                backend=NAME,
                details=details,
            )
        finally:
            output.close()
            for fd in init_fds:
                os.close(fd)

    @staticmethod
    def _join_cgroups(
        proc: subprocess.Popen[bytes],
        info_r: int,
        procs_files: Sequence[str],
        deadline: float,
        init_fds: list[int],
        track_init_uid: int | None,
    ) -> str:
        """Wait until bwrap has made the sandbox; with ``procs_files`` (the run was not
        born in its cgroups) put bwrap and the sandbox's first process (blocked until we
        let it go) into them. "" on success, else why not. The move is made here rather
        than before the exec: it waits for an RCU grace period (often 10 ms and more),
        which this way passes while bwrap builds the sandbox.

        With ``track_init_uid`` the sandbox's pid 1 is kept as a pidfd: when it is killed
        it leaves the cgroup early in its exit but lingers, with the run's uid and not
        yet a zombie, until every other process of its pid namespace is gone. The sweep
        waits for it by this pidfd."""
        info = _read_all(info_r, deadline)
        if not info:
            if time.monotonic() >= deadline:
                return "bwrap did not make the sandbox within the time limit"
            return "bwrap (or a setup step before it) ended before making the sandbox"
        try:
            pids = [proc.pid, int(json.loads(info)["child-pid"])]
            if track_init_uid is not None:
                _track_init(pids[1], track_init_uid, init_fds)
            for procs in procs_files:
                for pid in pids:
                    fd = os.open(procs, os.O_WRONLY)
                    try:
                        os.write(fd, str(pid).encode())
                    finally:
                        os.close(fd)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"joining the run's cgroups: {exc}"
        return ""

    @staticmethod
    def _sweep(uid: int, cgroups: _Cgroups, init_fds: Sequence[int] = ()) -> None:
        """Nothing of the run may outlive it. With a cgroup its member list is complete
        (the run's uid cannot leave a root-owned cgroup), so the /proc scan by uid, which
        costs milliseconds per run, is only needed without one. The sandbox's pid 1 is
        waited for by its pidfd between the kill and the check that all are gone: right
        after a normal end it is usually still exiting, and the pidfd wakes the moment it
        is done where polling the member list would sleep a millisecond or more."""
        if cgroups.dirs:
            members: Callable[[], Sequence[int]] = cgroups.pids
        else:
            members = functools.partial(pids_of_uid, uid)
        for pid in members():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        # Once out of the cgroup, pid 1 is gone when its pidfd turns readable.
        if init_fds:
            select.select(list(init_fds), [], [], SWEEP_TIMEOUT_S)
        wait_until_gone(members, SWEEP_TIMEOUT_S)

    @classmethod
    def _kill_all(
        cls,
        proc: subprocess.Popen[bytes],
        uid: int,
        cgroups: _Cgroups,
        init_fds: Sequence[int] = (),
    ) -> None:
        kill_process_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=SWEEP_TIMEOUT_S)
        cls._sweep(uid, cgroups, init_fds)


def _track_init(pid: int, uid: int, init_fds: list[int]) -> None:
    """Add a pidfd of the sandbox's pid 1 to ``init_fds``. Not blocked (born in its
    cgroups, the sandbox runs on at once), it may already be gone: then there is nothing
    to wait for. That the pid is still the sandbox's (and not reused) is checked by its
    owner, the run's uid, after the pidfd pins it."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        if os.stat(f"/proc/{pid}").st_uid == uid:
            init_fds.append(fd)
            return
    except OSError:
        pass
    os.close(fd)


def _read_all(fd: int, deadline: float) -> bytes:
    """Read ``fd`` to EOF; at ``deadline`` (monotonic) return what came so far."""
    data = b""
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return data
        chunk = os.read(fd, 4096)
        if not chunk:
            return data
        data += chunk


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return FORK_SETUP_MAX_RSS  # unknown: take the way that does not depend on it


@functools.lru_cache(maxsize=8)
def _tool(name: str) -> str:
    return shutil.which(name, path=TOOL_PATH) or name


def _helper_argv(setup: _ChildSetup) -> list[str]:
    """The child's part of ``setup`` done by helper programs (for a parent too big to
    fork cheaply); the binds are the slot thread's, as for a forked child."""
    args = [_tool("sh"), "-c", _STAGE_SCRIPT, "kaizen-stage"]
    for which, value in setup.rlimits:
        flag, unit = _ULIMIT_FLAGS[which]
        args += ["--ulimit", flag, str(value // unit)]
    # unshare without namespaces: setgroups([]), setgid, setuid, exec. bwrap itself sets
    # PR_SET_NO_NEW_PRIVS (checked by the tests).
    args += ["--", _tool("unshare"), f"--setgid={setup.uid}", f"--setuid={setup.uid}", "--"]
    return args


@functools.lru_cache(maxsize=1)
def _bwrap_path() -> str:
    """bwrap's absolute path, so the child execs it without trying each PATH entry."""
    return shutil.which("bwrap", path=TOOL_PATH) or "bwrap"


@functools.lru_cache(maxsize=1)
def bwrap_available() -> str | None:
    """None if :class:`BwrapSandbox` can run here, else why not (checked once, by a real
    run of ``true``)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux, not {sys.platform}"
    if os.geteuid() != 0:
        return "the bwrap backend needs root to run each sandbox under its own uid"
    for tool in ("bwrap", "unshare", "sh"):
        if shutil.which(tool, path=TOOL_PATH) is None:
            return f"{tool} is not installed"
    try:
        _libc()
    except (OSError, AttributeError) as exc:
        return f"libc's unshare/mount/prctl are not usable: {exc}"
    # Both ways of making the setup (see FORK_SETUP_MAX_RSS): this process may grow.
    for in_child in (True, False):
        with tempfile.TemporaryDirectory(prefix="kaizen-bwrap-check-") as tmp:
            sandbox = BwrapSandbox(expose_paths=())
            sandbox._setup_in_child = in_child
            try:
                result = sandbox.run(
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
