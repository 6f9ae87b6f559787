"""The workspace disk limit's parts: the measurement of a tree the sandbox wrote, and when
the watch measures it (a statvfs most of the time, a walk only when the filesystem lost
more than the allowance), played with a fake clock and a fake filesystem."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workers.sandbox import disk
from workers.sandbox.disk import (
    CHECK_INTERVAL_S,
    MB,
    MIN_CHECK_S,
    DiskWatch,
    TreeUsage,
    disk_limit_text,
    files_limit_text,
    tree_usage,
    workspace_kill_text,
)


def write(path: Path, mb: int) -> None:
    path.write_bytes(b"k" * (mb * MB))


def test_tree_usage_counts_allocated_blocks_of_everything_below(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    write(tmp_path / "one.bin", 1)
    write(tmp_path / "a" / "b" / "two.bin", 2)
    usage = tree_usage(tmp_path)
    assert usage.unreadable_dirs == 0
    assert 3 * MB <= usage.bytes < 3 * MB + 256 * 1024  # plus the directories' blocks


def test_tree_usage_never_follows_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write(outside / "big.bin", 4)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "root").symlink_to("/")
    (ws / "dir").symlink_to(outside)
    (ws / "file").symlink_to(outside / "big.bin")
    assert tree_usage(ws).bytes < 64 * 1024  # the directory and three links, no more


def test_a_hard_linked_file_counts_once_and_a_sparse_one_by_its_blocks(tmp_path: Path) -> None:
    write(tmp_path / "data.bin", 2)
    for n in range(5):
        os.link(tmp_path / "data.bin", tmp_path / f"link{n}")
    with open(tmp_path / "sparse.bin", "wb") as f:
        f.truncate(1024 * MB)
    assert 2 * MB <= tree_usage(tmp_path).bytes < 2 * MB + 64 * 1024


def test_unreadable_directories_are_counted_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root every directory is readable; a run under our own uid can chmod 000 one.
    (tmp_path / "locked").mkdir()
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if path.endswith("locked"):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(disk.os, "scandir", scandir)
    assert tree_usage(tmp_path).unreadable_dirs == 1


def test_tree_usage_of_a_missing_path_is_zero(tmp_path: Path) -> None:
    assert tree_usage(tmp_path / "gone") == TreeUsage(0, 0)


class FakeDisk:
    """A filesystem with ``free`` bytes and ``inodes`` (None: it counts none) and a clock,
    all moved by the test."""

    def __init__(self, free: int, inodes: int | None = 1_000_000) -> None:
        self.free = free
        self.inodes = inodes
        self.now = 100.0

    def clock(self) -> float:
        return self.now

    def free_of(self, path: Path) -> int:
        return self.free

    def inodes_of(self, path: Path) -> int | None:
        return self.inodes


def file_watch(ws: Path, fake: FakeDisk, limit_files: int) -> DiskWatch:
    return DiskWatch(
        ws,
        2048,
        limit_files=limit_files,
        clock=fake.clock,
        free=fake.free_of,
        inodes=fake.inodes_of,
    )


def make_files(where: Path, n: int) -> None:
    where.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (where / f"f{i}").touch()


def watch_on(ws: Path, fake: FakeDisk, limit_mb: int) -> DiskWatch:
    return DiskWatch(ws, limit_mb, clock=fake.clock, free=fake.free_of)


def test_checks_are_rare_with_room_and_frequent_near_the_limit(tmp_path: Path) -> None:
    fake = FakeDisk(100_000 * MB)
    assert watch_on(tmp_path, fake, 2048).due_in() == pytest.approx(CHECK_INTERVAL_S)
    assert watch_on(tmp_path, fake, 8).due_in() == pytest.approx(MIN_CHECK_S)
    watch = watch_on(tmp_path, fake, 2048)
    fake.free -= 2000 * MB  # others (or the run) took most of the allowance
    fake.now += CHECK_INTERVAL_S
    assert watch.check() is False
    assert watch.walks == 0
    assert watch.due_in() < CHECK_INTERVAL_S


def test_the_workspace_is_walked_only_when_the_filesystem_lost_more_than_the_limit(
    tmp_path: Path,
) -> None:
    fake = FakeDisk(100_000 * MB)
    watch = watch_on(tmp_path, fake, 4)
    fake.free -= 3 * MB
    assert watch.check() is False and watch.walks == 0
    # Another run fills the filesystem: the watch measures, finds nothing of its own.
    fake.free -= 5000 * MB
    assert watch.check() is False and watch.walks == 1 and not watch.exceeded
    # The allowance starts again from that measurement: no walk on every later check.
    fake.free -= 1 * MB
    assert watch.check() is False and watch.walks == 1
    # Now the run itself writes past its limit.
    write(tmp_path / "fill.bin", 5)
    fake.free -= 5 * MB
    assert watch.check() is True
    assert watch.exceeded and watch.growth_bytes >= 5 * MB
    details = watch.details()
    assert details["workspace_limit_mb"] == 4 and details["workspace_growth_mb"] >= 5
    assert details["disk_limit"].startswith(disk_limit_text(4))
    assert "more than 4 MB into its workspace" in details["disk_limit"]


def test_growth_counts_from_what_the_workspace_held_at_the_start(tmp_path: Path) -> None:
    write(tmp_path / "repo.bin", 8)  # the repository's own files are not the run's
    fake = FakeDisk(100_000 * MB)
    watch = watch_on(tmp_path, fake, 4)
    write(tmp_path / "new.bin", 3)
    fake.free -= 10 * MB  # more than the limit: measured
    assert watch.check() is False
    assert watch.walks == 1 and 3 * MB <= watch.growth_bytes < 4 * MB


def test_a_nearly_full_filesystem_makes_the_run_measure_itself(tmp_path: Path) -> None:
    fake = FakeDisk(300 * MB)
    watch = watch_on(tmp_path, fake, 2048)
    fake.free -= 100 * MB  # far under the allowance, but under the reserve
    assert watch.check() is False and watch.walks == 1
    assert watch.check() is False and watch.walks == 1  # lost nothing more since
    write(tmp_path / "fill.bin", 1)
    fake.free -= 1 * MB
    assert watch.check() is False and watch.walks == 2  # not over its own limit


def test_no_details_without_a_measurement(tmp_path: Path) -> None:
    fake = FakeDisk(100_000 * MB)
    watch = watch_on(tmp_path, fake, 64)
    assert watch.check() is False
    assert watch.details() == {}


def test_a_disk_limit_kill_never_reads_as_a_pass() -> None:
    from workers.fix.evaluate import TestsOutcome, _exit_code_tests
    from workers.sandbox.base import Limits, RunResult

    killed = RunResult(
        exit_code=None, stdout="", stderr="", duration_s=1.0, disk_limit_exceeded=True
    )
    assert not TestsOutcome(killed).ok
    (test,) = _exit_code_tests(killed, Limits(workspace_mb=32))
    assert test.outcome == "failed"
    assert test.message.startswith("the run wrote more than 32 MB into its workspace")


def test_tree_usage_counts_every_inode_below_once(tmp_path: Path) -> None:
    make_files(tmp_path / "d", 5)  # a directory and five empty files: no blocks, six inodes
    os.link(tmp_path / "d" / "f0", tmp_path / "again")
    os.symlink("/", tmp_path / "root-link")
    assert tree_usage(tmp_path).entries == 6 + 1  # the hard link is f0 again; the symlink


def test_making_files_past_the_limit_is_caught_by_the_inodes_the_filesystem_lost(
    tmp_path: Path,
) -> None:
    fake = FakeDisk(100_000 * MB, inodes=1_000_000)
    watch = file_watch(tmp_path, fake, 100)
    make_files(tmp_path / "few", 50)
    fake.inodes -= 51
    assert watch.check() is False and watch.walks == 0  # within the allowance: no walk
    # Others take inodes too: the watch counts its own, finds 51 of 100, goes on.
    fake.inodes -= 500
    assert watch.check() is False and watch.walks == 1 and watch.growth_files == 51
    make_files(tmp_path / "many", 60)  # no bytes to speak of: only the count gives it away
    fake.inodes -= 61
    assert watch.check() is True and watch.exceeded
    assert watch.growth_files == 51 + 61
    details = watch.details()
    assert details["workspace_limit_files"] == 100
    assert details["workspace_growth_files"] == 112
    assert details["disk_limit"] == f"{files_limit_text(100)} (112 when it was killed)"
    assert workspace_kill_text(details, 2048) == details["disk_limit"]
    assert workspace_kill_text({}, 2048) == disk_limit_text(2048)


def test_files_the_workspace_held_at_the_start_are_not_the_runs(tmp_path: Path) -> None:
    make_files(tmp_path / "repo", 300)
    fake = FakeDisk(100_000 * MB)
    watch = file_watch(tmp_path, fake, 100)
    make_files(tmp_path / "new", 10)
    fake.inodes -= 1_000  # measured
    assert watch.check() is False and watch.walks == 1 and watch.growth_files == 11


def test_nearly_out_of_inodes_the_run_measures_itself(tmp_path: Path) -> None:
    fake = FakeDisk(100_000 * MB, inodes=disk.FREE_RESERVE_INODES + 10)
    watch = file_watch(tmp_path, fake, 100_000)
    fake.inodes -= 20  # far under the allowance, but under the reserve
    assert watch.check() is False and watch.walks == 1


def test_without_an_inode_count_files_are_still_counted_when_bytes_make_it_walk(
    tmp_path: Path,
) -> None:
    fake = FakeDisk(100_000 * MB, inodes=None)
    watch = DiskWatch(
        tmp_path, 4, limit_files=100, clock=fake.clock, free=fake.free_of, inodes=fake.inodes_of
    )
    make_files(tmp_path / "many", 200)
    assert watch.check() is False and watch.walks == 0  # nothing to trigger on
    fake.free -= 5 * MB  # e.g. the directory blocks of many more
    assert watch.check() is True and watch.growth_files == 201


def test_file_checks_come_sooner_as_the_file_allowance_runs_out(tmp_path: Path) -> None:
    fake = FakeDisk(100_000 * MB)
    assert file_watch(tmp_path, fake, 1_000_000).due_in() == pytest.approx(CHECK_INTERVAL_S)
    assert file_watch(tmp_path, fake, 1_000).due_in() == pytest.approx(MIN_CHECK_S)
