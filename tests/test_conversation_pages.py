"""GET /conversation's pages past the first read by ids (0039, issue 45): every page, deep
ones included, is the plain ``LIMIT … OFFSET`` answer of the list's statement, row for row,
ties and all."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import Row, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import repository, service
from officehub.conversations.models import Conversation, ConversationRead, ConversationTag
from officehub.conversations.schemas import ConversationOut
from officehub.kit.ids import new_id
from officehub.kit.pagination import ListQuery, Page, PageParams, paginate_rows
from officehub.kit.raw_read import on_raw_driver
from officehub.kit.timeutil import isoformat, utcnow
from tests import factories as f
from tests.helpers import OfficeFixture

ROWS = 61
LIMIT = 7


async def _seed(session: AsyncSession, office_id: str) -> dict[str, str]:
    """``ROWS`` conversations over two inboxes whose sort keys tie often: five distinct
    last-message times (and some with none), one in nine pinned; statuses, assignees and
    the archived flag varied."""
    inboxes = [await f.make_inbox(session, office_id, name) for name in ("Um", "Dois")]
    integrations = [await f.make_integration(session, office_id, i.id) for i in inboxes]
    user = await f.make_user(session, office_id)
    tag = await f.make_tag(session, office_id, inboxes[0].id, name="urgente")
    base = utcnow().replace(microsecond=0)
    rows: list[dict[str, Any]] = []
    for n in range(ROWS):
        name = f"Ana Vasconcelos {n}" if n % 4 == 2 else f"Maria Souza {n}"
        person = await f.make_contact(session, office_id, name, phone=f"+551199{n:07d}")
        rows.append(
            {
                "id": new_id(),
                "office_id": office_id,
                "person_id": person.id,
                "inbox_id": integrations[n % 2].inbox_id,
                "integration_id": integrations[n % 2].id,
                "status": "CLOSED" if n % 3 == 2 else "OPEN",
                "priority": "MEDIUM",
                "assigned_user_id": user.id if n % 4 == 1 else None,
                "created_at": base - timedelta(minutes=n),
                "updated_at": base,
                "sorted_at": None if n % 13 == 5 else base - timedelta(hours=n % 5),
                "is_fixed": n % 9 == 0,
                "is_archived": n % 10 == 3,
            }
        )
    await session.execute(insert(Conversation), rows)
    tagged = [
        {"office_id": office_id, "conversation_id": r["id"], "tag_id": tag.id}
        for n, r in enumerate(rows)
        if n % 3 == 1
    ]
    await session.execute(insert(ConversationTag), tagged)
    await session.commit()
    return {"inbox_id": inboxes[0].id, "user_id": user.id, "tag_id": tag.id}


def _filters(seeded: dict[str, str]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(the route's query, ``conversations_list``'s arguments) for each list."""
    return [
        ({}, {}),
        ({"status": "OPEN"}, {"status": "OPEN"}),
        ({"unassigned": "true"}, {"unassigned": True}),
        ({"isArchived": "false"}, {"is_archived": False}),
        ({"inboxId": seeded["inbox_id"]}, {"inbox_id": seeded["inbox_id"]}),
        (
            {"inboxId": seeded["inbox_id"], "status": "CLOSED", "isArchived": "false"},
            {"inbox_id": seeded["inbox_id"], "status": "CLOSED", "is_archived": False},
        ),
        ({"assigneeId": seeded["user_id"]}, {"assigned_user_id": seeded["user_id"]}),
        ({"tagId": seeded["tag_id"]}, {"tag_id": seeded["tag_id"]}),
        (
            {"q": "vasconcelos", "status": "OPEN"},
            {"search": repository.Search(name="vasconcelos", text="vasconcelos"), "status": "OPEN"},
        ),
    ]


