"""CRM cards, tickets and court cases as a signed-in user may see them (issue 29): a
SUPERVISOR or an AGENT sees those of their inboxes only (another inbox's is 404 and absent
from lists); a key or an ADMIN sees the whole office. A card is its funnel's inbox's; a
ticket or a case follows its conversation; a case without one follows its contact's
conversations; a ticket without one is the office's."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.case_notices.models import CaseNotice
from officehub.cases.models import Case, CaseMovement
from officehub.kit.timeutil import utcnow
from officehub.tickets.models import Ticket, TicketStatus
from tests import factories as f
from tests.accounts_helpers import SignedInUser, signed_in
from tests.helpers import OfficeFixture, error_of


@dataclass
class Side:
    """One inbox's records."""

    inbox: str
    conversation: str
    funnel: str
    columns: list[str]
    card: str
    ticket: str
    case: str


@dataclass
class World:
    family: Side
    labour: Side
    office_ticket: str  # a ticket about no conversation
    labour_contact_case: str  # a case about no conversation, of the labour inbox's contact


async def _side(
    session: AsyncSession, office_id: str, name: str, person: str, status_id: str, number: str
) -> Side:
    inbox = await f.make_inbox(session, office_id, name)
    integration = await f.make_integration(session, office_id, inbox.id)
    contact = await f.make_contact(session, office_id, person, phone=None)
    conversation = await f.make_conversation(session, office_id, contact.id, integration)
    funnel, columns = await f.make_funnel(session, office_id, inbox.id, 2)
    card = await f.make_card(session, columns[0], contact.id, conversation.id)
    ticket = Ticket(
        office_id=office_id,
        title=f"Prazo {name}",
        status_id=status_id,
        priority="LOW",
        conversation_id=conversation.id,
    )
    case = Case(
        office_id=office_id,
        person_id=contact.id,
        conversation_id=conversation.id,
        number=number,
        court="tjsp",
        watch=False,
    )
    session.add_all([ticket, case])
    await session.flush()
    session.add(
        CaseMovement(
            office_id=office_id,
            person_id=contact.id,
            case_number=number,
            description="Juntada de petição",
            occurred_at=utcnow(),
            case_id=case.id,
        )
    )
    await session.flush()
    return Side(
        inbox.id,
        conversation.id,
        funnel.id,
        [c.id for c in columns],
        card.id,
        ticket.id,
        case.id,
    )


async def _world(session: AsyncSession, office: OfficeFixture) -> World:
    status = TicketStatus(office_id=office.id, name="Aberto")
    session.add(status)
    await session.flush()
    family = await _side(
        session, office.id, "Família", "Maria Souza", status.id, "10000000020248260001"
    )
    labour = await _side(
        session, office.id, "Trabalhista", "João Pereira", status.id, "20000000020248260001"
    )
    office_ticket = Ticket(office_id=office.id, title="Rotina", status_id=status.id, priority="LOW")
    labour_person = await session.get(Case, labour.case)
    assert labour_person is not None
    loose_case = Case(
        office_id=office.id,
        person_id=labour_person.person_id,
        number="30000000020248260001",
        court="tjsp",
        watch=False,
    )
    session.add_all([office_ticket, loose_case])
    await session.commit()
    return World(family, labour, office_ticket.id, loose_case.id)


def _routes(side: Side, person_of_card: str) -> list[tuple[str, str, dict[str, object] | None]]:
    """Every route that names one card, funnel, ticket or case, with a body that would change
    it."""
    return [
        ("GET", f"/funnel/{side.funnel}", None),
        ("GET", f"/funnel-column-card/{side.card}", None),
        ("PATCH", f"/funnel-column-card/{side.card}", {"columnId": side.columns[1]}),
        (
            "GET",
            f"/funnel-column-card/person/{person_of_card}/conversation/{side.conversation}",
            None,
        ),
        ("GET", f"/ticket/{side.ticket}", None),
        ("PATCH", f"/ticket/{side.ticket}", {"priority": "HIGH"}),
        ("GET", f"/cases/{side.case}", None),
        ("PATCH", f"/cases/{side.case}", {"watch": False}),
        ("GET", f"/cases/{side.case}/movements", None),
        ("DELETE", f"/cases/{side.case}", None),
    ]


