"""The bubblewrap backend's pieces that need no sandbox: argument lists, uid claims by
cgroup directory, the staging directory, rlimits, and the forked child's error report."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import time
from pathlib import Path

import pytest

from workers.sandbox import bwrap
from workers.sandbox.base import Limits
from workers.sandbox.bwrap import BwrapSandbox


def args_for(
    sandbox: BwrapSandbox,
    hidden: list[tuple[Path, bool]],
    exposed: list[tuple[Path, Path]] | None = None,
    limits: Limits | None = None,
) -> list[str]:
    return sandbox._bwrap_args(
        ["cmd", "arg"], {"A": "1"}, limits or Limits(), Path("/stage"), exposed or [], hidden
    )


def pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_hidden_top_level_dirs_are_made_empty_not_bound() -> None:
    top = sorted(e.name for e in os.scandir("/") if e.is_dir(follow_symlinks=False))
    name = next(n for n in top if n not in bwrap._SKIPPED_TOP_LEVEL)
    hidden = [(Path(f"/{name}"), True), (Path("/etc/ssh"), True), (Path("/etc/shadow"), False)]
    args = args_for(BwrapSandbox(expose_paths=()), hidden)
    assert f"/{name}" not in pairs(args, "--ro-bind")  # nothing of the host underneath
    assert f"/{name}" in pairs(args, "--dir")
    assert "/etc/ssh" in pairs(args, "--tmpfs")
    i = args.index("/etc/shadow")
    assert args[i - 2 : i] == ["--ro-bind", "/dev/null"]
    # The rest of the layout is unchanged.
    assert args[:4] == ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
    assert "--share-net" not in args
    assert args[args.index("--bind") + 1 : args.index("--bind") + 3] == ["/stage/ws", "/workspace"]
    assert "--remount-ro" in args and "--clearenv" in args
    assert args[-3:] == ["--", "cmd", "arg"]


def test_exposed_dirs_are_bound_from_the_stage_after_their_hidden_parent() -> None:
    hidden = [(Path("/root"), True)]
    exposed = [(Path("/stage/x0"), Path("/root/.pyenv/versions/3.11.7"))]
    args = args_for(BwrapSandbox(expose_paths=()), hidden, exposed)
    i = args.index("/stage/x0")
    assert args[i - 1 : i + 2] == ["--ro-bind", "/stage/x0", "/root/.pyenv/versions/3.11.7"]
    assert args.index("/root") < i


def test_exposed_only_strictly_below_a_hidden_dir_or_the_private_tmp(tmp_path: Path) -> None:
    in_tmp = tmp_path / "venv"
    in_tmp.mkdir()
    sandbox = BwrapSandbox(expose_paths=[in_tmp, Path("/usr/lib"), Path("/usr")])
    # The sandbox has its own /tmp: what lives in the host's is bound back.
    assert sandbox._exposed([]) == [in_tmp.resolve()]
    assert sandbox._exposed([Path("/usr")]) == [in_tmp.resolve(), Path("/usr/lib")]
    assert sandbox._exposed([Path("/us")]) == [in_tmp.resolve()]  # a prefix is no parent


@pytest.fixture
def fake_cgroups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cgroup"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text("0")
    monkeypatch.setattr(bwrap, "CGROUP_ROOT", root)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(bwrap, "pids_of_uid", lambda uid: [])
    return root


def test_uid_is_claimed_by_its_cgroup_directory(fake_cgroups: Path) -> None:
    cgroups, reason = bwrap._make_cgroups(201234, Limits(cpus=0))
    assert reason is None
    assert cgroups.memory == fake_cgroups / "memory" / "kaizen-bwrap" / "u201234"
    assert (cgroups.memory / "memory.limit_in_bytes").read_text() == str(2048 * 1024 * 1024)
    # A second run (in this or another worker process) cannot get the same uid.
    with pytest.raises(bwrap._UidBusy):
        bwrap._make_cgroups(201234, Limits(cpus=0))


def stale_cgroup(root: Path, uid: int, procs: str = "") -> Path:
    path = root / "memory" / "kaizen-bwrap" / f"u{uid}"
    path.mkdir(parents=True)
    (path / "cgroup.procs").write_text(procs)
    old = time.time() - bwrap.STALE_CGROUP_S - 5
    os.utime(path, (old, old))
    return path


def test_stale_cgroup_of_a_dead_worker_is_reclaimed(
    fake_cgroups: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = stale_cgroup(fake_cgroups, 201235)
    real_rmdir = Path.rmdir

    def rmdir_like_cgroupfs(self: Path) -> None:  # a cgroup goes with its control files
        if self == stale:
            (stale / "cgroup.procs").unlink()
        real_rmdir(self)

    monkeypatch.setattr(Path, "rmdir", rmdir_like_cgroupfs)
    cgroups, _ = bwrap._make_cgroups(201235, Limits(cpus=0))
    assert cgroups.memory == stale and stale.is_dir()
    assert time.time() - stale.stat().st_mtime < 60  # made anew


def test_busy_or_live_cgroup_is_never_reclaimed(
    fake_cgroups: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale_cgroup(fake_cgroups, 201236, procs="4242\n")  # a process still in it
    with pytest.raises(bwrap._UidBusy):
        bwrap._make_cgroups(201236, Limits(cpus=0))
    fresh = fake_cgroups / "memory" / "kaizen-bwrap" / "u201237"
    fresh.mkdir(parents=True)
    (fresh / "cgroup.procs").write_text("")
    with pytest.raises(bwrap._UidBusy):  # just made by another worker, not joined yet
        bwrap._make_cgroups(201237, Limits(cpus=0))
    stale_cgroup(fake_cgroups, 201238)
    monkeypatch.setattr(bwrap, "pids_of_uid", lambda uid: [4242])  # its uid still runs
    with pytest.raises(bwrap._UidBusy):
        bwrap._make_cgroups(201238, Limits(cpus=0))


def test_reserve_skips_taken_and_foreign_uids(
    fake_cgroups: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fake_cgroups / "memory" / "kaizen-bwrap" / "u200001").mkdir(parents=True)
    (fake_cgroups / "memory" / "kaizen-bwrap" / "u200001" / "cgroup.procs").write_text("1\n")
    monkeypatch.setattr(bwrap, "_uids_seen_in_range", lambda low, high: frozenset({200002}))
    picks = iter([200001, 200002, 200003])
    monkeypatch.setattr(random, "randint", lambda low, high: next(picks))
    uid, cgroups, _ = bwrap._reserve_uid((200000, 200010), Limits(cpus=0))
    try:
        assert uid == 200003
        assert cgroups.memory is not None and cgroups.memory.name == "u200003"
    finally:
        bwrap._release_uid(uid)


def test_without_cgroups_each_uid_is_checked_in_proc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "CGROUP_ROOT", tmp_path / "none")
    monkeypatch.setattr(bwrap, "_uids_seen_in_range", lambda low, high: frozenset())
    monkeypatch.setattr(bwrap, "pids_of_uid", lambda uid: [1] if uid == 200001 else [])
    picks = iter([200001, 200002])
    monkeypatch.setattr(random, "randint", lambda low, high: next(picks))
    uid, cgroups, reason = bwrap._reserve_uid((200000, 200010), Limits())
    bwrap._release_uid(uid)
    assert uid == 200002
    assert not cgroups.dirs and reason


def test_rlimits_never_exceed_the_inherited_hard_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    real = resource.getrlimit

    def fake(which: int) -> tuple[int, int]:
        return (100, 100) if which == resource.RLIMIT_NPROC else real(which)

    monkeypatch.setattr(resource, "getrlimit", fake)
    sandbox = BwrapSandbox(expose_paths=())
    _, setup, rlimits = sandbox._argv(
        ["true"],
        {},
        Limits(pids=500),
        200100,
        Path("/"),
        Path("/stage"),
        bwrap._Cgroups(),
        [],
        [],
    )
    assert rlimits["nproc"] == 100
    assert (resource.RLIMIT_NPROC, 100) in setup.rlimits
    assert rlimits["as"] == 2048 * 1024 * 1024  # no memory cgroup: RLIMIT_AS instead
    assert setup.uid == 200100
    assert setup.binds[0] == (b"/", b"/stage/ws")


def test_staging_dir_is_reused_and_remade_when_tampered_with(tmp_path: Path) -> None:
    first = bwrap._staging_dir(tmp_path, 2)
    assert (first.stat().st_mode & 0o777) == 0o711
    assert sorted(p.name for p in first.iterdir()) == ["ws", "x0", "x1"]
    assert bwrap._staging_dir(tmp_path, 1) == first
    first.chmod(0o755)  # no longer ours as made: never trusted again
    second = bwrap._staging_dir(tmp_path, 1)
    assert second != first and (second / "ws").is_dir()
    bwrap._remove_staging_dir(second)
    assert not second.exists()
    third = bwrap._staging_dir(tmp_path, 0)
    assert third not in (first, second)


def test_failed_child_setup_is_reported_and_nothing_is_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    read_end, write_end = os.pipe()
    setup = bwrap._ChildSetup(
        uid=200999,
        binds=(),  # made by the slot's thread, not by the child
        # More open files than the kernel allows at all (fs.nr_open): refused even to root.
        rlimits=((resource.RLIMIT_NOFILE, 1 << 40),),
        error_fd=write_end,
        libc=bwrap._libc(),
    )
    proc = subprocess.Popen(["/bin/sh", "-c", f"touch {marker}"], preexec_fn=setup)
    os.close(write_end)
    message = bwrap._read_all(read_end, time.monotonic() + 10).decode()
    os.close(read_end)
    assert proc.wait() == 127
    assert "setrlimit" in message
    assert not marker.exists()


def test_this_process_is_never_one_of_a_runs_processes(tmp_path: Path) -> None:
    # A slot's thread puts this process into the run's cgroup.procs; the sweep kills what
    # pids() returns.
    memory = tmp_path / "u201240"
    memory.mkdir()
    (memory / "cgroup.procs").write_text(f"{os.getpid()}\n4242\n")
    assert bwrap._Cgroups(dirs={"memory": memory}).pids() == [4242]


def test_a_forked_child_forgets_the_parents_spare_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    key = bwrap._slot_key((200000, 200010))
    slot = bwrap._Slot(200005, bwrap._Cgroups(), None)  # no cgroups: nothing joined
    try:
        monkeypatch.setitem(bwrap._spares, key, [slot])
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os._exit(0 if bwrap._spares == {} and key not in bwrap._spares else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert bwrap._spares[key] == [slot]  # the parent's are left alone
    finally:
        slot.release()
    assert not slot._thread.is_alive()
