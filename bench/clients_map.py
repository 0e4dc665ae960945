"""The clients map on PostgreSQL: cold (computed) and cached answer times.

Creates a scratch database on the PostgreSQL server of ``BENCH_DATABASE_URL`` (default the
test server), migrates it, fills one office with N conversations (default 300,000, so the run stays
under a minute on the shared machine; pass 1000000 for the issue's size) of
N/5 contacts spread over the 67 DDDs (one contact in 20 foreign), then times
``GET /homepage-v2/get-clients-map`` through the app. Goal: cold under 1 s.

    .venv/bin/python -m bench.clients_map [conversations]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
import httpx
from sqlalchemy.engine import make_url

from officehub.app import create_app
from officehub.dashboard.service import states
from officehub.kit.config import Settings
from officehub.migrate import migrate_async
from officehub.offices import service as offices

BASE = os.environ.get("BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


def dsn(url: str, database: str | None = None) -> str:
    parsed = make_url(url).set(drivername="postgresql")
    if database:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)


async def fill(conn: asyncpg.Connection, office_id: str, conversations: int) -> None:
    ddds = [d for s in states() for d in s.ddds]
    people = max(1, conversations // 5)
    await conn.execute(
        "INSERT INTO inboxes (id, office_id, name, created_at, updated_at) "
        "VALUES ('cbenchinbox000000000000000', $1, 'Bench', now(), now())",
        office_id,
    )
    await conn.execute(
        "INSERT INTO integrations (id, office_id, inbox_id, type, name, device_id, created_at,"
        " updated_at) VALUES ('cbenchintegration00000000', $1, 'cbenchinbox000000000000000',"
        " 'WHATSAPP', 'Bench', NULL, now(), now())",
        office_id,
    )
    await conn.execute(
        """
        INSERT INTO contacts (id, office_id, name, search_name, phone, ddd, is_blocked,
                              created_at, updated_at)
        SELECT 'cp' || lpad(i::text, 23, '0'), $1, 'P' || i, 'p' || i,
               CASE WHEN i % 20 = 0 THEN '+1202' || lpad(i::text, 7, '0')
                    ELSE '+55' || ($2::text[])[1 + i % 67] || '9' || lpad(i::text, 8, '0') END,
               CASE WHEN i % 20 = 0 THEN NULL ELSE ($2::text[])[1 + i % 67] END,
               false, now(), now()
        FROM generate_series(1, $3) AS i
        """,
        office_id,
        ddds,
        people,
    )
    await conn.execute(
        """
        INSERT INTO conversations (id, office_id, person_id, inbox_id, integration_id, status,
                                   priority, created_at, updated_at)
        SELECT 'cv' || lpad(i::text, 23, '0'), $1, 'cp' || lpad((1 + i % $3)::text, 23, '0'),
               'cbenchinbox000000000000000', 'cbenchintegration00000000',
               -- one open conversation per contact and channel (a unique index holds it)
               CASE WHEN i <= $3 THEN 'OPEN' ELSE 'CLOSED' END, 'MEDIUM', now(), now()
        FROM generate_series(1, $2) AS i
        """,
        office_id,
        conversations,
        people,
    )
    await conn.execute("ANALYZE")


async def main(conversations: int) -> None:
    name = f"officehub_bench_map_{os.getpid()}"
    admin = await asyncpg.connect(dsn(BASE))
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(BASE).set(database=name).render_as_string(hide_password=False)
    try:
        await migrate_async(url)
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(database_url=url, data_dir=Path(tmp), signing_key="bench")
            app = create_app(settings)
            async with app.router.lifespan_context(app):
                async with app.state.sessionmaker() as s:
                    office = await offices.create_office(s, "Bench")
                    key = (await offices.create_api_key(s, office.id, "bench")).key
                    await s.commit()
                conn = await asyncpg.connect(dsn(BASE, name))
                started = time.perf_counter()
                await fill(conn, office.id, conversations)
                filled = time.perf_counter() - started
                await conn.close()
                transport = httpx.ASGITransport(app=app)
                headers = {"x-service-api-key": key}
                async with httpx.AsyncClient(transport=transport, base_url="http://b") as client:
                    cold: list[float] = []
                    cached: list[float] = []
                    for _ in range(5):
                        cache = getattr(app.state, "clients_map_cache", None)
                        if cache is not None:
                            cache.entries.clear()
                        t = time.perf_counter()
                        r = await client.get("/homepage-v2/get-clients-map", headers=headers)
                        cold.append(time.perf_counter() - t)
                        assert r.status_code == 200
                        t = time.perf_counter()
                        await client.get("/homepage-v2/get-clients-map", headers=headers)
                        cached.append(time.perf_counter() - t)
                total = r.json()["data"]["total"]
        print(
            f"clients map, {conversations:,} conversations ({total:,} with a Brazilian DDD), "
            f"PostgreSQL (filled in {filled:.1f} s): cold median "
            f"{statistics.median(cold) * 1000:.0f} ms (min {min(cold) * 1000:.0f}), "
            f"cached median {statistics.median(cached) * 1000:.1f} ms"
        )
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["--quick"]:
        asyncio.run(main(20_000))
    else:
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300_000))
