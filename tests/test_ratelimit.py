"""Rate limits per API key: 429 RATE_LIMITED with Retry-After and X-RateLimit-*, counted in
memory or, with OFFICEHUB_REDIS_URL, in Redis shared by every process."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from limits import parse_many

from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.kit.ratelimit import LocalWindows
from tests.helpers import error_of, make_office
from tests.server import concurrent_client, fire, running_server

REDIS_URL = "redis://127.0.0.1:6379/0"


@asynccontextmanager
async def app_with(settings: Settings, **update: Any) -> AsyncIterator[FastAPI]:
    app = create_app(settings.model_copy(update=update))
    async with app.router.lifespan_context(app):
        yield app


def client_of(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t.test")


def redis_prefix() -> str:
    """A prefix of this test's own: counts of other tests and runs never meet."""
    return f"officehub-test-{uuid.uuid4().hex}"


def assert_rate_limited(r: httpx.Response, limit: int) -> None:
    assert r.status_code == 429
    body = error_of(r)
    assert body["code"] == "RATE_LIMITED"
    assert 1 <= int(r.headers["retry-after"]) <= 60
    assert r.headers["x-ratelimit-limit"] == str(limit)
    assert r.headers["x-ratelimit-remaining"] == "0"
    assert int(r.headers["x-ratelimit-reset"]) >= int(time.time())


async def test_a_key_over_its_limit_is_429_rate_limited(settings: Settings) -> None:
    async with app_with(settings, rate_limits="3/minute") as app, client_of(app) as client:
        office = await make_office(app, "A")
        answers = [await client.get("/tag", headers=office.headers) for _ in range(4)]
        assert [r.status_code for r in answers[:3]] == [200, 200, 200]
        assert_rate_limited(answers[3], 3)


async def test_rate_limited_write_is_refused_before_its_body_is_read(settings: Settings) -> None:
    async with app_with(settings, rate_limits="1/minute") as app, client_of(app) as client:
        office = await make_office(app, "A")
        assert (await client.get("/tag", headers=office.headers)).status_code == 200
        r = await client.post("/inbox", json={"name": "Nova"}, headers=office.headers)
        assert_rate_limited(r, 1)
        async with app.state.sessionmaker() as s:
            from sqlalchemy import func, select

            from officehub.inboxes.models import Inbox

            assert await s.scalar(select(func.count()).select_from(Inbox)) == 0


async def test_each_key_has_its_own_count(settings: Settings) -> None:
    async with app_with(settings, rate_limits="2/minute") as app, client_of(app) as client:
        a, b = await make_office(app, "A"), await make_office(app, "B")
        for _ in range(2):
            assert (await client.get("/tag", headers=a.headers)).status_code == 200
        assert_rate_limited(await client.get("/tag", headers=a.headers), 2)
        assert (await client.get("/tag", headers=b.headers)).status_code == 200


async def test_keyless_paths_and_bad_keys_are_not_counted(settings: Settings) -> None:
    async with app_with(settings, rate_limits="1/minute") as app, client_of(app) as client:
        for _ in range(3):
            assert (await client.get("/healthz")).status_code == 200
            r = await client.get("/tag", headers={"x-service-api-key": "ohk_nope"})
            assert r.status_code == 401


async def test_an_empty_limit_setting_limits_nothing(settings: Settings) -> None:
    async with app_with(settings, rate_limits="") as app, client_of(app) as client:
        office = await make_office(app, "A")
        for _ in range(5):
            assert (await client.get("/tag", headers=office.headers)).status_code == 200


async def test_concurrent_requests_never_pass_the_limit(settings: Settings) -> None:
    async with app_with(settings, rate_limits="5/minute") as app:
        office = await make_office(app, "A")
        async with running_server(app) as url, concurrent_client(url) as client:
            answers = await fire(12, lambda _: client.get("/tag", headers=office.headers))
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200] * 5 + [429] * 7


async def test_redis_counts_are_shared_by_every_process(settings: Settings) -> None:
    shared = {"rate_limits": "3/minute", "redis_url": REDIS_URL, "redis_key_prefix": redis_prefix()}
    async with app_with(settings, **shared) as one, app_with(settings, **shared) as two:
        office = await make_office(one, "A")
        async with client_of(one) as first, client_of(two) as second:
            assert (await first.get("/tag", headers=office.headers)).status_code == 200
            assert (await second.get("/tag", headers=office.headers)).status_code == 200
            assert (await first.get("/tag", headers=office.headers)).status_code == 200
            assert_rate_limited(await second.get("/tag", headers=office.headers), 3)
            assert_rate_limited(await first.get("/tag", headers=office.headers), 3)


async def test_redis_concurrent_requests_never_pass_the_limit(settings: Settings) -> None:
    limited = {
        "rate_limits": "5/minute",
        "redis_url": REDIS_URL,
        "redis_key_prefix": redis_prefix(),
    }
    async with app_with(settings, **limited) as app:
        office = await make_office(app, "A")
        async with running_server(app) as url, concurrent_client(url) as client:
            answers = await fire(12, lambda _: client.get("/tag", headers=office.headers))
    assert sorted(r.status_code for r in answers) == [200] * 5 + [429] * 7


async def test_an_unreachable_redis_lets_requests_through(settings: Settings) -> None:
    down = {"rate_limits": "1/minute", "redis_url": "redis://127.0.0.1:1/0"}
    async with app_with(settings, **down) as app, client_of(app) as client:
        office = await make_office(app, "A")
        for _ in range(3):
            assert (await client.get("/tag", headers=office.headers)).status_code == 200


def test_local_windows_count_per_key_reset_after_the_period_and_stay_bounded() -> None:
    now = [1000.0]
    windows = LocalWindows(sweep_at=4, clock=lambda: now[0])
    items = parse_many("3/second;5/minute")
    assert [windows.hit(items, "k1") for _ in range(3)] == [None] * 3
    refusal = windows.hit(items, "k1")
    assert refusal is not None and refusal.limit.amount == 3 and refusal.reset_at == 1001.0
    assert windows.hit(items, "k2") is None  # another key, its own count
    now[0] += 1.0  # the second's window ended; the minute's holds 3 of 5
    assert [windows.hit(items, "k1") for _ in range(2)] == [None] * 2
    refusal = windows.hit(items, "k1")
    assert refusal is not None and refusal.limit.amount == 5 and refusal.reset_at == 1060.0
    now[0] += 60.0
    for key in ("k3", "k4", "k5"):  # ended windows are swept, not kept
        assert windows.hit(items, key) is None
    assert len(windows) <= 6
