"""Time and peak server memory of ``GET /people/{id}/export`` as the client grows.

Seeds one client (SQLite in a temporary folder, files in its data folder): one conversation
with N messages, one in every ``EVERY`` carrying a stored file, the files adding up to the
media size asked; starts the real server (uvicorn, a separate process), downloads the
export (counting its bytes, keeping none) and reads the server's ``VmHWM`` (peak resident
set) from ``/proc`` after resetting it (``clear_refs`` 5) just before the download. Run at
two sizes: bounded memory means the peak does not grow with the client.

    .venv/bin/python -m bench.client_export            # 5,000 msgs/100 MB, 50,000/1 GB
    .venv/bin/python -m bench.client_export --quick    # 500/5 MB, 2,000/20 MB
"""

from __future__ import annotations

import asyncio
import io
import tempfile
import time
import zipfile
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx
from sqlalchemy import insert

from bench.server import free_port, reset_peak, served, status_kib
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.storage import storage_from_settings
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from tests import factories as f

EVERY = 250
"""One message in this many carries a stored file."""
BATCH = 5_000
FILE_CHUNK = 1 << 20


async def _filler(size: int, seed: int) -> AsyncIterator[bytes]:
    block = bytes((seed + i) % 256 for i in range(256)) * (FILE_CHUNK // 256)
    sent = 0
    while sent < size:
        part = block[: min(FILE_CHUNK, size - sent)]
        sent += len(part)
        yield part


async def _seed(tmp: Path, messages: int, media_bytes: int, public_url: str) -> tuple[str, str]:
    """The database and files of one client; (API key, contact id)."""
    url = f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
    await migrate_async(url)
    settings = Settings(
        database_url=url, data_dir=tmp / "data", signing_key="bench", public_url=public_url
    )
    storage = storage_from_settings(settings)
    engine = create_engine(url)
    files = max(1, messages // EVERY)
    file_size = media_bytes // files
    async with create_sessionmaker(engine)() as s:
        office = await offices.create_office(s, "Bench")
        key = (await offices.create_api_key(s, office.id, "bench")).key
        inbox = await f.make_inbox(s, office.id)
        integration = await f.make_integration(s, office.id, inbox.id)
        contact = await f.make_contact(s, office.id, name="Cliente Volumoso")
        conversation = await f.make_conversation(s, office.id, contact.id, integration)
        await s.commit()
        start = utcnow() - timedelta(days=365)
        rows = []
        made = 0
        for i in range(messages):
            ident = new_id()
            media_url = None
            if i % EVERY == 0 and made < files:
                stored = f"inbound-media/{office.id}/{ident}/arquivo.bin"
                await storage.save(stored, _filler(file_size, made), file_size + 1)
                media_url = f"{public_url}/media/{stored}"
                made += 1
            inbound = i % 2 == 0
            rows.append(
                {
                    "id": ident,
                    "office_id": office.id,
                    "conversation_id": conversation.id,
                    "direction": "INBOUND" if inbound else "OUTBOUND",
                    "type": "document" if media_url else "text",
                    "text": f"Mensagem {i} do atendimento, sobre o processo e os prazos.",
                    "media_url": media_url,
                    "status": "RECEIVED" if inbound else "DELIVERED",
                    "created_at": start + timedelta(seconds=i),
                    "status_history": None
                    if inbound
                    else [{"status": "SENT", "at": "2026-01-01T00:00:00Z"}],
                }
            )
            if len(rows) == BATCH:
                await s.execute(insert(Message), rows)
                rows = []
        if rows:
            await s.execute(insert(Message), rows)
        await s.commit()
    await engine.dispose()
    return key, contact.id


async def measure(messages: int, media_bytes: int, check: bool) -> str:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        port = free_port()
        public_url = f"http://127.0.0.1:{port}"
        seeding = time.perf_counter()
        key, contact_id = await _seed(tmp, messages, media_bytes, public_url)
        seeded = time.perf_counter() - seeding
        env = {
            "OFFICEHUB_DATABASE_URL": f"sqlite+aiosqlite:///{tmp / 'bench.db'}",
            "OFFICEHUB_DATA_DIR": str(tmp / "data"),
            "OFFICEHUB_SIGNING_KEY": "bench",
            "OFFICEHUB_PUBLIC_URL": public_url,
        }
        async with served(env, port) as (_base, pid):
            headers = {"x-service-api-key": key}
            async with httpx.AsyncClient(base_url=public_url, timeout=600) as client:
                warm = await client.get(f"/people/{contact_id}", headers=headers)
                assert warm.status_code == 200, warm.text
                before = status_kib(pid, "VmRSS")
                reset_peak(pid)
                started = time.perf_counter()
                size = 0
                kept = io.BytesIO() if check else None
                path = f"/people/{contact_id}/export"
                async with client.stream("GET", path, headers=headers) as r:
                    assert r.status_code == 200
                    async for chunk in r.aiter_raw():
                        size += len(chunk)
                        if kept is not None:
                            kept.write(chunk)
                elapsed = time.perf_counter() - started
                peak = status_kib(pid, "VmHWM")
            if kept is not None:
                names = zipfile.ZipFile(kept).namelist()
                assert sum(n.startswith("media/") for n in names) == max(1, messages // EVERY)
    return (
        f"{messages:>7,} messages, {media_bytes / 1e6:>6,.0f} MB media: "
        f"zip {size / 1e6:,.1f} MB in {elapsed:.1f} s ({size / elapsed / 1e6:.0f} MB/s); "
        f"server RSS before {before / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB, "
        f"growth {(peak - before) / 1024:.1f} MiB (seeded in {seeded:.0f} s)"
    )


async def main(sizes: list[tuple[int, int]], check: bool) -> None:
    for messages, media in sizes:
        print(await measure(messages, media, check), flush=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500/5 MB and 2,000/20 MB")
    quick = parser.parse_args().quick
    if quick:
        chosen = [(500, 5_000_000), (2_000, 20_000_000)]
    else:
        chosen = [(5_000, 100_000_000), (50_000, 1_000_000_000)]
    asyncio.run(main(chosen, check=quick))
