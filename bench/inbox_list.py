"""p50/p99 of ``GET /conversation`` (the live inbox's list) at 10k, 100k and 1M messages.

    .venv/bin/python -m bench.inbox_list                      # SQLite, a fresh temp file
    .venv/bin/python -m bench.inbox_list postgresql+asyncpg://postgres@127.0.0.1:5432/bench
    .venv/bin/python -m bench.inbox_list --quick [URL]        # 1k / 10k / 30k messages

One office, 5,000 conversations in two inboxes (one in 50 pinned, one in 10 archived, a
third assigned). Messages are added in bulk, level after level, to the same conversations,
each conversation's kept last message and inbound count written as ``messages._store``
keeps them; the list is then read through the whole app (auth, routing, JSON) in process,
one request at a time. The list reads the conversations alone, so its time should not grow
with the messages: the figures say whether it does.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import insert, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.inboxes.models import Inbox, Integration
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from officehub.migrate import migrate_async
from officehub.offices import service as offices

CONVERSATIONS = 5_000
LEVELS: tuple[int, ...] = (10_000, 100_000, 1_000_000)
QUICK_LEVELS: tuple[int, ...] = (1_000, 10_000, 30_000)
REQUESTS = 200
CHUNK = 5_000


async def _bulk(session: AsyncSession, model: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), CHUNK):
        await session.execute(insert(model), rows[start : start + CHUNK])


async def seed_office(url: str) -> tuple[str, str, list[str]]:
    """The office, its key, an inbox id to filter by and the conversation ids."""
    engine = create_engine(url)
    now = utcnow()
    async with create_sessionmaker(engine)() as session:
        office = await offices.create_office(session, "Bench inbox")
        key = (await offices.create_api_key(session, office.id, "bench")).key
        inboxes = [Inbox(office_id=office.id, name=n) for n in ("Família", "Trabalhista")]
        session.add_all(inboxes)
        await session.flush()
        channels = [
            Integration(office_id=office.id, inbox_id=i.id, type="WEBCHAT", name=i.name)
            for i in inboxes
        ]
        session.add_all(channels)
        await session.flush()
        contacts: list[dict[str, Any]] = []
        conversations: list[dict[str, Any]] = []
        for n in range(CONVERSATIONS):
            contact_id = new_id()
            contacts.append(
                {
                    "id": contact_id,
                    "office_id": office.id,
                    "name": f"Pessoa {n}",
                    "search_name": f"pessoa {n}",
                    "phone": f"+55119{n:08d}",
                    "is_blocked": False,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            channel = channels[n % 2]
            created = now - timedelta(days=30, minutes=n)
            conversations.append(
                {
                    "id": new_id(),
                    "office_id": office.id,
                    "person_id": contact_id,
                    "inbox_id": channel.inbox_id,
                    "integration_id": channel.id,
                    "status": "OPEN",
                    "priority": "MEDIUM",
                    "is_fixed": n % 50 == 0,
                    "is_archived": n % 10 == 5,
                    "sorted_at": created,
                    "inbound_count": 0,
                    "inbound_read": 0,
                    "created_at": created,
                    "updated_at": created,
                }
            )
        await _bulk(session, Contact, contacts)
        await _bulk(session, Conversation, conversations)
        await session.commit()
    await engine.dispose()
    return key, inboxes[0].id, [c["id"] for c in conversations]


async def add_messages(url: str, office_key: str, conversation_ids: list[str], count: int) -> None:
    """``count`` more messages spread over the conversations, newest last; each
    conversation's kept columns set to its newest one, as ``_store`` keeps them."""
    engine = create_engine(url)
    rnd = random.Random(count)
    now = utcnow()
    async with create_sessionmaker(engine)() as session:
        office_id = await session.scalar(
            text("SELECT office_id FROM conversations WHERE id = :c"),
            {"c": conversation_ids[0]},
        )
        last: dict[str, dict[str, Any]] = {}
        inbound: dict[str, int] = {}
        rows: list[dict[str, Any]] = []
        for n in range(count):
            conversation_id = rnd.choice(conversation_ids)
            at = now - timedelta(seconds=count - n)
            direction = "INBOUND" if n % 3 else "OUTBOUND"
            row = {
                "id": new_id(),
                "office_id": office_id,
                "conversation_id": conversation_id,
                "direction": direction,
                "type": "TEXT",
                "text": f"Mensagem {n}",
                "status": "RECEIVED" if direction == "INBOUND" else "SENT",
                "created_at": at,
                "attempts": 0,
                "forwarded": False,
            }
            rows.append(row)
            last[conversation_id] = row
            inbound[conversation_id] = inbound.get(conversation_id, 0) + (n % 3 != 0)
            if len(rows) >= CHUNK:
                await session.execute(insert(Message), rows)
                rows = []
        if rows:
            await session.execute(insert(Message), rows)
        for conversation_id, row in last.items():
            await session.execute(
                update(Conversation)
                .where(Conversation.id == conversation_id)
                .values(
                    last_message_id=row["id"],
                    last_message_text=row["text"],
                    last_message_type="TEXT",
                    last_message_at=row["created_at"],
                    sorted_at=row["created_at"],
                    inbound_count=Conversation.inbound_count + inbound[conversation_id],
                )
            )
        await session.commit()
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(
            text("VACUUM ANALYZE" if conn.dialect.name == "postgresql" else "ANALYZE")
        )
    await engine.dispose()


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


QUERIES: tuple[tuple[str, Any], ...] = (
    ("all (limit 20)", lambda inbox: {}),
    ("inboxId", lambda inbox: {"inboxId": inbox}),
    ("isArchived=false", lambda inbox: {"isArchived": "false"}),
    ("unassigned, page 5", lambda inbox: {"unassigned": "true", "page": 5}),
)


async def measure(client: httpx.AsyncClient, key: str, params: dict[str, Any]) -> list[float]:
    times: list[float] = []
    for n in range(20 + REQUESTS):
        start = time.perf_counter()
        response = await client.get(
            "/conversation", params=params, headers={"x-service-api-key": key}
        )
        elapsed = (time.perf_counter() - start) * 1000
        assert response.status_code == 200, response.text
        if n >= 20:
            times.append(elapsed)
    return times


async def main(url: str, levels: tuple[int, ...]) -> None:
    await migrate_async(url)
    key, inbox_id, conversation_ids = await seed_office(url)
    settings = Settings(database_url=url, data_dir=tempfile.mkdtemp(prefix="bench-"))
    backend = url.split("+")[0].split(":")[0]
    print(f"GET /conversation on {backend}, {CONVERSATIONS:,} conversations, {REQUESTS} requests")
    print(f"{'query':<20} {'messages':>10} {'p50 ms':>7} {'p99 ms':>7}")
    stored = 0
    for level in levels:
        started = time.perf_counter()
        await add_messages(url, key, conversation_ids, level - stored)
        stored = level
        print(f"# {level:,} messages stored ({time.perf_counter() - started:.1f} s to add)")
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                for label, params_of in QUERIES:
                    p50, p99 = percentiles(await measure(client, key, params_of(inbox_id)))
                    print(f"{label:<20} {level:>10,} {p50:7.2f} {p99:7.2f}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--quick"]
    chosen = QUICK_LEVELS if "--quick" in sys.argv else LEVELS
    database = args[0] if args else os.environ.get("OFFICEHUB_BENCH_DATABASE_URL", "")
    if not database:
        folder = tempfile.mkdtemp(prefix="bench-inbox-")
        database = f"sqlite+aiosqlite:///{folder}/bench.db"
    asyncio.run(main(database, chosen))
