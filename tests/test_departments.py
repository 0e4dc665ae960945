"""Departments."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation
from officehub.departments.models import Department
from officehub.tickets.models import Ticket, TicketDepartment, TicketStatus
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

pytestmark = pytest.mark.anyio

ROUTES = [
    ("POST", "/department"),
    ("GET", "/department"),
    ("GET", "/department/cxxxxxxxxxxxx"),
    ("PATCH", "/department/cxxxxxxxxxxxx"),
    ("DELETE", "/department/cxxxxxxxxxxxx"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_create_read_update_list_delete_department(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    h = office_a.headers
    r = await client.post("/department", json={"name": "Jurídico"}, headers=h)
    assert r.status_code == 201
    dept = r.json()
    assert dept["name"] == "Jurídico" and dept["officeId"] == office_a.id
    assert (await client.get(f"/department/{dept['id']}", headers=h)).json() == dept
    r = await client.patch(f"/department/{dept['id']}", json={"name": "Comercial"}, headers=h)
    assert r.status_code == 200 and r.json()["name"] == "Comercial"
    await client.post("/department", json={"name": "Financeiro"}, headers=office_b.headers)
    listed = (await client.get("/department", headers=h)).json()
    assert listed["totalResults"] == 1 and listed["data"][0]["name"] == "Comercial"
    r = await client.delete(f"/department/{dept['id']}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == dept["id"]
    assert (await client.get(f"/department/{dept['id']}", headers=h)).status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/department", {"name": ""}, "body.name"),
        ("GET", "/department?page=0", None, "query.page"),
        ("GET", "/department/bad-id", None, "path.id"),
        ("PATCH", "/department/bad-id", {"name": "x"}, "path.id"),
        ("PATCH", "/department/cxxxxxxxxxxxx", {"name": "x" * 201}, "body.name"),
        ("DELETE", "/department/bad-id", None, "path.id"),
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


async def test_another_offices_department_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    dept = await f.make_department(session, office_b.id)
    await session.commit()
    for method, body in (("GET", None), ("PATCH", {"name": "mine"}), ("DELETE", None)):
        r = await client.request(
            method, f"/department/{dept.id}", json=body, headers=office_a.headers
        )
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"
    session.expunge_all()
    stored = await session.get(Department, dept.id)
    assert stored is not None and stored.name == "Jurídico"


async def test_deleting_a_department_lets_conversations_and_tickets_go_of_it(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    dept = await f.make_department(session, office_a.id)
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    conversation.department_id = dept.id
    status = TicketStatus(office_id=office_a.id, name="Aberto")
    session.add(status)
    await session.flush()
    ticket = Ticket(office_id=office_a.id, title="T", status_id=status.id, priority="LOW")
    session.add(ticket)
    await session.flush()
    session.add(TicketDepartment(office_id=office_a.id, ticket_id=ticket.id, department_id=dept.id))
    await session.commit()

    r = await client.delete(f"/department/{dept.id}", headers=office_a.headers)
    assert r.status_code == 200
    session.expunge_all()
    kept = await session.get(Conversation, conversation.id)
    assert kept is not None and kept.department_id is None
    assert await session.get(Ticket, ticket.id) is not None
    assert (await session.scalars(select(TicketDepartment))).all() == []
