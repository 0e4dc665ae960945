"""Tenant isolation matrix (OWASP API1): office B's key on office A's records.

Every operation of the OpenAPI document has an entry in ``MATRIX``: either a probe (the
operation names a record in its path, a query filter or its body, and is called with B's
key on A's records) or the reason it names no record. A route added without an entry fails
``test_every_operation_has_an_isolation_entry``.

A probe's answer must be 404 (400 where its entry says so: a body reference checked like
any other field); a list filtered by A's record answers 404 or an empty page (it reveals
nothing). Afterwards every record of A reads exactly as before, field by field, and no event was
recorded for either office. B's lists without a filter show none of A's records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.case_notices.models import CaseNotice
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.webhooks.models import WebhookDelivery
from tests import factories as f
from tests.automation_helpers import create_rule
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of, outbox

Ids = dict[str, str]
Body = Callable[[Ids], dict[str, Any]]


@dataclass(frozen=True)
class Probe:
    """B's call on A's records: ``path`` and ``query`` values name records of ``Ids``."""

    path: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: Body | None = None
    files: bool = False
    statuses: frozenset[int] = frozenset({404})
    empty_list_ok: bool = False


FILTER = Probe(empty_list_ok=True)


def _filter(**query: str) -> Probe:
    return Probe(query=query, empty_list_ok=True)


def _at(body: Body | None = None, **path: str) -> Probe:
    return Probe(path=path, body=body)


def _refers(body: Body, statuses: frozenset[int] = frozenset({404})) -> Probe:
    return Probe(body=body, statuses=statuses)


NO_RECORD = "names no record"
MATRIX: dict[tuple[str, str], Probe | str] = {
    ("GET", "/healthz"): "keyless probe",
    ("GET", "/readyz"): "keyless probe",
    ("GET", "/metrics"): "keyless, no office data",
    ("GET", "/webhooks/events"): "the event catalogue, the same for every office",
    ("GET", "/stream"): "the key's own office's events (tests/test_stream.py: another "
    "office's events never appear, nor does a resume from one)",
    ("POST", "/inbox"): NO_RECORD,
    ("GET", "/inbox"): NO_RECORD,
    ("GET", "/inbox/{id}"): _at(id="inbox"),
    ("PATCH", "/inbox/{id}"): _at(lambda i: {"name": "B"}, id="inbox"),
    ("DELETE", "/inbox/{id}"): _at(id="inbox"),
    ("GET", "/inbox/{id}/business-hours"): _at(id="inbox"),
    ("PUT", "/inbox/{id}/business-hours"): _at(
        lambda i: {"timezone": "UTC", "week": [], "awayMessage": {"text": "B"}}, id="inbox"
    ),
    ("POST", "/sla-policies"): _refers(
        lambda i: {
            "inboxId": i["inbox"],
            "firstResponseMinutes": 10,
            "nextResponseMinutes": 30,
            "resolutionBusinessDays": 2,
        }
    ),
    ("GET", "/sla-policies"): _filter(inboxId="inbox"),
    ("GET", "/sla-policies/{id}"): _at(id="sla_policy"),
    ("PATCH", "/sla-policies/{id}"): _at(lambda i: {"priority": "HIGH"}, id="sla_policy"),
    ("DELETE", "/sla-policies/{id}"): _at(id="sla_policy"),
    ("POST", "/integration"): _refers(
        lambda i: {"inboxId": i["inbox"], "type": "WEBCHAT", "name": "B"}
    ),
    ("GET", "/integration"): _filter(inboxId="inbox"),
    ("GET", "/integration/{id}"): _at(id="integration"),
    ("PATCH", "/integration/{id}"): _at(lambda i: {"name": "B"}, id="integration"),
    ("DELETE", "/integration/{id}"): _at(id="integration"),
    ("POST", "/department"): NO_RECORD,
    ("GET", "/department"): NO_RECORD,
    ("GET", "/department/{id}"): _at(id="department"),
    ("PATCH", "/department/{id}"): _at(lambda i: {"name": "B"}, id="department"),
    ("DELETE", "/department/{id}"): _at(id="department"),
    ("POST", "/user"): _refers(
        lambda i: {"name": "B", "email": "b@example.com", "inboxIds": [i["inbox"]]}
    ),
    ("GET", "/user"): _filter(inboxId="inbox"),
    ("GET", "/user/{id}"): _at(id="user"),
    ("PATCH", "/user/{id}"): _at(lambda i: {"name": "B"}, id="user"),
    ("PUT", "/user/{id}/avatar"): Probe(path={"id": "user"}, files=True),
    ("DELETE", "/user/{id}/avatar"): _at(id="user"),
    ("POST", "/user/{id}/invite"): _at(id="user"),
    ("POST", "/auth/password-reset"): _refers(lambda i: {"userId": i["user"]}),
    ("POST", "/auth/invite/accept"): "keyless: the link's token names the user (test_accounts)",
    ("POST", "/auth/login"): "keyless: signs in; one email, one account (test_accounts)",
    ("POST", "/auth/logout"): "a session's own; a key is 403 (test_accounts)",
    ("GET", "/me"): "the caller itself",
    ("GET", "/me/sessions"): "the signed-in user's own; a key is 403 (test_accounts)",
    ("DELETE", "/me/sessions/{id}"): (
        "the signed-in user's own only: another's is 404 (test_accounts); a key is 403"
    ),
    ("POST", "/auth/login/totp"): "keyless: the challenge names the user (test_totp)",
    ("POST", "/me/totp"): "the signed-in user's own; a key is 403 (test_totp)",
    ("POST", "/me/totp/confirm"): "the signed-in user's own; a key is 403 (test_totp)",
    ("DELETE", "/me/totp"): "the signed-in user's own; a key is 403 (test_totp)",
    ("DELETE", "/user/{id}/totp"): _at(id="user"),
    ("POST", "/tag"): _refers(
        lambda i: {"name": "b", "color": "#000000", "inboxId": i["inbox"], "modules": ["crm"]}
    ),
    ("GET", "/tag"): _filter(inboxId="inbox"),
    ("GET", "/tag/{id}"): _at(id="tag"),
    ("PATCH", "/tag/{id}"): _at(lambda i: {"name": "b"}, id="tag"),
    ("DELETE", "/tag/{id}"): _at(id="tag"),
    ("GET", "/legal-areas"): NO_RECORD,
    ("POST", "/legal-areas"): NO_RECORD,
    ("GET", "/legal-areas/{id}"): _at(id="legal_area"),
    ("PATCH", "/legal-areas/{id}"): _at(lambda i: {"name": "B"}, id="legal_area"),
    ("DELETE", "/legal-areas/{id}"): _at(id="legal_area"),
    ("GET", "/ticket-statuses"): NO_RECORD,
    ("POST", "/ticket-statuses"): NO_RECORD,
    ("POST", "/ticket"): _refers(lambda i: {"title": "B", "statusId": i["ticket_status"]}),
    ("GET", "/ticket"): _filter(conversationId="conversation"),
    ("GET", "/ticket/{id}"): _at(id="ticket"),
    ("PATCH", "/ticket/{id}"): _at(lambda i: {"title": "B"}, id="ticket"),
    ("GET", "/fast-message"): _filter(inboxId="inbox"),
    ("POST", "/fast-message"): _refers(
        lambda i: {"inboxId": i["inbox"], "title": "B", "kind": "TEXT", "text": "B"}
    ),
    ("GET", "/fast-message/{id}"): _at(id="fast_message"),
    ("PATCH", "/fast-message/{id}"): _at(lambda i: {"title": "B"}, id="fast_message"),
    ("DELETE", "/fast-message/{id}"): _at(id="fast_message"),
    ("GET", "/media/{key}"): "keyless: a signed URL, the signature names the file",
    ("POST", "/people"): _refers(lambda i: {"name": "B", "inboxId": i["inbox"]}),
    ("GET", "/people"): _filter(inboxId="inbox", tagIds="tag"),
    ("GET", "/people/{id}"): _at(id="contact"),
    ("PATCH", "/people/{id}"): _at(lambda i: {"name": "B"}, id="contact"),
    ("DELETE", "/people/{id}"): _at(id="contact"),
    # A's only contact in the path (the other id must differ from it: any other id)
    ("POST", "/people/{id}/merge"): _at(lambda i: {"otherId": "c" + "1" * 24}, id="contact"),
    ("POST", "/people/{id}/verify"): _at(id="contact"),
    ("POST", "/people/{id}/erase"): _at(id="contact"),
    ("PUT", "/people/{id}/legal-hold"): _at(lambda i: {"legalHold": False}, id="contact"),
    ("GET", "/people/{id}/export"): _at(id="contact"),
    ("GET", "/people/{id}/consents"): _at(id="contact"),
    ("POST", "/people/{id}/consents"): _at(
        lambda i: {"purpose": "marketing", "granted": False, "source": "x"}, id="contact"
    ),
    ("GET", "/integration/partner/whatsapp-templates"): _filter(deviceId="integration"),
    ("PUT", "/integration/{id}/whatsapp-templates"): _at(lambda i: {"data": []}, id="integration"),
    ("GET", "/integration/{id}/whatsapp-account-notices"): _at(id="integration"),
    ("POST", "/conversation/{conversationId}/template-header-media"): Probe(
        path={"conversationId": "conversation"}, files=True
    ),
    ("POST", "/integration/partner/contacts/{contactId}/link"): _at(
        lambda i: {"partner": {"id": "cpartner0002", "name": "B"}}, contactId="contact"
    ),
    ("GET", "/integration/partner/contacts/{contactId}/link"): _at(contactId="contact"),
    ("DELETE", "/integration/partner/contacts/{contactId}/link/{linkId}"): _at(
        contactId="contact", linkId="partner_link"
    ),
    ("POST", "/conversation"): _refers(
        lambda i: {
            "personId": i["contact"],
            "inboxId": i["inbox"],
            "integrationId": i["integration"],
        }
    ),
    ("GET", "/conversation"): _filter(personId="contact"),
    ("POST", "/conversation/note"): _refers(
        lambda i: {"conversationId": i["conversation"], "text": "B"}
    ),
    ("GET", "/conversation/notes"): Probe(query={"conversationId": "conversation"}),
    ("POST", "/conversation/end-human-support"): _refers(
        lambda i: {"conversationId": i["conversation"]}
    ),
    ("GET", "/conversation/{id}"): _at(id="conversation"),
    ("PATCH", "/conversation/{id}"): _at(lambda i: {"priority": "LOW"}, id="conversation"),
    ("POST", "/conversation/{id}/tags"): _at(lambda i: {"tagId": i["tag"]}, id="conversation"),
    ("DELETE", "/conversation/{id}/tags/{tagId}"): _at(id="conversation", tagId="tag"),
    ("POST", "/conversation/{id}/messages/inbound"): _at(
        lambda i: {"text": "B"}, id="conversation"
    ),
    ("POST", "/conversation/{id}/messages"): _at(lambda i: {"text": "B"}, id="conversation"),
    ("GET", "/conversation/{id}/messages"): _at(id="conversation"),
    ("POST", "/conversation/{id}/media"): Probe(path={"id": "conversation"}, files=True),
    ("POST", "/conversation/{id}/messages/{messageId}/reaction"): _at(
        lambda i: {"emoji": "👍"}, id="conversation", messageId="message"
    ),
    ("POST", "/conversation/{id}/read"): _at(lambda i: {}, id="conversation"),
    ("GET", "/conversation/{id}/evidence"): _at(id="conversation"),
    ("GET", "/office/evidence-key"): "the key's office is the caller's own",
    ("GET", "/office"): "the settings of the caller's own office",
    ("PATCH", "/office"): "the settings of the caller's own office",
    ("GET", "/audit-log"): _filter(personId="contact"),
    ("POST", "/funnel"): _refers(lambda i: {"name": "B", "inboxId": i["inbox"]}),
    ("GET", "/funnel"): _filter(inboxId="inbox"),
    ("GET", "/funnel/{id}"): _at(id="funnel"),
    ("PATCH", "/funnel/{id}"): _at(lambda i: {"name": "B"}, id="funnel"),
    ("DELETE", "/funnel/{id}"): _at(id="funnel"),
    ("GET", "/funnel-column"): Probe(query={"funnelId": "funnel"}, empty_list_ok=True),
    ("POST", "/funnel-column"): _refers(lambda i: {"funnelId": i["funnel"], "name": "B"}),
    ("PATCH", "/funnel-column/{id}"): _at(lambda i: {"name": "B"}, id="column"),
    ("DELETE", "/funnel-column/{id}"): _at(id="column"),
    ("POST", "/funnel-column-card"): _refers(
        lambda i: {"columnId": i["column"], "personId": i["contact"]}
    ),
    # Answers how many it removed (none of another office's): the unchanged check holds it.
    ("DELETE", "/funnel-column-card"): _refers(
        lambda i: {"ids": [i["card"]]}, frozenset({200, 404})
    ),
    ("GET", "/funnel-column-card/person/{personId}/conversation/{conversationId}"): _at(
        personId="contact", conversationId="conversation"
    ),
    ("GET", "/funnel-column-card/{id}"): _at(id="card"),
    ("PATCH", "/funnel-column-card/{id}"): _at(lambda i: {"columnId": i["column"]}, id="card"),
    ("POST", "/webhooks"): NO_RECORD,
    ("GET", "/webhooks"): NO_RECORD,
    ("POST", "/webhooks/deliveries/{deliveryId}/retry"): _at(deliveryId="delivery"),
    ("GET", "/webhooks/{webhookId}"): _at(webhookId="webhook"),
    ("PATCH", "/webhooks/{webhookId}"): _at(lambda i: {"name": "B"}, webhookId="webhook"),
    ("DELETE", "/webhooks/{webhookId}"): _at(webhookId="webhook"),
    ("POST", "/webhooks/{webhookId}/test"): _at(webhookId="webhook"),
    ("GET", "/webhooks/{webhookId}/deliveries"): _at(webhookId="webhook"),
    ("POST", "/webhooks/{webhookId}/recover"): _at(
        lambda i: {"since": "2000-01-01T00:00:00Z"}, webhookId="webhook"
    ),
    ("POST", "/webhooks/{webhookId}/replay"): _at(
        lambda i: {"eventId": i["delivery_event"]}, webhookId="webhook"
    ),
    ("GET", "/webhooks/{webhookId}/deliveries/{deliveryId}"): _at(
        webhookId="webhook", deliveryId="delivery"
    ),
    ("POST", "/automation-rules"): NO_RECORD,
    ("GET", "/automation-rules"): NO_RECORD,
    ("GET", "/automation-rules/{id}"): _at(id="rule"),
    ("PATCH", "/automation-rules/{id}"): _at(lambda i: {"name": "B"}, id="rule"),
    ("DELETE", "/automation-rules/{id}"): _at(id="rule"),
    ("GET", "/automation-rules/{id}/runs"): _at(id="rule"),
    ("GET", "/automation-rules/{id}/deliveries"): _at(id="rule"),
    ("POST", "/automation-rules/{id}/test"): _at(lambda i: {}, id="rule"),
    ("GET", "/channels/whatsapp/{integrationId}/webhook"): (
        "keyless: the platform's verify token, tested in test_verify_webhook"
    ),
    ("POST", "/channels/bridge/{integrationId}/inbound"): (
        "keyless: signed with the integration's secret, tested in test_bridge"
    ),
    ("GET", "/webchat/{integrationId}/widget.js"): (
        "keyless: the public widget of a web chat, no office data beyond its greeting"
    ),
    ("POST", "/webchat/{integrationId}/start"): (
        "keyless: creates a visitor of that chat only; CORS and limits in test_webchat"
    ),
    ("POST", "/webchat/{integrationId}/messages"): (
        "keyless: the visitor token; another chat's 404, another office's 401 (test_webchat)"
    ),
    ("GET", "/webchat/{integrationId}/messages"): (
        "keyless: the visitor token; another chat's 404, another office's 401 (test_webchat)"
    ),
    ("GET", "/webchat/{integrationId}/events"): (
        "keyless: the visitor token; another chat's 404, another office's 401 (test_webchat)"
    ),
    ("GET", "/webchat/{integrationId}/verification"): (
        "keyless: the visitor token; another chat's 404, another office's 401 "
        "(test_webchat_verification)"
    ),
    ("POST", "/webchat/{integrationId}/verification"): (
        "keyless: the visitor token; sends only to the visitor's own claim "
        "(test_webchat_verification)"
    ),
    ("POST", "/webchat/{integrationId}/verification/confirm"): (
        "keyless: the visitor token; confirms only the visitor's own code "
        "(test_webchat_verification)"
    ),
    ("POST", "/channels/whatsapp/{integrationId}/webhook"): (
        "keyless: the platform's signature, tested in test_whatsapp_inbound"
    ),
    ("POST", "/integration/{id}/whatsapp-templates/sync"): _at(id="integration"),
    ("GET", "/homepage-v2/get-clients-map"): NO_RECORD,
    ("GET", "/reports/conversations"): Probe(query={"inboxId": "inbox"}),
    ("GET", "/reports/whatsapp-usage"): Probe(query={"integrationId": "integration"}),
    ("POST", "/flow"): _refers(
        lambda i: {
            "name": "B",
            "inboxId": i["inbox"],
            "content": {
                "steps": [{"id": "s1", "type": "text", "content": "B", "nextStepId": None}],
                "initialStepId": "s1",
            },
        }
    ),
    ("POST", "/flow/check"): _refers(
        lambda i: {
            "name": "B",
            "inboxId": i["inbox"],
            "content": {
                "steps": [{"id": "s1", "type": "text", "content": "B", "nextStepId": None}],
                "initialStepId": "s1",
            },
        }
    ),
    ("GET", "/flow"): _filter(inboxId="inbox"),
    ("GET", "/flow/{id}"): _at(id="flow"),
    ("GET", "/flow/{id}/deliveries"): _at(id="flow"),
    ("PATCH", "/flow/{id}"): _at(lambda i: {"name": "B"}, id="flow"),
    ("DELETE", "/flow/{id}"): _at(id="flow"),
    ("GET", "/conversation/{id}/flow-session"): _at(id="conversation"),
    ("POST", "/case-movements"): _refers(
        lambda i: {
            "personId": i["contact"],
            "caseNumber": "0000001-00.2026.8.26.0100",
            "description": "B",
            "occurredAt": "2026-01-01T00:00:00Z",
        }
    ),
    ("GET", "/case-movements"): _filter(personId="contact"),
    ("DELETE", "/case-movements/{id}"): _at(id="movement"),
    ("POST", "/cases"): _refers(
        lambda i: {"number": "1009131-52.2024.8.26.0224", "personId": i["contact"]}
    ),
    ("GET", "/cases"): _filter(personId="contact"),
    ("GET", "/cases/{id}"): _at(id="case"),
    ("PATCH", "/cases/{id}"): _at(lambda i: {"watch": False}, id="case"),
    ("DELETE", "/cases/{id}"): _at(id="case"),
    ("GET", "/cases/{id}/movements"): _at(id="case"),
    ("GET", "/case-notices"): _filter(caseId="case"),
    ("GET", "/case-notices/{id}"): _at(id="notice"),
    ("PATCH", "/case-notices/{id}"): _at(lambda i: {"text": "B"}, id="notice"),
    ("POST", "/case-notices/{id}/approve"): _at(id="notice"),
    ("POST", "/case-notices/{id}/discard"): _at(id="notice"),
    ("GET", "/case-notice-settings"): NO_RECORD,
    ("PUT", "/case-notice-settings"): NO_RECORD,
    ("POST", "/lawyers"): _refers(
        lambda i: {"name": "B", "oab": {"number": "777", "uf": "SP"}, "userId": i["user"]}
    ),
    ("GET", "/lawyers"): NO_RECORD,
    ("PATCH", "/lawyers/{id}"): _at(lambda i: {"name": "B"}, id="lawyer"),
    ("DELETE", "/lawyers/{id}"): _at(id="lawyer"),
    ("POST", "/court-holidays"): NO_RECORD,
    ("GET", "/court-holidays"): NO_RECORD,
    ("DELETE", "/court-holidays/{id}"): _at(id="court_holiday"),
    ("GET", "/publications"): _filter(lawyerId="lawyer", caseId="case"),
    ("GET", "/publications/{id}"): _at(id="publication"),
    ("PATCH", "/publications/{id}"): _at(
        lambda i: {"read": True, "deadlineDays": 10}, id="publication"
    ),
}

# The spec gives this route's errors no ``code`` (``templates/router.py``).
WITHOUT_CODE = {"/conversation/{conversationId}/template-header-media"}

# What A's records read like; compared before and after B's calls.
SNAPSHOT = (
    "/inbox/{inbox}",
    "/integration/{integration}",
    "/department/{department}",
    "/user/{user}",
    "/tag/{tag}",
    "/legal-areas/{legal_area}",
    "/sla-policies/{sla_policy}",
    "/ticket/{ticket}",
    "/fast-message/{fast_message}",
    "/people/{contact}",
    "/integration/partner/contacts/{contact}/link",
    "/conversation/{conversation}",
    "/conversation/{conversation}/messages",
    "/conversation/notes?conversationId={conversation}",
    "/funnel/{funnel}",
    "/funnel-column?funnelId={funnel}",
    "/funnel-column-card/{card}",
    "/webhooks/{webhook}",
    "/webhooks/{webhook}/deliveries/{delivery}",
    "/automation-rules/{rule}",
    "/flow/{flow}",
    "/case-movements?personId={contact}",
    "/cases/{case}",
    "/cases/{case}/movements",
    "/case-notices/{notice}",
    "/lawyers",
    "/court-holidays",
    "/publications/{publication}",
)


async def _operations(client: httpx.AsyncClient) -> set[tuple[str, str]]:
    doc = (await client.get("/openapi.json")).json()
    return {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}


async def _office_a_world(
    client: httpx.AsyncClient, session: AsyncSession, a: OfficeFixture
) -> Ids:
    world = await make_world(session, a.id)
    department = await f.make_department(session, a.id)
    legal_area = await f.make_legal_area(session, a.id)
    card = await f.make_card(session, world.columns[0], world.contact.id, world.conversation.id)
    await session.commit()
    h = a.headers

    async def created(path: str, body: dict[str, Any]) -> str:
        r = await client.post(path, json=body, headers=h)
        assert r.status_code in (200, 201), (path, r.text)
        ident: str = r.json()["id"]
        return ident

    status = await created("/ticket-statuses", {"name": "Aberto", "color": "#0000FF"})
    ids: Ids = {
        "inbox": world.inbox.id,
        "integration": world.integration.id,
        "contact": world.contact.id,
        "conversation": world.conversation.id,
        "tag": world.tag.id,
        "user": world.user.id,
        "funnel": world.funnel.id,
        "column": world.columns[0].id,
        "card": card.id,
        "department": department.id,
        "legal_area": legal_area.id,
        "ticket_status": status,
    }
    ids["ticket"] = await created(
        "/ticket", {"title": "A", "statusId": status, "conversationId": world.conversation.id}
    )
    ids["message"] = await created(
        f"/conversation/{world.conversation.id}/messages/inbound", {"text": "A"}
    )
    ids["sla_policy"] = await created(
        "/sla-policies",
        {
            "inboxId": world.inbox.id,
            "firstResponseMinutes": 10,
            "nextResponseMinutes": 30,
            "resolutionBusinessDays": 2,
        },
    )
    ids["fast_message"] = await created(
        "/fast-message", {"inboxId": world.inbox.id, "title": "A", "kind": "TEXT", "text": "A"}
    )
    ids["webhook"] = await created(
        "/webhooks",
        {"name": "A", "url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
    )
    ids["rule"] = (await create_rule(client, a))["id"]
    ids["flow"] = await created(
        "/flow",
        {
            "name": "A",
            "inboxId": world.inbox.id,
            "content": {
                "steps": [{"id": "s1", "type": "text", "content": "A", "nextStepId": None}],
                "initialStepId": "s1",
            },
        },
    )
    ids["movement"] = await created(
        "/case-movements",
        {
            "personId": world.contact.id,
            "caseNumber": "0000001-00.2026.8.26.0100",
            "description": "Juntada de petição",
            "occurredAt": "2026-01-01T00:00:00Z",
        },
    )
    ids["case"] = await created(
        "/cases",
        {
            "number": "5046420-77.2020.4.04.7000",
            "personId": world.contact.id,
            "conversationId": world.conversation.id,
            "legalAreaId": legal_area.id,
        },
    )
    notice = CaseNotice(
        office_id=a.id,
        case_id=ids["case"],
        movement_id=ids["movement"],
        person_id=world.contact.id,
        conversation_id=world.conversation.id,
        case_number="5046420-77.2020.4.04.7000",
        occurred_at=utcnow(),
        category="decision",
        explanation="O juiz decidiu.",
        text="Olá! O juiz decidiu.",
        status="PENDING",
    )
    session.add(notice)
    await session.commit()
    ids["notice"] = notice.id
    lawyer = {"name": "Dra. A", "oab": {"number": "123456", "uf": "SP"}}
    ids["lawyer"] = await created("/lawyers", lawyer)
    ids["court_holiday"] = await created("/court-holidays", {"date": "2026-01-25", "name": "A"})
    publication = await f.make_publication(
        session, a.id, lawyer_id=ids["lawyer"], case_id=ids["case"]
    )
    await session.commit()
    ids["publication"] = publication.id
    link = await client.post(
        f"/integration/partner/contacts/{world.contact.id}/link",
        json={"partner": {"id": "cpartner0001", "name": "Maria"}},
        headers=h,
    )
    assert link.status_code in (200, 201), link.text
    ids["partner_link"] = link.json()["linkId"]
    note = {"conversationId": world.conversation.id, "text": "nota de A"}
    assert (await client.post("/conversation/note", json=note, headers=h)).status_code == 201
    now = utcnow()
    delivery = WebhookDelivery(
        office_id=a.id,
        webhook_id=ids["webhook"],
        event_id=new_id(),
        event="contact.created",
        payload={"id": world.contact.id},
        status="FAILED",
        status_code=500,
        response_body=None,
        error_message="HTTP 500",
        duration_ms=3,
        attempt_count=1,
        next_retry_at=None,
        created_at=now,
        expires_at=now + timedelta(days=7),
    )
    session.add(delivery)
    await session.commit()
    ids["delivery"] = delivery.id
    ids["delivery_event"] = delivery.event_id
    return ids


async def _snapshot(client: httpx.AsyncClient, a: OfficeFixture, ids: Ids) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for template in SNAPSHOT:
        path = template.format(**ids)
        r = await client.get(path, headers=a.headers)
        assert r.status_code == 200, (path, r.text)
        answers[path] = r.json()
    return answers


def _request(method: str, path: str, probe: Probe, ids: Ids) -> dict[str, Any]:
    for name, record in probe.path.items():
        path = path.replace("{" + name + "}", ids[record])
    request: dict[str, Any] = {
        "method": method,
        "url": path,
        "params": {name: ids[record] for name, record in probe.query.items()},
    }
    if probe.body is not None:
        request["json"] = probe.body(ids)
    elif probe.files:
        request["files"] = {"file": ("a.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png")}
    elif method in ("POST", "PUT", "PATCH"):
        request["json"] = {}
    return request


async def test_every_operation_has_an_isolation_entry(client: httpx.AsyncClient) -> None:
    operations = await _operations(client)
    assert operations - MATRIX.keys() == set(), "add these routes to MATRIX"
    assert MATRIX.keys() - operations == set(), "these MATRIX entries name no route"


# Ids are time-ordered: an office filter that compared ids by order (``>=``) instead of
# equality would leak one way only. Each test runs both ways: the records' office is the
# one made first, then the one made second.
BOTH_WAYS = pytest.mark.parametrize("owner", ["made-first", "made-second"])


def _owner_and_other(
    owner: str, office_a: OfficeFixture, office_b: OfficeFixture
) -> tuple[OfficeFixture, OfficeFixture]:
    assert office_a.id < office_b.id  # office_a is made first
    return (office_a, office_b) if owner == "made-first" else (office_b, office_a)


@BOTH_WAYS
async def test_office_b_key_on_office_a_records_is_404_and_a_is_unchanged(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
    owner: str,
) -> None:
    office_a, office_b = _owner_and_other(owner, office_a, office_b)
    ids = await _office_a_world(client, session, office_a)
    before = await _snapshot(client, office_a, ids)
    events_before = await _events(app, office_a, office_b)
    probes = [(k, v) for k, v in MATRIX.items() if isinstance(v, Probe)]
    assert len(probes) > 60
    for (method, path), probe in probes:
        r = await client.request(**_request(method, path, probe, ids), headers=office_b.headers)
        if probe.empty_list_ok and r.status_code == 200:
            body = r.json()
            assert body["data"] == [] if isinstance(body, dict) else body == [], (method, path)
            continue
        assert r.status_code in probe.statuses, (method, path, r.status_code, r.text)
        if r.status_code >= 400 and path not in WITHOUT_CODE:
            error_of(r)
        if method != "GET":
            assert await _snapshot(client, office_a, ids) == before, (method, path)
            assert await _events(app, office_a, office_b) == events_before, (method, path)
    assert await _snapshot(client, office_a, ids) == before
    assert await _events(app, office_a, office_b) == events_before


async def _events(app: FastAPI, *offices: OfficeFixture) -> list[list[str]]:
    """The ids of each office's recorded events: a write that changed nothing adds none."""
    return [[e.id for e in await outbox(app, office.id)] for office in offices]


