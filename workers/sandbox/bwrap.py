"""The bubblewrap backend: one command, a private namespace set, a throwaway uid.

How one run is put together (all as argv, no shell string is built from input)::

    fork; in the child, as root (preexec - no helper program is exec'd):
      unshare(CLONE_NEWNS), / made private            # a private mount namespace
      bind the workspace (and interpreter dirs under hidden paths) onto mount points in
        a 0711 staging dir
      set RLIMIT_NPROC/FSIZE/CPU/CORE[/AS], PR_SET_NO_NEW_PRIVS
      setgroups([]), setresgid(U), setresuid(U)
    exec bwrap --info-fd I --block-fd B --unshare-all --die-with-parent --new-session ...
      -- COMMAND
    parent: read the sandbox's pid from I, move bwrap and it into the run's cgroups,
      then write to B: only now may the sandbox exec COMMAND

  The child's setup is a few syscalls with arguments built beforehand (no imports, no
  library lookups, nothing another thread could have held locked at the fork); a failure
  is written to a pipe the parent reads, and the run raises without executing anything.
  The cgroup move is the parent's because it waits for an RCU grace period (often
  10 ms and more); that way the wait overlaps with bwrap building the sandbox.

  fork copies the page tables, which for a big worker (a model loaded) costs more than
  helper programs; above ``FORK_SETUP_MAX_RSS`` the same setup is made by programs
  started with vfork instead: ``unshare --mount --propagation private`` -> ``sh``
  (``mount --bind`` each, ``ulimit`` each) -> ``unshare --setgid U --setuid U`` -> bwrap
  (which sets PR_SET_NO_NEW_PRIVS itself). Either way bwrap failing before it made the
  sandbox is a setup failure: the run raises.

* **Uid.** Every run gets its own high uid ``U`` from ``uid_range``, never 0: bwrap run by
  root would hand the child full capabilities, and RLIMIT_NPROC is ignored for root. With a
  uid no other process has, RLIMIT_NPROC counts only this run's processes (a fork bomb gets
  "Cannot fork") and root-only files on the host are unreadable anyway. The workspace is
  chowned to ``U`` for the run and given back to its owner afterwards. With cgroups the
  run's memory cgroup is named after ``U`` (``kaizen-bwrap/u<U>``): its mkdir is an atomic
  claim on the uid across worker processes, and it cannot be removed while any process of
  an earlier run with that uid lives. Foreign processes in the uid range are looked for by
  a /proc scan, repeated at most every ``FOREIGN_UID_SCAN_S``; without cgroups every run
  scans for its uid, as a leftover of an earlier run would otherwise go unseen.
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
* **Output.** stdout/stderr drain concurrently in threads (``output.py``), at most
  ``limits.output_bytes`` each is kept, the rest is only counted.
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
# How long a scan of /proc for processes with uids in ``uid_range`` stays valid. Kaizen's
# own runs never need it (see the module docstring); it keeps a foreign process that
# happens to have a uid in the range (another tool's subuid range) from sharing one.
FOREIGN_UID_SCAN_S = 30.0
# The run's setup (mount namespace, binds, rlimits, uid switch) is made in the forked child
# itself while this process is smaller than this: fork copies the page tables, a few ms
# for a small interpreter but tens of ms for a worker with a model loaded (~45 ms at
# 900 MB). Above it the setup is done by helper programs (unshare, sh, mount) started
# with vfork, which costs the same at any size (~5 ms more than a small fork).
FORK_SETUP_MAX_RSS = 128 * 1024 * 1024
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

# The helper-program way (see FORK_SETUP_MAX_RSS): runs as root inside the private mount
# namespace made by unshare(1), then execs the uid switch. Arguments:
#   (--bind SRC DST)* (--ulimit FLAG VALUE)* -- COMMAND...
# dash's ulimit sets the soft and the hard limit.
_STAGE_SCRIPT = """\
set -e
while [ "$1" = --bind ]; do mount --bind "$2" "$3"; shift 3; done
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
    """What the forked child does as root before it execs bwrap (``preexec_fn``).

    Everything is computed in the parent; the child only makes syscalls, in this order:
    a private mount namespace with the staging binds, the rlimits, no-new-privs, then the
    switch to the run's uid and gid (no supplementary groups). Any failure is written to
    ``error_fd`` and the child exits without running anything. (The run's cgroups are
    joined by the parent: see ``BwrapSandbox._join_cgroups``.)"""

    uid: int
    binds: tuple[tuple[bytes, bytes], ...]
    rlimits: tuple[tuple[int, int], ...]
    error_fd: int
    libc: _Libc

    def __call__(self) -> None:
        step = "setup"
        try:
            libc = self.libc
            step = "unshare(CLONE_NEWNS)"
            self._check(libc.unshare(_CLONE_NEWNS))
            step = "make / private"
            self._check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None))
            for source, target in self.binds:
                step = f"bind {source!r} on {target!r}"
                self._check(libc.mount(source, target, None, _MS_BIND, None))
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
        if ret != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))


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


