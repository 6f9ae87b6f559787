"""Containment of the Docker sandbox backend, against a real Docker engine.

Each test runs hostile or sloppy code in ``DockerSandbox`` and checks it stays inside:
no network (neither the internet nor the host's loopback), the pids limit stops a fork
bomb, the memory limit kills a hog (reported ``oom_killed``), the time limit kills an
endless loop and leaves no container behind, the root filesystem is read-only, the
host's environment and files are invisible, gigabytes of output are cut without the
parent's memory growing, and normal and pytest runs come back as they should.

Skipped when no engine/image is available, unless ``KAIZEN_REQUIRE_SANDBOXES=1`` (set by
CI), where that is a failure instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import textwrap
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from workers.sandbox import docker as docker_backend
from workers.sandbox.base import Limits, RunResult, sandbox_env
from workers.sandbox.disk import MB, tree_usage
from workers.sandbox.docker import (
    LABEL,
    DockerSandbox,
    docker_available,
    prune_leftovers,
    remove_container,
)

IMAGE = os.environ.get("KAIZEN_TEST_SANDBOX_IMAGE", "kaizen-sandbox:latest")
_REASON = docker_available(IMAGE)
if _REASON is not None:
    if os.environ.get("KAIZEN_REQUIRE_SANDBOXES") == "1":
        raise RuntimeError(
            f"KAIZEN_REQUIRE_SANDBOXES=1 but the Docker sandbox cannot run: {_REASON}"
        )
    pytest.skip(f"Docker sandbox unavailable: {_REASON}", allow_module_level=True)

pytestmark = pytest.mark.slow

FAKE_TOKEN = "ghs_FAKEtoken0123456789abcdefSECRET"


# This run's containers, told apart from any other Kaizen's on the same engine.
RUN_LABEL = ("kaizen.test-run", uuid.uuid4().hex)


@pytest.fixture(scope="module")
def sandbox() -> DockerSandbox:
    return DockerSandbox(image=IMAGE, labels=dict([RUN_LABEL]))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def run_py(
    sandbox: DockerSandbox,
    workspace: Path,
    code: str,
    env: dict[str, str] | None = None,
    **limits: Any,
) -> RunResult:
    lim = Limits(**{"timeout_s": 30.0, **limits})
    return sandbox.run(
        ["python3", "-c", textwrap.dedent(code)], workspace=workspace, limits=lim, env=env
    )


def junit(path: Path) -> ET.Element:
    return ET.parse(path).getroot()  # noqa: S314 - written by the tests below


def leftover_containers() -> list[str]:
    out = subprocess.run(
        [
            "docker",
            "ps",
            "-a",
            "-q",
            "--filter",
            f"label={LABEL}=1",
            "--filter",
            f"label={RUN_LABEL[0]}={RUN_LABEL[1]}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


# -- ordinary runs -----------------------------------------------------------------------


def test_normal_run_exit_code_and_streams(sandbox: DockerSandbox, workspace: Path) -> None:
    (workspace / "data.txt").write_text("from the host\n")
    r = run_py(
        sandbox,
        workspace,
        """
        import os, sys
        print(open("data.txt").read().strip(), os.getcwd(), os.getuid(), os.getgid())
        print("to stderr", file=sys.stderr)
        open("/workspace/made.txt", "w").write("made inside")
        sys.exit(3)
        """,
    )
    assert r.exit_code == 3, r
    assert r.stdout == "from the host /workspace 10001 10001\n"
    assert r.stderr == "to stderr\n"
    assert not (r.timed_out or r.oom_killed or r.output_truncated)
    assert r.backend == "docker"
    assert (workspace / "made.txt").read_text() == "made inside"
    assert leftover_containers() == []


def test_pytest_run_writes_junit_into_workspace(sandbox: DockerSandbox, workspace: Path) -> None:
    (workspace / "test_math.py").write_text(
        "def test_ok():\n    assert 1 + 1 == 2\n\ndef test_bad():\n    assert 1 + 1 == 3\n"
    )
    r = sandbox.run(
        ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=report.xml"],
        workspace=workspace,
        limits=Limits(timeout_s=60),
    )
    assert r.exit_code == 1, r
    assert "1 failed, 1 passed" in r.stdout
    suite = junit(workspace / "report.xml").find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")


def test_an_install_command_can_pip_install_into_the_workspace(
    sandbox: DockerSandbox, workspace: Path
) -> None:
    """What docs/configuration.md tells a repository to do with ``fix.install_command``
    (``pip install --target`` into the workspace, or a ``.venv``): packaging's tests need
    ``pretend``, and the image had no pip to install it with."""
    package = workspace / "vendor" / "pretendish"
    (package / "pretendish").mkdir(parents=True)
    (package / "pretendish" / "__init__.py").write_text("def stub():\n    return 'stubbed'\n")
    (package / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='pretendish', version='1.0',"
        " packages=['pretendish'])\n"
    )
    installed = sandbox.run(
        [
            "sh",
            "-c",
            "python3 -m pip install --quiet --no-index --no-build-isolation"
            " --target .deps ./vendor/pretendish"
            " && python3 -m venv --system-site-packages .venv"
            " && .venv/bin/python -m pip --version",
        ],
        workspace=workspace,
        limits=Limits(timeout_s=120),
    )
    assert installed.exit_code == 0, installed
    used = sandbox.run(
        [
            "sh",
            "-c",
            "PYTHONPATH=.deps .venv/bin/python -c 'import pretendish; print(pretendish.stub())'",
        ],
        workspace=workspace,
        limits=Limits(timeout_s=60),
    )
    assert used.stdout == "stubbed\n", used


def test_the_image_runs_async_mocker_and_hypothesis_tests(
    sandbox: DockerSandbox, workspace: Path
) -> None:
    # The plugins and libraries real projects' suites lean on most: without them these
    # tests error or skip whatever the code does, and no fix could be judged by them.
    (workspace / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nasyncio_mode = "auto"\naddopts = "--strict-markers"\n'
    )
    (workspace / "test_plugins.py").write_text(
        textwrap.dedent(
            """
            import asyncio, os
            from hypothesis import given, strategies as st

            async def test_async():
                assert await asyncio.sleep(0, result=3) == 3

            def test_mocker(mocker):
                mocker.patch("os.getcwd", return_value="/elsewhere")
                assert os.getcwd() == "/elsewhere"

            @given(st.integers())
            def test_hypothesis(n):
                assert n + 0 == n
            """
        )
    )
    r = sandbox.run(
        ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA"],
        workspace=workspace,
        limits=Limits(timeout_s=120),
    )
    assert r.exit_code == 0, r
    assert "3 passed" in r.stdout, r.stdout


def test_a_test_server_on_localhost_binds_as_on_a_developers_machine(
    sandbox: DockerSandbox, workspace: Path
) -> None:
    # The container's /etc/hosts names ::1 "localhost"; with IPv6 off in the container,
    # asyncio (aiohttp's test servers) failed to bind it: "cannot assign requested address".
    r = run_py(
        sandbox,
        workspace,
        """
        import asyncio

        async def main():
            async def echo(reader, writer):
                writer.write(await reader.read(5))
                await writer.drain()
                writer.close()

            server = await asyncio.start_server(echo, "localhost", 0)
            for sock in server.sockets:
                host, port = sock.getsockname()[:2]
                reader, writer = await asyncio.open_connection(host, port)
                writer.write(b"hello")
                print(host, (await reader.read(5)).decode())
                writer.close()
            server.close()

        asyncio.run(main())
        """,
    )
    assert r.exit_code == 0, r.stderr
    assert "127.0.0.1 hello" in r.stdout
    if os.path.exists("/proc/sys/net/ipv6/conf/lo/disable_ipv6"):
        assert "::1 hello" in r.stdout


# -- containment ---------------------------------------------------------------------------


def test_no_network(sandbox: DockerSandbox, workspace: Path) -> None:
    r = run_py(
        sandbox,
        workspace,
        """
        import socket
        for host, port in [("1.1.1.1", 443), ("8.8.8.8", 53), ("127.0.0.1", 6379)]:
            try:
                socket.create_connection((host, port), timeout=3).close()
                print(host, "CONNECTED")
            except OSError as exc:
                print(host, "refused", type(exc).__name__, exc.errno)
        try:
            socket.getaddrinfo("github.com", 443)
            print("dns RESOLVED")
        except OSError:
            print("dns failed")
        print(sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))
        """,
    )
    assert r.exit_code == 0, r
    assert "CONNECTED" not in r.stdout and "RESOLVED" not in r.stdout, r.stdout
    assert r.stdout.count("refused") == 3
    assert "dns failed" in r.stdout
    assert r.stdout.strip().splitlines()[-1] == "['lo']"  # loopback only


def test_fork_bomb_stopped_by_pids_limit(sandbox: DockerSandbox, workspace: Path) -> None:
    # Counted: forks start failing at the pids limit.
    r = run_py(
        sandbox,
        workspace,
        """
        import os, time
        kids = 0
        try:
            for _ in range(1000):
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                kids += 1
        except OSError as exc:
            print("fork failed", exc.errno)
        print("children", kids)
        """,
        pids=64,
    )
    assert "fork failed 11" in r.stdout, r  # EAGAIN
    kids = int(r.stdout.split("children")[1])
    assert 10 < kids < 64
    # A real bash fork bomb: contained, killed at the time limit, nothing left behind.
    start = time.monotonic()
    r = sandbox.run(
        ["bash", "-c", ":(){ :|:& };:; sleep 30"],
        workspace=workspace,
        limits=Limits(timeout_s=4, pids=64),
    )
    assert time.monotonic() - start < 20
    assert r.timed_out or r.exit_code is not None
    assert leftover_containers() == []


def test_memory_hog_is_oom_killed(sandbox: DockerSandbox, workspace: Path) -> None:
    r = run_py(
        sandbox,
        workspace,
        """
        chunks = []
        for i in range(32):  # 2 GiB, touched page by page
            chunks.append(b"x" * (64 << 20))
            print("allocated", (i + 1) * 64, "MiB", flush=True)
        print("SURVIVED")
        """,
        memory_mb=256,
    )
    assert r.oom_killed, r
    assert r.exit_code == 137
    assert "SURVIVED" not in r.stdout
    assert not r.timed_out


# Writes up to 512 files of 1 MB each (every one far under file_size_mb) into the
# workspace, as fast as it can, then "SURVIVED"; ``WORKSPACE_FILES`` may lower the count.
DISK_FILLER = """
import os
chunk = b"d" * (1024 * 1024)
for n in range(int(os.environ.get("WORKSPACE_FILES", "512"))):
    with open(f"fill-{n}.bin", "wb") as f:
        f.write(chunk)
