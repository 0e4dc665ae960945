"""``GET /stream`` at 500 open streams on one ``officehub serve`` process: the time from a
message stored to its event on every stream (p50/p99), and the memory each stream costs.

    .venv/bin/python -m bench.stream_fanout                  # SQLite, a fresh temp file
    .venv/bin/python -m bench.stream_fanout postgresql+asyncpg://postgres@127.0.0.1:5432/bench
    .venv/bin/python -m bench.stream_fanout --streams 50 --messages 10   # quick

The server is a real ``officehub serve --no-worker`` process (its RSS read from /proc); this
process holds the streams and posts the messages (``POST .../messages/inbound``), one every
200 ms. The latency of one delivery is the time a stream read the event's line minus the
event's ``createdAt`` (stamped just before its transaction commits; same host, same clock),
so it counts the commit, the wake-up, the hub's read, the fan-out and the socket.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx

from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.inboxes.models import Inbox, Integration
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.migrate import migrate_async
from officehub.offices import service as offices


async def seed(url: str) -> tuple[str, str]:
    """An office's key and one conversation of it."""
    await migrate_async(url)
    engine = create_engine(url)
    async with create_sessionmaker(engine)() as session:
        office = await offices.create_office(session, "Bench stream")
        key = (await offices.create_api_key(session, office.id, "bench")).key
        inbox = Inbox(office_id=office.id, name="Atendimento")
        session.add(inbox)
        await session.flush()
        channel = Integration(office_id=office.id, inbox_id=inbox.id, type="WEBCHAT", name="Site")
        contact = Contact(office_id=office.id, name="Maria", search_name="maria", is_blocked=False)
        session.add_all([channel, contact])
        await session.flush()
        conversation = Conversation(
            office_id=office.id,
            person_id=contact.id,
            inbox_id=inbox.id,
            integration_id=channel.id,
            status="OPEN",
            priority="MEDIUM",
        )
        session.add(conversation)
        await session.commit()
    await engine.dispose()
    return key, conversation.id


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def created_at(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


async def hold(
    client: httpx.AsyncClient,
    key: str,
    ready: asyncio.Event,
    latencies: list[tuple[str, float]],
    arrived: asyncio.Event,
) -> None:
    async with client.stream("GET", "/stream", headers={"x-service-api-key": key}) as response:
        assert response.status_code == 200, response.status_code
        async for line in response.aiter_lines():
            if line.startswith("event: ready") or line.startswith("retry:"):
                ready.set()
            if not line.startswith('data: {"id"'):
                continue
            now = time.time()
            body = json.loads(line[6:])
            if body["event"] == "chat.message.received":
                ms = (now - created_at(body["createdAt"])) * 1000
                latencies.append((body["data"]["id"], ms))
                arrived.set()


async def main(url: str, streams: int, messages: int) -> None:
    key, conversation_id = await seed(url)
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OFFICEHUB_")},
        "OFFICEHUB_DATABASE_URL": url,
        "OFFICEHUB_STREAMS_PER_KEY": str(streams + 10),
        "OFFICEHUB_STREAMS_PER_ADDRESS": str(streams + 10),
        "OFFICEHUB_RATE_LIMITS": "",
        "OFFICEHUB_LOG_LEVEL": "WARNING",
    }
    folder = tempfile.mkdtemp(prefix="bench-stream-")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "officehub", "serve", "--no-worker", "--port", str(port),
        cwd=folder, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    limits = httpx.Limits(max_connections=streams + 20, max_keepalive_connections=streams + 20)
    tasks: list[asyncio.Task[None]] = []
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
            async with asyncio.timeout(60):
                while True:
                    with contextlib.suppress(httpx.TransportError):
                        if (await client.get("/healthz")).status_code == 200:
                            break
                    await asyncio.sleep(0.1)
            headers = {"x-service-api-key": key}
            path = f"/conversation/{conversation_id}/messages/inbound"
            # Warm up: the app's first requests (imports, pools, the hub started by one stream).
            async with client.stream("GET", "/stream", headers=headers) as first:
                assert first.status_code == 200
            for n in range(5):
                await client.post(path, json={"text": f"aquecimento {n}"}, headers=headers)
            await asyncio.sleep(1)
            before = rss_kib(proc.pid)
            latencies: list[tuple[str, float]] = []
            arrived = asyncio.Event()
            wanted: set[str] = set()
            readies = [asyncio.Event() for _ in range(streams)]
            tasks = [
                asyncio.create_task(hold(client, key, ready, latencies, arrived))
                for ready in readies
            ]
            async with asyncio.timeout(120):
                for ready in readies:
                    await ready.wait()
            await asyncio.sleep(1)
            after = rss_kib(proc.pid)
            for n in range(messages):
                answer = await client.post(path, json={"text": f"mensagem {n}"}, headers=headers)
                assert answer.status_code == 201, answer.text
                wanted.add(answer.json()["id"])
                await asyncio.sleep(0.2)
            async with asyncio.timeout(60):
                while sum(m in wanted for m, _ in latencies) < streams * messages:
                    arrived.clear()
                    await arrived.wait()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        proc.send_signal(signal.SIGINT)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 20)
        if proc.returncode is None:
            proc.kill()
    ordered = sorted(ms for m, ms in latencies if m in wanted)
    p99 = ordered[max(int(len(ordered) * 0.99) - 1, 0)]
    backend = url.split("+")[0].split(":")[0]
    print(f"GET /stream on {backend}: {streams} open streams, {messages} messages")
    print(f"deliveries        {len(ordered):>8}")
    print(f"stored->stream ms p50 {statistics.median(ordered):7.1f}  p99 {p99:7.1f}")
    print(
        f"server RSS        {before / 1024:7.1f} MiB before, {after / 1024:7.1f} MiB with streams"
    )
    print(f"per stream        {(after - before) / streams:7.1f} KiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url", nargs="?", default=os.environ.get("OFFICEHUB_BENCH_DATABASE_URL"))
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--messages", type=int, default=30)
    args = parser.parse_args()
    database = args.url or f"sqlite+aiosqlite:///{tempfile.mkdtemp(prefix='bench-')}/bench.db"
    asyncio.run(main(database, args.streams, args.messages))
