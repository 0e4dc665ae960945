"""Every body is capped by its route's limit (``body_limit``; the JSON limit unless the route
declares its own), whatever its Content-Type: a declared ``Content-Length`` over it is
refused unread, a longer stream as soon as it passes it; 413 ``PAYLOAD_TOO_LARGE``.

Before a 413 goes out the rest of the body is read and dropped, up to ``body_discard``
bytes and ``discard_seconds``; an answer given before the body was read closes the
connection (``Connection: close``), the body never will be.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.kit.errors import error_payload
from officehub.kit.middleware.headers import first_header, has_header
from officehub.kit.middleware.responses import send_json

BODY_LIMIT_EXTRA = "x-max-body-bytes"

MULTIPART_ALLOWANCE = 64 * 1024
"""What an upload's multipart framing (the part's headers and boundaries) adds to the file."""


class BodyTooLarge(HTTPException):
    """Raised from ``receive``; an HTTPException so FastAPI's body parser lets it through."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"Bodies of this route may be at most {limit} bytes")


def body_limit(limit: int) -> dict[str, Any]:
    """``openapi_extra=`` of an upload route: its body may be up to ``limit`` bytes."""
    return {BODY_LIMIT_EXTRA: limit}


def route_body_limit(scope: Scope, default: int) -> int:
    extra = getattr(scope.get("route"), "openapi_extra", None) or {}
    limit = extra.get(BODY_LIMIT_EXTRA)
    return limit if isinstance(limit, int) else default


@dataclass
class _Body:
    pending: bool
    received: int = 0


def _declares_body(scope: Scope, length: str) -> bool:
    """Whether the request sends a body: chunked, or a ``Content-Length`` above 0."""
    return has_header(scope, b"transfer-encoding") or (length.isdigit() and int(length) > 0)


class BodyLimitMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        max_json_body: int,
        body_discard: int = 0,
        discard_seconds: float = 10.0,
    ) -> None:
        self.app = app
        self.max_json_body = max_json_body
        self.body_discard = body_discard
        self.discard_seconds = discard_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The declared length, read once (the first ``Content-Length``, as ``Headers`` reads it).
        length = first_header(scope, b"content-length") or ""
        body = _Body(pending=_declares_body(scope, length))
        response_started = False

        async def send_closing(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                if message["status"] == 413 and body.pending:
                    await self._discard_rest(length, body, receive)
                response_started = True
                if body.pending:  # answered before the body was read: it never will be
                    message["headers"] = [*message.get("headers", []), (b"connection", b"close")]
            await send(message)

        try:
            await self.app(scope, self._limited(scope, length, body, receive), send_closing)
        except BodyTooLarge as exc:
            if not response_started:
                await send_json(
                    send_closing,
                    413,
                    error_payload(
                        413, "PAYLOAD_TOO_LARGE", "Request body too large", str(exc.detail)
                    ),
                )

    def _limited(self, scope: Scope, length: str, body: _Body, receive: Receive) -> Receive:
        """``receive`` that reads no body past the route's limit.

        Runs after routing (the app reads bodies in the route), so ``scope["route"]`` says
        which limit applies; a declared ``Content-Length`` over it is refused unread.
        """
        seen = 0
        limit = -1

        async def limited() -> Message:
            nonlocal seen, limit
            if limit < 0:
                limit = route_body_limit(scope, self.max_json_body)
                if length.isdigit() and int(length) > limit:
                    raise BodyTooLarge(limit)
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                body.received = seen
                if seen > limit:
                    raise BodyTooLarge(limit)
                body.pending = bool(message.get("more_body"))
            return message

        return limited

    async def _discard_rest(self, length: str, body: _Body, receive: Receive) -> None:
        """Reads and drops the rest of an over-limit body, up to ``body_discard`` bytes and
        ``discard_seconds``, before the 413 goes out.

        A client sends its whole body before it reads the answer; closing the connection
        on unread bytes makes the kernel reset it, and the client meets the reset while
        still writing, never reading the 413. A body whose declared rest is beyond the
        bound is not waited for (the 413 goes out at once, the connection closed).
        """
        if length.isdigit() and int(length) - body.received > self.body_discard:
            return
        dropped = 0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.discard_seconds):
                while dropped <= self.body_discard:
                    message = await receive()
                    if message["type"] != "http.request":
                        return
                    dropped += len(message.get("body", b""))
                    if not message.get("more_body"):
                        body.pending = False  # all of it read: the connection may stay
                        return