async def test_every_page_is_the_plain_offset_page_of_the_list(
    session: AsyncSession, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    await _seed(session, office_b.id)
    seeded = await _seed(session, office_a.id)
    seen: list[dict[str, Any]] = [
        {"seen": repository.Seen((seeded["inbox_id"],))},
        {"seen": repository.Seen((seeded["inbox_id"],), seeded["user_id"]), "status": "OPEN"},
    ]
    for arguments in [a for _, a in _filters(seeded)] + seen:
        query, values = repository.conversations_list(office_a.id, **arguments)
        plain = [tuple(r) for r in (await session.execute(query.stmt, values)).all()]
        assert plain, arguments
        assert {r._mapping["office_id"] for r in await session.execute(query.stmt, values)} == {
            office_a.id
        }
        paged: list[tuple[Any, ...]] = []
        for offset in range(0, len(plain) + LIMIT, LIMIT):
            bound = {**values, "page_limit": LIMIT, "page_offset": offset}
            rows = (await session.execute(query.deep, bound)).all()
            old = (await session.execute(query.stmt.limit(LIMIT).offset(offset), values)).all()
            assert [tuple(r) for r in rows] == [tuple(r) for r in old], (arguments, offset)
            if rows:  # the same columns, by the same names
                assert list(rows[0]._mapping) == list(old[0]._mapping)
            paged += [tuple(r) for r in rows]
        assert paged == plain, arguments


async def test_the_routes_pages_follow_the_list_order_ties_by_id(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Through the route: pinned first, then the newest last message, then (ties) the
    greater id first; the pages together are the whole list, each once, and every page
    answers the same total."""
    seeded = await _seed(session, office_a.id)
    stored = {
        c.id: c
        for c in (
            await session.execute(
                Conversation.__table__.select().where(Conversation.office_id == office_a.id)
            )
        ).all()
    }
    for params, arguments in _filters(seeded):
        query, values = repository.conversations_list(office_a.id, **arguments)
        expected = [r._mapping["id"] for r in await session.execute(query.stmt, values)]
        seen: list[str] = []
        page = 1
        while True:
            r = await client.get(
                "/conversation",
                params={**params, "page": page, "limit": LIMIT},
                headers=office_a.headers,
            )
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["totalResults"] == len(expected), params
            if not body["data"]:
                break
            seen += [c["id"] for c in body["data"]]
            page += 1
        assert seen == expected, params
        assert page - 1 == body["totalPages"], params
        timed = [stored[i] for i in seen if stored[i].sorted_at is not None]
        keys = [(c.is_fixed, c.sorted_at, c.id) for c in timed]
        assert keys == sorted(keys, reverse=True), params
        # ties exist, and are broken by the id
        assert len({k[:2] for k in keys}) < len(keys), params


async def test_a_kept_list_reads_through_the_raw_driver_as_through_sqlalchemy(
    session: AsyncSession, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    """The list's kept shapes (built once, ``KeptList``) are read on PostgreSQL through the
    raw driver (``kit.raw_read``), each page in one statement: page, deep page, past the
    last (its exact total), the page's rows as dicts of the answer's columns with the
    values of SQLAlchemy's rows (its timestamps as the API writes them), written the same,
    byte for byte (tags, names, read marks, last message, SLA and its earliest breach) by
    ``listed_fields`` and ``ConversationPageWritten`` from the page's own extras as by
    ``present`` and ``Page[ConversationOut]`` from its reads.
    SQLite, and a list built per request (a search), read through SQLAlchemy."""
    await _seed(session, office_b.id)
    seeded = await _seed(session, office_a.id)
    extra = await f.make_tag(session, office_a.id, seeded["inbox_id"], name="Ábaco")
    ids = list(
        await session.scalars(
            select(Conversation.id)
            .where(Conversation.office_id == office_a.id)
            .order_by(Conversation.id)
        )
    )
    at = utcnow().replace(microsecond=123456)
    for n, ident in enumerate(ids[::4]):
        await session.execute(
            update(Conversation)
            .where(Conversation.id == ident)
            .values(
                last_message_id=new_id(),
                last_message_text=None if n % 3 == 0 else f"Olá {n}",
                last_message_type="MEDIA" if n % 3 == 0 else "TEXT",
                last_message_at=at - timedelta(minutes=n),
                last_message_user_id=seeded["user_id"] if n % 2 else None,
                inbound_count=n % 4,
                inbound_read=n % 2,
                sla_policy_id=new_id() if n % 5 == 1 else None,
                first_response_due_at=at,
                resolution_breached_at=at + timedelta(seconds=n) if n % 2 else None,
                next_response_breached_at=at - timedelta(seconds=n),
            )
        )
    await session.execute(
        insert(ConversationTag),
        [{"office_id": office_a.id, "conversation_id": i, "tag_id": extra.id} for i in ids[1::6]],
    )
    await session.execute(
        insert(ConversationRead),
        [
            {"office_id": office_a.id, "conversation_id": i, "user_id": seeded["user_id"]}
            | {"inbound_read": 1, "read_at": at}
            for i in ids[::8]
        ],
    )
    await session.commit()
    raw_driver = on_raw_driver(session)
    varied = dict.fromkeys(("tags", "sender", "breach", "unread", "past"), False)
    seen: list[dict[str, Any]] = [
        {"seen": repository.Seen((seeded["inbox_id"],))},
        {"seen": repository.Seen((seeded["inbox_id"],), seeded["user_id"]), "status": "OPEN"},
    ]
    for arguments in [a for _, a in _filters(seeded)] + seen:
        query, values = repository.conversations_list(office_a.id, **arguments)
        kept = "search" not in arguments
        assert isinstance(query, repository.KeptList) == kept, arguments
        orm = ListQuery(query.stmt, query.count, query.deep)  # the same list, through SQLAlchemy
        for page in (1, 2, 5, 20):
            params = PageParams(page, LIMIT)
            records, expected_total = await paginate_rows(session, orm, params, values)
            assert all(isinstance(r, Row) for r in records)
            for user_id in (None, seeded["user_id"]):
                expected = await service.present(session, office_a.id, records, user_id)
                if raw_driver and isinstance(query, repository.KeptList):
                    # one statement: the page, its tags, names, read marks and total
                    rows, total = await repository.raw_page(session, query, params, values, user_id)
                    for row, record in zip(rows, records, strict=True):
                        plain = record._asdict()
                        assert {k: row[k] for k in repository.LIST_COLUMNS} == {
                            k: plain[k] for k in repository.LIST_COLUMNS
                        }, (arguments, page)
                        # the timestamps as the API writes them, written by PostgreSQL
                        assert {k: row[k] for k in repository.LIST_TIMES} == {
                            k: None if plain[k] is None else isoformat(plain[k])
                            for k in repository.LIST_TIMES
                        }, (arguments, page)
                    listed = [service.listed_fields(r, user_id is not None) for r in rows]
                    page_of = {"data": listed, "total_results": total}
                    page_of["total_pages"] = math.ceil(total / LIMIT)
                    written = service.ConversationPageWritten.model_validate(page_of)
                    answer = written.model_dump_json(by_alias=True)
                else:
                    found, total = await paginate_rows(session, query, params, values)
                    answered = await service.present(session, office_a.id, found, user_id)
                    answer = (
                        Page[ConversationOut]
                        .of(answered, total, params)
                        .model_dump_json(by_alias=True)
                    )
                assert total == expected_total, (arguments, page)
                varied["past"] |= not records and total > 0
                wanted = Page[ConversationOut].of(expected, expected_total, params)
                assert answer == wanted.model_dump_json(by_alias=True), (arguments, page, user_id)
                for a in expected:
                    varied["tags"] |= len(a.tags) > 1
                    varied["sender"] |= bool(a.last_message and a.last_message.user_name)
                    varied["breach"] |= bool(a.sla and a.sla.breached_at)
                    varied["unread"] |= a.unread_count > 0
    # the answers compared held each part: tags, a last message (an operator's), an SLA
    # with a breach, unread messages
    assert all(varied.values()), varied
