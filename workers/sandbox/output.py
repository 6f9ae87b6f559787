"""Shared by every sandbox backend: bounded output capture and whole-group kills.

A sandboxed command may print gigabytes; a backend keeps at most ``limit`` bytes per
stream, keeps *reading* (so the child never blocks on a full pipe) and only counts the
rest. Readers run in threads, one per stream, so stdout and stderr drain concurrently.

Kills go to the whole process group: backends start their child with
``start_new_session=True`` so the child's pid is also its process-group id.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, NamedTuple, Protocol

CHUNK_SIZE = 64 * 1024


class CappedOutput(NamedTuple):
    """What a capped read kept: ``text`` (decoded, at most ``limit`` bytes of input),
    whether anything was cut, and how many bytes the stream carried in total."""

    text: str
    truncated: bool
    total_bytes: int


def decode_output(data: bytes) -> str:
    """Bytes from an untrusted process as text; invalid UTF-8 (or a character cut at the
    limit) becomes U+FFFD instead of an error."""
    return data.decode("utf-8", errors="replace")


class CappedReader(threading.Thread):
    """Drains ``stream`` to EOF in a daemon thread, keeping the first ``limit`` bytes.

    ``result()`` may be called before EOF (e.g. when a process that escaped a kill still
    holds the pipe); it then returns what was read so far.
    """

    def __init__(self, stream: IO[bytes], limit: int, *, chunk_size: int = CHUNK_SIZE) -> None:
        super().__init__(name="capped-reader", daemon=True)
        self._stream = stream
        self._limit = max(0, int(limit))
        self._chunk_size = chunk_size
        self._lock = threading.Lock()
        self._kept = bytearray()
        self._total = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        read = getattr(self._stream, "read1", None) or self._stream.read
        try:
            while True:
                chunk = read(self._chunk_size)
                if not chunk:
                    break
                with self._lock:
                    room = self._limit - len(self._kept)
                    if room > 0:
                        self._kept += chunk[:room]
                    self._total += len(chunk)
        except (OSError, ValueError) as exc:  # stream closed under us
            self.error = exc
        finally:
            with contextlib.suppress(OSError):
                self._stream.close()

    def snapshot(self) -> CappedOutput:
        with self._lock:
            kept = bytes(self._kept)
            total = self._total
        return CappedOutput(decode_output(kept), total > len(kept), total)

    def result(self, timeout: float | None = None) -> CappedOutput:
        """Wait up to ``timeout`` seconds for EOF, then return what was captured."""
        self.join(timeout)
        return self.snapshot()


def read_capped(stream: IO[bytes], limit: int, *, chunk_size: int = CHUNK_SIZE) -> CappedOutput:
    """Read ``stream`` to EOF in the calling thread, keeping at most ``limit`` bytes.

    Returns ``(text, truncated, total_bytes)``; memory stays O(limit + chunk_size) however
    much the stream carries. Run one per stream in threads (or use :class:`CappedReader`).
    """
    reader = CappedReader(stream, limit, chunk_size=chunk_size)
    reader.run()
    return reader.snapshot()


def start_capped_readers(
    proc: subprocess.Popen[bytes], limit: int
) -> tuple[CappedReader, CappedReader]:
    """Start one reader thread each for ``proc.stdout`` and ``proc.stderr`` (both must be
    ``subprocess.PIPE``)."""
    if proc.stdout is None or proc.stderr is None:
        raise ValueError("the process needs stdout=PIPE and stderr=PIPE")
    out = CappedReader(proc.stdout, limit)
    err = CappedReader(proc.stderr, limit)
    out.start()
    err.start()
    return out, err


class RunWatch(Protocol):
    """A limit checked while a run is waited for (see :meth:`PolledOutput.wait`), e.g.
    :class:`workers.sandbox.disk.DiskWatch`."""

    def due_in(self) -> float:
        """Seconds until :meth:`check` should be called next (0: now)."""
        ...

    def check(self) -> bool:
        """True if the run exceeded the limit and must be killed."""
        ...


class PolledOutput:
    """stdout and stderr of ``proc`` drained by the thread that waits for it, in one poll
    loop with a pidfd, instead of by two :class:`CappedReader` threads.

    For a short command the threads cost more than the reading: two thread starts, two
    wake-ups at EOF, and at the end of the run they compete with the waiting thread for
    the GIL (a thread that holds it keeps it up to the 5 ms switch interval). The
    capping is the same: at most ``limit`` bytes kept per stream, the rest counted."""

    def __init__(self, proc: subprocess.Popen[bytes], limit: int) -> None:
        if proc.stdout is None or proc.stderr is None:
            raise ValueError("the process needs stdout=PIPE and stderr=PIPE")
        self._proc = proc
        self._limit = max(0, int(limit))
        self._streams = (proc.stdout, proc.stderr)
        self._fds = [stream.fileno() for stream in self._streams]
        self._kept = {fd: bytearray() for fd in self._fds}
        self._total = dict.fromkeys(self._fds, 0)
        self._open = set(self._fds)
        self._poll = select.poll()
        for fd in self._fds:
            os.set_blocking(fd, False)
            self._poll.register(fd, select.POLLIN)

    def _read(self, fd: int) -> None:
        try:
            chunk = os.read(fd, CHUNK_SIZE)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._open.discard(fd)
            self._poll.unregister(fd)
            return
        kept = self._kept[fd]
        room = self._limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        self._total[fd] += len(chunk)

    def _poll_once(self, timeout_s: float) -> list[int]:
        """Read what is ready within ``timeout_s``; the other ready fds are returned."""
        other = []
        for fd, _ in self._poll.poll(max(0, math.ceil(timeout_s * 1000))):
            if fd in self._open:
                self._read(fd)
            else:
                other.append(fd)
        return other

    def wait(self, deadline: float, watch: RunWatch | None = None) -> bool:
        """Drain while waiting for the process; at ``deadline`` (monotonic), or when
        ``watch.check()`` says a limit is exceeded, SIGKILL its process group. True if it
        was killed (``watch`` knows whether it was by it). A pidfd wakes us the moment
        the process ends, so a watch costs a short run nothing: it only shortens polls.
        Checks run in this thread, between reads: no thread is started for them."""
        proc = self._proc
        try:
            pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):  # kernel before 5.3: look every 10 ms
            pidfd = -1
        else:
            self._poll.register(pidfd, select.POLLIN)
        try:
            while proc.poll() is None:
                timeout = self._until_next(deadline, watch)
                if timeout is None:
                    kill_process_group(proc)
                    proc.wait()
                    return True
                self._poll_once(timeout if pidfd >= 0 else min(timeout, 0.01))
            return False
        finally:
            if pidfd >= 0:
                self._poll.unregister(pidfd)
                os.close(pidfd)

    @staticmethod
    def _until_next(deadline: float, watch: RunWatch | None) -> float | None:
        """How long the next poll may block: until the deadline or the watch's next
        check, whichever comes first; None: kill now (the deadline has passed, or the
        check that was due just said so).

        A check that passed may leave its next one due at once (it took longer than the
        pause it set, or this thread was descheduled): that is a poll of 0 seconds and a
        new check, never a kill. Reading "0" as "kill" once stopped a healthy run at
        1.8 s of its 45 and called it a timeout."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        if watch is None:
            return remaining
        if watch.due_in() <= 0 and watch.check():
            return None
        return max(0.0, min(remaining, watch.due_in()))

    def drain(self, timeout_s: float) -> None:
        """Read until both streams are at EOF (everything holding them is gone), for at
        most ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while self._open:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._poll_once(remaining)

    def close(self) -> None:
        """Close both pipes (again, if :meth:`results` already did)."""
        for stream in self._streams:
            with contextlib.suppress(OSError):
                stream.close()

    def results(self) -> tuple[CappedOutput, CappedOutput]:
        """What was kept of stdout and of stderr; closes both."""
        self.close()
        out = []
        for fd in self._fds:
            kept, total = bytes(self._kept[fd]), self._total[fd]
            out.append(CappedOutput(decode_output(kept), total > len(kept), total))
        return out[0], out[1]


def kill_process_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the process group led by ``proc`` (started with
    ``start_new_session=True``) and to ``proc`` itself; never raises for processes that
    are already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        proc.send_signal(sig)


def terminate_process_group(proc: subprocess.Popen[bytes], grace_s: float = 2.0) -> None:
    """SIGTERM the group, wait up to ``grace_s`` for ``proc`` to exit, then SIGKILL the
    group (always, so stragglers that ignored SIGTERM go too) and reap ``proc``."""
    if grace_s > 0 and proc.poll() is None:
        kill_process_group(proc, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    kill_process_group(proc, signal.SIGKILL)
    proc.wait()


def pids_in_group(pgid: int) -> list[int]:
    """Live processes (not zombies) whose process group is ``pgid``, from /proc."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _proc_stat(int(entry))
        if stat is not None and stat[1] != "Z" and stat[3] == pgid:
            found.append(int(entry))
    return found


