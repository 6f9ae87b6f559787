"""The ``kaizen`` command line, run as a user runs it: a real process per command.

Covers ``serve``'s settings errors, ``doctor`` (embedded defaults, the fake GitHub, a fake
OpenAI endpoint, a closed Redis port), ``up`` on the embedded broker (registration page,
health, shutdown, a ``/kaizen help`` comment answered end to end) and ``--help``/``redeliver``.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import WEBHOOK_SECRET
from tests.fakes.github_api import FakeGitHub, generate_private_key_pem
from tests.fakes.openai_api import FakeOpenAI
from tests.helpers import free_port, wait_until
from tests.integration.procs import kaizen_cmd, kaizen_env, wait_http, wait_log

APP_ID = 4242
REPO = "octo-org/app"
SUBCOMMANDS = ("serve", "worker", "beat", "up", "doctor", "redeliver")


# -- helpers ----------------------------------------------------------------------------------


def run_kaizen(
    *args: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        kaizen_cmd(*args), env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def problem_lines(stderr: str) -> list[str]:
    """The ``  - ...`` lines the CLI prints, one per settings problem."""
    return [line for line in stderr.splitlines() if line.startswith("  - ")]


@dataclass
class DoctorRun:
    returncode: int
    checks: list[dict[str, str]]
    stderr: str

    def check(self, name: str) -> dict[str, str]:
        found = [c for c in self.checks if c["name"] == name]
        assert len(found) == 1, f"expected one {name!r} check in {self.checks}"
        return found[0]


def doctor(env: dict[str, str]) -> DoctorRun:
    """``kaizen doctor --json``; every run must also honour the exit-code contract."""
    done = run_kaizen("doctor", "--json", env=env)
    assert "Traceback" not in done.stderr, done.stderr
    checks: list[dict[str, str]] = json.loads(done.stdout)["checks"]
    for check in checks:
        assert check["status"] in ("ok", "warn", "fail", "skip"), check
        assert check["detail"].strip(), check
    failed = any(c["status"] == "fail" for c in checks)
    assert done.returncode == (1 if failed else 0), (done.returncode, checks)
    return DoctorRun(done.returncode, checks, done.stderr)


def _ppid_and_state(pid: int) -> tuple[int, str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # "pid (comm) state ppid ...": comm may hold spaces or parentheses.
    state, ppid = stat.rsplit(")", 1)[1].split()[:2]
    return int(ppid), state


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            info = _ppid_and_state(int(entry.name))
            if info is not None and info[0] == pid:
                found.append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    info = _ppid_and_state(pid)
    return info is not None and info[1] != "Z"


@contextmanager
def kaizen_up(env: dict[str, str], port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``kaizen up`` on ``port``, serving and with its worker ready; nothing of it survives.

    Cleanup does not trust ``up`` to stop its worker: whatever of its process tree is still
    running after ``up`` has exited is killed by pid.
    """
    with log.open("wb") as out:
        proc = subprocess.Popen(
            kaizen_cmd("up", "--port", str(port)), env=env, stdout=out, stderr=subprocess.STDOUT
        )
        tree: list[int] = []
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz", proc, log)
            wait_log(log, 'ready."', proc)  # Celery's "celery@host ready." from the worker
            tree = descendants(proc.pid)  # now, while `up` is alive to be their ancestor
            yield proc
        finally:
            if proc.poll() is None:
                tree = sorted(set(tree) | set(descendants(proc.pid)))
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=40)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for pid in tree:
                if alive(pid):  # collected from our own child's tree: ours to kill
                    with suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)


def metric_value(base_url: str, sample_name: str, **labels: str) -> float:
    """One sample of ``/metrics`` (label order does not matter); 0 when absent."""
    text = httpx.get(f"{base_url}/metrics", timeout=5).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == sample_name and all(
                sample.labels.get(k) == v for k, v in labels.items()
            ):
                return float(sample.value)
    return 0.0


# -- kaizen serve: settings problems ----------------------------------------------------------


def test_serve_without_webhook_secret_names_it_in_one_line(tmp_path: Path) -> None:
    # With no App at all serve shows the registration page (test_app_manifest.py); with an
    # App id but no webhook secret it cannot verify deliveries and must not start.
    env = kaizen_env(app_id="1", data_dir=str(tmp_path / "data"))
    done = run_kaizen("serve", env=env, timeout=30)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    naming = [line for line in done.stderr.splitlines() if "KAIZEN_WEBHOOK_SECRET" in line]
    assert len(naming) == 1, done.stderr
    assert problem_lines(done.stderr) == naming


