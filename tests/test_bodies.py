"""Bodies before keys: no byte of a body is read without a valid key, nor past its route's cap.

``Counted`` sits outside the whole application and counts the body bytes the server's
``receive`` handed to it, so "read" here means read by the service, not by the kernel.
Past the cap, a bounded rest (``OFFICEHUB_BODY_DISCARD_BYTES``) is read only to be dropped,
so that a client still sending reads the 413 instead of a reset.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.types import Message, Receive, Scope, Send

from officehub.kit.auth import is_keyless
from tests.factories import make_user
from tests.helpers import OfficeFixture, error_of
from tests.server import serving
from tests.test_users import png_bytes

MIB = 1024 * 1024
FEW_KIB = 4 * 1024
BOUNDARY = "officehubboundary"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


@dataclass
class Counted:
    """The application, counting the body bytes ``receive`` delivered to it."""

    app: FastAPI
    delivered: int = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                self.delivered += len(message.get("body", b""))
            return message

        await self.app(scope, counted if scope["type"] == "http" else receive, send)


@contextlib.asynccontextmanager
async def running(counted: Counted) -> AsyncIterator[int]:
    """The application behind a real uvicorn server on 127.0.0.1; yields its port."""
    async with serving(counted, graceful_seconds=2) as port:
        yield port


@dataclass
class Sent:
    status: int
    head: str
    bytes_sent: int


async def send_huge(port: int, method: str, path: str, headers: dict[str, str], size: int) -> Sent:
    """Sends ``size`` bytes of multipart body through a socket until the server answers."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {MULTIPART}"]
    lines += [f"Content-Length: {size}", *(f"{k}: {v}" for k, v in headers.items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    sent = 0
    chunk = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n'
    ).encode()
    chunk += b"x" * (64 * 1024 - len(chunk))

    async def send_body() -> None:
        nonlocal sent
        with contextlib.suppress(ConnectionError):
            while sent < size:
                writer.write(chunk[: size - sent])
                await writer.drain()
                sent += min(len(chunk), size - sent)

    sender = asyncio.create_task(send_body())
    try:
        async with asyncio.timeout(20):
            head = (await reader.readuntil(b"\r\n\r\n")).decode()
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    return Sent(int(head.split(" ", 2)[1]), head.lower(), sent)


@pytest.mark.parametrize(
    ("method", "path"), [("PUT", "/user/cxxxxxxxxxxxxxxxx/avatar"), ("POST", "/tag")]
)
@pytest.mark.parametrize("key", [None, "ohk_not-a-key"])
async def test_a_64_mib_multipart_body_without_a_valid_key_is_401_unread(
    app: FastAPI, method: str, path: str, key: str | None
) -> None:
    """Upload route and JSON route alike: 401 while the service has read no body at all."""
    counted = Counted(app)
    headers = {"x-service-api-key": key} if key else {}
    async with running(counted) as port:
        sent = await send_huge(port, method, path, headers, 64 * MIB)
    assert sent.status == 401
    assert counted.delivered <= FEW_KIB, counted.delivered
    assert "connection: close" in sent.head
    assert sent.bytes_sent < 64 * MIB


DISCARDED = 4 * MIB
"""``OFFICEHUB_BODY_DISCARD_BYTES``: after a 413, this much of the rest is read only to be
dropped (so a client still sending reads the 413; ``test_connection_limits``)."""


async def test_a_2_mib_multipart_body_to_a_route_without_uploads_is_413(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """The 1 MiB cap holds whatever the Content-Type: refused when declared, unread when
    its rest is beyond what is discarded…"""
    counted = Counted(app)
    transport = httpx.ASGITransport(app=counted)
    async with httpx.AsyncClient(transport=transport, base_url="http://officehub.test") as c:
        for size in (2 * MIB, MIB + DISCARDED + 1):
            counted.delivered = 0
            r = await c.post(
                "/tag",
                content=b"x" * size,
                headers={**office_a.headers, "content-type": MULTIPART},
            )
            assert r.status_code == 413
            assert error_of(r)["code"] == "PAYLOAD_TOO_LARGE"
            # Only read to be dropped, never by the route: all of 2 MiB, none of more.
            assert counted.delivered == (size if size <= DISCARDED else 0)


async def test_a_streamed_multipart_body_is_read_only_to_be_dropped_past_1_mib(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """…and counted as it arrives when it declares no length."""
    counted = Counted(app)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(160):  # 10 MiB
            yield b"x" * (64 * 1024)

    transport = httpx.ASGITransport(app=counted)
    async with httpx.AsyncClient(transport=transport, base_url="http://officehub.test") as c:
        r = await c.post(
            "/tag", content=chunks(), headers={**office_a.headers, "content-type": MULTIPART}
        )
    assert r.status_code == 413
    assert error_of(r)["code"] == "PAYLOAD_TOO_LARGE"
    # 1 MiB (and a chunk) read, then at most the discarded bound, only to be dropped.
    assert counted.delivered <= MIB + 64 * 1024 + DISCARDED + 64 * 1024


async def test_an_upload_route_reads_up_to_its_own_limit_only(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The avatar route declares 5 MiB and its multipart framing; a bigger declared body is
    refused unread, a 2 MiB picture (over the 1 MiB cap of other routes) is taken."""
    user = await make_user(session, office_a.id)
    await session.commit()
    counted = Counted(app)
    transport = httpx.ASGITransport(app=counted)
    path = f"/user/{user.id}/avatar"
    async with httpx.AsyncClient(transport=transport, base_url="http://officehub.test") as c:
        r = await c.put(
            path,
            content=b"x" * (6 * MIB),
            headers={**office_a.headers, "content-type": MULTIPART},
        )
        assert r.status_code == 413
        assert counted.delivered == 0
        picture = png_bytes() + b"\x00" * (2 * MIB)
        r = await c.put(
            path, files={"file": ("a.png", picture, "image/png")}, headers=office_a.headers
        )
    assert r.status_code == 200, r.text
    assert r.json()["imageUrl"]
    assert counted.delivered > 2 * MIB


async def test_avatar_upload_still_works_through_a_real_server(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    user = await make_user(session, office_a.id)
    await session.commit()
    async with running(Counted(app)) as port, httpx.AsyncClient() as c:
        r = await c.put(
            f"http://127.0.0.1:{port}/user/{user.id}/avatar",
            files={"file": ("a.png", png_bytes(), "image/png")},
            headers=office_a.headers,
        )
    assert r.status_code == 200, r.text
    assert ".png?" in r.json()["imageUrl"]


async def test_keyless_paths_are_listed_in_one_place(client: httpx.AsyncClient) -> None:
    """Operations, the API's description, signed media and channel webhooks need no key."""
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"]:
        assert is_keyless(path)
        assert (await client.get(path)).status_code == 200, path
    assert is_keyless("/media/avatars/x.png") and is_keyless("/channels/whatsapp/c1/webhook")
    assert (await client.get("/media/avatars/x.png")).status_code == 403
    assert not is_keyless("/mediax") and not is_keyless("/tag")


async def test_a_body_refused_for_want_of_a_key_answers_as_any_401(
    client: httpx.AsyncClient,
) -> None:
    """Refused in ``receive`` or by ``OfficeDep``: the same body, the reason in ``details``."""
    unread = await client.post("/tag", json={"name": "x"})
    no_body = await client.get("/tag")
    assert unread.status_code == no_body.status_code == 401
    assert error_of(unread) == error_of(no_body)
    assert "x-service-api-key" in error_of(unread)["details"]
    unknown = await client.post("/tag", json={"name": "x"}, headers={"x-service-api-key": "k"})
    assert error_of(unknown)["message"] == error_of(no_body)["message"]
    assert "unknown or revoked" in error_of(unknown)["details"]
