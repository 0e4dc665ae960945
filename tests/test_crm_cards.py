"""Cards: create, read, move/update, bulk delete, the conversation lookup, and their events."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.crm import service as crm
from officehub.crm.models import Card
from officehub.crm.schemas import CardUpdate
from officehub.events.service import Cause, caused_by
from tests import factories as f
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of, outbox

CARD_FIELDS = {
    "id",
    "columnChangedAt",
    "showBadgeProgress",
    "timeLimitDays",
    "channel",
    "columnId",
    "funnelId",
    "conversationId",
    "leadOrigin",
    "user",
    "person",
    "customFields",
    "tags",
    "legalArea",
    "createdAt",
    "updatedAt",
}


async def _create(
    client: httpx.AsyncClient, office: OfficeFixture, world: World, **extra: Any
) -> dict[str, Any]:
    body = {
        "columnId": world.columns[0].id,
        "personId": world.contact.id,
        "conversationId": world.conversation.id,
        **extra,
    }
    response = await client.post("/funnel-column-card", json=body, headers=office.headers)
    assert response.status_code == 201, response.text
    card: dict[str, Any] = response.json()
    return card


async def _count_cards(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(Card)) or 0)


# POST /funnel-column-card


async def test_create_card_answers_the_detail_and_emits_created(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    area = await f.make_legal_area(session, office_a.id)
    await session.commit()
    card = await _create(
        client,
        office_a,
        world,
        userId=world.user.id,
        legalAreaId=area.id,
        customFields=[{"id": "cf1", "name": "Processo", "type": "text", "value": "123"}],
        leadOrigin={"source": "meta_ads", "campaignName": "Black Friday"},
    )
    assert set(card) == CARD_FIELDS
    assert card["columnId"] == world.columns[0].id
    assert card["funnelId"] == world.funnel.id
    assert card["conversationId"] == world.conversation.id
    assert card["channel"] == "WHATSAPP"
    assert card["person"] == {
        "id": world.contact.id,
        "name": "Maria Souza",
        "email": None,
        "phone": "+5511987654321",
        "imageUrl": None,
        "createdAt": card["person"]["createdAt"],
        "updatedAt": card["person"]["updatedAt"],
    }
    assert set(card["user"]) == {"id", "name", "imageUrl", "role", "email", "document"}
    assert card["user"]["id"] == world.user.id
    assert card["tags"] == [{"id": world.tag.id, "name": "urgente", "color": "#FF0000"}]
    assert card["legalArea"] == {"id": area.id, "name": "Imobiliário", "color": "#123456"}
    assert card["customFields"] == [
        {"id": "cf1", "name": "Processo", "type": "text", "value": "123", "options": ""}
    ]
    assert card["leadOrigin"]["campaignName"] == "Black Friday"
    assert card["leadOrigin"]["messageAt"] is None
    assert card["timeLimitDays"] is None and card["showBadgeProgress"] is False
    assert card["columnChangedAt"].endswith("Z")
    [event] = await outbox(app, office_a.id, "crm.lead.created")
    assert event.data["id"] == card["id"]
    assert event.conversation_id == world.conversation.id
    assert event.integration_id == world.integration.id


async def test_create_card_bad_input_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.post(
        "/funnel-column-card",
        json={"columnId": "not-an-id", "personId": world.contact.id},
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "body.columnId" in error_of(response)["details"]
    assert await _count_cards(session) == 0


async def test_create_card_with_another_offices_column_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    other = await make_world(session, office_b.id)
    response = await client.post(
        "/funnel-column-card",
        json={"columnId": other.columns[0].id, "personId": world.contact.id},
        headers=office_a.headers,
    )
    assert response.status_code == 404
    assert error_of(response)["code"] == "NOT_FOUND"


async def test_one_card_per_contact_and_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    first = await _create(client, office_a, world)
    response = await client.post(
        "/funnel-column-card",
        json={
            "columnId": world.columns[1].id,
            "personId": world.contact.id,
            "conversationId": world.conversation.id,
        },
        headers=office_a.headers,
    )
    assert response.status_code == 409
    body = error_of(response)
    assert body["code"] == "CARD_EXISTS" and first["id"] in body["details"]
    assert await _count_cards(session) == 1


async def test_one_card_per_contact_without_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    body = {"columnId": world.columns[0].id, "personId": world.contact.id}
    first = await client.post("/funnel-column-card", json=body, headers=office_a.headers)
    assert first.status_code == 201 and first.json()["channel"] is None
    second = await client.post("/funnel-column-card", json=body, headers=office_a.headers)
    assert second.status_code == 409


async def test_a_card_links_a_conversation_of_its_contact_only(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    stranger = await f.make_contact(session, office_a.id, name="João")
    await session.commit()
    response = await client.post(
        "/funnel-column-card",
        json={
            "columnId": world.columns[0].id,
            "personId": stranger.id,
            "conversationId": world.conversation.id,
        },
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "body.conversationId" in error_of(response)["details"]


# GET /funnel-column-card/{id}


async def test_read_card(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.get(f"/funnel-column-card/{created['id']}", headers=office_a.headers)
    assert response.status_code == 200
    assert response.json() == created


async def test_read_card_bad_id_names_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    response = await client.get("/funnel-column-card/x-1", headers=office_a.headers)
    assert response.status_code == 400
    assert "path.id" in error_of(response)["details"]


async def test_read_card_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.get(f"/funnel-column-card/{created['id']}", headers=office_b.headers)
    assert response.status_code == 404
    error_of(response)


# GET /funnel-column-card/person/{personId}/conversation/{conversationId}


async def test_card_of_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.get(
        f"/funnel-column-card/person/{world.contact.id}/conversation/{world.conversation.id}",
        headers=office_a.headers,
    )
    assert response.status_code == 200
    assert response.json() == created


async def test_card_of_conversation_is_found_through_the_conversations_inbox(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await _create(client, office_a, world)
    other_inbox = await f.make_inbox(session, office_a.id, "Outra")
    other_channel = await f.make_integration(session, office_a.id, other_inbox.id)
    elsewhere = await f.make_conversation(session, office_a.id, world.contact.id, other_channel)
    await session.commit()
    response = await client.get(
        f"/funnel-column-card/person/{world.contact.id}/conversation/{elsewhere.id}",
        headers=office_a.headers,
    )
    assert response.status_code == 404
    error_of(response)


async def test_card_of_conversation_bad_id_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.get(
        f"/funnel-column-card/person/{world.contact.id}/conversation/c-bad-id",
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "path.conversationId" in error_of(response)["details"]


async def test_card_of_conversation_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    await _create(client, office_a, world)
    response = await client.get(
        f"/funnel-column-card/person/{world.contact.id}/conversation/{world.conversation.id}",
        headers=office_b.headers,
    )
    assert response.status_code == 404
    error_of(response)


# PATCH /funnel-column-card/{id}


async def test_move_card_emits_moved_with_both_columns(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.patch(
        f"/funnel-column-card/{created['id']}",
        json={"columnId": world.columns[2].id},
        headers=office_a.headers,
    )
    assert response.status_code == 200
    moved = response.json()
    assert moved["columnId"] == world.columns[2].id
    [event] = await outbox(app, office_a.id, "crm.lead.moved")
    assert event.data["fromColumnId"] == world.columns[0].id
    assert event.data["toColumnId"] == world.columns[2].id
    assert event.data["id"] == created["id"]
    assert await outbox(app, office_a.id, "crm.lead.updated") == []


async def test_update_card_emits_updated_with_the_changes(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.patch(
        f"/funnel-column-card/{created['id']}",
        json={"userId": world.user.id, "legalAreaId": "clegalarea000000000000001"},
        headers=office_a.headers,
    )
    assert response.status_code == 200
    card = response.json()
    assert card["user"]["id"] == world.user.id
    assert card["legalArea"]["name"] == "Trabalhista"
    assert card["columnChangedAt"] == created["columnChangedAt"]
    [event] = await outbox(app, office_a.id, "crm.lead.updated")
    assert event.data["changes"] == ["userId", "legalAreaId"]
    assert await outbox(app, office_a.id, "crm.lead.moved") == []
    again = await client.patch(
        f"/funnel-column-card/{created['id']}",
        json={"userId": world.user.id},
        headers=office_a.headers,
    )
    assert again.status_code == 200
    assert len(await outbox(app, office_a.id, "crm.lead.updated")) == 1


async def test_update_card_bad_input_names_the_field_and_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.patch(
        f"/funnel-column-card/{created['id']}",
        json={"userId": world.user.id, "customFields": [{"id": "x"}]},
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "body.customFields.0.name" in error_of(response)["details"]
    unchanged = await client.get(f"/funnel-column-card/{created['id']}", headers=office_a.headers)
    assert unchanged.json() == created
    assert await outbox(app, office_a.id, "crm.lead.updated") == []


async def test_update_card_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.patch(
        f"/funnel-column-card/{created['id']}",
        json={"columnId": world.columns[1].id},
        headers=office_b.headers,
    )
    assert response.status_code == 404
    error_of(response)


async def test_a_card_moves_only_within_its_funnel(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    _other_funnel, other_columns = await f.make_funnel(session, office_a.id, world.inbox.id, 2)
    await session.commit()
    created = await _create(client, office_a, world)
    response = await client.patch(
        f"/funnel-column-card/{created['id']}",
        json={"columnId": other_columns[0].id},
        headers=office_a.headers,
    )
    assert response.status_code == 400
    body = error_of(response)
    assert body["code"] == "COLUMN_OF_ANOTHER_FUNNEL" and "body.columnId" in body["details"]
    unchanged = await client.get(f"/funnel-column-card/{created['id']}", headers=office_a.headers)
    assert unchanged.json()["columnId"] == world.columns[0].id
    assert await outbox(app, office_a.id, "crm.lead.moved") == []


async def test_a_card_has_one_current_column(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    for column in (world.columns[1], world.columns[2]):
        response = await client.patch(
            f"/funnel-column-card/{created['id']}",
            json={"columnId": column.id},
            headers=office_a.headers,
        )
        assert response.status_code == 200
    board = (await client.get(f"/funnel/{world.funnel.id}", headers=office_a.headers)).json()
    holding = [
        c["id"] for c in board["columns"] for item in c["items"] if item["id"] == created["id"]
    ]
    assert holding == [world.columns[2].id]
    assert [c["total"] for c in board["columns"]] == [0, 0, 1]
    assert await _count_cards(session) == 1


async def test_column_changed_at_is_set_on_a_move_and_only_then(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    url = f"/funnel-column-card/{created['id']}"
    updated = (
        await client.patch(url, json={"userId": world.user.id}, headers=office_a.headers)
    ).json()
    assert updated["columnChangedAt"] == created["columnChangedAt"]
    same_column = (
        await client.patch(url, json={"columnId": world.columns[0].id}, headers=office_a.headers)
    ).json()
    assert same_column["columnChangedAt"] == created["columnChangedAt"]
    moved = (
        await client.patch(url, json={"columnId": world.columns[1].id}, headers=office_a.headers)
    ).json()
    assert moved["columnChangedAt"] > created["columnChangedAt"]
    assert moved["updatedAt"] >= moved["columnChangedAt"]


# DELETE /funnel-column-card


async def test_delete_cards_answers_a_string_and_emits_deleted(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    created = await _create(client, office_a, world)
    response = await client.request(
        "DELETE",
        "/funnel-column-card/",
        json={"ids": [created["id"], "cnotacard0000000000000000"]},
        headers=office_a.headers,
    )
    assert response.status_code == 200
    assert response.json() == "1 card removed"
    assert await _count_cards(session) == 0
    [event] = await outbox(app, office_a.id, "crm.lead.deleted")
    assert event.data["id"] == created["id"]


async def test_delete_cards_bad_input_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await _create(client, office_a, world)
    response = await client.request(
        "DELETE", "/funnel-column-card", json={"ids": "all"}, headers=office_a.headers
    )
    assert response.status_code == 400
    assert "body.ids" in error_of(response)["details"]
    assert await _count_cards(session) == 1


async def test_delete_removes_only_the_given_offices_cards(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world_a = await make_world(session, office_a.id)
    world_b = await make_world(session, office_b.id)
    card_a = await _create(client, office_a, world_a)
    card_b = await _create(client, office_b, world_b)
    response = await client.request(
        "DELETE",
        "/funnel-column-card",
        json={"ids": [card_a["id"], card_b["id"]]},
        headers=office_b.headers,
    )
    assert response.status_code == 200
    assert response.json() == "1 card removed"
    still = await client.get(f"/funnel-column-card/{card_a['id']}", headers=office_a.headers)
    assert still.status_code == 200
    gone = await client.get(f"/funnel-column-card/{card_b['id']}", headers=office_b.headers)
    assert gone.status_code == 404
    assert await outbox(app, office_a.id, "crm.lead.deleted") == []
    assert len(await outbox(app, office_b.id, "crm.lead.deleted")) == 1


# Services other domains call


async def test_deleting_a_contacts_cards_emits_deleted_for_each(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    card = await _create(client, office_a, world)
    earlier = await f.make_conversation(
        session, office_a.id, world.contact.id, world.integration, status="CLOSED"
    )
    second = await f.make_card(session, world.columns[1], world.contact.id, earlier.id)
    third = await f.make_card(session, world.columns[2], world.contact.id)
    other = await f.make_contact(session, office_a.id, name="João")
    await f.make_card(session, world.columns[0], other.id)
    await session.commit()
    assert await crm.delete_cards_of_contact(session, office_a.id, world.contact.id) == 3
    await session.commit()
    events = await outbox(app, office_a.id, "crm.lead.deleted")
    assert sorted(e.data["id"] for e in events) == sorted([card["id"], second.id, third.id])
    assert await _count_cards(session) == 1


async def test_a_move_made_by_an_automation_carries_its_cause(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    card = await _create(client, office_a, world)
    [created] = await outbox(app, office_a.id, "crm.lead.created")
    # What an automation's action runs in (officehub.automation, officehub.flows).
    with caused_by(Cause(created.id, created.depth)):
        await crm.update_card(
            session, office_a.id, card["id"], CardUpdate(column_id=world.columns[1].id)
        )
    await session.commit()
    [moved] = await outbox(app, office_a.id, "crm.lead.moved")
    assert moved.causation_id == created.id and moved.depth == 1
