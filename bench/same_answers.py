"""The hot reads' answers of two source trees, byte for byte, on one seeded database.

    # once: a database seeded as stack_ratio seeds it, plus tags on contacts, custom fields
    .venv/bin/python -m bench.same_answers seed URL world.json
    # per tree: its server's answers to the hot reads (and /openapi.json) into a file
    .venv/bin/python -m bench.same_answers dump URL world.json TREE out.txt
    cmp main.txt branch.txt

URL is a PostgreSQL (``postgresql+asyncpg://…``, created or emptied here) or SQLite
(``sqlite+aiosqlite:///…``) database. Written for kit.raw_read (issue 45, item 1): the
tag, the search page and the funnel board answer the same bytes through the raw driver;
and the board with its timestamps written by PostgreSQL (``kit.db.api_timestamp``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

import httpx
from sqlalchemy import text

from bench import stack_ratio
from officehub.kit.db import create_engine

EXTRA_TAG = "c0extratag000000000000000"
FIELDS = [
    {"id": "valor", "name": "Valor", "type": "number", "value": "10.5"},
    {"id": "nome", "name": "Nome ü", "type": "text", "value": 'José "ü"', "options": "a,b"},
]


async def _extras(url: str, world: dict[str, str]) -> None:
    """A second tag, both on some searched contacts; a contact with every text field;
    custom fields on cards; a card configuration on the funnel."""
    engine = create_engine(url)
    try:
        async with engine.begin() as c:
            tag = {"t": world["tag_id"]}
            office = (
                await c.execute(text("SELECT office_id FROM tags WHERE id = :t"), tag)
            ).scalar()
            inbox = (await c.execute(text("SELECT inbox_id FROM tags WHERE id = :t"), tag)).scalar()
            await c.execute(
                text(
                    "INSERT INTO tags (id, office_id, inbox_id, name, name_key, color, modules, "
                    "created_at, updated_at) VALUES (:id, :o, :i, 'Ábaco', 'ábaco', '#00FF00', :m, "
                    "'2026-01-02 03:04:05.123456+00', '2026-03-04 05:06:07+00')"
                ),
                {"id": EXTRA_TAG, "o": office, "i": inbox, "m": json.dumps(["crm", "pessoas"])},
            )
            names = "SELECT id FROM contacts WHERE name IN ('Maria 12', 'Maria 120', 'Maria 125')"
            ids = [row[0] for row in await c.execute(text(names + " ORDER BY name"))]
            link = text(
                "INSERT INTO contact_tags (office_id, contact_id, tag_id) VALUES (:o, :c, :t)"
            )
            for n, contact in enumerate(ids):
                await c.execute(link, {"o": office, "c": contact, "t": world["tag_id"]})
                if n != 1:
                    await c.execute(link, {"o": office, "c": contact, "t": EXTRA_TAG})
            await c.execute(
                text(
                    "UPDATE contacts SET phone = '+5511912345678', ddd = '11', email = 'm@x.com', "
                    "whatsapp_username = 'Maria_Z', description = 'olá \"x\"', document = '123' "
                    "WHERE name = 'Maria 121'"
                )
            )
            await c.execute(
                text(
                    "UPDATE crm_cards SET custom_fields = :f "
                    "WHERE id IN (SELECT id FROM crm_cards ORDER BY id LIMIT 7)"
                ),
                {"f": json.dumps(FIELDS)},
            )
            # timestamps at a whole second and a microsecond short of the next one (the
            # board's are written by PostgreSQL: milliseconds truncated, as isoformat does)
            await c.execute(
                text(
                    "UPDATE crm_cards SET created_at = '2026-01-02 03:04:05+00', "
                    "updated_at = '2026-12-31 23:59:59.999999+00' "
                    "WHERE id IN (SELECT id FROM crm_cards ORDER BY id DESC LIMIT 5)"
                )
            )
            await c.execute(
                text(
                    "UPDATE contacts SET created_at = '2026-06-01 09:00:00.000500+00', "
                    "updated_at = '2026-06-01 09:00:00.999000+00' "
                    "WHERE id IN (SELECT person_id FROM crm_cards ORDER BY id DESC LIMIT 3)"
                )
            )
            config = [{"id": "valor", "visible": True}, {"id": "nome", "visible": False}]
            await c.execute(
                text("UPDATE crm_funnels SET card_config = :f"), {"f": json.dumps(config)}
            )
    finally:
        await engine.dispose()


def paths(world: dict[str, str]) -> list[str]:
    tag, funnel, missing = (
        world["tag_id"],
        "/funnel/" + world["funnel_id"],
        "c0doesnotexist000000000000",
    )
    return [
        f"/tag/{tag}",
        f"/tag/{EXTRA_TAG}",
        f"/tag/{missing}",
        "/tag/bad id",
        "/people?search=maria%2012",
        "/people?search=maria%2012&limit=3&page=2",
        "/people?search=zzz",
        "/people?search=maria%2012&page=9",
        "/people?search=maria_z",
        "/people?search=912345",
        "/people?search=MARIA",
        f"/people?search=12&tagIds={tag}",
        "/people",
        "/people?search=%25",
        funnel,
        funnel + "?page=2&limit=7",
        funnel + "?page=50",
        f"/funnel/{missing}",
        f"{funnel}?userIds={missing}",
        funnel + "?limit=1",
        "/openapi.json",
    ]


def seed(url: str, world_file: str) -> None:
    from officehub.migrate import migrate

    if url.startswith("postgresql"):
        name = url.rsplit("/", 1)[1]
        asyncio.run(stack_ratio._pg(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        asyncio.run(stack_ratio._pg(f"CREATE DATABASE {name}"))
    migrate(url)
    world = asyncio.run(stack_ratio.seed(url)).__dict__
    asyncio.run(_extras(url, world))
    with open(world_file, "w") as handle:
        json.dump(world, handle)


def dump(url: str, world_file: str, tree: str, out: str) -> None:
    with open(world_file) as handle:
        world: dict[str, Any] = json.load(handle)
    port = stack_ratio.free_port()
    args = [
        sys.executable,
        "-m",
        "bench.stack_ratio",
        "--serve",
        "officehub",
        url,
        str(port),
        out + ".data",
    ]
    env = {**os.environ, "PYTHONPATH": f"{tree}/src:{tree}"}
    proc = subprocess.Popen(
        args, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        headers = {"x-service-api-key": world["key"]}
        with open(out, "wb") as handle:
            for path in paths(world):
                r = httpx.get(base + path, headers=headers)
                line = f"== {path} {r.status_code} {r.headers.get('content-type')}\n"
                handle.write(line.encode() + r.content + b"\n")
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    command, *args = sys.argv[1:]
    if command == "seed":
        seed(*args)
    elif command == "dump":
        dump(*args)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
