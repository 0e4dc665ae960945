"""Contact search figures: one office holding N contacts, searched by name and by phone.

    .venv/bin/python -m bench.contact_search [--contacts 20000] [--url DATABASE_URL] [--quick]

The default database is a fresh SQLite file in a temporary folder; ``--url`` takes an empty
database (PostgreSQL: ``postgresql+asyncpg://postgres@127.0.0.1:5432/bench``). Prints the
median and 95th percentile of each query through the service (SQL included, HTTP not).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sqlalchemy import insert, text

from officehub.contacts import service as contacts
from officehub.contacts.models import Contact
from officehub.contacts.normalize import fold
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.pagination import PageParams
from officehub.kit.timeutil import utcnow
from officehub.migrate import migrate_async
from officehub.offices import service as offices

FIRST = ["José", "Maria", "Ana", "João", "Márcia", "Luís", "Beatriz", "Conceição", "Paulo"]
LAST = ["Ávila", "Souza", "Lima", "Gonçalves", "Araújo", "Pereira", "Simões", "Brandão"]
ROUNDS = 40


async def run(url: str, count: int) -> None:
    await migrate_async(url)
    engine = create_engine(url)
    sessionmaker = create_sessionmaker(engine)
    rng = random.Random(7)
    async with sessionmaker() as session:
        office = await offices.create_office(session, "Bench")
        now = utcnow()
        rows: list[dict[str, Any]] = []
        for i in range(count):
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)} {i}"
            rows.append(
                {
                    "id": new_id(),
                    "office_id": office.id,
                    "name": name,
                    "search_name": fold(name),
                    "phone": f"+55{rng.randint(11, 99)}9{i:08d}",
                    "is_blocked": False,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        for start in range(0, count, 5000):
            await session.execute(insert(Contact), rows[start : start + 5000])
        await session.commit()
        office_id = office.id
    async with engine.connect() as conn:  # what autovacuum does after a bulk load
        await conn.execute(text("ANALYZE contacts"))
        await conn.commit()

    page = PageParams(page=1, limit=50)

    def query(**filters: Any) -> Callable[[], Awaitable[object]]:
        async def once() -> object:
            async with sessionmaker() as session:
                return await contacts.list_contacts(session, office_id, page, **filters)

        return once

    cases = {
        "list, first page": query(),
        "name 'jose avila'": query(search="jose avila"),
        "name 'CONCEIÇÃO'": query(search="CONCEIÇÃO"),
        "phone '(11) 9000'": query(search="(11) 9000"),
        "no match 'zzz'": query(search="zzz"),
    }
    print(f"{count} contacts, {engine.dialect.name}, {ROUNDS} rounds each, page of 50")
    for label, once in cases.items():
        times = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await once()
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"  {label:<20} median {statistics.median(times):7.2f} ms   p95 {p95:7.2f} ms")
    await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contacts", type=int, default=20_000)
    parser.add_argument("--url", default="")
    parser.add_argument("--quick", action="store_true", help="5,000 contacts, 10 rounds")
    args = parser.parse_args()
    if args.quick:
        global ROUNDS
        args.contacts, ROUNDS = 5_000, 10
    with tempfile.TemporaryDirectory() as folder:
        url = args.url or f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"
        asyncio.run(run(url, args.contacts))


if __name__ == "__main__":
    main()
