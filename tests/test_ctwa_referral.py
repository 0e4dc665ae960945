"""Click-to-WhatsApp ad origins: a message sent from an ad (its ``referral``) fills the CRM
card's ``leadOrigin``; the conversation keeps the origin until a card of it is created, and
a card of the conversation that has none gets it. Driven by the recorded notifications
``tests/fixtures/whatsapp/referral_*.json``."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.messages.models import Message
from tests import factories as f
from tests.automation_helpers import automation_worker
from tests.helpers import OfficeFixture, outbox
from tests.whatsapp_fixtures import fixture
from tests.whatsapp_world import (
    notification,
    official_integration,
    post_notification,
    text_message,
)

AD_ORIGIN = {
    "source": "ctwa_ad",
    "campaignName": "Revisão de aposentadoria",
    "adContent": "Fale com um advogado previdenciário hoje.\nAtendimento em todo o Brasil.",
    "thumbnailUrl": "https://scontent.xx.fbcdn.net/v/t45.1600-4/ad-thumb.jpg",
    "adUrl": "https://fb.me/3cr4Wqqkv",
    "conversionMessage": "Olá! Quero saber mais sobre a revisão.",
    "messageAt": "2026-01-01T12:00:00.000Z",
}


async def _from_ad(
    client: httpx.AsyncClient, integration: Integration, name: str = "referral_ad.json"
) -> None:
    r = await post_notification(client, integration.id, fixture(name))
    assert (r.status_code, r.json()) == (200, {"stored": 1}), r.text


async def _conversation(session: AsyncSession, office_id: str) -> Conversation:
    stmt = (
        select(Conversation)
        .where(Conversation.office_id == office_id)
        .execution_options(populate_existing=True)
    )
    found = await session.scalar(stmt)
    assert found is not None
    return found


async def _create_card(
    client: httpx.AsyncClient, office: OfficeFixture, column_id: str, conversation: Conversation
) -> httpx.Response:
    return await client.post(
        "/funnel-column-card",
        json={
            "columnId": column_id,
            "personId": conversation.person_id,
            "conversationId": conversation.id,
        },
        headers=office.headers,
    )


async def test_a_first_message_from_an_ad_keeps_its_origin_on_the_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _from_ad(client, integration)
    conversation = await _conversation(session, office_a.id)
    assert conversation.lead_origin == AD_ORIGIN


async def test_a_card_created_for_the_conversation_takes_the_ads_origin(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    _, columns = await f.make_funnel(session, office_a.id, integration.inbox_id)
    column_id = columns[0].id
    await session.commit()
    await _from_ad(client, integration)
    conversation = await _conversation(session, office_a.id)
    r = await _create_card(client, office_a, column_id, conversation)
    assert r.status_code == 201, r.text
    assert r.json()["leadOrigin"] == AD_ORIGIN
    r = await client.get(f"/funnel-column-card/{r.json()['id']}", headers=office_a.headers)
    assert r.json()["leadOrigin"] == AD_ORIGIN


async def test_a_card_created_with_its_own_origin_keeps_it(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    _, columns = await f.make_funnel(session, office_a.id, integration.inbox_id)
    column_id = columns[0].id
    await session.commit()
    await _from_ad(client, integration)
    conversation = await _conversation(session, office_a.id)
    r = await client.post(
        "/funnel-column-card",
        json={
            "columnId": column_id,
            "personId": conversation.person_id,
            "conversationId": conversation.id,
            "leadOrigin": {"source": "indicação"},
        },
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert r.json()["leadOrigin"]["source"] == "indicação"


async def test_an_existing_card_without_an_origin_gets_the_ads_origin(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The client wrote first without an ad, a card was made, then came through an ad."""
    integration = await official_integration(session, office_a.id)
    _, columns = await f.make_funnel(session, office_a.id, integration.inbox_id)
    column_id = columns[0].id
    await session.commit()
    r = await post_notification(
        client, integration.id, notification([text_message("wamid.first-plain")])
    )
    assert r.json() == {"stored": 1}
    conversation = await _conversation(session, office_a.id)
    r = await _create_card(client, office_a, column_id, conversation)
    assert r.json()["leadOrigin"] is None
    card_id = r.json()["id"]
    await _from_ad(client, integration)
    r = await client.get(f"/funnel-column-card/{card_id}", headers=office_a.headers)
    assert r.json()["leadOrigin"] == AD_ORIGIN
    [updated] = await outbox(app, office_a.id, "crm.lead.updated")
    assert updated.data["changes"] == ["leadOrigin"]


