"""The test's app served by a real uvicorn on 127.0.0.1, for requests that truly overlap.

``httpx.ASGITransport`` runs one request at a time through the app in the test's own task;
races between requests (two transactions at once) need a server with its own connections::

    async def test_x(app: FastAPI, office_a: OfficeFixture) -> None:
        async with running_server(app) as base_url, concurrent_client(base_url) as client:
            answers = await fire(8, lambda i: client.post("/people", json=..., headers=...))

or take the ``server_url`` fixture (``tests/conftest.py``). The app is the test's
(same database, settings and lifespan); the server only serves it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import uvicorn
from fastapi import FastAPI

from officehub.kit.http_protocol import EndsEventStreamsAtShutdown


@asynccontextmanager
async def serving(
    app: Callable[..., Awaitable[None]], graceful_seconds: int = 1, port: int = 0
) -> AsyncIterator[int]:
    """Any ASGI ``app`` behind a real uvicorn on a free port of 127.0.0.1 (or ``port``, one
    the test reserved: its settings' ``public_url`` names it); yields the port.

    The one place tests start an in-process server: uvicorn's signal handlers stay the
    test runner's (``capture_signals``), and it offers no start event, so ``started`` is
    polled.
    """
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        lifespan="off",  # an app fixture has already run its lifespan
        ws="none",
        log_level="warning",
        access_log=False,
        proxy_headers=False,  # as `officehub serve`: the app's OFFICEHUB_TRUSTED_PROXIES decide
        timeout_graceful_shutdown=graceful_seconds,
        # as `officehub serve`'s: an open event stream (a console's) is closed at shutdown
        # instead of holding it for the graceful seconds
        http=EndsEventStreamsAtShutdown,
    )
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def running_server(app: FastAPI, port: int = 0) -> AsyncIterator[str]:
    """Serves ``app`` on a free port of 127.0.0.1 (or ``port``); yields its base URL."""
    async with serving(app, graceful_seconds=2, port=port) as port:
        yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def concurrent_client(base_url: str, size: int = 32) -> AsyncIterator[httpx.AsyncClient]:
    """A client that keeps up to ``size`` connections open at once (one per request)."""
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30) as client:
        yield client


async def fire(
    count: int, request: Callable[[int], Awaitable[httpx.Response]]
) -> list[httpx.Response]:
    """Sends ``count`` requests at once (``request(i)`` makes the i-th); their answers."""
    start = asyncio.Event()

    async def one(i: int) -> httpx.Response:
        await start.wait()
        return await request(i)

    tasks = [asyncio.create_task(one(i)) for i in range(count)]
    await asyncio.sleep(0)
    start.set()
    return list(await asyncio.gather(*tasks))
