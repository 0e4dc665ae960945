"""What the audit trail costs a hot read, and what writing it costs.

    .venv/bin/python -m bench.audit_trail [--quick] [--requests 2000] [--url URL]

The app in process, one request at a time (as ``bench.request_cpu``), on two audited reads
(``GET /people/{id}``, ``GET /conversation/{id}/messages``): CPU and wall µs per request and
SQL statements per request with the trail's request layer, then with it removed. Then the
recorder's flush: entries per second and statements per batch of 1000 entries of one office.
SQLite in a temporary directory by default; ``--url`` for a PostgreSQL database.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import event

from officehub.app import create_app
from officehub.audit.middleware import AuditMiddleware
from officehub.audit.recorder import AuditRecorder, Pending
from officehub.kit.actor import Actor
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.migrate import migrate_async
from tests import factories as f
from tests.helpers import make_office

WARM_UP = 200


async def _reads(settings: Settings, requests: int, audited: bool) -> list[str]:
    # The buffer is written after the timed loop (flushed by hand), so every statement
    # counted is a request's own.
    app = create_app(settings.model_copy(update={"audit_flush_seconds": 3600}))
    if not audited:
        trail: object = AuditMiddleware
        app.user_middleware = [m for m in app.user_middleware if m.cls is not trail]
    lines = []
    async with app.router.lifespan_context(app):
        office = await make_office(app, "Audit bench")
        async with app.state.sessionmaker() as s:
            inbox = await f.make_inbox(s, office.id)
            integration = await f.make_integration(s, office.id, inbox.id)
            contact = await f.make_contact(s, office.id)
            conversation = await f.make_conversation(s, office.id, contact.id, integration)
            await s.commit()
        statements: list[str] = []

        def count(*args: Any) -> None:
            statements.append(args[2])

        engine = app.state.engine.sync_engine
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as c:
            for label, url in (
                ("GET /people/{id}", f"/people/{contact.id}"),
                ("GET /conversation/{id}/messages", f"/conversation/{conversation.id}/messages"),
            ):
                for _ in range(WARM_UP):
                    await c.get(url, headers=office.headers)
                await app.state.audit.flush()
                statements.clear()
                event.listen(engine, "before_cursor_execute", count)
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(requests):
                    r = await c.get(url, headers=office.headers)
                    assert r.status_code == 200, r.text
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                event.remove(engine, "before_cursor_execute", count)
                await app.state.audit.flush()
                per_request = len(statements) / requests
                trail = "on" if audited else "off"
                lines.append(
                    f"| `{label}` | {trail} | {cpu / requests * 1e6:,.0f} | "
                    f"{wall / requests * 1e6:,.0f} | {per_request:.2f} |"
                )
    return lines


async def _flush(settings: Settings, batches: int) -> str:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        office = await make_office(app, "Audit flush bench")
        recorder = AuditRecorder(app.state.sessionmaker, 3600)
        actor = Actor("apikey", office.key_id, "127.0.0.1")
        statements: list[str] = []
        engine = app.state.engine.sync_engine

        def count(*args: Any) -> None:
            statements.append(args[2])

        event.listen(engine, "before_cursor_execute", count)
        wall = time.perf_counter()
        for _ in range(batches):
            for _ in range(1000):
                recorder.record(
                    Pending(office.id, utcnow(), actor, "getContact", "contact", None, None)
                )
            await recorder.flush()
        wall = time.perf_counter() - wall
        event.remove(engine, "before_cursor_execute", count)
    return (
        f"flush: {batches * 1000 / wall:,.0f} entries/s in batches of 1000; "
        f"{len(statements) / batches:.0f} statements a batch"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 timed requests a route")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--url", default="", help="a PostgreSQL URL (default: SQLite)")
    args = parser.parse_args()
    requests = 300 if args.quick else args.requests
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite+aiosqlite:///{Path(tmp) / 'audit.db'}"
        await migrate_async(url)
        settings = Settings(
            database_url=url,
            data_dir=Path(tmp) / "data",
            signing_key="bench",
            rate_limits="1000000/minute",
        )
        lines = await _reads(settings, requests, audited=True)
        lines += await _reads(settings, requests, audited=False)
        flushed = await _flush(settings, 3 if args.quick else 10)
    print(f"{requests} sequential requests a route, in process, after {WARM_UP} to warm up")
    print()
    print("| route | trail | CPU µs/request | wall µs/request | statements/request |")
    print("|---|---|---|---|---|")
    for line in sorted(lines):
        print(line)
    print()
    print(flushed)


if __name__ == "__main__":
    asyncio.run(main())
