"""Properties every route of the API holds, checked over the whole OpenAPI document."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.helpers import error_of

PUBLIC = {
    "/healthz",
    "/readyz",
    "/metrics",
    "/media/{key}",
    "/channels/whatsapp/{integrationId}/webhook",
}


async def _operations(client: httpx.AsyncClient) -> list[tuple[str, str, dict[str, Any]]]:
    doc = (await client.get("/openapi.json")).json()
    return [
        (method.upper(), path, operation)
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
    ]


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "cxxxxxxxxxxxxxxxx", path)


async def test_every_route_without_a_key_is_401(client: httpx.AsyncClient) -> None:
    operations = [(m, p) for m, p, _ in await _operations(client) if p not in PUBLIC]
    assert len(operations) > 80
    for method, path in operations:
        r = await client.request(method, _concrete(path), json={})
        assert r.status_code == 401, (method, path, r.status_code)
        assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_every_route_with_an_unknown_key_is_401(client: httpx.AsyncClient) -> None:
    headers = {"x-service-api-key": "ohk_unknown"}
    for method, path, _ in await _operations(client):
        if path not in PUBLIC:
            r = await client.request(method, _concrete(path), json={}, headers=headers)
            assert r.status_code == 401, (method, path, r.status_code)


async def test_every_route_declares_its_key_and_errors(client: httpx.AsyncClient) -> None:
    for method, path, operation in await _operations(client):
        assert "422" not in operation["responses"], (method, path)
        if path not in PUBLIC:
            assert {"400", "401", "500"} <= set(operation["responses"]), (method, path)
            assert operation["security"], (method, path)
