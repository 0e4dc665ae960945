"""CPU per request with nothing else in flight: the app in process (no server, no load
generator), one request at a time, so no lock waits or batching blur what a request costs.

    .venv/bin/python -m bench.request_cpu [--quick] [--requests 3000] [--url URL]

SQLite in a temporary directory by default; ``--url`` for a PostgreSQL database (its tables
are created or migrated, and an office of its own is made). For each route: ``--requests``
timed requests after 300 to warm up (``POST /people`` first: the search then reads
the contacts it made); prints the process's CPU time per request (every
thread: aiosqlite's included) and the wall time. ``stack_ratio`` measures the same routes
under load, beside a bare app.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.migrate import migrate_async
from tests.helpers import make_office

WARM_UP = 300


async def _measure(url: str, data_dir: Path, requests: int) -> list[str]:
    await migrate_async(url)
    settings = Settings(
        database_url=url, data_dir=data_dir, signing_key="bench", rate_limits="1000000/minute"
    )
    app = create_app(settings)
    lines = []
    async with app.router.lifespan_context(app):
        office = await make_office(app, "Request CPU")
        h = office.headers
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as c:
            inbox = (await c.post("/inbox", json={"name": "Geral"}, headers=h)).json()
            tag_body = {"name": "Urgente", "color": "#FF0000", "inboxId": inbox["id"]}
            tag = (await c.post("/tag", json={**tag_body, "modules": ["crm"]}, headers=h)).json()
            routes: list[tuple[str, Callable[[int], Awaitable[httpx.Response]]]] = [
                ("POST /people", lambda i: c.post("/people", json={"name": f"P {i}"}, headers=h)),
                ("GET /tag/{id}", lambda i: c.get(f"/tag/{tag['id']}", headers=h)),
                ("GET /tag", lambda i: c.get("/tag", headers=h)),
                ("GET /people?search=", lambda i: c.get("/people?search=P 12", headers=h)),
            ]
            for label, call in routes:
                for i in range(WARM_UP):
                    await call(i)
                cpu, wall = time.process_time(), time.perf_counter()
                for i in range(requests):
                    r = await call(WARM_UP + i)
                    assert r.status_code in (200, 201), r.text
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                lines.append(
                    f"| `{label}` | {cpu / requests * 1e6:,.0f} | {wall / requests * 1e6:,.0f} |"
                )
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 timed requests a route")
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--url", default="", help="a PostgreSQL URL (default: SQLite)")
    args = parser.parse_args()
    requests = 500 if args.quick else args.requests
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite+aiosqlite:///{Path(tmp) / 'request_cpu.db'}"
        lines = await _measure(url, Path(tmp) / "data", requests)
    print(f"{requests} sequential requests a route, in process, after {WARM_UP} to warm up")
    print()
    print("| route | CPU µs/request | wall µs/request |")
    print("|---|---:|---:|")
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
