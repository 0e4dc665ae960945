"""DJEN sync: how long the sync of 200 lawyers takes against the local DJEN stand-in, and
the job's peak memory.

    .venv/bin/python -m bench.djen_sync [--lawyers 200] [--publications 5] [--rate 1000]
        [--database-url URL] [--no-tracemalloc]

Seeds one office with ``--lawyers`` lawyers, never synced (all due), and serves the DJEN
stand-in (``tests/djen_standin.py``) on 127.0.0.1, answering every registration with
``--publications`` intimations in the documented shape. Then runs the daily job's sync
(``Syncer.run``, batch after batch) until nothing is due, twice: the first pass stores every
publication (each with its deadline, its ticket and its event), the second (every lawyer
due again) finds only duplicates. ``--rate`` is the calls a second the sync allows itself
(the default setting is 1: 200 lawyers then take at least 200 s of pacing, whatever the
machine). Prints each pass's time, the peak memory traced (``tracemalloc``) across both
and the process's peak RSS. The stand-in runs in the same process and event loop, so its
cost is in the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, insert, select, update

from officehub.hook_subscriptions import install as install_hooks
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from officehub.publications.models import Lawyer, Publication
from officehub.publications.sync import Report, Syncer
from officehub.tickets.models import Ticket
from tests.djen_standin import running_djen

NOW = datetime(2026, 3, 30, 12, tzinfo=UTC)
"""The sync's today; the stand-in's publications are made available that day, so the
second pass (whose range starts the day before) reads them again."""


async def _seed(settings: Settings, lawyers: int) -> None:
    await migrate_async(settings.database_url)
    engine = create_engine(settings.database_url)
    try:
        async with create_sessionmaker(engine)() as session:
            office = await offices.create_office(session, "Bench")
            now = utcnow()
            rows = [
                {
                    "id": new_id(),
                    "office_id": office.id,
                    "name": f"Advogada {i}",
                    "oab_number": f"{100000 + i}",
                    "oab_uf": "SP",
                    "created_at": now,
                    "updated_at": now,
                }
                for i in range(lawyers)
            ]
            await session.execute(insert(Lawyer), rows)
            await session.commit()
    finally:
        await engine.dispose()


async def _pass(syncer: Syncer, ctx: WorkerContext) -> tuple[Report, float]:
    total, started = Report(), time.perf_counter()
    while True:
        report = await syncer.run(ctx)
        total.add(report)
        if report.lawyers == 0:
            return total, time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lawyers", type=int, default=200)
    parser.add_argument("--publications", type=int, default=5)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--database-url", default="")
    parser.add_argument(
        "--no-tracemalloc", action="store_true", help="Time without tracing (peak RSS only)"
    )
    args = parser.parse_args()
    install_hooks()  # a publication's event goes to the outbox's consumers
    with tempfile.TemporaryDirectory() as folder:
        base = Settings(database_url=args.database_url, data_dir=Path(folder))
        await _seed(base, args.lawyers)
        async with running_djen() as djen:
            djen.every, djen.every_day = args.publications, NOW.date().isoformat()
            settings = djen.settings(base, djen_requests_per_second=args.rate)
            engine = create_engine(settings.database_url)
            ctx = WorkerContext(settings, engine, create_sessionmaker(engine), clock=lambda: NOW)
            syncer = Syncer()
            if not args.no_tracemalloc:
                tracemalloc.start()
            first, first_s = await _pass(syncer, ctx)
            async with ctx.sessionmaker() as session, session.begin():
                await session.execute(update(Lawyer).values(next_sync_at=None))
            second, second_s = await _pass(syncer, ctx)
            _current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            async with ctx.sessionmaker() as session:
                stored = await session.scalar(select(func.count()).select_from(Publication))
                tickets = await session.scalar(select(func.count()).select_from(Ticket))
            await engine.dispose()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    db = "postgresql" if args.database_url.startswith("postgresql") else "sqlite"
    print(
        f"database: {db}; lawyers: {args.lawyers}; publications each: {args.publications}; "
        f"rate: {args.rate:g}/s"
    )
    print(
        f"pass 1 (all new):        {first.lawyers} lawyers in {first_s:.1f} s = "
        f"{first.lawyers / first_s:.0f}/s; {first.new} stored, {first.calls} DJEN calls"
    )
    print(
        f"pass 2 (all duplicates): {second.lawyers} lawyers in {second_s:.1f} s = "
        f"{second.lawyers / second_s:.0f}/s; {second.duplicates} duplicates, {second.new} new"
    )
    print(
        f"publications stored: {stored}; tickets: {tickets}; failed: {first.failed + second.failed}"
    )
    print(f"peak traced memory of the job: {peak / 1024 / 1024:.1f} MiB; peak RSS: {rss:.0f} MiB")


if __name__ == "__main__":
    asyncio.run(main())
