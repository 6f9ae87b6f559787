"""Webhook intake under load: signed deliveries over loopback against ``kaizen serve``.

Starts a real ``kaizen serve`` on real Redis, sends N correctly signed deliveries at a fixed
concurrency over keep-alive connections, then checks Redis: every delivery queued exactly
once, and a second pass of the same deliveries answered ``duplicate`` without queueing.
Prints throughput and ack latency percentiles and writes them to bench/results/.

    .venv/bin/python bench/webhook_load.py [--n 5000] [--concurrency 32] [--event pull_request]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.webhook import sign  # noqa: E402
from tests.helpers import free_port  # noqa: E402

SECRET = "bench-secret"
FIXTURES = {
    "pull_request": ("pull_request.opened.json", "reviews"),
    "issue_comment": ("issue_comment.created.json", "feedback"),
}


def build_requests(n: int, event: str, port: int) -> tuple[list[bytes], list[str], int]:
    fixture, _ = FIXTURES[event]
    payload = json.loads((ROOT / "tests/fixtures/webhooks" / fixture).read_text())
    if event == "issue_comment":
        payload["comment"]["body"] = "/kaizen help"
    requests, ids = [], []
    for _ in range(n):
        delivery = str(uuid.uuid4())
        payload["bench_delivery"] = delivery  # every body (and signature) differs
        body = json.dumps(payload).encode()
        head = (
            f"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nUser-Agent: GitHub-Hookshot/bench\r\n"
            f"X-GitHub-Event: {event}\r\nX-GitHub-Delivery: {delivery}\r\n"
            f"X-Hub-Signature-256: {sign(SECRET.encode(), body)}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        requests.append(head + body)
        ids.append(delivery)
    return requests, ids, len(body)


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, await reader.readexactly(length)


async def run_load(
    port: int, requests: list[bytes], concurrency: int
) -> tuple[list[float], dict[str, int]]:
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for r in requests:
        queue.put_nowait(r)
    latencies: list[float] = []
    statuses: dict[str, int] = {}

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while True:
                try:
                    request = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                started = time.perf_counter()
                writer.write(request)
                status, body = await _read_response(reader)
                latencies.append(time.perf_counter() - started)
                key = f"{status} {json.loads(body).get('status')}"
                statuses[key] = statuses.get(key, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(concurrency)))
    return latencies, statuses


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--event", choices=sorted(FIXTURES), default="pull_request")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument("--workers", type=int, default=1, help="kaizen serve --workers")
    parser.add_argument(
        "--port", type=int, default=0, help="use a `kaizen serve` already on this port"
    )
    parser.add_argument("--out", default=str(ROOT / "bench/results/webhook_load.json"))
    args = parser.parse_args()

    queue_name = FIXTURES[args.event][1]
    r = redis.Redis.from_url(args.redis)
    r.flushdb()
    port = args.port or free_port()
    requests, ids, body_size = build_requests(args.n, args.event, port)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAIZEN_")}
    env.update(
        KAIZEN_WEBHOOK_SECRET=SECRET,
        KAIZEN_REDIS_URL=args.redis,
        KAIZEN_LOG_LEVEL=args.log_level,
        KAIZEN_DATA_DIR=tempfile.mkdtemp(prefix="kaizen-bench-"),
    )
    log = Path(env["KAIZEN_DATA_DIR"]) / "serve.log"
    command = [sys.executable, "-m", "bot.cli", "serve", "--port", str(port)]
    command += ["--workers", str(args.workers)]
    if args.port:  # an external server: keep a harmless placeholder process to manage
        command = [sys.executable, "-c", "import time; time.sleep(3600)"]
    with log.open("wb") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print(log.read_text(), file=sys.stderr)
                    return 1
                time.sleep(0.1)
        # Warm up connections and code paths with deliveries that are not counted.
        warm, _, _ = build_requests(200, args.event, port)
        asyncio.run(run_load(port, warm, args.concurrency))
        r.delete(queue_name)

        started = time.perf_counter()
        latencies, statuses = asyncio.run(run_load(port, requests, args.concurrency))
        elapsed = time.perf_counter() - started
        dup_latencies, dup_statuses = asyncio.run(run_load(port, requests, args.concurrency))
    finally:
        server.terminate()
        server.wait(timeout=15)

    queued_ids = [json.loads(m)["headers"]["id"] for m in r.lrange(queue_name, 0, -1)]
    exactly_once = len(queued_ids) == len(ids) and set(queued_ids) == set(ids)
    results: dict[str, Any] = {
        "event": args.event,
        "body_bytes": body_size,
        "deliveries": args.n,
        "concurrency": args.concurrency,
        "log_level": args.log_level,
        "web_workers": args.workers,
        "seconds": round(elapsed, 3),
        "throughput_per_s": round(args.n / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 2),
        "p99_ms": round(percentile(latencies, 99) * 1000, 2),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2),
        "statuses": statuses,
        "queued_in_redis": len(queued_ids),
        "queued_exactly_once": exactly_once,
        "duplicate_pass_statuses": dup_statuses,
        "duplicate_pass_p99_ms": round(percentile(dup_latencies, 99) * 1000, 2),
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        ),
    }
    r.flushdb()
    print(json.dumps(results, indent=2))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    ok = exactly_once and statuses == {"202 queued": args.n}
    ok = ok and dup_statuses == {"200 duplicate": args.n}
    print("OK: every delivery queued exactly once" if ok else "FAILED: lost or doubled deliveries")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
