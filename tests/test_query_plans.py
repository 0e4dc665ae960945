"""The hot queries are served by an index, proven by the database's own plan.

Each test seeds a few thousand rows in bulk (most of them in the office under test, the rest
in another office), runs the real route or worker job while a ``before_cursor_execute``
listener records the SQL the service sends, and asks the database to plan that very
statement with its very parameters, so the test follows the code.

PostgreSQL: ``EXPLAIN (FORMAT JSON)`` after ``ANALYZE``, with ``enable_seqscan = off``. That
makes it a plan-shape check: a sequential scan only costs more, so it is still chosen when
no index can serve the query, and the test asserts the plan reads the big table through
the index meant for it (never a ``Seq Scan`` of it). Whether the planner also prefers that
index at scale is what ``bench/contact_search.py`` and ``bench/funnel_read.py`` measure.
SQLite: ``EXPLAIN QUERY PLAN``: the big table is only ever ``SEARCH``ed through an index,
never ``SCAN``ned.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import event, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.models import AutomationRule
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation, ConversationCount
from officehub.crm.models import Card
from officehub.kit.config import Settings
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from officehub.webhooks.delivery import deliver_due
from officehub.webhooks.models import WebhookDelivery
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule
from tests.helpers import OfficeFixture
from tests.webhook_helpers import create_webhook

ROWS = 3_000
"""Rows of the big table in the office under test (as many again in another office)."""
CONTACTS = 30_000
"""Contacts of the office under test in the search tests: fewer, and reading all of the
office's through any index of it (even ``(office_id, ddd)``) is estimated cheaper than a
trigram index."""

Captured = list[tuple[str, Any]]


@contextmanager
def capturing(app: FastAPI) -> Iterator[Captured]:
    """Every statement the app's engine sends while the block runs, with its parameters."""
    sent: Captured = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


def the_one(sent: Captured, *fragments: str) -> tuple[str, Any]:
    """The single captured statement containing every fragment."""
    found = [(s, p) for s, p in sent if all(frag in s for frag in fragments)]
    assert len(found) == 1, [s for s, _ in sent]
    return found[0]


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _walk(child)


async def plan(session: AsyncSession, captured: tuple[str, Any], table: str) -> set[str]:
    """How the database reads ``table`` for the captured statement: the index names it
    uses (PostgreSQL) or the plan lines naming it (SQLite). Fails on a scan of the table."""
    statement, parameters = captured
    conn = await session.connection()
    if conn.dialect.name == "postgresql":
        # The suite's PostgreSQL database is one for the session, emptied by DELETE after
        # each test: the dead rows earlier tests left (thousands of conversations) weigh in
        # the planner's costs until a vacuum, and turned a plan (test_reports, stop 52's
        # pre-check). Vacuumed here, the table is the test's own rows, whatever ran before.
        engine = conn.engine
        async with engine.connect() as outside:
            autocommit = await outside.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.exec_driver_sql(f"VACUUM ANALYZE {table}")
        await conn.exec_driver_sql("SET enable_seqscan = off")
        result = await conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {statement}", parameters)
        raw = result.scalar_one()
        document = raw if isinstance(raw, list) else json.loads(raw)
        nodes = [n for n in _walk(document[0]["Plan"]) if n.get("Relation Name") == table]
        assert nodes, document
        text_plan = json.dumps(document, indent=1)
        assert all(n["Node Type"] != "Seq Scan" for n in nodes), text_plan
        # A bitmap heap scan names the table; its bitmap index scans (below it) the indexes.
        return {i["Index Name"] for n in nodes for i in _walk(n) if "Index Name" in i}
    await conn.exec_driver_sql(f"ANALYZE {table}")
    result = await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
    lines = [str(row._mapping["detail"]) for row in result.all()]
    mine = [line for line in lines if line.split(" ")[1:2] == [table]]
    assert mine, lines
    assert all(line.startswith("SEARCH ") for line in mine), lines
    return set(mine)


def uses(found: set[str], index: str) -> bool:
    """PostgreSQL names the index; SQLite says ``… USING [COVERING] INDEX <name> (…)``."""
    return index in found or any(f" INDEX {index} " in f"{line} " for line in found)


