"""A silent database: its packets dropped rather than refused, so nothing ever says "closed".

The database's network is a TCP proxy on 127.0.0.1 in front of PostgreSQL that the test
switches to swallowing: it stops forwarding in either direction and keeps every socket
open, as a dropped route or a firewall's lost state does (the bytes queue until it is
switched back, as TCP's retransmissions would deliver them). PostgreSQL itself is never
touched. The timeouts are one second here; every request must answer 503
``DATABASE_UNAVAILABLE`` with ``Retry-After`` within about that, never hang for the outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.engine import make_url

from officehub.app import create_app
from officehub.kit.config import Settings
from tests.conftest import PG_URL
from tests.helpers import OfficeFixture, error_of, make_office
from tests.server import running_server
from tests.webhook_helpers import delivery_worker

pytestmark = pytest.mark.skipif(
    not PG_URL,
    reason="PostgreSQL only: SQLite is a file in the process, with no network to go silent "
    "(docs/decisions.md, Hardening, second part)",
)

TIMEOUT = 1.0
MARGIN = 2.0
"""What a 503 may take beyond the timeout it reports (a busy CI machine)."""


class SilentProxy:
    """A TCP proxy in front of PostgreSQL that can be switched to swallow everything."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._pipe, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def swallow(self) -> None:
        self.flowing.clear()

    def restore(self) -> None:
        self.flowing.set()

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):
            writer.transport.abort()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.add(writer)
        await self.flowing.wait()  # a connection opened while silent hears nothing
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self.writers.add(up_writer)

        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await src.read(65536):
                    await self.flowing.wait()  # swallowed: held, never answered
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        for task in (
            asyncio.create_task(copy(reader, up_writer)),
            asyncio.create_task(copy(up_reader, writer)),
        ):
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)


@contextlib.asynccontextmanager
async def behind_proxy(
    settings: Settings, **overrides: object
) -> AsyncIterator[tuple[FastAPI, SilentProxy]]:
    """The app with its database behind a ``SilentProxy`` and one-second timeouts."""
    url = make_url(settings.database_url)
    proxy = SilentProxy(url.host or "127.0.0.1", url.port or 5432)
    await proxy.start()
    through = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    update: dict[str, object] = {
        "database_url": through,
        "db_connect_timeout_seconds": TIMEOUT,
        "db_statement_timeout_seconds": TIMEOUT,
        "db_pool_timeout_seconds": TIMEOUT,
        "key_cache_seconds": 0,  # every request looks its key up: it meets the database
        **overrides,
    }
    app = create_app(settings.model_copy(update=update))
    try:
        async with app.router.lifespan_context(app):
            try:
                async with asyncio.timeout(120):  # on a hang, fail (and shut down) instead
                    yield app, proxy
            finally:
                proxy.restore()
    finally:
        await proxy.stop()


async def timed(
    client: httpx.AsyncClient, method: str, path: str, **kw: object
) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await client.request(method, path, **kw)  # type: ignore[arg-type]
    return response, time.monotonic() - started


def assert_unavailable(response: httpx.Response, took: float, limit: float) -> None:
    assert response.status_code == 503, response.text
    assert error_of(response)["code"] == "DATABASE_UNAVAILABLE"
    assert response.headers["retry-after"] == "1"
    assert took < limit, f"answered after {took:.1f} s"


async def _create_people(
    client: httpx.AsyncClient, office: OfficeFixture, names: list[str]
) -> None:
    for name in names:
        r = await client.post("/people", json={"name": name}, headers=office.headers)
        assert r.status_code == 201, r.text


async def test_a_silent_database_answers_503_within_the_timeout_then_requests_succeed_again(
    settings: Settings,
) -> None:
    async with behind_proxy(settings) as (app, proxy), running_server(app) as url:
        office = await make_office(app, "Office A")
        async with httpx.AsyncClient(base_url=url, timeout=20) as client:
            await _create_people(client, office, ["Ana"])
            assert (await client.get("/readyz")).status_code == 200

            proxy.swallow()
            # Pooled connections (their statement times out) and new ones (their connect
            # does), reads and writes, at once: none waits for the outage.
            answers = await asyncio.gather(
                *(timed(client, "GET", "/people", headers=office.headers) for _ in range(4)),
                *(
                    timed(client, "POST", "/people", json={"name": f"P{i}"}, headers=office.headers)
                    for i in range(4)
                ),
            )
            for response, took in answers:
                # A request meets at most a checkout, a connect and a statement's timeout.
                assert_unavailable(response, took, 3 * TIMEOUT + MARGIN)
            ready, took = await timed(client, "GET", "/readyz")
            assert ready.status_code == 503, ready.text
            assert ready.json() == {"status": "unavailable"}
            assert ready.headers["retry-after"] == "1"
            assert took < 3 * TIMEOUT + MARGIN, f"/readyz answered after {took:.1f} s"

            proxy.restore()
            deadline = time.monotonic() + 15
            while (await client.get("/readyz")).status_code != 200:
                assert time.monotonic() < deadline, "/readyz never said ready again"
                await asyncio.sleep(0.2)
            # Requests succeed again, no client retrying: the pool replaced what it lost.
            for _ in range(10):
                listed = await client.get("/people", headers=office.headers)
                assert listed.status_code == 200, listed.text
            await _create_people(client, office, ["Bia"])
            names = sorted(p["name"] for p in listed.json()["data"])
            assert names[0] == "Ana"
            # None of the 503'd creates was kept half-done: each either committed or not.
            listed = await client.get("/people", headers=office.headers)
            assert "Bia" in {p["name"] for p in listed.json()["data"]}


async def test_an_exhausted_pool_answers_503_with_retry_after_within_the_pool_timeout(
    settings: Settings,
) -> None:
    # One connection (pool 1, no overflow), held by the test: every request waits for it.
    async with behind_proxy(settings, db_pool_size=1) as (app, _proxy), running_server(app) as url:
        office = await make_office(app, "Office A")
        async with httpx.AsyncClient(base_url=url, timeout=20) as client:
            async with app.state.engine.connect() as held:
                await held.execute(text("SELECT 1"))
                answers = await asyncio.gather(
                    timed(client, "GET", "/people", headers=office.headers),
                    timed(client, "POST", "/people", json={"name": "Ana"}, headers=office.headers),
                    timed(client, "GET", "/readyz"),
                )
                for response, took in answers[:2]:
                    assert_unavailable(response, took, TIMEOUT + MARGIN)
                ready, took = answers[2]
                assert ready.status_code == 503 and took < TIMEOUT + MARGIN, (ready.text, took)
            r = await client.post("/people", json={"name": "Ana"}, headers=office.headers)
            assert r.status_code == 201, r.text


async def test_the_worker_keeps_running_through_a_silent_database(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    async with behind_proxy(settings) as (app, proxy):
        worker = delivery_worker(app, settings)
        running = asyncio.create_task(worker.run())
        try:
            async with asyncio.timeout(10):
                await worker.idle.wait()  # a first pass reached the database
            assert worker.unreachable_passes == 0
            proxy.swallow()
            deadline = time.monotonic() + 10
            while worker.unreachable_passes == 0:
                assert time.monotonic() < deadline, "the worker never noticed the silence"
                assert not running.done(), running
                await asyncio.sleep(0.1)
            proxy.restore()
            deadline = time.monotonic() + 30
            while worker.unreachable_passes:
                assert time.monotonic() < deadline, "the worker never found the database again"
                assert not running.done(), running
                await asyncio.sleep(0.1)
            assert not running.done()
            assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
        finally:
            worker.stop()
            await running
