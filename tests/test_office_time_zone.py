"""The office's time zone (issue 30): ``timeZone`` in ``GET|PATCH /office``, and the dates the
service shows an office's people and clients in it (decisions: "Retention and the system
actor", "The office's time zone")."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.flows.movements import Movement, describe
from officehub.kit.timeutil import utcnow
from officehub.offices.settings import office_zone
from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of

NORONHA, RIO_BRANCO = "America/Noronha", "America/Rio_Branco"  # UTC-2 and UTC-5


async def set_zone(client: httpx.AsyncClient, office: OfficeFixture, zone: str | None) -> None:
    r = await client.patch("/office", json={"timeZone": zone}, headers=office.headers)
    assert r.status_code == 200, r.text
    assert r.json()["timeZone"] == (zone or "America/Sao_Paulo")


async def test_the_office_time_zone_defaults_to_sao_paulo_and_is_set_and_reset(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/office", headers=office_a.headers)
    assert r.json()["timeZone"] == "America/Sao_Paulo"
    await set_zone(client, office_a, "America/Manaus")
    assert (await client.get("/office", headers=office_a.headers)).json()["timeZone"] == (
        "America/Manaus"
    )
    await set_zone(client, office_a, None)


@pytest.mark.parametrize("zone", ["Mars/Olympus", "america/sao_paulo", "", "../etc/passwd", 3])
async def test_a_time_zone_not_iana_is_400_naming_the_field_and_changes_nothing(
    client: httpx.AsyncClient, office_a: OfficeFixture, zone: Any
) -> None:
    r = await client.patch("/office", json={"timeZone": zone}, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert "timeZone" in error_of(r)["details"]
    after = (await client.get("/office", headers=office_a.headers)).json()
    assert after["timeZone"] == "America/Sao_Paulo" and after["updatedAt"] is None


async def test_two_offices_with_different_zones_see_their_own(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    await set_zone(client, office_a, NORONHA)
    await set_zone(client, office_b, RIO_BRANCO)
    for office, zone in ((office_a, NORONHA), (office_b, RIO_BRANCO)):
        # Case notices: quiet hours and dates default to the office's zone.
        r = await client.get("/case-notice-settings", headers=office.headers)
        assert r.status_code == 200, r.text
        assert r.json()["timeZone"] == zone
        # The client export's README says its time in the office's zone.
        contact = await f.make_contact(session, office.id, name="Cliente", phone=None)
        await session.commit()
        r = await client.get(f"/people/{contact.id}/export", headers=office.headers)
        assert r.status_code == 200, r.text
        readme = zipfile.ZipFile(io.BytesIO(r.content)).read("README.txt").decode()
        assert f"(fuso horário {zone})" in readme
        # The console page of a user signed in to the office carries its zone.
        async with signed_in(app, office, "ADMIN") as user:
            page = await user.client.get("/console")
            assert f'<meta name="officehub-time-zone" content="{zone}">' in page.text
    # Messages to clients with dates: a movement at 03:30 UTC on the 3rd is the 3rd in
    # Noronha and still the 2nd in Rio Branco.
    at = utcnow().replace(year=2026, month=3, day=3, hour=3, minute=30, second=0, microsecond=0)
    found = [Movement("0001234-56.2024", "Audiência marcada", at)]
    noronha = describe(found, await office_zone(session, office_a.id))
    rio_branco = describe(found, await office_zone(session, office_b.id))
    assert "03/03/2026 - 0001234-56.2024" in noronha  # 01:30 on the 3rd
    assert "02/03/2026 - 0001234-56.2024" in rio_branco  # 22:30 on the 2nd


async def test_a_case_notice_zone_not_sent_is_the_offices(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await set_zone(client, office_a, NORONHA)
    current = (await client.get("/case-notice-settings", headers=office_a.headers)).json()
    body = {k: v for k, v in current.items() if k not in ("updatedAt", "timeZone")}
    r = await client.put("/case-notice-settings", json=body, headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert r.json()["timeZone"] == NORONHA
    r = await client.put(
        "/case-notice-settings", json={**body, "timeZone": RIO_BRANCO}, headers=office_a.headers
    )
    assert r.json()["timeZone"] == RIO_BRANCO
