"""What a request without a key costs the service, and what the key lookup costs a request.

Runs the app in-process on a fresh SQLite database and prints:
- the body bytes the service read (counted at its ASGI ``receive``) for a 64 MiB multipart
  POST /tag without a key, and with a key;
- the mean time of GET /tag with a key over 500 requests (the key is looked up by the
  request middleware, in a session of its own).

    .venv/bin/python -m bench.keyless_bodies
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.migrate import migrate_async
from officehub.offices import service as offices

MIB = 1024 * 1024
REQUESTS = 500


class Counted:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.read = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counted() -> Message:
            message = await receive()
            self.read += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


async def body(size: int) -> AsyncIterator[bytes]:
    chunk = b"x" * (256 * 1024)
    for _ in range(size // len(chunk)):
        yield chunk


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        await migrate_async(url)
        settings = Settings(database_url=url, data_dir=Path(tmp) / "data", signing_key="bench")
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            async with app.state.sessionmaker() as s:
                office = await offices.create_office(s, "Bench")
                key = (await offices.create_api_key(s, office.id, "bench")).key
                await s.commit()
            counted = Counted(app)
            transport = httpx.ASGITransport(app=counted)
            multipart = {"content-type": "multipart/form-data; boundary=b"}
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                for label, headers in (
                    ("without a key", multipart),
                    ("with a key", {**multipart, "x-service-api-key": key}),
                ):
                    counted.read = 0
                    r = await client.post("/tag", content=body(64 * MIB), headers=headers)
                    read = f"{counted.read:,}"
                    print(f"64 MiB multipart POST /tag {label}: {r.status_code}, read {read} bytes")
                keyed = {"x-service-api-key": key}
                for _ in range(50):
                    await client.get("/tag", headers=keyed)
                started = time.perf_counter()
                for _ in range(REQUESTS):
                    r = await client.get("/tag", headers=keyed)
                    assert r.status_code == 200
                elapsed = time.perf_counter() - started
                print(
                    f"GET /tag with a key: {elapsed / REQUESTS * 1000:.2f} ms mean over {REQUESTS}"
                )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 timed requests, not 500")
    if parser.parse_args().quick:
        REQUESTS = 100
    asyncio.run(main())
