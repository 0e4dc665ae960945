"""Concurrent conversation writes in one inbox through a real server (PostgreSQL): what the
list's kept totals (``conversation_counts``, migration 0038: a trigger per counted change)
cost the writes that change them.

    .venv/bin/python -m bench.conversation_writes [--conversations 2000] [--concurrency 32]
        [--database officehub_bench_conversation_writes] [--pool-size 20]

Makes the database afresh (dropped at the end), migrated by the code on ``PYTHONPATH`` (so
main's code runs without the counts), one office, one inbox with one integration, and
``--conversations`` contacts. Then ``uvicorn`` serves the app in its own process and
``--concurrency`` clients at a time: open a conversation for each contact (``POST
/conversation``: one new row in the same inbox and key), then close and assign each
(``PATCH``: a move between two keys). Printed: each phase's p50/p99 in ms and its
requests per second, then the list's total checked against the count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import httpx

from bench.databases import driver_url, drop_database, fresh_database
from bench.server import served
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.offices import service as offices


async def prepare(database: str, contacts: int) -> tuple[str, str, str, list[str], str]:
    """A fresh database with the office: (url, key, inbox, contacts, integration)."""
    url = await fresh_database(database)
    from tests import factories

    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as s:
            office = await offices.create_office(s, "Bench writes")
            key = (await offices.create_api_key(s, office.id, "bench")).key
            inbox = await factories.make_inbox(s, office.id)
            integration = await factories.make_integration(s, office.id, inbox.id)
            user = await factories.make_user(s, office.id)
            await s.commit()
            office_id, inbox_id, integration_id = office.id, inbox.id, integration.id
            user_id = user.id
    finally:
        await engine.dispose()
    conn = await asyncpg.connect(driver_url(database))
    try:
        await conn.execute(
            "INSERT INTO contacts (id, office_id, name, search_name, phone, is_blocked,"
            " created_at, updated_at)"
            " SELECT 'cwr' || lpad(i::text, 22, '0'), $1, 'Cliente ' || i, 'cliente ' || i,"
            " '+5511' || (900000000 + i)::text, false, now(), now()"
            " FROM generate_series(1, $2) AS i",
            office_id,
            contacts,
        )
        people = [r["id"] for r in await conn.fetch("SELECT id FROM contacts ORDER BY id")]
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return url, key, inbox_id + " " + integration_id, people, user_id


async def phase(
    concurrency: int, count: int, request: Callable[[int], Awaitable[httpx.Response]]
) -> tuple[list[float], float]:
    """``count`` requests, ``concurrency`` in flight: each one's ms and the wall seconds."""
    times: list[float] = []
    next_one = iter(range(count))

    async def worker() -> None:
        for i in next_one:
            started = time.perf_counter()
            answer = await request(i)
            times.append((time.perf_counter() - started) * 1000)
            assert answer.status_code < 300, (answer.status_code, answer.text[:300])

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return times, time.perf_counter() - started


def line(label: str, times: list[float], seconds: float) -> str:
    ordered = sorted(times)
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)]
    return (
        f"| {label} | {statistics.median(ordered):.1f} | {p99:.1f} | {len(ordered) / seconds:.0f} |"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--database", default="officehub_bench_conversation_writes")
    parser.add_argument(
        "--pool-size", type=int, default=20, help="the server's PostgreSQL connections"
    )
    args = parser.parse_args()
    url, key, ids, people, user_id = await prepare(args.database, args.conversations)
    inbox_id, integration_id = ids.split()
    headers = {"x-service-api-key": key}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                "OFFICEHUB_DATABASE_URL": url,
                "OFFICEHUB_DATA_DIR": str(Path(tmp) / "data"),
                "OFFICEHUB_SIGNING_KEY": "bench-signing-key",
                "OFFICEHUB_LOG_LEVEL": "WARNING",
                "OFFICEHUB_DB_POOL_SIZE": str(args.pool_size),
            }
            Settings(database_url=url, data_dir=Path(tmp), signing_key="x")  # env is valid
            async with served(env) as (base_url, _pid):
                limits = httpx.Limits(max_connections=args.concurrency)
                async with httpx.AsyncClient(
                    base_url=base_url, limits=limits, timeout=60, headers=headers
                ) as client:
                    opened: list[str] = [""] * len(people)

                    async def open_one(i: int) -> httpx.Response:
                        body = {
                            "personId": people[i],
                            "inboxId": inbox_id,
                            "integrationId": integration_id,
                        }
                        answer = await client.post("/conversation", json=body)
                        opened[i] = answer.json().get("id", "")
                        return answer

                    async def close_one(i: int) -> httpx.Response:
                        body = {"status": "CLOSED", "assignedUserId": user_id}
                        return await client.patch(f"/conversation/{opened[i]}", json=body)

                    created = await phase(args.concurrency, len(people), open_one)
                    changed = await phase(args.concurrency, len(people), close_one)
                    total = (await client.get("/conversation", params={"status": "CLOSED"})).json()
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(
            f"{len(people)} conversations, {args.concurrency} in flight, one inbox, "
            f"a pool of {args.pool_size} (+{args.pool_size // 2})\n\n"
            "| phase | p50 ms | p99 ms | requests/s |\n|---|---:|---:|---:|"
        )
        print(line("open (POST /conversation)", *created))
        print(line("close and assign (PATCH)", *changed))
        assert total["totalResults"] == len(people), total["totalResults"]
    finally:
        await drop_database(args.database)


if __name__ == "__main__":
    asyncio.run(main())
