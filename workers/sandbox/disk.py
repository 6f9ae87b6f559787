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
# After a walk that took t seconds, none for another WALK_PAUSE_FACTOR * t: a walk of a
# huge workspace, triggered again and again by other runs' writes, may not eat the CPU.
WALK_PAUSE_FACTOR = 2.0


class TreeUsage(NamedTuple):
    """What a workspace occupies: ``bytes`` (allocated blocks) and how many directories
    could not be read (their contents are not in ``bytes``)."""

    bytes: int
    unreadable_dirs: int


def free_bytes(path: Path) -> int:
    """Space an unprivileged writer (the sandbox's uid) can still use on ``path``'s
    filesystem. On ext4 this drops as soon as data is written to the page cache
    (delayed allocation reserves the blocks), not only once it is flushed."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


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
    unreadable = 0
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
        except FileNotFoundError:
            continue
        except OSError:
            unreadable += 1
    return TreeUsage(total, unreadable)


def disk_limit_text(limit_mb: int) -> str:
    """How a disk-limit kill reads wherever a run's failure is shown."""
    return f"the run wrote more than {limit_mb} MB into its workspace"


class DiskWatch:
    """The workspace limit of one run: made just before the run starts (it records the
    filesystem's free space and the workspace's size then), :meth:`check` called when
    :meth:`due_in` says so until the run ends; once it returns True the run must be
    killed and :attr:`exceeded` stays set.

    ``clock`` and ``free`` (the filesystem's free bytes for a path) are the real ones
    unless a test needs to play other runs filling the filesystem."""

    def __init__(
        self,
        workspace: Path,
        limit_mb: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        free: Callable[[Path], int] = free_bytes,
    ) -> None:
        self.workspace = workspace
        self.limit_mb = limit_mb
        self.limit_bytes = limit_mb * MB
        self.exceeded = False
        self.growth_bytes = 0  # the workspace's growth at the last measurement
        self.walks = 0
        self._clock = clock
        self._free = free
        self._start_free = free(workspace)
        self._baseline = tree_usage(workspace).bytes
        self._ref_free = self._start_free  # free space at the last measurement
        self._no_walk_until = 0.0
        self._due = clock() + self._pause(self.limit_bytes)

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
        except OSError:
            self._due = now + CHECK_INTERVAL_S
            return False
        headroom = self._headroom(free)
        running_out = free < FREE_RESERVE_BYTES and free < self._ref_free
        if (headroom < 0 or running_out) and now >= self._no_walk_until:
            self._measure(free)
            if self.growth_bytes > self.limit_bytes:
                self.exceeded = True
                return True
            headroom = self._headroom(free)
        self._due = max(now + self._pause(headroom), self._next_walk_due(headroom))
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
        if self.exceeded:
            found["disk_limit"] = (
                f"{disk_limit_text(self.limit_mb)} "
                f"({found['workspace_growth_mb']} MB when it was killed)"
            )
        return found

    def _headroom(self, free: int) -> int:
        """How much more the workspace may grow, by the bound (growth at the last
        measurement plus the space lost since), before it must be measured."""
        return self.limit_bytes - self.growth_bytes - (self._ref_free - free)

    def _measure(self, free: int) -> None:
        """Walk the workspace. Directories the walk cannot read (a run as our own uid
        may chmod 000 one) hide their contents: then the filesystem's loss since the
        start, an upper bound, stands in for the growth."""
        began = self._clock()
        usage = tree_usage(self.workspace)
        growth = usage.bytes - self._baseline
        if usage.unreadable_dirs:
            growth = max(growth, self._start_free - free)
        self.growth_bytes = growth
        self._ref_free = free
        self.walks += 1
        took = self._clock() - began
        self._no_walk_until = began + took * (1 + WALK_PAUSE_FACTOR)

    def _next_walk_due(self, headroom: int) -> float:
        """With no allowance left, the next check is pointless before a walk may run."""
        return self._no_walk_until if headroom < 0 else 0.0

    @staticmethod
    def _pause(headroom: int) -> float:
        """The allowance left at ``ASSUMED_WRITE_BPS``, within the check bounds."""
        return min(CHECK_INTERVAL_S, max(MIN_CHECK_S, headroom / ASSUMED_WRITE_BPS))