# The lists that take no filter, each with the record of A it would show A.
UNFILTERED = {
    "/inbox": "inbox",
    "/department": "department",
    "/webhooks": "webhook",
    "/automation-rules": "rule",
    "/ticket-statuses": "ticket_status",
    "/legal-areas": "legal_area",
    "/sla-policies": "sla_policy",
}
# Reads without a path parameter that are no office list of records (or never end).
NOT_A_LIST = {"/healthz", "/readyz", "/metrics", "/stream", "/webhooks/events"}


@BOTH_WAYS
async def test_office_b_lists_without_a_filter_show_none_of_office_a_records(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
    owner: str,
) -> None:
    office_a, office_b = _owner_and_other(owner, office_a, office_b)
    ids = await _office_a_world(client, session, office_a)
    for path, record in UNFILTERED.items():
        mine = await client.get(path, headers=office_a.headers)
        assert mine.status_code == 200 and ids[record] in mine.text, path  # A sees its own
    reads = sorted(
        path
        for method, path in await _operations(client)
        if method == "GET" and "{" not in path and path not in NOT_A_LIST
    )
    assert set(UNFILTERED) <= set(reads)
    for path in reads:
        r = await client.get(path, headers=office_b.headers)
        # a list needing a filter (400) or a session (403) answers no records at all
        assert r.status_code in ((200,) if path in UNFILTERED else (200, 400, 403)), (
            path,
            r.status_code,
            r.text,
        )
        leaked = {name for name, ident in ids.items() if ident in r.text}
        assert leaked == set(), (path, leaked)
