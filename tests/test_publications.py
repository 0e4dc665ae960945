"""The office's data for its court publications: lawyers by OAB registration and the
courts' local holidays (routes: success, bad input, another office, no key, duplicates,
duplicates at once)."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
from fastapi import FastAPI

from officehub.publications import service
from tests.helpers import OfficeFixture, error_of
from tests.server import concurrent_client, fire, running_server

LAWYER = {"name": "Dra. Ana Lima", "oab": {"number": "123456", "uf": "SP"}}
HOLIDAY = {"date": "2026-01-25", "name": "Aniversário de São Paulo"}


async def test_lawyers_are_registered_listed_and_deleted(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    r = await client.post("/lawyers", json=LAWYER, headers=h)
    assert r.status_code == 201, r.text
    lawyer = r.json()
    assert (lawyer["name"], lawyer["oab"]) == (LAWYER["name"], LAWYER["oab"])
    other = {"name": "Dr. Bruno", "oab": {"number": "123456", "uf": "RJ"}}
    assert (await client.post("/lawyers", json=other, headers=h)).status_code == 201
    r = await client.get("/lawyers", headers=h)
    assert r.json()["totalResults"] == 2
    assert [x["name"] for x in r.json()["data"]] == ["Dr. Bruno", "Dra. Ana Lima"]
    r = await client.delete(f"/lawyers/{lawyer['id']}", headers=h)
    assert (r.status_code, r.json()["id"]) == (200, lawyer["id"])
    assert (await client.delete(f"/lawyers/{lawyer['id']}", headers=h)).status_code == 404
    assert (await client.get("/lawyers", headers=h)).json()["totalResults"] == 1


async def test_a_lawyer_is_registered_once_per_oab(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    assert (await client.post("/lawyers", json=LAWYER, headers=office_a.headers)).is_success
    r = await client.post("/lawyers", json=LAWYER, headers=office_a.headers)
    assert (r.status_code, error_of(r)["code"]) == (409, "LAWYER_EXISTS")
    # another office may follow the same lawyer
    assert (await client.post("/lawyers", json=LAWYER, headers=office_b.headers)).is_success


async def test_the_same_lawyer_registered_at_once_is_stored_once(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(4, lambda i: c.post("/lawyers", json=LAWYER, headers=office_a.headers))
    assert sorted(a.status_code for a in answers) == [201, 409, 409, 409]
    assert {error_of(a)["code"] for a in answers if a.status_code == 409} == {"LAWYER_EXISTS"}
    assert (await client.get("/lawyers", headers=office_a.headers)).json()["totalResults"] == 1


async def test_lawyer_routes_refuse_bad_input_naming_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    bad: list[tuple[dict[str, Any], str]] = [
        ({**LAWYER, "name": "  "}, "body.name"),
        ({"oab": LAWYER["oab"]}, "body.name"),
        ({**LAWYER, "oab": {"number": "12a", "uf": "SP"}}, "body.oab.number"),
        ({**LAWYER, "oab": {"number": "12345678", "uf": "SP"}}, "body.oab.number"),
        ({**LAWYER, "oab": {"number": "123", "uf": "XX"}}, "body.oab.uf"),
        ({"name": "A"}, "body.oab"),
    ]
    for body, field in bad:
        r = await client.post("/lawyers", json=body, headers=office_a.headers)
        assert r.status_code == 400 and field in error_of(r)["details"], (body, r.text)
    r = await client.delete("/lawyers/bad id", headers=office_a.headers)
    assert r.status_code == 400
    assert (await client.get("/lawyers", headers=office_a.headers)).json()["totalResults"] == 0


async def test_court_holidays_are_registered_once_per_day_listed_and_deleted(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    r = await client.post("/court-holidays", json=HOLIDAY, headers=h)
    assert r.status_code == 201, r.text
    holiday = r.json()
    assert (holiday["date"], holiday["name"]) == (HOLIDAY["date"], HOLIDAY["name"])
    r = await client.post("/court-holidays", json=HOLIDAY, headers=h)
    assert (r.status_code, error_of(r)["code"]) == (409, "COURT_HOLIDAY_EXISTS")
    earlier = {"date": "2026-01-20", "name": "São Sebastião"}
    assert (await client.post("/court-holidays", json=earlier, headers=h)).status_code == 201
    r = await client.get("/court-holidays", headers=h)
    assert [x["date"] for x in r.json()["data"]] == ["2026-01-20", "2026-01-25"]
    assert (await client.delete(f"/court-holidays/{holiday['id']}", headers=h)).status_code == 200
    assert (await client.get("/court-holidays", headers=h)).json()["totalResults"] == 1


async def test_court_holiday_routes_refuse_bad_input_naming_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    for body, field in (
        ({**HOLIDAY, "date": "2026-02-30"}, "body.date"),
        ({**HOLIDAY, "date": "25/01/2026"}, "body.date"),
        ({**HOLIDAY, "date": 0}, "body.date"),  # not seconds since 1970
        ({**HOLIDAY, "date": "1767225600"}, "body.date"),
        ({"date": HOLIDAY["date"]}, "body.name"),
        ({**HOLIDAY, "name": ""}, "body.name"),
    ):
        r = await client.post("/court-holidays", json=body, headers=office_a.headers)
        assert r.status_code == 400 and field in error_of(r)["details"], (body, r.text)
    assert (await client.get("/court-holidays", headers=office_a.headers)).json()[
        "totalResults"
    ] == 0


async def test_another_offices_records_are_404_and_no_key_is_401(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    lawyer = (await client.post("/lawyers", json=LAWYER, headers=office_a.headers)).json()
    holiday = (await client.post("/court-holidays", json=HOLIDAY, headers=office_a.headers)).json()
    b = office_b.headers
    assert (await client.delete(f"/lawyers/{lawyer['id']}", headers=b)).status_code == 404
    assert (await client.delete(f"/court-holidays/{holiday['id']}", headers=b)).status_code == 404
    assert (await client.get("/lawyers", headers=b)).json()["totalResults"] == 0
    assert (await client.get("/court-holidays", headers=b)).json()["totalResults"] == 0
    for method, path in (
        ("POST", "/lawyers"),
        ("GET", "/lawyers"),
        ("DELETE", f"/lawyers/{lawyer['id']}"),
        ("POST", "/court-holidays"),
        ("GET", "/court-holidays"),
        ("DELETE", f"/court-holidays/{holiday['id']}"),
    ):
        assert (await client.request(method, path, json={})).status_code == 401, (method, path)
    assert (await client.get("/lawyers", headers=office_a.headers)).json()["totalResults"] == 1


async def test_the_offices_court_holidays_move_its_deadlines(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    # published Fri 17 Apr 2026: Mon 20 (1), Tiradentes Tue 21, Wed 22 (2); with 20 Apr a
    # court holiday of office A, its 2nd day is Thu 23; office B's stays Wed 22
    local = {"date": "2026-04-20", "name": "Feriado forense"}
    assert (await client.post("/court-holidays", json=local, headers=office_a.headers)).is_success
    async with app.state.sessionmaker() as s:
        a = await service.office_deadline(s, office_a.id, date(2026, 4, 17), 2)
        b = await service.office_deadline(s, office_b.id, date(2026, 4, 17), 2)
    assert (a, b) == (date(2026, 4, 23), date(2026, 4, 22))
