"""p50/p90 of ``GET /reports/conversations`` over 30 days, with the table small and large.

    .venv/bin/python -m bench.conversation_reports                    # SQLite, 100,000
    .venv/bin/python -m bench.conversation_reports --conversations 1000000 [URL]
    .venv/bin/python -m bench.conversation_reports --quick [URL]       # 20,000

One office's 30-day window holds the same conversations (``WINDOW``, opened, answered and
mostly closed in those days, a third under an SLA policy) at both sizes; the rest of the
table is conversations of the three years before it. The report is timed first with the
table holding 10 % of ``--conversations``, then again after bulk inserts fill it to the
whole: only the range's rows should count, so the two times should match. Requests go
through the whole app in process (auth, routing, JSON), one at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.inboxes.models import Inbox, Integration
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.migrate import migrate_async
from officehub.offices import service as offices

CHUNK = 5_000
CONTACTS = 2_000
INBOXES = 4
WINDOW_START = datetime(2026, 10, 1, 3, 0, tzinfo=UTC)  # 2026-10-01 00:00 in São Paulo
DAYS = 30


class World:
    def __init__(self, office_id: str, key: str, integrations: list[tuple[str, str]]) -> None:
        self.office_id, self.key, self.integrations = office_id, key, integrations
        self.contacts: list[str] = []


async def _bulk(session: AsyncSession, model: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), CHUNK):
        await session.execute(insert(model), rows[start : start + CHUNK])


def _row(world: World, rnd: random.Random, created: datetime) -> dict[str, Any]:
    inbox_id, integration_id = rnd.choice(world.integrations)
    inbound = created + timedelta(seconds=rnd.randrange(0, 60))
    response = inbound + timedelta(seconds=rnd.randrange(30, 4 * 3600))
    closed = response + timedelta(seconds=rnd.randrange(60, 5 * 86400))
    policy = rnd.random() < 0.33
    return {
        "id": new_id(),
        "office_id": world.office_id,
        "person_id": rnd.choice(world.contacts),
        "inbox_id": inbox_id,
        "integration_id": integration_id,
        "status": "CLOSED",
        "priority": "MEDIUM",
        "created_at": created,
        "updated_at": closed,
        "sorted_at": closed,
        "first_inbound_at": inbound,
        "first_response_at": response,
        "resolution_started_at": inbound,
        "closed_at": closed,
        "sla_policy_id": "cbenchpolicy0000000000001" if policy else None,
        "resolution_breached_at": closed if policy and rnd.random() < 0.2 else None,
    }


async def seed_office(url: str) -> World:
    engine = create_engine(url)
    now = utcnow()
    async with create_sessionmaker(engine)() as session:
        office = await offices.create_office(session, "Bench reports")
        key = (await offices.create_api_key(session, office.id, "bench")).key
        integrations = []
        for n in range(INBOXES):
            inbox = Inbox(office_id=office.id, name=f"Caixa {n + 1}")
            session.add(inbox)
            await session.flush()
            integration = Integration(
                office_id=office.id, inbox_id=inbox.id, type="WHATSAPP", name=f"WhatsApp {n}"
            )
            session.add(integration)
            await session.flush()
            integrations.append((inbox.id, integration.id))
        world = World(office.id, key, integrations)
        contacts = [
            {
                "id": new_id(),
                "office_id": office.id,
                "name": f"Pessoa {n}",
                "search_name": f"pessoa {n}",
                "phone": f"+55119{n:08d}",
                "is_blocked": False,
                "created_at": now,
                "updated_at": now,
            }
            for n in range(CONTACTS)
        ]
        await _bulk(session, Contact, contacts)
        world.contacts = [str(c["id"]) for c in contacts]
        await session.commit()
    await engine.dispose()
    return world


async def add_conversations(url: str, world: World, count: int, *, window: bool) -> None:
    """``count`` conversations opened in the window, or in the three years before it."""
    engine = create_engine(url)
    rnd = random.Random(count * (2 if window else 1))
    async with create_sessionmaker(engine)() as session:
        for start in range(0, count, CHUNK * 4):
            rows = []
            for _ in range(min(CHUNK * 4, count - start)):
                if window:
                    offset = timedelta(seconds=rnd.randrange(0, (DAYS - 6) * 86400))
                    rows.append(_row(world, rnd, WINDOW_START + offset))
                else:
                    offset = timedelta(seconds=rnd.randrange(7 * 86400, 3 * 365 * 86400))
                    rows.append(_row(world, rnd, WINDOW_START - offset))
            await _bulk(session, Conversation, rows)
            await session.commit()
    await engine.dispose()


async def analyze(url: str) -> None:
    engine = create_engine(url)
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(
            text("VACUUM ANALYZE" if conn.dialect.name == "postgresql" else "ANALYZE")
        )
    await engine.dispose()


async def measure(url: str, world: World, requests: int) -> dict[str, tuple[float, float]]:
    settings = Settings(database_url=url, data_dir=tempfile.mkdtemp(prefix="bench-"))
    app = create_app(settings)
    last = (WINDOW_START + timedelta(days=DAYS - 1)).date()
    found: dict[str, tuple[float, float]] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for group in ("day", "inbox"):
                params = {"from": "2026-10-01", "to": last.isoformat(), "groupBy": group}
                times = []
                for n in range(requests + 3):
                    started = time.perf_counter()
                    r = await client.get(
                        "/reports/conversations",
                        params=params,
                        headers={"x-service-api-key": world.key},
                    )
                    assert r.status_code == 200, r.text
                    if n >= 3:
                        times.append((time.perf_counter() - started) * 1000)
                times.sort()
                found[group] = (statistics.median(times), times[int(len(times) * 0.9) - 1])
    return found


async def main(url: str, conversations: int, window: int, requests: int) -> None:
    await migrate_async(url)
    world = await seed_office(url)
    await add_conversations(url, world, window, window=True)
    small = max(conversations // 10, window)
    started = time.perf_counter()
    await add_conversations(url, world, small - window, window=False)
    print(f"seeded {small:>9,} conversations in {time.perf_counter() - started:6.1f} s")
    await analyze(url)
    before = await measure(url, world, requests)
    started = time.perf_counter()
    await add_conversations(url, world, conversations - small, window=False)
    print(f"seeded {conversations:>9,} conversations in {time.perf_counter() - started:6.1f} s")
    await analyze(url)
    after = await measure(url, world, requests)
    backend = url.split("+")[0].split(":")[0]
    print(
        f"\nGET /reports/conversations on {backend}, {DAYS} days holding {window:,} "
        f"conversations, {requests} requests each"
    )
    print(f"{'groupBy':<8} {'table':>10} {'p50 ms':>8} {'p90 ms':>8}  large/small p50")
    for group in before:
        for size, (p50, p90) in ((small, before[group]), (conversations, after[group])):
            ratio = f"  {p50 / before[group][0]:.2f}x" if size == conversations else ""
            print(f"{group:<8} {size:>10,} {p50:8.1f} {p90:8.1f}{ratio}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default=os.environ.get("OFFICEHUB_BENCH_DATABASE_URL"))
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=3_000, help="conversations in the range")
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="20,000 conversations, 5 requests")
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.window, args.requests = 20_000, 1_000, 5
    target = args.url or f"sqlite+aiosqlite:///{tempfile.mkdtemp(prefix='bench-')}/bench.db"
    asyncio.run(main(target, args.conversations, args.window, args.requests))
