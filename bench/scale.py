"""officehub's reads at an office's full size beside the same reads at 1/100 (PostgreSQL).

Builds one office in a database of its own per size (``officehub_scale_<contacts>``, dropped
at the end unless ``--keep``): N contacts, N conversations (one each, over the last year,
two inboxes, 50 users, a fifth open, a tenth archived, one in 500 pinned), 10N messages
(ten per conversation), N/5 funnel cards over four columns. The rows are made by bulk SQL
(``INSERT … SELECT generate_series``), then ``VACUUM ANALYZE``. The baseline office is
always 1/100 of full (10,000 contacts); at ``--size hundredth`` only it is built.

Then each read goes through the whole app in process (``httpx.ASGITransport``: key, routing,
service, JSON), one request at a time, the two sizes alternating request by request so both
see the same machine load; p50 and p99 of each, and the ratio size/baseline of the p50s.

    .venv/bin/python -m bench.scale --size hundredth      # 10,000 contacts, ~1 min
    .venv/bin/python -m bench.scale --size tenth          # 100,000 beside 10,000
    .venv/bin/python -m bench.scale                       # 1,000,000 beside 10,000
    .venv/bin/python -m bench.scale --size 300000 --requests 30 --keep

Goals (issue 45): every ratio <= 1.5, every read's p50 < 50 ms, a year's report < 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from bench.databases import BASE, driver_url, drop_database, fresh_database
from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.offices import service as offices

FULL = 1_000_000
SIZES = {"full": FULL, "tenth": FULL // 10, "hundredth": FULL // 100}
BASELINE = FULL // 100
USERS = 50
SLOW_MS = 1000.0
SLOW_REQUESTS = 3
"""A read whose first answer took over ``SLOW_MS`` is timed this many times only."""
COLUMNS = 4
CHUNK = 50_000
"""Conversations a statement of ``fill`` inserts."""
FIRST = ("Maria", "João", "Ana", "José", "Francisca", "Antônio", "Adriana", "Carlos")
LAST = ("Silva", "Santos", "Oliveira", "Souza", "Lima", "Pereira", "Costa", "Rodrigues")


@dataclass
class Office:
    contacts: int
    database: str
    url: str
    key: str
    inbox_id: str
    funnel_id: str
    person_id: str  # a client in the middle of the table: its conversation, its export
    conversation_id: str
    seconds: float = 0.0  # to fill


def _id(prefix: str, i: str) -> str:
    """SQL for an id of the spec's pattern: ``c`` + prefix + the number, 25 characters."""
    return f"'c{prefix}' || lpad(({i})::text, 22, '0')"


