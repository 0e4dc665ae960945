"""A real HTTP server on 127.0.0.1 that records what webhook deliveries bring."""

from __future__ import annotations

import asyncio
import json
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


Responder = Callable[[int], Reply]


@dataclass
class Receiver:
    port: int = 0
    received: list[Received] = field(default_factory=list)
    respond: Responder = field(default=lambda _n: Reply())
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

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
