"""Who calls: an office's API key or a signed-in user's session; which paths need neither,
the office either resolves to, each route's scope (keys) and roles (users).

The key or the session cookie is resolved by the request middleware
(``officehub.kit.middleware.api_key``) before any body is read; ``OfficeDep`` reads what it
found and checks the route's scope and roles. Whoever it is, the request's ``Actor`` is at
``request.state.actor`` (``ActorDep``): the one place the audit trail reads it from.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.errors import Forbidden, Unauthorized

API_KEY_HEADER = "x-service-api-key"
api_key_scheme = APIKeyHeader(
    name=API_KEY_HEADER, auto_error=False, description="The office's API key"
)

# The one list of paths that need no API key: operations, the API's own description and
# its assets, the console's static files (the page holds no data; its calls carry a key),
# signed media links, and channels' inbound webhooks (authenticated by their signature).
# Signing in and accepting an invitation are keyless too (they make the session).
KEYLESS_PATHS = frozenset(
    {
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
        "/docs",
        "/redoc",
        "/console",
        "/auth/login",
        "/auth/login/totp",
        "/auth/invite/accept",
    }
)
KEYLESS_PREFIXES = ("/docs/", "/docs-assets/", "/media/", "/channels/", "/webchat/", "/console/")

# read: every GET; write: every other change; webhooks: webhooks and their deliveries
# (they hold secrets), read or written; edit:customer: partner links (the spec's permission);
# admin: erasure and legal holds (issue 30); audit: the audit trail (an administrator's: who
# read and changed what).
SCOPES = ("read", "write", "webhooks", "edit:customer", "admin", "audit")
READ, WRITE, WEBHOOKS, EDIT_CUSTOMER, ADMIN_SCOPE, AUDIT = SCOPES
# Routers whose routes all need one scope, whatever the method.
TAG_SCOPES = {"Webhooks": WEBHOOKS, "Partner links": EDIT_CUSTOMER}
SCOPE_EXTRA = "x-required-scope"
MISSING_KEY = (
    f"Send the office API key in the {API_KEY_HEADER} header, or sign in (POST /auth/login)"
)
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


ROLES = ("ADMIN", "SUPERVISOR", "AGENT")
ADMIN, SUPERVISOR, AGENT = ROLES
ROLES_EXTRA = "x-allowed-roles"
EVERYONE = frozenset(ROLES)
MANAGERS = frozenset({ADMIN, SUPERVISOR})
ADMINS = frozenset({ADMIN})
# The roles a signed-in user needs, by the route's tag: (reads, changes). ADMIN: everything
# (users, keys, webhooks, settings); SUPERVISOR: their inboxes' conversations and cards,
# reports, the office's working lists (tags, fast messages, funnels); AGENT: their inboxes'
# conversations and cards. A route's own ``role_override`` wins. A tag missing here leaves
# its routes ADMIN-only at run time and fails tests/test_roles.py (the role matrix).
TAG_ROLES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "Accounts": (EVERYONE, EVERYONE),
    "Inboxes": (EVERYONE, ADMINS),
    "Integrations": (EVERYONE, ADMINS),
    "Departments": (EVERYONE, ADMINS),
    "Users": (EVERYONE, ADMINS),
    "Legal areas": (EVERYONE, ADMINS),
    # Issue 32: service levels are the office's settings; everyone sees the due times.
    "SLA policies": (EVERYONE, ADMINS),
    "Tags": (EVERYONE, MANAGERS),
    "Fast messages": (EVERYONE, MANAGERS),
    "Tickets": (EVERYONE, EVERYONE),
    "Contacts": (EVERYONE, EVERYONE),
    "Official-channel templates": (EVERYONE, ADMINS),
    "Partner links": (ADMINS, ADMINS),
    "Conversations": (EVERYONE, EVERYONE),
    "Messages": (EVERYONE, EVERYONE),
    "CRM": (EVERYONE, EVERYONE),
    "Webhooks": (ADMINS, ADMINS),
    "Automation rules": (ADMINS, ADMINS),
    "Flows": (MANAGERS, ADMINS),
    "Cases": (EVERYONE, EVERYONE),
    "Case notices": (EVERYONE, MANAGERS),
    "Publications": (EVERYONE, ADMINS),
    "Dashboard": (MANAGERS, MANAGERS),
    "Live": (EVERYONE, EVERYONE),
    # Issue 30: a conversation's signed evidence (and the key that checks it) for supervisors
    # and admins; the audit trail for admins only.
    "Evidence": (MANAGERS, ADMINS),
    "Audit": (ADMINS, ADMINS),
    # Issue 30: the office's own settings (opt-out keywords so far).
    "Office": (ADMINS, ADMINS),
}
MISSING_ROLE = "Your role does not allow this operation"

# A signed-in user's scopes are their role's, and no more (issue 39): the one table of them,
# written out in docs/security.md ("Roles and their scopes"), whose test walks every route.
# A route is a role's when its tag's rule (or override) names the role and the role holds
# the route's scope: a supervisor or an agent never reaches the webhooks', partner links',
# admin or audit routes, whatever a tag says.
ROLE_SCOPES: dict[str, frozenset[str]] = {
    ADMIN: frozenset(SCOPES),
    SUPERVISOR: frozenset({READ, WRITE}),
    AGENT: frozenset({READ, WRITE}),
}
GRANT_ABOVE_OWN = "Nobody grants a role or scope above their own"


def role_override(*roles: str) -> dict[str, Any]:
    """``openapi_extra=`` of a route whose roles are not the ones its method and tag give."""
    unknown = set(roles) - EVERYONE
    if unknown or not roles:
        raise ValueError(f"unknown roles {sorted(unknown)}")
    return {ROLES_EXTRA: sorted(roles)}


def roles_of(
    methods: Iterable[str], tags: Iterable[Any], extra: Mapping[str, Any]
) -> frozenset[str] | None:
    """The route's own override, else its tag's rule; ``None``: no rule (ADMIN only). Only
    the roles whose scopes (``ROLE_SCOPES``) hold the route's scope are kept."""
    methods, tags = set(methods), list(tags)
    found: frozenset[str] | None = None
    override = extra.get(ROLES_EXTRA)
    if isinstance(override, list):
        found = frozenset(override)
    else:
        for tag in tags:
            if isinstance(tag, str) and tag in TAG_ROLES:
                reads, changes = TAG_ROLES[tag]
                found = reads if methods <= {"GET", "HEAD"} else changes
                break
    if found is None:
        return None
    scope = scope_of(methods, tags, extra)
    return frozenset(role for role in found if scope in ROLE_SCOPES[role])


