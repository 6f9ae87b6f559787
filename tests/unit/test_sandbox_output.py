"""PolledOutput: both pipes drained by the waiting thread, capped, with the deadline kill."""

from __future__ import annotations

import subprocess
import sys
import time

from workers.sandbox.output import PolledOutput


def start(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def test_both_streams_are_drained_at_once_and_capped() -> None:
    # Each stream carries far more than a pipe holds: reading only one would deadlock.
    proc = start(
        "import sys\n"
        "for _ in range(64):\n"
        "    sys.stdout.buffer.write(b'o' * 65536); sys.stderr.buffer.write(b'e' * 65536)\n"
    )
    output = PolledOutput(proc, 1000)
    assert output.wait(time.monotonic() + 30) is False
    output.drain(5)
    out, err = output.results()
    assert proc.returncode == 0
    assert out.text == "o" * 1000 and out.truncated and out.total_bytes == 64 * 65536
    assert err.text == "e" * 1000 and err.truncated and err.total_bytes == 64 * 65536


def test_short_output_is_kept_whole() -> None:
    proc = start("import sys; print('hi'); print('there', file=sys.stderr); sys.exit(3)")
    output = PolledOutput(proc, 1000)
    assert output.wait(time.monotonic() + 30) is False
    output.drain(5)
    out, err = output.results()
    assert proc.returncode == 3
    assert (out.text, out.truncated, out.total_bytes) == ("hi\n", False, 3)
    assert (err.text, err.truncated) == ("there\n", False)


def test_at_the_deadline_the_group_is_killed() -> None:
    proc = start("import time; print('started', flush=True); time.sleep(60)")
    output = PolledOutput(proc, 1000)
    began = time.monotonic()
    assert output.wait(began + 1) is True
    assert time.monotonic() - began < 10
    assert proc.returncode is not None and proc.returncode < 0
    output.drain(5)
    assert output.results()[0].text == "started\n"


class CountingWatch:
    """A limit that is due every ``every_s`` and says "exceeded" at its ``fire_at``-th
    check (never, with 0)."""

    def __init__(self, every_s: float, fire_at: int = 0) -> None:
        self.every_s = every_s
        self.fire_at = fire_at
        self.checks = 0
        self._due = time.monotonic() + every_s

    def due_in(self) -> float:
        return max(0.0, self._due - time.monotonic())

    def check(self) -> bool:
        self.checks += 1
        self._due = time.monotonic() + self.every_s
        return self.checks == self.fire_at


def wait_watched(code: str, watch: CountingWatch) -> tuple[bool, float, int | None]:
    """Run ``code`` under ``watch`` with a 30 s deadline: (killed, seconds, returncode)."""
    proc = start(code)
    began = time.monotonic()
    killed = PolledOutput(proc, 1000).wait(began + 30, watch)
    return killed, time.monotonic() - began, proc.returncode


def test_a_watch_that_says_exceeded_gets_the_group_killed() -> None:
    watch = CountingWatch(0.05, fire_at=3)
    killed, seconds, code = wait_watched(
        "import time; print('started', flush=True); time.sleep(60)", watch
    )
    assert killed is True and watch.checks == 3 and seconds < 5
    assert code is not None and code < 0


def test_a_watch_does_not_delay_the_end_of_a_short_run() -> None:
    watch = CountingWatch(10.0)
    killed, seconds, code = wait_watched("import time; time.sleep(0.3)", watch)
    assert killed is False and seconds < 2
    assert watch.checks == 0 and code == 0


class SlowWatch(CountingWatch):
    """A limit whose checks pass but take longer than the pause they set (a workspace
    walk on a busy machine), so the next check is already due when it returns."""

    def check(self) -> bool:
        self.checks += 1
        self._due = time.monotonic() + self.every_s
        time.sleep(self.every_s * 2)
        return False


def test_a_check_that_passes_late_never_kills_the_run() -> None:
    watch = SlowWatch(0.01)
    killed, _, code = wait_watched("import time; time.sleep(0.5); print('done')", watch)
    assert killed is False and code == 0 and watch.checks > 3
