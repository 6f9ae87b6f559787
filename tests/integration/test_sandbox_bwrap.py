"""Containment of the bubblewrap backend, checked with real hostile commands.

Each test runs code in a fresh tmp workspace and asserts what it could not do: reach the
network, fork without bound, eat memory, outlive its time limit, write outside the
workspace, see the host's environment or secret files, flood the parent with output.
The interpreter used inside is the one running these tests (the host's, bound read-only).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.procs import kaizen_cmd, kaizen_env
from workers.sandbox import bwrap
from workers.sandbox.base import SAFE_ENV, Limits, RunResult, SandboxUnavailable
from workers.sandbox.bwrap import BwrapSandbox, bwrap_available
from workers.sandbox.disk import MB, tree_usage
from workers.sandbox.junit import load_junit, pytest_command
from workers.sandbox.output import pids_of_uid

UNAVAILABLE = bwrap_available()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(UNAVAILABLE is not None, reason=f"bwrap backend unusable: {UNAVAILABLE}"),
]

PY = sys.executable
REPO_ROOT = Path(__file__).resolve().parents[2]

# Asks for 2 GiB a megabyte at a time; a 256 MB limit must stop it before "survived".
MEMORY_HOG = """
chunks = []
for _ in range(2048):
    chunks.append(b"x" * (1024 * 1024))
print("survived")
"""

# Writes up to 512 files of 1 MB each (every one far under file_size_mb) into the
# workspace, as fast as it can, then "survived"; ``WORKSPACE_FILES`` may lower the count.
DISK_FILLER = """
import os
chunk = b"d" * (1024 * 1024)
for n in range(int(os.environ.get("WORKSPACE_FILES", "512"))):
    with open(f"fill-{n}.bin", "wb") as f:
        f.write(chunk)
print("survived")
"""


FILE_MAKER = """
import os
os.makedirs("many", exist_ok=True)
for n in range(int(os.environ.get("WORKSPACE_FILES", "1000000"))):
    open(f"many/{n}", "w").close()
print("survived")
"""


@pytest.fixture(autouse=True, params=["forked child", "helper programs"])
def setup_way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every check runs both ways the run's setup can be made (chosen by this process's
    size in production): in the forked child, and by helper programs."""
    small = request.param == "forked child"
    monkeypatch.setattr(bwrap, "FORK_SETUP_MAX_RSS", 1 << 62 if small else 0)
    return str(request.param)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def sandbox() -> BwrapSandbox:
    return BwrapSandbox()


def python(
    sandbox: BwrapSandbox, workspace: Path, code: str, limits: Limits | None = None
) -> RunResult:
    return sandbox.run(
        [PY, "-c", textwrap.dedent(code)],
        workspace=workspace,
        limits=limits or Limits(timeout_s=30, memory_mb=512, pids=64),
    )


def assert_nothing_left(result: RunResult) -> None:
    uid = result.details["uid"]
    assert uid >= 200000
    assert pids_of_uid(uid) == [], f"processes of sandbox uid {uid} survived"


def host_pids_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def test_normal_run_exit_code_output_and_duration(
    sandbox: BwrapSandbox, workspace: Path, setup_way: str
) -> None:
    (workspace / "input.txt").write_text("from the host")
    result = python(
        sandbox,
        workspace,
        """
        import os, sys
        print("cwd", os.getcwd(), "uid", os.getuid())
        print("read", open("input.txt").read())
        status = dict(l.split(":", 1) for l in open("/proc/self/status"))
        print("caps", [status["CapEff"].strip()])
        print("nnp", status["NoNewPrivs"].strip(), "groups", os.getgroups())
        print("ids", os.getresuid(), os.getresgid())
        open("output.txt", "w").write("written inside")
        print("to stderr", file=sys.stderr)
        sys.exit(3)
        """,
    )
    assert result.exit_code == 3
    assert result.backend == "bwrap"
    assert not result.timed_out and not result.oom_killed and not result.output_truncated
    assert "cwd /workspace" in result.stdout
    assert f"uid {result.details['uid']}" in result.stdout
    assert "read from the host" in result.stdout
    assert "caps ['0000000000000000']" in result.stdout
    uid = result.details["uid"]
    # The switch to the run's uid is complete: no root in any id, no groups, no new privs.
    assert "nnp 1 groups []" in result.stdout
    assert f"ids {(uid, uid, uid)} {(uid, uid, uid)}" in result.stdout
    assert result.stderr == "to stderr\n"
    assert 0 < result.duration_s < 10
    assert result.details["rlimits"]["nproc"] >= 64
    assert result.details["setup"] == setup_way
    # The workspace is the caller's again: its files belong to the workspace's owner.
    out = workspace / "output.txt"
    assert out.read_text() == "written inside"
    assert out.stat().st_uid == workspace.stat().st_uid == os.getuid()
    assert_nothing_left(result)


