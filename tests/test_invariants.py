"""Rules two simultaneous requests could break, held by the database.

Each test fires at least 8 requests at once at a real server (``tests/server.py``) and
checks the outcome in the database: exactly one created and the rest 409, every tag kept,
distinct positions, no 500.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.conversations import repository as conversations_repository
from officehub.conversations.models import Conversation, ConversationTag
from officehub.crm import repository as crm_repository
from officehub.crm.models import Card, Funnel, FunnelColumn
from officehub.kit.db import Base
from officehub.kit.errors import Conflict, ServiceError
from officehub.kit.ids import new_id
from officehub.kit.integrity import conflict_for
from officehub.kit.repository import (
    flush_or_conflict,
    get_all_for_change,
    get_scoped,
    insert_or_conflict,
    lock_office,
)
from officehub.kit.timeutil import utcnow
from officehub.offices.models import Office
from officehub.users.models import User
from tests import factories as f
from tests.conftest import PG_URL
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire

N = 8


def _statuses(answers: list[httpx.Response]) -> Counter[int]:
    return Counter(r.status_code for r in answers)


def _codes(answers: list[httpx.Response], status: int) -> set[str]:
    return {error_of(r)["code"] for r in answers if r.status_code == status}


async def _count(app: FastAPI, stmt: Any) -> int:
    async with app.state.sessionmaker() as s:
        return int(await s.scalar(stmt) or 0)


# 1. One phone per office


async def test_one_phone_per_office_under_concurrent_creates(
    app: FastAPI, server_url: str, office_a: OfficeFixture
) -> None:
    formats = ["(11) 98765-4321", "11987654321", "+55 11 98765-4321", "+5511987654321"]
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.post(
                "/people",
                json={"name": f"Maria {i}", "phone": formats[i % len(formats)]},
                headers=office_a.headers,
            ),
        )
    assert _statuses(answers) == {201: 1, 409: N - 1}, [r.text for r in answers]
    assert _codes(answers, 409) == {"PHONE_TAKEN"}
    stored = select(func.count()).where(
        Contact.office_id == office_a.id, Contact.phone == "+5511987654321"
    )
    assert await _count(app, stored) == 1


async def test_one_phone_per_office_under_concurrent_patches(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ids = [(await f.make_contact(session, office_a.id, phone=None)).id for _ in range(N)]
    await session.commit()
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.patch(
                f"/people/{ids[i]}", json={"phone": "21 99876-5432"}, headers=office_a.headers
            ),
        )
    assert _statuses(answers) == {200: 1, 409: N - 1}, [r.text for r in answers]
    assert _codes(answers, 409) == {"PHONE_TAKEN"}
    stored = select(func.count()).where(
        Contact.office_id == office_a.id, Contact.phone == "+5521998765432"
    )
    assert await _count(app, stored) == 1


# 2. One card per contact (and conversation, also when it has none)


async def test_one_card_per_contact_without_conversation_under_concurrent_creates(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.post(
                "/funnel-column-card",
                json={"columnId": world.columns[i % 3].id, "personId": world.contact.id},
                headers=office_a.headers,
            ),
        )
    assert _statuses(answers) == {201: 1, 409: N - 1}, [r.text for r in answers]
    assert _codes(answers, 409) == {"CARD_EXISTS"}
    stored = select(func.count()).where(
        Card.office_id == office_a.id, Card.person_id == world.contact.id
    )
    assert await _count(app, stored) == 1


async def test_one_card_per_contact_and_conversation_under_concurrent_creates(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    body = {
        "columnId": world.columns[0].id,
        "personId": world.contact.id,
        "conversationId": world.conversation.id,
    }
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N, lambda _i: client.post("/funnel-column-card", json=body, headers=office_a.headers)
        )
    assert _statuses(answers) == {201: 1, 409: N - 1}, [r.text for r in answers]
    assert _codes(answers, 409) == {"CARD_EXISTS"}
    stored = select(func.count()).where(
        Card.office_id == office_a.id, Card.conversation_id == world.conversation.id
    )
    assert await _count(app, stored) == 1


# 3. One user per email, ignoring case


async def test_one_user_per_email_ignoring_case_under_concurrent_creates(
    app: FastAPI, server_url: str, office_a: OfficeFixture
) -> None:
    spellings = ["ana@example.com", "Ana@Example.com", "ANA@EXAMPLE.COM", "ana@EXAMPLE.com"]
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.post(
                "/user",
                json={"name": f"Ana {i}", "email": spellings[i % len(spellings)]},
                headers=office_a.headers,
            ),
        )
    assert _statuses(answers) == {201: 1, 409: N - 1}, [r.text for r in answers]
    assert _codes(answers, 409) == {"EMAIL_TAKEN"}
    stored = select(func.count()).where(
        User.office_id == office_a.id, User.email_key == "ana@example.com"
    )
    assert await _count(app, stored) == 1


async def test_one_user_per_email_ignoring_case_under_concurrent_patches(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ids = [(await f.make_user(session, office_a.id, name=f"User {i}")).id for i in range(N)]
    await session.commit()
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.patch(
                f"/user/{ids[i]}",
                json={"email": "Bia@Example.com" if i % 2 else "bia@example.com"},
                headers=office_a.headers,
            ),
        )
    assert _statuses(answers) == {200: 1, 409: N - 1}, [r.text for r in answers]
    assert _codes(answers, 409) == {"EMAIL_TAKEN"}


# 4. One open conversation per contact and integration


async def _closed_conversations(
    session: AsyncSession, office_id: str, count: int
) -> tuple[Any, list[str]]:
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(session, office_id, inbox.id)
    contact = await f.make_contact(session, office_id)
    ids = [
        (await f.make_conversation(session, office_id, contact.id, integration, status="CLOSED")).id
        for _ in range(count)
    ]
    await session.commit()
    return (inbox, integration, contact), ids


def _open_count(office_id: str, person_id: str) -> Any:
    return select(func.count()).where(
        Conversation.office_id == office_id,
        Conversation.person_id == person_id,
        Conversation.status == "OPEN",
    )


async def test_one_open_conversation_per_contact_and_integration_under_concurrent_opens(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    (inbox, integration, contact), _ = await _closed_conversations(session, office_a.id, 0)
    body = {"personId": contact.id, "inboxId": inbox.id, "integrationId": integration.id}
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N, lambda _i: client.post("/conversation", json=body, headers=office_a.headers)
        )
    assert _statuses(answers) == {201: 1, 200: N - 1}, [r.text for r in answers]
    assert len({r.json()["id"] for r in answers}) == 1
    assert await _count(app, _open_count(office_a.id, contact.id)) == 1
    assert len(await outbox(app, office_a.id, "chat.conversation.created")) == 1


async def test_one_open_conversation_per_contact_and_integration_under_concurrent_reopens(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    (_inbox, _integration, contact), ids = await _closed_conversations(session, office_a.id, N)
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.patch(
                f"/conversation/{ids[i]}", json={"status": "OPEN"}, headers=office_a.headers
            ),
        )
    assert _statuses(answers) == {200: 1, 409: N - 1}, [r.text for r in answers]
    assert _codes(answers, 409) == {"CONVERSATION_ALREADY_OPEN"}
    assert await _count(app, _open_count(office_a.id, contact.id)) == 1


async def test_one_open_conversation_per_contact_and_integration_reopens_against_opens(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Half reopen closed conversations, half open one: one stays open; every open
    answers that one (201 when it made it, else 200), every losing reopen 409."""
    (inbox, integration, contact), ids = await _closed_conversations(session, office_a.id, N)
    body = {"personId": contact.id, "inboxId": inbox.id, "integrationId": integration.id}
    async with concurrent_client(server_url) as client:

        def request(i: int) -> Any:
            if i % 2:
                return client.post("/conversation", json=body, headers=office_a.headers)
            return client.patch(
                f"/conversation/{ids[i]}", json={"status": "OPEN"}, headers=office_a.headers
            )

        answers = await fire(N, request)
    assert await _count(app, _open_count(office_a.id, contact.id)) == 1
    async with app.state.sessionmaker() as s:
        open_id = await s.scalar(
            select(Conversation.id).where(
                Conversation.person_id == contact.id, Conversation.status == "OPEN"
            )
        )
    opens, reopens = answers[1::2], answers[0::2]
    assert all(r.status_code in (200, 201) and r.json()["id"] == open_id for r in opens)
    assert {r.status_code for r in reopens} <= {200, 409}, [r.text for r in reopens]
    assert _codes(reopens, 409) <= {"CONVERSATION_ALREADY_OPEN"}
    created = sum(r.status_code == 201 for r in opens)
    reopened = sum(r.status_code == 200 for r in reopens)
    assert created + reopened == 1


