"""``POST /people/{id}/merge``: two contacts that are one person made one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.models import Case
from officehub.channels.models import ChannelPeer
from officehub.contacts.models import Contact, ContactTag, PartnerLink
from officehub.conversations.models import Conversation, ConversationNote
from officehub.crm.models import Card, FunnelColumn
from officehub.inboxes.models import Integration
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire

MISSING = "c" + "0" * 24


@dataclass
class Pair:
    kept: str
    other: str
    integration: str
    column: str


async def _pair(session: AsyncSession, office_id: str) -> Pair:
    """Two contacts, the other holding one of everything a contact can hold."""
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(session, office_id, inbox.id)
    _funnel, columns = await f.make_funnel(session, office_id, inbox.id, 1)
    kept = await f.make_contact(session, office_id, "Maria Souza", phone="+5511988887777")
    other = await f.make_contact(session, office_id, "Maria", phone=None)
    other.email, other.document = "maria@example.com", "123.456.789-00"
    tag = await f.make_tag(session, office_id, inbox.id, name="cliente")
    session.add(ContactTag(office_id=office_id, contact_id=other.id, tag_id=tag.id))
    conversation = await f.make_conversation(session, office_id, other.id, integration)
    now = utcnow()
    session.add_all(
        [
            Message(
                office_id=office_id,
                conversation_id=conversation.id,
                direction="INBOUND",
                type="TEXT",
                text="Olá",
                status="RECEIVED",
                created_at=now,
            ),
            ConversationNote(
                office_id=office_id, conversation_id=conversation.id, text="Ligar", created_at=now
            ),
            PartnerLink(
                office_id=office_id,
                contact_id=other.id,
                partner={"id": "p1"},
                source="MANUAL",
                linked_at=now,
            ),
            ChannelPeer(
                office_id=office_id,
                integration_id=integration.id,
                contact_id=other.id,
                peer_id="5511988887777",
            ),
            Case(
                office_id=office_id,
                person_id=other.id,
                number="00000011220258260100",
                court="tjsp",
                watch=False,
            ),
        ]
    )
    await f.make_card(session, columns[0], other.id, conversation.id)
    await session.commit()
    return Pair(kept.id, other.id, integration.id, columns[0].id)


async def _merge(
    client: httpx.AsyncClient, office: OfficeFixture, ident: str, body: Any
) -> httpx.Response:
    return await client.post(f"/people/{ident}/merge", json=body, headers=office.headers)


async def _owned_by(session: AsyncSession, model: Any, column: Any, contact_id: str) -> int:
    stmt = select(func.count()).select_from(model).where(column == contact_id)
    return int(await session.scalar(stmt) or 0)


async def test_a_merge_moves_everything_to_the_kept_contact(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    pair = await _pair(session, office_a.id)
    r = await _merge(client, office_a, pair.kept, {"otherId": pair.other})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["id"] == pair.kept
    assert (body["name"], body["phone"]) == ("Maria Souza", "+5511988887777")
    assert (body["email"], body["document"]) == ("maria@example.com", "123.456.789-00")
    assert [t["name"] for t in body["tags"]] == ["cliente"]
    gone = await client.get(f"/people/{pair.other}", headers=office_a.headers)
    assert gone.status_code == 404
    session.expire_all()
    for model, column in (
        (Conversation, Conversation.person_id),
        (Card, Card.person_id),
        (Case, Case.person_id),
        (PartnerLink, PartnerLink.contact_id),
        (ChannelPeer, ChannelPeer.contact_id),
    ):
        assert await _owned_by(session, model, column, pair.kept) == 1, model
    conversation_id = await session.scalar(
        select(Conversation.id).where(Conversation.person_id == pair.kept)
    )
    messages = await client.get(
        f"/conversation/{conversation_id}/messages", headers=office_a.headers
    )
    assert [m["text"] for m in messages.json()["data"]] == ["Olá"]
    notes = await session.scalar(
        select(func.count()).where(ConversationNote.conversation_id == conversation_id)
    )
    assert notes == 1
    [deleted] = await outbox(app, office_a.id, "contact.deleted")
    assert deleted.data == {"id": pair.other, "erased": False, "mergedIntoId": pair.kept}
    [updated] = await outbox(app, office_a.id, "contact.updated")
    assert updated.data["email"] == "maria@example.com"


async def test_a_merge_closes_the_others_open_conversation_on_the_same_channel(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    pair = await _pair(session, office_a.id)
    integration = await session.get(Integration, pair.integration)
    assert integration is not None
    mine = await f.make_conversation(session, office_a.id, pair.kept, integration)
    mine_id = mine.id
    await session.commit()
    r = await _merge(client, office_a, pair.kept, {"otherId": pair.other})
    assert r.status_code == 200, r.text
    session.expire_all()
    rows = (
        await session.execute(
            select(Conversation.id, Conversation.status).where(Conversation.person_id == pair.kept)
        )
    ).all()
    assert {status for _, status in rows if _ == mine_id} == {"OPEN"}
    assert sorted(status for _, status in rows) == ["CLOSED", "OPEN"]
    [closed] = await outbox(app, office_a.id, "chat.conversation.updated")
    assert closed.data["status"] == "CLOSED" and closed.data["id"] != mine_id


async def test_a_merge_keeps_one_card_without_a_conversation(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    pair = await _pair(session, office_a.id)
    column = await session.get(FunnelColumn, pair.column)
    assert column is not None
    kept_card = await f.make_card(session, column, pair.kept)
    other_card = await f.make_card(session, column, pair.other)
    kept_card_id, other_card_id = kept_card.id, other_card.id
    await session.commit()
    r = await _merge(client, office_a, pair.kept, {"otherId": pair.other})
    assert r.status_code == 200, r.text
    session.expire_all()
    cards = set(await session.scalars(select(Card.id).where(Card.person_id == pair.kept)))
    assert kept_card_id in cards and other_card_id not in cards and len(cards) == 2
    [deleted] = await outbox(app, office_a.id, "crm.lead.deleted")
    assert deleted.data["id"] == other_card_id


async def test_merge_refuses_a_missing_or_same_other_id(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    pair = await _pair(session, office_a.id)
    for body in ({}, {"otherId": pair.kept}, {"otherId": ""}, {"otherId": 5}):
        r = await _merge(client, office_a, pair.kept, body)
        assert r.status_code == 400, body
        assert "otherId" in error_of(r)["details"], r.text
    listed = await client.get("/people", headers=office_a.headers)
    assert listed.json()["totalResults"] == 2


async def test_merge_of_another_offices_contact_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    pair = await _pair(session, office_a.id)
    theirs = await f.make_contact(session, office_b.id, "Outra", phone="+5521987654321")
    theirs_id = theirs.id
    await session.commit()
    for ident, other in ((pair.kept, theirs_id), (theirs_id, pair.kept), (pair.kept, MISSING)):
        r = await _merge(client, office_a, ident, {"otherId": other})
        assert r.status_code == 404, r.text
    listed = await client.get("/people", headers=office_b.headers)
    assert listed.json()["totalResults"] == 1
    assert (await client.get(f"/people/{pair.other}", headers=office_a.headers)).status_code == 200


async def test_merge_needs_a_key(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    pair = await _pair(session, office_a.id)
    url = f"/people/{pair.kept}/merge"
    assert (await client.post(url, json={"otherId": pair.other})).status_code == 401
    bad = await client.post(url, json={"otherId": pair.other}, headers={"x-service-api-key": "x"})
    assert bad.status_code == 401
    assert (await client.get(f"/people/{pair.other}", headers=office_a.headers)).status_code == 200


async def test_concurrent_merges_of_one_pair_merge_it_once(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    server_url: str,
) -> None:
    pair = await _pair(session, office_a.id)
    ways = [(pair.kept, pair.other), (pair.other, pair.kept)] * 3
    async with concurrent_client(server_url) as c:
        answers = await fire(
            len(ways),
            lambda i: c.post(
                f"/people/{ways[i][0]}/merge",
                json={"otherId": ways[i][1]},
                headers=office_a.headers,
            ),
        )
    codes = sorted(a.status_code for a in answers)
    assert codes == [200] + [404] * (len(ways) - 1), [a.text for a in answers]
    session.expire_all()
    left = list(await session.scalars(select(Contact.id).where(Contact.office_id == office_a.id)))
    assert len(left) == 1
    assert await _owned_by(session, Conversation, Conversation.person_id, left[0]) == 1
    assert len(await outbox(app, office_a.id, "contact.deleted")) == 1


async def test_a_merge_leaves_an_old_form_phone_whose_canonical_form_another_holds(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    legacy = await f.make_contact(session, office_a.id, "Maria", phone="+551188887777")
    await f.make_contact(session, office_a.id, "Maria Souza", phone="+5511988887777")
    stranger = await f.make_contact(session, office_a.id, "João", phone=None)
    legacy_id, stranger_id = legacy.id, stranger.id
    await session.commit()
    r = await _merge(client, office_a, legacy_id, {"otherId": stranger_id})
    assert r.status_code == 200, r.text
    assert (r.json()["phone"], r.json()["whatsappId"]) == ("+551188887777", None)
