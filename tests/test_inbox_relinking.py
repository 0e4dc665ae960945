"""Funnels, columns and links to records as a SUPERVISOR or an AGENT may use them (issue
29): the columns of another inbox's funnels are not listed and shaping that funnel is 404;
nobody puts a card, a conversation, a ticket or a case in an inbox they are not in (the
column, inbox, conversation or contact named is 404, nothing is made or changed).
docs/decisions.md, "Record scoping (cards, tickets, cases)"."""

from __future__ import annotations

from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.models import Case
from officehub.conversations.models import Conversation
from officehub.crm.models import Card, Funnel, FunnelColumn
from officehub.events.models import OutboxEvent
from officehub.tickets.models import Ticket
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of
from tests.test_record_scoping import World, _world


async def _counts(session: AsyncSession) -> tuple[int, ...]:
    session.expire_all()
    models = (Card, Conversation, Ticket, Case, Funnel, FunnelColumn, OutboxEvent)
    return tuple(
        [int(await session.scalar(select(func.count()).select_from(m)) or 0) for m in models]
    )


async def _person(session: AsyncSession, conversation_id: str) -> str:
    conversation = await session.get(Conversation, conversation_id)
    assert conversation is not None
    return conversation.person_id


async def test_a_supervisor_lists_and_shapes_only_their_inboxes_funnels_and_columns(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w: World = await _world(session, office_a)
    labour = w.labour
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=[w.family.inbox]) as boss:
        r = await boss.request("GET", "/funnel-column", params={"limit": 100})
        assert r.status_code == 200, r.text
        assert {c["id"] for c in r.json()["data"]} == set(w.family.columns)
        assert r.json()["totalResults"] == len(w.family.columns)
        before = await _counts(session)
        refused = [
            ("GET", "/funnel-column", None, {"funnelId": labour.funnel}),
            ("PATCH", f"/funnel/{labour.funnel}", {"name": "Outro"}, None),
            ("DELETE", f"/funnel/{labour.funnel}", None, None),
            ("POST", "/funnel-column", {"funnelId": labour.funnel, "name": "Nova"}, None),
            ("PATCH", f"/funnel-column/{labour.columns[0]}", {"name": "Outra"}, None),
            ("DELETE", f"/funnel-column/{labour.columns[1]}", None, None),
            ("POST", "/funnel", {"name": "Meu", "inboxId": labour.inbox}, None),
        ]
        for method, path, body, params in refused:
            r = await boss.request(method, path, json=body, params=params)
            assert r.status_code == 404, (method, path, r.text)
            assert error_of(r)["code"] == "NOT_FOUND"
        assert await _counts(session) == before
        funnel = await session.get(Funnel, labour.funnel)
        assert funnel is not None and funnel.name != "Outro"
        # Their own inbox's funnel they shape as before.
        r = await boss.request("PATCH", f"/funnel/{w.family.funnel}", json={"name": "Família 2"})
        assert r.status_code == 200, r.text


async def test_a_user_cannot_put_work_in_an_inbox_they_are_not_in(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w: World = await _world(session, office_a)
    family, labour = w.family, w.labour
    family_person = await _person(session, family.conversation)
    labour_person = await _person(session, labour.conversation)
    async with signed_in(app, office_a, "AGENT", inbox_ids=[family.inbox]) as agent:
        labour_conversation = await session.get(Conversation, labour.conversation)
        family_ticket = await session.get(Ticket, family.ticket)
        assert labour_conversation is not None and family_ticket is not None
        integration, status_id = labour_conversation.integration_id, family_ticket.status_id
        before = await _counts(session)
        refused = [
            # A card on another inbox's column, or about its conversation.
            (
                "POST",
                "/funnel-column-card",
                {"columnId": labour.columns[0], "personId": family_person},
            ),
            (
                "POST",
                "/funnel-column-card",
                {
                    "columnId": family.columns[0],
                    "personId": labour_person,
                    "conversationId": labour.conversation,
                },
            ),
            # A card moved onto another inbox's column.
            ("PATCH", f"/funnel-column-card/{family.card}", {"columnId": labour.columns[1]}),
            # A conversation opened in another inbox.
            (
                "POST",
                "/conversation",
                {"personId": family_person, "inboxId": labour.inbox, "integrationId": integration},
            ),
            # A ticket or a case linked to another inbox's conversation or client.
            (
                "POST",
                "/ticket",
                {"title": "Prazo", "statusId": status_id, "conversationId": labour.conversation},
            ),
            ("PATCH", f"/ticket/{family.ticket}", {"conversationId": labour.conversation}),
            ("POST", "/cases", {"number": "40000000020248260001", "personId": labour_person}),
            ("PATCH", f"/cases/{family.case}", {"conversationId": labour.conversation}),
        ]
        for method, path, body in refused:
            r = await agent.request(method, path, json=body)
            assert r.status_code == 404, (method, path, r.text)
            assert error_of(r)["code"] == "NOT_FOUND"
        assert await _counts(session) == before
        card = await session.get(Card, family.card)
        ticket = await session.get(Ticket, family.ticket)
        case = await session.get(Case, family.case)
        assert card is not None and card.column_id == family.columns[0]
        assert ticket is not None and ticket.conversation_id == family.conversation
        assert case is not None and case.conversation_id == family.conversation
        # Within their inbox the same moves work.
        r = await agent.request(
            "PATCH", f"/funnel-column-card/{family.card}", json={"columnId": family.columns[1]}
        )
        assert r.status_code == 200, r.text
