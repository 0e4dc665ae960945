"""Web-chat identity: a phone or email typed in the web chat is a claim, never an identity.

A visitor's contact is unverified and holds what they typed as ``claimedPhone`` or
``claimedEmail``; it is never matched to, merged with, or blocking a contact the office or
WhatsApp holds; system actions that reveal a client's data refuse it; an operator verifies
it (``POST /people/{id}/verify``)."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.consumer import AUTOMATION
from officehub.cases.watch import Watcher
from officehub.contacts.models import Contact
from officehub.contacts.texts import UNVERIFIED_REFUSAL
from officehub.conversations.models import Conversation
from officehub.events.consumers import consumer_job
from officehub.kit.config import Settings
from officehub.kit.worker import Worker
from tests.automation_helpers import create_rule, runs
from tests.datajud_standin import running_datajud
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire
from tests.test_case_watch import (
    DISTRIBUTED,
    PETITION,
    TJSP_DIGITS,
    add_case,
    ctx_for,
    no_sleep,
    sync,
)
from tests.test_flow_runtime import create_flow, outbound, system, work
from tests.webchat_world import make_webchat, start_visitor, visitor_headers
from tests.whatsapp_world import notification, official_integration, post_notification, text_message

CLIENT_PHONE = "+5511987654321"
SECRET = "Acordo confidencial: R$ 250.000"
MISSING = "c" + "0" * 24


async def _person_of(app: FastAPI, conversation_id: str) -> str:
    async with app.state.sessionmaker() as s:
        conversation = await s.get(Conversation, conversation_id)
        assert conversation is not None
        person_id: str = conversation.person_id
        return person_id


async def _movement(client: httpx.AsyncClient, office: OfficeFixture, person_id: str) -> None:
    body = {
        "personId": person_id,
        "caseNumber": "1000001-23.2024.8.26.0100",
        "description": SECRET,
        "occurredAt": "2026-01-05T12:00:00Z",
    }
    r = await client.post("/case-movements", json=body, headers=office.headers)
    assert r.status_code == 201, r.text


async def _visitor_writes(client: httpx.AsyncClient, chat_id: str, token: str, text: str) -> None:
    r = await client.post(
        f"/webchat/{chat_id}/messages", json={"text": text}, headers=visitor_headers(token)
    )
    assert r.status_code == 201, r.text


async def _person(
    client: httpx.AsyncClient, office: OfficeFixture, person_id: str
) -> dict[str, Any]:
    r = await client.get(f"/people/{person_id}", headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def test_a_visitor_claiming_a_clients_phone_never_becomes_the_client(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """The takeover, end to end: a visitor claims a phone in the web chat; the office then
    saves its client with that phone (201, not 409); the client writes on WhatsApp and lands
    on the office's contact; the visitor asks for movements and is refused; the client's
    contact is separate and verified."""
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"], name="Maria Souza", phone=CLIENT_PHONE)
    visitor_person = await _person_of(app, visitor["conversationId"])

    saved = await client.post(
        "/people", json={"name": "Maria Souza", "phone": CLIENT_PHONE}, headers=office_a.headers
    )
    assert saved.status_code == 201, saved.text
    real_client = saved.json()
    assert real_client["verified"] is True and real_client["phone"] == CLIENT_PHONE
    await _movement(client, office_a, real_client["id"])
    await _movement(client, office_a, visitor_person)

    integration = await official_integration(session, office_a.id)
    wrote = await post_notification(
        client, integration.id, notification([text_message("wamid.T1")], sender="5511987654321")
    )
    assert wrote.status_code == 200, wrote.text
    async with app.state.sessionmaker() as s:
        whatsapp = await s.scalar(
            select(Conversation).where(
                Conversation.office_id == office_a.id,
                Conversation.integration_id == integration.id,
            )
        )
        assert whatsapp is not None
        assert whatsapp.person_id == real_client["id"]

    await create_flow(
        client, office_a, chat["inboxId"], [system("s1", "SEARCH_MOVEMENTS", {}, None)]
    )
    await _visitor_writes(client, chat["id"], visitor["token"], "Quero ver meu processo")
    await work(app, settings)
    answered = await outbound(client, office_a, visitor["conversationId"])
    assert answered == [UNVERIFIED_REFUSAL]
    assert not any(SECRET in text for text in answered)

    claimant = await _person(client, office_a, visitor_person)
    assert visitor_person != real_client["id"]
    assert (claimant["verified"], claimant["phone"], claimant["claimedPhone"]) == (
        False,
        None,
        CLIENT_PHONE,
    )
    assert (await _person(client, office_a, real_client["id"]))["verified"] is True


async def test_a_web_chat_contact_is_unverified_and_holds_the_phone_only_as_a_claim(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"], phone="+55 11 98765-4321")
    person = await _person(client, office_a, await _person_of(app, visitor["conversationId"]))
    assert (person["verified"], person["phone"], person["claimedPhone"]) == (
        False,
        None,
        CLIENT_PHONE,
    )
    [created] = await outbox(app, office_a.id, "contact.created")
    assert created.data["verified"] is False


async def test_a_web_chat_email_is_a_claim_and_matches_no_contact(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a, ask="EMAIL")
    started = await client.post(
        f"/webchat/{chat['id']}/start",
        json={"name": "Alguém", "email": "cliente@example.com"},
        headers={"origin": "https://escritorio.example"},
    )
    assert started.status_code == 201, started.text
    saved = await client.post(
        "/people",
        json={"name": "Cliente", "email": "cliente@example.com"},
        headers=office_a.headers,
    )
    assert saved.status_code == 201, saved.text
    async with app.state.sessionmaker() as s:
        contacts = list(await s.scalars(select(Contact).where(Contact.office_id == office_a.id)))
    by_verified = {c.verified: c for c in contacts}
    assert len(contacts) == 2
    assert by_verified[False].email is None
    assert by_verified[False].claimed_email == "cliente@example.com"
    assert by_verified[True].id == saved.json()["id"]


async def test_two_visitors_claiming_one_phone_get_two_unverified_contacts(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    first = await start_visitor(client, chat["id"])
    second = await start_visitor(client, chat["id"])
    a = await _person_of(app, first["conversationId"])
    b = await _person_of(app, second["conversationId"])
    assert a != b
    for person_id in (a, b):
        assert (await _person(client, office_a, person_id))["verified"] is False


async def test_an_operator_verifies_a_visitors_claim(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
) -> None:
    """Verified, the claim becomes the contact's phone and the refusal is lifted."""
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    person_id = await _person_of(app, visitor["conversationId"])
    await _movement(client, office_a, person_id)

    r = await client.post(f"/people/{person_id}/verify", headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert (r.json()["verified"], r.json()["phone"], r.json()["claimedPhone"]) == (
        True,
        CLIENT_PHONE,
        None,
    )
    [updated] = await outbox(app, office_a.id, "contact.updated")
    assert updated.data["verified"] is True
    again = await client.post(f"/people/{person_id}/verify", headers=office_a.headers)
    assert again.status_code == 200 and again.json() == r.json()

    await create_flow(
        client, office_a, chat["inboxId"], [system("s1", "SEARCH_MOVEMENTS", {}, None)]
    )
    await _visitor_writes(client, chat["id"], visitor["token"], "Meu processo?")
    await work(app, settings)
    [answer] = await outbound(client, office_a, visitor["conversationId"])
    assert SECRET in answer


async def test_verifying_a_claim_of_a_phone_another_contact_holds_is_409(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    person_id = await _person_of(app, visitor["conversationId"])
    saved = await client.post(
        "/people", json={"name": "Maria", "phone": CLIENT_PHONE}, headers=office_a.headers
    )
    assert saved.status_code == 201
    r = await client.post(f"/people/{person_id}/verify", headers=office_a.headers)
    assert r.status_code == 409
    assert error_of(r)["code"] == "PHONE_TAKEN"
    assert saved.json()["id"] in error_of(r)["details"]
    person = await _person(client, office_a, person_id)
    assert (person["verified"], person["phone"], person["claimedPhone"]) == (
        False,
        None,
        CLIENT_PHONE,
    )


async def test_verify_refuses_a_bad_id_with_400_naming_it(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.post("/people/not-an-id!/verify", headers=office_a.headers)
    assert r.status_code == 400
    assert "path.id" in error_of(r)["details"]


async def test_verify_of_another_offices_contact_is_404_and_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    person_id = await _person_of(app, visitor["conversationId"])
    r = await client.post(f"/people/{person_id}/verify", headers=office_b.headers)
    assert r.status_code == 404
    r = await client.post(f"/people/{MISSING}/verify", headers=office_a.headers)
    assert r.status_code == 404
    assert (await _person(client, office_a, person_id))["verified"] is False


async def test_verify_without_a_key_or_with_a_bad_one_is_401(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    person_id = await _person_of(app, visitor["conversationId"])
    assert (await client.post(f"/people/{person_id}/verify")).status_code == 401
    r = await client.post(f"/people/{person_id}/verify", headers={"x-service-api-key": "wrong-key"})
    assert r.status_code == 401
    assert (await _person(client, office_a, person_id))["verified"] is False


async def test_a_case_notice_is_not_sent_to_an_unverified_contact(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
) -> None:
    """A rule answering ``case.movement.created`` with a message does not tell an unverified
    contact about the case; its run names why."""
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    person_id = await _person_of(app, visitor["conversationId"])
    rule = await create_rule(
        client,
        office_a,
        triggerEvent="case.movement.created",
        actions=[{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "Novidade no caso"}}],
    )
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        watcher = Watcher(sleep=no_sleep)
        case = await add_case(client, office_a, person_id, conversationId=visitor["conversationId"])
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
        await sync(app, conf, watcher, case["id"])
        datajud.add("tjsp", TJSP_DIGITS, PETITION)
        await sync(app, conf, watcher, case["id"])
    await Worker(ctx_for(app, settings), [consumer_job(AUTOMATION)]).run_until_idle()
    [run] = await runs(client, office_a, rule["id"])
    [outcome] = run["actions"]
    assert outcome["status"] == "failed"
    assert "not verified" in outcome["error"]
    assert await outbound(client, office_a, visitor["conversationId"]) == []


async def test_concurrent_verifications_of_one_claimed_phone_give_it_to_one_contact(
    app: FastAPI, server_url: str, office_a: OfficeFixture
) -> None:
    """Four visitors claim one phone and are verified at once, while the office saves a
    client with it: the phone ends on exactly one contact (the unique index holds it),
    the others answer 409 ``PHONE_TAKEN`` and stay unverified; nothing answers 5xx."""
    async with concurrent_client(server_url) as http:
        chat = await make_webchat(http, office_a)
        visitors = [await start_visitor(http, chat["id"]) for _ in range(4)]
        people = [await _person_of(app, v["conversationId"]) for v in visitors]

        async def act(i: int) -> httpx.Response:
            if i == len(people):
                return await http.post(
                    "/people",
                    json={"name": "Maria", "phone": CLIENT_PHONE},
                    headers=office_a.headers,
                )
            return await http.post(f"/people/{people[i]}/verify", headers=office_a.headers)

        answers = await fire(len(people) + 1, act)
        codes = sorted(a.status_code for a in answers)
        assert codes.count(409) == len(people) and codes[0] in (200, 201), codes
        assert all(error_of(a)["code"] == "PHONE_TAKEN" for a in answers if a.status_code == 409)
        created = [a.json()["id"] for a in answers if a.status_code == 201]
        everyone = [(await _person(http, office_a, p)) for p in people + created]
    holders = [p for p in everyone if p["phone"] == CLIENT_PHONE]
    assert len(holders) == 1 and holders[0]["verified"] is True
    others = [p for p in everyone if p["id"] != holders[0]["id"]]
    assert len(others) == len(people) + len(created) - 1
    assert all((p["verified"], p["phone"]) == (False, None) for p in others), others


async def _merge(
    client: httpx.AsyncClient, office: OfficeFixture, kept: str, other: str
) -> dict[str, Any]:
    r = await client.post(f"/people/{kept}/merge", json={"otherId": other}, headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def test_an_operator_merging_a_visitor_into_the_client_leaves_one_verified_contact(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """The operator checked: the visitor's contact merged into the office's client is one
    verified contact, the client's, holding the visitor's conversation; the claim is gone,
    and what reads the client's cases now answers in that conversation."""
    saved = await client.post(
        "/people", json={"name": "Maria Souza", "phone": CLIENT_PHONE}, headers=office_a.headers
    )
    assert saved.status_code == 201, saved.text
    client_id = saved.json()["id"]
    await _movement(client, office_a, client_id)
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    visitor_person = await _person_of(app, visitor["conversationId"])
    assert visitor_person != client_id

    merged = await _merge(client, office_a, client_id, visitor_person)
    assert (merged["verified"], merged["phone"], merged["claimedPhone"]) == (
        True,
        CLIENT_PHONE,
        None,
    )
    gone = await client.get(f"/people/{visitor_person}", headers=office_a.headers)
    assert gone.status_code == 404
    assert await _person_of(app, visitor["conversationId"]) == client_id
    [updated] = await outbox(app, office_a.id, "contact.updated")
    assert updated.data["verified"] is True

    await create_flow(
        client, office_a, chat["inboxId"], [system("s1", "SEARCH_MOVEMENTS", {}, None)]
    )
    await _visitor_writes(client, chat["id"], visitor["token"], "Meu processo?")
    await work(app, settings)
    [answer] = await outbound(client, office_a, visitor["conversationId"])
    assert SECRET in answer


async def test_a_merge_fills_the_kept_contacts_empty_phone_and_email_with_free_claims(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    saved = await client.post("/people", json={"name": "Maria"}, headers=office_a.headers)
    assert saved.status_code == 201, saved.text
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    visitor_person = await _person_of(app, visitor["conversationId"])
    async with app.state.sessionmaker() as s:
        contact = await s.get(Contact, visitor_person)
        assert contact is not None
        contact.claimed_email = "maria@example.com"
        await s.commit()

    merged = await _merge(client, office_a, saved.json()["id"], visitor_person)
    assert (merged["verified"], merged["phone"], merged["email"]) == (
        True,
        CLIENT_PHONE,
        "maria@example.com",
    )
    assert (merged["claimedPhone"], merged["claimedEmail"]) == (None, None)


async def test_a_merge_drops_a_claimed_phone_or_email_another_contact_holds(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A claim never takes what another contact holds: the merged contact is verified
    with its phone and email still empty, and the holder keeps them."""
    holder = await client.post(
        "/people",
        json={"name": "Maria Souza", "phone": CLIENT_PHONE, "email": "maria@example.com"},
        headers=office_a.headers,
    )
    assert holder.status_code == 201, holder.text
    kept = await client.post("/people", json={"name": "Maria S."}, headers=office_a.headers)
    assert kept.status_code == 201, kept.text
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    visitor_person = await _person_of(app, visitor["conversationId"])
    async with app.state.sessionmaker() as s:
        contact = await s.get(Contact, visitor_person)
        assert contact is not None
        contact.claimed_email = "Maria@Example.com"
        await s.commit()

    merged = await _merge(client, office_a, kept.json()["id"], visitor_person)
    assert (merged["verified"], merged["phone"], merged["email"]) == (True, None, None)
    assert (merged["claimedPhone"], merged["claimedEmail"]) == (None, None)
    held = await _person(client, office_a, holder.json()["id"])
    assert (held["phone"], held["email"], held["verified"]) == (
        CLIENT_PHONE,
        "maria@example.com",
        True,
    )


async def test_merging_into_the_visitors_contact_verifies_its_own_claim(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Kept or merged, the visitor's contact comes out verified: its own claimed phone
    becomes its phone when nobody holds it."""
    other = await client.post("/people", json={"name": "Maria"}, headers=office_a.headers)
    assert other.status_code == 201, other.text
    chat = await make_webchat(client, office_a)
    visitor = await start_visitor(client, chat["id"])
    visitor_person = await _person_of(app, visitor["conversationId"])

    merged = await _merge(client, office_a, visitor_person, other.json()["id"])
    assert (merged["id"], merged["verified"], merged["phone"], merged["claimedPhone"]) == (
        visitor_person,
        True,
        CLIENT_PHONE,
        None,
    )
