"""Values the console shows as links or colours (issue 27, item 7): a lead's ad links are
http(s) URLs only, and every colour is ``#rrggbb``; anything else is 400 naming the field
and changes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.crm.models import Card
from tests import factories as f
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of

HOSTILE_URLS = [
    "javascript:alert(document.cookie)",
    "JAVASCRIPT:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "//evil.example/ad",
    "ftp://files.example/ad",
]


@pytest.mark.parametrize("field", ["adUrl", "thumbnailUrl"])
@pytest.mark.parametrize("url", HOSTILE_URLS)
async def test_a_leads_ad_links_are_http_or_https_only(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    field: str,
    url: str,
) -> None:
    world = await make_world(session, office_a.id)
    body = {
        "columnId": world.columns[0].id,
        "personId": world.contact.id,
        "leadOrigin": {"source": "meta_ads", field: url},
    }
    r = await client.post("/funnel-column-card", json=body, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert f"body.leadOrigin.{field}" in error_of(r)["details"]
    assert await session.scalar(select(func.count()).select_from(Card)) == 0


async def test_a_leads_https_ad_links_are_kept(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    origin = {
        "adUrl": "https://www.facebook.com/ads/library/?id=1",
        "thumbnailUrl": "http://cdn.example/thumb.jpg",
    }
    body = {"columnId": world.columns[0].id, "personId": world.contact.id, "leadOrigin": origin}
    r = await client.post("/funnel-column-card", json=body, headers=office_a.headers)
    assert r.status_code == 201, r.text
    assert {k: r.json()["leadOrigin"][k] for k in origin} == origin


BAD_COLOURS = ["red", "#fff", "#12345", "#1234567", "#gggggg", "url(x)", "#000000;x"]


async def _colour_routes(
    session: AsyncSession, office: OfficeFixture
) -> list[tuple[str, dict[str, Any]]]:
    world = await make_world(session, office.id)
    inbox = await f.make_inbox(session, office.id)
    await session.commit()
    return [
        ("/tag", {"name": "t", "inboxId": inbox.id, "modules": ["crm"]}),
        ("/legal-areas", {"name": "Área"}),
        ("/ticket-statuses", {"name": "Aberto"}),
        ("/funnel-column", {"funnelId": world.funnel.id, "name": "Etapa"}),
    ]


async def test_colours_are_rrggbb_only(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    for path, body in await _colour_routes(session, office_a):
        for colour in BAD_COLOURS:
            r = await client.post(path, json={**body, "color": colour}, headers=office_a.headers)
            assert r.status_code == 400, (path, colour, r.text)
            assert "body.color" in error_of(r)["details"], (path, colour)
        ok = await client.post(path, json={**body, "color": "#1A2b3C"}, headers=office_a.headers)
        assert ok.status_code == 201, (path, ok.text)
        assert ok.json()["color"] == "#1A2b3C"
