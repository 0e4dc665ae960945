"""Concurrent writes never answer 5xx ("database is locked" on SQLite).

In WAL mode a deferred transaction that reads and then writes fails at once when another
writer committed in between (no busy timeout helps); a writing request therefore opens its
transaction with ``BEGIN IMMEDIATE`` (``officehub/kit/db.py``). On PostgreSQL the same test
checks the row locks and constraints hold without a server error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import make_contact, make_inbox, make_tag, make_user
from tests.helpers import OfficeFixture
from tests.server import concurrent_client, fire, running_server, serving
from tests.server_process import PNG_1X1

WRITERS = 32


def _shifted(
    request: Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]],
    client: httpx.AsyncClient,
    first: int,
    i: int,
) -> Awaitable[httpx.Response]:
    return request(client, first + i)


async def test_concurrent_mixed_writes_never_answer_5xx(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await make_inbox(session, office_a.id)
    contacts = [await make_contact(session, office_a.id, name=f"Pessoa {i}") for i in range(8)]
    tags = [await make_tag(session, office_a.id, inbox.id, name=f"tag {i}") for i in range(8)]
    await session.commit()
    h = office_a.headers

    def request(client: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
        kind, n = i % 4, (i // 4) % len(contacts)
        if kind == 0:
            person = {"name": f"Nova {i}", "phone": f"+55119{77000000 + i:08d}"}
            return client.post("/people", json=person, headers=h)
        if kind == 1:
            return client.patch(
                f"/people/{contacts[n].id}", json={"name": f"Renomeada {i}"}, headers=h
            )
        if kind == 2:
            body = {
                "name": f"nova {i}",
                "color": "#00FF00",
                "inboxId": inbox.id,
                "modules": ["crm"],
            }
            return client.post("/tag", json=body, headers=h)
        return client.delete(f"/tag/{tags[n].id}", headers=h)

    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        for first in (0, WRITERS):
            answers = await fire(WRITERS, partial(_shifted, request, client, first))
            statuses = [a.status_code for a in answers]
            assert not [s for s in statuses if s >= 500], statuses
            assert all(s < 400 or s == 404 for s in statuses), statuses
        listed = await client.get("/people", params={"limit": 50}, headers=h)
    assert listed.status_code == 200
    names = {c["name"] for c in listed.json()["data"]}
    assert {f"Nova {i}" for i in range(0, 2 * WRITERS, 4)} <= names


async def test_a_slow_upload_does_not_hold_the_write_lock(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A multipart upload opens no write transaction up front: other writers go on while
    a slow client is still sending."""
    user = await make_user(session, office_a.id)
    await session.commit()
    boundary = "b0undary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n'
        "Content-Type: image/png\r\n\r\n"
    ).encode() + PNG_1X1
    tail = f"\r\n--{boundary}--\r\n".encode()
    other_done = asyncio.Event()

    async def slow_body() -> AsyncIterator[bytes]:
        yield head
        await asyncio.wait_for(other_done.wait(), 8)  # the upload is still open meanwhile
        yield tail

    reading = asyncio.Event()

    async def app_reading_the_upload(scope: Any, receive: Any, send: Any) -> None:
        """The app, telling when it has read the upload's first chunk (past every
        middleware and key check that could have opened a transaction)."""

        async def received() -> Any:
            message = await receive()
            if scope["path"].endswith("/avatar") and message.get("body"):
                reading.set()
            return message

        await app(scope, received, send)

    async with (
        serving(app_reading_the_upload) as port,
        concurrent_client(f"http://127.0.0.1:{port}") as client,
    ):
        upload = asyncio.create_task(
            client.put(
                f"/user/{user.id}/avatar",
                content=slow_body(),
                headers={
                    **office_a.headers,
                    "content-type": f"multipart/form-data; boundary={boundary}",
                },
            )
        )
        async with asyncio.timeout(5):
            await reading.wait()  # the upload is in the app, its tail not sent yet
        started = time.perf_counter()
        other = await client.post("/people", json={"name": "Outra"}, headers=office_a.headers)
        waited = time.perf_counter() - started
        other_done.set()
        uploaded = await upload
    assert other.status_code == 201, other.text
    assert waited < 5, waited  # not held behind the upload (busy timeout: 10 s)
    assert uploaded.status_code == 200, uploaded.text
