"""WhatsApp usernames and business-scoped user ids (BSUIDs, issue 40): every notification
naming a client by user id only lands on one contact, whatever mix of phone and user id
arrives; replies reach the platform with ``recipient``. The notifications are the fixtures
of ``tests/fixtures/whatsapp/identity/``, signed and posted to a running server."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Browser, expect
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.whatsapp import sign
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from tests import factories as f
from tests.browser import new_page
from tests.helpers import OfficeFixture, error_of, outbox
from tests.whatsapp_fixtures import FIXTURES, catalogue_template
from tests.whatsapp_platform import VERSION, Platform
from tests.whatsapp_world import APP_SECRET, PHONE_NUMBER_ID, official_integration, worker

BSUID = "BR.1502576394655843"
NEW_BSUID = "BR.1779432061588210"
PHONE = "+5511987654321"
FIRST = "wamid.HBgLQlNVSUQtT05MWRUCABIYFjNFQjA1MDAwMDAwMDAwMDAwMDAwMQA="


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


@pytest.fixture
async def served(server_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the test's app served by uvicorn (``server_url``)."""
    async with httpx.AsyncClient(base_url=server_url, timeout=30) as c:
        yield c


def _raw(name: str) -> bytes:
    return (FIXTURES / "identity" / f"{name}.json").read_bytes()


async def _post(served: httpx.AsyncClient, integration_id: str, raw: bytes) -> int:
    """Posts a notification signed as the platform signs it; answers how many were stored."""
    r = await served.post(
        f"/channels/whatsapp/{integration_id}/webhook",
        content=raw,
        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(APP_SECRET, raw)},
    )
    assert r.status_code == 200, r.text
    stored: int = r.json()["stored"]
    return stored


async def _replay(served: httpx.AsyncClient, integration_id: str, *names: str) -> list[int]:
    return [await _post(served, integration_id, _raw(name)) for name in names]


async def _contacts(session: AsyncSession, office_id: str) -> list[Contact]:
    stmt = select(Contact).where(Contact.office_id == office_id).order_by(Contact.created_at)
    return list(await session.scalars(stmt.execution_options(populate_existing=True)))


async def _messages(session: AsyncSession, office_id: str) -> list[Message]:
    stmt = select(Message).where(Message.office_id == office_id).order_by(Message.created_at)
    return list(await session.scalars(stmt.execution_options(populate_existing=True)))


