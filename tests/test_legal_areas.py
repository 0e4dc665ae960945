"""Legal areas: the office's own plus the read-only default areas every office sees."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.legal_areas.models import DEFAULT_LEGAL_AREAS, LegalArea
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

pytestmark = pytest.mark.anyio

DEFAULT_ID = DEFAULT_LEGAL_AREAS[0][0]
ROUTES = [
    ("GET", "/legal-areas"),
    ("POST", "/legal-areas"),
    ("GET", "/legal-areas/cxxxxxxxxxxxx"),
    ("PATCH", "/legal-areas/cxxxxxxxxxxxx"),
    ("DELETE", "/legal-areas/cxxxxxxxxxxxx"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_default_legal_areas_are_listed_for_every_office(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    own = await f.make_legal_area(session, office_a.id, "Imobiliário")
    await session.commit()
    defaults = {ident for ident, _, _ in DEFAULT_LEGAL_AREAS}

    listed_a = (await client.get("/legal-areas", headers=office_a.headers)).json()
    assert listed_a["totalResults"] == len(defaults) + 1
    ids_a = [a["id"] for a in listed_a["data"]]
    assert set(ids_a) == defaults | {own.id}
    assert all(a["officeId"] is None for a in listed_a["data"] if a["id"] in defaults)
    assert next(a for a in listed_a["data"] if a["id"] == own.id)["officeId"] == office_a.id

    listed_b = (await client.get("/legal-areas", headers=office_b.headers)).json()
    assert {a["id"] for a in listed_b["data"]} == defaults
    r = await client.get(f"/legal-areas/{DEFAULT_ID}", headers=office_b.headers)
    assert r.status_code == 200 and r.json()["officeId"] is None


async def test_default_legal_areas_cannot_be_changed_by_an_office(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    before = (await client.get(f"/legal-areas/{DEFAULT_ID}", headers=h)).json()
    r = await client.patch(f"/legal-areas/{DEFAULT_ID}", json={"name": "Mine"}, headers=h)
    assert r.status_code == 403 and error_of(r)["code"] == "DEFAULT_LEGAL_AREA"
    r = await client.delete(f"/legal-areas/{DEFAULT_ID}", headers=h)
    assert r.status_code == 403
    assert (await client.get(f"/legal-areas/{DEFAULT_ID}", headers=h)).json() == before
    stored = await session.get(LegalArea, DEFAULT_ID)
    assert stored is not None and stored.name == DEFAULT_LEGAL_AREAS[0][1]


async def test_create_read_update_delete_legal_area(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    r = await client.post("/legal-areas", json={"name": "Ambiental", "color": "#00FF00"}, headers=h)
    assert r.status_code == 201
    area = r.json()
    assert set(area) == {"id", "name", "color", "officeId", "createdAt", "updatedAt"}
    assert area["officeId"] == office_a.id
    assert (await client.get(f"/legal-areas/{area['id']}", headers=h)).json() == area
    r = await client.patch(
        f"/legal-areas/{area['id']}",
        json={"name": "Direito Ambiental", "color": "#00AA00"},
        headers=h,
    )
    assert r.status_code == 200
    assert r.json()["name"] == "Direito Ambiental" and r.json()["color"] == "#00AA00"
    r = await client.delete(f"/legal-areas/{area['id']}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == area["id"]
    assert (await client.get(f"/legal-areas/{area['id']}", headers=h)).status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/legal-areas", {"name": "", "color": "#ffffff"}, "body.name"),
        ("POST", "/legal-areas", {"name": "x"}, "body.color"),
        ("GET", "/legal-areas?limit=0", None, "query.limit"),
        ("GET", "/legal-areas/bad-id", None, "path.id"),
        ("PATCH", "/legal-areas/bad-id", {"name": "x"}, "path.id"),
        ("PATCH", f"/legal-areas/{DEFAULT_ID}", {"color": ""}, "body.color"),
        ("DELETE", "/legal-areas/bad-id", None, "path.id"),
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


async def test_another_offices_legal_area_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    area = await f.make_legal_area(session, office_b.id)
    await session.commit()
    for method, body in (("GET", None), ("PATCH", {"name": "mine"}), ("DELETE", None)):
        r = await client.request(
            method, f"/legal-areas/{area.id}", json=body, headers=office_a.headers
        )
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"
    session.expunge_all()
    stored = await session.get(LegalArea, area.id)
    assert stored is not None and stored.name == "Imobiliário"
