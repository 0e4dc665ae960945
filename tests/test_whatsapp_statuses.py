"""Delivery statuses in full: a failure's code, title and details, the pricing and the
platform's conversation kept on the message; statuses of unknown messages ignored; a late
status never moves a message back. Driven by the recorded notifications under
``tests/fixtures/whatsapp/status/``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes.models import Integration
from officehub.messages.models import Message
from tests.helpers import OfficeFixture, outbox
from tests.server import concurrent_client, fire, running_server
from tests.whatsapp_fixtures import (
    OTHER_WAMID,
    fixture,
    fixture_names,
    sent_message,
)
from tests.whatsapp_world import official_integration, post_notification


async def _replay(client: httpx.AsyncClient, integration: Integration, *names: str) -> None:
    for name in names:
        r = await post_notification(client, integration.id, fixture(name))
        assert r.status_code == 200, (name, r.text)


async def _listed(
    client: httpx.AsyncClient, office: OfficeFixture, message: Message
) -> dict[str, Any]:
    r = await client.get(
        f"/conversation/{message.conversation_id}/messages", headers=office.headers
    )
    assert r.status_code == 200
    [found] = [m for m in r.json()["data"] if m["id"] == message.id]
    return dict(found)


@pytest.mark.parametrize("name", fixture_names("status"))
async def test_every_signed_status_notification_is_answered_200(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture, name: str
) -> None:
    integration = await official_integration(session, office_a.id)
    await sent_message(session, integration)
    await sent_message(session, integration, OTHER_WAMID, phone="+5511987650000")
    r = await post_notification(client, integration.id, fixture(name))
    assert (r.status_code, r.json()) == (200, {"stored": 0})


async def test_a_failed_status_keeps_the_platforms_error_code_title_and_details(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/failed_131047_outside_window.json")
    listed = await _listed(client, office_a, message)
    assert listed["status"] == "FAILED"
    assert listed["errorDetail"] == {
        "code": "131047",
        "title": "Re-engagement message",
        "details": "Message failed to send because more than 24 hours have passed since the "
        "customer last replied to this number.",
    }
    assert listed["error"] == "131047: Re-engagement message"
    [event] = await outbox(app, office_a.id, "chat.message.status")
    assert (event.data["previousStatus"], event.data["status"]) == ("SENT", "FAILED")
    assert event.data["errorDetail"]["code"] == "131047"


async def test_an_undeliverable_message_shows_131026(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/failed_131026_undeliverable.json")
    listed = await _listed(client, office_a, message)
    assert listed["status"] == "FAILED"
    assert listed["errorDetail"] == {
        "code": "131026",
        "title": "Message undeliverable",
        "details": "Message Undeliverable.",
    }


async def test_a_failed_status_without_errors_still_fails_the_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/failed_without_errors.json")
    listed = await _listed(client, office_a, message)
    assert listed["status"] == "FAILED"
    assert listed["error"] == "the platform reported a failure"
    assert listed["errorDetail"] == {"code": None, "title": None, "details": None}


async def test_an_odd_error_is_kept_as_far_as_it_reads(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The code as a string, no title, ``details`` null, keys we do not know: kept, 200."""
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/failed_odd_error.json")
    listed = await _listed(client, office_a, message)
    text = "This message was not delivered to maintain healthy ecosystem engagement."
    assert listed["status"] == "FAILED"
    assert listed["errorDetail"] == {"code": "131049", "title": text, "details": text}


