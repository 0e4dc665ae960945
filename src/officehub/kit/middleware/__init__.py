"""The request layers: one small plain-ASGI class per concern, composed by ``app.create_app``
in this order, outermost first:

1. ``TrailingSlashMiddleware``: ``/tags/`` is ``/tags``;
2. ``RequestIdMiddleware``: every response, a 500 included, carries ``X-Request-Id``;
3. ``AccessLogMiddleware``: one log line and the metrics per request, whatever answered;
4. ``BodyLimitMiddleware``: every body capped by its route's limit (413), the connection
   closed when an answer leaves a body unread;
5. ``UnhandledErrorMiddleware``: an exception no route handled answers 503 (database
   unreachable) or 500;
6. ``NulGuardMiddleware``: NUL in a path or query answers 400;
7. ``ApiKeyMiddleware``: the key resolved (and rate-limited, 429) before the app runs; no
   byte of a body is read without a valid key holding the route's scope (401, 403).

Plain ASGI, so that they also wrap the response of an unexpected exception.
``security_headers`` is the layer outside them all (``app.create_app`` adds it after).
"""

from __future__ import annotations

from officehub.kit.middleware.access_log import AccessLogMiddleware
from officehub.kit.middleware.api_key import ApiKeyMiddleware
from officehub.kit.middleware.body_limit import (
    MULTIPART_ALLOWANCE,
    BodyLimitMiddleware,
    body_limit,
)
from officehub.kit.middleware.nul_guard import NulGuardMiddleware
from officehub.kit.middleware.request_id import RequestIdMiddleware
from officehub.kit.middleware.trailing_slash import TrailingSlashMiddleware
from officehub.kit.middleware.unhandled_errors import UnhandledErrorMiddleware, retry_after_of

__all__ = [
    "MULTIPART_ALLOWANCE",
    "AccessLogMiddleware",
    "ApiKeyMiddleware",
    "BodyLimitMiddleware",
    "NulGuardMiddleware",
    "RequestIdMiddleware",
    "TrailingSlashMiddleware",
    "UnhandledErrorMiddleware",
    "body_limit",
    "retry_after_of",
]
