"""Case watch: how many watched cases per second the watcher checks against the local
DataJud stand-in, and the job's peak memory.

    .venv/bin/python -m bench.case_watch [--cases 10000] [--movements 5] [--batch 200]
        [--court-concurrency 8] [--database-url URL] [--no-tracemalloc]

Seeds one office with ``--cases`` watched cases spread over four courts (tjsp, trf1,
trt2, tjrj), all due, and serves the DataJud stand-in (``tests/datajud_standin.py``) on
127.0.0.1, answering every number with ``--movements`` movements. Then runs the watcher
(the periodic job's ``Watcher.run``, batch after batch) until nothing is due, twice: the
first pass stores every case's history, the second finds nothing new. Prints cases per
second for each pass and the peak memory traced (``tracemalloc``) across the job, plus
the process's peak RSS. Tracing slows Python down: ``--no-tracemalloc`` times without
it. The stand-in runs in the same process and event loop, so its cost is in the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, insert, select, update

from officehub.cases.models import Case, CaseMovement
from officehub.cases.numbers import check_digits
from officehub.cases.watch import Watcher
from officehub.contacts.models import Contact
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from tests.datajud_standin import movement, running_datajud

COURTS = [("8", "26", "tjsp"), ("4", "01", "trf1"), ("5", "02", "trt2"), ("8", "19", "tjrj")]


def _number(i: int) -> tuple[str, str]:
    segment, court, alias = COURTS[i % len(COURTS)]
    sequence, year, origin = f"{i:07d}", "2025", "0001"
    dd = check_digits(sequence, year, segment, court, origin)
    return f"{sequence}{dd}{year}{segment}{court}{origin}", alias


async def _seed(settings: Settings, cases: int) -> None:
    await migrate_async(settings.database_url)
    engine = create_engine(settings.database_url)
    try:
        async with create_sessionmaker(engine)() as session:
            office = await offices.create_office(session, "Bench")
            now = utcnow()
            contacts = [
                {
                    "id": new_id(),
                    "office_id": office.id,
                    "name": f"Cliente {i}",
                    "search_name": f"cliente {i}",
                    "phone": f"+55119{i:08d}",
                    "is_blocked": False,
                    "created_at": now,
                    "updated_at": now,
                }
                for i in range(cases)
            ]
            rows = []
            for i, contact in enumerate(contacts):
                digits, alias = _number(i)
                rows.append(
                    {
                        "id": new_id(),
                        "office_id": office.id,
                        "person_id": contact["id"],
                        "number": digits,
                        "court": alias,
                        "watch": True,
                        "next_check_at": now - timedelta(seconds=1),
                        "created_at": now,
                        "updated_at": now,
                    }
                )
            for start in range(0, cases, 1000):
                await session.execute(insert(Contact), contacts[start : start + 1000])
                await session.execute(insert(Case), rows[start : start + 1000])
            await session.commit()
    finally:
        await engine.dispose()


async def _pass(watcher: Watcher, ctx: WorkerContext) -> tuple[int, float]:
    checked, started = 0, time.perf_counter()
    while True:
        report = await watcher.run(ctx)
        checked += report.checked
        if report.checked + report.put_off + report.failed == 0:
            return checked, time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--movements", type=int, default=5)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--court-concurrency", type=int, default=8)
    parser.add_argument("--database-url", default="")
    parser.add_argument(
        "--no-tracemalloc", action="store_true", help="Time without tracing (peak RSS only)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Settings(
            database_url=args.database_url,
            data_dir=Path(folder),
            datajud_batch_size=args.batch,
            datajud_court_concurrency=args.court_concurrency,
        )
        await _seed(base, args.cases)
        async with running_datajud() as datajud:
            datajud.every = [
                movement(100 + k, f"Movimento {k}", f"2025-0{1 + k % 9}-1{k % 10}T10:00:00")
                for k in range(args.movements)
            ]
            settings = datajud.settings(base)
            engine = create_engine(settings.database_url)
            ctx = WorkerContext(settings, engine, create_sessionmaker(engine))
            watcher = Watcher()
            if not args.no_tracemalloc:
                tracemalloc.start()
            first, first_s = await _pass(watcher, ctx)
            async with ctx.sessionmaker() as session, session.begin():
                await session.execute(update(Case).values(next_check_at=utcnow()))
            second, second_s = await _pass(watcher, ctx)
            _current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            async with ctx.sessionmaker() as session:
                stored = await session.scalar(select(func.count()).select_from(CaseMovement))
            await engine.dispose()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    db = "postgresql" if args.database_url.startswith("postgresql") else "sqlite"
    print(f"database: {db}; cases: {args.cases}; movements each: {args.movements}")
    print(f"pass 1 (history stored): {first} cases in {first_s:.1f} s = {first / first_s:.0f}/s")
    print(
        f"pass 2 (nothing new):    {second} cases in {second_s:.1f} s = {second / second_s:.0f}/s"
    )
    print(f"movements stored: {stored}; DataJud requests: {len(datajud.requests)}")
    print(f"peak traced memory of the job: {peak / 1024 / 1024:.1f} MiB; peak RSS: {rss:.0f} MiB")


if __name__ == "__main__":
    asyncio.run(main())
