"""Webhook delivery throughput and latency against a local receiver.

Prints deliveries per second through the whole pipeline (outbox → fan-out → signed POST →
outcome recorded) next to a plain httpx loop posting the same bodies to the same receiver
with the same concurrency, and the enqueue-to-delivery p50/p99 (event recorded in the
outbox → request arrived at the receiver). The receiver runs in its own process.

    .venv/bin/python -m bench.webhook_delivery [--events 2000] [--database-url URL]
        [--paced 300] [--rate 50] [--rate-limit 20]

The burst run records every event first, then drains them; the paced run records events
one at a time while the worker runs its normal loop (``OFFICEHUB_WORKER_POLL_SECONDS``).
The limited run gives the webhook a pace (``rateLimitPerSecond``) and drains a burst of
five seconds' worth through it: deliveries per second with the pace, beside the burst's
without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select, update

from officehub.events.models import OutboxEvent
from officehub.events.service import emit
from officehub.hook_subscriptions import install
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.worker import Worker, WorkerContext
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from officehub.webhooks.delivery import deliver_due, event_body, fan_out_events
from officehub.webhooks.models import Webhook, WebhookDeliveryAttempt


def receiver_main(port: int) -> None:
    """A minimal receiver: records when each body arrived; ``GET /stats``, ``POST /reset``."""
    import uvicorn

    arrivals: dict[str, float] = {}
    count = [0]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        now = time.time()
        reply = b"ok"
        if scope["path"] == "/stats":
            reply = json.dumps({"count": count[0], "arrivals": arrivals}).encode()
        elif scope["path"] == "/reset":
            arrivals.clear()
            count[0] = 0
        else:
            count[0] += 1
            arrivals.setdefault(json.loads(body)["id"], now)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": reply})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _wait_ready(base: str) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(1200):  # a minute: a loaded machine starts processes slowly
            try:
                await client.get(f"{base}/stats")
                return
            except httpx.TransportError:
                await asyncio.sleep(0.05)
    raise SystemExit("receiver did not start")


async def _stats(base: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as client:
        data: dict[str, Any] = (await client.get(f"{base}/stats")).json()
        await client.post(f"{base}/reset")
        return data


async def _plain_loop(url: str, bodies: list[bytes], concurrency: int) -> float:
    limit = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=10) as client:

        async def post(body: bytes) -> None:
            async with limit:
                response = await client.post(
                    url, content=body, headers={"Content-Type": "application/json"}
                )
                response.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(post(b) for b in bodies))
        return time.perf_counter() - started


async def _paced(
    worker: Worker, sessionmaker: Any, office_id: str, base: str, count: int, rate: float
) -> list[float]:
    """Events recorded one per transaction at ``rate``/s while the worker runs as in production."""
    task = asyncio.create_task(worker.run())
    created: dict[str, float] = {}
    for n in range(count):
        async with sessionmaker() as s:
            event = await emit(s, office_id, "contact.created", {"n": n, "paced": True})
            await s.commit()
        created[event.id] = event.created_at.timestamp()
        await asyncio.sleep(1 / rate)
    async with httpx.AsyncClient() as client:
        for _ in range(600):
            if (await client.get(f"{base}/stats")).json()["count"] >= count:
                break
            await asyncio.sleep(0.05)
    worker.stop()
    await task
    arrivals = (await _stats(base))["arrivals"]
    return [arrivals[i] - t for i, t in created.items()]


async def _limited(
    worker: Worker, sessionmaker: Any, office_id: str, base: str, limit: int
) -> tuple[int, float, int]:
    """Five seconds' worth of events through the webhook with ``limit`` per second."""
    async with sessionmaker() as s:
        await s.execute(
            update(Webhook)
            .where(Webhook.office_id == office_id)
            .values(rate_limit_per_second=limit)
        )
        await s.commit()
    count = 5 * limit
    await _stats(base)  # reading the stats starts the receiver's count again
    since = datetime.now(UTC)
    async with sessionmaker() as s:
        for n in range(count):
            await emit(s, office_id, "contact.created", {"n": n, "name": "Maria Souza"})
        await s.commit()
    started = time.perf_counter()
    received = 0
    while received < count:
        if time.perf_counter() - started > 120:  # a bench that hangs tells what it waited for
            raise SystemExit(f"paced run: {received} of {count} deliveries in 120 s")
        await worker.run_until_idle(max_passes=100_000)
        await asyncio.sleep(0.02)
        received += (await _stats(base))["count"]
    elapsed = time.perf_counter() - started
    async with sessionmaker() as s:
        stmt = select(WebhookDeliveryAttempt.created_at).where(
            WebhookDeliveryAttempt.office_id == office_id,
            WebhookDeliveryAttempt.created_at >= since,
        )
        begun = Counter(int(t.timestamp()) for t in await s.scalars(stmt))
    return count, elapsed, max(begun.values())


