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
and the board with its timestamps written by PostgreSQL (``kit.db.api_timestamp``); the
conversation list (its kept shapes through the raw driver), read with the API key and by
a signed-in AGENT and SUPERVISOR.
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
from datetime import UTC, datetime
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
            # the search's too (written by PostgreSQL on the raw search page since s70)
            await c.execute(
                text(
                    "UPDATE contacts SET created_at = '2026-01-02 03:04:05+00', "
                    "updated_at = '2026-12-31 23:59:59.999999+00' WHERE name = 'Maria 123'"
                )
            )
            await c.execute(
                text(
                    "UPDATE contacts SET created_at = '2026-06-01 09:00:00.000500+00', "
                    "updated_at = '2026-06-01 09:00:00.999000+00' WHERE name = 'Maria 127'"
                )
            )
            config = [{"id": "valor", "visible": True}, {"id": "nome", "visible": False}]
            await c.execute(
                text("UPDATE crm_funnels SET card_config = :f"), {"f": json.dumps(config)}
            )
    finally:
        await engine.dispose()


PASSWORD = "Ipê-amarelo no quintal 42"  # noqa: S105 (the bench's own users)
"""The signed-in users' (an AGENT who sees only theirs, a SUPERVISOR of one inbox)."""


async def _conversation_extras(url: str, world: dict[str, str]) -> dict[str, str]:
    """The conversation list's variety: a second inbox with conversations of its own; an
    AGENT (assigned and unassigned conversations of their inbox only, read marks of their
    own) and a SUPERVISOR of the first inbox, both with a password; conversations pinned,
    archived, closed, assigned, with a last message (an operator's, a caption-less
    medium's), an SLA (due times, breaches), unread messages, one or two tags; ties in
    the list's order. Returns what the paths name."""
    from sqlalchemy import select, update

    from officehub.accounts.passwords import hash_password
    from officehub.conversations.models import Conversation, ConversationRead, ConversationTag
    from officehub.kit.db import create_sessionmaker
    from officehub.users.models import User, UserInbox
    from tests import factories

    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            office = await session.scalar(
                text("SELECT office_id FROM tags WHERE id = :t"), {"t": world["tag_id"]}
            )
            first = await session.get(Conversation, world["conversation_id"])
            assert first is not None
            inbox = await factories.make_inbox(session, office, "Segunda")
            integration = await factories.make_integration(session, office, inbox.id)
            people = list(
                await session.scalars(
                    text(
                        "SELECT id FROM contacts WHERE office_id = :o AND id NOT IN "
                        "(SELECT person_id FROM conversations) ORDER BY name LIMIT 9"
                    ),
                    {"o": office},
                )
            )
            for person in people:
                await factories.make_conversation(session, office, person, integration)
            hashed = await hash_password(PASSWORD)
            users = {}
            for role, name in (("AGENT", "Ágata Lins"), ("SUPERVISOR", "Sérgio Dias")):
                email = f"{role.lower()}@bench.example"
                user = await factories.make_user(session, office, name, email)
                user.role, user.password_hash = role, hashed
                user.only_assigned_conversations = role == "AGENT"
                session.add(UserInbox(office_id=office, user_id=user.id, inbox_id=first.inbox_id))
                users[role] = user
            await session.flush()
            listed = list(
                await session.scalars(
                    select(Conversation.id)
                    .where(Conversation.office_id == office)
                    .order_by(Conversation.id)
                )
            )
            agent, supervisor = users["AGENT"].id, users["SUPERVISOR"].id

            def stamp(d: int, h: int, m: int, sec: int, us: int) -> datetime:
                return datetime(2026, 5, d, h, m, sec, us, tzinfo=UTC)

            for n, ident in enumerate(listed):
                change: dict[str, Any] = {
                    # a tie of sorted_at every fifth (the id orders them)
                    "sorted_at": stamp(d=6, h=6, m=6, sec=6, us=0)
                    if n % 5 == 0
                    else stamp(d=1 + n % 7, h=n % 10, m=n % 6, sec=n % 10, us=n * 7919),
                    "is_fixed": n % 17 == 3,
                    "is_archived": n % 6 == 1,
                    "inbound_count": n % 4,
                    "inbound_read": n % 3 if n % 4 else 0,
                }
                if n % 3 == 2:
                    change["status"] = "CLOSED"
                    change["closed_at"] = stamp(d=8, h=1, m=1, sec=1, us=n)
                if n % 4 == 1:
                    change["assigned_user_id"] = agent if n % 8 == 1 else supervisor
                if n % 2 == 0:
                    change.update(
                        last_message_id=f"c0msg{n:021d}",
                        last_message_text=None if n % 10 == 4 else f'Olá «{n}» "ok"\n',
                        last_message_type="MEDIA" if n % 10 == 4 else "TEXT",
                        last_message_user_id=agent if n % 6 == 0 else None,
                        last_message_at=stamp(d=2, h=n % 10, m=3, sec=4, us=n),
                        first_inbound_at=stamp(d=1, h=1, m=1, sec=1, us=500),
                    )
                if n % 7 == 5:
                    change.update(
                        sla_policy_id="c0slapolicy00000000000000",
                        first_response_due_at=stamp(d=3, h=1, m=2, sec=3, us=0),
                        resolution_due_at=stamp(d=4, h=1, m=2, sec=3, us=999999),
                        next_response_breached_at=stamp(d=3, h=5, m=0, sec=0, us=1)
                        if n % 2
                        else None,
                        resolution_breached_at=stamp(d=3, h=4, m=0, sec=0, us=0) if n % 2 else None,
                    )
                await session.execute(
                    update(Conversation).where(Conversation.id == ident).values(**change)
                )
                tags = [world["tag_id"]] if n % 5 == 2 else []
                if n % 10 == 2:
                    tags.append(EXTRA_TAG)
                for tag in tags:
                    session.add(
                        ConversationTag(office_id=office, conversation_id=ident, tag_id=tag)
                    )
                if n % 4 == 2:
                    session.add(
                        ConversationRead(
                            office_id=office,
                            conversation_id=ident,
                            user_id=agent,
                            inbound_read=1,
                            read_at=stamp(d=9, h=1, m=1, sec=1, us=0),
                        )
                    )
            await session.execute(update(User).where(User.id == agent).values(name='Ágata "Lins"'))
            emails = {u.role: u.email for u in users.values()}
            made = {
                "office_id": office,
                "inbox_id": first.inbox_id,
                "second_inbox_id": inbox.id,
                "person_id": first.person_id,
                "agent_id": agent,
                "agent_email": emails["AGENT"],
                "supervisor_email": emails["SUPERVISOR"],
            }
            await session.commit()
            return made
    finally:
        await engine.dispose()