async def test_an_open_refused_by_the_open_conversation_index_keeps_the_transaction(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """What ``POST /conversation`` does when a concurrent reopen won the index: the insert
    is refused inside a savepoint, and the request goes on to answer the open one (200)."""
    (_inbox, integration, contact), _ = await _closed_conversations(session, office_a.id, 0)
    existing = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    loser = Conversation(
        office_id=office_a.id,
        person_id=contact.id,
        inbox_id=integration.inbox_id,
        integration_id=integration.id,
        status="OPEN",
        priority="MEDIUM",
    )
    assert await conversations_repository.add_open(session, loser) is False
    found = await conversations_repository.find_open(
        session, office_a.id, contact.id, integration.id
    )
    assert found is not None and found.id == existing.id
    await session.commit()
    assert await _count(app, _open_count(office_a.id, contact.id)) == 1


# 5. Tags are added and removed row by row


async def test_concurrent_tag_additions_keep_every_tag(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    tags = [
        await f.make_tag(session, office_a.id, world.inbox.id, name=f"tag {i}") for i in range(N)
    ]
    await session.commit()
    path = f"/conversation/{world.conversation.id}/tags"
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N, lambda i: client.post(path, json={"tagId": tags[i].id}, headers=office_a.headers)
        )
        assert _statuses(answers) == {200: N}, [r.text for r in answers]
        final = await client.get(f"/conversation/{world.conversation.id}", headers=office_a.headers)
    expected = {world.tag.id, *(t.id for t in tags)}
    assert {t["id"] for t in final.json()["tags"]} == expected
    assert len(await outbox(app, office_a.id, "chat.conversation.updated")) == N


async def test_the_same_tag_added_at_once_is_one_row_and_one_event(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    extra = await f.make_tag(session, office_a.id, world.inbox.id, name="novo")
    await session.commit()
    path = f"/conversation/{world.conversation.id}/tags"
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N, lambda _i: client.post(path, json={"tagId": extra.id}, headers=office_a.headers)
        )
    assert _statuses(answers) == {200: N}, [r.text for r in answers]
    rows = select(func.count()).where(
        ConversationTag.conversation_id == world.conversation.id, ConversationTag.tag_id == extra.id
    )
    assert await _count(app, rows) == 1
    assert len(await outbox(app, office_a.id, "chat.conversation.updated")) == 1


async def test_concurrent_tag_removals_and_additions_each_keep_their_change(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    held = [await f.make_tag(session, office_a.id, world.inbox.id, f"old {i}") for i in range(4)]
    new = [await f.make_tag(session, office_a.id, world.inbox.id, f"new {i}") for i in range(4)]
    for tag in held:
        session.add(
            ConversationTag(
                office_id=office_a.id, conversation_id=world.conversation.id, tag_id=tag.id
            )
        )
    await session.commit()
    path = f"/conversation/{world.conversation.id}/tags"
    async with concurrent_client(server_url) as client:

        def request(i: int) -> Any:
            if i % 2:
                return client.delete(f"{path}/{held[i // 2].id}", headers=office_a.headers)
            return client.post(path, json={"tagId": new[i // 2].id}, headers=office_a.headers)

        answers = await fire(N, request)
        assert _statuses(answers) == {200: N}, [r.text for r in answers]
        final = await client.get(f"/conversation/{world.conversation.id}", headers=office_a.headers)
    assert {t["id"] for t in final.json()["tags"]} == {world.tag.id, *(t.id for t in new)}


async def _tag_row_identity(app: FastAPI, conversation_id: str, tag_id: str) -> str:
    """The physical identity of a conversation's tag row (PostgreSQL's ``xmin``, the
    transaction that inserted it; SQLite's ``rowid``): a row deleted and inserted again
    gets a new one, though the set of tags looks the same."""
    if app.state.engine.dialect.name == "postgresql":
        stmt = text(
            "SELECT xmin::text FROM conversation_tags WHERE conversation_id = :c AND tag_id = :t"
        )
    else:
        stmt = text(
            "SELECT rowid FROM conversation_tags WHERE conversation_id = :c AND tag_id = :t"
        )
    async with app.state.sessionmaker() as s:
        value = await s.scalar(stmt, {"c": conversation_id, "t": tag_id})
    assert value is not None, "the tag row is gone"
    return str(value)


async def test_a_patch_of_tags_changes_only_the_difference(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Concurrent PATCHes each naming the set {base, own}: the base tag's row is never
    deleted and inserted again (its identity is kept), the last writer's own tag is there,
    and a PATCH naming the tags already held changes nothing and emits nothing."""
    world = await make_world(session, office_a.id)
    own = [await f.make_tag(session, office_a.id, world.inbox.id, f"own {i}") for i in range(N)]
    # Another conversation's tag row, inserted after the base one: SQLite gives a row
    # inserted again a rowid above it, never the freed one.
    other = await f.make_contact(session, office_a.id, "João Lima")
    await f.make_conversation(session, office_a.id, other.id, world.integration, tags=[world.tag])
    await session.commit()
    base_row = await _tag_row_identity(app, world.conversation.id, world.tag.id)
    path = f"/conversation/{world.conversation.id}"
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.patch(
                path, json={"tags": [world.tag.id, own[i].id]}, headers=office_a.headers
            ),
        )
        assert _statuses(answers) == {200: N}, [r.text for r in answers]
        final = await client.get(path, headers=office_a.headers)
        final_ids = {t["id"] for t in final.json()["tags"]}
        assert world.tag.id in final_ids
        assert len(final_ids & {t.id for t in own}) == 1
        assert await _tag_row_identity(app, world.conversation.id, world.tag.id) == base_row
        events = len(await outbox(app, office_a.id))
        again = await client.patch(path, json={"tags": sorted(final_ids)}, headers=office_a.headers)
        assert again.status_code == 200, again.text
    assert {t["id"] for t in again.json()["tags"]} == final_ids
    assert len(await outbox(app, office_a.id)) == events
    assert await _tag_row_identity(app, world.conversation.id, world.tag.id) == base_row


async def test_concurrent_replacements_of_a_users_inboxes_apply_one_after_the_other(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    inboxes = [(await f.make_inbox(session, office_a.id, f"Inbox {i}")).id for i in range(N + 1)]
    await session.commit()
    wanted = [sorted(inboxes[i : i + 2]) for i in range(N)]
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.patch(
                f"/user/{user.id}", json={"inboxIds": wanted[i]}, headers=office_a.headers
            ),
        )
        assert _statuses(answers) == {200: N}, [r.text for r in answers]
        final = await client.get(f"/user/{user.id}", headers=office_a.headers)
    assert sorted(final.json()["inboxIds"]) in wanted


async def test_replacing_a_users_inboxes_leaves_every_other_users_inboxes(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A set is replaced for its owner only (``replace_set``): users' inboxes replaced one
    after the other, in the order the users were made and then the reverse (ids are
    time-ordered): after each, every user has exactly the inboxes last given for them."""
    users = [(await f.make_user(session, office_a.id, f"User {i}")).id for i in range(3)]
    inboxes = [(await f.make_inbox(session, office_a.id, f"Inbox {i}")).id for i in range(3)]
    await session.commit()
    expected: dict[str, list[str]] = {user: [] for user in users}
    pairs = list(zip(users, inboxes, strict=True))
    for user, inbox in [*pairs, *reversed(pairs)]:  # users made before and after each one
        r = await client.patch(
            f"/user/{user}", json={"inboxIds": [inbox]}, headers=office_a.headers
        )
        assert r.status_code == 200, r.text
        expected[user] = [inbox]
        seen = {
            u: (await client.get(f"/user/{u}", headers=office_a.headers)).json()["inboxIds"]
            for u in users
        }
        assert seen == expected


async def test_concurrent_replacements_of_a_tickets_assignees_apply_one_after_the_other(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    users = [(await f.make_user(session, office_a.id, f"User {i}")).id for i in range(N + 1)]
    await session.commit()
    async with concurrent_client(server_url) as client:
        status = await client.post(
            "/ticket-statuses", json={"name": "Aberto"}, headers=office_a.headers
        )
        ticket = await client.post(
            "/ticket",
            json={"title": "Prazo", "statusId": status.json()["id"], "assigneeIds": users[:2]},
            headers=office_a.headers,
        )
        assert ticket.status_code == 201, ticket.text
        path = f"/ticket/{ticket.json()['id']}"
        wanted = [sorted(users[i : i + 2]) for i in range(N)]
        answers = await fire(
            N,
            lambda i: client.patch(path, json={"assigneeIds": wanted[i]}, headers=office_a.headers),
        )
        assert _statuses(answers) == {200: N}, [r.text for r in answers]
        final = await client.get(path, headers=office_a.headers)
    assert sorted(final.json()["assigneeIds"]) in wanted


async def test_concurrent_patches_of_a_contacts_tags_change_only_the_difference(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    own = [await f.make_tag(session, office_a.id, world.inbox.id, f"own {i}") for i in range(N)]
    await session.commit()
    path = f"/people/{world.contact.id}"
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.patch(
                path, json={"tags": [world.tag.id, own[i].id]}, headers=office_a.headers
            ),
        )
        assert _statuses(answers) == {200: N}, [r.text for r in answers]
        final = await client.get(path, headers=office_a.headers)
    final_ids = {t["id"] for t in final.json()["tags"]}
    assert world.tag.id in final_ids
    assert final_ids & {t.id for t in own}


# 6. Column positions


async def test_concurrent_column_creation_gives_distinct_positions(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id, columns=2)
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.post(
                "/funnel-column",
                json={"funnelId": world.funnel.id, "name": f"Col {i}"}
                | ({"index": 0} if i % 3 == 0 else {}),
                headers=office_a.headers,
            ),
        )
        assert _statuses(answers) == {201: N}, [r.text for r in answers]
        listed = await client.get(
            "/funnel-column", params={"funnelId": world.funnel.id}, headers=office_a.headers
        )
    indexes = [c["index"] for c in listed.json()["data"]]
    assert sorted(indexes) == list(range(N + 2))
    async with app.state.sessionmaker() as s:
        positions = list(
            await s.scalars(
                select(FunnelColumn.position).where(FunnelColumn.funnel_id == world.funnel.id)
            )
        )
    assert sorted(positions) == list(range(N + 2))


async def test_concurrent_column_moves_keep_positions_distinct(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id, columns=N)
    async with concurrent_client(server_url) as client:
        answers = await fire(
            N,
            lambda i: client.patch(
                f"/funnel-column/{world.columns[i].id}",
                json={"index": (N - 1 - i)},
                headers=office_a.headers,
            ),
        )
        assert _statuses(answers) == {200: N}, [r.text for r in answers]
        listed = await client.get(
            "/funnel-column", params={"funnelId": world.funnel.id}, headers=office_a.headers
        )
    assert sorted(c["index"] for c in listed.json()["data"]) == list(range(N))


# 7. Delete guards


async def test_a_column_holding_cards_cannot_be_deleted_by_a_concurrent_card_create(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    people = [(await f.make_contact(session, office_a.id, name=f"P{i}")).id for i in range(N)]
    await session.commit()
    column_id = world.columns[1].id
    async with concurrent_client(server_url) as client:

        def request(i: int) -> Any:
            if i == N // 2:
                return client.delete(f"/funnel-column/{column_id}", headers=office_a.headers)
            return client.post(
                "/funnel-column-card",
                json={"columnId": column_id, "personId": people[i]},
                headers=office_a.headers,
            )

        answers = await fire(N, request)
    deleted, creates = answers[N // 2], answers[: N // 2] + answers[N // 2 + 1 :]
    assert deleted.status_code in (200, 409), deleted.text
    async with app.state.sessionmaker() as s:
        cards = await s.scalar(select(func.count()).where(Card.column_id == column_id))
        column = await s.get(FunnelColumn, column_id)
    made = sum(r.status_code == 201 for r in creates)
    assert made == cards
    if deleted.status_code == 200:
        assert column is None and made == 0
        assert {r.status_code for r in creates} <= {404, 409}
        assert _codes(creates, 409) <= {"REFERENCE_CONFLICT"}
    else:
        assert error_of(deleted)["code"] == "COLUMN_NOT_EMPTY"
        assert column is not None and made >= 1


async def test_an_inbox_holding_conversations_cannot_be_deleted_by_a_concurrent_open(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    people = [(await f.make_contact(session, office_a.id, name=f"P{i}")).id for i in range(N)]
    await session.commit()
    async with concurrent_client(server_url) as client:

        def request(i: int) -> Any:
            if i == N // 2:
                return client.delete(f"/inbox/{inbox.id}", headers=office_a.headers)
            body = {"personId": people[i], "inboxId": inbox.id, "integrationId": integration.id}
            return client.post("/conversation", json=body, headers=office_a.headers)

        answers = await fire(N, request)
    deleted, opens = answers[N // 2], answers[: N // 2] + answers[N // 2 + 1 :]
    assert deleted.status_code in (200, 409), deleted.text
    made = [r.json()["id"] for r in opens if r.status_code == 201]
    async with app.state.sessionmaker() as s:
        kept = await s.scalar(select(func.count()).where(Conversation.id.in_(made or ["-"])))
    assert kept == len(made)  # no conversation answered 201 was erased with the inbox
    if deleted.status_code == 200:
        assert made == []
        assert {r.status_code for r in opens} <= {404, 409}
        assert _codes(opens, 409) <= {"REFERENCE_CONFLICT"}
    else:
        assert error_of(deleted)["code"] == "INBOX_IN_USE" and made


# One place maps the database's refusal to the rule


async def test_integrity_errors_map_to_the_rule_named_by_the_index(
    session: AsyncSession, office_a: OfficeFixture
) -> None:
    await f.make_contact(session, office_a.id, phone="+5511911112222")
    await session.commit()
    session.add(Contact(office_id=office_a.id, name="B", search_name="b", phone="+5511911112222"))
    with pytest.raises(IntegrityError) as caught:
        await session.flush()
    await session.rollback()
    assert conflict_for(caught.value).code == "PHONE_TAKEN"


async def test_a_foreign_key_failure_is_not_a_duplicate(
    session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    now = world.contact.created_at
    session.add(
        Card(
            office_id=office_a.id,
            funnel_id=world.funnel.id,
            column_id="c" + "0" * 24,
            person_id=world.contact.id,
            column_changed_at=now,
        )
    )
    with pytest.raises(IntegrityError) as caught:
        await session.flush()
    await session.rollback()
    conflict = conflict_for(caught.value)
    assert conflict.code == "REFERENCE_CONFLICT" and conflict.status_code == 409


_LOCKS = {  # (read, key_share) of with_for_update
    "update": (False, False),
    "no key update": (False, True),  # an UPDATE of columns outside any key
    "key share": (True, True),  # an insert referring to the row
}


async def _row_free(app: FastAPI, model: type[Base], ident: str, lock: str = "update") -> bool:
    """Whether another connection can take ``lock`` on the row at once (no waiting):
    PostgreSQL ``FOR UPDATE`` (or ``FOR NO KEY UPDATE``, ``FOR KEY SHARE``) ``NOWAIT``;
    SQLite (one writer at a time, whatever the lock) ``BEGIN IMMEDIATE`` with no busy
    timeout."""
    engine = app.state.engine
    table: Any = model.__table__
    async with engine.connect() as conn:
        try:
            if engine.dialect.name == "postgresql":
                async with conn.begin():
                    await conn.execute(
                        select(table.c.id)
                        .where(table.c.id == ident)
                        .with_for_update(
                            nowait=True, read=_LOCKS[lock][0], key_share=_LOCKS[lock][1]
                        )
                    )
            else:
                await conn.exec_driver_sql("PRAGMA busy_timeout = 0")
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
                await conn.exec_driver_sql("ROLLBACK")
        except OperationalError:
            return False
        except DBAPIError as exc:  # asyncpg's LockNotAvailableError
            if "lock" not in str(exc).lower():
                raise
            return False
    return True


@pytest.mark.parametrize("how", ["one", "all"])
async def test_a_read_for_change_holds_the_row_until_its_transaction_ends(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, how: str
) -> None:
    """``get_scoped(for_change=True)`` and ``get_all_for_change`` lock what they read, also in
    a transaction that did not begin with SQLite's write lock (a worker's): another writer
    cannot take the row until the reader's transaction ends."""
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    assert await _row_free(app, Contact, contact.id)
    async with app.state.sessionmaker() as reader, reader.begin():
        if how == "one":
            found = await get_scoped(reader, Contact, office_a.id, contact.id, for_change=True)
            assert found is not None and found.id == contact.id
        else:
            where = Contact.id == contact.id
            [found] = await get_all_for_change(reader, Contact, office_a.id, where)
            assert found.id == contact.id
        assert not await _row_free(app, Contact, contact.id)
    assert await _row_free(app, Contact, contact.id)


async def _row_as_stored(app: FastAPI, contact_id: str) -> dict[str, Any]:
    async with app.state.sessionmaker() as s:
        row = (await s.execute(select(Contact.__table__).where(Contact.id == contact_id))).one()
        return dict(row._mapping)


@pytest.mark.parametrize("how", ["one", "all"])
async def test_a_lock_changes_nothing_in_the_row(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, how: str
) -> None:
    """Locking a row for change, also where SQLite's lock is a no-op ``UPDATE`` (a transaction
    that did not begin with the write lock), leaves every column as it was: ``updatedAt``
    (an ``onupdate`` column) included."""
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    before = await _row_as_stored(app, contact.id)
    async with app.state.sessionmaker() as reader, reader.begin():
        if how == "one":
            assert await get_scoped(reader, Contact, office_a.id, contact.id, for_change=True)
        else:
            assert await get_all_for_change(reader, Contact, office_a.id, Contact.id == contact.id)
    assert await _row_as_stored(app, contact.id) == before


async def test_a_row_lock_holds_off_a_writer_referring_to_the_row(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``lock_rows`` (a delete guard's lock: ``lock_funnel`` before its cards are counted)
    holds off an insert that refers to the row by foreign key until its transaction ends:
    PostgreSQL ``FOR UPDATE``, which an insert's ``FOR KEY SHARE`` waits for (a no-op
    ``UPDATE`` there would take only ``FOR NO KEY UPDATE``, which it does not); SQLite the
    database's write lock."""
    world = await make_world(session, office_a.id)
    await session.commit()
    funnel_id = world.funnel.id
    async with app.state.sessionmaker() as guard, guard.begin():
        await crm_repository.lock_funnel(guard, office_a.id, funnel_id)
        assert not await _row_free(app, Funnel, funnel_id, "key share")
    assert await _row_free(app, Funnel, funnel_id, "key share")


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL-specific: SQLite's lock is the database's")
async def test_a_card_inserts_hold_on_its_funnel_keeps_off_a_delete_not_a_rename(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``hold_funnel`` (a card insert's reference, ``FOR KEY SHARE``): a delete of the funnel
    waits for it; a rename (an UPDATE outside the keys: ``FOR NO KEY UPDATE``) does not."""
    world = await make_world(session, office_a.id)
    await session.commit()
    funnel_id = world.funnel.id
    async with app.state.sessionmaker() as inserter, inserter.begin():
        await crm_repository.hold_funnel(inserter, office_a.id, funnel_id)
        assert await _row_free(app, Funnel, funnel_id, "no key update")
        assert not await _row_free(app, Funnel, funnel_id)
    assert await _row_free(app, Funnel, funnel_id)


_TAG_TAKEN = Conflict("Já existe uma etiqueta com esse nome", code="TAG_NAME_TAKEN")


async def test_a_refused_flush_answers_the_callers_conflict_for_its_rule_only(
    session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``flush_or_conflict``: the duplicate the caller guards against is the caller's own
    conflict (its message); another refusal (a foreign key) is that rule's conflict, never
    the caller's, whether the caller's code sorts before or after that rule's."""
    world = await make_world(session, office_a.id)
    await f.make_contact(session, office_a.id, phone="+5511911112222")
    await session.commit()
    funnel_id, contact_id, now = world.funnel.id, world.contact.id, world.contact.created_at
    mine = Conflict("Já existe um contato com esse telefone", code="PHONE_TAKEN")

    async def refused(record: Any, conflict: ServiceError) -> ServiceError:
        session.add(record)
        with pytest.raises(ServiceError) as caught:
            await flush_or_conflict(session, conflict)
        await session.rollback()
        return caught.value

    twin = Contact(office_id=office_a.id, name="B", search_name="b", phone="+5511911112222")
    assert await refused(twin, mine) is mine
    for callers in (mine, _TAG_TAKEN):  # codes sorting before and after REFERENCE_CONFLICT
        stray = Card(
            office_id=office_a.id,
            funnel_id=funnel_id,
            column_id="c" + "0" * 24,
            person_id=contact_id,
            column_changed_at=now,
        )
        other = await refused(stray, callers)
        assert other is not callers and other.code == "REFERENCE_CONFLICT"


def _whole_contact(office_id: str, phone: str, inbox_id: str | None = None) -> Contact:
    """A contact with every column set, as ``insert_or_conflict`` writes one (POST /people)."""
    now = utcnow()
    return Contact(
        id=new_id(),
        office_id=office_id,
        inbox_id=inbox_id,
        name="B",
        search_name="b",
        phone=phone,
        is_blocked=False,
        marketing_opt_out=False,
        legal_hold=False,
        verified=True,
        created_at=now,
        updated_at=now,
    )


async def test_a_refused_insert_answers_the_callers_conflict_for_its_rule_only(
    session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``insert_or_conflict`` as ``flush_or_conflict``: the duplicate the caller guards
    against is the caller's own conflict (its message), a foreign key's refusal that rule's,
    whether the caller's code sorts before or after it."""
    await f.make_contact(session, office_a.id, phone="+5511911112222")
    await session.commit()
    mine = Conflict("Já existe um contato com esse telefone", code="PHONE_TAKEN")

    async def refused(record: Contact, conflict: ServiceError) -> ServiceError:
        with pytest.raises(ServiceError) as caught:
            await insert_or_conflict(session, record, conflict)
        await session.rollback()
        return caught.value

    assert await refused(_whole_contact(office_a.id, "+5511911112222"), mine) is mine
    for callers in (mine, _TAG_TAKEN):  # codes sorting before and after REFERENCE_CONFLICT
        stray = _whole_contact(office_a.id, "+5511933334444", inbox_id="c" + "0" * 24)
        other = await refused(stray, callers)
        assert other is not callers and other.code == "REFERENCE_CONFLICT"
    assert await _count_contacts(session, office_a.id) == 1


async def _count_contacts(session: AsyncSession, office_id: str) -> int:
    stmt = select(func.count()).select_from(Contact).where(Contact.office_id == office_id)
    return int(await session.scalar(stmt) or 0)


@pytest.mark.parametrize("how", ["one", "all"])
async def test_a_read_for_change_sees_the_locked_rows_values_not_an_earlier_reads(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, how: str
) -> None:
    """A session that read a row before (its identity map holds the object, unexpired) and
    then reads it for change gets the row as it is now, changed by another writer in
    between: the change decides on the locked values (``populate_existing``)."""
    contact = await f.make_contact(session, office_a.id, name="Antes")
    await session.commit()
    async with app.state.sessionmaker() as reader:
        async with reader.begin():
            earlier = await get_scoped(reader, Contact, office_a.id, contact.id)
            assert earlier is not None and earlier.name == "Antes"
        async with app.state.sessionmaker() as writer, writer.begin():
            await writer.execute(
                update(Contact).where(Contact.id == contact.id).values(name="Depois")
            )
        async with reader.begin():
            if how == "one":
                found = await get_scoped(reader, Contact, office_a.id, contact.id, for_change=True)
            else:
                [found] = await get_all_for_change(
                    reader, Contact, office_a.id, Contact.id == contact.id
                )
            assert found is earlier  # the session's one object for the row, refreshed
            assert found.name == "Depois"


async def test_the_office_lock_holds_until_its_transaction_ends(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """``lock_office`` (routing's decisions), also in a transaction that did not begin with
    SQLite's write lock: no other writer takes the office's row until it ends."""
    assert await _row_free(app, Office, office_a.id)
    async with app.state.sessionmaker() as decider, decider.begin():
        await lock_office(decider, office_a.id)
        assert not await _row_free(app, Office, office_a.id)
    assert await _row_free(app, Office, office_a.id)


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL-specific: SQLite's lock is the database's")
@pytest.mark.parametrize("holder", ["made-first", "made-second"])
async def test_the_office_lock_holds_no_other_office_nor_an_insert_into_the_office(
    app: FastAPI, office_a: OfficeFixture, office_b: OfficeFixture, holder: str
) -> None:
    """``lock_office`` (``FOR NO KEY UPDATE`` of the office's row): another office's routing
    never waits for it, whichever office was made first, and neither does an insert of a
    record of the office (its foreign key takes ``FOR KEY SHARE``)."""
    mine, other = (office_a, office_b) if holder == "made-first" else (office_b, office_a)
    async with app.state.sessionmaker() as decider, decider.begin():
        await lock_office(decider, mine.id)
        assert not await _row_free(app, Office, mine.id, "no key update")
        assert await _row_free(app, Office, mine.id, "key share")
        assert await _row_free(app, Office, other.id)
