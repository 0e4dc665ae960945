"""Ticket statuses and tickets."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.tickets.models import Ticket, TicketStatus
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

pytestmark = pytest.mark.anyio

ROUTES = [
    ("GET", "/ticket-statuses"),
    ("POST", "/ticket-statuses"),
    ("POST", "/ticket"),
    ("GET", "/ticket"),
    ("GET", "/ticket/cxxxxxxxxxxxx"),
    ("PATCH", "/ticket/cxxxxxxxxxxxx"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def make_status(session: AsyncSession, office_id: str, name: str = "Aberto") -> TicketStatus:
    status = TicketStatus(office_id=office_id, name=name, color="#0000FF")
    session.add(status)
    await session.flush()
    return status


async def test_create_and_list_ticket_statuses(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    h = office_a.headers
    r = await client.post(
        "/ticket-statuses", json={"name": "Aberto", "color": "#0000FF"}, headers=h
    )
    assert r.status_code == 201
    status = r.json()
    assert status["name"] == "Aberto" and status["officeId"] == office_a.id
    await client.post("/ticket-statuses", json={"name": "Fechado"}, headers=h)
    await client.post("/ticket-statuses", json={"name": "Outro"}, headers=office_b.headers)
    listed = (await client.get("/ticket-statuses", headers=h)).json()
    assert [s["name"] for s in listed["data"]] == ["Aberto", "Fechado"]
    assert listed["totalResults"] == 2 and listed["totalPages"] == 1


async def test_create_read_update_list_ticket(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    status = await make_status(session, office_a.id)
    done = await make_status(session, office_a.id, "Resolvido")
    user = await f.make_user(session, office_a.id)
    dept = await f.make_department(session, office_a.id)
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    h = office_a.headers
    body = {
        "title": "Enviar procuração",
        "description": "Cliente pediu",
        "statusId": status.id,
        "priority": "HIGH",
        "assigneeIds": [user.id],
        "departmentIds": [dept.id],
        "conversationId": conversation.id,
    }
    r = await client.post("/ticket", json=body, headers=h)
    assert r.status_code == 201
    ticket = r.json()
    assert ticket["title"] == "Enviar procuração" and ticket["priority"] == "HIGH"
    assert ticket["status"] == {"id": status.id, "name": "Aberto", "color": "#0000FF"}
    assert ticket["assigneeIds"] == [user.id] and ticket["departmentIds"] == [dept.id]
    assert ticket["conversationId"] == conversation.id
    assert (await client.get(f"/ticket/{ticket['id']}", headers=h)).json() == ticket

    r = await client.patch(
        f"/ticket/{ticket['id']}",
        json={"statusId": done.id, "assigneeIds": [], "conversationId": None, "priority": "LOW"},
        headers=h,
    )
    assert r.status_code == 200
    changed = r.json()
    assert changed["statusId"] == done.id and changed["status"]["name"] == "Resolvido"
    assert changed["assigneeIds"] == [] and changed["departmentIds"] == [dept.id]
    assert changed["conversationId"] is None and changed["priority"] == "LOW"
    assert changed["description"] == "Cliente pediu"

    await client.post("/ticket", json={"title": "Outro", "statusId": status.id}, headers=h)
    listed = (await client.get("/ticket", headers=h)).json()
    assert listed["totalResults"] == 2
    assert [t["title"] for t in listed["data"]] == ["Outro", "Enviar procuração"]
    only = (await client.get(f"/ticket?statusId={done.id}", headers=h)).json()
    assert [t["id"] for t in only["data"]] == [ticket["id"]]
    only = (await client.get(f"/ticket?departmentId={dept.id}&priority=LOW", headers=h)).json()
    assert [t["id"] for t in only["data"]] == [ticket["id"]]


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/ticket-statuses", {"name": ""}, "body.name"),
        ("GET", "/ticket-statuses?page=x", None, "query.page"),
        ("POST", "/ticket", {"title": "t", "statusId": "bad"}, "body.statusId"),
        ("POST", "/ticket", {"title": "", "statusId": "cxxxxxxxxxx"}, "body.title"),
        (
            "POST",
            "/ticket",
            {"title": "t", "statusId": "cxxxxxxxxxx", "priority": "URGENT"},
            "body.priority",
        ),
        (
            "POST",
            "/ticket",
            {"title": "t", "statusId": "cxxxxxxxxxx", "assigneeIds": ["x-1"]},
            "body.assigneeIds.0",
        ),
        (
            "POST",
            "/ticket",
            {"title": "t", "statusId": "cxxxxxxxxxx", "conversationId": "nope"},
            "body.conversationId",
        ),
        ("GET", "/ticket?assigneeId=bad", None, "query.assigneeId"),
        ("GET", "/ticket/bad-id", None, "path.id"),
        ("PATCH", "/ticket/bad-id", {"title": "x"}, "path.id"),
        ("PATCH", "/ticket/cxxxxxxxxxxxx", {"departmentIds": ["bad"]}, "body.departmentIds.0"),
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


async def test_another_offices_records_are_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    mine = await make_status(session, office_a.id)
    theirs = await make_status(session, office_b.id)
    user_b = await f.make_user(session, office_b.id)
    dept_b = await f.make_department(session, office_b.id)
    inbox_b = await f.make_inbox(session, office_b.id)
    integration_b = await f.make_integration(session, office_b.id, inbox_b.id)
    contact_b = await f.make_contact(session, office_b.id)
    conversation_b = await f.make_conversation(session, office_b.id, contact_b.id, integration_b)
    ticket_b = Ticket(office_id=office_b.id, title="B", status_id=theirs.id, priority="LOW")
    session.add(ticket_b)
    await session.commit()
    h = office_a.headers
    base: dict[str, Any] = {"title": "t", "statusId": mine.id}
    for body in (
        {**base, "statusId": theirs.id},
        {**base, "assigneeIds": [user_b.id]},
        {**base, "departmentIds": [dept_b.id]},
        {**base, "conversationId": conversation_b.id},
    ):
        r = await client.post("/ticket", json=body, headers=h)
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND", body
    assert (
        await session.scalars(select(Ticket).where(Ticket.office_id == office_a.id))
    ).all() == []
    r = await client.get(f"/ticket/{ticket_b.id}", headers=h)
    assert r.status_code == 404
    r = await client.patch(f"/ticket/{ticket_b.id}", json={"title": "mine"}, headers=h)
    assert r.status_code == 404
    assert (await client.get("/ticket", headers=h)).json()["data"] == []
    assert (await client.get("/ticket-statuses", headers=h)).json()["totalResults"] == 1

    r = await client.post("/ticket", json=base, headers=h)
    own = r.json()["id"]
    r = await client.patch(f"/ticket/{own}", json={"statusId": theirs.id}, headers=h)
    assert r.status_code == 404
    r = await client.patch(f"/ticket/{own}", json={"assigneeIds": [user_b.id]}, headers=h)
    assert r.status_code == 404
    assert (await client.get(f"/ticket/{own}", headers=h)).json()["statusId"] == mine.id