def test_serve_with_invalid_values_prints_one_line_per_problem(tmp_path: Path) -> None:
    env = kaizen_env(
        webhook_secret=WEBHOOK_SECRET,
        app_id="abc",
        redis_url="http://x",
        data_dir=str(tmp_path / "data"),
    )
    done = run_kaizen("serve", env=env, timeout=30)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    problems = problem_lines(done.stderr)
    assert len(problems) == 2, done.stderr
    assert sum("KAIZEN_APP_ID" in line for line in problems) == 1
    assert sum("KAIZEN_REDIS_URL" in line for line in problems) == 1
    assert any("redis://" in line for line in problems)  # says what a valid value looks like


def test_serve_with_a_long_non_key_private_key_fails_in_one_line(tmp_path: Path) -> None:
    """A long value is no path (ENAMETOOLONG) and must still give one line, not a crash."""
    encoded = base64.b64encode(b"not a key " * 500).decode()
    env = kaizen_env(
        webhook_secret=WEBHOOK_SECRET, private_key=encoded, data_dir=str(tmp_path / "data")
    )
    done = run_kaizen("serve", env=env, timeout=30)
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert done.returncode == 2
    assert [line for line in problem_lines(done.stderr) if "KAIZEN_PRIVATE_KEY" in line]
    assert encoded[100:160] not in done.stderr


def test_serve_does_not_echo_an_invalid_private_key(tmp_path: Path) -> None:
    pem_lines = generate_private_key_pem().strip().splitlines()
    body_only = "".join(pem_lines[1:-1])[:200]  # the secret part, without the PEM armour
    env = kaizen_env(
        webhook_secret=WEBHOOK_SECRET, private_key=body_only, data_dir=str(tmp_path / "data")
    )
    done = run_kaizen("serve", env=env, timeout=30)
    assert done.returncode == 2
    assert [line for line in problem_lines(done.stderr) if "KAIZEN_PRIVATE_KEY" in line]
    assert body_only[20:60] not in done.stderr


# -- kaizen doctor ----------------------------------------------------------------------------


@pytest.mark.slow
def test_doctor_on_embedded_defaults(tmp_path: Path) -> None:
    data = tmp_path / "data"
    run = doctor(kaizen_env(data_dir=str(data)))
    assert run.check("settings")["status"] == "ok"
    broker = run.check("broker")
    assert broker["status"] == "ok"
    assert "embedded" in broker["detail"]
    assert str(data) in broker["detail"]
    qdrant = run.check("qdrant")
    assert qdrant["status"] == "ok"
    assert "embedded" in qdrant["detail"]
    assert run.check("github")["status"] == "skip"
    assert run.check("llm")["status"] == "skip"
    # Docker or bubblewrap may be missing on this machine: then the reason must say so.
    sandbox = run.check("sandbox")
    assert sandbox["status"] in ("ok", "warn", "fail")
    if sandbox["status"] != "ok":
        detail = sandbox["detail"].lower()
        assert "docker" in detail or "bubblewrap" in detail
    assert [c["name"] for c in run.checks] == [
        "settings",
        "broker",
        "qdrant",
        "github",
        "llm",
        "sandbox",
    ]


def test_doctor_with_invalid_settings_reports_them_as_checks(tmp_path: Path) -> None:
    run = doctor(kaizen_env(app_id="abc", data_dir=str(tmp_path / "data")))
    assert run.returncode == 1
    assert run.checks == [{"name": "settings", "status": "fail", "detail": run.checks[0]["detail"]}]
    assert "KAIZEN_APP_ID" in run.checks[0]["detail"]


@pytest.fixture(scope="module")
def fake_github(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeGitHub, str]]:
    pem = generate_private_key_pem()
    with FakeGitHub(tmp_path_factory.mktemp("doctor-github")) as fake:
        fake.register_app(app_id=APP_ID, slug="kaizen", private_key_pem=pem)
        yield fake, pem


def github_env(fake: FakeGitHub, pem: str, data: Path, **extra: str) -> dict[str, str]:
    settings = {
        "app_id": str(APP_ID),
        "private_key": pem,
        "github_api_url": fake.base_url,
        "app_slug": "kaizen",
        "webhook_secret": WEBHOOK_SECRET,
        "data_dir": str(data),
    }
    settings.update(extra)
    return kaizen_env(**settings)


