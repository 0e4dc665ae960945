"""API keys: which paths need one, the office a key resolves to, and each route's scope.

The key is resolved by the request middleware (``officehub.middleware``) before any body
is read; ``OfficeDep`` reads what it found and checks the route's scope.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.errors import Forbidden, Unauthorized
from officehub.offices.service import PERMISSIONS, resolve_key

API_KEY_HEADER = "x-service-api-key"
api_key_scheme = APIKeyHeader(
    name=API_KEY_HEADER, auto_error=False, description="The office's API key"
)

# The one list of paths that need no API key: operations, the API's own description and
# its assets, signed media links, and channels' inbound webhooks (authenticated by their
# signature).
KEYLESS_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/redoc"})
KEYLESS_PREFIXES = ("/docs/", "/docs-assets/", "/media/", "/channels/", "/webchat/")

# read: every GET; write: every other change; webhooks: webhooks and their deliveries
# (they hold secrets), read or written; edit:customer: partner links (the spec's permission).
SCOPES = PERMISSIONS
READ, WRITE, WEBHOOKS, EDIT_CUSTOMER = SCOPES
# Routers whose routes all need one scope, whatever the method.
TAG_SCOPES = {"Webhooks": WEBHOOKS, "Partner links": EDIT_CUSTOMER}
SCOPE_EXTRA = "x-required-scope"
MISSING_KEY = f"Send the office API key in the {API_KEY_HEADER} header"
MISSING_SCOPE = "The API key lacks the scope this operation needs"


def needs(scope: str) -> str:
    return f"This operation needs the scope {scope}"


def is_keyless(path: str) -> bool:
    return path in KEYLESS_PATHS or path.startswith(KEYLESS_PREFIXES)


def scope_override(scope: str) -> dict[str, Any]:
    """``openapi_extra=`` of a route whose scope is not the one its method and tag give."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope}")
    return {SCOPE_EXTRA: scope}


def required_scope(route: APIRoute) -> str:
    return scope_of(route.methods or set(), route.tags, route.openapi_extra or {})


def scope_of(methods: Iterable[str], tags: Iterable[Any], extra: Mapping[str, Any]) -> str:
    """The route's own override, else its router's tag, else ``read`` for GET, ``write``."""
    override = extra.get(SCOPE_EXTRA)
    if isinstance(override, str):
        return override
    for tag in tags:
        if isinstance(tag, str) and tag in TAG_SCOPES:
            return TAG_SCOPES[tag]
    return READ if set(methods) <= {"GET", "HEAD"} else WRITE


@dataclass(frozen=True)
class OfficeContext:
    office_id: str
    key_id: str
    permissions: frozenset[str]

    def require(self, permission: str) -> None:
        if permission not in self.permissions:
            raise Forbidden(MISSING_SCOPE, code="MISSING_PERMISSION", details=needs(permission))


@dataclass(frozen=True)
class KeyOutcome:
    """What the middleware found: the office, or why there is none."""

    office: OfficeContext | None
    problem: str = ""


async def lookup_key(session: AsyncSession, key: str) -> KeyOutcome:
    record = await resolve_key(session, key)
    if record is None:
        return KeyOutcome(None, "The API key is unknown or revoked")
    return KeyOutcome(OfficeContext(record.office_id, record.id, frozenset(record.permissions)))


async def current_office(
    request: Request, _key: Annotated[str | None, Depends(api_key_scheme)]
) -> OfficeContext:
    """The office of the key the middleware resolved, checked for the route's scope."""
    outcome = request.scope.get("state", {}).get("key")
    if not isinstance(outcome, KeyOutcome) or outcome.office is None:
        problem = outcome.problem if isinstance(outcome, KeyOutcome) else "No API key was read"
        raise Unauthorized(details=problem)
    route = request.scope.get("route")
    if isinstance(route, APIRoute):
        outcome.office.require(required_scope(route))
    return outcome.office


OfficeDep = Annotated[OfficeContext, Depends(current_office)]