def pids_of_uid(uid: int) -> list[int]:
    """Live processes (not zombies) whose real uid is ``uid``, from /proc."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="utf-8", errors="replace") as f:
                status = f.read()
        except OSError:
            continue
        state = uid_line = ""
        for line in status.splitlines():
            if line.startswith("State:"):
                state = line.split()[1] if len(line.split()) > 1 else ""
            elif line.startswith("Uid:"):
                uid_line = line
        parts = uid_line.split()
        if state != "Z" and len(parts) > 1 and parts[1] == str(uid):
            found.append(int(entry))
    return found


def wait_until_gone(pids_fn: Callable[[], Sequence[int]], timeout_s: float = 5.0) -> bool:
    """Poll ``pids_fn()`` (e.g. ``lambda: pids_of_uid(uid)``) until it returns nothing or
    ``timeout_s`` passes; True if nothing is left."""
    deadline = time.monotonic() + timeout_s
    pause = 0.001  # exiting processes usually vanish within a millisecond or two
    while True:
        if not pids_fn():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(0.05, pause * 2)


def _proc_stat(pid: int) -> tuple[int, str, int, int] | None:
    """(pid, state, ppid, pgid) from /proc/<pid>/stat, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            data = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain ") ".
    rest = data[data.rfind(")") + 2 :].split()
    if len(rest) < 3:
        return None
    return pid, rest[0], int(rest[1]), int(rest[2])


def wait_with_deadline(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Wait for ``proc``; at the deadline SIGKILL its process group. True if it timed out.

    ``Popen.wait(timeout=...)`` polls with sleeps of up to 50 ms, which costs a short run
    tens of milliseconds; a blocking wait plus a timer returns the moment the child ends.
    """
    fired = threading.Event()

    def expire() -> None:
        fired.set()
        kill_process_group(proc)

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    timer.start()
    try:
        proc.wait()
    finally:
        timer.cancel()
    return fired.is_set()
