"""A web chat visitor's claimed phone verified by a one-time code sent through the office's
WhatsApp channel (issue 27): the code reaches the phone's WhatsApp (the WhatsApp stand-in,
``platform``), the visitor types it in the widget, and only then is the visitor the client.
Wrong, expired, exhausted and reused codes, rate limits per contact and per phone, and two
confirmations of one code at once."""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.contacts.texts import UNVERIFIED_REFUSAL
from officehub.conversations.models import Conversation
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from officehub.webchat.models import ClaimCode
from tests.helpers import OfficeFixture, error_of
from tests.server import concurrent_client, fire
from tests.test_flow_runtime import create_flow, outbound, system, work
from tests.webchat_world import make_webchat, start_visitor, visitor_headers
from tests.whatsapp_platform import Platform, error
from tests.whatsapp_world import notification, official_integration, post_notification, text_message

CLIENT_PHONE = "+5511987654321"
CLIENT_WA_ID = "5511987654321"
SECRET = "Acordo confidencial: R$ 250.000"
CLIENT_SAID = "Mensagem sigilosa do cliente pelo WhatsApp"


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The office's WhatsApp channel talks to the stand-in."""
    return whatsapp_settings


def _code_in(sent: dict[str, Any]) -> str:
    """The six digits a message to the platform carries (text or template parameter)."""
    if sent["type"] == "text":
        found = re.search(r"\b(\d{6})\b", sent["text"]["body"])
        assert found is not None, sent
        return found.group(1)
    body = next(c for c in sent["template"]["components"] if c["type"] == "body")
    code: str = body["parameters"][0]["text"]
    return code


async def _ask_code(client: httpx.AsyncClient, chat_id: str, token: str) -> httpx.Response:
    return await client.post(f"/webchat/{chat_id}/verification", headers=visitor_headers(token))


async def _confirm(
    client: httpx.AsyncClient, chat_id: str, token: str, code: str
) -> httpx.Response:
    return await client.post(
        f"/webchat/{chat_id}/verification/confirm",
        json={"code": code},
        headers=visitor_headers(token),
    )


async def _person_of(app: FastAPI, conversation_id: str) -> str:
    async with app.state.sessionmaker() as s:
        conversation = await s.get(Conversation, conversation_id)
        assert conversation is not None
        person_id: str = conversation.person_id
        return person_id


async def _contact(app: FastAPI, contact_id: str) -> Contact | None:
    async with app.state.sessionmaker() as s:
        found: Contact | None = await s.get(Contact, contact_id)
        return found


async def _codes(app: FastAPI, contact_id: str) -> list[ClaimCode]:
    async with app.state.sessionmaker() as s:
        stmt = select(ClaimCode).where(ClaimCode.contact_id == contact_id)
        return list(await s.scalars(stmt.order_by(ClaimCode.created_at)))


async def _age_codes(app: FastAPI, contact_id: str, by: timedelta, *, expire: bool = False) -> None:
    """Moves the contact's codes back in time (made ``by`` earlier; expired if asked)."""
    async with app.state.sessionmaker() as s:
        for row in await s.scalars(select(ClaimCode).where(ClaimCode.contact_id == contact_id)):
            row.created_at = row.created_at - by
            if expire:
                row.expires_at = utcnow() - timedelta(seconds=1)
        await s.commit()


async def _chat_with_whatsapp(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture, **chat: Any
) -> dict[str, Any]:
    await official_integration(session, office.id)
    return await make_webchat(client, office, **chat)


async def _visitor_with_code(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office: OfficeFixture,
    platform: Platform,
    phone: str = CLIENT_PHONE,
) -> tuple[dict[str, Any], dict[str, Any], str]:
    chat = await _chat_with_whatsapp(client, session, office)
    visitor = await start_visitor(client, chat["id"], phone=phone)
    asked = await _ask_code(client, chat["id"], visitor["token"])
    assert asked.status_code == 201, asked.text
    return chat, visitor, _code_in(platform.sent[-1])


