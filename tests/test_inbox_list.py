"""The live inbox's conversation list (issue 29): pinned and archived conversations, the
unread count from read marks, the last message kept on the conversation, responsables,
the filters ``mine``/``unassigned``/``isArchived`` and the order (pinned, then last message).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.kit.pagination import PageParams
from officehub.messages import inbound as inbound_messages
from officehub.messages import statuses as message_statuses
from officehub.messages.schemas import InboundIn, ReadIn
from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server
from tests.webchat_world import make_webchat, start_visitor, visitor_headers


async def _conversation(
    session: AsyncSession, office: OfficeFixture, *, user_id: str | None = None
) -> str:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id)
    conversation = await f.make_conversation(
        session, office.id, contact.id, integration, assigned_user_id=user_id
    )
    await session.commit()
    return conversation.id


async def _inbound(
    client: httpx.AsyncClient, office: OfficeFixture, ident: str, text: str
) -> dict[str, Any]:
    r = await client.post(
        f"/conversation/{ident}/messages/inbound", json={"text": text}, headers=office.headers
    )
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


async def _read(client: httpx.AsyncClient, office: OfficeFixture, ident: str) -> dict[str, Any]:
    r = await client.get(f"/conversation/{ident}", headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def _list(
    client: httpx.AsyncClient, office: OfficeFixture, **params: Any
) -> list[dict[str, Any]]:
    r = await client.get("/conversation", params=params, headers=office.headers)
    assert r.status_code == 200, r.text
    data: list[dict[str, Any]] = r.json()["data"]
    return data


async def test_a_new_conversation_is_unpinned_unarchived_unread_free_without_last_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ident = await _conversation(session, office_a)
    body = await _read(client, office_a, ident)
    assert body["isFixed"] is False and body["isArchived"] is False
    assert body["unreadCount"] == 0
    assert body["lastMessage"] is None and body["responsables"] == []


async def test_each_message_stored_becomes_the_last_message_and_inbound_ones_count_unread(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ident = await _conversation(session, office_a)
    first = await _inbound(client, office_a, ident, "Bom dia")
    second = await _inbound(client, office_a, ident, "Preciso de ajuda")
    body = await _read(client, office_a, ident)
    assert body["unreadCount"] == 2
    assert body["lastMessage"] == {
        "id": second["id"],
        "content": "Preciso de ajuda",
        "type": "TEXT",
        "messageAt": second["createdAt"],
        "userId": None,
        "userName": None,
    }
    assert body["lastMessageAt"] == second["createdAt"] != first["createdAt"]
    sent = await client.post(
        f"/conversation/{ident}/messages", json={"text": "Olá, já vejo"}, headers=office_a.headers
    )
    assert sent.status_code == 201, sent.text
    body = await _read(client, office_a, ident)
    assert body["lastMessage"]["id"] == sent.json()["id"]
    assert body["lastMessage"]["content"] == "Olá, já vejo"
    assert body["unreadCount"] == 2, "an outbound message is nobody's unread"
    assert body["lastMessage"]["userId"] is None, "an API key is no user"


async def test_a_message_a_signed_in_user_sends_names_them_as_the_last_messages_sender(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ident = await _conversation(session, office_a)
    async with signed_in(app, office_a, "ADMIN") as user:
        sent = await user.request("POST", f"/conversation/{ident}/messages", json={"text": "Oi"})
        assert sent.status_code == 201, sent.text
    last = (await _read(client, office_a, ident))["lastMessage"]
    assert (last["id"], last["userId"], last["userName"]) == (
        sent.json()["id"],
        user.id,
        "Beatriz Nogueira",
    )
    await _inbound(client, office_a, ident, "Obrigado")
    last = (await _read(client, office_a, ident))["lastMessage"]
    assert (last["content"], last["userId"], last["userName"]) == ("Obrigado", None, None)


async def test_reading_a_conversation_with_an_api_key_moves_the_offices_read_mark(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ident = await _conversation(session, office_a)
    first = await _inbound(client, office_a, ident, "um")
    await _inbound(client, office_a, ident, "dois")
    r = await client.post(
        f"/conversation/{ident}/read", json={"messageId": first["id"]}, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    assert (await _read(client, office_a, ident))["unreadCount"] == 1
    r = await client.post(f"/conversation/{ident}/read", headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert (await _read(client, office_a, ident))["unreadCount"] == 0
    # A read of an older message later never moves the mark back.
    r = await client.post(
        f"/conversation/{ident}/read", json={"messageId": first["id"]}, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    assert (await _read(client, office_a, ident))["unreadCount"] == 0
    await _inbound(client, office_a, ident, "três")
    assert (await _read(client, office_a, ident))["unreadCount"] == 1


async def test_a_users_read_mark_is_their_own(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """What a signed-in session will do (its context carries the user): the reader's own
    mark counts for them, another user's unread stays; the office's mark moves too (the
    client is told the message was read)."""
    ana = await f.make_user(session, office_a.id, "Ana Lima")
    bia = await f.make_user(session, office_a.id, "Bia Souza")
    ident = await _conversation(session, office_a, user_id=ana.id)
    async with app.state.sessionmaker() as s:
        for text in ("um", "dois"):
            await inbound_messages.receive(s, office_a.id, ident, InboundIn(text=text))
        await message_statuses.mark_read(s, office_a.id, ident, ReadIn(), user_id=ana.id)
        await s.commit()

    async def unread(user_id: str | None) -> int:
        async with app.state.sessionmaker() as s:
            out = await conversations.read_conversation(s, office_a.id, ident, user_id)
            return out.unread_count

    assert (await unread(ana.id), await unread(bia.id), await unread(None)) == (0, 2, 0)
    async with app.state.sessionmaker() as s:
        page = PageParams(page=1, limit=20)
        mine = json.loads(
            await conversations.list_conversations(s, office_a.id, page, mine=True, user_id=ana.id)
        )["data"]
        not_mine = json.loads(
            await conversations.list_conversations(s, office_a.id, page, mine=True, user_id=bia.id)
        )["data"]
    assert [c["id"] for c in mine] == [ident] and not_mine == []
    assert mine[0]["responsables"][0]["name"] == ana.name


async def test_responsables_name_the_assigned_user(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    ident = await _conversation(session, office_a)
    r = await client.patch(
        f"/conversation/{ident}", json={"assignedUserId": user.id}, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["responsables"] == [{"id": user.id, "name": user.name}]


async def test_pinning_and_archiving_are_patched_and_emit_updated(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ident = await _conversation(session, office_a)
    r = await client.patch(
        f"/conversation/{ident}", json={"isFixed": True}, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["isFixed"] is True and r.json()["isArchived"] is False
    r = await client.patch(
        f"/conversation/{ident}", json={"isArchived": True}, headers=office_a.headers
    )
    assert r.json()["isArchived"] is True
    updated = await outbox(app, office_a.id, "chat.conversation.updated")
    assert [(e.data["isFixed"], e.data["isArchived"]) for e in updated] == [
        (True, False),
        (True, True),
    ]
    # The same value again changes nothing and emits nothing.
    r = await client.patch(
        f"/conversation/{ident}", json={"isArchived": True}, headers=office_a.headers
    )
    assert r.status_code == 200
    assert len(await outbox(app, office_a.id, "chat.conversation.updated")) == 2


async def test_pinning_refuses_null_and_non_booleans_naming_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ident = await _conversation(session, office_a)
    for body, field in (({"isFixed": None}, "isFixed"), ({"isArchived": "talvez"}, "isArchived")):
        r = await client.patch(f"/conversation/{ident}", json=body, headers=office_a.headers)
        assert r.status_code == 400, r.text
        assert field in str(error_of(r)["details"])
    assert (await _read(client, office_a, ident))["isFixed"] is False


async def test_pinning_another_offices_conversation_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    ident = await _conversation(session, office_b)
    r = await client.patch(
        f"/conversation/{ident}", json={"isFixed": True}, headers=office_a.headers
    )
    assert r.status_code == 404
    assert (await _read(client, office_b, ident))["isFixed"] is False


async def test_the_list_is_pinned_first_then_by_last_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    old, quiet, pinned = [await _conversation(session, office_a) for _ in range(3)]
    await _inbound(client, office_a, old, "primeira")
    await _inbound(client, office_a, pinned, "segunda")
    r = await client.patch(
        f"/conversation/{pinned}", json={"isFixed": True}, headers=office_a.headers
    )
    assert r.status_code == 200
    await _inbound(client, office_a, old, "terceira")
    # ``quiet`` has no message: it sorts by its creation, older than every message here.
    assert [c["id"] for c in await _list(client, office_a)] == [pinned, old, quiet]


async def test_the_list_filters_unassigned_and_archived(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    assigned = await _conversation(session, office_a, user_id=user.id)
    free = await _conversation(session, office_a)
    archived = await _conversation(session, office_a)
    r = await client.patch(
        f"/conversation/{archived}", json={"isArchived": True}, headers=office_a.headers
    )
    assert r.status_code == 200
    ids = {c["id"] for c in await _list(client, office_a, unassigned="true")}
    assert ids == {free, archived}
    ids = {c["id"] for c in await _list(client, office_a, isArchived="false")}
    assert ids == {assigned, free}
    ids = {c["id"] for c in await _list(client, office_a, isArchived="true", unassigned="true")}
    assert ids == {archived}


async def test_mine_needs_a_signed_in_user_and_says_so_for_an_api_key(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/conversation", params={"mine": "true"}, headers=office_a.headers)
    assert r.status_code == 400
    assert "mine" in str(error_of(r)["details"])
    r = await client.get("/conversation", params={"isArchived": "talvez"}, headers=office_a.headers)
    assert r.status_code == 400
    assert "isArchived" in str(error_of(r)["details"])


async def test_a_web_chat_visitors_message_is_kept_as_the_last_message(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    started = await start_visitor(client, chat["id"])
    sent = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Preciso de ajuda com um contrato", "clientId": "m1"},
        headers=visitor_headers(started["token"]),
    )
    assert sent.status_code == 201, sent.text
    body = await _read(client, office_a, started["conversationId"])
    assert body["lastMessage"]["id"] == sent.json()["id"]
    assert body["unreadCount"] == 1


CONCURRENT = 12


async def test_concurrent_inbound_messages_are_each_counted_and_the_newest_is_kept(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    ident = await _conversation(session, office_a)
    path = f"/conversation/{ident}/messages/inbound"
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answers = await fire(
            CONCURRENT,
            lambda i: client.post(path, json={"text": f"m{i}"}, headers=office_a.headers),
        )
        assert [a.status_code for a in answers] == [201] * CONCURRENT, [a.text for a in answers]
        body = (await client.get(f"/conversation/{ident}", headers=office_a.headers)).json()
    newest = max(answers, key=lambda a: (a.json()["createdAt"], a.json()["id"])).json()
    assert body["unreadCount"] == CONCURRENT
    assert body["lastMessage"]["messageAt"] == newest["createdAt"]