print("SURVIVED")
"""


def test_workspace_filler_is_killed_at_the_disk_limit(
    sandbox: DockerSandbox, workspace: Path
) -> None:
    start = time.monotonic()
    r = run_py(sandbox, workspace, DISK_FILLER, memory_mb=256, workspace_mb=32)
    assert r.disk_limit_exceeded, r
    assert not r.timed_out and not r.oom_killed
    assert r.exit_code is None
    assert "SURVIVED" not in r.stdout
    assert time.monotonic() - start < 10
    assert r.details["workspace_growth_mb"] > 32
    assert "wrote more than 32 MB into its workspace" in r.details["disk_limit"]
    # The kill goes through the engine (tens of ms), still far from all 512 MB.
    assert tree_usage(workspace).bytes <= (32 + 256) * MB
    assert leftover_containers() == []
    shutil.rmtree(workspace)  # the caller can remove it as after any run


def test_writing_under_the_disk_limit_is_untouched(sandbox: DockerSandbox, workspace: Path) -> None:
    r = run_py(sandbox, workspace, DISK_FILLER, env={"WORKSPACE_FILES": "24"}, workspace_mb=32)
    assert r.exit_code == 0, r
    assert r.stdout == "SURVIVED\n"
    assert not r.disk_limit_exceeded
    assert len(list(workspace.glob("fill-*.bin"))) == 24


FILE_MAKER = """
import os
os.makedirs("many", exist_ok=True)
for n in range(int(os.environ.get("WORKSPACE_FILES", "1000000"))):
    open(f"many/{n}", "w").close()
