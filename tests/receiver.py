"""A real HTTP server on 127.0.0.1 that records what webhook deliveries bring.

Each receiver serves one path under a random secret prefix (``/<token>/hook``) and counts
only requests to it: its port is one the OS chose, and once a receiver closes, another
test (or the other CI leg, running at once) may get the same port while a delivery or a
retry of the first is still on its way. Such a stray request answers 404 and is counted
in ``strays``, never in ``received`` (docs/testing.md, issue 41).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.server import serving


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> dict[str, Any]:
        decoded: dict[str, Any] = json.loads(self.body)
        return decoded


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: str = "ok"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    until: asyncio.Event | None = None  # holds the answer until the test sets it


Responder = Callable[[int], Reply]


@dataclass
class Receiver:
    port: int = 0
    received: list[Received] = field(default_factory=list)
    respond: Responder = field(default=lambda _n: Reply())
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    strays: int = 0  # requests to another path: not this test's (answered 404)

    @property
    def path(self) -> str:
        return f"/{self.token}/hook"

    @property
    def url(self) -> str:
        return self.url_at("127.0.0.1")

    def url_at(self, host: str) -> str:
        """This receiver's URL with ``host`` for the address (``localhost``, a name...)."""
        return f"http://{host}:{self.port}{self.path}"

    def event_ids(self) -> list[str]:
        return [r.json["id"] for r in self.received]

    async def wait_for(self, count: int, seconds: float = 10.0) -> None:
        async with asyncio.timeout(seconds):
            while len(self.received) < count:
                self.arrived.clear()
                await self.arrived.wait()

    async def wait_for_events(self, ids: set[str], seconds: float = 10.0) -> None:
        """Until every event id in ``ids`` has arrived at least once."""
        async with asyncio.timeout(seconds):
            while not ids <= set(self.event_ids()):
                self.arrived.clear()
                await self.arrived.wait()

    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[dict[str, Any]]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] != self.path:
            self.strays += 1
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"not this receiver"})
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the sender went away mid-request (a killed worker): nothing arrived
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        number = len(self.received)
        self.received.append(Received(headers, body, time.time()))
        self.arrived.set()
        reply = self.respond(number)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.until is not None:
            await reply.until.wait()
        raw_headers = [(k.encode(), v.encode()) for k, v in reply.headers.items()]
        await send({"type": "http.response.start", "status": reply.status, "headers": raw_headers})
        await send({"type": "http.response.body", "body": reply.body.encode()})


@asynccontextmanager
async def running_receiver(respond: Responder | None = None) -> AsyncIterator[Receiver]:
    receiver = Receiver()
    if respond is not None:
        receiver.respond = respond
    async with serving(receiver) as port:
        receiver.port = port
        yield receiver
