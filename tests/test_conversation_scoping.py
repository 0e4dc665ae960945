"""Conversations and their messages as a signed-in user may see them (issue 29): their
inboxes' only (another inbox's is 404, existence not revealed); an AGENT with
``onlyAssignedConversations`` only those assigned to them or unassigned; reassigning is for
supervisors and admins."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of


@dataclass
class TwoInboxes:
    family: str  # inbox ids
    labour: str
    in_family: str  # conversation ids
    in_labour: str


async def _two_inboxes(session: AsyncSession, office: OfficeFixture) -> TwoInboxes:
    family = await f.make_inbox(session, office.id, "Família")
    labour = await f.make_inbox(session, office.id, "Trabalhista")
    conversations = []
    for inbox, name in ((family, "Maria Souza"), (labour, "João Pereira")):
        integration = await f.make_integration(session, office.id, inbox.id)
        contact = await f.make_contact(session, office.id, name, phone=None)
        conversation = await f.make_conversation(session, office.id, contact.id, integration)
        conversations.append(conversation.id)
    await session.commit()
    return TwoInboxes(family.id, labour.id, conversations[0], conversations[1])


def _routes(conversation_id: str) -> list[tuple[str, str, dict[str, object] | None]]:
    """Every route that names one conversation, with a body that would change it."""
    c = conversation_id
    return [
        ("GET", f"/conversation/{c}", None),
        ("PATCH", f"/conversation/{c}", {"priority": "LOW"}),
        ("POST", f"/conversation/{c}/tags", {"tagId": "c" + "0" * 24}),
        ("DELETE", f"/conversation/{c}/tags/c{'0' * 24}", None),
        ("GET", f"/conversation/notes?conversationId={c}", None),
        ("POST", "/conversation/note", {"conversationId": c, "text": "nota"}),
        ("POST", "/conversation/end-human-support", {"conversationId": c}),
        ("GET", f"/conversation/{c}/messages", None),
        ("POST", f"/conversation/{c}/messages", {"text": "olá"}),
        ("POST", f"/conversation/{c}/messages/inbound", {"text": "olá"}),
        ("POST", f"/conversation/{c}/read", {}),
        ("POST", f"/conversation/{c}/messages/c{'0' * 24}/reaction", {"emoji": "👍"}),
        ("GET", f"/conversation/{c}/flow-session", None),
    ]


async def test_a_conversation_of_another_inbox_is_not_found(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _two_inboxes(session, office_a)
    before = (await client.get(f"/conversation/{world.in_labour}", headers=office_a.headers)).json()
    for role in ("AGENT", "SUPERVISOR"):
        async with signed_in(app, office_a, role, inbox_ids=[world.family]) as user:
            for method, path, body in _routes(world.in_labour):
                r = await user.request(method, path, json=body)
                assert r.status_code == 404, (role, method, path, r.text)
                assert error_of(r)["details"] == f"No conversation with id {world.in_labour}"
            upload = await user.request(
                "POST",
                f"/conversation/{world.in_labour}/template-header-media",
                files={"file": ("a.png", b"\x89PNG\r\n\x1a\n" + b"0" * 64, "image/png")},
            )
            assert upload.status_code == 404, (role, upload.text)
            seen = await user.request("GET", f"/conversation/{world.in_family}")
            assert seen.status_code == 200, (role, seen.text)
            messages = await user.request("GET", f"/conversation/{world.in_family}/messages")
            assert messages.status_code == 200
    after = (await client.get(f"/conversation/{world.in_labour}", headers=office_a.headers)).json()
    assert after == before


async def test_an_admin_and_a_key_see_every_inbox(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _two_inboxes(session, office_a)
    async with signed_in(app, office_a, "ADMIN") as admin:
        r = await admin.request("GET", f"/conversation/{world.in_labour}/messages")
        assert r.status_code == 200
    r = await client.get(f"/conversation/{world.in_labour}", headers=office_a.headers)
    assert r.status_code == 200


async def test_an_agent_with_only_assigned_conversations_sees_theirs_and_unassigned(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _two_inboxes(session, office_a)
    colleague = await f.make_user(session, office_a.id, "Colega", "colega@escritorio.example")
    await session.commit()
    async with signed_in(app, office_a, "AGENT", inbox_ids=[world.family]) as agent:
        r = await client.patch(
            f"/user/{agent.id}", json={"onlyAssignedConversations": True}, headers=office_a.headers
        )
        assert r.status_code == 200 and r.json()["onlyAssignedConversations"] is True
        path = f"/conversation/{world.in_family}"
        assert (await agent.request("GET", path)).status_code == 200  # unassigned
        r = await client.patch(
            path, json={"assignedUserId": colleague.id}, headers=office_a.headers
        )
        assert r.status_code == 200, r.text
        assert (await agent.request("GET", path)).status_code == 404  # a colleague's
        assert (await agent.request("GET", f"{path}/messages")).status_code == 404
        r = await client.patch(path, json={"assignedUserId": agent.id}, headers=office_a.headers)
        assert r.status_code == 200
        assert (await agent.request("GET", path)).status_code == 200  # their own


async def test_reassigning_is_for_supervisors_and_admins(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _two_inboxes(session, office_a)
    colleague = await f.make_user(session, office_a.id, "Colega", "colega@escritorio.example")
    await session.commit()
    path = f"/conversation/{world.in_family}"
    async with (
        signed_in(app, office_a, "AGENT", inbox_ids=[world.family]) as agent,
        signed_in(app, office_a, "SUPERVISOR", inbox_ids=[world.family]) as supervisor,
    ):
        r = await agent.request("PATCH", path, json={"assignedUserId": colleague.id})
        assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"
        r = await agent.request("PATCH", path, json={"assignedUserId": agent.id})
        assert r.status_code == 200 and r.json()["assignedUserId"] == agent.id  # takes it
        r = await supervisor.request("PATCH", path, json={"assignedUserId": colleague.id})
        assert r.status_code == 200 and r.json()["assignedUserId"] == colleague.id
        r = await agent.request("PATCH", path, json={"assignedUserId": agent.id})
        assert r.status_code == 403  # not theirs to take back
        r = await agent.request(
            "POST", "/conversation/end-human-support", json={"conversationId": world.in_family}
        )
        assert r.status_code == 403
        r = await agent.request("PATCH", path, json={"priority": "HIGH"})
        assert r.status_code == 200  # other changes of a visible conversation stay open


async def test_the_list_shows_a_user_only_the_conversations_they_may_see(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _two_inboxes(session, office_a)
    colleague = await f.make_user(session, office_a.id, "Colega", "colega@escritorio.example")
    await session.commit()
    listed = await client.get("/conversation", headers=office_a.headers)
    assert listed.json()["totalResults"] == 2  # a key sees every inbox
    for role in ("AGENT", "SUPERVISOR"):
        async with signed_in(app, office_a, role, inbox_ids=[world.family]) as user:
            r = await user.request("GET", "/conversation")
            assert r.status_code == 200, r.text
            body = r.json()
            assert [c["id"] for c in body["data"]] == [world.in_family], role
            assert body["totalResults"] == 1
            r = await user.request("GET", f"/conversation?inboxId={world.labour}")
            assert r.json()["totalResults"] == 0
    async with signed_in(app, office_a, "AGENT", inbox_ids=[world.family]) as agent:
        r = await client.patch(
            f"/user/{agent.id}", json={"onlyAssignedConversations": True}, headers=office_a.headers
        )
        assert r.status_code == 200
        path = f"/conversation/{world.in_family}"
        r = await client.patch(
            path, json={"assignedUserId": colleague.id}, headers=office_a.headers
        )
        assert r.status_code == 200
        assert (await agent.request("GET", "/conversation")).json()["totalResults"] == 0
        r = await client.patch(path, json={"assignedUserId": agent.id}, headers=office_a.headers)
        assert r.status_code == 200
        assert (await agent.request("GET", "/conversation")).json()["totalResults"] == 1


async def test_mine_lists_a_users_own_conversations(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _two_inboxes(session, office_a)
    both = [world.family, world.labour]
    r = await client.get("/conversation?mine=true", headers=office_a.headers)
    assert r.status_code == 400 and "mine" in str(error_of(r)["details"])  # a key: no user
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=both) as user:
        r = await user.request("GET", "/conversation?mine=true")
        assert r.status_code == 200 and r.json()["totalResults"] == 0
        path = f"/conversation/{world.in_labour}"
        r = await client.patch(path, json={"assignedUserId": user.id}, headers=office_a.headers)
        assert r.status_code == 200
        r = await user.request("GET", "/conversation?mine=true")
        assert [c["id"] for c in r.json()["data"]] == [world.in_labour]


async def test_a_users_unread_count_and_read_mark_are_their_own(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _two_inboxes(session, office_a)
    path = f"/conversation/{world.in_family}"
    r = await client.post(
        f"{path}/messages/inbound", json={"text": "olá"}, headers=office_a.headers
    )
    assert r.status_code in (200, 201), r.text
    async with (
        signed_in(app, office_a, "AGENT", inbox_ids=[world.family]) as ana,
        signed_in(app, office_a, "AGENT", inbox_ids=[world.family]) as bia,
    ):
        for user in (ana, bia):
            assert (await user.request("GET", path)).json()["unreadCount"] == 1
        r = await ana.request("POST", f"{path}/read", json={})
        assert r.status_code in (200, 204), r.text
        assert (await ana.request("GET", path)).json()["unreadCount"] == 0
        assert (await bia.request("GET", path)).json()["unreadCount"] == 1
        listed = (await bia.request("GET", "/conversation")).json()["data"]
        assert listed[0]["unreadCount"] == 1