async def bulk(session: AsyncSession, model: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), 1000):
        await session.execute(insert(model), rows[start : start + 1000])


def _surname(n: int) -> str:
    """One contact in 300 is a Vasconcelos: a selective search."""
    return "Vasconcelos" if n % 300 == 7 else ("Souza", "Lima", "Gonçalves")[n % 3]


async def seed_contacts(session: AsyncSession, office_id: str, count: int) -> list[str]:
    now = utcnow()
    first = ["Maria", "José", "Ana", "João", "Paulo", "Beatriz"]
    rows: list[dict[str, Any]] = [
        {
            "id": new_id(),
            "office_id": office_id,
            "name": f"{first[n % len(first)]} {_surname(n)} {n}",
            "search_name": f"{first[n % len(first)].lower()} {_surname(n).lower()} {n}",
            "phone": f"+55119{n:08d}",
            "is_blocked": False,
            "created_at": now,
            "updated_at": now,
        }
        for n in range(count)
    ]
    await bulk(session, Contact, rows)
    return [str(r["id"]) for r in rows]


async def test_contact_search_reads_the_trigram_index_or_the_office_one(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    await seed_contacts(session, office_a.id, CONTACTS)
    await seed_contacts(session, office_b.id, ROWS)
    await session.commit()
    with capturing(app) as sent:
        response = await client.get(
            "/people", params={"search": "RIA SOUZ"}, headers=office_a.headers
        )
        assert response.status_code == 200, response.text
        assert response.json()["totalResults"] == CONTACTS // 6  # every Maria of office A
        common = sent[:]
        response = await client.get(
            "/people", params={"search": "SCONCEL"}, headers=office_a.headers
        )
        assert response.status_code == 200, response.text
        assert response.json()["totalResults"] == CONTACTS // 300  # office A's Vasconcelos
    rare = sent[len(common) :]
    postgresql = (await session.connection()).dialect.name == "postgresql"
    # A rare fragment: its few matches through the trigram index (PostgreSQL), page and count.
    for captured in (the_one(rare, "LIKE", "LIMIT"), the_one(rare, "count(*)", "LIKE")):
        found = await plan(session, captured, "contacts")
        if postgresql:
            assert uses(found, "ix_contacts_office_id_search_name_trgm"), found
        else:  # no trigram index: bounded by the office, never the whole table (with the
            # username's match beside the name's, SQLite may take another office index)
            assert any("SEARCH contacts USING INDEX ix_contacts_office_id_" in f for f in found)
            assert not any(f.startswith("SCAN contacts") for f in found), found
    # A fragment a sixth of the office matches: the page may rather walk the office's names
    # in order (it stops after 50); any index, but never a scan of the table.
    for captured in (the_one(common, "LIKE", "LIMIT"), the_one(common, "count(*)", "LIKE")):
        assert await plan(session, captured, "contacts")


TRIGRAM_INDEXES = {
    "ix_contacts_office_id_search_name_trgm",
    "ix_contacts_office_id_whatsapp_username_trgm",
    "ix_contacts_office_id_phone_trgm",
}


async def test_contact_search_reads_its_matches_alone_never_the_whole_office(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    """The page and the count of a search read the contacts once per match (name, username,
    phone), nothing else (PostgreSQL): the matches are not joined back to the table, which
    read every contact of the office (its primary key walked, or the table hashed) to join
    a few; a rare fragment's through the trigram indexes alone."""
    await seed_contacts(session, office_a.id, CONTACTS)
    await seed_contacts(session, office_b.id, ROWS)
    await session.commit()
    phone = sum("119000012" in f"+55119{n:08d}" for n in range(CONTACTS))
    searches = {
        "SCONCEL": CONTACTS // 300,
        "(11) 9000012": phone,
        "zzzz": 0,
        "maria souza": CONTACTS // 6,
    }
    sent_by_search = {}
    for search, total in searches.items():
        with capturing(app) as sent:
            response = await client.get(
                "/people", params={"search": search}, headers=office_a.headers
            )
            assert response.status_code == 200, response.text
            assert response.json()["totalResults"] == total, search
        sent_by_search[search] = [(s, p) for s, p in sent if "FROM contacts" in s and "LIKE" in s]
    conn = await session.connection()
    for search, statements in sent_by_search.items():
        assert statements, search
        for captured in statements:
            found = await plan(session, captured, "contacts")
            if conn.dialect.name != "postgresql":  # no trigram index: the office's contacts
                assert all(" INDEX ix_contacts_office_id_" in f for f in found), found
                continue
            result = await conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {captured[0]}", captured[1])
            raw = result.scalar_one()
            document = raw if isinstance(raw, list) else json.loads(raw)
            reads = [n for n in _walk(document[0]["Plan"]) if n.get("Relation Name") == "contacts"]
            # the page's rows by their ids, never the primary key walked whole
            by_id = [n for n in reads if n.get("Index Name") == "pk_contacts"]
            assert all("Index Cond" in n for n in by_id), document
            arms = [n for n in reads if n not in by_id]
            assert len(arms) == captured[0].count("LIKE") - captured[0].count("NOT coalesce")
            if search != "maria souza":  # the rare fragments, through the trigram indexes
                assert {i for n in arms for i in _index_names(n)} <= TRIGRAM_INDEXES, document


def _index_names(node: dict[str, Any]) -> set[str]:
    return {i["Index Name"] for i in _walk(node) if "Index Name" in i}


async def test_phone_fragment_search_reads_both_trigram_indexes(
    client: httpx.AsyncClient, app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    await seed_contacts(session, office_a.id, CONTACTS)
    await session.commit()
    with capturing(app) as sent:
        response = await client.get(
            "/people", params={"search": "(11) 9000012"}, headers=office_a.headers
        )
        assert response.status_code == 200, response.text
        expected = sum("119000012" in f"+55119{n:08d}" for n in range(CONTACTS))
        assert response.json()["totalResults"] == expected
    found = await plan(session, the_one(sent, "FROM contacts", "LIKE", "LIMIT"), "contacts")
    if (await session.connection()).dialect.name == "postgresql":
        assert {
            "ix_contacts_office_id_search_name_trgm",
            "ix_contacts_office_id_phone_trgm",
        } <= found, found
    else:
        assert found


async def test_the_funnel_page_reads_each_column_through_its_index(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    now = utcnow()
    funnel_id = ""
    for office in (office_b, office_a):  # the office under test last: its funnel is read
        inbox = await f.make_inbox(session, office.id)
        funnel, columns = await f.make_funnel(session, office.id, inbox.id, 4)
        people = await seed_contacts(session, office.id, ROWS)
        cards = [
            {
                "id": new_id(),
                "office_id": office.id,
                "funnel_id": funnel.id,
                "column_id": columns[n % 4].id,
                "person_id": person,
                "custom_fields": [],
                "column_changed_at": now - timedelta(minutes=n),
                "created_at": now,
                "updated_at": now,
            }
            for n, person in enumerate(people)
        ]
        await bulk(session, Card, cards)
        funnel_id = funnel.id
    await session.commit()
    with capturing(app) as sent:
        response = await client.get(f"/funnel/{funnel_id}", headers=office_a.headers)
        assert response.status_code == 200, response.text
        assert [len(c["items"]) for c in response.json()["columns"]] == [20, 20, 20, 20]
    found = await plan(session, the_one(sent, "FROM crm_cards", "UNION ALL"), "crm_cards")
    assert uses(found, "ix_crm_cards_office_id_column_id_column_changed_at_id"), found


def _listed_rows(
    office_id: str, people: list[str], integrations: list[Any], now: datetime
) -> list[dict[str, Any]]:
    """A conversation per person, spread over ``integrations``: a third closed, one in ten
    archived, one in 500 pinned, ``sorted_at`` in ties of several rows."""
    return [
        {
            "id": new_id(),
            "office_id": office_id,
            "person_id": person,
            "inbox_id": integrations[n % len(integrations)].inbox_id,
            "integration_id": integrations[n % len(integrations)].id,
            "status": "OPEN" if n % 3 else "CLOSED",
            "priority": "MEDIUM",
            "created_at": now - timedelta(minutes=n),
            "updated_at": now,
            "sorted_at": now - timedelta(seconds=n * 7 % 5000),
            "is_fixed": n % 500 == 0,
            "is_archived": n % 10 == 3,
        }
        for n, person in enumerate(people)
    ]


async def test_the_conversation_list_of_an_inbox_reads_its_index(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    now = utcnow()
    inbox_id = ""
    for office in (office_b, office_a):
        inboxes = [await f.make_inbox(session, office.id, name) for name in ("Um", "Dois")]
        integrations = [await f.make_integration(session, office.id, i.id) for i in inboxes]
        people = await seed_contacts(session, office.id, ROWS)
        await bulk(session, Conversation, _listed_rows(office.id, people, integrations, now))
        inbox_id = inboxes[0].id
    await session.commit()
    with capturing(app) as sent:
        response = await client.get(
            "/conversation", params={"inboxId": inbox_id, "limit": 20}, headers=office_a.headers
        )
        assert response.status_code == 200, response.text
        assert response.json()["totalResults"] == ROWS // 2
    page = the_one(sent, "FROM conversations", "ORDER BY", "LIMIT")
    found = await plan(session, page, "conversations")
    # Pinned first, then by last message: the order of the index, read backwards.
    assert uses(found, "ix_conversations_office_id_inbox_id_listed"), found
    # The total is the inbox's kept counts summed (0038), no count of its conversations.
    await plan(session, the_one(sent, "FROM conversation_counts"), "conversation_counts")
    assert not [s for s, _ in sent if "count(" in s and "FROM conversations" in s], sent
    with capturing(app) as sent:
        response = await client.get("/conversation", params={"limit": 20}, headers=office_a.headers)
        assert response.status_code == 200, response.text
    page = the_one(sent, "FROM conversations", "ORDER BY", "LIMIT")
    found = await plan(session, page, "conversations")
    assert uses(found, "ix_conversations_office_id_listed"), found


async def test_a_deep_page_of_a_filtered_list_skips_its_offset_in_the_listed_index(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    """``status=OPEN`` or ``unassigned`` past the first pages: the page's ids are read in
    the list's order from ``ix_conversations_office_id_listed``, the filter checked in its
    entries (PostgreSQL: an index-only scan, the columns included by 0039), and only the
    page's rows are read from the table, by id (issue 45: no row read per skipped one).
    Page 10 (offset 180): far deeper into these 3,000 rows the planner rightly sorts the
    office's matching ids instead (as at the bench's 10,000); at 1,000,000 page 100 is
    read as here (docs/performance.md)."""
    now = utcnow()
    for office in (office_b, office_a):
        inbox = await f.make_inbox(session, office.id, "Um")
        integration = await f.make_integration(session, office.id, inbox.id)
        user = await f.make_user(session, office.id)
        people = await seed_contacts(session, office.id, ROWS)
        rows = _listed_rows(office.id, people, [integration], now)
        for n, row in enumerate(rows):
            row["assigned_user_id"] = None if n % 2 else user.id
        await bulk(session, Conversation, rows)
    await session.commit()
    for params in ({"status": "OPEN"}, {"unassigned": "true"}):
        with capturing(app) as sent:
            response = await client.get(
                "/conversation",
                params={**params, "page": 10, "limit": 20},
                headers=office_a.headers,
            )
            assert response.status_code == 200, response.text
            assert len(response.json()["data"]) == 20
        page = the_one(sent, "FROM conversations", "ORDER BY", "LIMIT")
        found = await plan(session, page, "conversations")
        assert uses(found, "ix_conversations_office_id_listed"), found
        conn = await session.connection()
        if conn.dialect.name != "postgresql":
            continue
        result = await conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {page[0]}", page[1])
        raw = result.scalar_one()
        document = raw if isinstance(raw, list) else json.loads(raw)
        reads = {
            (n["Node Type"], n.get("Index Name"))
            for n in _walk(document[0]["Plan"])
            if n.get("Relation Name") == "conversations"
        }
        assert reads == {
            ("Index Only Scan", "ix_conversations_office_id_listed"),
            ("Index Scan", "pk_conversations"),
        }, json.dumps(document, indent=1)


async def test_the_console_list_of_unarchived_conversations_sums_its_kept_counts(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    """The console asks every list with ``isArchived=false``, alone or beside an inbox, a
    status or the unassigned: its total is the sum of the office's rows of
    ``conversation_counts`` (0038, kept by triggers; before it a count from
    ``ix_conversations_office_id_is_archived_filters``, issue 45), read through their key;
    no statement counts the conversations. The page is read in the list's order. A filter
    outside the counts' keys (a tag) still counts the conversations."""
    now = utcnow()
    inboxes = {}
    for office in (office_b, office_a):
        inbox = await f.make_inbox(session, office.id, "Um")
        inboxes[office.id] = inbox.id
        integration = await f.make_integration(session, office.id, inbox.id)
        people = await seed_contacts(session, office.id, ROWS)
        rows = _listed_rows(office.id, people, [integration], now)
        for n, row in enumerate(rows):
            row["is_archived"] = n % 2 == 1
        await bulk(session, Conversation, rows)
    # Another office's many keys (an office of many users): the counts' rows of office A
    # are a few of the table's, found by its key, not by a scan of every office's.
    await bulk(
        session,
        ConversationCount,
        [
            {
                "office_id": office_b.id,
                "inbox_id": inboxes[office_b.id],
                "status": "OPEN",
                "assignee_key": f"u{n:031d}",
                "is_archived": False,
                "shard": 0,
                "conversations": 0,
            }
            for n in range(2000)
        ],
    )
    await session.commit()
    unarchived: dict[str, str | int] = {"isArchived": "false", "limit": 20}
    lists: list[tuple[dict[str, str], int]] = [
        ({}, ROWS // 2),
        ({"inboxId": inboxes[office_a.id]}, ROWS // 2),
        ({"status": "OPEN"}, sum(1 for n in range(ROWS) if n % 2 == 0 and n % 3)),
        ({"unassigned": "true"}, ROWS // 2),
    ]
    for other, total in lists:
        with capturing(app) as sent:
            response = await client.get(
                "/conversation", params={**unarchived, **other}, headers=office_a.headers
            )
            assert response.status_code == 200, response.text
            assert response.json()["totalResults"] == total, other
        kept = the_one(sent, "FROM conversation_counts")
        assert "sum(" in kept[0], kept
        assert not [s for s, _ in sent if "count(" in s and "FROM conversations" in s], other
        if not other:
            # first: on PostgreSQL the page carries the kept sum, and explained first for
            # conversation_counts (before the conversations' ANALYZE) the same text was
            # explained again with the plan of a table without statistics
            page = the_one(sent, "FROM conversations", "ORDER BY", "LIMIT")
            found = await plan(session, page, "conversations")
            assert uses(found, "ix_conversations_office_id_listed"), found
        await plan(session, kept, "conversation_counts")
    tag = await f.make_tag(session, office_a.id, inboxes[office_a.id])
    await session.commit()
    with capturing(app) as sent:
        response = await client.get(
            "/conversation", params={**unarchived, "tagId": tag.id}, headers=office_a.headers
        )
        assert response.json()["totalResults"] == 0
    # the count of its conversations (on PostgreSQL also inside the page's statement, as
    # its total: an empty page has no row to carry it, so it is counted again alone)
    [counted] = [s for s, _ in sent if s.startswith("SELECT count(*)")]
    assert "FROM conversations" in counted, counted
    assert not [s for s, _ in sent if "conversation_counts" in s], sent


async def test_the_rule_lookup_of_an_event_reads_the_evaluation_index(
    client: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    now = utcnow()
    triggers = ["chat.message.received", "chat.message.sent", "crm.lead.moved", "contact.updated"]
    for office in (office_a, office_b):
        rows = [
            {
                "id": new_id(),
                "office_id": office.id,
                "name": f"Regra {n}",
                "enabled": n % 5 != 0,
                "trigger_event": triggers[n % len(triggers)],
                "conditions": {},
                "actions": [{"action": "PAUSE_AUTOMATION", "actionParams": {}}],
                "priority": float(n % 7),
                "created_at": now,
                "updated_at": now,
            }
            for n in range(ROWS)
        ]
        await bulk(session, AutomationRule, rows)
    await session.commit()
    await create_rule(client, office_a, triggerEvent="contact.created")
    response = await client.post("/people", json={"name": "Ana"}, headers=office_a.headers)
    assert response.status_code == 201, response.text
    with capturing(app) as sent:
        await automation_worker(app, settings).run_until_idle()
    lookup = the_one(sent, "FROM automation_rules", "trigger_event")
    found = await plan(session, lookup, "automation_rules")
    assert uses(found, "ix_automation_rules_office_id_trigger_event_enabled_priority"), found


async def test_claiming_due_deliveries_reads_the_due_index(
    client: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    hook = await create_webhook(client, office_a, "http://127.0.0.1:9/hook")
    now = utcnow()
    rows = [
        {
            "id": new_id(),
            "office_id": office_a.id,
            "webhook_id": hook["id"],
            "event_id": new_id(),
            "event": "contact.created",
            "payload": {},
            "status": "SUCCESS" if n % 100 else "RETRYING",
            "attempt_count": 1,
            # the few still open are due later: the claim finds nothing to send
            "next_retry_at": now + timedelta(hours=1) if n % 100 == 0 else None,
            "created_at": now,
            "expires_at": now + timedelta(days=90),
        }
        for n in range(2 * ROWS)
    ]
    await bulk(session, WebhookDelivery, rows)
    await session.commit()
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, worker_id="plan")
    with capturing(app) as sent:
        assert await deliver_due(ctx) == 0
    claim = the_one(sent, "UPDATE webhook_deliveries", "next_retry_at")
    found = await plan(session, claim, "webhook_deliveries")
    assert uses(found, "ix_webhook_deliveries_due"), found


async def test_an_inboxs_routing_queue_reads_its_partial_index(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """The queue (routing: open, unassigned, in arrival order) is read from the index of
    queued rows only, however many conversations the inbox holds."""
    now = utcnow()
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    people = await seed_contacts(session, office_a.id, ROWS)
    rows = [
        {
            "id": new_id(),
            "office_id": office_a.id,
            "person_id": person,
            "inbox_id": inbox.id,
            "integration_id": integration.id,
            "status": "OPEN" if n % 3 else "CLOSED",
            "priority": "MEDIUM",
            "created_at": now - timedelta(minutes=n),
            "updated_at": now,
            "sorted_at": now,
            "is_fixed": False,
            "queued_at": now - timedelta(minutes=n) if n % 100 == 1 else None,
        }
        for n, person in enumerate(people)
    ]
    await bulk(session, Conversation, rows)
    await session.commit()
    h = office_a.headers
    policy = {"assignment": {"policy": "ROUND_ROBIN", "byLegalArea": False}}
    assert (await client.patch(f"/inbox/{inbox.id}", json=policy, headers=h)).status_code == 200
    body = {"name": "Ana", "email": "ana@example.com", "inboxIds": [inbox.id]}
    user = await client.post("/user", json={**body, "availability": "OFFLINE"}, headers=h)
    assert user.status_code == 201, user.text
    with capturing(app) as sent:  # coming online serves the queue
        r = await client.patch(
            f"/user/{user.json()['id']}", json={"availability": "ONLINE"}, headers=h
        )
        assert r.status_code == 200, r.text
    found = await plan(
        session,
        the_one(sent, "FROM conversations", "queued_at IS NOT NULL", "ORDER BY"),
        "conversations",
    )
    assert uses(found, "ix_conversations_office_id_inbox_id_queued_at"), found
    waiting = sum(1 for row in rows if row["queued_at"] is not None and row["status"] == "OPEN")
    served = await session.scalar(
        select(func.count())
        .select_from(Conversation)
        .where(Conversation.assigned_user_id == user.json()["id"])
    )
    assert served == waiting > 0