def allowed_roles(route: APIRoute) -> frozenset[str]:
    found = roles_of(route.methods or set(), route.tags, route.openapi_extra or {})
    return ADMINS if found is None else found


_ROUTE_RULES = "_officehub_rules"


def route_rules(route: APIRoute) -> tuple[str, frozenset[str]]:
    """``required_scope(route)`` and ``allowed_roles(route)``, worked out on the route's first
    request and kept on the route (a route's methods, tags and extras do not change once the
    app is built): the request path asks for them on every request."""
    rules: tuple[str, frozenset[str]] | None = route.__dict__.get(_ROUTE_RULES)
    if rules is None:
        rules = (required_scope(route), allowed_roles(route))
        route.__dict__[_ROUTE_RULES] = rules
    return rules


@dataclass(frozen=True)
class Actor:
    """Who acts, as the audit names them: a signed-in user (``kind`` ``user``, ``id`` the
    user's id, ``role`` theirs), an API key (``kind`` ``apikey``, ``id`` the key's id,
    ``role`` ``None``: a key's scopes rule it) or the service itself (``kind`` ``system``,
    ``id`` e.g. ``worker:retention``; ``officehub.kit.actor.system_actor``). A user's inboxes
    and their ``onlyAssignedConversations`` setting narrow the records they see.
    ``address`` is the client's address (``officehub.kit.actor.actor_of`` adds it to the
    caller the API key layer found); empty when no request came in."""

    kind: Literal["user", "apikey", "system"]
    id: str
    role: str | None = None
    office_id: str = ""
    session_id: str | None = None
    inbox_ids: frozenset[str] = frozenset()
    only_assigned_conversations: bool = False
    address: str = ""

    @property
    def label(self) -> str:
        """``apikey:<id>``, ``user:<id>`` or ``system:<name>``: how a record names who did
        something."""
        return f"{self.kind}:{self.id}"

    @property
    def is_user(self) -> bool:
        return self.kind == "user"

    def require_role(self, roles: frozenset[str]) -> None:
        if self.kind == "user" and self.role not in roles:
            raise Forbidden(
                MISSING_ROLE,
                code="MISSING_PERMISSION",
                details=f"This operation needs one of the roles {', '.join(sorted(roles))}",
            )


