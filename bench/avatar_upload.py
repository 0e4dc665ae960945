"""Memory and time of avatar uploads: the body is streamed, never held whole.

Runs the app in-process on a fresh SQLite database and measures, with tracemalloc, the
peak Python heap while uploading a 5 MB picture (accepted) and a 64 MB one (refused, 413).

    .venv/bin/python -m bench.avatar_upload
"""

from __future__ import annotations

import asyncio
import struct
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from officehub.users.models import User

BOUNDARY = "benchboundary"
CHUNK = 256 * 1024


def png_header() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))


async def multipart(size: int) -> AsyncIterator[bytes]:
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n'
        "Content-Type: image/png\r\n\r\n"
    ).encode()
    yield head + png_header()
    sent = len(png_header())
    filler = b"\x00" * CHUNK
    while sent < size:
        part = filler[: min(CHUNK, size - sent)]
        sent += len(part)
        yield part
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


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
                user = User(office_id=office.id, name="Ana", email="a@b.co", role="AGENT")
                s.add(user)
                await s.commit()
            transport = httpx.ASGITransport(app=app)
            headers = {
                "x-service-api-key": key,
                "content-type": f"multipart/form-data; boundary={BOUNDARY}",
            }
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                for label, size in (
                    ("5 MB (accepted)", 5 * 1024 * 1024),
                    ("64 MB (refused)", 64 * 1024 * 1024),
                ):
                    tracemalloc.start()
                    started = time.perf_counter()
                    r = await client.put(
                        f"/user/{user.id}/avatar", content=multipart(size), headers=headers
                    )
                    elapsed = time.perf_counter() - started
                    _, peak = tracemalloc.get_traced_memory()
                    tracemalloc.stop()
                    print(
                        f"avatar upload {label}: status {r.status_code}, "
                        f"{elapsed * 1000:.0f} ms, peak Python heap {peak / 1024:.0f} KiB"
                    )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same run: it takes seconds")
    parser.parse_args()
    asyncio.run(main())
