"""A path or query holding NUL is refused with 400 before it reaches a query (PostgreSQL
cannot store NUL in text)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from officehub.kit.errors import error_payload
from officehub.kit.middleware.responses import send_json


def has_nul(scope: Scope) -> bool:
    query: bytes = scope.get("query_string", b"")
    return "\x00" in scope["path"] or b"%00" in query or b"\x00" in query


class NulGuardMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and has_nul(scope):
            await send_json(
                send,
                400,
                error_payload(
                    400,
                    "VALIDATION_ERROR",
                    "Invalid request",
                    "path and query may not contain NUL characters",
                ),
            )
            return
        await self.app(scope, receive, send)
