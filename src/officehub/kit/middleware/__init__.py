"""The outermost layer: request ids, trailing slashes, the API key, body limits, access log.

It is plain ASGI so that it also wraps the response of an unexpected exception: every
response, a 500 included, carries ``X-Request-Id``. It resolves the API key before the
app runs, so that no byte of a body is read for a request without a valid key (FastAPI
reads a body before it solves dependencies): the first ``receive`` of such a request
answers 401. Every body is capped by its route's limit (``body_limit``; 1 MiB unless the
route declares its own), whatever its Content-Type.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from fastapi.routing import APIRoute
from prometheus_client import Counter, Histogram
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.kit.auth import (
    API_KEY_HEADER,
    MISSING_KEY,
    KeyOutcome,
    is_keyless,
    lookup_key,
    needs,
    required_scope,
)
from officehub.kit.db import DatabaseTimeouts, database_unreachable
from officehub.kit.errors import DatabaseUnavailable, error_payload
from officehub.kit.ids import new_id
from officehub.kit.ratelimit import RateLimiter, Refusal

logger = logging.getLogger("officehub.request")
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
BODY_LIMIT_EXTRA = "x-max-body-bytes"

REQUESTS = Counter("officehub_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram("officehub_http_request_seconds", "HTTP request duration", ["route"])


class BodyTooLarge(HTTPException):
    """Raised from ``receive``; an HTTPException so FastAPI's body parser lets it through."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"Bodies of this route may be at most {limit} bytes")


class BodyWithoutKey(HTTPException):
    """Raised from the first ``receive`` of a request without a valid key: 401, body unread."""

    def __init__(self, problem: str) -> None:
        super().__init__(401, problem)


class BodyWithoutScope(HTTPException):
    """Raised from the first ``receive`` when the key lacks the route's scope: 403, unread."""

    code = "MISSING_PERMISSION"

    def __init__(self, scope: str) -> None:
        super().__init__(403, needs(scope))


MULTIPART_ALLOWANCE = 64 * 1024
"""What an upload's multipart framing (the part's headers and boundaries) adds to the file."""


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


def _declares_body(headers: Headers) -> bool:
    length = headers.get("content-length", "")
    return "transfer-encoding" in headers or (length.isdigit() and int(length) > 0)


