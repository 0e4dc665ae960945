"""Every response, a 500 included, carries ``X-Request-Id``: the client's when it is a
plain token of at most 64 characters, else a new id; the layers below read it from
``scope["state"]["request_id"]``."""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.kit.ids import new_id
from officehub.kit.middleware.headers import first_header

_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = first_header(scope, b"x-request-id") or ""
        request_id = incoming if _REQUEST_ID_RE.match(incoming) else new_id()
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        await self.app(scope, receive, send_with_id)
