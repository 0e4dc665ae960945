"""A lawyer linked to the office's user who is the lawyer (issue 31): ``userId`` on
``POST /lawyers`` and ``PATCH /lawyers/{id}``; the tickets of the lawyer's publications are
assigned to that user (an inactive one: to nobody). Bad input, another office's records,
no key."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.publications.sync import Syncer
from officehub.users.models import User
from tests import factories as f
from tests.djen_standin import communication, documented_answer, running_djen
from tests.helpers import OfficeFixture, error_of
from tests.test_djen_sync import ctx_for, no_sleep, publications

LAWYER = {"name": "Dra. Ana Lima", "oab": {"number": "123456", "uf": "SP"}}


async def _user(session: AsyncSession, office: OfficeFixture, name: str = "Ana Lima") -> str:
    user = await f.make_user(session, office.id, name)
    await session.commit()
    return user.id


async def _lawyers(client: httpx.AsyncClient, office: OfficeFixture) -> list[dict[str, Any]]:
    r = await client.get("/lawyers", headers=office.headers)
    assert r.status_code == 200, r.text
    data: list[dict[str, Any]] = r.json()["data"]
    return data


async def test_a_lawyer_is_linked_to_a_user_of_the_office(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    ana, bruno = await _user(session, office_a), await _user(session, office_a, "Bruno Reis")
    r = await client.post("/lawyers", json={**LAWYER, "userId": ana}, headers=h)
    assert r.status_code == 201, r.text
    lawyer = r.json()
    assert lawyer["userId"] == ana
    assert [x["userId"] for x in await _lawyers(client, office_a)] == [ana]
    # linked to another user; renamed keeping the link; unlinked with null
    r = await client.patch(f"/lawyers/{lawyer['id']}", json={"userId": bruno}, headers=h)
    assert (r.status_code, r.json()["userId"]) == (200, bruno), r.text
    r = await client.patch(f"/lawyers/{lawyer['id']}", json={"name": "Dra. Ana L."}, headers=h)
    assert (r.json()["name"], r.json()["userId"], r.json()["oab"]) == (
        "Dra. Ana L.",
        bruno,
        LAWYER["oab"],
    )
    r = await client.patch(f"/lawyers/{lawyer['id']}", json={"userId": None}, headers=h)
    assert (r.status_code, r.json()["userId"]) == (200, None)
    assert [x["userId"] for x in await _lawyers(client, office_a)] == [None]
    # a lawyer registered without a user has none
    other = {"name": "Dr. Caio", "oab": {"number": "1", "uf": "RJ"}}
    r = await client.post("/lawyers", json=other, headers=h)
    assert (r.status_code, r.json()["userId"]) == (201, None)


async def test_a_publications_ticket_is_assigned_to_the_lawyers_user(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    ana = await _user(session, office_a)
    r = await client.post("/lawyers", json={**LAWYER, "userId": ana}, headers=office_a.headers)
    assert r.status_code == 201, r.text
    async with running_djen() as djen:
        djen.add(*documented_answer()["items"])
        await Syncer(sleep=no_sleep).run(
            ctx_for(app, djen.settings(settings)), only_office=office_a.id
        )
    [publication] = await publications(client, office_a)
    r = await client.get(f"/ticket/{publication['ticketId']}", headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert r.json()["assigneeIds"] == [ana]
    r = await client.get("/ticket", params={"assigneeId": ana}, headers=office_a.headers)
    assert [t["id"] for t in r.json()["data"]] == [publication["ticketId"]]


async def test_a_lawyer_without_a_user_or_with_an_inactive_one_gets_an_unassigned_ticket(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    h = office_a.headers
    gone = await _user(session, office_a, "Gil Souza")
    unlinked = {"name": "Dr. Bruno Reis", "oab": {"number": "654321", "uf": "SP"}}
    assert (await client.post("/lawyers", json=unlinked, headers=h)).status_code == 201
    r = await client.post("/lawyers", json={**LAWYER, "userId": gone}, headers=h)
    assert r.status_code == 201, r.text
    user = await session.get_one(User, gone)
    user.is_active = False
    await session.commit()
    async with running_djen() as djen:
        djen.add(*documented_answer()["items"])
        djen.add(communication(7, "2026-03-27", oab=("654321", "SP")))
        await Syncer(sleep=no_sleep).run(
            ctx_for(app, djen.settings(settings)), only_office=office_a.id
        )
    found = await publications(client, office_a)
    assert len(found) == 2
    for publication in found:
        r = await client.get(f"/ticket/{publication['ticketId']}", headers=h)
        assert r.json()["assigneeIds"] == [], publication


async def test_lawyer_user_link_refuses_bad_input_naming_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    ana = await _user(session, office_a)
    r = await client.post("/lawyers", json={**LAWYER, "userId": ana}, headers=h)
    lawyer = r.json()
    for body, field in (
        ({**LAWYER, "oab": {"number": "2", "uf": "SP"}, "userId": "bad id"}, "body.userId"),
        ({**LAWYER, "oab": {"number": "2", "uf": "SP"}, "userId": 7}, "body.userId"),
    ):
        r = await client.post("/lawyers", json=body, headers=h)
        assert r.status_code == 400 and field in error_of(r)["details"], (body, r.text)
    patches: list[tuple[dict[str, Any], str]] = [
        ({"userId": "bad id"}, "body.userId"),
        ({"userId": ["x"]}, "body.userId"),
        ({"name": "  "}, "body.name"),
        ({"name": "A" * 201}, "body.name"),
    ]
    for body, field in patches:
        r = await client.patch(f"/lawyers/{lawyer['id']}", json=body, headers=h)
        assert r.status_code == 400 and field in error_of(r)["details"], (body, r.text)
    assert (await client.patch("/lawyers/bad id", json={}, headers=h)).status_code == 400
    # an unknown user is 404 naming it, and nothing changes
    missing = "cmissinguser00000000000000"
    r = await client.patch(f"/lawyers/{lawyer['id']}", json={"userId": missing}, headers=h)
    assert r.status_code == 404 and missing in error_of(r)["details"], r.text
    [stored] = await _lawyers(client, office_a)
    assert (stored["name"], stored["userId"]) == (LAWYER["name"], ana)


async def test_another_offices_lawyer_or_user_is_404_and_no_key_is_401(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    a, b = office_a.headers, office_b.headers
    ana = await _user(session, office_a)
    bia = await _user(session, office_b, "Bia Costa")
    lawyer = (await client.post("/lawyers", json={**LAWYER, "userId": ana}, headers=a)).json()
    # B cannot register a lawyer with A's user, nor change A's lawyer
    r = await client.post("/lawyers", json={**LAWYER, "userId": ana}, headers=b)
    assert r.status_code == 404 and ana in error_of(r)["details"], r.text
    assert await _lawyers(client, office_b) == []
    r = await client.patch(f"/lawyers/{lawyer['id']}", json={"userId": bia}, headers=b)
    assert r.status_code == 404, r.text
    # A cannot link its lawyer to B's user
    r = await client.patch(f"/lawyers/{lawyer['id']}", json={"userId": bia}, headers=a)
    assert r.status_code == 404 and bia in error_of(r)["details"], r.text
    [stored] = await _lawyers(client, office_a)
    assert (stored["name"], stored["userId"]) == (LAWYER["name"], ana)
    # no key, a bad key
    path = f"/lawyers/{lawyer['id']}"
    assert (await client.patch(path, json={"userId": None})).status_code == 401
    bad = {"x-service-api-key": "ohk_" + "x" * 43}
    assert (await client.patch(path, json={"userId": None}, headers=bad)).status_code == 401
    assert (await client.post("/lawyers", json=LAWYER, headers=bad)).status_code == 401
    [stored] = await _lawyers(client, office_a)
    assert stored["userId"] == ana
