"""One log line and the Prometheus metrics per request: its id, office, method, route
template, status and duration (never a path's values, a header or a body)."""

from __future__ import annotations

import logging
import time
from typing import Any

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("officehub.request")

REQUESTS = Counter("officehub_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram("officehub_http_request_seconds", "HTTP request duration", ["route"])


_CHILDREN: dict[tuple[str, str, int], tuple[Any, Any]] = {}
"""The metrics' children by (method, route template, status): ``labels()`` takes a lock and
checks its labels on every call; the children never change once made."""


def _children(method: str, route: str, status: int) -> tuple[Any, Any]:
    key = (method, route, status)
    found = _CHILDREN.get(key)
    if found is None:
        if len(_CHILDREN) >= 10_000:  # a client's made-up methods: stay bounded
            _CHILDREN.clear()
        found = (REQUESTS.labels(method, route, str(status)), LATENCY.labels(route))
        _CHILDREN[key] = found
    return found


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    template = getattr(route, "path", None)
    return template if isinstance(template, str) else "<unmatched>"


class AccessLogMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        started = time.perf_counter()
        status = 500

        async def send_seen(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_seen)
        finally:
            elapsed = time.perf_counter() - started
            route = _route_template(scope)
            method = scope["method"]
            extra = {
                "request_id": state.get("request_id"),
                "office_id": state.get("office_id"),
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": round(elapsed * 1000, 2),
            }
            if "refused_origin" in state:
                extra["refused_origin"] = state["refused_origin"]
            logger.info("request", extra=extra)
            requests, latency = _children(method, route, status)
            requests.inc()
            latency.observe(elapsed)
