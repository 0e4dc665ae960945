"""An exception no route handled: 503 with ``Retry-After`` when the database cannot be
reached, else 500 quoting the request id (the traceback logged, without personal data).

Inside ``BodyLimitMiddleware``, so that such an answer to a request whose body was not read
closes the connection too; a body over its limit is that layer's to answer."""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.kit.db import DatabaseTimeouts, database_contended, database_unreachable
from officehub.kit.errors import DatabaseUnavailable, error_payload
from officehub.kit.middleware.body_limit import BodyTooLarge
from officehub.kit.middleware.responses import send_json

logger = logging.getLogger("officehub.request")


def retry_after_of(scope: Scope) -> int:
    """The ``Retry-After`` of a 503 for an unreachable database (``DatabaseTimeouts``)."""
    settings = getattr(scope["app"].state, "settings", None)
    if settings is None:
        return DatabaseUnavailable.retry_after_seconds
    return DatabaseTimeouts.of(settings).retry_after


async def _send_unavailable(
    send: Send, wait: int, details: str = "The database cannot be reached right now"
) -> None:
    """503 with ``Retry-After``: the database is unreachable (or the change lost a race and
    was rolled back), the request may be retried."""
    await send_json(
        send,
        503,
        error_payload(
            503,
            DatabaseUnavailable.code,
            DatabaseUnavailable.message,
            f"{details}; retry in {wait} s.",
        ),
        [(b"retry-after", str(wait).encode())],
    )


CONTENDED_RETRY_SECONDS = 1
"""``Retry-After`` of a change rolled back by a deadlock: the other transaction goes on."""


class UnhandledErrorMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response_started = False

        async def send_seen(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        try:
            await self.app(scope, receive, send_seen)
        except BodyTooLarge:
            raise  # answered 413 by the body limit's layer, outside this one
        except Exception as exc:
            request_id = scope.get("state", {}).get("request_id")
            if database_unreachable(exc):
                logger.warning(
                    "database unreachable: %s",
                    type(exc).__name__,
                    extra={"request_id": request_id, "path": scope["path"]},
                )
                if not response_started:
                    await _send_unavailable(send_seen, retry_after_of(scope))
                return
            if database_contended(exc):
                logger.warning(
                    "change rolled back by the database's contention: %s",
                    type(exc).__name__,
                    extra={"request_id": request_id, "path": scope["path"]},
                )
                if not response_started:
                    await _send_unavailable(
                        send_seen,
                        CONTENDED_RETRY_SECONDS,
                        "Another change held the records this one needed, and nothing of it "
                        "was kept",
                    )
                return
            logger.exception(
                "unhandled error", extra={"request_id": request_id, "path": scope["path"]}
            )
            if not response_started:
                await send_json(
                    send_seen,
                    500,
                    error_payload(
                        500,
                        "INTERNAL_ERROR",
                        "Internal server error",
                        f"Something went wrong on our side; quote request id {request_id}",
                    ),
                )