@dataclass(frozen=True)
class OfficeContext:
    office_id: str
    key_id: str
    permissions: frozenset[str]
    actor: Actor | None = None

    def require(self, permission: str) -> None:
        if permission not in self.permissions:
            raise Forbidden(MISSING_SCOPE, code="MISSING_PERMISSION", details=needs(permission))

    def require_grant(self, role: str) -> None:
        """403 unless the caller holds every scope of ``role``: making, changing, inviting or
        resetting a user of that role hands its scopes on (a key holding ``admin`` but not
        ``audit`` cannot make an ADMIN, nor take over one by a password reset)."""
        missing = sorted(ROLE_SCOPES.get(role, frozenset(SCOPES)) - self.permissions)
        if missing:
            raise Forbidden(
                GRANT_ABOVE_OWN,
                code="MISSING_PERMISSION",
                details=f"The role {role} holds scopes the caller lacks: {', '.join(missing)}",
            )

    @cached_property
    def who(self) -> Actor:
        """The user of a session, else the key (``kind`` ``apikey``); made once per context
        (a cached key's context serves many requests)."""
        if self.actor is not None:
            return self.actor
        return Actor("apikey", self.key_id, None, self.office_id)


@dataclass(frozen=True)
class KeyOutcome:
    """What the middleware found: the office (of a key or a session), or why there is none.
    ``csrf_hash``: a session's CSRF token's SHA-256 (unsafe methods must send the token)."""

    office: OfficeContext | None
    problem: str = ""
    csrf_hash: str = ""


UNKNOWN_KEY = "The API key is unknown or revoked"


class KeyCache:
    """The offices of keys this process resolved, by the key's SHA-256, each for ``ttl`` s.

    A revoked (or deleted) key is refused by every process within ``ttl`` seconds: no
    process trusts what it read longer than that. Unknown keys are not kept (a key made a
    moment ago works at once), and at most ``size`` keys are: when full, it starts over.

    Lookups are single-flight (``resolve``): while one lookup of a hash is under way, other
    requests with the same key await it instead of sending their own select, so the 16
    requests that find an entry expired at the same moment cost one lookup, not 16.
    """

    def __init__(
        self, ttl: float, size: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.size = size
        self.clock = clock
        self._entries: dict[str, tuple[float, OfficeContext]] = {}
        self._flights: dict[str, asyncio.Task[OfficeContext | None]] = {}

    def get(self, key_hash: str) -> OfficeContext | None:
        entry = self._entries.get(key_hash)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            del self._entries[key_hash]
            return None
        return entry[1]

    def put(self, key_hash: str, office: OfficeContext) -> None:
        if self.ttl <= 0:
            return
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key_hash] = (self.clock() + self.ttl, office)

    async def resolve(
        self, key_hash: str, load: Callable[[], Awaitable[OfficeContext | None]]
    ) -> OfficeContext | None:
        """The cached office of ``key_hash``, else what ``load`` finds (kept if found).

        One ``load`` per hash at a time: the lookup runs as a task of its own that every
        request asking meanwhile awaits (shielded: a request that goes away cancels only its
        wait, not the others' lookup). A failed lookup fails its waiters; the next asks again.
        """
        office = self.get(key_hash)
        if office is not None:
            return office
        flight = self._flights.get(key_hash)
        if flight is None:
            flight = asyncio.ensure_future(self._load(key_hash, load))
            self._flights[key_hash] = flight
            flight.add_done_callback(lambda done: self._landed(key_hash, done))
        return await asyncio.shield(flight)

    async def _load(
        self, key_hash: str, load: Callable[[], Awaitable[OfficeContext | None]]
    ) -> OfficeContext | None:
        office = await load()
        if office is not None:
            self.put(key_hash, office)
        return office

    def _landed(self, key_hash: str, flight: asyncio.Task[OfficeContext | None]) -> None:
        if self._flights.get(key_hash) is flight:
            del self._flights[key_hash]
        if not flight.cancelled():
            flight.exception()  # retrieved: no "never retrieved" warning if nobody waited


