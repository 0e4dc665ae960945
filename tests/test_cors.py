"""CORS is closed by default: no browser origin may read the API's answers."""

from __future__ import annotations

import httpx

from tests.helpers import OfficeFixture


async def test_cors_is_closed_by_default(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    origin = {"origin": "https://evil.example"}
    preflight = await client.options(
        "/people",
        headers={**origin, "access-control-request-method": "GET"},
    )
    assert "access-control-allow-origin" not in preflight.headers
    answer = await client.get("/people", headers={**office_a.headers, **origin})
    assert answer.status_code == 200
    assert not [h for h in answer.headers if h.startswith("access-control-")]
