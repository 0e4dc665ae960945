"""Peak RSS growth of the server while it takes a 100 MB PDF as template header media.

Starts the real server (uvicorn, a separate process, SQLite in a temporary folder), sends
the upload streamed over HTTP, and reads the server's ``VmHWM`` (peak resident set) from
``/proc`` after resetting it (``clear_refs`` 5) just before the upload. Goal: under 32 MB.

    .venv/bin/python -m bench.upload_memory
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from bench.server import reset_peak, served, status_kib
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from tests import factories as f

BOUNDARY = "benchboundary"
CHUNK = 256 * 1024
SIZE = 100 * 1000 * 1000


async def body(size: int) -> AsyncIterator[bytes]:
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="autos.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n"
    ).encode() + b"%PDF-1.7\n"
    sent = 9
    filler = b"0" * CHUNK
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
        engine = create_engine(url)
        async with create_sessionmaker(engine)() as s:
            office = await offices.create_office(s, "Bench")
            key = (await offices.create_api_key(s, office.id, "bench")).key
            inbox = await f.make_inbox(s, office.id)
            integration = await f.make_integration(
                s, office.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="bench"
            )
            contact = await f.make_contact(s, office.id)
            conversation = await f.make_conversation(s, office.id, contact.id, integration)
            await s.commit()
        await engine.dispose()
        env = {
            "OFFICEHUB_DATABASE_URL": url,
            "OFFICEHUB_DATA_DIR": str(settings.data_dir),
            "OFFICEHUB_SIGNING_KEY": "bench",
        }
        async with served(env) as (base, pid):
            headers = {
                "x-service-api-key": key,
                "content-type": f"multipart/form-data; boundary={BOUNDARY}",
            }
            path = f"/conversation/{conversation.id}/template-header-media"
            async with httpx.AsyncClient(base_url=base, timeout=120) as client:
                warm = await client.post(path, content=body(1_000_000), headers=headers)
                assert warm.status_code == 201, warm.text
                before = status_kib(pid, "VmRSS")
                reset_peak(pid)
                started = time.perf_counter()
                r = await client.post(path, content=body(SIZE), headers=headers)
                elapsed = time.perf_counter() - started
                peak = status_kib(pid, "VmHWM")
            print(
                f"{SIZE / 1e6:.0f} MB PDF header media upload: status {r.status_code}, "
                f"{elapsed:.1f} s "
                f"({SIZE / elapsed / 1e6:.0f} MB/s); server RSS before {before / 1024:.1f} MiB, "
                f"peak during {peak / 1024:.1f} MiB, growth {(peak - before) / 1024:.1f} MiB"
            )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 20 MB PDF, not 100 MB")
    if parser.parse_args().quick:
        SIZE = 20 * 1000 * 1000
    asyncio.run(main())
