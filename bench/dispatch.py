"""Outbound sends per second through the dispatcher vs a plain httpx loop, both against
the local stand-in of the platform (uvicorn on 127.0.0.1), one integration (the loop sends
as many at once as the dispatcher does through one: ``dispatch_integration_concurrency``).
Goal: the dispatcher at least half the plain loop's rate.

    .venv/bin/python -m bench.dispatch [messages]      (default 2000; SQLite, or
    BENCH_DATABASE_URL=postgresql+asyncpg://… for a migrated PostgreSQL database)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy import insert

from officehub.channels.adapter import Outbound
from officehub.channels.dispatcher import send_queued
from officehub.channels.whatsapp import message_body
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.hook_subscriptions import install
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages.models import Message
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from tests import factories as f
from tests.whatsapp_platform import TOKEN, running_platform
from tests.whatsapp_world import SETTINGS


async def arrange(url: str, count: int) -> None:
    engine = create_engine(url)
    async with create_sessionmaker(engine)() as s:
        office = await offices.create_office(s, "Bench")
        inbox = await f.make_inbox(s, office.id)
        integration = await f.make_integration(
            s, office.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id=f"bench-{new_id()}"
        )
        integration.whatsapp = dict(SETTINGS)
        now = utcnow()
        contacts, conversations, messages = [], [], []
        for n in range(count):
            contact_id, conversation_id = new_id(), new_id()
            phone = f"+55119{n:08d}"
            contacts.append(
                {
                    "id": contact_id,
                    "office_id": office.id,
                    "name": f"P{n}",
                    "search_name": f"p{n}",
                    "phone": phone,
                    "ddd": "11",
                    "is_blocked": False,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            conversations.append(
                {
                    "id": conversation_id,
                    "office_id": office.id,
                    "person_id": contact_id,
                    "inbox_id": inbox.id,
                    "integration_id": integration.id,
                    "status": "OPEN",
                    "priority": "MEDIUM",
                    "created_at": now,
                    "updated_at": now,
                }
            )
            messages.append(
                {
                    "id": new_id(),
                    "office_id": office.id,
                    "conversation_id": conversation_id,
                    "direction": "OUTBOUND",
                    "type": "TEXT",
                    "text": f"Mensagem {n}",
                    "status": "QUEUED",
                    "created_at": now,
                    "attempts": 0,
                }
            )
        await s.execute(insert(Contact), contacts)
        await s.execute(insert(Conversation), conversations)
        await s.execute(insert(Message), messages)
        await s.commit()
    await engine.dispose()


async def plain_loop(api_url: str, count: int, concurrency: int) -> float:
    limit = asyncio.Semaphore(concurrency)
    headers = {"Authorization": f"Bearer {TOKEN}"}

    async def one(client: httpx.AsyncClient, n: int) -> None:
        outbound = Outbound(f"m{n}", "TEXT", f"Mensagem {n}", None, None, {}, f"+55119{n:08d}")
        async with limit:
            r = await client.post(
                f"{api_url}/{SETTINGS['phoneNumberId']}/messages",
                json=message_body(outbound),
                headers=headers,
            )
            r.raise_for_status()

    started = time.perf_counter()
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency)) as client:
        await asyncio.gather(*(one(client, n) for n in range(count)))
    return time.perf_counter() - started


async def main(count: int) -> None:
    install()  # the outbox's consumers register themselves here (a sent status emits)
    with tempfile.TemporaryDirectory() as tmp:
        url = os.environ.get("BENCH_DATABASE_URL") or f"sqlite+aiosqlite:///{Path(tmp) / 'b.db'}"
        await migrate_async(url)
        await arrange(url, count)
        async with running_platform() as platform:
            settings = Settings(
                database_url=url,
                data_dir=Path(tmp) / "data",
                signing_key="bench",
                whatsapp_api_url=platform.url,
            )
            engine = create_engine(url)
            ctx = WorkerContext(settings, engine, create_sessionmaker(engine))
            started = time.perf_counter()
            await Worker(ctx, [send_queued]).run_until_idle(max_passes=100_000)
            dispatched = time.perf_counter() - started
            await engine.dispose()
            assert len(platform.sent) == count, len(platform.sent)
            plain = await plain_loop(platform.url, count, settings.dispatch_integration_concurrency)
    backend = url.split(":", 1)[0]
    print(
        f"{count} sends on {backend}: dispatcher {count / dispatched:.0f}/s "
        f"({dispatched:.2f} s), plain httpx loop {count / plain:.0f}/s ({plain:.2f} s), "
        f"ratio {plain / dispatched:.2f}"
    )


if __name__ == "__main__":
    if sys.argv[1:] == ["--quick"]:
        asyncio.run(main(300))
    else:
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
