"""Partner links: link, read and unlink a contact's partner record (``edit:customer``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox

MISSING = "c" + "0" * 24
PARTNER = {"id": "cpartner0001", "name": "Maria Souza", "document": "12345678900", "phone": "11"}


def _base(contact_id: str) -> str:
    return f"/integration/partner/contacts/{contact_id}/link"


async def _link(
    client: httpx.AsyncClient, office: OfficeFixture, contact_id: str, **partner: Any
) -> dict[str, Any]:
    r = await client.post(
        _base(contact_id),
        json={"partner": {**PARTNER, **partner}, "source": "CRM"},
        headers=office.headers,
    )
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


async def _contact(session: AsyncSession, office: OfficeFixture, name: str = "Maria") -> str:
    contact = await f.make_contact(session, office.id, name=name, phone=None)
    await session.commit()
    return contact.id


# POST .../link


async def test_link_contact(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact_id = await _contact(session, office_a)
    body = await _link(client, office_a, contact_id)
    assert set(body) == {"linked", "linkId", "partner", "linkedAt", "source"}
    assert body["linked"] is True
    assert body["partner"] == PARTNER
    assert body["source"] == "CRM"
    assert body["linkedAt"].endswith("Z")
    assert await outbox(app, office_a.id) == []


async def test_link_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact_id = await _contact(session, office_a)
    cases: list[tuple[str, dict[str, Any], str]] = [
        (contact_id, {"partner": {**PARTNER, "id": ""}}, "body.partner.id"),
        (contact_id, {"partner": {**PARTNER, "id": "x" * 129}}, "body.partner.id"),
        (contact_id, {"partner": PARTNER, "source": "EMAIL"}, "body.source"),
        (contact_id, {"partner": {**PARTNER, "extra": 1}}, "body.partner.extra"),
        (contact_id, {"source": "MANUAL"}, "body.partner"),
        ("not-an-id", {"partner": PARTNER}, "path.contactId"),
    ]
    for path_id, body, field in cases:
        r = await client.post(_base(path_id), json=body, headers=office_a.headers)
        assert r.status_code == 400, body
        assert field in error_of(r)["details"]
    r = await client.get(_base(contact_id), headers=office_a.headers)
    assert r.json()["linked"] is False


async def test_partner_id_is_the_partner_systems_own_any_1_to_128_characters(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    for partner_id in ("p-1", "x" * 128, "42", "ID with spaces/ÿ"):
        contact_id = await _contact(session, office_a, name=f"Maria {partner_id[:8]}")
        body = await _link(client, office_a, contact_id, id=partner_id)
        assert body["partner"]["id"] == partner_id
        r = await client.get(_base(contact_id), headers=office_a.headers)
        assert r.json()["partner"]["id"] == partner_id


async def test_second_link_while_linked_is_409(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact_id = await _contact(session, office_a)
    first = await _link(client, office_a, contact_id)
    r = await client.post(_base(contact_id), json={"partner": PARTNER}, headers=office_a.headers)
    assert r.status_code == 409
    assert first["linkId"] in error_of(r)["details"]
    await client.delete(f"{_base(contact_id)}/{first['linkId']}", headers=office_a.headers)
    again = await _link(client, office_a, contact_id, name="Maria S.")
    assert again["linkId"] != first["linkId"] and again["source"] == "CRM"


# GET .../link


async def test_read_link(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact_id = await _contact(session, office_a)
    r = await client.get(_base(contact_id), headers=office_a.headers)
    assert r.status_code == 200
    assert r.json() == {
        "linked": False,
        "linkId": None,
        "partner": None,
        "linkedAt": None,
        "source": None,
    }
    created = await _link(client, office_a, contact_id)
    r = await client.get(_base(contact_id), headers=office_a.headers)
    assert r.json() == created


async def test_read_link_bad_contact_id_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get(_base("bad id"), headers=office_a.headers)
    assert r.status_code == 400
    assert "path.contactId" in error_of(r)["details"]


async def test_link_routes_for_another_offices_contact_are_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs = await _contact(session, office_b)
    link = await _link(client, office_b, theirs)
    for method, path in (
        ("POST", _base(theirs)),
        ("GET", _base(theirs)),
        ("DELETE", f"{_base(theirs)}/{link['linkId']}"),
    ):
        r = await client.request(method, path, json={"partner": PARTNER}, headers=office_a.headers)
        assert r.status_code == 404, method
        assert error_of(r)["code"] == "NOT_FOUND"
    assert (await client.get(_base(theirs), headers=office_b.headers)).json() == link


# DELETE .../link/{linkId}


async def test_unlink(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact_id = await _contact(session, office_a)
    link = await _link(client, office_a, contact_id)
    r = await client.delete(f"{_base(contact_id)}/{link['linkId']}", headers=office_a.headers)
    assert r.status_code == 200
    assert r.json() == {**link, "linked": False}
    assert (await client.get(_base(contact_id), headers=office_a.headers)).json() == r.json()
    again = await client.delete(f"{_base(contact_id)}/{link['linkId']}", headers=office_a.headers)
    assert again.status_code == 200 and again.json() == r.json()


async def test_unlink_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact_id = await _contact(session, office_a)
    link = await _link(client, office_a, contact_id)
    r = await client.delete(f"{_base('nope')}/{link['linkId']}", headers=office_a.headers)
    assert r.status_code == 400
    assert "path.contactId" in error_of(r)["details"]
    r = await client.delete(f"{_base(contact_id)}/{'x' * 65}", headers=office_a.headers)
    assert r.status_code == 400
    assert "path.linkId" in error_of(r)["details"]
    assert (await client.get(_base(contact_id), headers=office_a.headers)).json() == link


async def test_unlink_needs_edit_customer(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_a_no_permissions: OfficeFixture,
) -> None:
    contact_id = await _contact(session, office_a)
    link = await _link(client, office_a, contact_id)
    no_perm = office_a_no_permissions.headers
    r = await client.delete(f"{_base(contact_id)}/{link['linkId']}", headers=no_perm)
    assert r.status_code == 403
    assert "edit:customer" in error_of(r)["details"]
    assert (await client.get(_base(contact_id), headers=office_a.headers)).json() == link


async def test_link_and_read_need_edit_customer(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_a_no_permissions: OfficeFixture,
) -> None:
    contact_id = await _contact(session, office_a)
    no_perm = office_a_no_permissions.headers
    r = await client.post(_base(contact_id), json={"partner": PARTNER}, headers=no_perm)
    assert r.status_code == 403
    assert error_of(r)["code"] == "MISSING_PERMISSION"
    r = await client.get(_base(contact_id), headers=no_perm)
    assert r.status_code == 403
    assert (await client.get(_base(contact_id), headers=office_a.headers)).json()["linked"] is False


async def test_unlink_removes_only_that_link(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    first = await _contact(session, office_a, "Maria")
    second = await _contact(session, office_a, "Ana")
    link_1 = await _link(client, office_a, first)
    link_2 = await _link(client, office_a, second, id="cpartner0002", name="Ana")
    r = await client.delete(f"{_base(second)}/{link_1['linkId']}", headers=office_a.headers)
    assert r.status_code == 404, "a link of another contact is not this contact's"
    r = await client.delete(f"{_base(first)}/{MISSING}", headers=office_a.headers)
    assert r.status_code == 404
    assert (await client.get(_base(first), headers=office_a.headers)).json() == link_1

    r = await client.delete(f"{_base(first)}/{link_1['linkId']}", headers=office_a.headers)
    assert r.status_code == 200 and r.json()["linked"] is False
    assert (await client.get(_base(second), headers=office_a.headers)).json() == link_2


async def test_unlink_keeps_the_contact_and_partner_records(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    uploaded = settings.data_dir / "uploads" / office_a.id / "document.pdf"
    uploaded.parent.mkdir(parents=True)
    uploaded.write_bytes(b"%PDF-1.4 contract")
    contact = await f.make_contact(session, office_a.id)
    contact.image_url = "/files/uploads/document.pdf"
    await session.commit()
    before = (await client.get(f"/people/{contact.id}", headers=office_a.headers)).json()
    link = await _link(client, office_a, contact.id)

    r = await client.delete(f"{_base(contact.id)}/{link['linkId']}", headers=office_a.headers)
    assert r.status_code == 200
    assert r.json()["partner"] == PARTNER
    assert (await client.get(f"/people/{contact.id}", headers=office_a.headers)).json() == before
    after = (await client.get(_base(contact.id), headers=office_a.headers)).json()
    assert after == {**link, "linked": False}
    assert uploaded.read_bytes() == b"%PDF-1.4 contract"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", _base(MISSING)),
        ("GET", _base(MISSING)),
        ("DELETE", f"{_base(MISSING)}/{MISSING}"),
    ],
)
async def test_link_routes_without_key_are_401(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    r = await client.request(method, path, json={"partner": PARTNER})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"
