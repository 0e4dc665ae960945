"""CORS of the visitor API: each web chat answers only the origins its integration allows.

Plain ASGI, inside the request-context middleware, for ``/webchat/{integrationId}/…``:
a preflight is answered here (204 with the allowed method and headers, or 403 for another
origin); a request from an origin the integration does not allow is refused (403) before
the route runs; an allowed origin gets ``Access-Control-Allow-Origin`` on every answer,
errors included (so the widget can read a 401 and start over). A request without
``Origin`` (not from a browser page) passes: the visitor token is what authenticates.

The integration's origins are read once per ``ttl`` seconds per process.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.kit.errors import error_payload

_PATH = re.compile(r"^/webchat/([A-Za-z0-9_-]{1,64})/(.+)$")
ALLOW_METHODS = b"GET, POST, OPTIONS"
ALLOW_HEADERS = b"content-type, x-visitor-token"
ASSET = "widget.js"


class WebchatCorsMiddleware:
    def __init__(self, app: ASGIApp, ttl: float = 5.0) -> None:
        self.app = app
        self.ttl = ttl
        self._origins: dict[str, tuple[float, frozenset[str]]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = _PATH.match(scope.get("path", "")) if scope["type"] == "http" else None
        if found is None or found.group(2) == ASSET:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        preflight = scope["method"] == "OPTIONS"
        if origin is None and not preflight:
            await self.app(scope, receive, send)
            return
        allowed = origin is not None and origin in await self._allowed(scope, found.group(1))
        if not allowed:
            # The access log names the refused origin: the site owner can tell why.
            scope.setdefault("state", {})["refused_origin"] = origin or "(none)"
            await _refuse(send, origin)
            return
        assert origin is not None  # noqa: S101 (allowed implies an origin)
        cors = [
            (b"access-control-allow-origin", origin.encode()),
            (b"vary", b"Origin"),
        ]
        if preflight:
            await send(
                {
                    "type": "http.response.start",
                    "status": 204,
                    "headers": [
                        *cors,
                        (b"access-control-allow-methods", ALLOW_METHODS),
                        (b"access-control-allow-headers", ALLOW_HEADERS),
                        (b"access-control-max-age", b"600"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *cors]
            await send(message)

        await self.app(scope, receive, send_with_cors)

    async def _allowed(self, scope: Scope, integration_id: str) -> frozenset[str]:
        cached = self._origins.get(integration_id)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        origins = await _read_origins(scope["app"].state, integration_id)
        if len(self._origins) > 10_000:
            self._origins.clear()
        self._origins[integration_id] = (now + self.ttl, origins)
        return origins


async def _read_origins(state: Any, integration_id: str) -> frozenset[str]:
    from officehub.inboxes.repository import get_integration_any_office

    async with state.read_sessionmaker() as session:
        integration = await get_integration_any_office(session, integration_id)
    if integration is None or integration.type != "WEBCHAT" or not integration.webchat:
        return frozenset()
    return frozenset(str(o) for o in integration.webchat.get("allowedOrigins") or [])


async def _refuse(send: Send, origin: str | None) -> None:
    details = (
        "A preflight must name its Origin"
        if origin is None
        else "This chat does not accept requests from this origin"
    )
    body = json.dumps(error_payload(403, "ORIGIN_NOT_ALLOWED", "Origin not allowed", details))
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"vary", b"Origin"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body.encode()})