def hash_key(key: str) -> str:
    """An API key as stored and looked up (its SHA-256, hex)."""
    return hashlib.sha256(key.encode()).hexdigest()


KeyResolver = Callable[[AsyncSession, str], Awaitable[OfficeContext | None]]
"""The office of an unrevoked key's hash, or ``None``: the offices domain's
(``offices.service.office_of_key_hash``), which ``officehub.hook_subscriptions.install`` hands over
with ``use_key_resolver`` (this module sits below the offices domain and imports none)."""

_key_resolver: KeyResolver | None = None


class KeysNotWired(RuntimeError):
    """A key was looked up with no resolver: the wiring's ``install()`` never ran."""


def use_key_resolver(resolver: KeyResolver) -> None:
    global _key_resolver
    _key_resolver = resolver


async def lookup_key(
    open_session: Callable[[], AsyncSession], key: str, cache: KeyCache | None = None
) -> KeyOutcome:
    """The office of ``key``: from ``cache`` when it holds the key, else one indexed select
    in a session of its own (opened only then; one at a time per key, see ``KeyCache``)."""
    key_hash = hash_key(key)
    resolve = _key_resolver
    if resolve is None:
        raise KeysNotWired(
            "No API key resolver: call officehub.hook_subscriptions.install() in this process first"
        )

    async def load() -> OfficeContext | None:
        async with open_session() as session:
            return await resolve(session, key_hash)

    office = await (load() if cache is None else cache.resolve(key_hash, load))
    return KeyOutcome(None, UNKNOWN_KEY) if office is None else KeyOutcome(office)


SESSION_COOKIE = "officehub_session"
CSRF_HEADER = "x-csrf-token"

SessionResolver = Callable[[Any, str], Awaitable[KeyOutcome]]
"""A session cookie's outcome: the accounts domain's (``accounts.sessions.resolve``), handed
over by ``officehub.hook_subscriptions.install`` with ``use_session_resolver``; it is given the
app's state (its session makers and settings) and the cookie's value."""

_session_resolver: SessionResolver | None = None


def use_session_resolver(resolver: SessionResolver) -> None:
    global _session_resolver
    _session_resolver = resolver


async def lookup_session(app_state: Any, token: str) -> KeyOutcome:
    resolve = _session_resolver
    if resolve is None:
        raise KeysNotWired(
            "No session resolver: call officehub.hook_subscriptions.install() in this process"
        )
    return await resolve(app_state, token)


async def current_office(request: Request) -> OfficeContext:
    """The office of the key or session the middleware resolved, checked for the route's
    scope (a key) or roles (a user).

    It reads no header itself (the middleware did): no ``APIKeyHeader`` sub-dependency to
    solve on every request. The OpenAPI document declares the scheme (``security_schemes``)
    and each operation's ``security`` (``officehub.app``)."""
    outcome = request.scope.get("state", {}).get("key")
    if not isinstance(outcome, KeyOutcome) or outcome.office is None:
        problem = outcome.problem if isinstance(outcome, KeyOutcome) else "No API key was read"
        raise Unauthorized(details=problem)
    route = request.scope.get("route")
    if isinstance(route, APIRoute):
        # A user is told about their role (which holds its scopes); a key, its scope.
        scope, roles = route_rules(route)
        outcome.office.who.require_role(roles)
        outcome.office.require(scope)
    return outcome.office


OfficeDep = Annotated[OfficeContext, Depends(current_office)]


async def current_actor(office: OfficeDep) -> Actor:
    """The request's actor (the same as ``request.state.actor``), the route's rules checked."""
    return office.who


ActorDep = Annotated[Actor, Depends(current_actor)]


SESSION_SCHEME = "SessionCookie"


def security_schemes() -> dict[str, Any]:
    """``components.securitySchemes`` of the OpenAPI document: the office's API key, or a
    signed-in user's session cookie (changes also need the ``X-CSRF-Token`` header)."""
    model = api_key_scheme.model.model_dump(by_alias=True, exclude_none=True, mode="json")
    session = {
        "type": "apiKey",
        "in": "cookie",
        "name": SESSION_COOKIE,
        "description": "A signed-in user's session (POST /auth/login); every change made "
        "with it also sends the X-CSRF-Token header",
    }
    return {api_key_scheme.scheme_name: model, SESSION_SCHEME: session}