async def _ids(user: SignedInUser, path: str) -> set[str]:
    r = await user.request("GET", path)
    assert r.status_code == 200, (path, r.text)
    return {item["id"] for item in r.json()["data"]}


async def _person_of_card(client: httpx.AsyncClient, office: OfficeFixture, card: str) -> str:
    r = await client.get(f"/funnel-column-card/{card}", headers=office.headers)
    assert r.status_code == 200, r.text
    person: str = r.json()["person"]["id"]
    return person


async def test_a_card_ticket_or_case_of_another_inbox_is_not_found(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _world(session, office_a)
    labour_person = await _person_of_card(client, office_a, world.labour.card)
    family_person = await _person_of_card(client, office_a, world.family.card)
    for role in ("AGENT", "SUPERVISOR"):
        async with signed_in(app, office_a, role, inbox_ids=[world.family.inbox]) as user:
            for method, path, body in _routes(world.labour, labour_person):
                r = await user.request(method, path, json=body)
                assert r.status_code == 404, (role, method, path, r.text)
                assert error_of(r)["code"] == "NOT_FOUND"
            for method, path, body in _routes(world.family, family_person)[:-1]:
                r = await user.request(method, path, json=body)
                assert r.status_code == 200, (role, method, path, r.text)
            r = await user.request(
                "DELETE", "/funnel-column-card", json={"ids": [world.labour.card]}
            )
            assert r.status_code == 200 and r.json() == "0 cards removed"
    r = await client.get(f"/funnel-column-card/{world.labour.card}", headers=office_a.headers)
    assert r.status_code == 200
    assert r.json()["columnId"] == world.labour.columns[0]  # not moved
    r = await client.get(f"/cases/{world.labour.case}", headers=office_a.headers)
    assert r.status_code == 200  # not deleted
    r = await client.get(f"/ticket/{world.labour.ticket}", headers=office_a.headers)
    assert r.json()["priority"] == "LOW"


async def test_lists_hold_only_the_records_of_the_users_inboxes(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    for role in ("AGENT", "SUPERVISOR"):
        async with signed_in(app, office_a, role, inbox_ids=[world.family.inbox]) as user:
            assert await _ids(user, "/funnel") == {world.family.funnel}
            assert await _ids(user, "/ticket") == {world.family.ticket, world.office_ticket}
            assert await _ids(user, "/cases") == {world.family.case}
            r = await user.request("GET", "/ticket")
            assert r.json()["totalResults"] == 2  # the count is scoped too
            labour = f"/ticket?conversationId={world.labour.conversation}"
            assert await _ids(user, labour) == set()


async def test_a_supervisor_of_both_inboxes_sees_both(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _world(session, office_a)
    inboxes = [world.family.inbox, world.labour.inbox]
    labour_person = await _person_of_card(client, office_a, world.labour.card)
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=inboxes) as supervisor:
        for method, path, body in _routes(world.labour, labour_person):
            r = await supervisor.request(method, path, json=body)
            assert r.status_code == 200, (method, path, r.text)
        assert await _ids(supervisor, "/funnel") == {world.family.funnel, world.labour.funnel}
        assert await _ids(supervisor, "/cases") == {world.family.case, world.labour_contact_case}
        assert await _ids(supervisor, "/ticket") == {
            world.family.ticket,
            world.labour.ticket,
            world.office_ticket,
        }
        r = await supervisor.request(
            "DELETE", "/funnel-column-card", json={"ids": [world.labour.card]}
        )
        assert r.status_code == 200 and r.json() == "1 card removed"


async def test_a_key_and_an_admin_see_every_card_ticket_and_case(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _world(session, office_a)
    every_case = {world.family.case, world.labour.case, world.labour_contact_case}
    every_ticket = {world.family.ticket, world.labour.ticket, world.office_ticket}
    async with signed_in(app, office_a, "ADMIN") as admin:
        assert await _ids(admin, "/cases") == every_case
        assert await _ids(admin, "/ticket") == every_ticket
        r = await admin.request("GET", f"/funnel/{world.labour.funnel}")
        assert r.status_code == 200
    for path, expected in (("/cases", every_case), ("/ticket", every_ticket)):
        r = await client.get(path, headers=office_a.headers)
        assert {item["id"] for item in r.json()["data"]} == expected
    r = await client.get("/funnel", headers=office_a.headers)
    assert {item["id"] for item in r.json()["data"]} == {world.family.funnel, world.labour.funnel}
    for path in (
        f"/funnel-column-card/{world.labour.card}",
        f"/cases/{world.labour.case}/movements",
        f"/ticket/{world.labour.ticket}",
    ):
        assert (await client.get(path, headers=office_a.headers)).status_code == 200


async def test_a_case_without_a_conversation_follows_its_contacts_conversations(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    path = f"/cases/{world.labour_contact_case}"
    async with (
        signed_in(app, office_a, "AGENT", inbox_ids=[world.family.inbox]) as family,
        signed_in(app, office_a, "AGENT", inbox_ids=[world.labour.inbox]) as labour,
    ):
        assert (await family.request("GET", path)).status_code == 404
        assert (await labour.request("GET", path)).status_code == 200
        assert await _ids(labour, "/cases") == {world.labour.case, world.labour_contact_case}


async def test_tickets_and_cases_follow_only_assigned_conversations(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _world(session, office_a)
    colleague = await f.make_user(session, office_a.id, "Colega", "colega@escritorio.example")
    await session.commit()
    async with signed_in(app, office_a, "AGENT", inbox_ids=[world.family.inbox]) as agent:
        r = await client.patch(
            f"/user/{agent.id}", json={"onlyAssignedConversations": True}, headers=office_a.headers
        )
        assert r.status_code == 200
        assert (await agent.request("GET", f"/ticket/{world.family.ticket}")).status_code == 200
        r = await client.patch(
            f"/conversation/{world.family.conversation}",
            json={"assignedUserId": colleague.id},
            headers=office_a.headers,
        )
        assert r.status_code == 200, r.text
        assert (await agent.request("GET", f"/ticket/{world.family.ticket}")).status_code == 404
        assert (await agent.request("GET", f"/cases/{world.family.case}")).status_code == 404
        assert await _ids(agent, "/cases") == set()
        # A card is its funnel's inbox's: the setting narrows conversations, not the board.
        r = await agent.request("GET", f"/funnel-column-card/{world.family.card}")
        assert r.status_code == 200


async def _notice(session: AsyncSession, office_id: str, case_id: str) -> str:
    case = await session.get(Case, case_id)
    assert case is not None
    movement = await session.scalar(select(CaseMovement.id).where(CaseMovement.case_id == case_id))
    notice = CaseNotice(
        office_id=office_id,
        case_id=case_id,
        movement_id=movement,
        person_id=case.person_id,
        conversation_id=case.conversation_id,
        case_number=case.number,
        occurred_at=utcnow(),
        category="decision",
        explanation="O juiz decidiu.",
        text="Olá! O juiz decidiu.",
        status="PENDING",
    )
    session.add(notice)
    await session.commit()
    return notice.id


async def test_case_notices_follow_their_case(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture, client: httpx.AsyncClient
) -> None:
    world = await _world(session, office_a)
    family = await _notice(session, office_a.id, world.family.case)
    labour = await _notice(session, office_a.id, world.labour.case)
    assert await _key_ids(client, office_a, "/case-notices") == {family, labour}
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=[world.family.inbox]) as user:
        assert await _ids(user, "/case-notices") == {family}
        assert await _ids(user, f"/case-notices?caseId={world.labour.case}") == set()
        for method, path, body in (
            ("GET", f"/case-notices/{labour}", None),
            ("PATCH", f"/case-notices/{labour}", {"text": "Outro texto"}),
            ("POST", f"/case-notices/{labour}/approve", None),
            ("POST", f"/case-notices/{labour}/discard", None),
        ):
            r = await user.request(method, path, json=body)
            assert r.status_code == 404, (method, path, r.text)
        r = await user.request("GET", f"/case-notices/{family}")
        assert r.status_code == 200, r.text
        r = await user.request("POST", f"/case-notices/{family}/discard")
        assert r.status_code == 200 and r.json()["status"] == "DISCARDED", r.text
    r = await client.get(f"/case-notices/{labour}", headers=office_a.headers)
    assert r.json()["status"] == "PENDING" and r.json()["text"] == "Olá! O juiz decidiu."


async def _key_ids(client: httpx.AsyncClient, office: OfficeFixture, path: str) -> set[str]:
    r = await client.get(path, headers=office.headers)
    assert r.status_code == 200, r.text
    return {item["id"] for item in r.json()["data"]}
