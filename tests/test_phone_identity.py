"""One client, one contact: a Brazilian mobile is one identity with or without its ninth
digit; the contact keeps the canonical E.164 phone and the platform's ``whatsappId``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.contacts.normalize import search_phone_digits, to_e164, without_ninth_digit
from officehub.conversations.models import Conversation
from officehub.kit.config import Settings
from officehub.kit.db import create_engine
from officehub.offices.models import Office
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire
from tests.test_migrations import _migrate
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import (
    notification,
    official_integration,
    post_notification,
    text_message,
    worker,
)

# The rule, one row per case: (what is given, the canonical E.164 or None).
CANONICAL = [
    # Brazilian mobiles: with the ninth digit as given, without it gaining it
    ("+5511988887777", "+5511988887777"),
    ("+551188887777", "+5511988887777"),
    ("551188887777", "+5511988887777"),
    ("1188887777", "+5511988887777"),
    ("(11) 8888-7777", "+5511988887777"),
    ("(21) 9876-5432", "+5521998765432"),
    ("+55 21 7654-3210", "+5521976543210"),
    ("+55 (99) 6123-4567", "+5599961234567"),
    ("11 98888 7777", "+5511988887777"),
    # Landlines (8 digits starting 2-5) never get a ninth digit
    ("+551133334444", "+551133334444"),
    ("(11) 2345-6789", "+551123456789"),
    ("+55 51 5555-1234", "+555155551234"),
    ("+55 41 4002-8922", "+554140028922"),
    # Other countries stay as they are
    ("+14155552671", "+14155552671"),
    ("+351912345678", "+351912345678"),
    ("+447911123456", "+447911123456"),
    # Short, odd or impossible inputs
    ("", None),
    ("12", None),
    ("abc", None),
    ("+55", None),
    ("+5511088887777", None),  # 9 then 0: no such mobile
    ("+5500988887777", None),  # area code 00
    ("+5511988887777999", None),  # too long
    ("+55118888777", None),  # 9 digits, no leading 9
]


@pytest.mark.parametrize(("given", "canonical"), CANONICAL)
def test_a_brazilian_mobile_is_canonical_with_its_ninth_digit(
    given: str, canonical: str | None
) -> None:
    assert to_e164(given) == canonical


@pytest.mark.parametrize(
    ("phone", "other"),
    [
        ("+5511988887777", "+551188887777"),
        ("+5521976543210", "+552176543210"),
        ("+5511933334444", None),  # 9 + a landline-like number: no old form existed
        ("+551133334444", None),
        ("+14155552671", None),
    ],
)
def test_only_a_mobile_has_a_form_without_the_ninth_digit(phone: str, other: str | None) -> None:
    assert without_ninth_digit(phone) == other


def test_a_phone_search_looks_for_both_forms_of_a_whole_mobile() -> None:
    assert search_phone_digits("+55 11 8888-7777") == ["551188887777", "5511988887777"]
    assert search_phone_digits("(11) 98888-7777") == [
        "11988887777",
        "5511988887777",
        "551188887777",
    ]
    assert search_phone_digits("8888") == ["8888"]
    assert search_phone_digits("Maria") == []


# The API


async def _create(client: httpx.AsyncClient, office: OfficeFixture, phone: str) -> httpx.Response:
    return await client.post(
        "/people", json={"name": "Maria Souza", "phone": phone}, headers=office.headers
    )


async def test_a_contact_is_stored_with_the_ninth_digit(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await _create(client, office_a, "+55 11 8888-7777")
    assert r.status_code == 201, r.text
    assert r.json()["phone"] == "+5511988887777"
    assert r.json()["whatsappId"] is None


async def test_creating_the_other_form_of_a_stored_mobile_is_phone_taken(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    first = await _create(client, office_a, "+5511988887777")
    assert first.status_code == 201
    again = await _create(client, office_a, "(11) 8888-7777")
    assert again.status_code == 409
    assert error_of(again)["code"] == "PHONE_TAKEN"
    listed = await client.get("/people", headers=office_a.headers)
    assert listed.json()["totalResults"] == 1
    elsewhere = await _create(client, office_b, "(11) 8888-7777")
    assert elsewhere.status_code == 201  # another office's client is another person


async def test_patching_to_the_other_form_of_another_contacts_mobile_is_phone_taken(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await _create(client, office_a, "+551188887777")
    other = (await _create(client, office_a, "+5521987654321")).json()
    r = await client.patch(
        f"/people/{other['id']}", json={"phone": "+55 11 98888-7777"}, headers=office_a.headers
    )
    assert r.status_code == 409
    assert error_of(r)["code"] == "PHONE_TAKEN"
    read = await client.get(f"/people/{other['id']}", headers=office_a.headers)
    assert read.json()["phone"] == "+5521987654321"


async def test_a_landline_never_gains_a_ninth_digit(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    landline = await _create(client, office_a, "(11) 3333-4444")
    assert landline.json()["phone"] == "+551133334444"
    mobile = await _create(client, office_a, "(11) 93333-4444")
    assert mobile.status_code == 201  # another number: 9 + 3333-4444 was never a mobile
    assert mobile.json()["phone"] == "+5511933334444"


async def test_search_finds_a_mobile_by_either_form(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    created = (await _create(client, office_a, "+5511988887777")).json()
    await _create(client, office_a, "+5521987654321")
    for search in ("+55 11 8888-7777", "551188887777", "(11) 98888-7777", "8888-7777"):
        r = await client.get("/people", params={"search": search}, headers=office_a.headers)
        assert r.status_code == 200
        assert [c["id"] for c in r.json()["data"]] == [created["id"]], search


async def test_concurrent_creates_of_both_forms_make_one_contact(
    client: httpx.AsyncClient, office_a: OfficeFixture, server_url: str
) -> None:
    forms = ["+5511988887777", "+551188887777", "(11) 8888-7777", "11 98888-7777"] * 2
    async with concurrent_client(server_url) as c:
        answers = await fire(
            len(forms),
            lambda i: c.post(
                "/people", json={"name": f"Maria {i}", "phone": forms[i]}, headers=office_a.headers
            ),
        )
    codes = sorted(a.status_code for a in answers)
    assert codes == [201] + [409] * (len(forms) - 1), [a.text for a in answers]
    assert {error_of(a)["code"] for a in answers if a.status_code == 409} == {"PHONE_TAKEN"}
    listed = await client.get("/people", headers=office_a.headers)
    assert listed.json()["totalResults"] == 1


# The official channel


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


async def _contacts(session: AsyncSession, office_id: str) -> list[Contact]:
    session.expire_all()
    stmt = select(Contact).where(Contact.office_id == office_id).order_by(Contact.created_at)
    return list(await session.scalars(stmt))


async def test_inbound_without_the_ninth_digit_finds_the_contact_saved_with_it(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    saved = (await _create(client, office_a, "+55 11 98888-7777")).json()
    body = notification([text_message("wamid.old1", sender="551188887777")], sender="551188887777")
    r = await post_notification(client, integration.id, body)
    assert r.status_code == 200
    [contact] = await _contacts(session, office_a.id)
    assert contact.id == saved["id"]
    assert (contact.phone, contact.whatsapp_id) == ("+5511988887777", "551188887777")
    read = await client.get(f"/people/{saved['id']}", headers=office_a.headers)
    assert read.json()["whatsappId"] == "551188887777"
    [updated] = await outbox(app, office_a.id, "contact.updated")
    assert updated.data["whatsappId"] == "551188887777"


async def test_inbound_with_the_ninth_digit_finds_the_contact_saved_without_it(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    saved = (await _create(client, office_a, "(11) 8888-7777")).json()
    r = await post_notification(
        client, integration.id, notification([text_message("wamid.new1", sender="5511988887777")])
    )
    assert r.status_code == 200
    [contact] = await _contacts(session, office_a.id)
    assert (contact.id, contact.whatsapp_id) == (saved["id"], "5511988887777")


async def test_a_new_sender_is_stored_canonical_with_the_platforms_id(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    for n in (1, 2):
        body = notification([text_message(f"wamid.n{n}", sender="552176543210")])
        assert (await post_notification(client, integration.id, body)).status_code == 200
    [contact] = await _contacts(session, office_a.id)
    assert (contact.phone, contact.whatsapp_id) == ("+5521976543210", "552176543210")
    [created] = await outbox(app, office_a.id, "contact.created")
    assert created.data["phone"] == "+5521976543210"
    assert created.data["whatsappId"] == "552176543210"
    assert await outbox(app, office_a.id, "contact.updated") == []
    conversations = await session.scalars(
        select(Conversation).where(Conversation.office_id == office_a.id)
    )
    assert len(list(conversations)) == 1


async def test_sends_go_to_the_contacts_whatsapp_id(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _create(client, office_a, "+5511988887777")
    body = notification([text_message("wamid.in1", sender="551188887777")])
    assert (await post_notification(client, integration.id, body)).status_code == 200
    conversation_id = await session.scalar(
        select(Conversation.id).where(Conversation.office_id == office_a.id)
    )
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Bom dia!"},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert await worker(app, settings).run_once() == 1
    assert [s["to"] for s in platform.sent] == ["551188887777"]


async def test_changing_the_phone_drops_the_old_whatsapp_id(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    body = notification([text_message("wamid.c1", sender="551188887777")])
    assert (await post_notification(client, integration.id, body)).status_code == 200
    [contact] = await _contacts(session, office_a.id)
    same = await client.patch(
        f"/people/{contact.id}", json={"phone": "+5511988887777"}, headers=office_a.headers
    )
    assert same.json()["whatsappId"] == "551188887777"  # the same number: its id stays
    moved = await client.patch(
        f"/people/{contact.id}", json={"phone": "+5521987654321"}, headers=office_a.headers
    )
    assert moved.status_code == 200
    assert (moved.json()["phone"], moved.json()["whatsappId"]) == ("+5521987654321", None)


def _number_change(wamid: str, old: str, new: str, key: str = "wa_id") -> dict[str, Any]:
    return {
        "from": old,
        "id": wamid,
        "timestamp": "1767268900",
        "type": "system",
        "system": {
            "body": f"User A changed from {old} to {new}",
            key: new,
            "type": "customer_changed_number",
        },
    }


async def test_a_customer_changed_number_moves_the_contacts_whatsapp_address(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration_id = (await official_integration(session, office_a.id)).id
    first = notification([text_message("wamid.s1", sender="551188887777")])
    assert (await post_notification(client, integration_id, first)).status_code == 200
    change = notification([_number_change("wamid.s2", "551188887777", "5521976543210")])
    assert (await post_notification(client, integration_id, change)).status_code == 200
    [contact] = await _contacts(session, office_a.id)
    assert (contact.phone, contact.whatsapp_id) == ("+5521976543210", "5521976543210")
    kept_id = contact.id
    after = notification([text_message("wamid.s3", sender="5521976543210")])
    assert (await post_notification(client, integration_id, after)).status_code == 200
    assert [c.id for c in await _contacts(session, office_a.id)] == [kept_id]
    changed = await outbox(app, office_a.id, "contact.updated")
    assert changed[-1].data["whatsappId"] == "5521976543210"


async def test_a_number_change_in_the_older_shape_names_new_wa_id(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    first = notification([text_message("wamid.o1", sender="5511988887777")])
    assert (await post_notification(client, integration.id, first)).status_code == 200
    message = _number_change("wamid.o2", "5511988887777", "5531991112222", key="new_wa_id")
    message["system"]["type"] = "user_changed_number"
    r = await post_notification(client, integration.id, notification([message]))
    assert r.status_code == 200
    [contact] = await _contacts(session, office_a.id)
    assert (contact.phone, contact.whatsapp_id) == ("+5531991112222", "5531991112222")


async def test_a_number_change_to_another_contacts_number_keeps_both(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    integration = await official_integration(session, office_a.id)
    holder = (await _create(client, office_a, "+5521976543210")).json()
    first = notification([text_message("wamid.k1", sender="551188887777")])
    assert (await post_notification(client, integration.id, first)).status_code == 200
    change = notification([_number_change("wamid.k2", "551188887777", "552176543210")])
    assert (await post_notification(client, integration.id, change)).status_code == 200
    contacts = await _contacts(session, office_a.id)
    assert [(c.phone, c.whatsapp_id) for c in contacts] == [
        ("+5521976543210", None),
        ("+5511988887777", "551188887777"),
    ]
    assert contacts[0].id == holder["id"]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "number change kept" in logged
    assert "7654" not in logged and "8888" not in logged


# The migration


async def test_the_migration_makes_stored_mobiles_canonical_unless_a_twin_exists(
    database_url: str,
) -> None:
    """0011_identity rewrites a mobile stored without its ninth digit (keeping the old form
    as ``whatsapp_id``), leaves landlines, and leaves a pair that would collide."""
    engine = create_engine(database_url)
    rows = {
        "c1old": "+551188887777",  # alone: rewritten
        "c2land": "+551133334444",  # landline: kept
        "c3old": "+552187654321",  # its twin exists: left for the merge command
        "c4new": "+5521987654321",
    }
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "0010_outbound", down=True)
            session = AsyncSession(bind=conn)
            office = Office(name="Old")
            session.add(office)
            await session.flush()
            for ident, phone in rows.items():
                await conn.execute(
                    text(
                        "INSERT INTO contacts (id, office_id, name, search_name, phone,"
                        " is_blocked, created_at, updated_at)"
                        " VALUES (:id, :o, 'A', 'a', :phone, false, :t, :t)"
                    ),
                    {"id": ident, "o": office.id, "phone": phone, "t": datetime(2026, 1, 1)},
                )
            await conn.run_sync(_migrate, "head")
            stored = await conn.execute(text("SELECT id, phone, whatsapp_id FROM contacts"))
            found = {ident: f"{phone}|{wa or ''}" for ident, phone, wa in stored.all()}
    finally:
        await engine.dispose()
    assert found == {
        "c1old": "+5511988887777|551188887777",
        "c2land": "+551133334444|",
        "c3old": "+552187654321|",
        "c4new": "+5521987654321|",
    }
