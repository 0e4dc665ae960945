"""The office's publications (DJEN) through the API: list with its filters, read, the
lawyer's period (recounting the deadline) and read state; bad input, another office's
records, no key."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox

LAWYER = {"name": "Dra. Ana Lima", "oab": {"number": "123456", "uf": "SP"}}
OTHER = {"name": "Dr. Bruno Reis", "oab": {"number": "654321", "uf": "SP"}}


async def _world(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> dict[str, Any]:
    ana = (await client.post("/lawyers", json=LAWYER, headers=office.headers)).json()
    bruno = (await client.post("/lawyers", json=OTHER, headers=office.headers)).json()
    contact = await f.make_contact(session, office.id)
    await session.commit()
    case_body = {"number": "1009131-52.2024.8.26.0224", "personId": contact.id}
    case = (await client.post("/cases", json=case_body, headers=office.headers)).json()
    first = await f.make_publication(session, office.id, lawyer_id=ana["id"], case_id=case["id"])
    second = await f.make_publication(
        session, office.id, lawyer_id=bruno["id"], made_available=date(2026, 3, 20)
    )
    third = await f.make_publication(
        session, office.id, lawyer_id=ana["id"], made_available=date(2026, 3, 10)
    )
    await session.commit()
    return {
        "ana": ana["id"],
        "bruno": bruno["id"],
        "case": case["id"],
        "first": first.id,
        "second": second.id,
        "third": third.id,
    }


async def _ids(client: httpx.AsyncClient, office: OfficeFixture, **params: Any) -> list[str]:
    r = await client.get("/publications", params=params, headers=office.headers)
    assert r.status_code == 200, r.text
    return [p["id"] for p in r.json()["data"]]


async def test_publications_are_listed_newest_first_with_their_filters(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(client, session, office_a)
    assert await _ids(client, office_a) == [w["first"], w["second"], w["third"]]
    assert await _ids(client, office_a, lawyerId=w["ana"]) == [w["first"], w["third"]]
    assert await _ids(client, office_a, caseId=w["case"]) == [w["first"]]
    assert await _ids(client, office_a, **{"from": "2026-03-11"}) == [w["first"], w["second"]]
    assert await _ids(client, office_a, to="2026-03-20") == [w["second"], w["third"]]
    r = await client.get("/publications", params={"limit": 2}, headers=office_a.headers)
    assert (r.json()["totalResults"], r.json()["totalPages"], len(r.json()["data"])) == (3, 2, 2)
    # unread: the filter follows the read state
    r = await client.patch(
        f"/publications/{w['second']}", json={"read": True}, headers=office_a.headers
    )
    assert r.status_code == 200 and r.json()["read"] is True and r.json()["readAt"]
    assert await _ids(client, office_a, unread="true") == [w["first"], w["third"]]
    assert await _ids(client, office_a, unread="false") == [w["second"]]


async def test_a_publication_is_read_by_id(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(client, session, office_a)
    r = await client.get(f"/publications/{w['first']}", headers=office_a.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["caseId"], body["lawyerId"], body["caseNumber"]) == (
        w["case"],
        w["ana"],
        "1009131-52.2024.8.26.0224",
    )
    assert (body["deadlineOn"], body["deadlineDays"], body["read"]) == ("2026-04-07", 5, False)


async def test_the_period_the_lawyer_chooses_recounts_the_deadline(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(client, session, office_a)
    h, path = office_a.headers, f"/publications/{w['first']}"
    # published Mon 30 Mar 2026: 15 business days skip Good Friday (3 Apr) and Tiradentes
    # (Tue 21 Apr): 31,1,2,6,7,8,9,10,13,14,15,16,17,20,22 -> Wed 22 Apr
    r = await client.patch(path, json={"deadlineDays": 15}, headers=h)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["deadlineDays"], body["deadlineDaysSource"]) == (15, "LAWYER")
    assert (body["deadlineOn"], body["deadlineCalendar"]) == ("2026-04-22", "CPC_BUSINESS_DAYS")
    # a court holiday of the office counts when the period is recounted
    holiday = {"date": "2026-04-06", "name": "Feriado forense"}
    assert (await client.post("/court-holidays", json=holiday, headers=h)).is_success
    r = await client.patch(path, json={"deadlineDays": 15}, headers=h)
    assert r.json()["deadlineOn"] == "2026-04-23"
    # null removes the deadline; read and unread again
    r = await client.patch(path, json={"deadlineDays": None, "read": True}, headers=h)
    assert (r.json()["deadlineAt"], r.json()["deadlineDays"], r.json()["read"]) == (
        None,
        None,
        True,
    )
    r = await client.patch(path, json={"read": False}, headers=h)
    assert (r.json()["read"], r.json()["readAt"]) == (False, None)
    assert (await client.get(path, headers=h)).json()["read"] is False


async def test_publication_routes_refuse_bad_input_naming_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(client, session, office_a)
    h, path = office_a.headers, f"/publications/{w['first']}"
    for body, field in (
        ({"deadlineDays": 0}, "body.deadlineDays"),
        ({"deadlineDays": 366}, "body.deadlineDays"),
        ({"deadlineDays": "5"}, "body.deadlineDays"),
        ({"deadlineDays": 2.5}, "body.deadlineDays"),
        ({"read": "yes"}, "body.read"),
        ({"read": 1}, "body.read"),
    ):
        r = await client.patch(path, json=body, headers=h)
        assert r.status_code == 400 and field in error_of(r)["details"], (body, r.text)
    for params, field in (
        ({"from": "30/03/2026"}, "query.from"),
        ({"from": "0"}, "query.from"),  # a number is not a date (pydantic would read 1970)
        ({"to": "1700000000"}, "query.to"),
        ({"to": "2026-02-30"}, "query.to"),
        ({"unread": "maybe"}, "query.unread"),
        ({"lawyerId": "bad id"}, "query.lawyerId"),
        ({"caseId": "x" * 200}, "query.caseId"),
    ):
        r = await client.get("/publications", params=params, headers=h)
        assert r.status_code == 400 and field in error_of(r)["details"], (params, r.text)
    assert (await client.get("/publications/bad id", headers=h)).status_code == 400
    unchanged = (await client.get(path, headers=h)).json()
    assert (unchanged["deadlineDays"], unchanged["read"]) == (5, False)


async def test_another_offices_publications_are_404_and_no_key_is_401(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    w = await _world(client, session, office_a)
    b, path = office_b.headers, f"/publications/{w['first']}"
    assert (await client.get(path, headers=b)).status_code == 404
    r = await client.patch(path, json={"deadlineDays": 30, "read": True}, headers=b)
    assert (r.status_code, error_of(r)["code"]) == (404, "NOT_FOUND")
    assert (await client.get("/publications", headers=b)).json()["totalResults"] == 0
    r = await client.get("/publications", params={"lawyerId": w["ana"]}, headers=b)
    assert r.status_code == 404
    mine = (await client.get(path, headers=office_a.headers)).json()
    assert (mine["deadlineDays"], mine["read"]) == (5, False)
    assert await outbox(app, office_b.id) == []
    for method, route in (
        ("GET", "/publications"),
        ("GET", path),
        ("PATCH", path),
    ):
        r = await client.request(method, route, json={})
        assert r.status_code == 401, (method, route)
        bad = {"Authorization": "Bearer ohk_not_a_key"}
        assert (await client.request(method, route, json={}, headers=bad)).status_code == 401
