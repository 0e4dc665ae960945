"""The event catalogue: the names webhooks subscribe to and automation rules trigger on,
and each one's payload model (declared by the domain that emits it: ``declare``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, WithJsonSchema
from typing_extensions import TypeAliasType

_AT = "2026-01-01T12:00:00.000Z"
_TAG = {"id": "cm3k9x2f7000aabcd1234efgh", "name": "urgente", "color": "#E53935"}
_PERSON: dict[str, Any] = {
    "id": "cm3k9x2f70000abcd1234efgh",
    "name": "Maria Souza",
    "phone": "+5511987654321",
    "whatsappId": "551187654321",
    "whatsappUserId": "BR.1502576394655843",
    "username": "maria.souza",
    "email": "maria@example.com",
    "document": None,
    "description": None,
    "inboxId": "cm3k9x2f70005abcd1234efgh",
    "isBlocked": False,
    "imageUrl": None,
    "marketingOptOut": False,
    "legalHold": False,
    "legalHoldReason": None,
    "verified": True,
    "claimedPhone": None,
    "claimedEmail": None,
    "tags": [_TAG],
    "createdAt": _AT,
    "updatedAt": _AT,
}
_CARD: dict[str, Any] = {
    "id": "cm3k9x2f70001abcd1234efgh",
    "funnelId": "cm3k9x2f70002abcd1234efgh",
    "columnId": "cm3k9x2f70003abcd1234efgh",
    "personId": _PERSON["id"],
    "conversationId": "cm3k9x2f70004abcd1234efgh",
    "userId": None,
    "legalAreaId": None,
    "columnChangedAt": _AT,
}
_CONVERSATION: dict[str, Any] = {
    "id": "cm3k9x2f70004abcd1234efgh",
    "personId": _PERSON["id"],
    "inboxId": "cm3k9x2f70005abcd1234efgh",
    "integrationId": "cm3k9x2f70006abcd1234efgh",
    "status": "OPEN",
    "priority": "MEDIUM",
    "assignedUserId": None,
    "departmentId": None,
    "legalAreaId": None,
    "lastMessageAt": None,
    "tags": [_TAG],
    "createdAt": _AT,
    "updatedAt": _AT,
    "isFixed": False,
    "isArchived": False,
    "unreadCount": 0,
    "lastMessage": None,
    "responsables": [],
    "sla": None,
    "firstInboundAt": None,
    "firstResponseAt": None,
    "awaitingSince": None,
    "resolvedAt": None,
}
_MESSAGE: dict[str, Any] = {
    "id": "cm3k9x2f70007abcd1234efgh",
    "conversationId": _CONVERSATION["id"],
    "direction": "INBOUND",
    "type": "TEXT",
    "text": "Bom dia, preciso de ajuda com um processo",
    "templateName": None,
    "mediaUrl": None,
    "status": "RECEIVED",
    "externalId": "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjBDMEY3",
    "error": None,
    "errorDetail": None,
    "pricing": None,
    "createdAt": _AT,
    "content": None,
    "replyTo": None,
    "replyToExternalId": None,
    "forwarded": False,
    "reactions": [],
    "originalText": None,
    "editedAt": None,
    "deletedAt": None,
}

_CASE: dict[str, Any] = {
    "id": "cm3k9x2f7000cabcd1234efgh",
    "personId": _PERSON["id"],
    "conversationId": _CONVERSATION["id"],
    "legalAreaId": None,
    "number": "1009131-52.2024.8.26.0224",
    "court": "tjsp",
    "courtName": "Tribunal de Justiça - São Paulo",
    "watch": True,
    "nextCheckAt": "2026-01-01T18:00:00.000Z",
    "lastCheckedAt": _AT,
    "lastMovementAt": "2026-01-01T09:30:00.000Z",
    "checkStatus": "OK",
    "sourceStaleSince": None,
    "createdAt": _AT,
    "updatedAt": _AT,
}
_CASE_MOVEMENT: dict[str, Any] = {
    "id": "cm3k9x2f7000dabcd1234efgh",
    "caseId": _CASE["id"],
    "personId": _PERSON["id"],
    "caseNumber": _CASE["number"],
    "code": 85,
    "description": "Petição - Petição (outras)",
    "explanation": "Foi juntado ao processo um documento de uma das partes: Petição (outras).",
    "category": "filing",
    "occurredAt": "2026-01-01T09:30:00.000Z",
    "createdAt": _AT,
    "court": "tjsp",
    "conversationId": _CONVERSATION["id"],
}
_PUBLICATION: dict[str, Any] = {
    "id": "cm3k9x2f7000gabcd1234efgh",
    "lawyerId": "cm3k9x2f7000habcd1234efgh",
    "caseId": _CASE["id"],
    "ticketId": "cm3k9x2f7000iabcd1234efgh",
    "djenId": 248164095,
    "hash": "geNaPz7wY5Efy1Mc8T9ewzlYBMJpDr",
    "madeAvailableOn": "2026-03-27",
    "publishedOn": "2026-03-30",
    "court": "TJSP",
    "kind": "Intimação",
    "category": "INTIMATION",
    "organ": "27ª Vara Cível da Comarca da Capital",
    "text": "Intimação da sentença proferida nos autos.",
    "caseNumber": "1009131-52.2024.8.26.0224",
    "link": None,
    "certificateUrl": "https://comunicaapi.pje.jus.br/api/v1/comunicacao/"
    "geNaPz7wY5Efy1Mc8T9ewzlYBMJpDr/certidao",
    "read": False,
    "readAt": None,
    "deadlineDays": 5,
    "deadlineDaysSource": "KIND",
    "deadlineOn": "2026-04-07",
    "deadlineAt": "2026-04-08T02:59:59.999Z",
    "deadlineCalendar": "CPC_BUSINESS_DAYS",
    "createdAt": _AT,
    "updatedAt": _AT,
}
_CASE_NOTICE: dict[str, Any] = {
    "id": "cm3k9x2f7000eabcd1234efgh",
    "caseId": _CASE["id"],
    "movementId": _CASE_MOVEMENT["id"],
    "personId": _PERSON["id"],
    "conversationId": _CONVERSATION["id"],
    "caseNumber": _CASE["number"],
    "movementDescription": "Julgamento - Com Resolução do Mérito - Procedência",
    "category": "decision",
    "explanation": "O juiz deu razão ao pedido: a ação foi julgada procedente. Ainda pode "
    "haver recurso da outra parte.",
    "text": "Olá, Maria! Há uma novidade no seu processo nº 1009131-52.2024.8.26.0224, "
    "registrada em 01/01/2026: O juiz deu razão ao pedido: a ação foi julgada procedente. "
    "Ainda pode haver recurso da outra parte. Em caso de dúvida, é só responder esta mensagem.",
    "status": "PENDING",
    "sendAfter": None,
    "sentAs": None,
    "messageId": None,
    "messageStatus": None,
    "error": None,
    "occurredAt": "2026-01-01T09:30:00.000Z",
    "approvedAt": None,
    "sentAt": None,
    "createdAt": _AT,
    "updatedAt": _AT,
}

_TEMPLATE: dict[str, Any] = {
    "name": "lembrete_audiencia",
    "status": "REJECTED",
    "category": "UTILITY",
    "language": "pt_BR",
    "components": [{"type": "BODY", "text": "Olá {{1}}, sua audiência é em {{2}}."}],
    "id": "594425479261596",
    "platformStatus": "REJECTED",
    "rejectedReason": "INVALID_FORMAT",
    "qualityScore": None,
    "integrationId": "cm3k9x2f70006abcd1234efgh",
    "changes": ["status", "platformStatus", "rejectedReason"],
}

Group = Literal["CRM", "Chat", "Contact", "Case", "Template", "Webhook", "Test"]


@dataclass(frozen=True)
class EventType:
    name: str
    group: Group
    description: str
    example: dict[str, Any] = field(default_factory=dict)


EVENT_TYPES: tuple[EventType, ...] = (
    EventType("crm.lead.created", "CRM", "A CRM card was created", _CARD),
    EventType(
        "crm.lead.updated",
        "CRM",
        "A card's owner, legal area, custom fields, tags or origin changed",
        {**_CARD, "userId": "cm3k9x2f70009abcd1234efgh", "changes": ["userId"]},
    ),
    EventType("crm.lead.deleted", "CRM", "A CRM card was removed", _CARD),
    EventType(
        "crm.lead.moved",
        "CRM",
        "A card changed column",
        {**_CARD, "fromColumnId": "cm3k9x2f70008abcd1234efgh", "toColumnId": _CARD["columnId"]},
    ),
    EventType(
        "crm.lead.overdue",
        "CRM",
        "A card stayed in its column longer than the column's timeLimitDays (once per stay)",
        {**_CARD, "timeLimitDays": 3},
    ),
    EventType("chat.conversation.created", "Chat", "A conversation was created", _CONVERSATION),
    EventType(
        "chat.conversation.updated",
        "Chat",
        "A conversation's status, priority or tags changed",
        _CONVERSATION,
    ),
    EventType(
        "chat.conversation.assigned",
        "Chat",
        "A conversation's assigned user or department changed",
        {
            **_CONVERSATION,
            "assignedUserId": "cm3k9x2f70009abcd1234efgh",
            "previousAssignedUserId": None,
            "previousDepartmentId": None,
        },
    ),
    EventType(
        "chat.sla.breached",
        "Chat",
        "A conversation missed a due time of its SLA policy (first response, next response "
        "or resolution): once per due time",
        {
            **_CONVERSATION,
            "firstInboundAt": _AT,
            "sla": {
                "policyId": "cm3k9x2f7000aabcd1234efgh",
                "firstResponseDueAt": _AT,
                "nextResponseDueAt": None,
                "resolutionDueAt": _AT,
                "breachedAt": _AT,
            },
            "breach": "FIRST_RESPONSE",
            "dueAt": _AT,
        },
    ),
    EventType(
        "chat.webchat.flooded",
        "Chat",
        "A web chat integration refused new chats: more were started than "
        "OFFICEHUB_WEBCHAT_STARTS_PER_INTEGRATION allows (each refused with 429); at most once "
        "per integration every 10 minutes in each API process",
        {
            "integrationId": _CONVERSATION["integrationId"],
            "inboxId": _CONVERSATION["inboxId"],
            "limit": "60 per 1 minute",
            "retryAfterSeconds": 42,
        },
    ),
    EventType("chat.message.received", "Chat", "An inbound message was stored", _MESSAGE),
    EventType(
        "chat.message.sent",
        "Chat",
        "An outbound message was stored",
        {
            **_MESSAGE,
            "direction": "OUTBOUND",
            "text": "Olá! Como podemos ajudar?",
            "status": "QUEUED",
            "externalId": None,
        },
    ),
    EventType(
        "chat.message.status",
        "Chat",
        "An outbound message's delivery status changed (SENT, DELIVERED, READ, FAILED)",
        {
            **_MESSAGE,
            "direction": "OUTBOUND",
            "text": "Olá! Como podemos ajudar?",
            "status": "DELIVERED",
            "externalId": "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQ4QkY5",
            "previousStatus": "SENT",
        },
    ),
    EventType(
        "chat.message.updated",
        "Chat",
        "A stored message changed: a reaction was added or removed, or the sender edited "
        "or deleted it (the message as it is now)",
        {
            **_MESSAGE,
            "reactions": [{"emoji": "👍", "from": "CONTACT", "at": _AT}],
        },
    ),
    EventType("contact.created", "Contact", "A contact was created", _PERSON),
    EventType("contact.updated", "Contact", "A contact was changed", _PERSON),
    EventType(
        "contact.deleted",
        "Contact",
        "A contact was deleted, merged into another or erased (ids only)",
        {"id": _PERSON["id"], "erased": False, "mergedIntoId": None},
    ),
    EventType(
        "case.movement.created",
        "Case",
        "A new movement of a watched case was found on DataJud (conversationId: the case's "
        "conversation, else the contact's latest; null when the contact has none)",
        _CASE_MOVEMENT,
    ),
    EventType(
        "case.publication.created",
        "Case",
        "A new court publication (DJEN) naming a lawyer of the office was stored, linked to "
        "the office's case of its number when there is one, with its deadline when it has "
        "one (deadlineAt) and the ticket it opened for the lawyer",
        _PUBLICATION,
    ),
    EventType(
        "case.notice.created",
        "Case",
        "A new movement worth telling made a notice to the case's client: PENDING (the "
        "lawyer approves it first) or APPROVED (the office's settings send it at once)",
        _CASE_NOTICE,
    ),
    EventType(
        "case.notice.sent",
        "Case",
        "A case notice was sent to the client: as text inside the 24-hour window, else as "
        "the office's template (sentAs); messageId is the message sent",
        {
            **_CASE_NOTICE,
            "status": "SENT",
            "sendAfter": None,
            "sentAs": "TEMPLATE",
            "messageId": "cm3k9x2f7000fabcd1234efgh",
            "messageStatus": "QUEUED",
            "approvedAt": _AT,
            "sentAt": _AT,
        },
    ),
    EventType(
        "case.updated",
        "Case",
        "A case changed: its conversation, legal area or watch (PATCH), or a DataJud check "
        "stored movements or changed its status (changes names what)",
        {**_CASE, "changes": ["movements"]},
    ),
    EventType(
        "case.source.stale",
        "Case",
        "DataJud has given no usable answer for a watched case (errors, timeouts, 5xx) for "
        "a day since its first failed check (OFFICEHUB_DATAJUD_STALE_AFTER_SECONDS); once, "
        "until it answers again",
        {
            **_CASE,
            "checkStatus": "ERROR",
            "sourceStaleSince": "2026-01-02T12:00:00.000Z",
            "failingSince": _AT,
            "error": "HTTP 503",
        },
    ),
    EventType(
        "case.source.recovered",
        "Case",
        "DataJud answered again for a case that had gone stale (staleFrom: when it had)",
        {**_CASE, "staleFrom": "2026-01-02T12:00:00.000Z"},
    ),
    EventType(
        "template.updated",
        "Template",
        "The messaging platform changed an official-channel template: its status (with the "
        "platform's own word and a rejection's reason), quality score or category; changes "
        "names what",
        _TEMPLATE,
    ),
    EventType(
        "webhook.endpoint.disabled",
        "Webhook",
        "A webhook was paused because every delivery to it failed for 5 days (its retry "
        "window); sent to the office's other webhooks. Fix the endpoint, set isActive to "
        "true, and recover what failed (POST /webhooks/{id}/recover)",
        {
            "webhookId": "cm3k9x2f7000babcd1234efgh",
            "name": "CRM sync",
            "reason": "Paused automatically: every delivery failed for 5 days (last failure "
            "at 2026-01-06T12:00:00.000Z). Fix the endpoint, then set isActive to true.",
            "failingSince": "2026-01-01T12:00:00.000Z",
            "disabledAt": "2026-01-06T12:00:00.000Z",
        },
    ),
    EventType(
        "webhook.test",
        "Test",
        "Sent by POST /webhooks/{id}/test to that webhook only",
        {
            "webhookId": "cm3k9x2f7000babcd1234efgh",
            "message": "This is a test delivery from officehub",
        },
    ),
)

EVENT_NAMES: frozenset[str] = frozenset(e.name for e in EVENT_TYPES)
EVENT_ENUM: dict[str, Any] = {"enum": sorted(EVENT_NAMES)}
"""``json_schema_extra`` of a field holding an event name: the document lists the catalogue."""
EventName = TypeAliasType(
    "EventName", Annotated[str, WithJsonSchema({"type": "string", "enum": sorted(EVENT_NAMES)})]
)
"""A body field holding an event name (checked by the model's own validator); the
document lists the catalogue in one named component."""
BY_NAME: dict[str, EventType] = {e.name: e for e in EVENT_TYPES}


P = TypeVar("P", bound=BaseModel)


@dataclass(frozen=True)
class Event(Generic[P]):
    """A catalogue event and its payload's model: ``emit`` takes one with an instance of
    the other, so a payload of the wrong shape is a type error."""

    name: str
    payload: type[P]


_PAYLOADS: dict[str, type[BaseModel]] = {}


def declare(name: str, payload: type[P]) -> Event[P]:
    """The payload model of the catalogue event ``name``: said once, in the ``events.py`` of
    the domain that emits it (the catalogue names no domain)."""
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown event {name!r}")
    known = _PAYLOADS.setdefault(name, payload)
    if known is not payload:
        raise ValueError(f"{name!r} already carries {known.__name__}")
    return Event(name, payload)


def payload_model(name: str) -> type[BaseModel]:
    """The model of the event's payload (its domain's ``events`` module once imported)."""
    try:
        return _PAYLOADS[name]
    except KeyError:
        raise LookupError(f"no payload model declared for {name!r}") from None


@cache
def payload_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the event's payload (``data`` of the webhook body), as sent."""
    return payload_model(name).model_json_schema(by_alias=True, mode="serialization")