async def test_a_visitor_confirming_the_code_sent_to_the_clients_whatsapp_becomes_the_client(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    """The takeover closed, end to end: a visitor claims the client's phone in the web chat
    and stays unverified, seeing nothing of the client (not the client's WhatsApp messages,
    not the movements); the code goes to the client's own WhatsApp; typed in the chat, it
    makes the visitor verified and one contact with the client, whose movements the flow
    then answers."""
    integration = await official_integration(session, office_a.id)
    chat = await make_webchat(client, office_a)
    saved = await client.post(
        "/people", json={"name": "Maria Souza", "phone": CLIENT_PHONE}, headers=office_a.headers
    )
    assert saved.status_code == 201, saved.text
    real_client = saved.json()
    wrote = await post_notification(
        client,
        integration.id,
        notification([text_message("wamid.C1", body=CLIENT_SAID)], sender=CLIENT_WA_ID),
    )
    assert wrote.status_code == 200, wrote.text
    movement = {
        "personId": real_client["id"],
        "caseNumber": "1000001-23.2024.8.26.0100",
        "description": SECRET,
        "occurredAt": "2026-01-05T12:00:00Z",
    }
    r = await client.post("/case-movements", json=movement, headers=office_a.headers)
    assert r.status_code == 201, r.text
    await create_flow(
        client, office_a, chat["inboxId"], [system("s1", "SEARCH_MOVEMENTS", {}, None)]
    )

    visitor = await start_visitor(client, chat["id"], name="Maria Souza", phone=CLIENT_PHONE)
    token = visitor["token"]
    claimant_id = await _person_of(app, visitor["conversationId"])
    assert claimant_id != real_client["id"]
    state = await client.get(f"/webchat/{chat['id']}/verification", headers=visitor_headers(token))
    assert state.json() == {"verified": False, "phoneEnding": "4321"}
    r = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Quero ver meu processo"},
        headers=visitor_headers(token),
    )
    assert r.status_code == 201, r.text
    await work(app, settings)
    assert await outbound(client, office_a, visitor["conversationId"]) == [UNVERIFIED_REFUSAL]
    seen = await client.get(f"/webchat/{chat['id']}/messages", headers=visitor_headers(token))
    assert CLIENT_SAID not in seen.text and SECRET not in seen.text

    sends_before = len(platform.sent)
    asked = await _ask_code(client, chat["id"], token)
    assert asked.status_code == 201, asked.text
    assert asked.json()["channel"] == "WHATSAPP" and asked.json()["phoneEnding"] == "4321"
    assert len(platform.sent) == sends_before + 1
    sent = platform.sent[-1]
    assert sent["to"] == CLIENT_WA_ID  # the client's own WhatsApp, where the client reads it
    code = _code_in(sent)
    assert code not in asked.text
    assert (await _contact(app, claimant_id)) is not None
    assert (await _contact(app, claimant_id)).verified is False  # type: ignore[union-attr]

    confirmed = await _confirm(client, chat["id"], token, code)
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json() == {"verified": True, "phoneEnding": "4321"}
    assert code not in confirmed.text
    assert await _contact(app, claimant_id) is None  # merged into the client
    assert await _person_of(app, visitor["conversationId"]) == real_client["id"]
    kept = await client.get(f"/people/{real_client['id']}", headers=office_a.headers)
    assert (kept.json()["verified"], kept.json()["phone"]) == (True, CLIENT_PHONE)
    holders = await client.get("/people", params={"search": "987654321"}, headers=office_a.headers)
    assert [p["id"] for p in holders.json()["data"]] == [real_client["id"]]

    closed = await client.patch(
        f"/conversation/{visitor['conversationId']}",
        json={"status": "CLOSED"},
        headers=office_a.headers,
    )
    assert closed.status_code == 200, closed.text
    r = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Quero ver meu processo"},
        headers=visitor_headers(token),
    )
    assert r.status_code == 201, r.text
    async with app.state.sessionmaker() as s:
        message = await s.get(Message, r.json()["id"])
        assert message is not None
        reopened = message.conversation_id
    assert await _person_of(app, reopened) == real_client["id"]
    await work(app, settings)
    answered = await outbound(client, office_a, reopened)
    assert any(SECRET in text for text in answered), answered


