"""How much a sandboxed run may add to its workspace on the host's disk.

The workspace copy is the one writable host path a backend binds into the sandbox, and
``RLIMIT_FSIZE`` bounds each file, not their number: thousands of files just under it
fill the worker's disk (where Redis, Qdrant and other runs live) well within the time
limit. A :class:`DiskWatch` is checked while the run is waited for and says when it has
added more than ``limits.workspace_mb``; the backend then kills it as at the time limit.

The common case costs O(1): a check is one ``statvfs`` of the workspace's filesystem
(microseconds). The workspace itself is walked (:func:`tree_usage`, O(files)) only when
the filesystem has lost more space than the run's remaining allowance, or is about to run
out, since the last measurement. The kill depends on the *workspace's* growth, so other
runs filling the same filesystem can make a run measure itself, never get it killed.

Why the trigger is sound: every block the run adds to its workspace comes off the
filesystem's free space, so its growth now is at most its growth at the last measurement
plus the space the filesystem lost since. (Space freed elsewhere meanwhile can hide the
run's writes for as long as it lasts; the disk is then no fuller than it was, and the
reserve check measures again once it nearly is.)

Checks come sooner as the allowance left shrinks, assuming the run writes at
``ASSUMED_WRITE_BPS`` (page-cache speed), so what a run writes past its limit before the
kill stays around ``MIN_CHECK_S`` worth of writing.

Files, not only bytes: empty files take no blocks, but each takes an inode, and an ext4
filesystem has a fixed number (one per 16 KB: about 6.5 million on 100 GB). A run making
files as fast as it can runs the worker's filesystem out of inodes long before it writes
its byte allowance, and then nothing on it can create a file. So the watch also bounds
the entries a run adds (``limits.workspace_files``), by the same argument over the
filesystem's free inodes. A filesystem that reports no inode count (btrfs, which
allocates inodes from its free space) is watched by bytes only, and its entries are
counted whenever the byte trigger makes the watch walk.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

MB = 1024 * 1024
# Longest pause between two checks (a statvfs each) while the allowance is far away.
CHECK_INTERVAL_S = 0.25
# Shortest pause: what bounds the overshoot of a run writing as fast as it can.
MIN_CHECK_S = 0.02
# How fast a run is assumed to fill its workspace (page cache, measured ~1.5 GB/s here);
# the pause between checks is the allowance left at this speed, within the bounds above.
ASSUMED_WRITE_BPS = 2 * 1024 * MB
# Below this much free space on the workspace's filesystem, any further loss since the
# last measurement makes the run measure itself (whatever its allowance says).
FREE_RESERVE_BYTES = 256 * MB
# How fast a run is assumed to make files (empty ones, from C; Python manages ~150,000/s).
ASSUMED_CREATE_PS = 500_000
# Below this many free inodes, any further loss since the last measurement makes the run
# measure itself.
FREE_RESERVE_INODES = 50_000
# After a walk that took t seconds, none for another WALK_PAUSE_FACTOR * t: a walk of a
# huge workspace, triggered again and again by other runs' writes, may not eat the CPU.
WALK_PAUSE_FACTOR = 2.0


class TreeUsage(NamedTuple):
    """What a workspace occupies: ``bytes`` (allocated blocks), how many directories could
    not be read (their contents are not counted), and ``entries``: the inodes below the
    root (files, directories, links; several hard links to one inode count once)."""

    bytes: int
    unreadable_dirs: int
    entries: int = 0


def free_bytes(path: Path) -> int:
    """Space an unprivileged writer (the sandbox's uid) can still use on ``path``'s
    filesystem. On ext4 this drops as soon as data is written to the page cache
    (delayed allocation reserves the blocks), not only once it is flushed."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def free_inodes(path: Path) -> int | None:
    """Inodes an unprivileged writer can still take on ``path``'s filesystem; None where
    the filesystem keeps no count (it reports a total of 0, as btrfs does)."""
    st = os.statvfs(path)
    return st.f_favail if st.f_files > 0 else None


def tree_usage(root: Path) -> TreeUsage:
    """The disk space used by ``root`` and everything below it, from ``lstat``
    (``st_blocks``, so a sparse file counts what it occupies, not its size).

    The tree is the sandbox's, so nothing in it is trusted: symlinks are never followed
    (a link to / counts as the link), nothing on another filesystem is counted, an inode
    with several hard links counts once, and entries that vanish during the walk (the run
    is still going) are skipped."""
    try:
        top = os.lstat(root)
    except OSError:
        return TreeUsage(0, 0)
    total = top.st_blocks * 512
    if not stat.S_ISDIR(top.st_mode):
        return TreeUsage(total, 0)
    linked: set[int] = set()
    unreadable = inodes = 0
    pending = [os.fspath(root)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if st.st_dev != top.st_dev:
                        continue
                    if stat.S_ISDIR(st.st_mode):
                        pending.append(entry.path)
                    elif st.st_nlink > 1:
                        if st.st_ino in linked:
                            continue
                        linked.add(st.st_ino)
                    total += st.st_blocks * 512
                    inodes += 1
        except FileNotFoundError:
            continue
        except OSError:
            unreadable += 1
    return TreeUsage(total, unreadable, inodes)


def disk_limit_text(limit_mb: int) -> str:
    """How a disk-limit kill reads wherever a run's failure is shown."""
    return f"the run wrote more than {limit_mb} MB into its workspace"


def files_limit_text(limit_files: int) -> str:
    """How a kill for making too many files reads."""
    return f"the run made more than {limit_files:,} files in its workspace"


def workspace_kill_text(details: dict[str, Any], limit_mb: int) -> str:
    """What a run killed by its workspace limit did, from its result's details (which
    name the limit it crossed), else the byte limit's text."""
    said = details.get("disk_limit")
    return str(said) if said else disk_limit_text(limit_mb)


class DiskWatch:
    """The workspace limits of one run: made just before the run starts (it records the
    filesystem's free space and inodes and the workspace's size then), :meth:`check`
    called when :meth:`due_in` says so until the run ends; once it returns True the run
    must be killed and :attr:`exceeded` stays set.

    ``limit_files`` bounds the entries the run adds (None: bytes only). ``clock``,
    ``free`` and ``inodes`` (the filesystem's free bytes and inodes for a path) are the
    real ones unless a test needs to play other runs filling the filesystem."""

    def __init__(
        self,
        workspace: Path,
        limit_mb: int,
        *,
        limit_files: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        free: Callable[[Path], int] = free_bytes,
        inodes: Callable[[Path], int | None] = free_inodes,
    ) -> None:
        self.workspace = workspace
        self.limit_mb = limit_mb
        self.limit_bytes = limit_mb * MB
        self.limit_files = limit_files
        self.exceeded = False
        self.growth_bytes = 0  # the workspace's growth at the last measurement
        self.growth_files = 0  # and the entries it gained
        self.walks = 0
        self._clock = clock
        self._free = free
        self._inodes = inodes if limit_files is not None else (lambda _: None)
        self._start_free = free(workspace)
        self._start_inodes = self._inodes(workspace)
        start = tree_usage(workspace)
        self._baseline = start.bytes
        self._baseline_entries = start.entries
        self._ref_free = self._start_free  # free space at the last measurement
        self._ref_inodes = self._start_inodes  # free inodes then
        self._no_walk_until = 0.0
        self._due = clock() + self._pause(self.limit_bytes, self._file_headroom(self._start_inodes))

    def due_in(self) -> float:
        """Seconds until the next :meth:`check` (0 if it is due)."""
        return max(0.0, self._due - self._clock())

    def check(self) -> bool:
        """True if the run has added more than the limit to its workspace: kill it now.
        A filesystem that cannot be asked (it should always answer) skips this check."""
        if self.exceeded:
            return True
        now = self._clock()
        try:
            free = self._free(self.workspace)
            inodes = self._inodes(self.workspace)
        except OSError:
            self._due = now + CHECK_INTERVAL_S
            return False
        headroom, file_room = self._headroom(free), self._file_headroom(inodes)
        running_out = (free < FREE_RESERVE_BYTES and free < self._ref_free) or (
            inodes is not None
            and self._ref_inodes is not None
            and inodes < FREE_RESERVE_INODES
            and inodes < self._ref_inodes
        )
        if (headroom < 0 or file_room < 0 or running_out) and now >= self._no_walk_until:
            self._measure(free, inodes)
            if self.growth_bytes > self.limit_bytes or (
                self.limit_files is not None and self.growth_files > self.limit_files
            ):
                self.exceeded = True
                return True
            headroom, file_room = self._headroom(free), self._file_headroom(inodes)
        self._due = max(
            now + self._pause(headroom, file_room), self._next_walk_due(min(headroom, file_room))
        )
        return False

    def details(self) -> dict[str, Any]:
        """For ``RunResult.details``: nothing unless the workspace was measured."""
        if not self.walks:
            return {}
        found: dict[str, Any] = {
            "workspace_limit_mb": self.limit_mb,
            "workspace_growth_mb": round(self.growth_bytes / MB, 1),
            "workspace_walks": self.walks,
        }
        if self.limit_files is not None:
            found["workspace_limit_files"] = self.limit_files
            found["workspace_growth_files"] = self.growth_files
        if self.exceeded and self.growth_bytes > self.limit_bytes:
            found["disk_limit"] = (
                f"{disk_limit_text(self.limit_mb)} "
                f"({found['workspace_growth_mb']} MB when it was killed)"
            )
        elif self.exceeded and self.limit_files is not None:
            found["disk_limit"] = (
                f"{files_limit_text(self.limit_files)} ({self.growth_files:,} when it was killed)"
            )
        return found

    def _headroom(self, free: int) -> int:
        """How much more the workspace may grow, by the bound (growth at the last
        measurement plus the space lost since), before it must be measured."""
        return self.limit_bytes - self.growth_bytes - (self._ref_free - free)

    def _file_headroom(self, inodes: int | None) -> int:
        """The same bound for entries, from the inodes the filesystem lost; unbounded
        (a large number) without a file limit or an inode count."""
        if self.limit_files is None or inodes is None or self._ref_inodes is None:
            return 1 << 62
        return self.limit_files - self.growth_files - (self._ref_inodes - inodes)

    def _measure(self, free: int, inodes: int | None) -> None:
        """Walk the workspace. Directories the walk cannot read (a run as our own uid
        may chmod 000 one) hide their contents: then the filesystem's loss since the
        start, an upper bound, stands in for the growth."""
        began = self._clock()
        usage = tree_usage(self.workspace)
        growth = usage.bytes - self._baseline
        files = usage.entries - self._baseline_entries
        if usage.unreadable_dirs:
            growth = max(growth, self._start_free - free)
            if inodes is not None and self._start_inodes is not None:
                files = max(files, self._start_inodes - inodes)
        self.growth_bytes = growth
        self.growth_files = files
        self._ref_free = free
        self._ref_inodes = inodes
        self.walks += 1
        took = self._clock() - began
        self._no_walk_until = began + took * (1 + WALK_PAUSE_FACTOR)

    def _next_walk_due(self, headroom: int) -> float:
        """With no allowance left, the next check is pointless before a walk may run."""
        return self._no_walk_until if headroom < 0 else 0.0

    @staticmethod
    def _pause(headroom: int, file_room: int) -> float:
        """The allowance left at ``ASSUMED_WRITE_BPS`` (and the files left at
        ``ASSUMED_CREATE_PS``), within the check bounds."""
        left = min(headroom / ASSUMED_WRITE_BPS, file_room / ASSUMED_CREATE_PS)
        return min(CHECK_INTERVAL_S, max(MIN_CHECK_S, left))