async def fill(conn: asyncpg.Connection, office_id: str, n: int) -> None:
    """The office's rows, by bulk SQL. Conversation i belongs to contact i; its messages
    are ten, a minute apart, from its creation (spread over the last 365 days)."""
    ids = await conn.fetch("SELECT id FROM inboxes WHERE office_id = $1 ORDER BY name", office_id)
    channel = {
        r["inbox_id"]: r["id"]
        for r in await conn.fetch(
            "SELECT id, inbox_id FROM integrations WHERE office_id = $1", office_id
        )
    }
    assert len(ids) == 2 and len(channel) == 2
    await conn.execute(
        f"""
        INSERT INTO users (id, office_id, name, email, email_key, role, is_active,
                           only_assigned_conversations, availability, created_at, updated_at)
        SELECT {_id("us", "i")}, $1, 'Usuário ' || i, 'u' || i || '@bench.test',
               'u' || i || '@bench.test', 'OPERATOR', true, false, 'ONLINE', now(), now()
        FROM generate_series(1, {USERS}) AS i
        """,  # noqa: S608 (numbers and names of this module, no input)
        office_id,
    )
    await conn.execute(
        f"""
        INSERT INTO contacts (id, office_id, name, search_name, phone, ddd, whatsapp_username,
                              is_blocked, created_at, updated_at)
        SELECT {_id("pp", "i")}, $1, f || ' ' || l || ' ' || i, lower(f || ' ' || l || ' ' || i),
               '+55' || (11 + i % 80) || '9' || lpad(i::text, 8, '0'), (11 + i % 80)::text,
               CASE WHEN i % 3 = 0 THEN 'user' || i END,
               false, now() - (i % 365) * interval '1 day', now()
        FROM generate_series(1, $2) AS i,
             LATERAL (SELECT ($3::text[])[1 + i % 8] AS f, ($4::text[])[1 + (i / 8) % 8] AS l) n
        """,  # noqa: S608 (numbers and names of this module, no input)
        office_id,
        n,
        list(FIRST),
        list(LAST),
    )
    # created (i % 365) days and (i % 1440) minutes ago; the last message 9 minutes later.
    # In statements of CHUNK rows: each statement's (and transaction's) conversations add
    # to the kept counts (0038), and a counter row updated many times in one transaction
    # chains its versions (one statement of 1,000,000 rows ran over 10 minutes).
    for first in range(1, n + 1, CHUNK):
        await _fill_conversations(conn, office_id, ids, channel, first, min(n, first + CHUNK - 1))
    await conn.execute(
        f"""
        INSERT INTO messages (id, office_id, conversation_id, direction, type, text, status,
                              created_at, attempts, forwarded)
        SELECT {_id("ms", "i * 10 + k")}, $1, {_id("cv", "i")},
               CASE WHEN k % 2 = 0 THEN 'INBOUND' ELSE 'OUTBOUND' END, 'TEXT',
               'Mensagem ' || k, CASE WHEN k % 2 = 0 THEN 'RECEIVED' ELSE 'SENT' END,
               now() - (i % 365) * interval '1 day' - (i % 1440) * interval '1 minute'
                     + k * interval '1 minute', 0, false
        FROM generate_series(1, $2) AS i, generate_series(0, 9) AS k
        """,  # noqa: S608 (numbers and names of this module, no input)
        office_id,
        n,
    )
    funnel = await conn.fetchval("SELECT id FROM crm_funnels WHERE office_id = $1", office_id)
    columns = [
        r["id"]
        for r in await conn.fetch(
            "SELECT id FROM crm_columns WHERE funnel_id = $1 ORDER BY position", funnel
        )
    ]
    await conn.execute(
        f"""
        INSERT INTO crm_cards (id, office_id, funnel_id, column_id, person_id, conversation_id,
                               user_id, custom_fields, column_changed_at, created_at, updated_at)
        SELECT {_id("cd", "i")}, $1, $2, ($3::text[])[1 + i % {COLUMNS}], {_id("pp", "i * 5")},
               {_id("cv", "i * 5")}, {_id("us", f"1 + i % {USERS}")}, '[]'::jsonb,
               now() - i * interval '1 minute', now(), now()
        FROM generate_series(1, $4) AS i
        """,  # noqa: S608 (numbers and names of this module, no input)
        office_id,
        funnel,
        columns,
        n // 5,
    )


PREFIX = "officehub_scale_"


async def _fill_conversations(
    conn: asyncpg.Connection,
    office_id: str,
    ids: list[Any],
    channel: dict[str, str],
    first: int,
    last: int,
) -> None:
    """Conversations ``first`` to ``last`` (each of contact i) in one statement."""
    await conn.execute(
        f"""
        INSERT INTO conversations (id, office_id, person_id, inbox_id, integration_id, status,
            priority, assigned_user_id, is_fixed, is_archived, created_at, updated_at,
            sorted_at, last_message_at, last_message_id, last_message_text, last_message_type,
            inbound_count, inbound_read, first_inbound_at, first_response_at, last_response_at,
            closed_at)
        SELECT {_id("cv", "i")}, $1, {_id("pp", "i")},
               CASE WHEN i % 2 = 0 THEN $2 ELSE $3 END, CASE WHEN i % 2 = 0 THEN $4 ELSE $5 END,
               CASE WHEN i % 5 = 0 THEN 'OPEN' ELSE 'CLOSED' END, 'MEDIUM',
               CASE WHEN i % 3 = 0 THEN NULL ELSE {_id("us", f"1 + i % {USERS}")} END,
               i % 500 = 0, i % 10 = 5, t, t + interval '9 minutes', t + interval '9 minutes',
               t + interval '9 minutes', {_id("ms", "i * 10 + 9")}, 'Mensagem 9', 'TEXT',
               5, 5, t, t + interval '1 minute', t + interval '9 minutes',
               CASE WHEN i % 5 = 0 THEN NULL ELSE t + interval '1 hour' END
        FROM generate_series($6::int, $7::int) AS i,
             LATERAL (SELECT now() - (i % 365) * interval '1 day'
                             - (i % 1440) * interval '1 minute' AS t) c
        """,  # noqa: S608 (numbers and names of this module, no input)
        office_id,
        ids[0]["id"],
        ids[1]["id"],
        channel[ids[0]["id"]],
        channel[ids[1]["id"]],
        first,
        last,
    )


