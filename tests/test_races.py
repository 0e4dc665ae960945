"""Races between requests on one record, at a running server (issue 25, items 1 and 2).

The read that decides a change locks the record's row (``get_scoped(for_change=True)``,
``officehub/kit/repository.py``): identical concurrent PATCHes make one change and one event,
an event's previous values are the ones it replaced, and a change queued behind a delete
finds nothing (404) instead of a row gone from under its flush (500 ``StaleDataError``).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.events.models import OutboxEvent
from officehub.fast_messages.models import FastMessage
from officehub.kit.db import SessionDep
from tests.crm_world import World, make_world
from tests.factories import (
    make_card,
    make_contact,
    make_conversation,
    make_department,
    make_funnel,
    make_inbox,
    make_legal_area,
    make_tag,
)
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server

SAME_PATCHES = 10


@dataclass(frozen=True)
class SamePatch:
    """``PATCH path body`` sent ``SAME_PATCHES`` times at once: one ``event``, whose data
    holds ``expected`` (the new values and the ones replaced)."""

    path: str
    body: dict[str, Any]
    event: str
    expected: dict[str, Any]


async def _contact_rename(session: AsyncSession, office_id: str, world: World) -> SamePatch:
    return SamePatch(
        f"/people/{world.contact.id}",
        {"name": "Maria Souza Lima"},
        "contact.updated",
        {"id": world.contact.id, "name": "Maria Souza Lima"},
    )


async def _card_move(session: AsyncSession, office_id: str, world: World) -> SamePatch:
    card = await make_card(session, world.columns[0], world.contact.id)
    await session.commit()
    return SamePatch(
        f"/funnel-column-card/{card.id}",
        {"columnId": world.columns[1].id},
        "crm.lead.moved",
        {"fromColumnId": world.columns[0].id, "toColumnId": world.columns[1].id},
    )


async def _card_owner(session: AsyncSession, office_id: str, world: World) -> SamePatch:
    card = await make_card(session, world.columns[0], world.contact.id)
    await session.commit()
    return SamePatch(
        f"/funnel-column-card/{card.id}",
        {"userId": world.user.id},
        "crm.lead.updated",
        {"userId": world.user.id, "changes": ["userId"]},
    )


async def _conversation_priority(session: AsyncSession, office_id: str, world: World) -> SamePatch:
    return SamePatch(
        f"/conversation/{world.conversation.id}",
        {"priority": "HIGH"},
        "chat.conversation.updated",
        {"priority": "HIGH"},
    )


async def _conversation_assignee(session: AsyncSession, office_id: str, world: World) -> SamePatch:
    return SamePatch(
        f"/conversation/{world.conversation.id}",
        {"assignedUserId": world.user.id},
        "chat.conversation.assigned",
        {"assignedUserId": world.user.id, "previousAssignedUserId": None},
    )


async def _conversation_reopen(session: AsyncSession, office_id: str, world: World) -> SamePatch:
    world.conversation.status = "CLOSED"
    session.add(world.conversation)
    await session.commit()
    return SamePatch(
        f"/conversation/{world.conversation.id}",
        {"status": "OPEN"},
        "chat.conversation.updated",
        {"status": "OPEN"},
    )


SAME_PATCH_CASES = {
    "contact-rename": _contact_rename,
    "card-move": _card_move,
    "card-owner": _card_owner,
    "conversation-priority": _conversation_priority,
    "conversation-assignee": _conversation_assignee,
    "conversation-reopen": _conversation_reopen,
}


@pytest.mark.parametrize("case", sorted(SAME_PATCH_CASES))
async def test_identical_concurrent_patches_emit_one_event_with_the_replaced_values(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, case: str
) -> None:
    world = await make_world(session, office_a.id)
    patch = await SAME_PATCH_CASES[case](session, office_a.id, world)
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answers = await fire(
            SAME_PATCHES,
            lambda _i: client.patch(patch.path, json=patch.body, headers=office_a.headers),
        )
    assert [a.status_code for a in answers] == [200] * SAME_PATCHES, [a.text for a in answers]
    events = await outbox(app, office_a.id, patch.event)
    assert len(events) == 1, [e.data for e in events]
    assert {k: events[0].data.get(k) for k in patch.expected} == patch.expected


MOVES = 50


async def test_concurrent_random_moves_of_a_card_chain_their_from_columns(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Each ``crm.lead.moved`` leaves the column the one before it entered: no event says
    "from A" after the card had left A."""
    world = await make_world(session, office_a.id, columns=4)
    card = await make_card(session, world.columns[0], world.contact.id)
    await session.commit()
    chance = random.Random(25)
    targets = [chance.choice(world.columns).id for _ in range(MOVES)]
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answers = await fire(
            MOVES,
            lambda i: client.patch(
                f"/funnel-column-card/{card.id}",
                json={"columnId": targets[i]},
                headers=office_a.headers,
            ),
        )
        final = await client.get(f"/funnel-column-card/{card.id}", headers=office_a.headers)
    assert [a.status_code for a in answers] == [200] * MOVES
    moves = await outbox(app, office_a.id, "crm.lead.moved")
    assert moves, "some of the moves change the column"
    at = world.columns[0].id
    for event in moves:
        assert event.data["fromColumnId"] == at, [
            (e.data["fromColumnId"], e.data["toColumnId"]) for e in moves
        ]
        assert event.data["toColumnId"] != at
        at = event.data["toColumnId"]
    assert final.json()["columnId"] == at