async def test_the_first_ad_wins(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _from_ad(client, integration)
    await _from_ad(client, integration, "referral_post_odd.json")
    conversation = await _conversation(session, office_a.id)
    assert conversation.lead_origin == AD_ORIGIN


async def test_the_referrals_ids_are_kept_on_the_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _from_ad(client, integration)
    message = await session.scalar(select(Message).where(Message.office_id == office_a.id))
    assert message is not None and message.payload is not None
    assert message.payload["referral"] == {
        "sourceType": "ad",
        "sourceId": "120212345678901234",
        "sourceUrl": "https://fb.me/3cr4Wqqkv",
        "mediaType": "image",
        "imageUrl": "https://scontent.xx.fbcdn.net/v/t45.1600-4/ad-image.jpg",
        "thumbnailUrl": "https://scontent.xx.fbcdn.net/v/t45.1600-4/ad-thumb.jpg",
        "ctwaClid": "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0"
        "-eM-GABDLOPaOdRMv-_zfUQ2a",
    }
    assert message.text == "Olá! Quero saber mais sobre a revisão."


async def test_an_odd_post_referral_is_cleaned_not_refused(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A post, a headline over two lines with a control character, a URL that is not one,
    no body: kept as far as it is sound."""
    integration = await official_integration(session, office_a.id)
    await _from_ad(client, integration, "referral_post_odd.json")
    conversation = await _conversation(session, office_a.id)
    assert conversation.lead_origin == {
        "source": "ctwa_post",
        "campaignName": "Linha 1 Linha 2",
        "adContent": None,
        "thumbnailUrl": None,
        "adUrl": None,
        "conversionMessage": "Vi o post de vocês",
        "messageAt": "2026-01-01T12:00:00.000Z",
    }


async def test_a_message_without_a_referral_leaves_no_origin(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    r = await post_notification(client, integration.id, notification([text_message("wamid.x")]))
    assert r.json() == {"stored": 1}
    assert (await _conversation(session, office_a.id)).lead_origin is None


async def test_a_retried_ad_message_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _from_ad(client, integration)
    r = await post_notification(client, integration.id, fixture("referral_ad.json"))
    assert (r.status_code, r.json()) == (200, {"stored": 0})
    assert len(await outbox(app, office_a.id, "chat.message.received")) == 1


async def test_the_card_a_flow_creates_takes_the_ads_origin(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """The inbox's flow puts the client in a funnel column (``CHANGE_CRM_COLUMN``) on their
    first message, which came from an ad: the card it creates has the ad's origin."""
    integration = await official_integration(session, office_a.id)
    funnel, columns = await f.make_funnel(session, office_a.id, integration.inbox_id)
    funnel_id, column_id, inbox_id = funnel.id, columns[0].id, integration.inbox_id
    await session.commit()
    step = {
        "id": "s1",
        "content": "",
        "type": "system",
        "systemAction": "CHANGE_CRM_COLUMN",
        "metadata": {"funnelId": funnel_id, "funnelColumnId": column_id},
        "nextStepId": None,
    }
    body = {
        "name": "Entrada de anúncios",
        "inboxId": inbox_id,
        "isSocialFlow": False,
        "content": {"steps": [step], "initialStepId": "s1"},
    }
    r = await client.post("/flow/", json=body, headers=office_a.headers)
    assert r.status_code == 201, r.text
    await _from_ad(client, integration)
    await automation_worker(app, settings).run_until_idle()
    conversation = await _conversation(session, office_a.id)
    r = await client.get(
        f"/funnel-column-card/person/{conversation.person_id}/conversation/{conversation.id}",
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    assert (r.json()["columnId"], r.json()["leadOrigin"]) == (column_id, AD_ORIGIN)