async def test_the_code_goes_as_the_offices_authentication_template(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    """With an approved authentication template named in the chat's settings, the code
    goes as that template: the body's {{1}} and the copy-code button's parameter."""
    integration = await official_integration(session, office_a.id)
    catalogue = {
        "data": [
            {
                "name": "codigo_verificacao",
                "status": "APPROVED",
                "category": "AUTHENTICATION",
                "language": "pt_BR",
                "components": [
                    {"type": "BODY", "text": "*{{1}}* é seu código de verificação."},
                    {"type": "BUTTONS", "buttons": [{"type": "OTP", "otp_type": "COPY_CODE"}]},
                ],
            }
        ]
    }
    r = await client.put(
        f"/integration/{integration.id}/whatsapp-templates",
        json=catalogue,
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    chat = await make_webchat(client, office_a)
    settings_body = {
        "webchat": {
            "allowedOrigins": ["https://escritorio.example"],
            "verification": {"integrationId": integration.id, "templateName": "codigo_verificacao"},
        }
    }
    r = await client.patch(
        f"/integration/{chat['id']}", json=settings_body, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["webchat"]["verification"]["templateName"] == "codigo_verificacao"
    visitor = await start_visitor(client, chat["id"], phone="+55 21 99876-5432")

    asked = await _ask_code(client, chat["id"], visitor["token"])
    assert asked.status_code == 201, asked.text
    sent = platform.sent[-1]
    assert sent["type"] == "template" and sent["to"] == "5521998765432"
    template = sent["template"]
    assert (template["name"], template["language"]) == ("codigo_verificacao", {"code": "pt_BR"})
    code = _code_in(sent)
    assert re.fullmatch(r"\d{6}", code)
    button = next(c for c in template["components"] if c["type"] == "button")
    assert button["parameters"] == [{"type": "text", "text": code}]
    confirmed = await _confirm(client, chat["id"], visitor["token"], code)
    assert confirmed.status_code == 200, confirmed.text
    person_id = await _person_of(app, visitor["conversationId"])
    person = await client.get(f"/people/{person_id}", headers=office_a.headers)
    assert (person.json()["verified"], person.json()["phone"]) == (True, "+5521998765432")


async def test_a_web_chat_setting_naming_a_channel_that_is_not_official_whatsapp_is_400(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
    session: AsyncSession,
) -> None:
    other_office = await official_integration(session, office_b.id, device_id="5511999990001")
    chat = await make_webchat(client, office_a)
    for wrong in (chat["id"], other_office.id):
        body = {
            "webchat": {
                "allowedOrigins": ["https://escritorio.example"],
                "verification": {"integrationId": wrong},
            }
        }
        r = await client.patch(f"/integration/{chat['id']}", json=body, headers=office_a.headers)
        assert r.status_code == 400, r.text
        assert "body.webchat.verification.integrationId" in error_of(r)["details"]
    kept = await client.get(f"/integration/{chat['id']}", headers=office_a.headers)
    assert kept.json()["webchat"]["verification"] is None


async def test_a_wrong_code_is_400_naming_the_field_and_spends_one_try(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    chat, visitor, code = await _visitor_with_code(client, session, office_a, platform)
    person = await _person_of(app, visitor["conversationId"])
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    r = await _confirm(client, chat["id"], visitor["token"], wrong)
    assert r.status_code == 400, r.text
    body = error_of(r)
    assert body["code"] == "WRONG_CODE" and "body.code" in body["details"]
    assert "4 attempt(s) left" in body["details"]
    assert [c.attempts for c in await _codes(app, person)] == [1]
    assert (await _contact(app, person)).verified is False  # type: ignore[union-attr]
    malformed = await _confirm(client, chat["id"], visitor["token"], "12a456")
    assert malformed.status_code == 400 and "body.code" in error_of(malformed)["details"]
    assert [c.attempts for c in await _codes(app, person)] == [1]
    right = await _confirm(client, chat["id"], visitor["token"], code)
    assert right.status_code == 200, right.text


async def test_an_expired_code_is_409_code_expired(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    chat, visitor, code = await _visitor_with_code(client, session, office_a, platform)
    person = await _person_of(app, visitor["conversationId"])
    (row,) = await _codes(app, person)
    assert timedelta(minutes=9) < row.expires_at - row.created_at <= timedelta(minutes=10)
    await _age_codes(app, person, timedelta(minutes=11), expire=True)
    r = await _confirm(client, chat["id"], visitor["token"], code)
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "CODE_EXPIRED"
    assert (await _contact(app, person)).verified is False  # type: ignore[union-attr]


async def test_five_wrong_tries_exhaust_the_code(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    chat, visitor, code = await _visitor_with_code(client, session, office_a, platform)
    person = await _person_of(app, visitor["conversationId"])
    wrong = f"{(int(code) + 7) % 10**6:06d}"
    for _ in range(5):
        r = await _confirm(client, chat["id"], visitor["token"], wrong)
        assert r.status_code == 400 and error_of(r)["code"] == "WRONG_CODE", r.text
    assert "no attempt left" in error_of(r)["details"]
    r = await _confirm(client, chat["id"], visitor["token"], code)
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "CODE_ATTEMPTS_EXHAUSTED"
    assert (await _contact(app, person)).verified is False  # type: ignore[union-attr]


async def test_a_used_code_is_409_and_no_code_asked_is_409(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    chat, visitor, code = await _visitor_with_code(client, session, office_a, platform)
    other = await start_visitor(client, chat["id"], phone="+55 31 99876-0000")
    r = await _confirm(client, chat["id"], other["token"], code)
    assert r.status_code == 409 and error_of(r)["code"] == "NO_CODE_REQUESTED", r.text
    assert (await _confirm(client, chat["id"], visitor["token"], code)).status_code == 200
    again = await _confirm(client, chat["id"], visitor["token"], code)
    assert again.status_code == 409 and error_of(again)["code"] == "CODE_USED", again.text
    asked = await _ask_code(client, chat["id"], visitor["token"])
    assert asked.status_code == 409 and error_of(asked)["code"] == "ALREADY_VERIFIED"


async def test_codes_are_rate_limited_per_contact(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    """A new code at most once a minute and three an hour per contact (429, Retry-After);
    a refused request sends nothing."""
    chat, visitor, _ = await _visitor_with_code(client, session, office_a, platform)
    person = await _person_of(app, visitor["conversationId"])
    sends = len(platform.sent)
    soon = await _ask_code(client, chat["id"], visitor["token"])
    assert soon.status_code == 429, soon.text
    assert error_of(soon)["code"] == "RATE_LIMITED" and 1 <= int(soon.headers["retry-after"]) <= 61
    for _ in range(2):
        await _age_codes(app, person, timedelta(seconds=61))
        assert (await _ask_code(client, chat["id"], visitor["token"])).status_code == 201
    await _age_codes(app, person, timedelta(seconds=61))
    fourth = await _ask_code(client, chat["id"], visitor["token"])
    assert fourth.status_code == 429, fourth.text
    assert "3 codes an hour" in error_of(fourth)["details"]
    assert int(fourth.headers["retry-after"]) > 60
    assert len(platform.sent) == sends + 2
    await _age_codes(app, person, timedelta(hours=1))
    assert (await _ask_code(client, chat["id"], visitor["token"])).status_code == 201


async def test_codes_to_one_phone_are_rate_limited_whoever_claims_it(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    """Visitors taking turns claiming one phone cannot flood its WhatsApp: five codes an
    hour to a phone, then 429 with Retry-After."""
    chat = await _chat_with_whatsapp(client, session, office_a)
    visitors = [await start_visitor(client, chat["id"], phone=CLIENT_PHONE) for _ in range(6)]
    answers = [await _ask_code(client, chat["id"], v["token"]) for v in visitors]
    assert [a.status_code for a in answers] == [201] * 5 + [429]
    assert "5 codes an hour to one phone" in error_of(answers[-1])["details"]
    assert int(answers[-1].headers["retry-after"]) > 0
    other = await start_visitor(client, chat["id"], phone="+55 11 91234-5678")
    assert (await _ask_code(client, chat["id"], other["token"])).status_code == 201


async def test_concurrent_confirmations_of_one_code_verify_once(
    app: FastAPI,
    server_url: str,
    office_a: OfficeFixture,
    session: AsyncSession,
    platform: Platform,
) -> None:
    """Four confirmations of the right code at once: exactly one verifies (a conditional
    UPDATE of the code's row), the others answer 409 ``CODE_USED``; one contact.updated."""
    async with concurrent_client(server_url) as http:
        chat, visitor, code = await _visitor_with_code(http, session, office_a, platform)
        person = await _person_of(app, visitor["conversationId"])

        async def confirm(_: int) -> httpx.Response:
            return await _confirm(http, chat["id"], visitor["token"], code)

        answers = await fire(4, confirm)
    codes = sorted(a.status_code for a in answers)
    assert codes == [200, 409, 409, 409], [a.text for a in answers]
    assert all(error_of(a)["code"] == "CODE_USED" for a in answers if a.status_code == 409)
    contact = await _contact(app, person)
    assert contact is not None and (contact.verified, contact.phone) == (True, CLIENT_PHONE)
    assert [c.used_at is not None for c in await _codes(app, person)] == [True]


async def test_the_code_is_never_answered_logged_stored_or_shown_to_the_office(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    chat, visitor, code = await _visitor_with_code(client, session, office_a, platform)
    person = await _person_of(app, visitor["conversationId"])
    confirmed = await _confirm(client, chat["id"], visitor["token"], code)
    assert confirmed.status_code == 200
    assert not [r for r in caplog.records if code in r.getMessage()]
    async with app.state.sessionmaker() as s:
        stored = await s.scalars(select(Message.text).where(Message.office_id == office_a.id))
        assert not [t for t in stored if t and code in t]
    (row,) = await _codes(app, person)
    assert code not in row.code_hash and len(row.code_hash) == 64


async def test_an_email_claim_or_an_office_without_whatsapp_cannot_get_a_code(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture, platform: Platform
) -> None:
    """The service has no email channel: an email claim is 409 VERIFICATION_UNAVAILABLE (an
    operator verifies it); so is a phone claim in an office without a WhatsApp channel."""
    no_whatsapp = await make_webchat(client, office_a)
    visitor = await start_visitor(client, no_whatsapp["id"])
    r = await _ask_code(client, no_whatsapp["id"], visitor["token"])
    assert r.status_code == 409 and error_of(r)["code"] == "VERIFICATION_UNAVAILABLE", r.text
    email_chat = await _chat_with_whatsapp(client, session, office_a, ask="EMAIL")
    started = await client.post(
        f"/webchat/{email_chat['id']}/start",
        json={"name": "Maria", "email": "maria@example.com"},
        headers={"origin": "https://escritorio.example"},
    )
    r = await _ask_code(client, email_chat["id"], started.json()["token"])
    assert r.status_code == 409 and error_of(r)["code"] == "VERIFICATION_UNAVAILABLE", r.text
    assert "email" in error_of(r)["details"]
    assert platform.sent == []


async def test_a_code_whatsapp_refuses_is_502_and_stops_working(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    chat = await _chat_with_whatsapp(client, session, office_a)
    visitor = await start_visitor(client, chat["id"])
    platform.script["send"] = [error(400, 131026, "Message undeliverable")]
    r = await _ask_code(client, chat["id"], visitor["token"])
    assert r.status_code == 502 and error_of(r)["code"] == "PLATFORM_ERROR", r.text
    code = _code_in(platform.sent[-1])
    confirmed = await _confirm(client, chat["id"], visitor["token"], code)
    assert confirmed.status_code == 409 and error_of(confirmed)["code"] == "CODE_EXPIRED"
    person = await _person_of(app, visitor["conversationId"])
    assert (await _contact(app, person)).verified is False  # type: ignore[union-attr]


async def test_the_verification_routes_need_the_visitors_token(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    chat = await _chat_with_whatsapp(client, session, office_a)
    origin = {"origin": "https://escritorio.example"}
    for method, path, body in (
        ("GET", "verification", None),
        ("POST", "verification", None),
        ("POST", "verification/confirm", {"code": "123456"}),
    ):
        r = await client.request(method, f"/webchat/{chat['id']}/{path}", json=body, headers=origin)
        assert r.status_code == 401, r.text


async def test_a_new_code_makes_the_earlier_one_stop_working(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    chat, visitor, first = await _visitor_with_code(client, session, office_a, platform)
    person = await _person_of(app, visitor["conversationId"])
    await _age_codes(app, person, timedelta(seconds=61))
    assert (await _ask_code(client, chat["id"], visitor["token"])).status_code == 201
    second = _code_in(platform.sent[-1])
    assert first != second  # two draws of 10**6 differ but once in a million
    stale = await _confirm(client, chat["id"], visitor["token"], first)
    assert stale.status_code == 400 and error_of(stale)["code"] == "WRONG_CODE", stale.text
    earlier, newer = await _codes(app, person)
    assert earlier.expires_at <= newer.created_at + timedelta(seconds=1)  # cut when newer came
    assert newer.expires_at - newer.created_at == timedelta(minutes=10)
    assert (await _confirm(client, chat["id"], visitor["token"], second)).status_code == 200