@pytest.mark.slow
def test_doctor_github_ok_with_the_right_key_and_slug(
    fake_github: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, pem = fake_github
    github = doctor(github_env(fake, pem, tmp_path / "data")).check("github")
    assert github["status"] == "ok", github
    assert str(APP_ID) in github["detail"]
    assert "kaizen" in github["detail"]


@pytest.mark.slow
def test_doctor_github_fails_with_a_wrong_key(
    fake_github: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, _ = fake_github
    wrong = generate_private_key_pem()
    run = doctor(github_env(fake, wrong, tmp_path / "data"))
    github = run.check("github")
    assert github["status"] == "fail"
    assert "401" in github["detail"] or "credentials" in github["detail"].lower(), github
    assert run.returncode == 1
    assert wrong.splitlines()[1] not in json.dumps(run.checks) + run.stderr


@pytest.mark.slow
def test_doctor_github_fails_on_a_slug_mismatch(
    fake_github: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, pem = fake_github
    github = doctor(github_env(fake, pem, tmp_path / "data", app_slug="other-bot")).check("github")
    assert github["status"] == "fail"
    assert "KAIZEN_APP_SLUG" in github["detail"]


@pytest.mark.slow
def test_doctor_broker_fails_on_a_closed_redis_port(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there any more
    run = doctor(
        kaizen_env(redis_url=f"redis://127.0.0.1:{port}/0", data_dir=str(tmp_path / "data"))
    )
    broker = run.check("broker")
    assert broker["status"] == "fail"
    assert str(port) in broker["detail"]
    assert run.returncode == 1


@pytest.mark.slow
def test_doctor_hides_the_redis_password(tmp_path: Path) -> None:
    port = free_port()
    run = doctor(
        kaizen_env(
            redis_url=f"redis://:hunter2secret@127.0.0.1:{port}/0",
            data_dir=str(tmp_path / "data"),
        )
    )
    assert run.check("broker")["status"] == "fail"
    assert "hunter2secret" not in json.dumps(run.checks) + run.stderr


@pytest.mark.slow
def test_doctor_llm_ok_when_the_endpoint_serves_the_model(tmp_path: Path) -> None:
    with FakeOpenAI(models=("fake-gpt",)) as fake:
        env = kaizen_env(
            llm_base_url=fake.base_url,
            llm_api_key="test-key",
            llm_model="fake-gpt",
            data_dir=str(tmp_path / "data"),
        )
        llm = doctor(env).check("llm")
    assert llm["status"] == "ok", llm
    assert "fake-gpt" in llm["detail"]


@pytest.mark.slow
def test_doctor_llm_fails_when_the_model_is_missing(tmp_path: Path) -> None:
    with FakeOpenAI(models=("fake-gpt",)) as fake:
        env = kaizen_env(
            llm_base_url=fake.base_url,
            llm_api_key="test-key",
            llm_model="gpt-that-is-not-there",
            data_dir=str(tmp_path / "data"),
        )
        run = doctor(env)
    llm = run.check("llm")
    assert llm["status"] == "fail"
    assert "gpt-that-is-not-there" in llm["detail"]
    assert run.returncode == 1


# -- kaizen up --------------------------------------------------------------------------------


@pytest.mark.slow
def test_up_without_settings_serves_registration_help_and_is_ready(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "up.log"
    base = f"http://127.0.0.1:{port}"
    with kaizen_up(kaizen_env(data_dir=str(tmp_path / "data")), port, log):
        index = httpx.get(f"{base}/", timeout=5)
        assert index.status_code == 200
        assert "No GitHub App is registered yet" in index.text
        assert "github.com/settings/apps/new" in index.text
        assert "KAIZEN_APP_ID" in index.text
        assert "embedded (file) broker" in index.text
        health = httpx.get(f"{base}/healthz", timeout=5)
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        ready = httpx.get(f"{base}/readyz", timeout=5)
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"broker": True, "ledger": True}
        assert f"open http://127.0.0.1:{port}/ for how to register" in log.read_text()


@pytest.mark.slow
def test_up_sigterm_stops_the_worker_too(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "up.log"
    with kaizen_up(kaizen_env(data_dir=str(tmp_path / "data")), port, log) as up:
        workers = children(up.pid)
        assert len(workers) == 1, workers
        tree = descendants(up.pid)
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=40)
        left = [pid for pid in tree if alive(pid)]
        assert left == [], f"still running after `kaizen up` exited {up.returncode}: {left}"


@pytest.mark.slow
def test_up_answers_a_help_comment_end_to_end_and_shares_worker_metrics(
    tmp_path: Path,
) -> None:
    pem = generate_private_key_pem()
    with FakeGitHub(tmp_path / "github") as fake:
        fake.register_app(app_id=APP_ID, slug="kaizen", private_key_pem=pem)
        installation = fake.add_installation("octo-org", repos=[])
        fake.add_repo(REPO, files={"README.md": "# app\n"}, installation_id=installation)
        fake.add_user("alice")
        fake.add_collaborator(REPO, "alice", "write")
        port, log = free_port(), tmp_path / "up.log"
        base = f"http://127.0.0.1:{port}"
        env = kaizen_env(
            data_dir=str(tmp_path / "data"),
            webhook_secret=WEBHOOK_SECRET,
            app_id=str(APP_ID),
            private_key=pem,
            github_api_url=fake.base_url,
            github_seconds_between_requests="0",
            github_seconds_between_writes="0",
        )
        assert "REDIS" not in " ".join(env)  # the embedded broker, no Redis
        with kaizen_up(env, port, log):
            fake.set_webhook(f"{base}/webhooks/github", WEBHOOK_SECRET)
            issue = fake.open_issue(REPO, title="How do I use this?", user="alice")
            fake.add_issue_comment(REPO, issue["number"], "/kaizen help", user="alice")

            def replies() -> list[dict[str, Any]]:
                return [
                    c
                    for c in fake.issue_comments(REPO, issue["number"])
                    if (c.get("user") or {}).get("login") == "kaizen[bot]"
                ]

            fake.wait_for(lambda: len(replies()) == 1, timeout=30, message="the help reply")
            assert "/kaizen fix" in str(replies()[0]["body"])

            # The task ran in the worker's pool; the web's /metrics must show it.
            wait_until(
                lambda: (
                    metric_value(
                        base,
                        "kaizen_task_outcomes_total",
                        task="kaizen.handle_command",
                        outcome="success",
                    )
                    >= 1
                ),
                timeout=15,
                what="the worker's task metric in the web's /metrics",
            )
            assert (
                metric_value(
                    base, "kaizen_webhook_deliveries_total", event="issue_comment", status="queued"
                )
                >= 1
            )


# -- kaizen --help, redeliver -----------------------------------------------------------------


def test_help_lists_every_subcommand() -> None:
    done = run_kaizen("--help", env=kaizen_env(), timeout=30)
    assert done.returncode == 0
    for name in SUBCOMMANDS:
        assert name in done.stdout, name


def test_no_subcommand_prints_help_and_exits_2() -> None:
    done = run_kaizen(env=kaizen_env(), timeout=30)
    assert done.returncode == 2
    assert all(name in done.stdout for name in SUBCOMMANDS)


def test_importing_the_cli_loads_no_heavy_dependency() -> None:
    probe = (
        "import sys, bot.cli; "
        "print(sorted(m for m in ('celery', 'fastapi', 'uvicorn', 'qdrant_client', 'openai', "
        "'github') if m in sys.modules))"
    )
    done = subprocess.run(
        [kaizen_cmd()[0], "-c", probe],
        env=kaizen_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_redeliver_with_an_unparsable_since_fails_clearly(tmp_path: Path) -> None:
    env = kaizen_env(
        app_id=str(APP_ID),
        private_key=generate_private_key_pem(),
        github_api_url=f"http://127.0.0.1:{free_port()}",  # must not be called at all
        data_dir=str(tmp_path / "data"),
    )
    done = run_kaizen("redeliver", "--since", "yesterday", env=env, timeout=30)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if "--since" in line]
    assert len(lines) == 1, done.stderr
    assert "yesterday" in lines[0]
    assert "30m" in lines[0] or "(s, m, h, d)" in lines[0]  # says what it accepts


def test_redeliver_without_an_app_names_the_missing_settings(tmp_path: Path) -> None:
    done = run_kaizen(
        "redeliver", "--since", "yesterday", env=kaizen_env(data_dir=str(tmp_path)), timeout=30
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    problems = problem_lines(done.stderr)
    assert any("KAIZEN_APP_ID" in line for line in problems)
    assert any("KAIZEN_PRIVATE_KEY" in line for line in problems)