async def test_a_sent_status_keeps_the_conversation_and_pricing_on_the_message(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/sent_with_conversation_and_pricing.json")
    listed = await _listed(client, office_a, message)
    assert listed["status"] == "SENT"
    assert listed["pricing"] == {
        "category": "service",
        "type": None,
        "billable": True,
        "pricingModel": "CBP",
        "conversation": {
            "id": "6ceb9d929c0e5f6c2d1a6c4f8a7e0b21",
            "originType": "service",
            "expiresAt": "2026-01-02T12:00:00.000Z",
        },
    }
    # The status did not change: no event.
    assert await outbox(app, office_a.id, "chat.message.status") == []


async def test_per_message_pricing_is_kept_without_a_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/per_message_pricing.json")
    listed = await _listed(client, office_a, message)
    assert listed["status"] == "DELIVERED"
    assert listed["pricing"] == {
        "category": "utility",
        "type": "regular",
        "billable": True,
        "pricingModel": "PMP",
        "conversation": None,
    }


async def test_statuses_of_unknown_messages_are_ignored_without_error(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    ident = (await sent_message(session, integration)).id
    await _replay(client, integration, "status/unknown_message.json")
    session.expire_all()
    stored = await session.get(Message, ident)
    assert stored is not None and stored.status == "SENT"
    assert await outbox(app, office_a.id, "chat.message.status") == []


async def test_a_status_for_another_offices_message_changes_nothing(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    """The same platform message id in another office: only the integration's office is
    looked at."""
    integration_a = await official_integration(session, office_a.id)
    integration_b = await official_integration(session, office_b.id, device_id="5511999990001")
    theirs = (await sent_message(session, integration_b)).id
    await _replay(client, integration_a, "status/failed_131026_undeliverable.json")
    session.expire_all()
    stored = await session.get(Message, theirs)
    assert stored is not None and (stored.status, stored.error_detail) == ("SENT", None)
    assert await outbox(app, office_b.id, "chat.message.status") == []


async def test_an_unknown_status_word_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/unknown_status_word.json")
    listed = await _listed(client, office_a, message)
    assert (listed["status"], listed["errorDetail"]) == ("SENT", None)
    assert await outbox(app, office_a.id, "chat.message.status") == []


async def test_a_late_delivered_never_moves_read_back(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/read_then_delivered.json", "status/delivered.json")
    listed = await _listed(client, office_a, message)
    assert listed["status"] == "READ"
    events = await outbox(app, office_a.id, "chat.message.status")
    assert [(e.data["previousStatus"], e.data["status"]) for e in events] == [("SENT", "READ")]
    # The late status's pricing is still kept.
    assert listed["pricing"]["pricingModel"] == "CBP"


async def test_a_failure_after_delivered_is_kept(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/delivered_then_failed.json")
    listed = await _listed(client, office_a, message)
    assert (listed["status"], listed["errorDetail"]["code"]) == ("FAILED", "131026")
    # A failure is final: a late read does not hide it.
    await _replay(client, integration, "status/read.json")
    assert (await _listed(client, office_a, message))["status"] == "FAILED"


async def test_a_failure_after_read_is_ignored(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(
        client, integration, "status/read.json", "status/failed_131026_undeliverable.json"
    )
    listed = await _listed(client, office_a, message)
    assert (listed["status"], listed["errorDetail"]) == ("READ", None)


async def test_statuses_of_two_messages_in_one_change_each_apply(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    first = await sent_message(session, integration)
    second = await sent_message(session, integration, OTHER_WAMID, phone="+5511987650000")
    await _replay(client, integration, "status/two_messages_one_change.json")
    assert (await _listed(client, office_a, first))["status"] == "DELIVERED"
    failed = await _listed(client, office_a, second)
    assert (failed["status"], failed["errorDetail"]["code"]) == ("FAILED", "131047")


async def test_the_message_schema_documents_error_detail_and_pricing(
    client: httpx.AsyncClient,
) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    properties = schemas["MessageOut"]["properties"]
    assert {"error", "errorDetail", "pricing"} <= set(properties)
    assert set(schemas["MessageError"]["properties"]) == {"code", "title", "details"}
    assert set(schemas["MessagePricing"]["properties"]) == {
        "category",
        "type",
        "billable",
        "pricingModel",
        "conversation",
    }


async def test_a_stored_failure_is_read_back_from_the_database(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    ident = (await sent_message(session, integration)).id
    await _replay(client, integration, "status/failed_131047_outside_window.json")
    session.expire_all()
    stored = await session.scalar(select(Message).where(Message.id == ident))
    assert stored is not None and stored.error_detail is not None
    assert stored.error_detail["code"] == "131047"


async def test_statuses_arriving_at_once_never_move_a_message_back(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    names = ["status/read.json", "status/delivered.json", "status/per_message_pricing.json"] * 2
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(
            len(names), lambda i: post_notification(c, integration.id, fixture(names[i]))
        )
        assert [a.status_code for a in answers] == [200] * len(names)
        listed = await _listed(c, office_a, message)
    assert listed["status"] == "READ"
    events = await outbox(app, office_a.id, "chat.message.status")
    rank = {"SENT": 1, "DELIVERED": 2, "READ": 3}
    moves = [(rank[e.data["previousStatus"]], rank[e.data["status"]]) for e in events]
    assert all(before < after for before, after in moves), moves
    assert [e.data["status"] for e in events][-1] == "READ"


async def test_odd_pricing_and_error_data_are_kept_as_far_as_they_read(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Numbers for timestamps, a string for a billable flag, objects where text belongs,
    a string where an object belongs: nothing refused, the sound parts kept."""
    integration = await official_integration(session, office_a.id)
    message = await sent_message(session, integration)
    await _replay(client, integration, "status/odd_pricing_and_error_data.json")
    listed = await _listed(client, office_a, message)
    assert listed["status"] == "FAILED"
    assert listed["errorDetail"] == {
        "code": "131026",
        "title": "Message undeliverable",
        "details": None,
    }
    assert listed["pricing"] == {
        "category": "5",
        "type": None,
        "billable": None,
        "pricingModel": None,
        "conversation": {"id": "123", "originType": None, "expiresAt": None},
    }