print("SURVIVED")
"""


def test_making_empty_files_without_end_is_killed_at_the_file_limit(
    sandbox: DockerSandbox, workspace: Path
) -> None:
    """Empty files cost no bytes, only inodes, which run out long before the byte limit."""
    start = time.monotonic()
    r = run_py(sandbox, workspace, FILE_MAKER, memory_mb=256, timeout_s=60, workspace_files=2_000)
    assert r.disk_limit_exceeded, r
    assert r.exit_code is None and not r.timed_out
    assert "SURVIVED" not in r.stdout
    assert time.monotonic() - start < 20
    assert r.details["workspace_growth_files"] > 2_000
    assert "made more than 2,000 files in its workspace" in r.details["disk_limit"]
    assert tree_usage(workspace).entries < 200_000  # stopped, not left to make a million
    assert leftover_containers() == []
    shutil.rmtree(workspace)


def test_making_files_under_the_file_limit_is_untouched(
    sandbox: DockerSandbox, workspace: Path
) -> None:
    r = run_py(
        sandbox, workspace, FILE_MAKER, env={"WORKSPACE_FILES": "1500"}, workspace_files=2_000
    )
    assert r.exit_code == 0, r
    assert r.stdout == "SURVIVED\n" and not r.disk_limit_exceeded
    assert len(list((workspace / "many").iterdir())) == 1500


def test_endless_loop_killed_at_time_limit(sandbox: DockerSandbox, workspace: Path) -> None:
    start = time.monotonic()
    r = sandbox.run(
        ["python3", "-c", "print('looping', flush=True)\nwhile True: pass"],
        workspace=workspace,
        limits=Limits(timeout_s=2),
    )
    elapsed = time.monotonic() - start
    assert r.timed_out, r
    assert r.exit_code is None
    assert r.stdout == "looping\n"
    assert 2 <= r.duration_s < 10 and elapsed < 15
    assert leftover_containers() == []


def test_root_filesystem_read_only(sandbox: DockerSandbox, workspace: Path) -> None:
    r = run_py(
        sandbox,
        workspace,
        """
        import errno
        for path in ["/etc/passwd", "/usr/bin/kaizen", "/root/x", "/x", "/var/tmp/x",
                     "/home/x", "/usr/lib/python3/dist-packages/evil.py"]:
            try:
                open(path, "a").write("x")
                print(path, "WRITTEN")
            except OSError as exc:
                print(path, errno.errorcode[exc.errno])
        open("/tmp/scratch", "w").write("tmpfs is fine")
        print("tmp ok")
        """,
    )
    assert r.exit_code == 0, r
    assert "WRITTEN" not in r.stdout, r.stdout
    assert "tmp ok" in r.stdout
    assert r.stdout.count("EROFS") + r.stdout.count("EACCES") == 7
    assert "/etc/passwd EROFS" in r.stdout or "/etc/passwd EACCES" in r.stdout


def test_file_size_limit_and_private_tmp(sandbox: DockerSandbox, workspace: Path) -> None:
    r = run_py(
        sandbox,
        workspace,
        """
        import errno, os, subprocess
        try:
            with open("big.bin", "wb") as f:
                f.write(b"z" * (3 << 20))
            print("big WRITTEN")
        except OSError as exc:
            print("big", errno.errorcode[exc.errno])
        with open("/tmp/tool.sh", "w") as f:
            f.write("#!/bin/sh\\necho tool ran\\n")
        os.chmod("/tmp/tool.sh", 0o755)
        print(subprocess.run(["/tmp/tool.sh"], capture_output=True, text=True).stdout.strip())
        """,
        file_size_mb=2,
    )
    assert r.exit_code == 0, r
    assert "big EFBIG" in r.stdout
    assert "tool ran" in r.stdout
    assert (workspace / "big.bin").stat().st_size == 2 << 20


def test_host_environment_and_files_invisible(
    sandbox: DockerSandbox, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", FAKE_TOKEN)
    monkeypatch.setenv("KAIZEN_TEST_SECRET_THING", FAKE_TOKEN)
    secret = tmp_path / "host-secret.txt"  # next to the workspace, outside it
    secret.write_text(FAKE_TOKEN)
    r = run_py(
        sandbox,
        workspace,
        f"""
        import json, os
        seen = {{}}
        for p in [{str(secret)!r}, {str(Path.cwd())!r}, "/var/run/docker.sock",
                  "/run/docker.sock", "/work", "/root", {str(Path.home())!r}]:
            seen[p] = os.path.exists(p)
        print(json.dumps({{"env": dict(os.environ), "seen": seen,
                           "tmp": os.listdir("/tmp"), "pid1": open("/proc/1/cmdline").read()}}))
        """,
        env={"CI": "true"},
    )
    assert r.exit_code == 0, r
    assert FAKE_TOKEN not in r.stdout + r.stderr
    report = json.loads(r.stdout)
    expected = sandbox_env({"CI": "true"})
    assert {k: v for k, v in report["env"].items() if k != "HOSTNAME"} == expected
    assert report["env"].get("HOSTNAME", "sandbox") == "sandbox"
    assert [p for p, exists in report["seen"].items() if exists and p != "/root"] == []
    assert report["tmp"] == []  # a private tmpfs, not the host's /tmp
    assert "docker-init" in report["pid1"] or "python3" in report["pid1"]  # own pid namespace
    with pytest.raises(ValueError):
        sandbox.run(["true"], workspace=workspace, limits=Limits(), env={"GITHUB_TOKEN": "x"})


def test_gigabytes_of_output_cut_parent_memory_small(
    sandbox: DockerSandbox, workspace: Path
) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    r = run_py(
        sandbox,
        workspace,
        """
        import sys
        block = b"y" * (1 << 20)
        out, err = sys.stdout.buffer, sys.stderr.buffer
        for i in range(2048):  # 2 GiB on stdout, 64 MiB on stderr
            out.write(block)
            if i % 32 == 0:
                err.write(block)
        out.flush()
        print("done", file=sys.stderr)
        """,
        output_bytes=64 * 1024,
        timeout_s=60,
    )
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert r.exit_code == 0, (r.exit_code, r.stderr[-200:], r.details)
    assert r.output_truncated
    assert len(r.stdout) == 64 * 1024 and set(r.stdout) == {"y"}
    assert len(r.stderr) == 64 * 1024
    assert r.details["stdout_bytes"] == 2048 << 20
    assert r.details["stderr_bytes"] == (64 << 20) + len("done\n")
    assert grown_mib < 64, f"parent grew {grown_mib:.0f} MiB"


def test_hanging_pytest_suite(sandbox: DockerSandbox, workspace: Path) -> None:
    (workspace / "test_hang.py").write_text(
        "import time\n\n"
        "def test_fine():\n    assert True\n\n"
        "def test_hangs():\n    time.sleep(600)\n"
    )
    base = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    # Per test, with pytest-timeout (in the image): the hang fails, the suite finishes.
    r = sandbox.run(
        [*base, "--timeout=2", "--junitxml=report.xml"],
        workspace=workspace,
        limits=Limits(timeout_s=60),
    )
    assert not r.timed_out and r.exit_code == 1, r
    assert "1 failed, 1 passed" in r.stdout
    cases = {c.get("name"): c for c in junit(workspace / "report.xml").iter("testcase")}
    hang = cases["test_hangs"].find("failure")
    assert hang is not None and "Timeout" in (hang.get("message") or "")
    # Without it: the whole run is killed at the sandbox's time limit.
    r = sandbox.run(base, workspace=workspace, limits=Limits(timeout_s=4))
    assert r.timed_out and r.exit_code is None, r
    assert leftover_containers() == []


def leftover_of(workspace: Path, labels: dict[str, str]) -> Any:
    """A container a sandbox with ``labels`` created and never ran: what a worker that died
    mid-run leaves behind."""
    owner = DockerSandbox(image=IMAGE, labels=labels)
    config = owner.container_config(
        ["true"],
        workspace=workspace,
        limits=Limits(),
        env=None,
        user="10001:10001",
        name=f"kaizen-sandbox-dead-{uuid.uuid4().hex[:12]}",
    )
    return owner.client.containers.create(**config)


def test_container_config_and_leftover_pruning(sandbox: DockerSandbox, workspace: Path) -> None:
    """What Docker records for a sandbox container; a leftover one is pruned by label."""
    config = sandbox.container_config(
        ["true"],
        workspace=workspace,
        limits=Limits(memory_mb=300, cpus=0.5, pids=50),
        env=None,
        user="10001:10001",
        name="kaizen-sandbox-test-leftover",
    )
    container = sandbox.client.containers.create(**config)
    try:
        host = container.attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
        assert host["SecurityOpt"] == ["no-new-privileges"]
        assert host["Privileged"] is False
        assert host["Memory"] == host["MemorySwap"] == 300 << 20
        assert host["NanoCpus"] == 500_000_000 and host["PidsLimit"] == 50
        assert host["LogConfig"]["Type"] == "none"
        assert [m["Target"] for m in host["Mounts"]] == ["/workspace"]
        assert list(host["Tmpfs"]) == ["/tmp"]
        assert container.attrs["Config"]["User"] == "10001:10001"
        assert container.attrs["Config"]["Labels"][LABEL] == "1"
        assert leftover_containers() != []
        # Another run's container on the same engine is not this caller's to prune.
        other = leftover_of(workspace, {RUN_LABEL[0]: f"other-{uuid.uuid4().hex}"})
        pruned = prune_leftovers(older_than_s=0, labels=dict([RUN_LABEL]))
        assert "kaizen-sandbox-test-leftover" in pruned and other.name not in pruned
        assert leftover_containers() == []
        other.reload()  # still there
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True)
        with contextlib.suppress(Exception):
            other.remove(force=True)


def test_a_run_sweeps_dead_workers_containers_labelled_like_its_own(
    sandbox: DockerSandbox, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed mid-run leaves its container running; the next run on the engine
    removes it (here with no age threshold), but not a container another sandbox's labels
    mark as not its own, and it sweeps once in a while, not every run."""
    monkeypatch.setattr(docker_backend, "LEFTOVER_AFTER_S", 0.0)
    monkeypatch.setattr(docker_backend, "LEFTOVER_AFTER_RUNS", 0)
    monkeypatch.setattr(docker_backend, "_SWEEPS", docker_backend._Sweeps())
    minute = Limits(timeout_s=60)
    dead = leftover_of(workspace, dict([RUN_LABEL]))
    others = leftover_of(workspace, {RUN_LABEL[0]: f"other-{uuid.uuid4().hex}"})
    try:
        assert sandbox.run(["true"], workspace=workspace, limits=minute).exit_code == 0
        with pytest.raises(docker.errors.NotFound):
            dead.reload()
        others.reload()  # still there
        again = leftover_of(workspace, dict([RUN_LABEL]))
        assert sandbox.run(["true"], workspace=workspace, limits=minute).exit_code == 0
        again.reload()  # the next sweep is due in SWEEP_EVERY_S
        again.remove(force=True)
    finally:
        for container in (dead, others):
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


def test_a_removal_already_under_way_counts_as_removed_and_nothing_raises(
    sandbox: DockerSandbox,
) -> None:
    # Two removals of one container at once: the engine answers the second with 409
    # "removal of container ... is already in progress" (what a kill at the time limit
    # under load ran into). Neither caller may fail, and the container must be gone.
    import threading

    import docker
    import docker.errors

    client = docker.from_env()
    api = client.api
    for _ in range(3):
        container = client.containers.create(
            IMAGE, ["sleep", "30"], network_mode="none", labels=dict([RUN_LABEL])
        )
        container.start()
        answers: list[str | None] = []

        def remove(cid: str = container.id, out: list[str | None] = answers) -> None:
            out.append(remove_container(api, cid))

        threads = [threading.Thread(target=remove) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert answers == [None, None, None]
        with pytest.raises(docker.errors.NotFound):
            api.inspect_container(container.id)
    # a container that is not there at all is also simply gone
    assert remove_container(api, "0" * 64) is None