def test_network_is_unreachable(sandbox: BwrapSandbox, workspace: Path) -> None:
    # Redis listens on the host's loopback; the sandbox's loopback is its own.
    with socket.create_connection(("127.0.0.1", 6379), timeout=2):
        pass
    result = python(
        sandbox,
        workspace,
        """
        import errno, socket, time
        for addr in [("127.0.0.1", 6379), ("1.1.1.1", 53)]:
            started = time.monotonic()
            try:
                socket.create_connection(addr, timeout=5).close()
                print(addr, "CONNECTED")
            except OSError as exc:
                name = errno.errorcode.get(exc.errno or 0, str(exc))
                print(addr, name, round(time.monotonic() - started, 2))
        print("interfaces", sorted(l.split(":")[0].strip() for l in open("/proc/net/dev")
                                   if ":" in l))
        """,
    )
    assert result.exit_code == 0, result.stderr
    assert "CONNECTED" not in result.stdout
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["('127.0.0.1',"].split()[1] in ("ECONNREFUSED", "ENETUNREACH")
    # No route at all: fails at once instead of sending a SYN and waiting.
    name, seconds = lines["('1.1.1.1',"].split()[1:]
    assert name == "ENETUNREACH"
    assert float(seconds) < 1
    assert "interfaces ['lo']" in result.stdout
    assert_nothing_left(result)


def test_fork_bomb_is_stopped_by_the_pids_limit(sandbox: BwrapSandbox, workspace: Path) -> None:
    limits = Limits(timeout_s=20, memory_mb=512, pids=20)
    result = python(
        sandbox,
        workspace,
        """
        import os, subprocess, time
        subprocess.Popen(["/bin/sh", "-c", "bomb() { bomb | bomb & }; bomb"])
        time.sleep(3)
        # /proc is the sandbox's own: it lists only this pid namespace.
        print("processes", sum(1 for p in os.listdir("/proc") if p.isdigit()), flush=True)
        """,
        limits,
    )
    assert result.exit_code == 0, result.stderr
    assert not result.timed_out
    count = int(result.stdout.split("processes ")[1])
    assert count <= limits.pids + 2
    assert "fork" in result.stderr.lower()  # "Cannot fork" from sh
    assert result.duration_s < 15
    assert_nothing_left(result)


def test_memory_hog_is_killed_and_reported(sandbox: BwrapSandbox, workspace: Path) -> None:
    result = python(
        sandbox,
        workspace,
        """
        chunks = []
        for _ in range(2048):  # 2 GB, every page touched
            chunks.append(b"x" * (1024 * 1024))
        print("survived")
        """,
        Limits(timeout_s=30, memory_mb=256, pids=32),
    )
    assert result.oom_killed, result
    assert "survived" not in result.stdout
    assert result.exit_code != 0
    assert not result.timed_out
    if result.details["memory_limit"] == "cgroup":
        assert result.details["max_memory_bytes"] <= 256 * 1024 * 1024
        assert result.details["cgroups_joined"] == "at birth"
    assert_nothing_left(result)


def test_memory_limit_without_cgroups_falls_back_to_rlimit_as(
    sandbox: BwrapSandbox, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "CGROUP_ROOT", tmp_path / "no-cgroups")
    result = python(
        sandbox,
        workspace,
        MEMORY_HOG,
        Limits(timeout_s=30, memory_mb=256, pids=32),
    )
    assert result.details["memory_limit"] == "rlimit_as"
    assert result.details["rlimits"]["as"] == 256 * 1024 * 1024
    assert "MemoryError" in result.stderr
    assert result.oom_killed
    assert result.exit_code == 1
    assert_nothing_left(result)


