"""Account notifications applied: template status, quality and category updates change the
stored catalogue entry and emit ``template.updated``; a client's marketing preference sets
``marketingOptOut`` (a MARKETING template to them is 409 ``CONTACT_OPTED_OUT``); the
account's notices and unknown fields are kept; none is refused. Driven by the recorded
notifications under ``tests/fixtures/whatsapp/account/``."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.models import AccountNotice
from officehub.inboxes.models import Integration
from officehub.templates.models import WhatsAppTemplate
from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server
from tests.whatsapp_fixtures import (
    CLIENT_PHONE,
    TEMPLATE_ID,
    catalogue_template,
    fixture,
    fixture_names,
    sent_message,
)
from tests.whatsapp_world import official_integration, post_notification, text_message

DEVICE = "5511999990000"


async def _replay(client: httpx.AsyncClient, integration: Integration, *names: str) -> None:
    for name in names:
        r = await post_notification(client, integration.id, fixture(name))
        assert (r.status_code, r.json()) == (200, {"stored": 0}), (name, r.text)


async def _template(session: AsyncSession, ident: str) -> WhatsAppTemplate:
    found = await session.get(WhatsAppTemplate, ident, populate_existing=True)
    assert found is not None
    return found


async def _listed(
    client: httpx.AsyncClient, office: OfficeFixture, status: str
) -> list[dict[str, Any]]:
    r = await client.get(
        "/integration/partner/whatsapp-templates",
        params={"deviceId": DEVICE, "status": status},
        headers=office.headers,
    )
    assert r.status_code == 200, r.text
    return list(r.json()["data"])


async def _notices(session: AsyncSession, office_id: str) -> list[AccountNotice]:
    stmt = (
        select(AccountNotice)
        .where(AccountNotice.office_id == office_id)
        .order_by(AccountNotice.received_at, AccountNotice.id)
        .execution_options(populate_existing=True)
    )
    return list(await session.scalars(stmt))


@pytest.mark.parametrize("name", fixture_names("account"))
async def test_every_signed_account_notification_is_answered_200(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture, name: str
) -> None:
    integration = await official_integration(session, office_a.id)
    await catalogue_template(session, integration)
    await sent_message(session, integration)
    await _replay(client, integration, name)


async def test_an_approved_template_update_makes_it_sendable_and_emits_template_updated(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="PENDING")
    await _replay(client, integration, "account/template_approved.json")
    [listed] = await _listed(client, office_a, "APPROVED")
    assert (listed["name"], listed["id"], listed["status"]) == (
        "lembrete_audiencia",
        TEMPLATE_ID,
        "APPROVED",
    )
    [event] = await outbox(app, office_a.id, "template.updated")
    assert event.integration_id == integration.id
    assert event.data["status"] == "APPROVED"
    assert event.data["platformStatus"] == "APPROVED"
    assert event.data["changes"] == ["status", "platformStatus"]
    assert (await _template(session, template.id)).status_changed_at is not None


async def test_a_rejected_template_keeps_the_platforms_reason(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="PENDING")
    await _replay(client, integration, "account/template_rejected.json")
    stored = await _template(session, template.id)
    assert stored.status == "REJECTED"
    assert stored.rejected_reason == (
        "INVALID_FORMAT: Variable parameters are not allowed at the start or end of the body"
    )
    [event] = await outbox(app, office_a.id, "template.updated")
    assert event.data["rejectedReason"] == stored.rejected_reason
    assert set(event.data["changes"]) == {"status", "platformStatus", "rejectedReason"}


async def test_a_paused_template_is_no_longer_sent(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await catalogue_template(session, integration, status="APPROVED")
    message = await sent_message(session, integration)
    await _replay(client, integration, "account/template_paused.json")
    assert await _listed(client, office_a, "APPROVED") == []
    assert [t["name"] for t in await _listed(client, office_a, "PAUSED")] == ["lembrete_audiencia"]
    r = await client.post(
        f"/conversation/{message.conversation_id}/messages",
        json={"templateName": "lembrete_audiencia", "variables": ["Maria", "amanhã"]},
        headers=office_a.headers,
    )
    assert (r.status_code, error_of(r)["code"]) == (409, "TEMPLATE_NOT_APPROVED")


async def test_a_disabled_template_is_paused_with_the_platforms_word(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="APPROVED")
    await _replay(client, integration, "account/template_disabled.json")
    stored = await _template(session, template.id)
    assert (stored.status, stored.platform_status) == ("PAUSED", "DISABLED")


async def test_a_flagged_template_keeps_its_status_and_a_reinstated_one_is_approved(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="APPROVED")
    await _replay(client, integration, "account/template_flagged.json")
    stored = await _template(session, template.id)
    assert (stored.status, stored.platform_status) == ("APPROVED", "FLAGGED")
    await _replay(client, integration, "account/template_paused.json")
    await _replay(client, integration, "account/template_reinstated.json")
    stored = await _template(session, template.id)
    assert (stored.status, stored.platform_status) == ("APPROVED", "REINSTATED")


async def test_a_quality_update_sets_the_templates_quality_score(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="APPROVED")
    await _replay(client, integration, "account/template_quality_update.json")
    stored = await _template(session, template.id)
    assert (stored.status, stored.quality_score) == ("APPROVED", "YELLOW")
    [event] = await outbox(app, office_a.id, "template.updated")
    assert (event.data["qualityScore"], event.data["changes"]) == ("YELLOW", ["qualityScore"])


async def test_a_category_update_changes_the_templates_category(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await catalogue_template(session, integration, status="APPROVED")
    await _replay(client, integration, "account/template_category_update.json")
    [listed] = await _listed(client, office_a, "APPROVED")
    assert listed["category"] == "MARKETING"
    [event] = await outbox(app, office_a.id, "template.updated")
    assert event.data["changes"] == ["category"]


async def test_a_repeated_template_update_emits_nothing_new(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await catalogue_template(session, integration, status="PENDING")
    await _replay(client, integration, *["account/template_approved.json"] * 2)
    assert len(await outbox(app, office_a.id, "template.updated")) == 1


async def test_a_template_update_of_a_template_not_in_the_catalogue_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="PENDING")
    await _replay(client, integration, "account/template_not_in_catalogue.json")
    assert (await _template(session, template.id)).status == "PENDING"
    assert await outbox(app, office_a.id, "template.updated") == []


async def test_a_template_update_without_an_id_is_kept_as_a_notice(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(client, integration, "account/template_without_id.json")
    [notice] = await _notices(session, office_a.id)
    assert (notice.field, notice.event) == ("message_template_status_update", "APPROVED")


async def test_a_template_is_found_by_name_and_language_when_its_id_is_unknown(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, external_id=None)
    await _replay(client, integration, "account/template_approved.json")
    assert (await _template(session, template.id)).status == "APPROVED"


async def test_a_template_update_never_touches_another_offices_catalogue(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    integration_a = await official_integration(session, office_a.id)
    integration_b = await official_integration(session, office_b.id, device_id="5511999990001")
    theirs = await catalogue_template(session, integration_b, status="PENDING")
    await _replay(client, integration_a, "account/template_approved.json")
    assert (await _template(session, theirs.id)).status == "PENDING"
    assert await outbox(app, office_b.id, "template.updated") == []


async def test_account_notices_are_stored(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(
        client,
        integration,
        "account/phone_number_quality_update.json",
        "account/account_update.json",
        "account/account_alerts.json",
        "account/business_capability_update.json",
    )
    notices = await _notices(session, office_a.id)
    assert [(n.field, n.event) for n in notices] == [
        ("phone_number_quality_update", "FLAGGED"),
        ("account_update", "ACCOUNT_VIOLATION"),
        ("account_alerts", None),
        ("business_capability_update", None),
    ]
    assert notices[0].value == {
        "display_phone_number": "5511999990000",
        "event": "FLAGGED",
        "current_limit": "TIER_1K",
    }
    assert {n.integration_id for n in notices} == {integration.id}


async def test_an_unknown_field_is_stored_and_logged_without_its_content(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    integration = await official_integration(session, office_a.id)
    with caplog.at_level(logging.INFO, logger="officehub.channels"):
        await _replay(client, integration, "account/unknown_field.json")
    [notice] = await _notices(session, office_a.id)
    assert (notice.field, notice.event) == ("some_future_field", "SOMETHING_NEW")
    assert notice.value["details"] == {"nested": [1, 2, 3]}
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "some_future_field" in logged
    assert "nested" not in logged and "SOMETHING_NEW" not in logged


async def test_a_client_who_stops_marketing_gets_marketing_opt_out(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    integration = await official_integration(session, office_a.id)
    contact = await f.make_contact(session, office_a.id, phone=CLIENT_PHONE)
    await session.commit()
    with caplog.at_level(logging.INFO, logger="officehub"):
        await _replay(client, integration, "account/user_marketing_preferences_stop.json")
    r = await client.get(f"/people/{contact.id}", headers=office_a.headers)
    assert r.json()["marketingOptOut"] is True
    [event] = await outbox(app, office_a.id, "contact.updated")
    assert event.data["marketingOptOut"] is True
    # The client's number never reaches the logs; nor is it kept as an account notice.
    assert all("987654321" not in r.getMessage() for r in caplog.records)
    assert await _notices(session, office_a.id) == []
    await _replay(client, integration, "account/user_marketing_preferences_resume.json")
    r = await client.get(f"/people/{contact.id}", headers=office_a.headers)
    assert r.json()["marketingOptOut"] is False
    assert len(await outbox(app, office_a.id, "contact.updated")) == 2


async def test_a_new_contact_has_marketing_opt_out_false(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    r = await client.post(
        "/people", json={"name": "João", "phone": "+5511912345678"}, headers=office_a.headers
    )
    assert r.status_code == 201, r.text
    assert r.json()["marketingOptOut"] is False


async def test_malformed_marketing_preferences_change_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    contact = await f.make_contact(session, office_a.id, phone=CLIENT_PHONE)
    await session.commit()
    await _replay(
        client,
        integration,
        "account/user_marketing_preferences_malformed.json",
        "account/user_marketing_preferences_odd_entries.json",
    )
    r = await client.get(f"/people/{contact.id}", headers=office_a.headers)
    assert r.json()["marketingOptOut"] is False
    assert await outbox(app, office_a.id, "contact.updated") == []


async def test_a_marketing_preference_never_touches_another_offices_contact(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    integration = await official_integration(session, office_a.id)
    theirs = await f.make_contact(session, office_b.id, phone=CLIENT_PHONE)
    await session.commit()
    await _replay(client, integration, "account/user_marketing_preferences_stop.json")
    r = await client.get(f"/people/{theirs.id}", headers=office_b.headers)
    assert r.json()["marketingOptOut"] is False


async def _opted_out_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> tuple[Integration, str]:
    integration = await official_integration(session, office.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "account/user_marketing_preferences_stop.json")
    return integration, message.conversation_id


async def test_a_marketing_template_to_an_opted_out_contact_is_409_contact_opted_out(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration, conversation_id = await _opted_out_conversation(client, session, office_a)
    await catalogue_template(session, integration, status="APPROVED", category="MARKETING")
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"templateName": "lembrete_audiencia", "variables": ["Maria", "amanhã"]},
        headers=office_a.headers,
    )
    assert r.status_code == 409
    assert error_of(r)["code"] == "CONTACT_OPTED_OUT"
    assert await outbox(app, office_a.id, "chat.message.sent") == []


async def test_a_utility_template_to_an_opted_out_contact_is_still_sent(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration, conversation_id = await _opted_out_conversation(client, session, office_a)
    await catalogue_template(session, integration, status="APPROVED", category="UTILITY")
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"templateName": "lembrete_audiencia", "variables": ["Maria", "amanhã"]},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text


async def test_mixed_changes_are_each_applied(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A template rejection, a phone number's quality, an unknown field, a delivery status
    and a capability change in one notification: each applied, 200."""
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="PENDING")
    message = await sent_message(session, integration)
    await _replay(client, integration, "account/mixed_changes.json")
    stored = await _template(session, template.id)
    assert (stored.status, stored.rejected_reason) == ("REJECTED", "INCORRECT_CATEGORY")
    notices = await _notices(session, office_a.id)
    assert sorted(n.field for n in notices) == [
        "business_capability_update",
        "phone_number_quality_update",
        "some_future_field",
    ]
    [status] = await outbox(app, office_a.id, "chat.message.status")
    assert (status.data["id"], status.data["status"]) == (message.id, "DELIVERED")