async def build(contacts: int, prefix: str = PREFIX) -> Office:
    database = f"{prefix}{contacts}"
    url = await fresh_database(database)
    from tests import factories

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings(database_url=url, data_dir=Path(tmp), signing_key="bench"))
        async with app.router.lifespan_context(app), app.state.sessionmaker() as s:
            office = await offices.create_office(s, "Bench scale")
            key = (await offices.create_api_key(s, office.id, "bench")).key
            inboxes = [
                await factories.make_inbox(s, office.id, name) for name in ("Cível", "Trabalhista")
            ]
            for inbox in inboxes:
                await factories.make_integration(s, office.id, inbox.id)
            funnel, _ = await factories.make_funnel(s, office.id, inboxes[0].id, COLUMNS)
            await s.commit()
            office_id, funnel_id = office.id, funnel.id
    started = time.perf_counter()
    conn = await asyncpg.connect(driver_url(database))
    try:
        await fill(conn, office_id, contacts)
        await conn.execute("VACUUM ANALYZE")
        inbox_id = await conn.fetchval(
            "SELECT id FROM inboxes WHERE office_id = $1 ORDER BY name", office_id
        )
    finally:
        await conn.close()
    return _office(contacts, database, key, inbox_id, funnel_id, time.perf_counter() - started)


def _office(
    contacts: int, database: str, key: str, inbox_id: str, funnel_id: str, seconds: float
) -> Office:
    middle = contacts // 2 + 1
    return Office(
        contacts,
        database,
        BASE + database,
        key,
        inbox_id,
        funnel_id,
        f"cpp{middle:022d}",
        f"ccv{middle:022d}",
        seconds,
    )


async def reuse(contacts: int, prefix: str = PREFIX) -> Office:
    """The office a kept database holds (``--keep``), with an API key of its own: the same
    data read by another version of the code (before and after a change)."""
    database = f"{prefix}{contacts}"
    url = BASE + database
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings(database_url=url, data_dir=Path(tmp), signing_key="bench"))
        async with app.router.lifespan_context(app), app.state.sessionmaker() as s:
            conn = await s.connection()
            found = await conn.exec_driver_sql(
                "SELECT o.id, (SELECT id FROM inboxes WHERE office_id = o.id ORDER BY name"
                " LIMIT 1), (SELECT id FROM crm_funnels WHERE office_id = o.id LIMIT 1)"
                " FROM offices o WHERE o.name = 'Bench scale'"
            )
            office_id, inbox_id, funnel_id = found.one()
            key = (await offices.create_api_key(s, office_id, "bench")).key
            await s.commit()
    return _office(contacts, database, key, inbox_id, funnel_id, 0.0)


async def drop(office: Office) -> None:
    await drop_database(office.database)


def full_name(i: int) -> str:
    """Contact i's name, as ``fill`` writes it."""
    return f"{FIRST[i % 8]} {LAST[(i // 8) % 8]} {i}"


