"""Contacts as a signed-in user may see them (issue 29): a SUPERVISOR or an AGENT sees a
contact that has a conversation they may see, and one with no conversation yet; another
inbox's client is 404 on every route naming it and absent from `GET /people` (page and
total). A key or an ADMIN sees every contact. docs/decisions.md, "Record scoping
(contacts)"."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from tests import factories as f
from tests.accounts_helpers import SignedInUser, signed_in
from tests.helpers import OfficeFixture, error_of


@dataclass
class World:
    family_inbox: str
    family_client: str  # a conversation in the family inbox
    labour_client: str  # a conversation in the labour inbox only
    new_contact: str  # no conversation at all
    assigned_elsewhere: str  # family inbox, assigned to someone else


async def _world(session: AsyncSession, office: OfficeFixture, other_user: str) -> World:
    family = await f.make_inbox(session, office.id, "Família")
    labour = await f.make_inbox(session, office.id, "Trabalhista")
    family_channel = await f.make_integration(session, office.id, family.id)
    labour_channel = await f.make_integration(session, office.id, labour.id)
    family_client = await f.make_contact(session, office.id, "Maria Souza", phone=None)
    labour_client = await f.make_contact(session, office.id, "João Pereira", phone=None)
    new_contact = await f.make_contact(session, office.id, "Ana Lima", phone=None)
    taken = await f.make_contact(session, office.id, "Rita Alves", phone=None)
    await f.make_conversation(session, office.id, family_client.id, family_channel)
    await f.make_conversation(session, office.id, labour_client.id, labour_channel)
    await f.make_conversation(
        session, office.id, taken.id, family_channel, assigned_user_id=other_user
    )
    await session.commit()
    return World(family.id, family_client.id, labour_client.id, new_contact.id, taken.id)


def _routes(contact: str, other: str) -> list[tuple[str, str, dict[str, object] | None]]:
    """Every route naming one contact, with a body that would change it."""
    return [
        ("GET", f"/people/{contact}", None),
        ("PATCH", f"/people/{contact}", {"name": "Outro Nome"}),
        ("DELETE", f"/people/{contact}", None),
        ("POST", f"/people/{contact}/merge", {"otherId": other}),
        ("POST", f"/people/{contact}/verify", None),
        ("GET", f"/people/{contact}/consents", None),
        (
            "POST",
            f"/people/{contact}/consents",
            {"purpose": "marketing", "granted": False, "source": "console"},
        ),
    ]


async def _listed(user: SignedInUser) -> tuple[set[str], int]:
    r = await user.request("GET", "/people", params={"limit": 100})
    assert r.status_code == 200, r.text
    return {c["id"] for c in r.json()["data"]}, r.json()["totalResults"]


async def _someone(app: FastAPI, office: OfficeFixture) -> str:
    async with signed_in(app, office, "AGENT") as other:
        return other.id


async def test_a_supervisor_sees_contacts_of_their_inboxes_and_new_ones_only(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(session, office_a, await _someone(app, office_a))
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=[w.family_inbox]) as boss:
        ids, total = await _listed(boss)
        assert ids == {w.family_client, w.new_contact, w.assigned_elsewhere} and total == 3
        for method, path, body in _routes(w.labour_client, w.new_contact):
            r = await boss.request(method, path, json=body)
            assert r.status_code == 404, (method, path, r.text)
            assert error_of(r)["code"] == "NOT_FOUND"
        # Merging someone else's client into a visible one: the other is not found either.
        r = await boss.request(
            "POST", f"/people/{w.family_client}/merge", json={"otherId": w.labour_client}
        )
        assert r.status_code == 404
        assert (await boss.request("GET", f"/people/{w.family_client}")).status_code == 200
        assert (await boss.request("GET", f"/people/{w.new_contact}")).status_code == 200
    # Nothing changed: the refused PATCH, merge and deletion left the other's client alone.
    session.expire_all()
    labour = await session.get(Contact, w.labour_client)
    assert labour is not None and labour.name == "João Pereira"


async def test_a_supervisors_search_finds_and_counts_the_visible_matches_only(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(session, office_a, await _someone(app, office_a))
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=[w.family_inbox]) as boss:
        for search, expected in (
            ("A", {w.family_client, w.new_contact, w.assigned_elsewhere}),  # all four match
            ("pereira", set()),  # the labour inbox's client only
        ):
            r = await boss.request("GET", "/people", params={"search": search, "limit": 100})
            assert r.status_code == 200, r.text
            assert {c["id"] for c in r.json()["data"]} == expected, search
            assert r.json()["totalResults"] == len(expected), search


async def test_an_agent_with_only_assigned_conversations_sees_only_their_clients(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(session, office_a, await _someone(app, office_a))
    async with signed_in(app, office_a, "AGENT", inbox_ids=[w.family_inbox]) as agent:
        ids, _ = await _listed(agent)
        assert ids == {w.family_client, w.new_contact, w.assigned_elsewhere}
        r = await agent.request(
            "PATCH", f"/user/{agent.id}", json={"onlyAssignedConversations": True}
        )
        assert r.status_code == 403  # an ADMIN's change
        r = await agent.client.patch(
            f"/user/{agent.id}",
            json={"onlyAssignedConversations": True},
            headers=office_a.headers,
        )
        assert r.status_code == 200, r.text
        ids, total = await _listed(agent)
        assert ids == {w.family_client, w.new_contact} and total == 2
        r = await agent.request("GET", f"/people/{w.assigned_elsewhere}")
        assert r.status_code == 404


async def test_a_key_and_an_admin_see_every_contact(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(session, office_a, await _someone(app, office_a))
    async with signed_in(app, office_a, "ADMIN") as admin:
        ids, _ = await _listed(admin)
        assert {w.family_client, w.labour_client, w.new_contact} <= ids
        assert (await admin.request("GET", f"/people/{w.labour_client}")).status_code == 200
        r = await admin.client.get(f"/people/{w.labour_client}", headers=office_a.headers)
        assert r.status_code == 200