async def run(
    events: int, database_url: str, base: str, paced: int, rate: float, rate_limit: int
) -> None:
    await _wait_ready(base)
    await migrate_async(database_url)
    install()  # the outbox's consumers register themselves here
    settings = Settings(database_url=database_url, webhook_allow_private=True)
    engine = create_engine(database_url, settings.db_pool_size)
    sessionmaker = create_sessionmaker(engine)
    async with sessionmaker() as s:
        office = await offices.create_office(s, "Bench office")
        s.add(
            Webhook(
                office_id=office.id,
                name="bench",
                url=f"{base}/hook",
                secret="bench-secret-123",  # noqa: S106
                events=["contact.created"],
                is_active=True,
            )
        )
        await s.flush()  # emit records a delivery only for the webhooks it finds subscribed
        recorded: list[OutboxEvent] = [
            await emit(s, office.id, "contact.created", {"n": n, "name": "Maria Souza"})
            for n in range(events)
        ]
        await s.commit()
    created = {e.id: e.created_at.timestamp() for e in recorded}
    ctx = WorkerContext(settings, engine, sessionmaker)
    worker = Worker(ctx, [fan_out_events, deliver_due])
    started = time.perf_counter()
    await worker.run_until_idle(max_passes=100_000)
    pipeline = time.perf_counter() - started
    stats = await _stats(base)
    latencies = [stats["arrivals"][i] - t for i, t in created.items()]
    paced_latencies = await _paced(worker, sessionmaker, office.id, base, paced, rate)
    limited, limited_seconds, most = await _limited(
        worker, sessionmaker, office.id, base, rate_limit
    )
    await engine.dispose()
    bodies = [json.dumps(event_body(e), separators=(",", ":")).encode() for e in recorded]
    plain = await _plain_loop(f"{base}/hook", bodies, settings.delivery_concurrency)
    plain_stats = await _stats(base)
    backend = database_url.split(":", 1)[0]
    print(f"database: {backend}; events: {events}; concurrency: {settings.delivery_concurrency}")
    print(f"officehub pipeline: {events / pipeline:8.1f} deliveries/s ({stats['count']} received)")
    print(
        f"plain httpx loop:   {events / plain:8.1f} posts/s      ({plain_stats['count']} received)"
    )
    print(
        f"with a pace of {rate_limit}/s: {limited / limited_seconds:8.1f} deliveries/s "
        f"({limited} events in {limited_seconds:.1f} s; at most {most} attempts began in one "
        "second: a burst of five seconds' worth spans four to five calendar seconds)"
    )
    print(
        "enqueue-to-delivery (burst of all events at once): "
        f"p50 {statistics.median(latencies) * 1000:.0f} ms, "
        f"p99 {_percentile(latencies, 0.99) * 1000:.0f} ms"
    )
    print(
        f"enqueue-to-delivery (paced, {paced} events at {rate:g}/s, "
        f"worker poll {settings.worker_poll_seconds:g} s): "
        f"p50 {statistics.median(paced_latencies) * 1000:.0f} ms, "
        f"p99 {_percentile(paced_latencies, 0.99) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--paced", type=int, default=300, help="events for the paced run")
    parser.add_argument("--rate", type=float, default=50.0, help="events/s in the paced run")
    parser.add_argument("--rate-limit", type=int, default=20, help="the limited run's pace")
    parser.add_argument("--quick", action="store_true", help="300 events, 60 paced")
    args = parser.parse_args()
    if args.quick:
        args.events, args.paced = 300, 60
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        port = _free_port()
        code = f"from bench.webhook_delivery import receiver_main; receiver_main({port})"
        receiver = subprocess.Popen([sys.executable, "-c", code])
        try:
            base = f"http://127.0.0.1:{port}"
            asyncio.run(run(args.events, url, base, args.paced, args.rate, args.rate_limit))
        finally:
            receiver.terminate()
            receiver.wait()


if __name__ == "__main__":
    main()
