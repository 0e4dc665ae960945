"""What the shared request layer works out once (per route, per caller, per process) instead
of on every request answers as it did when worked out every time (docs/performance.md, "The
shared request layer in instructions")."""

from __future__ import annotations

import secrets
import time

import httpx
import pytest
from fastapi.routing import APIRoute
from prometheus_client import REGISTRY
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit import ids
from officehub.kit.actor import actor_of
from officehub.kit.auth import Actor, OfficeContext, allowed_roles, required_scope, route_rules
from officehub.mounted_routers import domain_routers
from tests import factories as f
from tests.helpers import OfficeFixture


def test_new_id_writes_its_three_parts_in_base_36(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock's milliseconds (9 characters), the counter (4) and the draw (11), each as
    ``_base36`` writes it, whatever the values (the clock's top digits cut at 9)."""
    cases = [
        (0, 0, 0),
        (1_764_000_000_123, 0, 1),
        (1_764_000_000_123, 36**4 - 2, 36**11 - 1),
        (36**9 + 5, 1295, 36**6),  # past 9 digits: the low nine kept, as before
        (123_456_789_012, 46_655, 987_654_321_012_345),
    ]
    for now_ms, counter, draw in cases:
        monkeypatch.setattr(ids, "_last_ms", now_ms + 1)  # the same millisecond: counter + 1
        monkeypatch.setattr(ids, "_counter", counter - 1 if counter else 36**4 - 1)
        monkeypatch.setattr(time, "time_ns", lambda now=now_ms: now * 1_000_000)
        monkeypatch.setattr(secrets, "randbelow", lambda bound, draw=draw: draw % bound)
        made = ids.new_id()
        counter_used, ms_used = ids._counter, ids._last_ms
        expected = (
            "c"
            + ids._base36(ms_used, 9)
            + ids._base36(counter_used, 4)
            + ids._base36(draw % ids._RANDOM, 11)
        )
        assert made == expected


def test_route_rules_are_each_routes_scope_and_roles() -> None:
    routes = [r for router in domain_routers() for r in router.routes if isinstance(r, APIRoute)]
    assert len(routes) > 100
    for route in routes:
        first = route_rules(route)
        assert first == (required_scope(route), allowed_roles(route))
        assert route_rules(route) is first  # kept on the route


def test_the_actor_carries_each_requests_address() -> None:
    key = OfficeContext("o1", "k1", frozenset({"read"}))
    caller = key.who
    assert key.who is caller  # made once per context
    assert caller == Actor("apikey", "k1", None, "o1")

    def scope(address: str) -> dict[str, object]:
        return {"state": {"actor": caller}, "client": (address, 4000)}

    here, there = actor_of(scope("10.0.0.1")), actor_of(scope("10.0.0.2"))
    assert here is not None and there is not None
    assert here.address == "10.0.0.1" and there.address == "10.0.0.2"
    assert (here.kind, here.id, here.office_id) == ("apikey", "k1", "o1")
    assert actor_of(scope("10.0.0.1")) == here
    assert actor_of({"state": {}, "client": ("10.0.0.1", 1)}) is None


async def test_every_request_is_counted_in_the_metrics(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    def counted(status: str) -> float:
        labels = {"method": "GET", "route": "/tag/{id}", "status": status}
        return REGISTRY.get_sample_value("officehub_http_requests_total", labels) or 0.0

    def timed() -> float:
        labels = {"route": "/tag/{id}"}
        return REGISTRY.get_sample_value("officehub_http_request_seconds_count", labels) or 0.0

    inbox = await f.make_inbox(session, office_a.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    await session.commit()
    before, before_404, before_timed = counted("200"), counted("404"), timed()
    for _ in range(3):
        r = await client.get(f"/tag/{tag.id}", headers=office_a.headers)
        assert r.status_code == 200
    missing = await client.get("/tag/cnotatagatall0000000000000", headers=office_a.headers)
    assert missing.status_code == 404
    assert counted("200") == before + 3
    assert counted("404") == before_404 + 1
    assert timed() == before_timed + 4
