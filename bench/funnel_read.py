"""p50/p99 of ``GET /funnel/{id}`` for a 10-column funnel of 1,000 and of 100,000 cards.

    .venv/bin/python -m bench.funnel_read                      # SQLite, a fresh temp file
    .venv/bin/python -m bench.funnel_read postgresql+asyncpg://postgres@127.0.0.1:5432/bench
    .venv/bin/python -m bench.funnel_read --quick [URL]      # 1,000 / 10,000 / 30,000 cards

The database (``argv[1]`` or ``OFFICEHUB_BENCH_DATABASE_URL``) is migrated and seeded with
bulk inserts: both funnels live in the same tables, so the small funnel is also read while
the table holds 101,000 cards. Requests go through the whole app (auth, routing, JSON) in
process over httpx's ASGI transport, one at a time, alternating the two funnels so both
see the same machine load.
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
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.contacts.models import Contact
from officehub.crm.models import Card, Funnel, FunnelColumn
from officehub.inboxes.models import Inbox
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from officehub.users.models import User

COLUMNS = 10
SIZES: tuple[int, ...] = (1_000, 100_000)
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
                "email_key": f"user{i}.{office.id}@example.com".lower(),
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


async def analyze(url: str) -> None:
    """What autovacuum (PostgreSQL) or ``PRAGMA optimize`` would do after a bulk load: the
    count rows were updated once per card inserted, leaving dead versions behind."""
    engine = create_engine(url)
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(
            text("VACUUM ANALYZE" if conn.dialect.name == "postgresql" else "ANALYZE")
        )
    await engine.dispose()


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


async def measure(
    client: httpx.AsyncClient,
    funnels: dict[int, tuple[str, str, list[str]]],
    params_of: Any,
) -> dict[int, list[float]]:
    """Alternates the sizes request by request, so both see the same machine load."""
    times: dict[int, list[float]] = {size: [] for size in funnels}
    for n in range(20 + REQUESTS):
        for size, (key, funnel_id, users) in funnels.items():
            start = time.perf_counter()
            response = await client.get(
                f"/funnel/{funnel_id}",
                params=params_of(users),
                headers={"x-service-api-key": key},
            )
            elapsed = (time.perf_counter() - start) * 1000
            assert response.status_code == 200, response.text
            if n >= 20:
                times[size].append(elapsed)
    return times


QUERIES: tuple[tuple[str, Any], ...] = (
    ("default (limit 20)", lambda users: {}),
    ("limit 20, page 5", lambda users: {"page": 5}),
    ("limit 100", lambda users: {"limit": 100}),
    ("userIds (2 owners)", lambda users: {"userIds": ",".join(users[:2])}),
)


async def main(url: str) -> None:
    await migrate_async(url)
    funnels = {}
    for size in SIZES:
        started = time.perf_counter()
        funnels[size] = await seed(url, size)
        print(f"seeded {size:>7,} cards in {time.perf_counter() - started:5.1f} s")
    await analyze(url)
    settings = Settings(database_url=url, data_dir=tempfile.mkdtemp(prefix="bench-"))
    app = create_app(settings)
    backend = url.split("+")[0].split(":")[0]
    print(f"\nGET /funnel/{{id}} on {backend}, {COLUMNS} columns, {REQUESTS} requests each")
    print(f"{'query':<22} {'cards':>8} {'p50 ms':>7} {'p99 ms':>7}  large/small p50")
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for label, params_of in QUERIES:
                times = await measure(client, funnels, params_of)
                stats = [percentiles(times[size]) for size in SIZES]
                for size, (p50, p99) in zip(SIZES, stats, strict=True):
                    ratio = f"  {p50 / stats[0][0]:.2f}x" if size == SIZES[-1] else ""
                    print(f"{label:<22} {size:>8,} {p50:7.2f} {p99:7.2f}{ratio}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--quick" in args:  # make bench: three sizes up to 30,000 cards, 40 requests each
        args.remove("--quick")
        SIZES, REQUESTS = (1_000, 10_000, 30_000), 40
    target = args[0] if args else os.environ.get("OFFICEHUB_BENCH_DATABASE_URL")
    if not target:
        target = f"sqlite+aiosqlite:///{tempfile.mkdtemp(prefix='bench-')}/bench.db"
    asyncio.run(main(target))