def test_file_size_limit(sandbox: BwrapSandbox, workspace: Path) -> None:
    result = python(
        sandbox,
        workspace,
        """
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        with open("big.bin", "wb") as f:
            try:
                for _ in range(8):
                    f.write(b"z" * (1024 * 1024))
                    f.flush()
            except OSError as exc:
                print("refused", exc.strerror)
        """,
        Limits(timeout_s=30, memory_mb=256, pids=16, file_size_mb=2),
    )
    assert "refused File too large" in result.stdout
    assert (workspace / "big.bin").stat().st_size == 2 * 1024 * 1024
    assert_nothing_left(result)


def test_workspace_filler_is_killed_at_the_disk_limit(
    sandbox: BwrapSandbox, workspace: Path
) -> None:
    began = time.monotonic()
    result = python(
        sandbox,
        workspace,
        DISK_FILLER,
        Limits(timeout_s=30, memory_mb=256, pids=16, workspace_mb=32),
    )
    assert result.disk_limit_exceeded, result
    assert not result.timed_out and not result.oom_killed
    assert result.exit_code is None
    assert "survived" not in result.stdout
    assert time.monotonic() - began < 5
    assert result.details["workspace_growth_mb"] > 32
    assert "wrote more than 32 MB into its workspace" in result.details["disk_limit"]
    # Killed within a check or two of passing the limit, not after all 512 MB.
    assert tree_usage(workspace).bytes <= (32 + 200) * MB
    assert_nothing_left(result)
    # Handed back to its owner: the caller can remove it as after any run.
    assert {p.stat().st_uid for p in workspace.iterdir()} == {os.getuid()}
    shutil.rmtree(workspace)


def test_writing_under_the_disk_limit_is_untouched(sandbox: BwrapSandbox, workspace: Path) -> None:
    result = sandbox.run(
        [PY, "-c", DISK_FILLER],
        workspace=workspace,
        limits=Limits(timeout_s=30, memory_mb=256, pids=16, workspace_mb=32),
        env={"WORKSPACE_FILES": "24"},
    )
    assert result.exit_code == 0, result
    assert result.stdout == "survived\n"
    assert not result.disk_limit_exceeded
    assert len(list(workspace.glob("fill-*.bin"))) == 24
    assert_nothing_left(result)


def test_making_empty_files_without_end_is_killed_at_the_file_limit(
    sandbox: BwrapSandbox, workspace: Path
) -> None:
    """Empty files cost no bytes, only inodes, which run out long before the byte limit."""
    began = time.monotonic()
    result = python(
        sandbox,
        workspace,
        FILE_MAKER,
        Limits(timeout_s=60, memory_mb=256, pids=16, workspace_files=2_000),
    )
    assert result.disk_limit_exceeded, result
    assert result.exit_code is None and not result.timed_out
    assert "survived" not in result.stdout
    assert time.monotonic() - began < 15
    assert result.details["workspace_growth_files"] > 2_000
    assert "made more than 2,000 files in its workspace" in result.details["disk_limit"]
    assert tree_usage(workspace).entries < 200_000  # stopped, not left to make a million
    assert_nothing_left(result)
    shutil.rmtree(workspace)


def test_making_files_under_the_file_limit_is_untouched(
    sandbox: BwrapSandbox, workspace: Path
) -> None:
    result = sandbox.run(
        [PY, "-c", FILE_MAKER],
        workspace=workspace,
        limits=Limits(timeout_s=30, memory_mb=256, pids=16, workspace_files=2_000),
        env={"WORKSPACE_FILES": "1500"},
    )
    assert result.exit_code == 0, result
    assert result.stdout == "survived\n" and not result.disk_limit_exceeded
    assert len(list((workspace / "many").iterdir())) == 1500


def test_network_phase_is_refused(sandbox: BwrapSandbox, workspace: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="network"):
        sandbox.run(["true"], workspace=workspace, limits=Limits(network=True))


