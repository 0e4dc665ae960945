"""A list filter naming another office's record answers 404, on every list route, as a
path id would (docs/decisions.md): the record's existence is not revealed, and a client
does not mistake "not yours" for "none"."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import (
    make_contact,
    make_conversation,
    make_department,
    make_funnel,
    make_inbox,
    make_integration,
    make_legal_area,
    make_tag,
    make_user,
)
from tests.helpers import OfficeFixture, error_of


@dataclass(frozen=True)
class Others:
    """Records of office B, and a funnel of office A for the board's owner filter."""

    inbox: str
    user: str
    department: str
    tag: str
    contact: str
    conversation: str
    funnel: str
    status: str
    own_funnel: str
    device: str
    legal_area: str
    case: str
    lawyer: str
    integration: str


# (route, query parameter, which of office B's records it names)
FILTERS: list[tuple[str, str, str]] = [
    ("/user", "inboxId", "inbox"),
    ("/people", "inboxId", "inbox"),
    ("/people", "tagIds", "tag"),
    ("/conversation", "inboxId", "inbox"),
    ("/conversation", "personId", "contact"),
    ("/conversation", "assigneeId", "user"),
    ("/conversation", "tagId", "tag"),
    ("/conversation", "legalAreaId", "legal_area"),
    ("/conversation/notes", "conversationId", "conversation"),
    ("/tag", "inboxId", "inbox"),
    ("/integration", "inboxId", "inbox"),
    ("/sla-policies", "inboxId", "inbox"),
    ("/fast-message", "inboxId", "inbox"),
    ("/ticket", "statusId", "status"),
    ("/ticket", "assigneeId", "user"),
    ("/ticket", "departmentId", "department"),
    ("/ticket", "conversationId", "conversation"),
    ("/funnel", "inboxId", "inbox"),
    ("/funnel-column", "funnelId", "funnel"),
    ("/funnel/{ownFunnel}", "userIds", "user"),
    ("/integration/partner/whatsapp-templates", "deviceId", "device"),
    ("/flow", "inboxId", "inbox"),
    ("/case-movements", "personId", "contact"),
    ("/cases", "personId", "contact"),
    ("/cases", "conversationId", "conversation"),
    ("/cases", "legalAreaId", "legal_area"),
    ("/case-notices", "caseId", "case"),
    ("/publications", "lawyerId", "lawyer"),
    ("/publications", "caseId", "case"),
    ("/reports/conversations", "inboxId", "inbox"),
    ("/reports/whatsapp-usage", "integrationId", "integration"),
]

HISTORY_FILTERS: list[tuple[str, str]] = [
    ("/audit-log", "actorId"),
    ("/audit-log", "personId"),
]
"""Filters of a record's history, which outlives the record: an erased contact's or a
deactivated user's entries stay findable by the id, so no existence check (and no 404)
applies; another office's id finds nothing of it (tests/test_audit.py,
test_audit_log_of_another_office_shows_nothing_of_it)."""


@pytest.fixture
async def others(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> Others:
    inbox = await make_inbox(session, office_b.id)
    integration = await make_integration(session, office_b.id, inbox.id)
    user = await make_user(session, office_b.id)
    department = await make_department(session, office_b.id)
    tag = await make_tag(session, office_b.id, inbox.id)
    contact = await make_contact(session, office_b.id)
    conversation = await make_conversation(session, office_b.id, contact.id, integration)
    funnel = await make_funnel(session, office_b.id, inbox.id)
    legal_area = await make_legal_area(session, office_b.id)
    await make_integration(
        session, office_b.id, inbox.id, "WHATSAPP_OFFICIAL", device_id="5511999990000"
    )
    own_inbox = await make_inbox(session, office_a.id)
    own_funnel = await make_funnel(session, office_a.id, own_inbox.id)
    await session.commit()
    status = await client.post(
        "/ticket-statuses", json={"name": "Aberto"}, headers=office_b.headers
    )
    assert status.status_code == 201
    case_body = {"number": "1009131-52.2024.8.26.0224", "personId": contact.id}
    case = await client.post("/cases", json=case_body, headers=office_b.headers)
    assert case.status_code == 201, case.text
    lawyer_body = {"name": "Dra. B", "oab": {"number": "123456", "uf": "SP"}}
    lawyer = await client.post("/lawyers", json=lawyer_body, headers=office_b.headers)
    assert lawyer.status_code == 201, lawyer.text
    return Others(
        inbox.id,
        user.id,
        department.id,
        tag.id,
        contact.id,
        conversation.id,
        funnel[0].id if isinstance(funnel, tuple) else funnel.id,
        status.json()["id"],
        own_funnel[0].id if isinstance(own_funnel, tuple) else own_funnel.id,
        "5511999990000",
        legal_area.id,
        case.json()["id"],
        lawyer.json()["id"],
        integration.id,
    )


@pytest.mark.parametrize(("route", "param", "record"), FILTERS)
async def test_a_list_filter_naming_another_offices_record_is_404(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    others: Others,
    route: str,
    param: str,
    record: str,
) -> None:
    path = route.replace("{ownFunnel}", others.own_funnel)
    value = getattr(others, record)
    r = await client.get(path, params={param: value}, headers=office_a.headers)
    assert r.status_code == 404, (route, param, r.status_code, r.text)
    assert error_of(r)["code"] == "NOT_FOUND"
    assert value in error_of(r)["details"]


async def test_every_list_filter_naming_a_record_is_covered(client: httpx.AsyncClient) -> None:
    """A GET route's query parameter ending in Id or Ids names a record: it is listed above."""
    doc = (await client.get("/openapi.json")).json()
    found = {
        (path.replace("{id}", "{ownFunnel}"), p["name"])
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
        if method == "get"
        for p in operation.get("parameters", [])
        if p["in"] == "query" and p["name"].endswith(("Id", "Ids"))
    }
    assert found == {(route, param) for route, param, _ in FILTERS} | set(HISTORY_FILTERS)
