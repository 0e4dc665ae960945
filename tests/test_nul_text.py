"""No text with a NUL character reaches the database (PostgreSQL cannot store it): 400."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.helpers import OfficeFixture, error_of

BODIES: list[tuple[str, dict[str, Any], str]] = [
    ("/inbox", {"name": "Caixa\x00"}, "body.name"),
    ("/department", {"name": "Jur\x00"}, "body.name"),
    ("/legal-areas", {"name": "Área\x00", "color": "#000000"}, "body.name"),
    ("/ticket-statuses", {"name": "Aberto\x00"}, "body.name"),
    ("/people", {"name": "Maria\x00"}, "body.name"),
    (
        "/webhooks",
        {
            "name": "hook",
            "url": "https://example.com/h",
            "events": ["contact.created"],
            "headers": {"X-Note": "a\x00b"},
        },
        "body.headers",
    ),
]


@pytest.mark.parametrize(("route", "payload", "field_name"), BODIES)
async def test_nul_in_body_text_is_400_naming_the_field(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    route: str,
    payload: dict[str, Any],
    field_name: str,
) -> None:
    r = await client.post(route, json=payload, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field_name in error_of(r)["details"]
    listed = await client.get(route, headers=office_a.headers)
    assert "\\u0000" not in listed.text


async def test_nul_in_a_query_is_400(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    r = await client.get("/people", params={"search": "a\x00"}, headers=office_a.headers)
    assert r.status_code == 400
    error_of(r)
