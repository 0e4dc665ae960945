"""The request layer that records the audit trail: every change, and every read of a
contact, conversation (its messages, notes, evidence), card or case, that succeeded.

It runs inside the API key layer (the actor is known: ``officehub.kit.actor``) and after
the route answered (the route matched, its path parameters parsed). It only appends to
the recorder's buffer (``officehub.audit.recorder``): no statement on the request's path.

What an entry says: ``action`` is the operation's ``operationId`` (``getContact``,
``listMessages``, ``updateCard``); ``recordType`` comes from the path's first segment;
``recordId`` is the path's record id (for a creation, the ``id`` of the answer's body);
``personId`` the contact concerned: the record itself for a contact, a ``personId`` of the
path or query, else the contact of the conversation, card or case (found when the batch is
written).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from officehub.audit.recorder import AuditRecorder, Pending
from officehub.kit.actor import current_actor
from officehub.kit.ids import ID_RE
from officehub.kit.operation_ids import operation_id
from officehub.kit.timeutil import utcnow

RECORD_TYPES = {
    "people": "contact",
    "conversation": "conversation",
    "funnel-column-card": "card",
    "cases": "case",
    "case-movements": "case",
}
"""Path first segment → record type, where the two differ or reads are audited."""

AUDITED_READS = frozenset({"contact", "conversation", "card", "case"})
"""Reads of these are recorded (an export is a contact's: ``/people/{id}/export``)."""

READS = frozenset({"GET", "HEAD", "OPTIONS"})
CHANGES_NOTHING = frozenset({"checkFlow"})
"""Operations (``operationId``) sent by POST that change nothing and read no client's
record (``POST /flow/check``): not recorded, as other reads of office settings are not."""
_BODY_ID_LIMIT = 64 * 1024


def record_type_of(path: str) -> str:
    first = path.strip("/").split("/", 1)[0]
    return RECORD_TYPES.get(first, first or "service")


_ROUTE_FACTS = "_officehub_audit"


def _route_facts(route: APIRoute) -> tuple[str, str]:
    """The route's record type and ``operationId``, worked out on its first request and kept
    on the route (neither changes once the app is built)."""
    facts: tuple[str, str] | None = route.__dict__.get(_ROUTE_FACTS)
    if facts is None:
        facts = (record_type_of(route.path_format), operation_id(route))
        route.__dict__[_ROUTE_FACTS] = facts
    return facts


def _record_id(route: APIRoute, params: dict[str, Any]) -> str | None:
    for name in ("id", "contactId", "conversationId", "personId", "webhookId", "integrationId"):
        value = params.get(name)
        if isinstance(value, str) and f"{{{name}}}" in route.path_format:
            return value
    return None


def _person_id(record_type: str, record_id: str | None, scope: Scope) -> str | None:
    if record_type == "contact" and record_id is not None:
        return record_id
    params = scope.get("path_params", {})
    for name in ("personId", "contactId"):
        if isinstance(params.get(name), str):
            return str(params[name])
    query: str = scope.get("query_string", b"").decode("latin-1")
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if name == "personId" and ID_RE.fullmatch(value):
            return value
    return None


class AuditMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        actor = current_actor.get()
        if scope["type"] != "http" or actor is None:
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        status = 0
        creation = method == "POST"
        body = bytearray()

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif creation and message["type"] == "http.response.body" and status == 201:
                if len(body) < _BODY_ID_LIMIT:
                    body.extend(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, watched)
        route = scope.get("route")
        if not isinstance(route, APIRoute) or not 200 <= status < 400:
            return
        record_type, action = _route_facts(route)
        if method in READS and record_type not in AUDITED_READS:
            return
        if action in CHANGES_NOTHING:
            return
        recorder: AuditRecorder | None = getattr(scope["app"].state, "audit", None)
        office_id = scope.get("state", {}).get("office_id")
        if recorder is None or not isinstance(office_id, str):
            return
        record_id = _record_id(route, scope.get("path_params", {}))
        if record_id is None and status == 201 and body:
            record_id = _created_id(bytes(body))
        recorder.record(
            Pending(
                office_id=office_id,
                at=utcnow(),
                actor=actor,
                action=action,
                record_type=record_type,
                record_id=record_id,
                person_id=_person_id(record_type, record_id, scope),
            )
        )


def _created_id(body: bytes) -> str | None:
    try:
        created = json.loads(body)
    except ValueError:
        return None
    ident = created.get("id") if isinstance(created, dict) else None
    return ident if isinstance(ident, str) and len(ident) <= 64 else None
