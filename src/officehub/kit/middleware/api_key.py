"""The API key, resolved before the app runs, so that no byte of a body is read for a
request without a valid key holding the route's scope (FastAPI reads a body before it
solves dependencies): the first ``receive`` of such a request answers 401 (403 for a
missing scope). A key over its rate limit is answered 429 here. ``OfficeDep`` reads what
this layer found (``scope["state"]["key"]``) and checks the route's scope.
"""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute
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
from officehub.kit.errors import error_payload
from officehub.kit.middleware.responses import send_json
from officehub.kit.ratelimit import RateLimiter, Refusal


class BodyWithoutKey(HTTPException):
    """Raised from the first ``receive`` of a request without a valid key: 401, body unread."""

    def __init__(self, problem: str) -> None:
        super().__init__(401, problem)


class BodyWithoutScope(HTTPException):
    """Raised from the first ``receive`` when the key lacks the route's scope: 403, unread."""

    code = "MISSING_PERMISSION"

    def __init__(self, scope: str) -> None:
        super().__init__(403, needs(scope))


async def _resolve(scope: Scope) -> KeyOutcome:
    """The office of the request's key: from the process's key cache, else one lookup by
    the key's hash in a read-only session of its own."""
    key = Headers(scope=scope).get(API_KEY_HEADER)
    if not key:
        return KeyOutcome(None, MISSING_KEY)
    state = scope["app"].state
    return await lookup_key(state.read_sessionmaker, key, getattr(state, "key_cache", None))


async def _rate_limit(scope: Scope, key_id: str) -> Refusal | None:
    limiter: RateLimiter | None = getattr(scope["app"].state, "rate_limiter", None)
    return None if limiter is None else await limiter.hit(key_id)


def _key_checked(key: KeyOutcome | None, scope: Scope, receive: Receive) -> Receive:
    """``receive`` that reads no body without a valid key holding the route's scope."""
    checked = False

    async def guarded() -> Message:
        nonlocal checked
        if not checked:
            route = scope.get("route")
            # Only API routes read bodies; a static file asks ``receive`` for a disconnect.
            if key is not None and key.office is None and isinstance(route, APIRoute):
                raise BodyWithoutKey(key.problem)
            if key is not None and key.office is not None and isinstance(route, APIRoute):
                scope_needed = required_scope(route)
                if scope_needed not in key.office.permissions:
                    raise BodyWithoutScope(scope_needed)
            checked = True
        return await receive()

    return guarded


class ApiKeyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        key = None if is_keyless(scope["path"]) else await _resolve(scope)
        if key is not None:
            state["key"] = key
            if key.office is not None:
                state["office_id"] = key.office.office_id
                refusal = await _rate_limit(scope, key.office.key_id)
                if refusal is not None:
                    await send_json(
                        send,
                        429,
                        error_payload(429, "RATE_LIMITED", "Too many requests", refusal.details()),
                        refusal.headers(),
                    )
                    return
        await self.app(scope, _key_checked(key, scope, receive), send)