@dataclass(frozen=True)
class Race:
    """Requests that change a record (``change``) racing the delete of it, or of what owns
    it (``remove``)."""

    change: Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]]
    remove: Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


ROUNDS = 6
CHANGERS = 6
REMOVERS = 2
_serial = itertools.count()


def _patch(path: str, field: str) -> Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]]:
    def change(client: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
        return client.patch(path, json={field: f"Nome {i}"})

    return change


def _delete(path: str) -> Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]:
    def remove(client: httpx.AsyncClient) -> Awaitable[httpx.Response]:
        return client.delete(path, headers=client.headers)

    return remove


async def _contact(session: AsyncSession, office_id: str, world: World) -> Race:
    contact = await make_contact(session, office_id, name="Pessoa")
    await session.commit()
    return Race(_patch(f"/people/{contact.id}", "name"), _delete(f"/people/{contact.id}"))


async def _conversation_of_deleted_contact(
    session: AsyncSession, office_id: str, world: World
) -> Race:
    contact = await make_contact(session, office_id, name="Pessoa")
    conversation = await make_conversation(session, office_id, contact.id, world.integration)
    await session.commit()

    def change(client: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
        priority = ("HIGH", "LOW")[i % 2]
        return client.patch(f"/conversation/{conversation.id}", json={"priority": priority})

    return Race(change, _delete(f"/people/{contact.id}"))


async def _inbound_to_deleted_contact(session: AsyncSession, office_id: str, world: World) -> Race:
    contact = await make_contact(session, office_id, name="Pessoa")
    conversation = await make_conversation(session, office_id, contact.id, world.integration)
    await session.commit()

    def change(client: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
        path = f"/conversation/{conversation.id}/messages/inbound"
        return client.post(path, json={"text": f"mensagem {i}"})

    return Race(change, _delete(f"/people/{contact.id}"))


async def _card(session: AsyncSession, office_id: str, world: World) -> Race:
    card = await make_card(session, world.columns[0], world.contact.id)
    await session.commit()

    def change(client: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
        column = world.columns[1 + i % 2].id
        return client.patch(f"/funnel-column-card/{card.id}", json={"columnId": column})

    def remove(client: httpx.AsyncClient) -> Awaitable[httpx.Response]:
        return client.request("DELETE", "/funnel-column-card", json={"ids": [card.id]})

    return Race(change, remove)


async def _tag(session: AsyncSession, office_id: str, world: World) -> Race:
    tag = await make_tag(session, office_id, world.inbox.id, name=f"etiqueta {next(_serial)}")
    await make_conversation(
        session,
        office_id,
        (await make_contact(session, office_id, name="Pessoa")).id,
        world.integration,
        tags=[tag],
    )
    await session.commit()
    return Race(_patch(f"/tag/{tag.id}", "name"), _delete(f"/tag/{tag.id}"))


async def _department(session: AsyncSession, office_id: str, world: World) -> Race:
    department = await make_department(session, office_id)
    await session.commit()
    path = f"/department/{department.id}"
    return Race(_patch(path, "name"), _delete(path))


async def _legal_area(session: AsyncSession, office_id: str, world: World) -> Race:
    area = await make_legal_area(session, office_id)
    await session.commit()
    path = f"/legal-areas/{area.id}"
    return Race(_patch(path, "name"), _delete(path))


async def _inbox(session: AsyncSession, office_id: str, world: World) -> Race:
    inbox = await make_inbox(session, office_id, name="Caixa")
    await session.commit()
    path = f"/inbox/{inbox.id}"
    return Race(_patch(path, "name"), _delete(path))


async def _funnel(session: AsyncSession, office_id: str, world: World) -> Race:
    funnel, _columns = await make_funnel(session, office_id, world.inbox.id, columns=2)
    await session.commit()
    path = f"/funnel/{funnel.id}"
    return Race(_patch(path, "name"), _delete(path))


async def _column(session: AsyncSession, office_id: str, world: World) -> Race:
    _funnel, columns = await make_funnel(session, office_id, world.inbox.id, columns=3)
    await session.commit()
    path = f"/funnel-column/{columns[1].id}"
    return Race(_patch(path, "name"), _delete(path))


async def _fast_message(session: AsyncSession, office_id: str, world: World) -> Race:
    record = FastMessage(
        office_id=office_id, inbox_id=world.inbox.id, title="Saudação", kind="TEXT", text="Olá!"
    )
    session.add(record)
    await session.commit()
    path = f"/fast-message/{record.id}"
    return Race(_patch(path, "title"), _delete(path))


RACE_CASES = {
    "contact": _contact,
    "conversation-of-deleted-contact": _conversation_of_deleted_contact,
    "inbound-message-to-deleted-contact": _inbound_to_deleted_contact,
    "card": _card,
    "tag": _tag,
    "department": _department,
    "legal-area": _legal_area,
    "inbox": _inbox,
    "funnel": _funnel,
    "funnel-column": _column,
    "fast-message": _fast_message,
}


@pytest.mark.parametrize("case", sorted(RACE_CASES))
async def test_a_change_racing_a_delete_answers_404_never_5xx(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, case: str
) -> None:
    world = await make_world(session, office_a.id)
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        client.headers.update(office_a.headers)
        for _round in range(ROUNDS):
            race = await RACE_CASES[case](session, office_a.id, world)

            def request(i: int, race: Race = race) -> Awaitable[httpx.Response]:
                if i % (CHANGERS // REMOVERS + 1) == 0:
                    return race.remove(client)
                return race.change(client, i)

            answers = await fire(CHANGERS + REMOVERS, request)
            statuses = [a.status_code for a in answers]
            assert set(statuses) <= {200, 201, 204, 404}, [a.text for a in answers]
            for answer in answers:
                if answer.status_code == 404:
                    assert error_of(answer)["code"] == "NOT_FOUND"


async def test_a_row_deleted_under_a_flush_answers_404_not_500(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The safety net: ``StaleDataError`` (a change flushed to a row a concurrent request
    deleted) is 404 ``NOT_FOUND`` in the one error renderer, never a 500."""
    contact = await make_contact(session, office_a.id)
    await session.commit()

    async def rename_a_deleted_contact(session: SessionDep) -> None:
        record = await session.get(Contact, contact.id)
        assert record is not None
        # The concurrent delete, as it lands between the read and the flush.
        await session.execute(
            delete(Contact).where(Contact.id == contact.id),
            execution_options={"synchronize_session": False},
        )
        record.name = "Outro nome"
        await session.flush()

    app.add_api_route("/people/{id}/stale-rename", rename_a_deleted_contact, methods=["POST"])
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answer = await client.post(f"/people/{contact.id}/stale-rename", headers=office_a.headers)
    assert answer.status_code == 404, answer.text
    assert error_of(answer)["code"] == "NOT_FOUND"
    events: list[OutboxEvent] = await outbox(app, office_a.id)
    assert events == []
    async with app.state.sessionmaker() as s:
        assert await s.get(Contact, contact.id) is not None  # the request rolled back
