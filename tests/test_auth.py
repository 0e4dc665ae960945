"""API keys resolve to an office; missing, unknown or revoked keys answer 401."""

from __future__ import annotations

import asyncio

import httpx
from fastapi import FastAPI

from officehub.offices import service as offices
from tests.helpers import OfficeFixture, error_of


async def test_missing_key_is_401(client: httpx.AsyncClient) -> None:
    r = await client.get("/webhooks/events")
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_unknown_key_is_401(client: httpx.AsyncClient) -> None:
    r = await client.get("/webhooks/events", headers={"x-service-api-key": "ohk_nope"})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_revoked_key_is_401_within_a_second(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A process trusts a key it resolved for ``key_cache_seconds`` (1 s) at most."""
    assert (await client.get("/webhooks/events", headers=office_a.headers)).status_code == 200
    async with app.state.sessionmaker() as s:
        await offices.revoke_api_key(s, office_a.key_id)
        await s.commit()
    await asyncio.sleep(app.state.settings.key_cache_seconds)
    r = await client.get("/webhooks/events", headers=office_a.headers)
    assert r.status_code == 401


async def test_key_is_stored_only_as_a_hash(app: FastAPI, office_a: OfficeFixture) -> None:
    async with app.state.sessionmaker() as s:
        keys = await offices.list_api_keys(s, office_a.id)
    assert len(keys) == 1
    assert keys[0].key_hash == offices.hash_key(office_a.key)
    assert office_a.key not in {keys[0].key_hash, keys[0].prefix}
