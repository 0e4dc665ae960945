"""The API key (or, without one, the session cookie), resolved before the app runs, so that
no byte of a body is read for a request without a valid key holding the route's scope or a
session whose user's role the route allows (FastAPI reads a body before it solves
dependencies): the first ``receive`` of such a request answers 401 (403 for a missing scope
or role). A key (or user) over its rate limit is answered 429 here, and an unsafe method on a
session without its ``X-CSRF-Token`` 403 ``CSRF_FAILED``. ``OfficeDep`` reads what this
layer found (``scope["state"]["key"]``); the actor is ``scope["state"]["actor"]``
(``request.state.actor``).
"""

from __future__ import annotations

import hmac
from http.cookies import SimpleCookie
from typing import Any

from fastapi.routing import APIRoute
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.kit.actor import actor_of, current_actor
from officehub.kit.auth import (
    API_KEY_HEADER,
    CSRF_HEADER,
    MISSING_KEY,
    MISSING_ROLE,
    SESSION_COOKIE,
    KeyOutcome,
    hash_key,
    is_keyless,
    lookup_key,
    lookup_session,
    needs,
    route_rules,
)
from officehub.kit.errors import error_payload
from officehub.kit.middleware.headers import first_header
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


class BodyWithoutRole(HTTPException):
    """Raised from the first ``receive`` when the user's role may not use the route."""

    code = "MISSING_PERMISSION"
    message = MISSING_ROLE

    def __init__(self) -> None:
        super().__init__(403, "This operation needs another role")


_API_KEY_NAME = API_KEY_HEADER.lower().encode("latin-1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_PROBLEM = f"A signed-in session must send its CSRF token in the {CSRF_HEADER} header"


def session_cookie(headers: Headers) -> str:
    """The session cookie's value, or ``""``."""
    raw = headers.get("cookie")
    if not raw:
        return ""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header carries no session
        return ""
    morsel = jar.get(SESSION_COOKIE)
    return morsel.value if morsel is not None else ""


async def _resolve(scope: Scope) -> KeyOutcome:
    """The office of the request's key: from the process's key cache, else one lookup by
    the key's hash in a read-only session of its own. Without a key, the session cookie's
    (looked up every request: a revoked session or deactivated user ends at once)."""
    key = first_header(scope, _API_KEY_NAME)
    state = scope["app"].state
    if not key:
        token = session_cookie(Headers(scope=scope))
        if token:
            return await lookup_session(state, token)
        return KeyOutcome(None, MISSING_KEY)
    return await lookup_key(state.read_sessionmaker, key, getattr(state, "key_cache", None))


def _csrf_passes(scope: Scope, outcome: KeyOutcome) -> bool:
    if not outcome.csrf_hash or scope["method"] in SAFE_METHODS:
        return True
    sent = Headers(scope=scope).get(CSRF_HEADER, "")
    return bool(sent) and hmac.compare_digest(hash_key(sent), outcome.csrf_hash)


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
                actor = key.office.who
                scope_needed, roles = route_rules(route)
                if actor.is_user and actor.role not in roles:
                    raise BodyWithoutRole()  # before the scope: a role holds its scopes
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
                state["actor"] = key.office.who
                if not _csrf_passes(scope, key):
                    await send_json(
                        send,
                        403,
                        error_payload(403, "CSRF_FAILED", "CSRF check failed", CSRF_PROBLEM),
                    )
                    return
                refusal = await _rate_limit(scope, key.office.key_id)
                if refusal is not None:
                    await send_json(
                        send,
                        429,
                        error_payload(429, "RATE_LIMITED", "Too many requests", refusal.details()),
                        refusal.headers(),
                    )
                    return
        actor = current_actor.set(actor_of(scope))
        try:
            await self.app(scope, _key_checked(key, scope, receive), send)
        finally:
            current_actor.reset(actor)
