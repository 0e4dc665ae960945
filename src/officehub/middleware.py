"""The outermost layer: request ids, trailing slashes, JSON body limit, access log, 500s.

It is plain ASGI so that it also wraps the response of an unexpected exception: every
response, a 500 included, carries ``X-Request-Id``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

from prometheus_client import Counter, Histogram
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.errors import error_payload
from officehub.ids import new_id

logger = logging.getLogger("officehub.request")
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

REQUESTS = Counter("officehub_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram("officehub_http_request_seconds", "HTTP request duration", ["route"])


class BodyTooLarge(HTTPException):
    """Raised from ``receive``; an HTTPException so FastAPI's body parser lets it through."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"JSON bodies may be at most {limit} bytes")


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, max_json_body: int) -> None:
        self.app = app
        self.max_json_body = max_json_body

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
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = message["status"]
                response_started = True
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", request_id.encode()),
                ]
            await send(message)

        limited = self._is_limited(scope["method"], headers)
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
            elif limited and self._declared_too_large(headers):
                await self._reject_too_large(send_with_id)
            else:
                await self.app(scope, self._counting(receive) if limited else receive, send_with_id)
        except BodyTooLarge:
            if not response_started:
                await self._reject_too_large(send_with_id)
        except Exception:
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
            state: dict[str, Any] = scope.get("state", {})
            logger.info(
                "request",
                extra={
                    "request_id": request_id,
                    "office_id": state.get("office_id"),
                    "method": scope["method"],
                    "route": route,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                },
            )
            REQUESTS.labels(scope["method"], route, str(status)).inc()
            LATENCY.labels(route).observe(elapsed)

    def _is_limited(self, method: str, headers: Headers) -> bool:
        if method not in _BODY_METHODS:
            return False
        return not headers.get("content-type", "").lower().startswith("multipart/")

    def _declared_too_large(self, headers: Headers) -> bool:
        length = headers.get("content-length")
        return bool(length and length.isdigit() and int(length) > self.max_json_body)

    def _counting(self, receive: Receive) -> Receive:
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_json_body:
                    raise BodyTooLarge(self.max_json_body)
            return message

        return counted

    async def _reject_too_large(self, send: Send) -> None:
        await _send_json(
            send,
            413,
            error_payload(
                413,
                "PAYLOAD_TOO_LARGE",
                "Request body too large",
                f"JSON bodies may be at most {self.max_json_body} bytes",
            ),
        )


def _has_nul(scope: Scope) -> bool:
    """PostgreSQL cannot store NUL in text: refuse it before it reaches a query."""
    query: bytes = scope.get("query_string", b"")
    return "\x00" in scope["path"] or b"%00" in query or b"\x00" in query


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    template = getattr(route, "path", None)
    return template if isinstance(template, str) else "<unmatched>"


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
