"""Health, readiness, metrics, the OpenAPI document and the event catalogue."""

from __future__ import annotations

import re

import httpx

from officehub.events.catalogue import EVENT_NAMES
from tests.helpers import OfficeFixture

SPEC_EVENTS = {
    "crm.lead.created",
    "crm.lead.updated",
    "crm.lead.deleted",
    "crm.lead.moved",
    "crm.lead.overdue",
    "chat.conversation.created",
    "chat.conversation.updated",
    "chat.conversation.assigned",
    "chat.message.received",
    "chat.message.sent",
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "webhook.test",
}


async def test_healthz_needs_no_key(client: httpx.AsyncClient) -> None:
    r = await client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}


async def test_readyz_checks_the_database(client: httpx.AsyncClient) -> None:
    r = await client.get("/readyz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}


async def test_metrics_are_prometheus_text(client: httpx.AsyncClient) -> None:
    await client.get("/healthz")
    r = await client.get("/metrics")
    assert r.status_code == 200
    assert "officehub_http_requests_total" in r.text


async def test_openapi_version_is_1_0_0(client: httpx.AsyncClient) -> None:
    doc = (await client.get("/openapi.json")).json()
    assert doc["info"]["version"] == "1.0.0"


async def test_openapi_declares_key_and_error_bodies(client: httpx.AsyncClient) -> None:
    doc = (await client.get("/openapi.json")).json()
    schemes = doc["components"]["securitySchemes"]
    assert any(
        s
        == {
            "type": "apiKey",
            "in": "header",
            "name": "x-service-api-key",
            **{k: v for k, v in s.items() if k not in {"type", "in", "name"}},
        }
        for s in schemes.values()
    )
    op = doc["paths"]["/webhooks/events"]["get"]
    assert op["security"]
    assert "422" not in op["responses"]
    for status in ("400", "401", "500"):
        schema = op["responses"][status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorBody"}
    assert set(doc["components"]["schemas"]["ErrorBody"]["properties"]) == {
        "message",
        "statusCode",
        "code",
        "details",
    }


async def test_docs_are_served(client: httpx.AsyncClient) -> None:
    r = await client.get("/docs")
    assert r.status_code == 200 and "swagger" in r.text.lower()


CONTRACT_EVENTS = {"chat.message.status"}  # the contract's event table adds it
# case watch (issue 16), case notices (issue 31)
CASE_EVENTS = {
    "case.movement.created",
    "case.updated",
    "case.notice.created",
    "case.notice.sent",
    "case.source.stale",
    "case.source.recovered",
    "case.publication.created",
}
# The WhatsApp channel (issue 24): a reaction, edit or deletion changes a stored message; the
# platform changes a template (docs/decisions.md).
CHANNEL_EVENTS = {"chat.message.updated", "template.updated"}
SLA_EVENTS = {"chat.sla.breached"}  # service levels (issue 32)
# The office told of what needs its hand (issues 39 and 44): a flooded web chat, a webhook
# paused after its retry window.
ALERT_EVENTS = {"chat.webchat.flooded", "webhook.endpoint.disabled"}


async def test_event_catalogue_lists_the_spec_and_contract_events(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/webhooks/events", headers=office_a.headers)
    assert r.status_code == 200
    body = r.json()
    names = {e["name"] for e in body["data"]}
    assert (
        names
        == SPEC_EVENTS | CONTRACT_EVENTS | CASE_EVENTS | CHANNEL_EVENTS | SLA_EVENTS | ALERT_EVENTS
        == EVENT_NAMES
    )
    assert body["totalResults"] == 27 and body["totalPages"] == 1
    for entry in body["data"]:
        assert entry["group"] in {"CRM", "Chat", "Contact", "Case", "Template", "Webhook", "Test"}
        assert entry["description"] and isinstance(entry["examplePayload"], dict)
        assert re.match(r"^(crm|chat|contact|case|template|webhook)\.", entry["name"])