def test_endless_loop_is_killed_at_the_time_limit(sandbox: BwrapSandbox, workspace: Path) -> None:
    marker = f"kaizen-loop-{uuid.uuid4().hex}"
    script = (
        f"setsid sh -c 'while :; do sleep 1; done; echo {marker}' & "
        f"(trap '' TERM HUP; while :; do :; done; echo {marker}) & "
        f"while :; do :; done; echo {marker}"
    )
    result = sandbox.run(
        ["/bin/sh", "-c", script],
        workspace=workspace,
        limits=Limits(timeout_s=2, memory_mb=256, pids=32),
    )
    assert result.timed_out
    assert result.exit_code is None
    assert 2 <= result.duration_s < 6
    assert_nothing_left(result)
    assert host_pids_with(marker) == []


def test_writes_outside_the_workspace_fail(sandbox: BwrapSandbox, workspace: Path) -> None:
    host_tmp = Path(tempfile.mkdtemp(prefix="kaizen-bwrap-test-", dir="/tmp"))
    try:
        host_tmp.chmod(0o777)
        (host_tmp / "host.txt").write_text("host file")
        targets = [
            "/etc/kaizen-escape",
            "/usr/kaizen-escape",
            "/kaizen-escape",
            # A checkout under /tmp is not visible at all (the sandbox has its own /tmp):
            # there, writing "into the repo" lands in that private tmpfs, not on the host.
            *([] if REPO_ROOT.is_relative_to("/tmp") else [str(REPO_ROOT / "kaizen-escape")]),
            str(host_tmp / "host.txt"),
            str(host_tmp / "new.txt"),
        ]
        result = python(
            sandbox,
            workspace,
            f"""
            import os
            for path in {targets!r}:
                try:
                    with open(path, "a") as f:
                        f.write("escaped")
                    print(path, "WRITTEN")
                except OSError as exc:
                    print(path, "refused", exc.strerror)
            print("host tmp visible", os.path.exists({str(host_tmp)!r}))
            open("/tmp/private", "w").write("the sandbox's own /tmp is writable")
            print("own tmp", open("/tmp/private").read())
            """,
        )
        assert result.exit_code == 0, result.stderr
        assert "WRITTEN" not in result.stdout
        assert result.stdout.count("refused") == len(targets)
        assert "host tmp visible False" in result.stdout
        assert "own tmp the sandbox's own /tmp is writable" in result.stdout
        for path in [*targets[:-2], str(REPO_ROOT / "kaizen-escape")]:
            assert not os.path.exists(path)
        assert (host_tmp / "host.txt").read_text() == "host file"
        assert not (host_tmp / "new.txt").exists()
        assert not Path("/tmp/private").exists() or "sandbox" not in Path("/tmp/private").read_text(
            errors="replace"
        )
        assert_nothing_left(result)
    finally:
        shutil.rmtree(host_tmp, ignore_errors=True)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A world-readable fake Kaizen data dir somewhere the sandbox could otherwise read."""
    # Somewhere the sandbox shows read-only: the checkout, unless it lives under /tmp
    # (which the sandbox replaces with its own), then /opt.
    parent = REPO_ROOT if not REPO_ROOT.is_relative_to("/tmp") else Path("/opt")
    path = Path(tempfile.mkdtemp(prefix=".kaizen-test-data-", dir=parent))
    try:
        path.chmod(0o755)
        secret = path / "github-app.pem"
        secret.write_text("-----BEGIN FAKE KEY-----")
        secret.chmod(0o644)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


READ_SECRETS = """
import os
import random
print("env", sorted(os.environ))
print("tokens", [k for k in os.environ if "TOKEN" in k])
print("pid1 env", open("/proc/1/environ", "rb").read().count(b"TOKEN"))
for path in {paths!r}:
    try:
        print(path, "READ", open(path).read()[:40])
    except OSError as exc:
        print(path, "denied", exc.strerror)