async def _person(served: httpx.AsyncClient, office: OfficeFixture, ident: str) -> dict[str, Any]:
    r = await served.get(f"/people/{ident}", headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


# A client known by a user id only


async def test_a_message_naming_only_a_user_id_makes_its_contact_and_conversation(
    app: FastAPI, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _replay(served, integration.id, "username_only_text") == [1]
    [contact] = await _contacts(session, office_a.id)
    person = await _person(served, office_a, contact.id)
    assert (person["name"], person["phone"], person["whatsappId"]) == ("Maria Souza", None, None)
    assert (person["whatsappUserId"], person["username"]) == (BSUID, "maria.souza")
    [message] = await _messages(session, office_a.id)
    assert (message.external_id, message.direction, message.text) == (
        FIRST,
        "INBOUND",
        "Oi, sou a Maria, preciso falar com o advogado",
    )
    conversation = await session.get(Conversation, message.conversation_id)
    assert conversation is not None
    assert (conversation.person_id, conversation.integration_id) == (contact.id, integration.id)
    # The platform retries: nothing new.
    assert await _replay(served, integration.id, "username_only_text") == [0]
    assert len(await _contacts(session, office_a.id)) == 1
    [created] = await outbox(app, office_a.id, "contact.created")
    assert (created.data["whatsappUserId"], created.data["username"]) == (BSUID, "maria.souza")


async def test_a_contact_known_by_phone_learns_its_user_id_when_both_arrive(
    app: FastAPI, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    known = await f.make_contact(session, office_a.id, phone=PHONE)
    await session.commit()
    assert await _replay(served, integration.id, "phone_and_user_id_text") == [1]
    [contact] = await _contacts(session, office_a.id)
    assert contact.id == known.id
    person = await _person(served, office_a, known.id)
    assert (person["phone"], person["whatsappUserId"], person["username"]) == (
        PHONE,
        BSUID,
        "maria.souza",
    )
    updated = await outbox(app, office_a.id, "contact.updated")
    assert updated[-1].data["whatsappUserId"] == BSUID
    # Later messages naming the user id only land on the same contact.
    assert await _replay(served, integration.id, "username_only_text") == [1]
    assert [c.id for c in await _contacts(session, office_a.id)] == [known.id]
    messages = await _messages(session, office_a.id)
    assert len({m.conversation_id for m in messages}) == 1


async def test_a_user_id_contact_gains_its_phone_when_the_platform_reveals_it(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _replay(
        served, integration.id, "username_only_text", "phone_and_user_id_text"
    ) == [
        1,
        1,
    ]
    [contact] = await _contacts(session, office_a.id)
    person = await _person(served, office_a, contact.id)
    assert (person["phone"], person["whatsappId"], person["whatsappUserId"]) == (
        PHONE,
        "5511987654321",
        BSUID,
    )


async def test_a_phone_contact_and_a_user_id_contact_revealed_as_one_person_are_merged(
    app: FastAPI, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The office knew the client by phone; the client wrote with their username (a second
    contact); a message naming both makes them one, the older kept, nothing lost."""
    integration = await official_integration(session, office_a.id)
    known = await f.make_contact(session, office_a.id, phone=PHONE, name="Maria (escritório)")
    await session.commit()
    assert await _replay(served, integration.id, "username_only_text") == [1]
    assert len(await _contacts(session, office_a.id)) == 2
    assert await _replay(served, integration.id, "phone_and_user_id_text") == [1]
    [contact] = await _contacts(session, office_a.id)
    assert contact.id == known.id
    assert (contact.name, contact.phone, contact.whatsapp_user_id) == (
        "Maria (escritório)",
        PHONE,
        BSUID,
    )
    messages = await _messages(session, office_a.id)
    assert len(messages) == 2 and messages[0].external_id == FIRST
    conversations = set(
        await session.scalars(
            select(Conversation.person_id).where(Conversation.office_id == office_a.id)
        )
    )
    assert conversations == {known.id}
    [deleted] = await outbox(app, office_a.id, "contact.deleted")
    assert (deleted.data["mergedIntoId"], deleted.data["erased"]) == (known.id, False)


async def test_a_phone_contact_holding_another_user_id_is_not_merged(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Another user id on the phone's contact: two WhatsApp users, kept apart."""
    integration = await official_integration(session, office_a.id)
    other = await f.make_contact(session, office_a.id, phone=PHONE)
    other.whatsapp_user_id = "BR.4444444444444444"
    await session.commit()
    assert await _replay(served, integration.id, "username_only_text") == [1]
    assert await _replay(served, integration.id, "phone_and_user_id_text") == [1]
    contacts = await _contacts(session, office_a.id)
    assert [(c.phone, c.whatsapp_user_id) for c in contacts] == [
        (PHONE, "BR.4444444444444444"),
        (None, BSUID),
    ]


async def test_statuses_reactions_and_edits_naming_only_the_user_id_land_on_their_message(
    app: FastAPI,
    settings: Settings,
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    [inbound] = await _messages(session, office_a.id)
    r = await served.post(
        f"/conversation/{inbound.conversation_id}/messages",
        json={"text": "Olá Maria, recebemos."},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert await worker(app, settings).run_once() == 1
    assert platform.sent[0]["recipient"] == BSUID  # sent as wamid.test0001
    assert await _replay(
        served,
        integration.id,
        "status_user_id_only",
        "username_only_reaction",
        "username_only_edit",
    ) == [0, 0, 0]
    listed = await served.get(
        f"/conversation/{inbound.conversation_id}/messages", headers=office_a.headers
    )
    by_id = {m["externalId"]: m for m in listed.json()["data"]}
    sent = by_id["wamid.test0001"]
    assert sent["status"] == "DELIVERED"
    assert sent["pricing"]["pricingModel"] == "PMP"
    assert sent["pricing"]["type"] == "free_customer_service"
    assert [r["emoji"] for r in sent["reactions"]] == ["👍"]
    edited = by_id[FIRST]
    assert edited["text"] == "Oi, sou a Maria Souza, preciso falar com o advogado"
    assert edited["originalText"] == "Oi, sou a Maria, preciso falar com o advogado"
    assert len(await _contacts(session, office_a.id)) == 1


async def test_a_status_naming_both_ids_teaches_the_phone_contact_its_user_id(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    contact = await f.make_contact(session, office_a.id, phone=PHONE)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    session.add(
        Message(
            office_id=office_a.id,
            conversation_id=conversation.id,
            direction="OUTBOUND",
            type="TEXT",
            text="Bom dia",
            status="SENT",
            created_at=utcnow(),
            external_id="wamid.test0001",
            attempts=1,
        )
    )
    await session.commit()
    assert await _replay(served, integration.id, "status_both_ids") == [0]
    [learnt] = await _contacts(session, office_a.id)
    assert learnt.whatsapp_user_id == BSUID
    [message] = await _messages(session, office_a.id)
    assert message.status == "READ"


# The user id changes


async def test_user_id_update_moves_the_contact_to_its_new_user_id(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    [contact] = await _contacts(session, office_a.id)
    assert await _replay(served, integration.id, "user_id_update") == [0]
    [moved] = await _contacts(session, office_a.id)
    assert (moved.id, moved.whatsapp_user_id) == (contact.id, NEW_BSUID)
    # The client's next message, by the new id, is theirs.
    raw = _raw("username_only_text").decode()
    raw = raw.replace(BSUID, NEW_BSUID).replace(FIRST, "wamid.AFTER-THE-CHANGE")
    assert await _post(served, integration.id, raw.encode()) == 1
    assert [c.id for c in await _contacts(session, office_a.id)] == [contact.id]


async def test_user_id_update_merges_the_contact_that_already_wrote_with_the_new_id(
    app: FastAPI, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The client wrote with the new id before the update arrived: one WhatsApp user."""
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    raw = _raw("username_only_text").decode()
    raw = raw.replace(BSUID, NEW_BSUID).replace(FIRST, "wamid.BEFORE-THE-UPDATE")
    assert await _post(served, integration.id, raw.encode()) == 1
    older, newer = await _contacts(session, office_a.id)
    assert await _replay(served, integration.id, "user_id_update") == [0]
    [kept] = await _contacts(session, office_a.id)
    assert (kept.id, kept.whatsapp_user_id) == (older.id, NEW_BSUID)
    assert {m.external_id for m in await _messages(session, office_a.id)} == {
        FIRST,
        "wamid.BEFORE-THE-UPDATE",
    }
    [deleted] = await outbox(app, office_a.id, "contact.deleted")
    assert deleted.data["id"] == newer.id


async def test_system_user_changed_user_id_gives_the_contact_its_new_user_id(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    assert await _replay(served, integration.id, "system_user_changed_user_id") == [1]
    [contact] = await _contacts(session, office_a.id)
    assert contact.whatsapp_user_id == NEW_BSUID
    system = (await _messages(session, office_a.id))[-1]
    assert system.type == "SYSTEM"
    assert system.content is not None and system.content["newUserId"] == NEW_BSUID


async def test_system_user_changed_number_moves_phone_and_user_id(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "phone_and_user_id_text")
    assert await _replay(served, integration.id, "system_user_changed_number") == [1]
    [contact] = await _contacts(session, office_a.id)
    assert (contact.phone, contact.whatsapp_id, contact.whatsapp_user_id) == (
        "+5511912340000",
        "5511912340000",
        NEW_BSUID,
    )


# Sends


async def test_a_reply_to_a_username_only_client_reaches_the_platform_with_recipient(
    app: FastAPI,
    settings: Settings,
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    [inbound] = await _messages(session, office_a.id)
    r = await served.post(
        f"/conversation/{inbound.conversation_id}/messages",
        json={"text": "Olá! Como podemos ajudar?"},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert await worker(app, settings).run_once() == 1
    assert platform.sent == [
        {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "recipient": BSUID,
            "type": "text",
            "text": {"body": "Olá! Como podemos ajudar?", "preview_url": False},
        }
    ]
    assert platform.send_paths == [f"/{VERSION}/{PHONE_NUMBER_ID}/messages"]
    sent = await served.get(
        f"/conversation/{inbound.conversation_id}/messages", headers=office_a.headers
    )
    assert sent.json()["data"][0]["status"] == "SENT"


async def test_an_authentication_template_to_a_contact_without_phone_is_refused(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await catalogue_template(
        session, integration, status="APPROVED", category="AUTHENTICATION", name="codigo"
    )
    await _replay(served, integration.id, "username_only_text")
    [inbound] = await _messages(session, office_a.id)
    r = await served.post(
        f"/conversation/{inbound.conversation_id}/messages",
        json={"templateName": "codigo", "language": "pt_BR", "variables": ["Maria", "123456"]},
        headers=office_a.headers,
    )
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "CONTACT_HAS_NO_PHONE"
    assert "131062" in error_of(r)["details"]
    assert len(await _messages(session, office_a.id)) == 1  # nothing stored


async def test_an_utility_template_to_a_contact_without_phone_goes_with_recipient(
    app: FastAPI,
    settings: Settings,
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await catalogue_template(session, integration, status="APPROVED", category="UTILITY")
    await _replay(served, integration.id, "username_only_text")
    [inbound] = await _messages(session, office_a.id)
    r = await served.post(
        f"/conversation/{inbound.conversation_id}/messages",
        json={
            "templateName": "lembrete_audiencia",
            "language": "pt_BR",
            "variables": ["Maria", "10/02"],
        },
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert await worker(app, settings).run_once() == 1
    [sent] = platform.sent
    assert (sent.get("to"), sent["recipient"], sent["type"]) == (None, BSUID, "template")


# Search


async def test_a_contact_without_phone_is_found_by_username_and_by_name(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    await f.make_contact(session, office_a.id, phone="+5511911112222", name="Outra Pessoa")
    await session.commit()
    for search in ("MARIA.SOU", "maria souza", "a.s"):
        r = await served.get("/people", params={"search": search}, headers=office_a.headers)
        assert r.status_code == 200, r.text
        assert [p["username"] for p in r.json()["data"]] == ["maria.souza"], search
    r = await served.get("/people", params={"search": "nobody.here"}, headers=office_a.headers)
    assert r.json()["data"] == []


# Malformed, foreign and quoted


async def test_malformed_ids_read_as_missing_and_nothing_attributable_is_lost(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _replay(served, integration.id, "malformed_identities") == [2]
    contacts = await _contacts(session, office_a.id)
    found = {(c.phone, c.whatsapp_user_id, c.whatsapp_username, c.name) for c in contacts}
    assert found == {
        ("+5511977776666", None, "joao", "João"),
        (None, "BR.9988776655443322", None, "Contato do WhatsApp"),
    }
    stored = {m.external_id for m in await _messages(session, office_a.id)}
    assert stored == {"wamid.PHONE-AND-ODD-USER-ID", "wamid.USER-ID-ODD-PROFILE"}


async def test_a_notification_for_another_phone_number_id_is_acknowledged_and_not_stored(
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 39: offices sharing one app secret cannot file each other's clients."""
    integration = await official_integration(session, office_a.id)
    with caplog.at_level(logging.WARNING, logger="officehub.channels"):
        assert await _replay(served, integration.id, "other_phone_number_id") == [0]
    assert await _contacts(session, office_a.id) == []
    assert await _messages(session, office_a.id) == []
    logged = [r.getMessage() for r in caplog.records if "another phone number id" in r.getMessage()]
    assert logged and integration.id in logged[0]
    assert all("5511987654321" not in m and "Maria" not in m and BSUID not in m for m in logged)
    # The same notification for its own number is stored.
    raw = _raw("other_phone_number_id").decode().replace("998877665544332", "106540352242922")
    assert await _post(served, integration.id, raw.encode()) == 1


async def test_a_reply_quoting_a_message_not_stored_keeps_the_platforms_quoted_id(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _replay(served, integration.id, "reply_to_unknown") == [1]
    [message] = await _messages(session, office_a.id)
    listed = await served.get(
        f"/conversation/{message.conversation_id}/messages", headers=office_a.headers
    )
    [shown] = listed.json()["data"]
    assert (shown["replyTo"], shown["replyToExternalId"]) == (
        None,
        "wamid.SENT-BEFORE-WE-STORED-ANYTHING",
    )


# The Graph API version


def test_the_default_graph_api_version_is_one_the_platform_supports() -> None:
    """v21.0 is retired on 21 January 2027; the default is a current version, the one the
    stand-in platform answers (so every test speaks it)."""
    default = str(Settings.model_fields["whatsapp_api_url"].default)
    version = default.rsplit("/", 1)[-1]
    assert default == f"https://graph.facebook.com/{version}"
    assert version == VERSION
    assert float(version.removeprefix("v")) >= 23.0


async def test_a_marketing_stop_naming_only_the_user_id_opts_its_contact_out(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    [contact] = await _contacts(session, office_a.id)
    assert await _replay(served, integration.id, "marketing_stop_by_user_id") == [0]
    person = await _person(served, office_a, contact.id)
    assert person["marketingOptOut"] is True
    consents = await served.get(f"/people/{contact.id}/consents", headers=office_a.headers)
    [latest] = consents.json()["data"]
    assert (latest["purpose"], latest["granted"], latest["source"]) == (
        "marketing",
        False,
        "whatsapp",
    )


async def test_the_console_shows_a_username_only_client_by_their_username(
    browser: Browser, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _replay(served, integration.id, "username_only_text")
    async with new_page(browser, 1280, 800) as page:
        await page.goto(f"{served.base_url}/console")
        await page.get_by_text("Integradores: entrar com uma chave de API").click()
        await page.get_by_label("Chave de API").fill(office_a.key)
        await page.get_by_role("button", name="Entrar com a chave").click()
        await page.get_by_role("link", name="Conversas").click()
        await page.get_by_role("button", name=re.compile("Maria Souza")).click()
        head = page.locator(".conversation-head")
        await expect(head).to_contain_text(
            "WhatsApp: maria.souza (nome de usuário)", timeout=10_000
        )
