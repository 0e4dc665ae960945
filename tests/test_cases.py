"""Cases: the unified number (format, check digits, court routing) and the /cases routes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.numbers import (
    CaseNumberError,
    CourtNotSupported,
    aliases,
    check_digits,
    court_of,
    parse,
)
from tests import factories as f
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server

# Real numbers of public cases, check digits as the courts issued them.
TJSP = "1009131-52.2024.8.26.0224"
TJSP_DIGITS = "10091315220248260224"
TRF4 = "5046420-77.2020.4.04.7000"


def number(segment: str, court: str, sequence: str = "0012345", year: str = "2025") -> str:
    origin = "0001"
    dd = check_digits(sequence, year, segment, court, origin)
    return f"{sequence}-{dd}.{year}.{segment}.{court}.{origin}"


async def _case(
    client: httpx.AsyncClient, office: OfficeFixture, person_id: str, **fields: Any
) -> dict[str, Any]:
    r = await client.post(
        "/cases", json={"number": TJSP, "personId": person_id, **fields}, headers=office.headers
    )
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def test_check_digits_of_real_numbers_hold_in_either_format() -> None:
    assert parse(TJSP).digits == TJSP_DIGITS
    assert parse(TJSP_DIGITS).formatted == TJSP
    assert parse(TRF4).formatted == TRF4
    assert check_digits("1009131", "2024", "8", "26", "0224") == "52"


@pytest.mark.parametrize(
    "raw",
    [
        "1009131-53.2024.8.26.0224",  # check digits off by one
        "10091315320248260224",
        "1009131-52.2024.8.26.0225",  # a digit of the origin mistyped
        "1009132-52.2024.8.26.0224",  # a digit of the sequence mistyped
    ],
)
def test_bad_check_digits_are_refused(raw: str) -> None:
    with pytest.raises(CaseNumberError, match="check digits"):
        parse(raw)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "123",
        "1009131-52.2024.8.26.022",
        "1009131.52.2024.8.26.0224",
        "ABCDEFGHIJKLMNOPQRST",
        "\uff11\uff10\uff10\uff19\uff11\uff13\uff11\uff15\uff12\uff12"
        "\uff10\uff12\uff14\uff18\uff12\uff16\uff10\uff12\uff12\uff14",  # fullwidth
    ],
)
def test_malformed_numbers_are_refused(raw: str) -> None:
    with pytest.raises(CaseNumberError, match="not a unified case number"):
        parse(raw)


@pytest.mark.parametrize(
    ("segment", "court", "alias"),
    [
        ("3", "00", "stj"),
        ("4", "01", "trf1"),
        ("4", "04", "trf4"),
        ("4", "06", "trf6"),
        ("5", "00", "tst"),
        ("5", "02", "trt2"),
        ("5", "24", "trt24"),
        ("6", "00", "tse"),
        ("6", "26", "tre-sp"),
        ("6", "07", "tre-dft"),
        ("7", "00", "stm"),
        ("7", "03", "stm"),
        ("8", "26", "tjsp"),
        ("8", "19", "tjrj"),
        ("8", "07", "tjdft"),
        ("8", "01", "tjac"),
        ("8", "27", "tjto"),
        ("9", "13", "tjmmg"),
        ("9", "21", "tjmrs"),
        ("9", "26", "tjmsp"),
    ],
)
def test_court_routing_for_each_segment(segment: str, court: str, alias: str) -> None:
    assert court_of(parse(number(segment, court))).alias == alias


def test_the_table_covers_every_court_datajud_publishes() -> None:
    found = aliases()
    assert {f"trt{i}" for i in range(1, 25)} <= found
    assert {f"trf{i}" for i in range(1, 7)} <= found
    military = {"tjmmg", "tjmrs", "tjmsp"}
    assert len({a for a in found if a.startswith("tj")} - military) == 27
    assert len({a for a in found if a.startswith("tre-")}) == 27
    assert {"stj", "tst", "tse", "stm", "tjmmg", "tjmrs", "tjmsp"} <= found


@pytest.mark.parametrize(("segment", "court"), [("1", "00"), ("2", "00")])
def test_courts_datajud_does_not_publish_are_unsupported(segment: str, court: str) -> None:
    with pytest.raises(CourtNotSupported):
        court_of(parse(number(segment, court)))


@pytest.mark.parametrize(("segment", "court"), [("4", "07"), ("8", "28"), ("9", "01"), ("3", "01")])
def test_a_court_code_its_segment_lacks_is_refused(segment: str, court: str) -> None:
    with pytest.raises(CaseNumberError, match="does not exist"):
        court_of(parse(number(segment, court)))


async def test_create_a_case_in_either_format(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w: World = await make_world(session, office_a.id)
    area = await f.make_legal_area(session, office_a.id)
    await session.commit()
    h = office_a.headers
    created = await _case(
        client,
        office_a,
        w.contact.id,
        number=TJSP_DIGITS,
        conversationId=w.conversation.id,
        legalAreaId=area.id,
    )
    assert created["number"] == TJSP and created["court"] == "tjsp"
    assert created["courtName"] == "Tribunal de Justiça - São Paulo"
    assert created["watch"] is True and created["nextCheckAt"] is not None
    assert created["checkStatus"] is None and created["lastCheckedAt"] is None
    assert created["conversationId"] == w.conversation.id and created["legalAreaId"] == area.id
    r = await client.post(
        "/cases", json={"number": TRF4, "personId": w.contact.id, "watch": False}, headers=h
    )
    assert r.status_code == 201, r.text
    assert r.json()["court"] == "trf4" and r.json()["nextCheckAt"] is None
    r = await client.get(f"/cases/{created['id']}", headers=h)
    assert r.status_code == 200 and r.json() == created
    r = await client.get(f"/cases/{created['id']}/movements", headers=h)
    assert r.json() == {"data": [], "totalResults": 0, "totalPages": 0}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("1009131-53.2024.8.26.0224", "INVALID_CASE_NUMBER"),
        ("10091315320248260224", "INVALID_CASE_NUMBER"),
        ("1009131-52.2024.8.26", "INVALID_CASE_NUMBER"),
        (number("4", "09"), "INVALID_CASE_NUMBER"),
        (number("1", "00"), "COURT_NOT_SUPPORTED"),
        (number("2", "00"), "COURT_NOT_SUPPORTED"),
    ],
)
async def test_a_bad_number_is_400_naming_the_field_and_nothing_is_created(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    raw: str,
    code: str,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    h = office_a.headers
    r = await client.post("/cases", json={"number": raw, "personId": contact.id}, headers=h)
    assert r.status_code == 400, r.text
    assert error_of(r)["code"] == code and "number" in error_of(r)["details"]
    assert (await client.get("/cases", headers=h)).json()["totalResults"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"personId": "not-an-id"}, "personId"),
        ({"watch": "yes"}, "watch"),
        ({"number": 10091315220248260224}, "number"),
        ({"legalAreaId": "x"}, "legalAreaId"),
    ],
)
async def test_bad_fields_are_400_naming_the_field(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    body: dict[str, Any],
    field: str,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    payload = {"number": TJSP, "personId": contact.id, **body}
    r = await client.post("/cases", json=payload, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in error_of(r)["details"]


async def test_the_same_number_twice_is_409_even_at_once(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    body = {"number": TJSP, "personId": contact.id}
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(6, lambda i: c.post("/cases", json=body, headers=office_a.headers))
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [201, 409, 409, 409, 409, 409], [a.text for a in answers]
        assert {error_of(a)["code"] for a in answers if a.status_code == 409} == {"CASE_EXISTS"}
        r = await c.get("/cases", headers=office_a.headers)
        assert r.json()["totalResults"] == 1


async def test_list_filters(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w: World = await make_world(session, office_a.id)
    other = await f.make_contact(session, office_a.id, "João")
    area = await f.make_legal_area(session, office_a.id)
    await session.commit()
    h = office_a.headers
    first = await _case(
        client, office_a, w.contact.id, conversationId=w.conversation.id, legalAreaId=area.id
    )
    second = await _case(client, office_a, other.id, number=TRF4, watch=False)

    async def ids(**params: Any) -> list[str]:
        r = await client.get("/cases", params=params, headers=h)
        assert r.status_code == 200, r.text
        return [c["id"] for c in r.json()["data"]]

    assert await ids() == [second["id"], first["id"]]
    assert await ids(personId=w.contact.id) == [first["id"]]
    assert await ids(conversationId=w.conversation.id) == [first["id"]]
    assert await ids(legalAreaId=area.id) == [first["id"]]
    assert await ids(watch="false") == [second["id"]]
    assert await ids(court="trf4") == [second["id"]]
    assert await ids(court="tjsp", watch="true") == [first["id"]]
    r = await client.get("/cases", params={"court": "TJ SP"}, headers=h)
    assert r.status_code == 400 and "court" in error_of(r)["details"]


async def test_patch_changes_watch_links_and_emits_case_updated(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w: World = await make_world(session, office_a.id)
    stranger = await f.make_contact(session, office_a.id, "Outro")
    foreign = await f.make_conversation(session, office_a.id, stranger.id, w.integration)
    await session.commit()
    h = office_a.headers
    case = await _case(client, office_a, w.contact.id)
    path = f"/cases/{case['id']}"
    r = await client.patch(path, json={"watch": False}, headers=h)
    assert r.status_code == 200 and r.json()["watch"] is False and r.json()["nextCheckAt"] is None
    r = await client.patch(path, json={"conversationId": w.conversation.id}, headers=h)
    assert r.json()["conversationId"] == w.conversation.id and r.json()["watch"] is False
    r = await client.patch(path, json={"conversationId": None, "watch": True}, headers=h)
    assert r.json()["conversationId"] is None and r.json()["nextCheckAt"] is not None
    r = await client.patch(path, json={"conversationId": foreign.id}, headers=h)
    assert r.status_code == 400 and "conversationId" in error_of(r)["details"]
    r = await client.patch(path, json={"watch": None}, headers=h)
    assert r.status_code == 200 and r.json()["watch"] is True
    events = await outbox(app, office_a.id, "case.updated")
    assert [e.data["changes"] for e in events] == [
        ["watch"],
        ["conversationId"],
        ["conversationId", "watch"],
    ]


async def test_delete_removes_the_case(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    h = office_a.headers
    case = await _case(client, office_a, contact.id)
    r = await client.delete(f"/cases/{case['id']}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == case["id"]
    assert (await client.get(f"/cases/{case['id']}", headers=h)).status_code == 404
    assert (await client.get(f"/cases/{case['id']}/movements", headers=h)).status_code == 404


async def test_another_offices_case_is_404_and_no_key_is_401(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    case = await _case(client, office_a, contact.id)
    b = office_b.headers
    path = f"/cases/{case['id']}"
    for method, url, body in [
        ("GET", path, None),
        ("PATCH", path, {"watch": False}),
        ("DELETE", path, None),
        ("GET", f"{path}/movements", None),
        ("POST", "/cases", {"number": TRF4, "personId": contact.id}),
    ]:
        r = await client.request(method, url, json=body, headers=b)
        assert r.status_code == 404, (method, url, r.text)
        assert error_of(r)["code"] == "NOT_FOUND"
    r = await client.get("/cases", params={"personId": contact.id}, headers=b)
    assert r.status_code == 404
    assert (await client.get(path, headers=office_a.headers)).json()["watch"] is True
    for method, url in [("GET", "/cases"), ("POST", "/cases"), ("GET", path)]:
        assert (await client.request(method, url)).status_code == 401
        bad = {"x-service-api-key": "ohk_wrong"}
        assert (await client.request(method, url, headers=bad)).status_code == 401
    r = await client.get("/cases/not-an-id", headers=office_a.headers)
    assert r.status_code == 400 and "id" in error_of(r)["details"]
