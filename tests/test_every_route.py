"""Properties every route of the API holds, checked over the whole OpenAPI document."""

from __future__ import annotations

import re
from typing import Any

import httpx
from fastapi import FastAPI

from officehub.console.router import router as console_router
from officehub.events.router import router as events_router
from officehub.health import router as health_router
from officehub.kit.auth import is_keyless
from officehub.kit.indexed_router import Router, first_segment
from officehub.mounted_routers import domain_routers
from tests.helpers import error_of

# Far fewer operations than the API has (over 160): a broken document or mounting.
MIN_OPERATIONS = 120


async def _operations(client: httpx.AsyncClient) -> list[tuple[str, str, dict[str, Any]]]:
    """Every operation of the OpenAPI document; never an empty or truncated list (a test
    over no route would pass whatever the routes do)."""
    doc = (await client.get("/openapi.json")).json()
    found = [
        (method.upper(), path, operation)
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
    ]
    assert len(found) > MIN_OPERATIONS, len(found)
    return found


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "cxxxxxxxxxxxxxxxx", path)


async def test_every_route_without_a_key_is_401(client: httpx.AsyncClient) -> None:
    operations = [(m, p) for m, p, _ in await _operations(client) if not is_keyless(p)]
    assert len(operations) > 80
    for method, path in operations:
        r = await client.request(method, _concrete(path), json={})
        assert r.status_code == 401, (method, path, r.status_code)
        assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_every_route_with_an_unknown_key_is_401(client: httpx.AsyncClient) -> None:
    headers = {"x-service-api-key": "ohk_unknown"}
    for method, path, _ in await _operations(client):
        if not is_keyless(path):
            r = await client.request(method, _concrete(path), json={}, headers=headers)
            assert r.status_code == 401, (method, path, r.status_code)


async def test_every_route_declares_its_key_and_errors(client: httpx.AsyncClient) -> None:
    for method, path, operation in await _operations(client):
        assert "422" not in operation["responses"], (method, path)
        if not is_keyless(path):
            assert {"400", "401", "500"} <= set(operation["responses"]), (method, path)
            assert operation["security"], (method, path)


async def test_every_keyless_route_is_found_through_the_routers_index(
    client: httpx.AsyncClient,
) -> None:
    """The keyed routes are found (401, not 404) by the tests above; the keyless ones
    (health, inbound webhooks, web chat) answer anything but the unmatched route's 404."""
    operations = [(m, p) for m, p, _ in await _operations(client) if is_keyless(p)]
    assert len(operations) >= 5
    for method, path in operations:
        r = await client.request(method, _concrete(path), json={})
        unmatched = r.status_code == 404 and error_of(r).get("message") == "Route not found"
        assert not unmatched, (method, path)


async def test_a_router_turns_away_a_path_none_of_its_routes_starts_with() -> None:
    router = Router()

    @router.get("/tag/{id}")
    async def read(id: str) -> dict[str, str]:
        return {"tag": id}

    @router.get("/tags")
    async def listing() -> list[str]:
        return []

    assert router.first_segments() == frozenset({"tag", "tags"})
    other = Router()

    @other.get("/{anything}/x")
    async def any_first(anything: str) -> dict[str, str]:
        return {"anything": anything}

    assert other.first_segments() is None  # any first segment may match: every route is asked
    app = FastAPI()
    app.include_router(router)
    app.include_router(other)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        assert (await c.get("/tag/c1")).json() == {"tag": "c1"}
        assert (await c.get("/tags")).json() == []
        assert (await c.get("/people")).status_code == 404
        assert (await c.get("/zzz/x")).json() == {"anything": "zzz"}  # the other router


def test_every_router_of_the_app_would_be_asked_for_each_of_its_routes() -> None:
    routers = [*domain_routers(), health_router, events_router, console_router]
    assert sum(len(router.routes) for router in routers) > MIN_OPERATIONS
    for router in routers:
        assert isinstance(router, Router)
        heads = router.first_segments()
        for route in router.routes:
            path = getattr(route, "path", "")
            assert heads is None or first_segment(_concrete(path)) in heads, path