def _make_cgroups(uid: int, limits: Limits) -> tuple[_Cgroups, str | None]:
    """Per-run memory (and cpu) cgroups named after ``uid``; the second value says why
    memory has none. Raises :class:`_UidBusy` if the uid is taken."""
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
            try:
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
        path = cpu_root / CGROUP_PARENT / name
        try:
            _claim_cgroup(path, uid)
        except _UidBusy:
            cgroups.remove()
            raise
        except OSError:
            pass
        else:
            try:
                _write(path / "cpu.cfs_period_us", "100000")
                _write(path / "cpu.cfs_quota_us", str(max(1000, int(limits.cpus * 100000))))
                cgroups.dirs["cpu"] = path
            except OSError:
                with contextlib.suppress(OSError):
                    path.rmdir()
    return cgroups, reason


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
    """The mount points the child binds the workspace (``ws``) and the exposed directories
    (``x0``, ...) on, inside its private mount namespace. On the host they are empty
    directories of ours in a 0711 one (other users can neither list nor change them), so
    one set serves every run, concurrent ones too; it is checked each time and made anew
    if anything about it is off (a temp cleaner removed it, ...)."""
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


def _reserve_uid(uid_range: tuple[int, int], limits: Limits) -> tuple[int, _Cgroups, str | None]:
    """A uid no live process has, with this run's cgroups (see the module docstring)."""
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
        uid, cgroups, memory_reason = _reserve_uid(self.uid_range, limits)
        try:
            hidden = self._hidden()
            targets = self._exposed(p for p, is_dir in hidden if is_dir)
            stage = _staging_dir(self.stage_dir, len(targets))
            exposed = [(stage / f"x{i}", target) for i, target in enumerate(targets)]
            _chown_tree(workspace, uid, uid)
            argv, setup, rlimits = self._argv(
                command, full_env, limits, uid, workspace, stage, cgroups, exposed, hidden
            )
            result = self._execute(argv, setup, limits, uid, cgroups)
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
        self, argv: list[str], setup: _ChildSetup, limits: Limits, uid: int, cgroups: _Cgroups
    ) -> RunResult:
        started = time.monotonic()
        deadline = started + limits.timeout_s
        join = cgroups.procs_files()
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
            proc = subprocess.Popen(
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
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
            if preexec is not None:
                os.close(preexec.error_fd)
        # Started now, the reader threads get going while bwrap builds the sandbox.
        out_reader, err_reader = start_capped_readers(proc, limits.output_bytes)
        init_fds: list[int] = []
        try:
            failure = "interrupted"
            try:
                failure = ""
                if in_child:
                    failure = _read_all(error_r, deadline).decode(errors="replace")
                if not failure:
                    failure = self._join_cgroups(proc, info_r, join, deadline, init_fds)
                if not failure and join:
                    with contextlib.suppress(OSError):
                        os.write(block_w, b"x")  # go
            except BaseException:
                failure = failure or "interrupted"
                raise
            finally:
                if failure:
                    # Still blocked (bwrap does setsid only later): the group is all of it, and
                    # the command never starts, least of all outside its cgroups.
                    kill_process_group(proc)
                    proc.wait()
                for fd in ours:
                    os.close(fd)
            if failure:
                detail = err_reader.result(READER_GRACE_S).text.strip()[-2000:]
                out_reader.result(READER_GRACE_S)
                raise RuntimeError(
                    f"bwrap sandbox setup failed: {failure}" + (f": {detail}" if detail else "")
                )
            try:
                timed_out = _wait_until(proc, deadline)
            except BaseException:
                self._kill_all(proc, uid, cgroups, init_fds)
                raise
            if timed_out:
                self._kill_all(proc, uid, cgroups, init_fds)
            duration = time.monotonic() - started
            # After a normal end nothing should remain (pid 1 of the namespace is gone); make
            # sure, so a reader is never held open by a straggler.
            self._kill_all(proc, uid, cgroups, init_fds)
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
                "setup": "forked child" if in_child else "helper programs",
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
        finally:
            for fd in init_fds:
                os.close(fd)

    @staticmethod
    def _join_cgroups(
        proc: subprocess.Popen[bytes],
        info_r: int,
        procs_files: Sequence[str],
        deadline: float,
        init_fds: list[int],
    ) -> str:
        """Wait until bwrap has made the sandbox, then put bwrap and the sandbox's first
        process (blocked until we let it go) into the run's cgroups; "" on success, else
        why not. Done here rather than before the exec: moving a task between cgroups
        waits for an RCU grace period (often 10 ms and more), which this way passes while
        bwrap builds the sandbox."""
        info = _read_all(info_r, deadline)
        if not info:
            if time.monotonic() >= deadline:
                return "bwrap did not make the sandbox within the time limit"
            return "bwrap (or a setup step before it) ended before making the sandbox"
        try:
            pids = [proc.pid, int(json.loads(info)["child-pid"])]
            if procs_files:
                # Still blocked, so surely the sandbox's pid 1: when it is killed it leaves
                # the cgroup early in its exit but lingers, uid U and not yet a zombie,
                # until every other process of its pid namespace is gone. The sweep waits
                # for it by this pidfd.
                init_fds.append(os.pidfd_open(pids[1]))
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
    def _kill_all(
        cls,
        proc: subprocess.Popen[bytes],
        uid: int,
        cgroups: _Cgroups,
        init_fds: Sequence[int] = (),
    ) -> None:
        kill_process_group(proc)
        cls._sweep(uid, cgroups)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=SWEEP_TIMEOUT_S)
        # The sandbox's pid 1, once out of the cgroup, is gone when its pidfd turns readable.
        if init_fds:
            select.select(list(init_fds), [], [], SWEEP_TIMEOUT_S)


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
    """``setup`` done by helper programs (for a parent too big to fork cheaply)."""
    args = [_tool("unshare"), "--mount", "--propagation", "private", "--"]
    args += [_tool("sh"), "-c", _STAGE_SCRIPT, "kaizen-stage"]
    for source, target in setup.binds:
        args += ["--bind", os.fsdecode(source), os.fsdecode(target)]
    for which, value in setup.rlimits:
        flag, unit = _ULIMIT_FLAGS[which]
        args += ["--ulimit", flag, str(value // unit)]
    # unshare without namespaces: setgroups([]), setgid, setuid, exec. bwrap itself sets
    # PR_SET_NO_NEW_PRIVS (checked by the tests).
    args += ["--", _tool("unshare"), f"--setgid={setup.uid}", f"--setuid={setup.uid}", "--"]
    return args


def _wait_until(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    """Wait for ``proc``; at ``deadline`` (monotonic) SIGKILL its process group. True if it
    timed out. A pidfd wakes us the moment it ends, with no timer thread to start."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # kernel before 5.3
        return wait_with_deadline(proc, max(0.0, deadline - time.monotonic()))
    try:
        while proc.returncode is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                kill_process_group(proc)
                proc.wait()
                return True
            if select.select([pidfd], [], [], remaining)[0]:
                proc.wait()
        return False
    finally:
        os.close(pidfd)


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
    for tool in ("bwrap", "unshare", "mount", "sh"):
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
