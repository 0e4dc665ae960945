"""Tags: per inbox, with the modules where they are available."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation, ConversationTag
from officehub.kit.errors import Conflict
from officehub.kit.repository import flush_or_conflict
from officehub.tags.models import Tag
from tests import factories as f
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of, outbox

ROUTES = [
    ("POST", "/tag"),
    ("GET", "/tag"),
    ("GET", "/tag/cxxxxxxxxxxxx"),
    ("PATCH", "/tag/cxxxxxxxxxxxx"),
    ("DELETE", "/tag/cxxxxxxxxxxxx"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_create_read_update_delete_tag(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    h = office_a.headers
    body = {
        "name": "Urgente",
        "color": "#FF0000",
        "inboxId": inbox.id,
        "modules": ["tickets", "crm"],
    }
    r = await client.post("/tag", json=body, headers=h)
    assert r.status_code == 201
    tag = r.json()
    assert set(tag) == {
        "id",
        "name",
        "color",
        "officeId",
        "inboxId",
        "modules",
        "createdAt",
        "updatedAt",
    }
    assert tag["officeId"] == office_a.id and tag["modules"] == ["crm", "tickets"]
    assert (await client.get(f"/tag/{tag['id']}", headers=h)).json() == tag
    r = await client.patch(
        f"/tag/{tag['id']}", json={"name": "Muito urgente", "modules": ["pessoas"]}, headers=h
    )
    assert r.status_code == 200
    assert r.json()["name"] == "Muito urgente" and r.json()["modules"] == ["pessoas"]
    r = await client.delete(f"/tag/{tag['id']}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == tag["id"]
    assert (await client.get(f"/tag/{tag['id']}", headers=h)).status_code == 404


async def test_list_tags_filters_by_module_and_inbox(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    other = await f.make_inbox(session, office_a.id, "Outra")
    await f.make_tag(session, office_a.id, inbox.id, "a", ["crm"])
    await f.make_tag(session, office_a.id, inbox.id, "b", ["fast-messages", "conversas"])
    await f.make_tag(session, office_a.id, other.id, "c", ["crm", "tickets"])
    inbox_b = await f.make_inbox(session, office_b.id)
    await f.make_tag(session, office_b.id, inbox_b.id, "d", ["crm"])
    await session.commit()
    h = office_a.headers

    async def names(query: str) -> list[str]:
        r = await client.get(f"/tag{query}", headers=h)
        assert r.status_code == 200
        return [t["name"] for t in r.json()["data"]]

    assert await names("") == ["a", "b", "c"]
    assert await names("?module=crm") == ["a", "c"]
    assert await names("?module=fast-messages") == ["b"]
    assert await names(f"?inboxId={inbox.id}") == ["a", "b"]
    assert await names(f"?inboxId={other.id}&module=crm") == ["c"]
    assert await names("?module=pessoas") == []


async def test_duplicate_tag_name_in_one_inbox_is_409(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    other = await f.make_inbox(session, office_a.id, "Outra")
    await f.make_tag(session, office_a.id, inbox.id, "Urgente")
    second = await f.make_tag(session, office_a.id, inbox.id, "Depois")
    await session.commit()
    h = office_a.headers
    body = {"name": "URGENTE", "color": "#000000", "inboxId": inbox.id, "modules": ["crm"]}
    r = await client.post("/tag", json=body, headers=h)
    assert r.status_code == 409 and error_of(r)["code"] == "TAG_NAME_TAKEN"
    r = await client.patch(f"/tag/{second.id}", json={"name": "urgente"}, headers=h)
    assert r.status_code == 409
    r = await client.post("/tag", json={**body, "inboxId": other.id}, headers=h)
    assert r.status_code == 201
    assert len((await session.scalars(select(Tag))).all()) == 3


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        (
            "POST",
            "/tag",
            {"name": "x", "color": "#ff0000", "inboxId": "bad", "modules": ["crm"]},
            "body.inboxId",
        ),
        (
            "POST",
            "/tag",
            {"name": "", "color": "#ff0000", "inboxId": "cxxxxxxxxxx", "modules": ["crm"]},
            "body.name",
        ),
        (
            "POST",
            "/tag",
            {"name": "x", "color": "#ff0000", "inboxId": "cxxxxxxxxxx", "modules": ["chat"]},
            "body.modules.0",
        ),
        (
            "POST",
            "/tag",
            {"name": "x", "color": "#ff0000", "inboxId": "cxxxxxxxxxx", "modules": []},
            "body.modules",
        ),
        ("GET", "/tag?module=chat", None, "query.module"),
        ("GET", "/tag?inboxId=bad", None, "query.inboxId"),
        ("GET", "/tag/bad-id", None, "path.id"),
        ("PATCH", "/tag/bad-id", {"name": "x"}, "path.id"),
        ("DELETE", "/tag/bad-id", None, "path.id"),
    ],
)
async def test_bad_input_names_the_field(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    method: str,
    path: str,
    body: object,
    field: str,
) -> None:
    r = await client.request(method, path, json=body, headers=office_a.headers)
    assert r.status_code == 400
    assert field in error_of(r)["details"]


async def test_bad_patch_changes_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    tag = await f.make_tag(session, office_a.id, inbox.id, "Urgente", ["crm"])
    await session.commit()
    r = await client.patch(
        f"/tag/{tag.id}", json={"name": "Novo", "modules": ["x"]}, headers=office_a.headers
    )
    assert r.status_code == 400 and "body.modules.0" in error_of(r)["details"]
    got = (await client.get(f"/tag/{tag.id}", headers=office_a.headers)).json()
    assert got["name"] == "Urgente" and got["modules"] == ["crm"]


async def test_another_offices_tag_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_b.id)
    tag = await f.make_tag(session, office_b.id, inbox.id)
    await session.commit()
    h = office_a.headers
    body = {"name": "x", "color": "#ff0000", "inboxId": inbox.id, "modules": ["crm"]}
    calls = [
        ("POST", "/tag", body),
        ("GET", f"/tag/{tag.id}", None),
        ("PATCH", f"/tag/{tag.id}", {"name": "mine"}),
        ("DELETE", f"/tag/{tag.id}", None),
    ]
    for method, path, payload in calls:
        r = await client.request(method, path, json=payload, headers=h)
        assert r.status_code == 404, (method, path)
        assert error_of(r)["code"] == "NOT_FOUND"
    assert (await client.get("/tag", headers=h)).json()["data"] == []


async def test_deleting_a_tag_takes_it_off_conversations(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    conversation = await f.make_conversation(
        session, office_a.id, contact.id, integration, tags=[tag]
    )
    await session.commit()
    r = await client.delete(f"/tag/{tag.id}", headers=office_a.headers)
    assert r.status_code == 200
    session.expunge_all()
    assert await session.get(Conversation, conversation.id) is not None
    assert (await session.scalars(select(ConversationTag))).all() == []


async def test_deleting_a_tag_emits_updates_for_the_conversations_and_cards_that_held_it(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    kept = await f.make_tag(session, office_a.id, world.inbox.id, name="fica")
    session.add(
        ConversationTag(
            office_id=office_a.id, conversation_id=world.conversation.id, tag_id=kept.id
        )
    )
    other_contact = await f.make_contact(session, office_a.id, name="Sem etiqueta")
    untouched = await f.make_conversation(
        session, office_a.id, other_contact.id, world.integration, tags=[kept]
    )
    await session.commit()
    card = await client.post(
        "/funnel-column-card",
        json={
            "columnId": world.columns[0].id,
            "personId": world.contact.id,
            "conversationId": world.conversation.id,
        },
        headers=office_a.headers,
    )
    assert card.status_code == 201, card.text
    r = await client.delete(f"/tag/{world.tag.id}", headers=office_a.headers)
    assert r.status_code == 200
    updated = await outbox(app, office_a.id, "chat.conversation.updated")
    assert [e.data["id"] for e in updated] == [world.conversation.id]
    assert [t["id"] for t in updated[0].data["tags"]] == [kept.id]
    leads = await outbox(app, office_a.id, "crm.lead.updated")
    assert [(e.data["id"], e.data["changes"]) for e in leads] == [(card.json()["id"], ["tags"])]
    assert untouched.id not in {e.conversation_id for e in await outbox(app, office_a.id)}


async def test_a_duplicate_that_slips_past_the_check_is_still_409(
    session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await f.make_tag(session, office_a.id, inbox.id, "Urgente")
    await session.commit()
    session.add(
        Tag(
            office_id=office_a.id,
            inbox_id=inbox.id,
            name="URGENTE",
            name_key="urgente",
            color="#000000",
            modules=["crm"],
        )
    )
    with pytest.raises(Conflict):
        await flush_or_conflict(session, Conflict("dup"))
    await session.rollback()