print("root", os.listdir("/root"), "run", os.listdir("/run"))
"""


def test_host_environment_and_secret_files_are_hidden(
    workspace: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAIZEN_GITHUB_TOKEN", "ghs_fake_kaizen_token")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_fake_github_token")
    secret = data_dir / "github-app.pem"
    paths = [str(secret), "/root/.bashrc", "/etc/shadow"]
    code = READ_SECRETS.format(paths=paths)

    # Without the hide path the fake data dir is readable: the check below means something.
    exposed = python(BwrapSandbox(), workspace, code)
    assert f"{secret} READ -----BEGIN FAKE KEY" in exposed.stdout

    result = python(BwrapSandbox(hide_paths=[data_dir]), workspace, code)
    assert result.exit_code == 0, result.stderr
    # Only the safe set (bwrap adds PWD for the --chdir).
    assert f"env {sorted({*SAFE_ENV, 'PWD'})}" in result.stdout
    assert "tokens []" in result.stdout
    assert "pid1 env 0" in result.stdout
    assert "fake" not in result.stdout.lower()
    assert "READ" not in result.stdout
    for path in paths:
        assert f"{path} denied" in result.stdout
    assert "root ['.pyenv'] run []" in result.stdout or "root [] run []" in result.stdout
    assert_nothing_left(result)

    # A single hidden file (like a repo's .env) is covered by a nodev /dev/null: unreadable.
    one_file = python(BwrapSandbox(hide_paths=[secret]), workspace, code)
    assert f"{secret} denied" in one_file.stdout
    assert "BEGIN FAKE KEY" not in one_file.stdout

    with pytest.raises(ValueError, match="may not be passed"):
        BwrapSandbox().run(
            ["true"],
            workspace=workspace,
            limits=Limits(),
            env={"GITHUB_TOKEN": "x"},
        )


def test_the_configured_data_dir_is_hidden_from_what_kaizen_runs(
    workspace: Path, data_dir: Path
) -> None:
    """The sandbox Kaizen picks for itself covers ``KAIZEN_DATA_DIR`` wherever it is: other
    repositories' fix clones and memory's stores live there, world-readable as git and
    SQLite leave them."""
    clone = data_dir / "work" / "kaizen-fix-other-repo"
    clone.mkdir(parents=True)
    (clone / "app.py").write_text("OTHER_TENANTS_CODE = 1\n")
    for path in (data_dir / "work", clone, clone / "app.py"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (workspace / "peek.py").write_text(
        "import pathlib\n"
        f"for p in ({str(data_dir / 'github-app.pem')!r}, {str(clone / 'app.py')!r}):\n"
        "    try:\n"
        "        print(p, pathlib.Path(p).read_text())\n"
        "    except OSError as exc:\n"
        "        print(p, 'hidden', type(exc).__name__)\n"
    )

    def peek(**settings: str) -> str:
        done = subprocess.run(
            [
                *kaizen_cmd("sandbox", "run", "--backend", "bwrap", "--workspace", str(workspace)),
                *("--", PY, "peek.py"),
            ],
            env=kaizen_env(**settings),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["stdout"])

    # With the data dir elsewhere, its files are in reach: the check below means something.
    assert "OTHER_TENANTS_CODE" in peek(data_dir=str(workspace / ".kaizen-elsewhere"))
    seen = peek(data_dir=str(data_dir))
    assert "OTHER_TENANTS_CODE" not in seen and "FAKE KEY" not in seen
    assert seen.count(" hidden ") == 2


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def test_gigabytes_of_output_are_cut_not_buffered(sandbox: BwrapSandbox, workspace: Path) -> None:
    limit = 64 * 1024
    total = 2 * 1024 * 1024 * 1024
    baseline = _rss_bytes()
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_bytes())
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = python(
            sandbox,
            workspace,
            f"""
            import sys
            chunk = b"y" * (1024 * 1024)
            for _ in range({total} // len(chunk)):
                sys.stdout.buffer.write(chunk)
            sys.stderr.write("e" * {limit * 2})
            """,
            Limits(timeout_s=45, memory_mb=256, pids=16, output_bytes=limit),
        )
    finally:
        done.set()
        sampler.join()
    assert result.exit_code == 0, result.stderr[:500]
    assert result.output_truncated
    assert result.details["stdout_bytes"] == total
    assert result.details["stderr_bytes"] == limit * 2
    assert result.stdout == "y" * limit
    assert result.stderr == "e" * limit
    assert peak[0] - baseline < 64 * 1024 * 1024, "the parent buffered the output"
    assert_nothing_left(result)


def write_suite(workspace: Path) -> None:
    tests = workspace / "tests"
    tests.mkdir()
    (tests / "test_math.py").write_text(
        textwrap.dedent(
            """
            import pytest

            def test_adds():
                assert 1 + 1 == 2

            def test_wrong():
                assert 1 + 1 == 3

            class TestMore:
                def test_skipped(self):
                    pytest.skip("not today")

                def test_error(self):
                    raise KeyError("boom")
            """
        )
    )


def test_pytest_suite_results_per_test(sandbox: BwrapSandbox, workspace: Path) -> None:
    write_suite(workspace)
    result = sandbox.run(
        pytest_command("/workspace/report.xml", ["tests"], python=PY),
        workspace=workspace,
        limits=Limits(timeout_s=40, memory_mb=1024, pids=64),
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    outcomes = {r.nodeid: r for r in load_junit(workspace / "report.xml")}
    assert {k: r.outcome for k, r in outcomes.items()} == {
        "tests/test_math.py::test_adds": "passed",
        "tests/test_math.py::test_wrong": "failed",
        "tests/test_math.py::TestMore::test_skipped": "skipped",
        "tests/test_math.py::TestMore::test_error": "failed",
    }
    assert outcomes["tests/test_math.py::TestMore::test_error"].exception_type == "KeyError"
    assert outcomes["tests/test_math.py::test_wrong"].exception_type == "AssertionError"
    assert not (workspace / ".pytest_cache").exists()
    assert_nothing_left(result)


def test_hanging_suite_is_reported_per_test_and_as_a_whole(
    sandbox: BwrapSandbox, workspace: Path
) -> None:
    tests = workspace / "tests"
    tests.mkdir()
    (tests / "test_hang.py").write_text(
        "import time\n\n"
        "def test_before():\n    pass\n\n"
        "def test_hangs():\n    time.sleep(600)\n\n"
        "def test_after():\n    pass\n"
    )
    # With pytest-timeout the hanging test fails on its own and the others still run.
    result = sandbox.run(
        pytest_command("/workspace/report.xml", ["tests"], per_test_timeout_s=2, python=PY),
        workspace=workspace,
        limits=Limits(timeout_s=40, memory_mb=1024, pids=64),
    )
    assert not result.timed_out
    assert result.exit_code == 1
    outcomes = {r.name: r for r in load_junit(workspace / "report.xml")}
    assert outcomes["test_before"].outcome == "passed"
    assert outcomes["test_after"].outcome == "passed"
    assert outcomes["test_hangs"].outcome == "failed"
    assert outcomes["test_hangs"].timed_out
    assert_nothing_left(result)

    # Without it the whole run hits the sandbox's limit and is killed.
    (workspace / "report.xml").unlink()
    result = sandbox.run(
        pytest_command("/workspace/report.xml", ["tests"], python=PY),
        workspace=workspace,
        limits=Limits(timeout_s=3, memory_mb=1024, pids=64),
    )
    assert result.timed_out
    assert result.exit_code is None
    assert not (workspace / "report.xml").exists()
    assert_nothing_left(result)


def test_a_uid_whose_cgroup_exists_is_not_used(
    sandbox: BwrapSandbox, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = bwrap.CGROUP_ROOT / "memory"
    if not (memory / "memory.limit_in_bytes").exists():
        pytest.skip("no cgroup v1 memory controller")
    taken = 264000
    held = memory / bwrap.CGROUP_PARENT / f"u{taken}"
    held.mkdir(parents=True)  # another worker's run, between its mkdir and its first process
    # This run must pick its uid now, not take one made ahead by an earlier run.
    monkeypatch.setattr(bwrap, "SPARE_SLOTS", 0)
    bwrap._discard_spares()
    try:
        picks = iter([taken, taken + 1])
        monkeypatch.setattr(random, "randint", lambda low, high: next(picks))
        result = sandbox.run(["true"], workspace=workspace, limits=Limits(timeout_s=30))
        assert result.exit_code == 0, result.stderr
        assert result.details["uid"] == taken + 1
        assert held.is_dir()  # left alone
        assert not (memory / bwrap.CGROUP_PARENT / f"u{taken + 1}").exists()  # removed
    finally:
        held.rmdir()


def test_failed_setup_raises_and_runs_nothing(
    sandbox: BwrapSandbox, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A staging dir without its mount points: the child's bind fails before any exec.
    empty = tmp_path / "stage"
    empty.mkdir(mode=0o711)
    monkeypatch.setattr(bwrap, "_staging_dir", lambda parent, exposed: empty)
    with pytest.raises(RuntimeError, match=r"setup failed: (bind|.*mount)"):
        sandbox.run(["/bin/sh", "-c", "touch /workspace/ran"], workspace=workspace, limits=Limits())
    assert not (workspace / "ran").exists()
    assert workspace.stat().st_uid == os.getuid()  # given back


def test_the_next_runs_slot_waits_in_its_cgroups_and_is_given_up_at_exit(
    sandbox: BwrapSandbox, workspace: Path
) -> None:
    memory = bwrap.CGROUP_ROOT / "memory"
    if not (memory / "memory.limit_in_bytes").exists():
        pytest.skip("no cgroup v1 memory controller")
    result = sandbox.run(["true"], workspace=workspace, limits=Limits(timeout_s=30))
    assert result.exit_code == 0, result.stderr
    assert result.details["cgroups_joined"] == "at birth"
    # The run made the next one's slot: a thread of this process waits in its cgroups
    # (not counted as one of the run's processes), its uid is not the finished run's.
    spares = bwrap._spares[bwrap._slot_key(sandbox.uid_range)]
    assert len(spares) == bwrap.SPARE_SLOTS == 1
    spare = spares[0]
    spare.wait_ready()
    assert spare.joined and spare.uid != result.details["uid"]
    dirs = list(spare.cgroups.dirs.values())
    for path in dirs:
        assert (path / "cgroup.procs").read_text().split() == [str(os.getpid())]
        assert len((path / "tasks").read_text().split()) == 1  # the slot's thread only
    assert spare.cgroups.pids() == []
    bwrap._discard_spares()  # what atexit does
    assert not any(path.exists() for path in dirs)


def test_a_slot_thread_that_cannot_join_falls_back_to_moving_the_run(
    sandbox: BwrapSandbox, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (bwrap.CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists():
        pytest.skip("no cgroup v1 memory controller")
    real_write = bwrap._write

    def write(path: Path, value: str) -> None:
        if path.name == "tasks":
            raise PermissionError(13, "Permission denied", str(path))
        real_write(path, value)

    monkeypatch.setattr(bwrap, "_write", write)
    monkeypatch.setattr(bwrap, "SPARE_SLOTS", 0)
    bwrap._discard_spares()
    result = python(
        sandbox,
        workspace,
        MEMORY_HOG,
        Limits(timeout_s=30, memory_mb=256, pids=32),
    )
    assert result.details["cgroups_joined"] == "moved"
    assert result.details["memory_limit"] == "cgroup"
    assert result.oom_killed and "survived" not in result.stdout
    assert_nothing_left(result)


def test_the_runs_binds_are_never_seen_by_the_host(sandbox: BwrapSandbox, workspace: Path) -> None:
    # The slot's thread makes them in a private mount namespace of its own.
    host_ns = os.readlink("/proc/self/ns/mnt")
    seen: list[str] = []

    def run() -> None:
        result = sandbox.run(["sleep", "2"], workspace=workspace, limits=Limits(timeout_s=30))
        seen.append(f"exit {result.exit_code}")

    runner = threading.Thread(target=run)
    runner.start()
    try:
        time.sleep(1)  # the sandbox is up, its binds made
        for mountinfo in ("/proc/self/mountinfo", "/proc/1/mountinfo"):
            text = Path(mountinfo).read_text()
            assert str(workspace) not in text and "/kaizen-bwrap-" not in text, mountinfo
    finally:
        runner.join()
    assert seen == ["exit 0"]
    assert os.readlink("/proc/self/ns/mnt") == host_ns