async def test_a_notification_with_messages_and_account_changes_stores_the_messages(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    body = fixture("account/phone_number_quality_update.json")
    body["entry"][0]["changes"].append(
        {
            "field": "messages",
            "value": {
                "messaging_product": "whatsapp",
                "contacts": [{"profile": {"name": "Maria"}, "wa_id": "5511987654321"}],
                "messages": [text_message("wamid.mixed-1")],
            },
        }
    )
    r = await post_notification(client, integration.id, body)
    assert (r.status_code, r.json()) == (200, {"stored": 1})
    assert [n.field for n in await _notices(session, office_a.id)] == [
        "phone_number_quality_update"
    ]


async def test_template_updated_is_in_the_event_catalogue(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/webhooks/events", headers=office_a.headers)
    assert r.status_code == 200
    listed = r.json()
    entries = listed["data"] if isinstance(listed, dict) else listed
    [entry] = [e for e in entries if e["name"] == "template.updated"]
    assert entry["group"] == "Template"
    r = await client.post(
        "/webhooks",
        json={"name": "Modelos", "url": "https://example.com/hook", "events": ["template.updated"]},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert r.json()["events"] == ["template.updated"]


async def test_the_same_template_update_at_once_is_applied_once(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The platform retries: six copies at once make one change and one event (the
    webhook locks its integration's row)."""
    integration = await official_integration(session, office_a.id)
    template = await catalogue_template(session, integration, status="PENDING")
    body = fixture("account/template_approved.json")
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(6, lambda i: post_notification(c, integration.id, body))
    assert [a.status_code for a in answers] == [200] * 6
    assert (await _template(session, template.id)).status == "APPROVED"
    assert len(await outbox(app, office_a.id, "template.updated")) == 1


async def test_the_same_marketing_stop_at_once_changes_the_contact_once(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await f.make_contact(session, office_a.id, phone=CLIENT_PHONE)
    await session.commit()
    body = fixture("account/user_marketing_preferences_stop.json")
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(6, lambda i: post_notification(c, integration.id, body))
    assert [a.status_code for a in answers] == [200] * 6
    [event] = await outbox(app, office_a.id, "contact.updated")
    assert event.data["marketingOptOut"] is True


# GET /integration/{id}/whatsapp-account-notices


async def test_account_notices_are_listed_newest_first(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(
        client,
        integration,
        "account/phone_number_quality_update.json",
        "account/account_update.json",
        "account/unknown_field.json",
    )
    path = f"/integration/{integration.id}/whatsapp-account-notices"
    r = await client.get(path, headers=office_a.headers)
    assert r.status_code == 200, r.text
    listed = r.json()
    assert (listed["totalResults"], listed["totalPages"]) == (3, 1)
    assert [(n["field"], n["event"]) for n in listed["data"]] == [
        ("some_future_field", "SOMETHING_NEW"),
        ("account_update", "ACCOUNT_VIOLATION"),
        ("phone_number_quality_update", "FLAGGED"),
    ]
    newest = listed["data"][0]
    assert newest["integrationId"] == integration.id
    assert newest["value"] == {"event": "SOMETHING_NEW", "details": {"nested": [1, 2, 3]}}
    assert newest["receivedAt"].endswith("Z")
    r = await client.get(path, params={"limit": 1, "page": 3}, headers=office_a.headers)
    assert [n["field"] for n in r.json()["data"]] == ["phone_number_quality_update"]


async def test_account_notices_of_another_offices_integration_are_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs = await official_integration(session, office_b.id, device_id="5511999990001")
    await _replay(client, theirs, "account/account_update.json")
    r = await client.get(
        f"/integration/{theirs.id}/whatsapp-account-notices", headers=office_a.headers
    )
    assert (r.status_code, error_of(r)["code"]) == (404, "NOT_FOUND")


async def test_account_notices_of_a_channel_other_than_the_official_one_are_404(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    bridged = await f.make_integration(session, office_a.id, inbox.id, type="WHATSAPP")
    await session.commit()
    r = await client.get(
        f"/integration/{bridged.id}/whatsapp-account-notices", headers=office_a.headers
    )
    assert r.status_code == 404


async def test_account_notices_with_a_bad_id_or_page_are_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    r = await client.get(
        "/integration/not-an-id/whatsapp-account-notices", headers=office_a.headers
    )
    assert r.status_code == 400
    assert "id" in error_of(r)["details"]
    integration = await official_integration(session, office_a.id)
    r = await client.get(
        f"/integration/{integration.id}/whatsapp-account-notices",
        params={"limit": 0},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "limit" in error_of(r)["details"]


async def test_account_notices_need_a_valid_key(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    path = f"/integration/{integration.id}/whatsapp-account-notices"
    assert (await client.get(path)).status_code == 401
    r = await client.get(path, headers={"x-service-api-key": "not-a-key"})
    assert r.status_code == 401