class RequestContextMiddleware:
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
        path: str = scope["path"]
        if len(path) > 1 and path.endswith("/"):
            scope["path"] = path.rstrip("/") or "/"
        headers = Headers(scope=scope)
        incoming = headers.get("x-request-id", "")
        request_id = incoming if _REQUEST_ID_RE.match(incoming) else new_id()
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = time.perf_counter()
        status = 500
        response_started = False
        body = _Body(pending=_declares_body(headers))

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = message["status"]
                if status == 413 and body.pending:
                    await self._discard_rest(headers, body, receive)
                response_started = True
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", request_id.encode()),
                ]
                if body.pending:  # answered before the body was read: it never will be
                    message["headers"].append((b"connection", b"close"))
            await send(message)

        try:
            if _has_nul(scope):
                await _send_json(
                    send_with_id,
                    400,
                    error_payload(
                        400,
                        "VALIDATION_ERROR",
                        "Invalid request",
                        "path and query may not contain NUL characters",
                    ),
                )
            else:
                key = None if is_keyless(scope["path"]) else await _resolve(scope, headers)
                refusal = None
                if key is not None:
                    state["key"] = key
                    if key.office is not None:
                        state["office_id"] = key.office.office_id
                        refusal = await _rate_limit(scope, key.office.key_id)
                if refusal is not None:
                    await _send_json(
                        send_with_id,
                        429,
                        error_payload(429, "RATE_LIMITED", "Too many requests", refusal.details()),
                        refusal.headers(),
                    )
                else:
                    await self.app(
                        scope, self._guarded(scope, headers, key, body, receive), send_with_id
                    )
        except BodyTooLarge as exc:
            if not response_started:
                await self._reject_too_large(send_with_id, str(exc.detail))
        except Exception as exc:
            if database_unreachable(exc):
                logger.warning(
                    "database unreachable: %s",
                    type(exc).__name__,
                    extra={"request_id": request_id, "path": scope["path"]},
                )
                if not response_started:
                    await _send_unavailable(send_with_id, retry_after_of(scope))
                return
            logger.exception(
                "unhandled error", extra={"request_id": request_id, "path": scope["path"]}
            )
            if not response_started:
                await _send_json(
                    send_with_id,
                    500,
                    error_payload(
                        500,
                        "INTERNAL_ERROR",
                        "Internal server error",
                        f"Something went wrong on our side; quote request id {request_id}",
                    ),
                )
        finally:
            elapsed = time.perf_counter() - started
            route = _route_template(scope)
            logger.info(
                "request",
                extra={
                    "request_id": request_id,
                    "office_id": state.get("office_id"),
                    "method": scope["method"],
                    "route": route,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                    **(
                        {"refused_origin": state["refused_origin"]}
                        if "refused_origin" in state
                        else {}
                    ),
                },
            )
            REQUESTS.labels(scope["method"], route, str(status)).inc()
            LATENCY.labels(route).observe(elapsed)

    def _guarded(
        self,
        scope: Scope,
        headers: Headers,
        key: KeyOutcome | None,
        body: _Body,
        receive: Receive,
    ) -> Receive:
        """``receive`` that reads no body without a valid key holding the route's scope, nor
        past the route's limit.

        Runs after routing (the app reads bodies in the route), so ``scope["route"]`` says
        which limit applies; a declared ``Content-Length`` over it is refused unread.
        """
        seen = 0
        limit = -1

        async def guarded() -> Message:
            nonlocal seen, limit
            if limit < 0:
                route = scope.get("route")
                # Only API routes read bodies; a static file asks ``receive`` for a disconnect.
                if key is not None and key.office is None and isinstance(route, APIRoute):
                    raise BodyWithoutKey(key.problem)
                if key is not None and key.office is not None and isinstance(route, APIRoute):
                    scope_needed = required_scope(route)
                    if scope_needed not in key.office.permissions:
                        raise BodyWithoutScope(scope_needed)
                limit = route_body_limit(scope, self.max_json_body)
                length = headers.get("content-length", "")
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

        return guarded

    async def _discard_rest(self, headers: Headers, body: _Body, receive: Receive) -> None:
        """Reads and drops the rest of an over-limit body, up to ``body_discard`` bytes and
        ``discard_seconds``, before the 413 goes out.

        A client sends its whole body before it reads the answer; closing the connection
        on unread bytes makes the kernel reset it, and the client meets the reset while
        still writing, never reading the 413. A body whose declared rest is beyond the
        bound is not waited for (the 413 goes out at once, the connection closed).
        """
        length = headers.get("content-length", "")
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

    async def _reject_too_large(self, send: Send, details: str) -> None:
        await _send_json(
            send,
            413,
            error_payload(413, "PAYLOAD_TOO_LARGE", "Request body too large", details),
        )


def retry_after_of(scope: Scope) -> int:
    """The ``Retry-After`` of a 503 for an unreachable database (``DatabaseTimeouts``)."""
    settings = getattr(scope["app"].state, "settings", None)
    if settings is None:
        return DatabaseUnavailable.retry_after_seconds
    return DatabaseTimeouts.of(settings).retry_after


async def _send_unavailable(send: Send, wait: int) -> None:
    """503 with ``Retry-After``: the database is unreachable, the request may be retried."""
    await _send_json(
        send,
        503,
        error_payload(
            503,
            DatabaseUnavailable.code,
            DatabaseUnavailable.message,
            f"The database cannot be reached right now; retry in {wait} s.",
        ),
        [(b"retry-after", str(wait).encode())],
    )


async def _resolve(scope: Scope, headers: Headers) -> KeyOutcome:
    """The office of the request's key: from the process's key cache, else one lookup by
    the key's hash in a read-only session of its own."""
    key = headers.get(API_KEY_HEADER)
    if not key:
        return KeyOutcome(None, MISSING_KEY)
    state = scope["app"].state
    return await lookup_key(state.read_sessionmaker, key, getattr(state, "key_cache", None))


async def _rate_limit(scope: Scope, key_id: str) -> Refusal | None:
    limiter: RateLimiter | None = getattr(scope["app"].state, "rate_limiter", None)
    return None if limiter is None else await limiter.hit(key_id)


def _has_nul(scope: Scope) -> bool:
    """PostgreSQL cannot store NUL in text: refuse it before it reaches a query."""
    query: bytes = scope.get("query_string", b"")
    return "\x00" in scope["path"] or b"%00" in query or b"\x00" in query


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    template = getattr(route, "path", None)
    return template if isinstance(template, str) else "<unmatched>"


async def _send_json(
    send: Send,
    status: int,
    payload: dict[str, Any],
    extra_headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(extra_headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