def reads(office: Office) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, path, query) of each read measured, for ``office``."""
    today = utcnow().date()
    year = {"from": (today - timedelta(days=365)).isoformat(), "to": today.isoformat()}
    # Page 100 of 20 (offset 1,980): a page that exists at both sizes, 1/100's 2,000 open and
    # 3,333 unassigned conversations included (of the default 50 it was empty there).
    deep = {"page": 100, "limit": 20}
    return [
        ("conversations: all", "/conversation", {}),
        ("conversations: all, page 100", "/conversation", deep),
        ("conversations: inboxId", "/conversation", {"inboxId": office.inbox_id}),
        ("conversations: inboxId, page 100", "/conversation", {"inboxId": office.inbox_id, **deep}),
        ("conversations: status=OPEN", "/conversation", {"status": "OPEN"}),
        ("conversations: status=OPEN, page 100", "/conversation", {"status": "OPEN", **deep}),
        ("conversations: unassigned", "/conversation", {"unassigned": "true"}),
        ("conversations: unassigned, page 100", "/conversation", {"unassigned": "true", **deep}),
        ("conversations: isArchived=false", "/conversation", {"isArchived": "false"}),
        (
            "conversations: isArchived=false, page 100",
            "/conversation",
            {"isArchived": "false", **deep},
        ),
        ("conversations: personId", "/conversation", {"personId": office.person_id}),
        ("a conversation's messages", f"/conversation/{office.conversation_id}/messages", {}),
        ("people: search a common name", "/people", {"search": "maria silva"}),
        ("people: search a full name", "/people", {"search": full_name(4321)}),
        ("people: search phone fragment", "/people", {"search": "98765"}),
        ("people: search username", "/people", {"search": "user3333"}),
        ("funnel board", f"/funnel/{office.funnel_id}", {}),
        ("clients map (cached after the first)", "/homepage-v2/get-clients-map", {}),
        ("reports: a year by day", "/reports/conversations", {**year, "groupBy": "day"}),
        ("reports: a year by user", "/reports/conversations", {**year, "groupBy": "user"}),
        ("one client's export", f"/people/{office.person_id}/export", {}),
    ]


def quantiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[max(0, int(len(times) * 0.99) - 1)]


async def measure(
    offices_: list[Office], requests: int, only: str = ""
) -> dict[int, dict[str, list[float]]]:
    times: dict[int, dict[str, list[float]]] = {o.contacts: {} for o in offices_}
    with tempfile.TemporaryDirectory() as tmp:
        apps = [
            create_app(
                Settings(database_url=o.url, data_dir=Path(tmp) / o.database, signing_key="b")
            )
            for o in offices_
        ]
        async with contextlib.AsyncExitStack() as stack:
            clients = []
            for app in apps:
                await stack.enter_async_context(app.router.lifespan_context(app))
                transport = httpx.ASGITransport(app=app)
                client = httpx.AsyncClient(transport=transport, base_url="http://b", timeout=120)
                clients.append(await stack.enter_async_context(client))
            labels = [label for label, _, _ in reads(offices_[0])]
            for i, label in enumerate(labels):
                if not label.startswith(only):
                    continue
                warmups, count = 3, requests
                n = 0
                while n < warmups + count:
                    slowest = 0.0
                    for office, client in zip(offices_, clients, strict=True):
                        _, path, params = reads(office)[i]
                        headers = {"x-service-api-key": office.key}
                        started = time.perf_counter()
                        r = await client.get(path, params=params, headers=headers)
                        _ = r.content
                        elapsed = (time.perf_counter() - started) * 1000
                        assert r.status_code == 200, (label, r.status_code, r.text[:300])
                        slowest = max(slowest, elapsed)
                        if n >= warmups:
                            times[office.contacts].setdefault(label, []).append(elapsed)
                    if n == 0 and slowest > SLOW_MS:
                        # a read of seconds: one warm-up, SLOW_REQUESTS timed (bounded run)
                        warmups, count = 1, min(requests, SLOW_REQUESTS)
                    n += 1
    return times


def report(offices_: list[Office], times: dict[int, dict[str, list[float]]]) -> str:
    base = offices_[0]
    big = offices_[-1]
    if big is base:
        lines = [f"| read | p50 ms at {base.contacts:,} | p99 ms |", "|---|---:|---:|"]
        for label, values in times[base.contacts].items():
            p50, p99 = quantiles(values)
            lines.append(f"| {label} | {p50:.1f} | {p99:.1f} |")
        return "\n".join(lines)
    lines = [
        f"| read | p50 ms at {big.contacts:,} | p99 ms | p50 ms at {base.contacts:,} "
        "| p99 ms | ratio (p50) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label in times[base.contacts]:
        b50, b99 = quantiles(times[base.contacts][label])
        g50, g99 = quantiles(times[big.contacts][label])
        lines.append(
            f"| {label} | {g50:.1f} | {g99:.1f} | {b50:.1f} | {b99:.1f} | {g50 / b50:.2f} |"
        )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", default="full", help="full, tenth, hundredth or a number")
    parser.add_argument("--requests", type=int, default=50, help="per read and size")
    parser.add_argument("--keep", action="store_true", help="keep the databases")
    parser.add_argument("--prefix", default=PREFIX, help="of the databases' names")
    parser.add_argument("--only", default="", help="the reads whose label starts so")
    parser.add_argument(
        "--reuse", action="store_true", help="read the kept databases again (no build)"
    )
    args = parser.parse_args()
    size = SIZES.get(args.size) or int(args.size)
    sizes = [BASELINE] if size == BASELINE else [BASELINE, size]
    built: list[Office] = []
    try:
        for contacts in sizes:
            if args.reuse:
                built.append(await reuse(contacts, args.prefix))
                continue
            office = await build(contacts, args.prefix)
            built.append(office)
            print(
                f"# {contacts:,} contacts, {10 * contacts:,} messages, {contacts // 5:,} cards: "
                f"filled in {office.seconds:.0f} s; load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        times = await measure(built, args.requests, args.only)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{args.requests} requests per read and size, in process, alternating sizes\n")
        print(report(built, times))
    finally:
        if not args.keep:
            for office in built:
                await drop(office)


if __name__ == "__main__":
    asyncio.run(main())
