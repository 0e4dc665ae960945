"""p50/p99 of ``GET /funnel/{id}`` for a 10-column funnel of 1,000 and of 100,000 cards.

    .venv/bin/python -m bench.funnel_read                      # SQLite, a fresh temp file
    .venv/bin/python -m bench.funnel_read postgresql+asyncpg://postgres@127.0.0.1:5432/bench

The database (``argv[1]`` or ``OFFICEHUB_BENCH_DATABASE_URL``) is migrated and seeded with
bulk inserts: both funnels live in the same tables, so the small funnel is also read while
the table holds 101,000 cards. Requests go through the whole app (auth, routing, JSON) in
process over httpx's ASGI transport, one at a time.
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
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.config import Settings
from officehub.contacts.models import Contact
from officehub.crm.models import Card, Funnel, FunnelColumn
from officehub.db import create_engine, create_sessionmaker
from officehub.ids import new_id
from officehub.inboxes.models import Inbox
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from officehub.timeutil import utcnow
from officehub.users.models import User

COLUMNS = 10
SIZES = (1_000, 100_000)
REQUESTS = 300
CHUNK = 5_000


async def _bulk(session: AsyncSession, model: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), CHUNK):
        await session.execute(insert(model), rows[start : start + CHUNK])


async def seed(url: str, cards: int) -> tuple[str, str, list[str]]:
    """An office with a key, 5 users and a funnel of COLUMNS columns holding ``cards``."""
    engine = create_engine(url)
    rnd = random.Random(cards)
    now = utcnow()
    async with create_sessionmaker(engine)() as session:
        office = await offices.create_office(session, f"Bench {cards}")
        key = (await offices.create_api_key(session, office.id, "bench")).key
        inbox = Inbox(office_id=office.id, name="Atendimento")
        session.add(inbox)
        await session.flush()
        users: list[dict[str, Any]] = [
            {
                "id": new_id(),
                "office_id": office.id,
                "name": f"User {i}",
                "email": f"user{i}.{office.id}@example.com",
                "role": "AGENT",
                "created_at": now,
                "updated_at": now,
            }
            for i in range(5)
        ]
        await _bulk(session, User, users)
        funnel = Funnel(office_id=office.id, inbox_id=inbox.id, name="Vendas")
        session.add(funnel)
        await session.flush()
        columns = [
            {
                "id": new_id(),
                "office_id": office.id,
                "funnel_id": funnel.id,
                "name": f"Etapa {i + 1}",
                "color": "#9E9E9E",
                "position": i,
                "kind": "NORMAL",
                "show_badge_progress": False,
                "created_at": now,
                "updated_at": now,
            }
            for i in range(COLUMNS)
        ]
        await _bulk(session, FunnelColumn, columns)
        contacts: list[dict[str, Any]] = []
        rows: list[dict[str, Any]] = []
        for n in range(cards):
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
            changed = now - timedelta(minutes=rnd.randrange(200_000))
            rows.append(
                {
                    "id": new_id(),
                    "office_id": office.id,
                    "funnel_id": funnel.id,
                    "column_id": columns[n % COLUMNS]["id"],
                    "person_id": contact_id,
                    "user_id": rnd.choice([*[u["id"] for u in users], None]),
                    "custom_fields": [{"id": "cf1", "name": "Processo", "type": "text"}],
                    "column_changed_at": changed,
                    "created_at": changed,
                    "updated_at": changed,
                }
            )
        await _bulk(session, Contact, contacts)
        await _bulk(session, Card, rows)
        await session.commit()
    await engine.dispose()
    return key, funnel.id, [u["id"] for u in users]


async def measure(
    client: httpx.AsyncClient, key: str, path: str, params: dict[str, Any]
) -> tuple[float, float]:
    headers = {"x-service-api-key": key}
    for _ in range(20):
        assert (await client.get(path, params=params, headers=headers)).status_code == 200
    times = []
    for _ in range(REQUESTS):
        start = time.perf_counter()
        response = await client.get(path, params=params, headers=headers)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


async def main(url: str) -> None:
    await migrate_async(url)
    funnels = {}
    for size in SIZES:
        started = time.perf_counter()
        funnels[size] = await seed(url, size)
        print(f"seeded {size:>7,} cards in {time.perf_counter() - started:5.1f} s")
    settings = Settings(database_url=url, data_dir=tempfile.mkdtemp(prefix="bench-"))
    app = create_app(settings)
    backend = url.split("+")[0].split(":")[0]
    print(f"\nGET /funnel/{{id}} on {backend}, {COLUMNS} columns, {REQUESTS} requests each")
    print(f"{'cards':>8}  {'query':<24} {'p50 ms':>7} {'p99 ms':>7}")
    results: dict[tuple[int, str], float] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for size in SIZES:
                key, funnel_id, users = funnels[size]
                for label, params in (
                    ("default (limit 20)", {}),
                    ("limit 100", {"limit": 100}),
                    ("limit 20, page 10", {"page": 10}),
                    ("userIds (2 owners)", {"userIds": ",".join(users[:2])}),
                ):
                    p50, p99 = await measure(client, key, f"/funnel/{funnel_id}", params)
                    results[(size, label)] = p50
                    print(f"{size:>8,}  {label:<24} {p50:7.2f} {p99:7.2f}")
    small, large = SIZES
    ratio = results[(large, "default (limit 20)")] / results[(small, "default (limit 20)")]
    print(f"\nlarge/small p50 (default query): {ratio:.2f}x")


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OFFICEHUB_BENCH_DATABASE_URL")
    if not target:
        target = f"sqlite+aiosqlite:///{tempfile.mkdtemp(prefix='bench-')}/bench.db"
    asyncio.run(main(target))
