"""Conversations: open or find the open one, list, update, tags, notes, end of human support."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.models import OutboxEvent
from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox

MISSING = "c" + "0" * 24


@dataclass(frozen=True)
class World:
    inbox_id: str
    integration_id: str
    person_id: str
    user_id: str
    department_id: str
    tag_ids: tuple[str, str]

    @property
    def body(self) -> dict[str, Any]:
        return {
            "personId": self.person_id,
            "inboxId": self.inbox_id,
            "integrationId": self.integration_id,
        }


async def _world(session: AsyncSession, office: OfficeFixture) -> World:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id)
    user = await f.make_user(session, office.id)
    department = await f.make_department(session, office.id)
    urgent = await f.make_tag(session, office.id, inbox.id, name="urgente")
    vip = await f.make_tag(session, office.id, inbox.id, name="vip")
    await session.commit()
    return World(inbox.id, integration.id, contact.id, user.id, department.id, (urgent.id, vip.id))


async def _open(client: httpx.AsyncClient, office: OfficeFixture, world: World) -> dict[str, Any]:
    r = await client.post("/conversation", json=world.body, headers=office.headers)
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


async def _patch(
    client: httpx.AsyncClient, office: OfficeFixture, ident: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.patch(f"/conversation/{ident}", json=body, headers=office.headers)


def _for(event: OutboxEvent, conversation: dict[str, Any]) -> None:
    assert event.conversation_id == conversation["id"]
    assert event.integration_id == conversation["integrationId"]


# POST /conversation


async def test_open_conversation(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    r = await client.post(
        "/conversation", json={**world.body, "priority": "HIGH"}, headers=office_a.headers
    )
    assert r.status_code == 201
    body = r.json()
    assert body["personId"] == world.person_id
    assert body["inboxId"] == world.inbox_id and body["integrationId"] == world.integration_id
    assert (body["status"], body["priority"]) == ("OPEN", "HIGH")
    assert body["assignedUserId"] is None and body["departmentId"] is None
    assert body["tags"] == [] and body["lastMessageAt"] is None
    read = await client.get(f"/conversation/{body['id']}", headers=office_a.headers)
    assert read.status_code == 200 and read.json() == body
    [event] = await outbox(app, office_a.id, "chat.conversation.created")
    assert event.data == body
    _for(event, body)


async def test_open_conversation_returns_the_open_one_with_200(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    first = await _open(client, office_a, world)
    again = await client.post("/conversation", json=world.body, headers=office_a.headers)
    assert again.status_code == 200
    assert again.json() == first
    assert len(await outbox(app, office_a.id, "chat.conversation.created")) == 1

    assert (await _patch(client, office_a, first["id"], {"status": "CLOSED"})).status_code == 200
    fresh = await _open(client, office_a, world)
    assert fresh["id"] != first["id"]
    assert len(await outbox(app, office_a.id, "chat.conversation.created")) == 2


async def test_open_conversation_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    other_inbox = await f.make_inbox(session, office_a.id, name="Outra")
    await session.commit()
    for body, field in (
        ({**world.body, "personId": "nope"}, "body.personId"),
        ({**world.body, "priority": "URGENT"}, "body.priority"),
        ({"personId": world.person_id}, "body.inboxId"),
        ({**world.body, "inboxId": other_inbox.id}, "body.integrationId"),
    ):
        r = await client.post("/conversation", json=body, headers=office_a.headers)
        assert r.status_code == 400, body
        assert field in error_of(r)["details"]
    listed = await client.get("/conversation", headers=office_a.headers)
    assert listed.json()["totalResults"] == 0


async def test_open_conversation_with_another_offices_records_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    mine = await _world(session, office_a)
    theirs = await _world(session, office_b)
    for key in ("personId", "inboxId", "integrationId"):
        body = {**mine.body, key: theirs.body[key]}
        r = await client.post("/conversation", json=body, headers=office_a.headers)
        assert r.status_code == 404, key
        assert error_of(r)["code"] == "NOT_FOUND"
    listed = await client.get("/conversation", headers=office_a.headers)
    assert listed.json()["totalResults"] == 0


# GET /conversation


async def test_list_conversations_filters(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    other = await f.make_contact(session, office_a.id, name="Ana", phone="+5521998765432")
    await session.commit()
    first = await _open(client, office_a, world)
    second = await _open(client, office_a, World(**{**world.__dict__, "person_id": other.id}))
    await _patch(client, office_a, first["id"], {"status": "CLOSED"})

    async def ids(**params: Any) -> list[str]:
        r = await client.get("/conversation", params=params, headers=office_a.headers)
        assert r.status_code == 200, r.text
        return [c["id"] for c in r.json()["data"]]

    assert await ids() == [second["id"], first["id"]]
    assert await ids(status="CLOSED") == [first["id"]]
    assert await ids(personId=other.id) == [second["id"]]
    assert await ids(inboxId=world.inbox_id, status="OPEN") == [second["id"]]


async def test_list_conversations_bad_query_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    for params, field in (
        ({"status": "PENDING"}, "query.status"),
        ({"personId": "x"}, "query.personId"),
        ({"page": 0}, "query.page"),
    ):
        r = await client.get("/conversation", params=params, headers=office_a.headers)
        assert r.status_code == 400
        assert field in error_of(r)["details"]


async def test_list_conversations_of_another_offices_contact_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs = await _world(session, office_b)
    await _open(client, office_b, theirs)
    for params in ({"personId": theirs.person_id}, {"inboxId": theirs.inbox_id}):
        r = await client.get("/conversation", params=params, headers=office_a.headers)
        assert r.status_code == 404
    r = await client.get("/conversation", headers=office_a.headers)
    assert r.json()["data"] == []


# GET|PATCH /conversation/{id}, tags


async def test_conversation_bad_path_id_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    for method, path in (
        ("GET", "/conversation/c-1"),
        ("PATCH", "/conversation/c-1"),
        ("POST", "/conversation/c-1/tags"),
        ("DELETE", f"/conversation/c-1/tags/{MISSING}"),
    ):
        r = await client.request(method, path, json={"tagId": MISSING}, headers=office_a.headers)
        assert r.status_code == 400, (method, path)
        assert "path.id" in error_of(r)["details"]


async def test_another_offices_conversation_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs = await _world(session, office_b)
    conversation = await _open(client, office_b, theirs)
    ident = conversation["id"]
    for method, path, body in (
        ("GET", f"/conversation/{ident}", None),
        ("PATCH", f"/conversation/{ident}", {"status": "CLOSED"}),
        ("POST", f"/conversation/{ident}/tags", {"tagId": theirs.tag_ids[0]}),
        ("DELETE", f"/conversation/{ident}/tags/{theirs.tag_ids[0]}", None),
        ("POST", "/conversation/note", {"conversationId": ident, "text": "oi"}),
        ("GET", f"/conversation/notes?conversationId={ident}", None),
        ("POST", "/conversation/end-human-support", {"conversationId": ident}),
    ):
        r = await client.request(method, path, json=body, headers=office_a.headers)
        assert r.status_code == 404, (method, path)
        assert error_of(r)["code"] == "NOT_FOUND"
    read = await client.get(f"/conversation/{ident}", headers=office_b.headers)
    assert read.json() == conversation


async def test_update_status_priority_and_tags_emits_updated(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    urgent, vip = world.tag_ids
    r = await _patch(
        client,
        office_a,
        conversation["id"],
        {"status": "CLOSED", "priority": "LOW", "tags": [vip, urgent, vip]},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["status"], body["priority"]) == ("CLOSED", "LOW")
    assert [t["name"] for t in body["tags"]] == ["urgente", "vip"]
    assert body["tags"][0] == {"id": urgent, "name": "urgente", "color": "#FF0000"}
    r = await _patch(client, office_a, conversation["id"], {"tags": [vip]})
    assert [t["id"] for t in r.json()["tags"]] == [vip], "tags replace the current set"
    events = await outbox(app, office_a.id, "chat.conversation.updated")
    assert [e.data for e in events] == [body, r.json()]
    _for(events[0], conversation)
    assert await outbox(app, office_a.id, "chat.conversation.assigned") == []


async def test_assignment_emits_assigned_with_the_previous_assignee(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    r = await _patch(client, office_a, conversation["id"], {"assignedUserId": world.user_id})
    assert r.status_code == 200 and r.json()["assignedUserId"] == world.user_id
    r2 = await _patch(
        client,
        office_a,
        conversation["id"],
        {"assignedUserId": None, "departmentId": world.department_id},
    )
    assert r2.json()["assignedUserId"] is None
    assert r2.json()["departmentId"] == world.department_id
    first, second = await outbox(app, office_a.id, "chat.conversation.assigned")
    assert first.data == {
        **r.json(),
        "previousAssignedUserId": None,
        "previousDepartmentId": None,
    }
    assert second.data == {
        **r2.json(),
        "previousAssignedUserId": world.user_id,
        "previousDepartmentId": None,
    }
    _for(first, conversation)
    assert await outbox(app, office_a.id, "chat.conversation.updated") == []


async def test_patch_that_changes_nothing_emits_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    r = await _patch(
        client,
        office_a,
        conversation["id"],
        {"status": "OPEN", "priority": "MEDIUM", "assignedUserId": None, "tags": []},
    )
    assert r.status_code == 200 and r.json() == conversation
    r = await client.delete(
        f"/conversation/{conversation['id']}/tags/{world.tag_ids[0]}", headers=office_a.headers
    )
    assert r.status_code == 200 and r.json() == conversation
    names = [e.name for e in await outbox(app, office_a.id)]
    assert names == ["chat.conversation.created"]


async def test_update_conversation_bad_input_is_400_and_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    for body, field in (
        ({"status": "PENDING"}, "body.status"),
        ({"status": None}, "body.status"),
        ({"priority": "LOW", "tags": "urgente"}, "body.tags"),
        ({"priority": None}, "body.priority"),
    ):
        r = await _patch(client, office_a, conversation["id"], body)
        assert r.status_code == 400, body
        assert field in error_of(r)["details"]
    read = await client.get(f"/conversation/{conversation['id']}", headers=office_a.headers)
    assert read.json() == conversation
    assert len(await outbox(app, office_a.id)) == 1


async def test_update_with_another_offices_user_department_or_tag_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    mine = await _world(session, office_a)
    theirs = await _world(session, office_b)
    conversation = await _open(client, office_a, mine)
    for body in (
        {"assignedUserId": theirs.user_id},
        {"priority": "HIGH", "departmentId": theirs.department_id},
        {"tags": [mine.tag_ids[0], theirs.tag_ids[0]]},
    ):
        r = await _patch(client, office_a, conversation["id"], body)
        assert r.status_code == 404, body
    read = await client.get(f"/conversation/{conversation['id']}", headers=office_a.headers)
    assert read.json() == conversation


async def test_reopening_while_another_is_open_is_409(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    old = await _open(client, office_a, world)
    await _patch(client, office_a, old["id"], {"status": "CLOSED"})
    current = await _open(client, office_a, world)
    r = await _patch(client, office_a, old["id"], {"status": "OPEN"})
    assert r.status_code == 409
    assert current["id"] in error_of(r)["details"]
    await _patch(client, office_a, current["id"], {"status": "CLOSED"})
    r = await _patch(client, office_a, old["id"], {"status": "OPEN"})
    assert r.status_code == 200 and r.json()["status"] == "OPEN"


async def test_add_and_remove_a_tag(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    urgent, vip = world.tag_ids
    path = f"/conversation/{conversation['id']}/tags"
    r = await client.post(path, json={"tagId": vip}, headers=office_a.headers)
    assert r.status_code == 200
    r = await client.post(path, json={"tagId": urgent}, headers=office_a.headers)
    assert [t["id"] for t in r.json()["tags"]] == [urgent, vip]
    again = await client.post(path, json={"tagId": urgent}, headers=office_a.headers)
    assert again.json() == r.json()
    removed = await client.delete(f"{path}/{urgent}", headers=office_a.headers)
    assert removed.status_code == 200
    assert [t["id"] for t in removed.json()["tags"]] == [vip]
    events = await outbox(app, office_a.id, "chat.conversation.updated")
    assert [[t["id"] for t in e.data["tags"]] for e in events] == [[vip], [urgent, vip], [vip]]
    _for(events[-1], conversation)


async def test_tag_routes_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    path = f"/conversation/{conversation['id']}/tags"
    r = await client.post(path, json={"tag": world.tag_ids[0]}, headers=office_a.headers)
    assert r.status_code == 400
    assert "body.tagId" in error_of(r)["details"]
    r = await client.delete(f"{path}/{'x' * 65}", headers=office_a.headers)
    assert r.status_code == 400
    assert "path.tagId" in error_of(r)["details"]


async def test_tag_routes_with_another_offices_tag_are_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    mine = await _world(session, office_a)
    theirs = await _world(session, office_b)
    conversation = await _open(client, office_a, mine)
    path = f"/conversation/{conversation['id']}/tags"
    r = await client.post(path, json={"tagId": theirs.tag_ids[0]}, headers=office_a.headers)
    assert r.status_code == 404
    r = await client.delete(f"{path}/{theirs.tag_ids[0]}", headers=office_a.headers)
    assert r.status_code == 404
    assert error_of(r)["code"] == "NOT_FOUND"


# notes


async def test_notes(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    first = await client.post(
        "/conversation/note",
        json={"conversationId": conversation["id"], "text": "Cliente pediu retorno"},
        headers=office_a.headers,
    )
    assert first.status_code == 201
    second = await client.post(
        "/conversation/note",
        json={"conversationId": conversation["id"], "text": "Retornei", "userId": world.user_id},
        headers=office_a.headers,
    )
    note = second.json()
    assert note["conversationId"] == conversation["id"] and note["userId"] == world.user_id
    assert note["text"] == "Retornei" and note["createdAt"].endswith("Z")
    r = await client.get(
        "/conversation/notes",
        params={"conversationId": conversation["id"]},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    assert r.json() == {"data": [note, first.json()], "totalResults": 2, "totalPages": 1}
    assert [e.name for e in await outbox(app, office_a.id)] == ["chat.conversation.created"]


async def test_notes_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    for body, field in (
        ({"conversationId": conversation["id"], "text": ""}, "body.text"),
        ({"conversationId": "not-an-id", "text": "oi"}, "body.conversationId"),
    ):
        r = await client.post("/conversation/note", json=body, headers=office_a.headers)
        assert r.status_code == 400
        assert field in error_of(r)["details"]
    r = await client.get("/conversation/notes", headers=office_a.headers)
    assert r.status_code == 400
    assert "query.conversationId" in error_of(r)["details"]
    r = await client.get(
        "/conversation/notes",
        params={"conversationId": conversation["id"]},
        headers=office_a.headers,
    )
    assert r.json()["totalResults"] == 0


async def test_note_by_another_offices_user_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    mine = await _world(session, office_a)
    theirs = await _world(session, office_b)
    conversation = await _open(client, office_a, mine)
    r = await client.post(
        "/conversation/note",
        json={"conversationId": conversation["id"], "text": "oi", "userId": theirs.user_id},
        headers=office_a.headers,
    )
    assert r.status_code == 404


# end of human support


async def test_end_human_support_clears_the_assignment(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    conversation = await _open(client, office_a, world)
    await _patch(
        client,
        office_a,
        conversation["id"],
        {"assignedUserId": world.user_id, "departmentId": world.department_id},
    )
    r = await client.post(
        "/conversation/end-human-support",
        json={"conversationId": conversation["id"]},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    assert r.json()["assignedUserId"] is None and r.json()["departmentId"] is None
    events = await outbox(app, office_a.id, "chat.conversation.assigned")
    assert events[-1].data == {
        **r.json(),
        "previousAssignedUserId": world.user_id,
        "previousDepartmentId": world.department_id,
    }
    _for(events[-1], conversation)
    again = await client.post(
        "/conversation/end-human-support",
        json={"conversationId": conversation["id"]},
        headers=office_a.headers,
    )
    assert again.status_code == 200 and again.json() == r.json()
    assert len(await outbox(app, office_a.id, "chat.conversation.assigned")) == 2


async def test_end_human_support_bad_input_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.post(
        "/conversation/end-human-support", json={"conversationId": "x"}, headers=office_a.headers
    )
    assert r.status_code == 400
    assert "body.conversationId" in error_of(r)["details"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/conversation"),
        ("GET", "/conversation"),
        ("GET", f"/conversation/{MISSING}"),
        ("PATCH", f"/conversation/{MISSING}"),
        ("POST", f"/conversation/{MISSING}/tags"),
        ("DELETE", f"/conversation/{MISSING}/tags/{MISSING}"),
        ("POST", "/conversation/note"),
        ("GET", f"/conversation/notes?conversationId={MISSING}"),
        ("POST", "/conversation/end-human-support"),
    ],
)
async def test_conversation_routes_without_key_are_401(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    r = await client.request(method, path, json={"conversationId": MISSING})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_concurrent_opens_make_one_conversation(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    responses = await asyncio.gather(
        *(client.post("/conversation", json=world.body, headers=office_a.headers) for _ in range(5))
    )
    assert sorted(r.status_code for r in responses) == [200, 200, 200, 200, 201]
    assert len({r.json()["id"] for r in responses}) == 1
    assert len(await outbox(app, office_a.id, "chat.conversation.created")) == 1


async def test_changing_a_conversations_tags_updates_its_crm_card(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A card's tags are its conversation's: a tag change emits crm.lead.updated for it."""
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    _funnel, columns = await f.make_funnel(session, office_a.id, inbox.id, columns=1)
    card = await f.make_card(session, columns[0], contact.id, conversation.id)
    await session.commit()
    h = office_a.headers

    await client.patch(f"/conversation/{conversation.id}", json={"priority": "HIGH"}, headers=h)
    assert await outbox(app, office_a.id, "crm.lead.updated") == []
    r = await client.post(
        f"/conversation/{conversation.id}/tags", json={"tagId": tag.id}, headers=h
    )
    assert r.status_code == 200
    r = await client.delete(f"/conversation/{conversation.id}/tags/{tag.id}", headers=h)
    assert r.status_code == 200
    updated = await outbox(app, office_a.id, "crm.lead.updated")
    assert [(e.data["id"], e.data["changes"]) for e in updated] == [
        (card.id, ["tags"]),
        (card.id, ["tags"]),
    ]
    detail = await client.get(f"/funnel-column-card/{card.id}", headers=h)
    assert detail.json()["tags"] == []