def conversation_paths(world: dict[str, str]) -> list[str]:
    """The conversation list, read with the API key: kept shapes (first and deep pages,
    past the last), the count of a tag or a person, a search, refusals."""
    tag, inbox, second = world["tag_id"], world["inbox_id"], world["second_inbox_id"]
    return [
        "/conversation?limit=20",
        "/conversation",
        "/conversation?limit=20&page=2",
        "/conversation?limit=20&page=4",
        "/conversation?limit=20&page=9",
        "/conversation?status=OPEN&limit=7&page=2",
        "/conversation?status=CLOSED",
        "/conversation?isArchived=false&limit=20&page=2",
        "/conversation?isArchived=true",
        "/conversation?unassigned=true&limit=10&page=3",
        f"/conversation?assigneeId={world['agent_id']}",
        f"/conversation?inboxId={second}",
        f"/conversation?inboxId={inbox}&status=OPEN&isArchived=false&page=2&limit=5",
        f"/conversation?tagId={tag}",
        f"/conversation?tagId={tag}&limit=2&page=2",
        f"/conversation?tagId={EXTRA_TAG}&isArchived=false",
        f"/conversation?personId={world['person_id']}",
        "/conversation?q=maria%2049",
        "/conversation?q=ol%C3%A1&limit=3&page=2",
        "/conversation?tagId=c0doesnotexist000000000000",
        "/conversation?mine=true",
        "/conversation?limit=0",
    ]


SIGNED_IN_PATHS = [
    "/conversation?limit=20",
    "/conversation?limit=5&page=3",
    "/conversation?mine=true",
    "/conversation?unassigned=true&status=OPEN",
    "/conversation?isArchived=false&limit=20&page=2",
    "/conversation?status=CLOSED&limit=3&page=2",
]
"""Read by the AGENT and the SUPERVISOR, signed in (their inboxes, their read marks)."""


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
        *(conversation_paths(world) if "second_inbox_id" in world else []),
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
    world.update(asyncio.run(_conversation_extras(url, world)))
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
            for role in ("agent", "supervisor"):
                email = world.get(f"{role}_email")
                if email is None:
                    continue
                with httpx.Client(base_url=base) as user:
                    login = user.post("/auth/login", json={"email": email, "password": PASSWORD})
                    login.raise_for_status()
                    for path in SIGNED_IN_PATHS:
                        r = user.get(path)
                        line = f"== {role} {path} {r.status_code} {r.headers.get('content-type')}\n"
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
