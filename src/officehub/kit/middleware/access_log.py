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
            logger.info(
                "request",
                extra={
                    "request_id": state.get("request_id"),
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
