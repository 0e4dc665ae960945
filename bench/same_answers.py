"""The hot reads' answers of two source trees, byte for byte, on one seeded database.

    # once: a database seeded as stack_ratio seeds it, plus tags on contacts, custom fields
    .venv/bin/python -m bench.same_answers seed URL world.json
    # per tree: its server's answers to the hot reads (and /openapi.json) into a file
    .venv/bin/python -m bench.same_answers dump URL world.json TREE out.txt
    cmp main.txt branch.txt
    # the writes (POST /people, PATCH /conversation/{id}), per tree, on a database seeded
    # afresh: their answers, then the events, consumers' rows, counters and audit entries
    # they left, ids numbered by first appearance and times masked
    .venv/bin/python -m bench.same_answers writes URL TREE out.txt

URL is a PostgreSQL (``postgresql+asyncpg://…``, created or emptied here) or SQLite
(``sqlite+aiosqlite:///…``) database. Written for kit.raw_read (issue 45, item 1): the
tag, the search page and the funnel board answer the same bytes through the raw driver;
and the board with its timestamps written by PostgreSQL (``kit.db.api_timestamp``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from bench import stack_ratio
from officehub.audit import service as audit
from officehub.kit.db import create_engine, create_sessionmaker

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


@contextlib.contextmanager
def served(url: str, tree: str, data_dir: str) -> Iterator[str]:
    """``tree``'s officehub server on ``url`` (as ``stack_ratio`` serves it); its base URL.
    Stopped (SIGTERM: a clean stop, the audit trail's buffer written) at the end."""
    port = stack_ratio.free_port()
    args = [sys.executable, "-m", "bench.stack_ratio", "--serve", "officehub", url, str(port)]
    env = {**os.environ, "PYTHONPATH": f"{tree}/src:{tree}"}
    proc = subprocess.Popen(
        [*args, data_dir], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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
        yield base
    finally:
        proc.terminate()
        proc.wait(10)


def dump(url: str, world_file: str, tree: str, out: str) -> None:
    with open(world_file) as handle:
        world: dict[str, Any] = json.load(handle)
    with served(url, tree, out + ".data") as base:
        headers = {"x-service-api-key": world["key"]}
        with open(out, "wb") as handle:
            for path in paths(world):
                r = httpx.get(base + path, headers=headers)
                line = f"== {path} {r.status_code} {r.headers.get('content-type')}\n"
                handle.write(line.encode() + r.content + b"\n")


MISSING = "c0doesnotexist000000000000"


def write_requests(world: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The writes checked: created, refused (phone taken, unknown tag, unknown field), and a
    conversation changed field by field, unchanged, closed, reopened, missing."""
    tag, conversation = world["tag_id"], "/conversation/" + world["conversation_id"]
    full = {
        "name": "Bia Ünï",
        "phone": "11 91234-0000",
        "email": "b@x.com",
        "document": "123",
        "description": 'olá "x"',
        "inboxId": world["inbox_id"],
        "isBlocked": True,
        "tags": [tag, EXTRA_TAG],
    }
    return [
        ("POST", "/people", {"name": "Ana"}),
        ("POST", "/people", full),
        ("POST", "/people", {"name": "Caio", "phone": "+55 11 91234-0000"}),
        ("POST", "/people", {"name": "Dora", "tags": [MISSING]}),
        ("POST", "/people", {"name": "Eva", "bogus": 1}),
        ("PATCH", conversation, {"priority": "HIGH"}),
        ("PATCH", conversation, {"priority": "HIGH"}),
        ("PATCH", conversation, {"tags": [tag]}),
        ("PATCH", conversation, {"isFixed": True, "isArchived": True, "tags": [EXTRA_TAG]}),
        ("PATCH", conversation, {"status": "CLOSED"}),
        ("PATCH", conversation, {"status": "OPEN", "priority": "LOW"}),
        ("PATCH", conversation, {"tags": []}),
        ("PATCH", f"/conversation/{MISSING}", {"priority": "LOW"}),
        ("PATCH", conversation, {"priority": None}),
        ("GET", conversation, None),
    ]


_LEFT = [
    "SELECT name, data, sequence, subject, conversation_id, integration_id, causation_id, "
    "depth, target_webhook_id, created_at FROM outbox_events ORDER BY id",
    "SELECT c.consumer, c.event_id, c.ordering_key, c.attempts, c.created_at "
    "FROM outbox_consumer_events c JOIN outbox_events o ON o.id = c.event_id "
    "ORDER BY o.id, c.consumer",
    "SELECT s.subject, s.last_sequence FROM event_subjects s ORDER BY s.subject",
    "SELECT seq, actor_kind, actor_id, actor_address, action, record_type, record_id, "
    "person_id, details, details IS NULL, previous_hash, hash FROM audit_entries ORDER BY seq",
    "SELECT * FROM contacts WHERE name IN ('Ana', 'Bia Ünï') ORDER BY name",
    "SELECT * FROM contact_tags WHERE contact_id IN "
    "(SELECT id FROM contacts WHERE name = 'Bia Ünï') ORDER BY tag_id",
    "SELECT * FROM conversations WHERE id = :c",
    "SELECT * FROM conversation_tags WHERE conversation_id = :c ORDER BY tag_id",
]
_ID = re.compile(r"\bc[0-9a-z]{24}\b")
_TIME = re.compile(
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?|datetime\.datetime\([^)]*\)"
)
_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def masked(text_: str, ids: dict[str, str]) -> str:
    """Ids numbered by first appearance (the same id, the same number), times and hashes
    masked: what two runs of the same writes may differ by."""
    text_ = _TIME.sub("<time>", text_)
    text_ = _HASH.sub("<hash>", text_)
    return _ID.sub(lambda m: ids.setdefault(m.group(), f"<id{len(ids) + 1}>"), text_)


async def _left(url: str, conversation_id: str) -> list[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as c:
            lines = []
            for query in _LEFT:
                lines.append(f"== {query}")
                result = await c.execute(text(query), {"c": conversation_id})
                lines += [repr(tuple(row)) for row in result]
        # each office's audit chain checked as ``officehub audit verify`` checks it
        async with create_sessionmaker(engine)() as session:
            for office_id in await audit.offices_with_entries(session):
                count, broken = await audit.first_break(session, office_id)
                lines.append(f"== audit chain: {count} entries, first break: {broken}")
            return lines
    finally:
        await engine.dispose()


def writes(url: str, tree: str, out: str) -> None:
    """The writes' answers and what they left in the database, of ``tree``'s server on
    ``url`` seeded afresh (a SQLite file is replaced)."""
    if url.startswith("sqlite"):
        Path(url.split("///", 1)[1]).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        world_file = str(Path(tmp) / "world.json")
        seed(url, world_file)
        with open(world_file) as handle:
            world: dict[str, Any] = json.load(handle)
        world["inbox_id"] = asyncio.run(_inbox_of(url, world["tag_id"]))
        lines = []
        with served(url, tree, str(Path(tmp) / "data")) as base:
            headers = {"x-service-api-key": world["key"]}
            for method, path, body in write_requests(world):
                r = httpx.request(method, base + path, json=body, headers=headers)
                lines.append(f"== {method} {path} {r.status_code} {r.headers.get('content-type')}")
                lines.append(r.text)
        lines += asyncio.run(_left(url, world["conversation_id"]))
    ids: dict[str, str] = {}
    with open(out, "w") as handle:
        handle.write("\n".join(masked(line, ids) for line in lines) + "\n")


async def _inbox_of(url: str, tag_id: str) -> str:
    engine = create_engine(url)
    try:
        async with engine.connect() as c:
            query = text("SELECT inbox_id FROM tags WHERE id = :t")
            return str((await c.execute(query, {"t": tag_id})).scalar_one())
    finally:
        await engine.dispose()


def main() -> None:
    command, *args = sys.argv[1:]
    if command == "seed":
        seed(*args)
    elif command == "dump":
        dump(*args)
    elif command == "writes":
        writes(*args)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
